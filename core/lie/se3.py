"""SE(3): poses as 4×4 homogeneous matrices [[R, x], [0, 1]], twists ξ = (ω, v), angular first.

The group API of :mod:`core.lie` (its docstring states the right-trivialised convention of the
tangent maps), in the conventions of ``docs/equations.md``: exp/log and dexp/dexp⁻¹ in Park &
Chung's closed forms, the 4×4 matrix Cayley transform with its exact tangents. SE(3) only:
:func:`make`, :func:`rotation`, :func:`translation`; Kobilarov, Crane & Desbrun 2009's Cayley
variant :func:`cay_paper` (eq. 13); and the translation blocks :func:`B_cay`, :func:`B_cay_paper`
of the two Cayley maps, functions of ω ∈ R³ (the block of exp is ``so3.dexp``).
Vectors (..., 6), matrices (..., 4, 4) and (..., 6, 6).
"""
from __future__ import annotations

import numpy as np

from . import _matrix as M
from . import _series as S
from . import so3

DIM = 6
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
    """R of g = [[R, x], [0, 1]] (a view)."""
    return np.asarray(g)[..., :3, :3]


def translation(g: np.ndarray) -> np.ndarray:
    """x of g = [[R, x], [0, 1]] (a view)."""
    return np.asarray(g)[..., :3, 3]


def identity(batch: int | tuple[int, ...] = ()) -> np.ndarray:
    """I₄, stacked over ``batch`` → (*batch, 4, 4)."""
    return M.identity(4, batch)


def inverse(g: np.ndarray) -> np.ndarray:
    """g⁻¹ = [[Rᵀ, −Rᵀx], [0, 1]]."""
    return M.rigid_inverse(g)


def compose(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """g h (batch axes broadcast)."""
    return M.compose(g, h)


def act(g: np.ndarray, points: np.ndarray) -> np.ndarray:
    """g · p = R p + x for points (..., 3) (batch axes broadcast)."""
    return M.rigid_act(g, points)


def hat(xi: np.ndarray) -> np.ndarray:
    """ξ̂ = [[ω̂, v], [0, 0]]."""
    w, v = _split(xi)
    X = np.zeros(w.shape[:-1] + (4, 4))
    X[..., :3, :3] = so3.hat(w)
    X[..., :3, 3] = v
    return X


def vee(X: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat` (ω from the skew part of the rotation block)."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([so3.vee(X[..., :3, :3]), X[..., :3, 3]], axis=-1)


def _apply(B: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", B, v)


def exp(xi: np.ndarray) -> np.ndarray:
    """exp(ξ) = (exp(ω), dexp_ω v) (Park & Chung eq. 10; their B_exp(ω) is the SO(3) dexp_ω)."""
    w, v = _split(xi)
    return make(so3.exp(w), _apply(so3.dexp(w), v))


def log(g: np.ndarray) -> np.ndarray:
    """Inverse of :func:`exp` for rotations below π."""
    w = so3.log(rotation(g))
    return np.concatenate([w, _apply(so3.dexp_inv(w), translation(g))], axis=-1)


def cay(xi: np.ndarray) -> np.ndarray:
    """Matrix Cayley transform (I − ξ̂/2)⁻¹(I + ξ̂/2) = (cay(ω), (I − ω̂/2)⁻¹ v)."""
    w, v = _split(xi)
    return make(so3.cay(w), _apply(B_cay(w), v))


def cay_inv(g: np.ndarray) -> np.ndarray:
    """Inverse of :func:`cay`: ω = cay⁻¹(R), v = (I − ω̂/2) x."""
    w = so3.cay_inv(rotation(g))
    v = _apply(_I3 - 0.5 * so3.hat(w), translation(g))
    return np.concatenate([w, v], axis=-1)


def cay_paper(xi: np.ndarray) -> np.ndarray:
    """The paper's SE(3) Cayley variant (eq. 13): (cay(ω), 2/(4 + θ²)(2I + ω̂) v)."""
    w, v = _split(xi)
    return make(so3.cay(w), _apply(B_cay_paper(w), v))


def B_cay(w: np.ndarray) -> np.ndarray:
    """Translation block of :func:`cay`: (I − ω̂/2)⁻¹ = (4I + 2ω̂ + ωωᵀ)/(4 + θ²), ω ∈ R³ → 3×3."""
    t2 = S.theta2(w)
    f = 1.0 / (4.0 + t2)
    # (4I + 2ŵ + wwᵀ) = (4 + θ²) I + 2ŵ + ŵ²
    return so3.hat_polynomial(w, 2 * f, f, 1.0)


def B_cay_paper(w: np.ndarray) -> np.ndarray:
    """Translation block of :func:`cay_paper`: 2/(4 + θ²)(2I + ω̂) (eq. 13 / Appendix A), ω ∈ R³ → 3×3."""
    t2 = S.theta2(w)
    f = 2.0 / (4.0 + t2)
    return so3.hat_polynomial(w, f, 0.0, 2 * f)


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
    t2 = S.theta2(w)
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
    """Closed-form dexp⁻¹_ξ (Park & Chung eqs. 23–24), reordered to (ω, v).

    dexp⁻¹_ξ = [[dexp⁻¹_ω, 0], [D − v̂/2, dexp⁻¹_ω]],
    D = (1 − γ)/θ² [v, ω] + (1/β + γ − 2)/θ⁴ (ωᵀv) ω̂².
    """
    w, v = _split(xi)
    t2 = S.theta2(w)
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


def dcay(xi: np.ndarray) -> np.ndarray:
    """dcay_ξ = [[dcay_ω, 0], [½ v̂ dcay_ω, B_cay(ω)]]: δ ↦ (I − ξ̂/2)⁻¹ δ̂ (I + ξ̂/2)⁻¹ in coordinates.

    The block-triangular inverse of :func:`dcay_inv` (its lower block −P⁻¹(−½ P v̂) dcay_ω with
    P = I − ω̂/2).
    """
    w, v = _split(xi)
    A = so3.dcay(w)
    out = np.zeros(w.shape[:-1] + (6, 6))
    out[..., :3, :3] = A
    out[..., 3:, 3:] = B_cay(w)
    out[..., 3:, :3] = 0.5 * so3.hat(v) @ A
    return out


def dcay_inv(xi: np.ndarray) -> np.ndarray:
    """dcay⁻¹_ξ = [[I − ω̂/2 + ωωᵀ/4, 0], [−½(I − ω̂/2)v̂, I − ω̂/2]]."""
    w, v = _split(xi)
    P = _I3 - 0.5 * so3.hat(w)
    out = np.zeros(w.shape[:-1] + (6, 6))
    out[..., :3, :3] = so3.dcay_inv(w)
    out[..., 3:, 3:] = P
    out[..., 3:, :3] = -0.5 * P @ so3.hat(v)
    return out


def dexp_inv_series(xi: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad² term: I − ½ ad_ξ + (1/12) ad_ξ² (Park & Chung eq. 17, three
    terms; Kobilarov, Crane & Desbrun 2009, eq. 14)."""
    return M.dexp_inv_series(ad(xi))


def dexp_inv_linear(xi: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad term: I − ½ ad_ξ, the trapezoidal (Lie–Newmark) map C_LN of
    Kobilarov, Crane & Desbrun 2009, Appendix A."""
    return M.dexp_inv_linear(ad(xi))
