"""Unit quaternions stored (w, x, y, z), as Blender's ``rotation_quaternion``; batched."""
from __future__ import annotations

import numpy as np


def to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (..., 4) → (..., 3, 3)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def from_matrix(R: np.ndarray) -> np.ndarray:
    """Quaternion (w ≥ 0) of a rotation matrix, by Shepperd's branch on the largest term."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R, axis1=-2, axis2=-1)
    d = np.diagonal(R, axis1=-2, axis2=-1)
    cand = np.stack([tr, d[..., 0], d[..., 1], d[..., 2]], axis=-1)
    k = np.argmax(cand, axis=-1)
    r = lambda i, j: R[..., i, j]  # noqa: E731
    with np.errstate(all="ignore"):
        s0 = np.sqrt(np.maximum(1 + tr, 0)) * 2
        q0 = np.stack([s0 / 4, (r(2, 1) - r(1, 2)) / s0, (r(0, 2) - r(2, 0)) / s0, (r(1, 0) - r(0, 1)) / s0], -1)
        s1 = np.sqrt(np.maximum(1 + d[..., 0] - d[..., 1] - d[..., 2], 0)) * 2
        q1 = np.stack([(r(2, 1) - r(1, 2)) / s1, s1 / 4, (r(0, 1) + r(1, 0)) / s1, (r(0, 2) + r(2, 0)) / s1], -1)
        s2 = np.sqrt(np.maximum(1 - d[..., 0] + d[..., 1] - d[..., 2], 0)) * 2
        q2 = np.stack([(r(0, 2) - r(2, 0)) / s2, (r(0, 1) + r(1, 0)) / s2, s2 / 4, (r(1, 2) + r(2, 1)) / s2], -1)
        s3 = np.sqrt(np.maximum(1 - d[..., 0] - d[..., 1] + d[..., 2], 0)) * 2
        q3 = np.stack([(r(1, 0) - r(0, 1)) / s3, (r(0, 2) + r(2, 0)) / s3, (r(1, 2) + r(2, 1)) / s3, s3 / 4], -1)
    q = np.choose(k[..., None], [q0, q1, q2, q3])
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product p ⊗ q, so that to_matrix(p ⊗ q) = to_matrix(p) @ to_matrix(q)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)
    v = pw * qv + qw * pv + np.cross(pv, qv)
    return np.concatenate([w, v], axis=-1)


def normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def make_continuous(q: np.ndarray) -> np.ndarray:
    """Flip signs along axis 0 so consecutive quaternions have non-negative dot products.

    q and −q are the same rotation; F-curves interpolate components, so a sign jump
    between frames would spin the object the long way round.
    """
    q = np.array(q, dtype=float)
    if len(q) < 2:
        return q
    dots = np.sum(q[1:] * q[:-1], axis=-1)
    flips = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
    q[1:] *= flips[..., None]
    return q


def slerp(q: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Spherical interpolation of unit quaternions q (N, 4) between q[i] and q[i + 1] at fractions u
    (both (K,)), along the shorter arc; unit quaternions (K, 4)."""
    q = np.asarray(q, dtype=float)
    if len(q) == 1:
        return np.repeat(q, len(i), axis=0)
    u = np.asarray(u, dtype=float)
    q0, q1 = q[i], q[i + 1]
    dot = np.clip(np.sum(q0 * q1, axis=-1), -1.0, 1.0)
    q1 = np.where(dot[:, None] < 0, -q1, q1)
    theta = np.arccos(np.abs(dot))
    small = theta < 1e-6
    s = np.sin(np.where(small, 1.0, theta))
    w0 = np.where(small, 1.0 - u, np.sin((1.0 - u) * theta) / s)
    w1 = np.where(small, u, np.sin(u * theta) / s)
    out = w0[:, None] * q0 + w1[:, None] * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)
