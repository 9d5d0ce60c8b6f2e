"""SE(3) with twists ξ = (ω, v), angular first: group elements are (..., 4, 4) matrices.

Maps of ``docs/equations.md``: exp/log, the 4×4 matrix Cayley transform and
the paper's Cayley variant (eq. 13), ad and Ad, and the C_τ = dτ⁻¹ maps that the
variational integrator pairs with each τ. All right-trivialised and batched.
"""
from __future__ import annotations

import numpy as np

from . import _series as S
from . import so3

_I3 = np.eye(3)


def _split(xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xi = np.asarray(xi, dtype=float)
    return xi[..., :3], xi[..., 3:]


def make(R: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Assemble g = [[R, x], [0, 1]]."""
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    batch = np.broadcast_shapes(R.shape[:-2], x.shape[:-1])
    g = np.zeros(batch + (4, 4))
    g[..., :3, :3] = R
    g[..., :3, 3] = x
    g[..., 3, 3] = 1.0
    return g


def rotation(g: np.ndarray) -> np.ndarray:
    return np.asarray(g)[..., :3, :3]


def translation(g: np.ndarray) -> np.ndarray:
    return np.asarray(g)[..., :3, 3]


def inverse(g: np.ndarray) -> np.ndarray:
    R, x = rotation(g), translation(g)
    Rt = np.swapaxes(R, -1, -2)
    return make(Rt, -np.einsum("...ij,...j->...i", Rt, x))


def hat(xi: np.ndarray) -> np.ndarray:
    """ξ̂ = [[ω̂, v], [0, 0]]."""
    w, v = _split(xi)
    X = np.zeros(w.shape[:-1] + (4, 4))
    X[..., :3, :3] = so3.hat(w)
    X[..., :3, 3] = v
    return X


def vee(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    return np.concatenate([so3.vee(X[..., :3, :3]), X[..., :3, 3]], axis=-1)


def _apply(B: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", B, v)


def exp(xi: np.ndarray) -> np.ndarray:
    """exp(ξ) = (exp(ω), B_exp(ω) v) (Park & Chung eq. 10)."""
    w, v = _split(xi)
    return make(so3.exp(w), _apply(so3.dexp(w), v))


def log(g: np.ndarray) -> np.ndarray:
    """Inverse of :func:`exp` for rotations below π."""
    w = so3.log(rotation(g))
    return np.concatenate([w, _apply(so3.dexp_inv(w), translation(g))], axis=-1)


def cay(xi: np.ndarray) -> np.ndarray:
    """Matrix Cayley transform (I − ξ̂/2)⁻¹(I + ξ̂/2) = (cay(ω), (I − ω̂/2)⁻¹ v)."""
    w, v = _split(xi)
    return make(so3.cay(w), _apply(so3.B_cay(w), v))


def cay_inv(g: np.ndarray) -> np.ndarray:
    """Inverse of :func:`cay`: ω = cay⁻¹(R), v = (I − ω̂/2) x."""
    w = so3.cay_inv(rotation(g))
    v = _apply(_I3 - 0.5 * so3.hat(w), translation(g))
    return np.concatenate([w, v], axis=-1)


def cay_paper(xi: np.ndarray) -> np.ndarray:
    """The paper's SE(3) Cayley variant (eq. 13): (cay(ω), 2/(4 + θ²)(2I + ω̂) v)."""
    w, v = _split(xi)
    return make(so3.cay(w), _apply(so3.B_cay_paper(w), v))


def ad(xi: np.ndarray) -> np.ndarray:
    """[ad_ξ] = [[ω̂, 0], [v̂, ω̂]], so that (ad_ξ η)^ = [ξ̂, η̂]."""
    w, v = _split(xi)
    W = so3.hat(w)
    A = np.zeros(w.shape[:-1] + (6, 6))
    A[..., :3, :3] = W
    A[..., 3:, 3:] = W
    A[..., 3:, :3] = so3.hat(v)
    return A


def Ad(g: np.ndarray) -> np.ndarray:
    """Ad_g = [[R, 0], [x̂ R, R]] in the (ω, v) order."""
    R, x = rotation(g), translation(g)
    A = np.zeros(R.shape[:-2] + (6, 6))
    A[..., :3, :3] = R
    A[..., 3:, 3:] = R
    A[..., 3:, :3] = so3.hat(x) @ R
    return A


def dexp(xi: np.ndarray) -> np.ndarray:
    """Closed-form dexp_ξ of Park & Chung (eqs. 20–22), reordered to (ω, v).

    dexp_ξ = [[dexp_ω, 0], [C + v̂/2, dexp_ω]] with
    C = −(1 − β)/2 v̂ + (1 − α)/θ² [v, ω] + (α − β)/θ² (ωᵀv) ω̂ + (β/2 − 3(1 − α)/θ²)/θ² (ωᵀv) ω̂².
    """
    w, v = _split(xi)
    t2 = so3.norm2(w)
    W, V = so3.hat(w), so3.hat(v)
    wv = np.einsum("...i,...i->...", w, v)[..., None, None]
    beta = 2.0 * S.cosc(t2)[..., None, None]
    lower = ((beta / 2) * V  # −(1 − β)/2 v̂ + v̂/2
             + S.k1(t2)[..., None, None] * (V @ W + W @ V)
             + S.k2(t2)[..., None, None] * wv * W
             + S.k3(t2)[..., None, None] * wv * (W @ W))
    A = so3.dexp(w)
    out = np.zeros(w.shape[:-1] + (6, 6))
    out[..., :3, :3] = A
    out[..., 3:, 3:] = A
    out[..., 3:, :3] = lower
    return out


def dexp_inv(xi: np.ndarray) -> np.ndarray:
    """Closed-form dexp⁻¹_ξ (Park & Chung eqs. 23–24), reordered to (ω, v): the exact C_exp.

    dexp⁻¹_ξ = [[dexp⁻¹_ω, 0], [D − v̂/2, dexp⁻¹_ω]],
    D = (1 − γ)/θ² [v, ω] + (1/β + γ − 2)/θ⁴ (ωᵀv) ω̂².
    """
    w, v = _split(xi)
    t2 = so3.norm2(w)
    W, V = so3.hat(w), so3.hat(v)
    wv = np.einsum("...i,...i->...", w, v)[..., None, None]
    lower = (-0.5 * V
             + S.k4(t2)[..., None, None] * (V @ W + W @ V)
             + S.k5(t2)[..., None, None] * wv * (W @ W))
    A = so3.dexp_inv(w)
    out = np.zeros(w.shape[:-1] + (6, 6))
    out[..., :3, :3] = A
    out[..., 3:, 3:] = A
    out[..., 3:, :3] = lower
    return out


def C_cay(xi: np.ndarray) -> np.ndarray:
    """Exact dcay⁻¹ of the matrix Cayley map: [[I − ω̂/2 + ωωᵀ/4, 0], [−½(I − ω̂/2)v̂, I − ω̂/2]]."""
    w, v = _split(xi)
    P = _I3 - 0.5 * so3.hat(w)
    out = np.zeros(w.shape[:-1] + (6, 6))
    out[..., :3, :3] = so3.dcay_inv(w)
    out[..., 3:, 3:] = P
    out[..., 3:, :3] = -0.5 * P @ so3.hat(v)
    return out


def C_exp(xi: np.ndarray) -> np.ndarray:
    """Exact C_exp = dexp⁻¹_ξ in closed form (see :func:`dexp_inv`)."""
    return dexp_inv(xi)


def C_exp_series(xi: np.ndarray) -> np.ndarray:
    """Truncated dexp⁻¹ series I − ½ ad_ξ + (1/12) ad_ξ² (Park & Chung eq. 17, three terms)."""
    A = ad(xi)
    return np.eye(6) - 0.5 * A + (A @ A) / 12.0


def C_ln(xi: np.ndarray) -> np.ndarray:
    """Lie–Newmark / trapezoidal simplification C_LN = I − ½ ad_ξ (paper Appendix A)."""
    return np.eye(6) - 0.5 * ad(xi)
