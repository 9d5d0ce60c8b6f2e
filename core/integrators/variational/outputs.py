"""What every variational driver does alike after it has run: the Trajectory from its node records.

Outputs at node k (docs/equations.md, "Holonomic variational integrator"): velocity 𝕀⁻¹m_k (node 0
is exactly the given ξ(0)), spatial momentum about the world origin L_k = R_k m^ω + x_k × (R_k m^v)
and P_k = R_k m^v, constant for a free body with the momentum-conserving pairings.
"""
from __future__ import annotations

import numpy as np

from ...lie import quaternion
from ...trajectory import Trajectory


def _trajectory(dt: float, shape: tuple[int, ...], position: np.ndarray, orientation: np.ndarray,
                omega: np.ndarray, v: np.ndarray, L: np.ndarray, P: np.ndarray, stats: dict) -> Trajectory:
    """A rigid-body Trajectory of ``shape`` = (nodes,) + batch from flat or shaped node arrays."""
    return Trajectory(time=dt * np.arange(shape[0]), position=position.reshape(shape + (3,)),
                      orientation=orientation.reshape(shape + (4,)), angular_velocity=omega.reshape(shape + (3,)),
                      linear_velocity=v.reshape(shape + (3,)), momentum_angular=L.reshape(shape + (3,)),
                      momentum_linear=P.reshape(shape + (3,)), stats=stats, vehicle="rigid_body")


def from_matrices(R: np.ndarray, x: np.ndarray, m: np.ndarray, inertia: np.ndarray, xi0: np.ndarray,
                  dt: float, stats: dict) -> Trajectory:
    """Trajectory from node rotation matrices, positions and node momenta (time first, any batch)."""
    q = quaternion.from_matrix(R)
    if len(q) > 1:  # keep consecutive quaternions in one hemisphere (F-curve friendly)
        dots = np.sum(q[1:] * q[:-1], axis=-1)
        q[1:] *= np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)[..., None]
    vel = m / inertia
    vel[0] = xi0  # node 0 carries the given initial velocity exactly
    P = np.einsum("...ij,...j->...i", R, m[..., 3:])
    L = np.einsum("...ij,...j->...i", R, m[..., :3]) + np.cross(x, P)
    return _trajectory(dt, x.shape[:-1], x, q, vel[..., :3], vel[..., 3:], L, P, stats)


def from_body_records(rec: np.ndarray, inertia: np.ndarray, xi0: np.ndarray, batch: tuple[int, ...],
                      dt: float, stats: dict) -> Trajectory:
    """Trajectory from the reduced paths' records rec (n, 13, B) = (unit q, x, m), componentwise.

    R(q) v = v + 2 q_w (q_v × v) + 2 q_v × (q_v × v) on component arrays: no 3×3 matrices and no
    quaternion conversion. Done in blocks of nodes (about 8,000 numbers per component) so that the
    temporaries stay in cache: on big batches this halves the time of the assembly.
    """
    n, B = rec.shape[0], rec.shape[2]
    pos, ori, av, lv, L, P = (np.empty((n, B, k)) for k in (3, 4, 3, 3, 3, 3))
    IT = inertia.T
    blk = max(1, 8192 // B)
    for i in range(0, n, blk):
        r = rec[i:i + blk]
        qw, qx, qy, qz = r[:, 0], r[:, 1], r[:, 2], r[:, 3]

        def rotate(v1, v2, v3):
            c1 = qy * v3 - qz * v2
            c2 = qz * v1 - qx * v3
            c3 = qx * v2 - qy * v1
            return (v1 + 2.0 * (qw * c1 + qy * c3 - qz * c2), v2 + 2.0 * (qw * c2 + qz * c1 - qx * c3),
                    v3 + 2.0 * (qw * c3 + qx * c2 - qy * c1))

        x1, x2, x3 = r[:, 4], r[:, 5], r[:, 6]
        P1, P2, P3 = rotate(r[:, 10], r[:, 11], r[:, 12])
        S1, S2, S3 = rotate(r[:, 7], r[:, 8], r[:, 9])
        Pb, Lb = P[i:i + blk], L[i:i + blk]
        Pb[..., 0], Pb[..., 1], Pb[..., 2] = P1, P2, P3
        Lb[..., 0] = S1 + x2 * P3 - x3 * P2
        Lb[..., 1] = S2 + x3 * P1 - x1 * P3
        Lb[..., 2] = S3 + x1 * P2 - x2 * P1
        ori[i:i + blk] = r[:, :4].transpose(0, 2, 1)
        pos[i:i + blk] = r[:, 4:7].transpose(0, 2, 1)
        v = r[:, 7:] / IT
        av[i:i + blk] = v[:, :3].transpose(0, 2, 1)
        lv[i:i + blk] = v[:, 3:].transpose(0, 2, 1)
    av[0], lv[0] = xi0[:, :3], xi0[:, 3:]   # node 0 carries the given initial velocity exactly
    return _trajectory(dt, (n,) + batch, pos, ori, av, lv, L, P, stats)


def quaternion_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v = v + 2 q_w (q_v × v) + 2 q_v × (q_v × v) for unit q (..., 4), v (..., 3)."""
    qv = q[..., 1:]
    c = np.cross(qv, v)
    return v + 2.0 * (q[..., :1] * c + np.cross(qv, c))


def from_world_records(rec: np.ndarray, inertia: np.ndarray, xi0: np.ndarray, batch: tuple[int, ...], dt: float,
                       stats: dict) -> Trajectory:
    """Trajectory from rec (n, B, 13) = (unit q, x, b^ω, P world): body m^v = R(q)ᵀP,
    L = R(q) b^ω + x × P (spatial momentum about the world origin)."""
    n = rec.shape[0]
    q, x, bw, P = rec[..., :4], rec[..., 4:7], rec[..., 7:10], rec[..., 10:]
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    mv = quaternion_rotate(conj, P)
    L = quaternion_rotate(q, bw) + np.cross(x, P)
    w = bw / inertia[:, :3]
    v = mv / inertia[:, 3:]
    w[0], v[0] = xi0[:, :3], xi0[:, 3:]   # node 0 carries the given initial velocity exactly
    return _trajectory(dt, (n,) + batch, x, q, w, v, L, P, stats)


__all__ = ["from_matrices", "from_body_records", "quaternion_rotate", "from_world_records"]
