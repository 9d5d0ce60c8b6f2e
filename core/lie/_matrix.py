"""Matrix operations shared by the groups of :mod:`core.lie` (elements stored as square matrices).

SO(3) rotations are 3×3 matrices R; SE(2) and SE(3) poses are homogeneous [[R, x], [0, 1]].
The helpers read the size from their argument, so so3, se2 and se3 each state their public
API over them. All are batched over leading axes.
"""
from __future__ import annotations

import numpy as np


def identity(n: int, batch: int | tuple[int, ...]) -> np.ndarray:
    """A writable (*batch, n, n) stack of identity matrices."""
    batch = (batch,) if isinstance(batch, (int, np.integer)) else tuple(batch)
    return np.zeros(batch + (n, n)) + np.eye(n)


def compose(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """g h, the group product of two matrix stacks (batch axes broadcast)."""
    return np.matmul(np.asarray(g, dtype=float), np.asarray(h, dtype=float))


def rotate(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """R p over the last axis (batch axes broadcast)."""
    R = np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)
    if p.shape[-1:] != R.shape[-1:]:
        raise ValueError(f"points must have {R.shape[-1]} coordinates on the last axis, got shape {p.shape}")
    return np.einsum("...ij,...j->...i", R, p)


def rigid_inverse(g: np.ndarray) -> np.ndarray:
    """[[R, x], [0, 1]]⁻¹ = [[Rᵀ, −Rᵀx], [0, 1]]."""
    g = np.asarray(g, dtype=float)
    Rt = np.swapaxes(g[..., :-1, :-1], -1, -2)
    out = np.zeros(g.shape)
    out[..., :-1, :-1] = Rt
    out[..., :-1, -1] = -np.einsum("...ij,...j->...i", Rt, g[..., :-1, -1])
    out[..., -1, -1] = 1.0
    return out


def rigid_act(g: np.ndarray, p: np.ndarray) -> np.ndarray:
    """g · p = R p + x for points p (..., n − 1) (batch axes broadcast)."""
    g = np.asarray(g, dtype=float)
    return rotate(g[..., :-1, :-1], p) + g[..., :-1, -1]


def dexp_inv_series(A: np.ndarray) -> np.ndarray:
    """I − ½A + A²/12 for A = ad_ξ: dexp⁻¹ truncated after the ad² term."""
    return np.eye(A.shape[-1]) - 0.5 * A + (A @ A) / 12.0


def dexp_inv_linear(A: np.ndarray) -> np.ndarray:
    """I − ½A for A = ad_ξ: dexp⁻¹ truncated after the ad term."""
    return np.eye(A.shape[-1]) - 0.5 * A
