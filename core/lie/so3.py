"""SO(3): rotations R as 3×3 matrices, the algebra as vectors ω ∈ R³ with ω̂ u = ω × u.

The group API of :mod:`core.lie` (its docstring states the right-trivialised convention of the
tangent maps), in the conventions of ``docs/equations.md``, "Group difference maps τ and their
tangents". On SO(3) ad_ω = ω̂ and Ad_R = R. Vectors (..., 3), matrices (..., 3, 3).
"""
from __future__ import annotations

import numpy as np

from . import _matrix as M
from . import _series as S

DIM = 3
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


def hat_polynomial(w: np.ndarray, a: float | np.ndarray, b: float | np.ndarray,
                   c: float | np.ndarray = 1.0) -> np.ndarray:
    """c I + a ŵ + b ŵ², the form of every analytic function of ŵ (a, b, c broadcast over the batch).

    Evaluated with ŵ² = w wᵀ − θ² I.
    """
    w = np.asarray(w, dtype=float)
    t2 = S.theta2(w)
    a = np.asarray(a)[..., None, None]
    b = np.asarray(b)[..., None, None]
    c = np.asarray(c)[..., None, None]
    outer = w[..., :, None] * w[..., None, :]
    return (c - b * t2[..., None, None]) * _I3 + a * hat(w) + b * outer


def identity(batch: int | tuple[int, ...] = ()) -> np.ndarray:
    """I₃, stacked over ``batch`` → (*batch, 3, 3)."""
    return M.identity(3, batch)


def inverse(g: np.ndarray) -> np.ndarray:
    """R⁻¹ = Rᵀ (a new array)."""
    return np.swapaxes(np.asarray(g, dtype=float), -1, -2).copy()


def compose(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The product of rotations g h (batch axes broadcast)."""
    return M.compose(g, h)


def act(g: np.ndarray, points: np.ndarray) -> np.ndarray:
    """R p for a rotation R = g and points (..., 3) (batch axes broadcast)."""
    return M.rotate(g, points)


def ad(w: np.ndarray) -> np.ndarray:
    """[ad_ω] = ω̂ (ad_ω η = ω × η)."""
    return hat(w)


def Ad(g: np.ndarray) -> np.ndarray:
    """Ad_R = R for R = g (a new array)."""
    return np.array(g, dtype=float)


def exp(w: np.ndarray) -> np.ndarray:
    """Rodrigues: I + (sin θ/θ) ŵ + ((1 − cos θ)/θ²) ŵ² (Park & Chung eq. 11)."""
    t2 = S.theta2(w)
    return hat_polynomial(w, S.sinc(t2), S.cosc(t2))


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
    """Cayley map I + 4/(4 + θ²)(ŵ + ŵ²/2) = (I − ŵ/2)⁻¹(I + ŵ/2).

    Kobilarov, Crane & Desbrun 2009, eq. 12.
    """
    t2 = S.theta2(w)
    f = 4.0 / (4.0 + t2)
    return hat_polynomial(w, f, f / 2)


def cay_inv(R: np.ndarray) -> np.ndarray:
    """Inverse Cayley map: 2 vee(R − Rᵀ)/(1 + tr R); singular only for rotations by π."""
    R = np.asarray(R, dtype=float)
    return 4.0 * vee(R) / (1.0 + np.trace(R, axis1=-2, axis2=-1))[..., None]


def dexp(w: np.ndarray) -> np.ndarray:
    """dexp_ω = I + ((1 − cos θ)/θ²) ŵ + ((θ − sin θ)/θ³) ŵ² (Park & Chung eq. 18).

    Also the left Jacobian of SO(3) and the translation block of the SE(3) exponential (``se3.exp``).
    """
    t2 = S.theta2(w)
    return hat_polynomial(w, S.cosc(t2), S.k1(t2))


def dexp_inv(w: np.ndarray) -> np.ndarray:
    """dexp⁻¹_ω = I − ŵ/2 + ((1 − γ)/θ²) ŵ², γ = (θ/2)cot(θ/2) (Park & Chung eq. 19)."""
    t2 = S.theta2(w)
    return hat_polynomial(w, -0.5, S.k4(t2))


def dcay(w: np.ndarray) -> np.ndarray:
    """dcay_ω = 4/(4 + θ²)(I + ŵ/2), the inverse of :func:`dcay_inv`."""
    t2 = S.theta2(w)
    f = 4.0 / (4.0 + t2)
    return hat_polynomial(w, f / 2, 0.0, f)


def dcay_inv(w: np.ndarray) -> np.ndarray:
    """dcay⁻¹_ω = I − ŵ/2 + wwᵀ/4 (also the rotation block of the SE(3) ``se3.dcay_inv``)."""
    t2 = S.theta2(w)
    # wwᵀ/4 = (ŵ² + θ² I)/4
    return hat_polynomial(w, -0.5, 0.25, 1.0 + t2 / 4)


def dexp_inv_series(w: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad² term: I − ŵ/2 + ŵ²/12."""
    return M.dexp_inv_series(hat(w))


def dexp_inv_linear(w: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad term: I − ŵ/2."""
    return M.dexp_inv_linear(hat(w))
