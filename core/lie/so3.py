"""SO(3): hat/vee, exp/log, Cayley, and the B and dτ⁻¹ blocks used by the SE(3) maps.

Conventions of ``docs/equations.md``: ŵ is the cross-product matrix, the
trivialised tangents are right-trivialised (dτ_ω δ = (Dτ(ω)·δ) τ(ω)⁻¹). Every
function accepts leading batch axes: vectors (..., 3), matrices (..., 3, 3).
"""
from __future__ import annotations

import numpy as np

from . import _series as S

_I3 = np.eye(3)


def hat(w: np.ndarray) -> np.ndarray:
    """ŵ with ŵ u = w × u; (..., 3) → (..., 3, 3)."""
    w = np.asarray(w, dtype=float)
    W = np.zeros(w.shape[:-1] + (3, 3))
    W[..., 0, 1] = -w[..., 2]
    W[..., 0, 2] = w[..., 1]
    W[..., 1, 0] = w[..., 2]
    W[..., 1, 2] = -w[..., 0]
    W[..., 2, 0] = -w[..., 1]
    W[..., 2, 1] = w[..., 0]
    return W


def vee(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat`, taken on the skew-symmetric part of W."""
    W = np.asarray(W, dtype=float)
    return 0.5 * np.stack([W[..., 2, 1] - W[..., 1, 2],
                           W[..., 0, 2] - W[..., 2, 0],
                           W[..., 1, 0] - W[..., 0, 1]], axis=-1)


def _poly(w: np.ndarray, a: np.ndarray, b: np.ndarray, c: float | np.ndarray = 1.0) -> np.ndarray:
    """c I + a ŵ + b ŵ², using ŵ² = w wᵀ − θ² I (a, b, c broadcast over the batch)."""
    w = np.asarray(w, dtype=float)
    t2 = np.einsum("...i,...i->...", w, w)
    a = np.asarray(a)[..., None, None]
    b = np.asarray(b)[..., None, None]
    c = np.asarray(c)[..., None, None]
    outer = w[..., :, None] * w[..., None, :]
    return (c - b * t2[..., None, None]) * _I3 + a * hat(w) + b * outer


def norm2(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, dtype=float)
    return np.einsum("...i,...i->...", w, w)


def exp(w: np.ndarray) -> np.ndarray:
    """Rodrigues: I + (sin θ/θ) ŵ + ((1 − cos θ)/θ²) ŵ² (Park & Chung eq. 11)."""
    t2 = norm2(w)
    return _poly(w, S.sinc(t2), S.cosc(t2))


def log(R: np.ndarray) -> np.ndarray:
    """Principal logarithm, θ ∈ [0, π]; accurate near 0 and near π."""
    R = np.asarray(R, dtype=float)
    c = np.clip((np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    s_vec = vee(R)  # = sin θ · n
    s = np.linalg.norm(s_vec, axis=-1)
    theta = np.arctan2(s, c)
    small_branch = S.inv_sinc(theta**2)[..., None] * s_vec
    # Near π the skew part vanishes: read the axis off the symmetric part (1 − c) n nᵀ.
    B = 0.5 * (R + np.swapaxes(R, -1, -2)) - c[..., None, None] * _I3
    diag = np.diagonal(B, axis1=-2, axis2=-1)
    j = np.argmax(diag, axis=-1)
    col = np.take_along_axis(B, j[..., None, None].repeat(3, axis=-1), axis=-2)[..., 0, :]
    with np.errstate(all="ignore"):  # the large branch is garbage (0·inf) where it is not used
        n = col / np.sqrt(np.maximum(np.take_along_axis(diag, j[..., None], -1), 1e-300)
                          * np.maximum(1.0 - c, 1e-300)[..., None])
        sign = np.where(np.einsum("...i,...i->...", n, s_vec) < 0, -1.0, 1.0)
        large_branch = (sign * theta)[..., None] * n
    return np.where((c < 0)[..., None], large_branch, small_branch)


def cay(w: np.ndarray) -> np.ndarray:
    """Cayley map I + 4/(4 + θ²)(ŵ + ŵ²/2) = (I − ŵ/2)⁻¹(I + ŵ/2) (paper eq. 12)."""
    t2 = norm2(w)
    f = 4.0 / (4.0 + t2)
    return _poly(w, f, f / 2)


def cay_inv(R: np.ndarray) -> np.ndarray:
    """Inverse Cayley map: 2 vee(R − Rᵀ)/(1 + tr R); singular only for rotations by π."""
    R = np.asarray(R, dtype=float)
    return 4.0 * vee(R) / (1.0 + np.trace(R, axis1=-2, axis2=-1))[..., None]


def dexp(w: np.ndarray) -> np.ndarray:
    """dexp_ω = I + ((1 − cos θ)/θ²) ŵ + ((θ − sin θ)/θ³) ŵ² (Park & Chung eq. 18).

    Also the left Jacobian of SO(3) and the B_exp map of the SE(3) exponential.
    """
    t2 = norm2(w)
    return _poly(w, S.cosc(t2), S.k1(t2))


def dexp_inv(w: np.ndarray) -> np.ndarray:
    """dexp⁻¹_ω = I − ŵ/2 + ((1 − γ)/θ²) ŵ², γ = (θ/2)cot(θ/2) (Park & Chung eq. 19)."""
    t2 = norm2(w)
    return _poly(w, -0.5, S.k4(t2))


B_exp = dexp


def B_cay(w: np.ndarray) -> np.ndarray:
    """Translation block of the 4×4 matrix Cayley transform: (I − ŵ/2)⁻¹ = (4I + 2ŵ + wwᵀ)/(4 + θ²)."""
    t2 = norm2(w)
    f = 1.0 / (4.0 + t2)
    # (4I + 2ŵ + wwᵀ) = (4 + θ²) I + 2ŵ + ŵ²
    return _poly(w, 2 * f, f, 1.0)


def B_cay_paper(w: np.ndarray) -> np.ndarray:
    """The paper's B_cay(ω) = 2/(4 + θ²)(2I + ŵ) (eq. 13 / Appendix A)."""
    t2 = norm2(w)
    f = 2.0 / (4.0 + t2)
    return _poly(w, f, 0.0, 2 * f)


def dcay_inv(w: np.ndarray) -> np.ndarray:
    """Right-trivialised dcay⁻¹_ω = I − ŵ/2 + wwᵀ/4 (rotation block of C_cay)."""
    t2 = norm2(w)
    # wwᵀ/4 = (ŵ² + θ² I)/4
    return _poly(w, -0.5, 0.25, 1.0 + t2 / 4)


def dcay(w: np.ndarray) -> np.ndarray:
    """Right-trivialised dcay_ω = 4/(4 + θ²)(I + ŵ/2), the inverse of :func:`dcay_inv`."""
    t2 = norm2(w)
    f = 4.0 / (4.0 + t2)
    return _poly(w, f / 2, 0.0, f)
