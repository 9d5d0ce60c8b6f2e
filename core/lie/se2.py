"""SE(2): poses as 3×3 homogeneous matrices, the algebra as v = (v¹, v², v³) = (angular, x, y).

The group API of :mod:`core.lie` (its docstring states the right-trivialised convention of the
tangent maps): Kobilarov, Crane & Desbrun 2009, Appendix B, in the conventions of
``docs/equations.md``. ad_v has minimal polynomial λ(λ² + (v¹)²), so every tangent map is a
quadratic in ad_v. SE(2) only: :func:`from_pose` / :func:`to_pose` convert poses (θ, x, y).
Vectors (..., 3), matrices (..., 3, 3).
"""
from __future__ import annotations

import numpy as np

from . import _matrix as M
from . import _series as S

DIM = 3


def hat(v: np.ndarray) -> np.ndarray:
    """v̂ = [[0, −v¹, v²], [v¹, 0, v³], [0, 0, 0]]."""
    v = np.asarray(v, dtype=float)
    X = np.zeros(v.shape[:-1] + (3, 3))
    X[..., 0, 1] = -v[..., 0]
    X[..., 1, 0] = v[..., 0]
    X[..., 0, 2] = v[..., 1]
    X[..., 1, 2] = v[..., 2]
    return X


def vee(X: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat` (the rotation entry from the skew part of the 2×2 block)."""
    X = np.asarray(X, dtype=float)
    return np.stack([0.5 * (X[..., 1, 0] - X[..., 0, 1]), X[..., 0, 2], X[..., 1, 2]], axis=-1)


def from_pose(p: np.ndarray) -> np.ndarray:
    """(θ, x, y) → 3×3 homogeneous matrix."""
    p = np.asarray(p, dtype=float)
    c, s = np.cos(p[..., 0]), np.sin(p[..., 0])
    g = np.zeros(p.shape[:-1] + (3, 3))
    g[..., 0, 0], g[..., 0, 1], g[..., 1, 0], g[..., 1, 1] = c, -s, s, c
    g[..., 0, 2], g[..., 1, 2], g[..., 2, 2] = p[..., 1], p[..., 2], 1.0
    return g


def to_pose(g: np.ndarray) -> np.ndarray:
    """3×3 homogeneous matrix → (θ, x, y), θ ∈ (−π, π]."""
    g = np.asarray(g, dtype=float)
    return np.stack([np.arctan2(g[..., 1, 0], g[..., 0, 0]), g[..., 0, 2], g[..., 1, 2]], axis=-1)


def identity(batch: int | tuple[int, ...] = ()) -> np.ndarray:
    """I₃, stacked over ``batch`` → (*batch, 3, 3)."""
    return M.identity(3, batch)


def inverse(g: np.ndarray) -> np.ndarray:
    """g⁻¹ = [[Rᵀ, −Rᵀx], [0, 1]]."""
    return M.rigid_inverse(g)


def compose(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """g h (batch axes broadcast)."""
    return M.compose(g, h)


def act(g: np.ndarray, points: np.ndarray) -> np.ndarray:
    """g · p = R p + x for points (..., 2) (batch axes broadcast)."""
    return M.rigid_act(g, points)


def exp(v: np.ndarray) -> np.ndarray:
    """Rotation by v¹, translation ((v² sin v¹ − v³(1 − cos v¹))/v¹, (v²(1 − cos v¹) + v³ sin v¹)/v¹)."""
    v = np.asarray(v, dtype=float)
    w = v[..., 0]
    a, b = S.sinc(w * w), S.cosc(w * w) * w  # sin w / w, (1 − cos w)/w
    x = a * v[..., 1] - b * v[..., 2]
    y = b * v[..., 1] + a * v[..., 2]
    return from_pose(np.stack([w, x, y], axis=-1))


def log(g: np.ndarray) -> np.ndarray:
    """Inverse of :func:`exp` for |θ| < π."""
    p = to_pose(g)
    w = p[..., 0]
    a, b = S.sinc(w * w), S.cosc(w * w) * w
    d = a * a + b * b
    vx = (a * p[..., 1] + b * p[..., 2]) / d
    vy = (-b * p[..., 1] + a * p[..., 2]) / d
    return np.stack([w, vx, vy], axis=-1)


def cay(v: np.ndarray) -> np.ndarray:
    """Appendix B: 1/(4 + (v¹)²)[[4 − (v¹)², −4v¹, 4v² − 2v¹v³], [4v¹, 4 − (v¹)², 4v³ + 2v¹v²], [0, 0, 4 + (v¹)²]]."""
    v = np.asarray(v, dtype=float)
    w, a, b = v[..., 0], v[..., 1], v[..., 2]
    f = 1.0 / (4.0 + w * w)
    g = np.zeros(v.shape[:-1] + (3, 3))
    g[..., 0, 0] = g[..., 1, 1] = (4 - w * w) * f
    g[..., 0, 1] = -4 * w * f
    g[..., 1, 0] = 4 * w * f
    g[..., 0, 2] = (4 * a - 2 * w * b) * f
    g[..., 1, 2] = (4 * b + 2 * w * a) * f
    g[..., 2, 2] = 1.0
    return g


def cay_inv(g: np.ndarray) -> np.ndarray:
    """Inverse Cayley: v = 2 vee((g − I)(g + I)⁻¹)."""
    g = np.asarray(g, dtype=float)
    eye = np.eye(3)
    return vee(2.0 * (g - eye) @ np.linalg.inv(g + eye))


def ad(v: np.ndarray) -> np.ndarray:
    """[ad_v] = [[0, 0, 0], [v³, 0, −v¹], [−v², v¹, 0]]."""
    v = np.asarray(v, dtype=float)
    A = np.zeros(v.shape[:-1] + (3, 3))
    A[..., 1, 0] = v[..., 2]
    A[..., 1, 2] = -v[..., 0]
    A[..., 2, 0] = -v[..., 1]
    A[..., 2, 1] = v[..., 0]
    return A


def Ad(g: np.ndarray) -> np.ndarray:
    """Ad_g = [[1, 0, 0], [y, cos θ, −sin θ], [−x, sin θ, cos θ]]."""
    g = np.asarray(g, dtype=float)
    A = np.zeros(g.shape[:-2] + (3, 3))
    A[..., 0, 0] = 1.0
    A[..., 1:, 1:] = g[..., :2, :2]
    A[..., 1, 0] = g[..., 1, 2]
    A[..., 2, 0] = -g[..., 0, 2]
    return A


def dexp(v: np.ndarray) -> np.ndarray:
    """dexp_v = I + ((1 − cos v¹)/(v¹)²) ad_v + ((v¹ − sin v¹)/(v¹)³) ad_v².

    The series Σ ad_vʲ/(j + 1)! collapsed on the minimal polynomial of ad_v: matching it at
    λ = ±i v¹, (e^λ − 1)/λ = sin v¹/v¹ ± i(1 − cos v¹)/v¹, gives the two coefficients, the
    same as those of the SO(3) dexp (Park & Chung eq. 18).
    """
    v = np.asarray(v, dtype=float)
    A = ad(v)
    t2 = v[..., 0] ** 2
    return np.eye(3) + S.cosc(t2)[..., None, None] * A + S.k1(t2)[..., None, None] * (A @ A)


def dexp_inv(v: np.ndarray) -> np.ndarray:
    """dexp⁻¹_v = I − ½ ad_v + ((1 − γ)/(v¹)²) ad_v², γ = (v¹/2) cot(v¹/2).

    The Bernoulli series z/(e^z − 1) = Σ B_j z^j / j! of dexp⁻¹ (equations.md, "Group
    difference maps") collapsed on the minimal polynomial λ(λ² + (v¹)²) of ad_v: matching it at
    λ = ±i v¹ gives the coefficients −½ and (1 − γ)/(v¹)² (= 1/12 at v¹ = 0, by series there).
    """
    v = np.asarray(v, dtype=float)
    A = ad(v)
    k = S.k4(v[..., 0] ** 2)[..., None, None]
    return np.eye(3) - 0.5 * A + k * (A @ A)


def dcay(v: np.ndarray) -> np.ndarray:
    """dcay_v = 4/(4 + (v¹)²)(I + ½ ad_v): δ ↦ (I − v̂/2)⁻¹ δ̂ (I + v̂/2)⁻¹ in coordinates.

    The block-triangular inverse of :func:`dcay_inv`, which simplifies to this form.
    """
    v = np.asarray(v, dtype=float)
    f = (4.0 / (4.0 + v[..., 0] ** 2))[..., None, None]
    return f * (np.eye(3) + 0.5 * ad(v))


def dcay_inv(v: np.ndarray) -> np.ndarray:
    """dcay⁻¹_v = I − ½ ad_v + ¼ v¹ [v | 0 0] (Appendix B)."""
    v = np.asarray(v, dtype=float)
    C = np.eye(3) - 0.5 * ad(v)
    C[..., :, 0] += 0.25 * v[..., 0, None] * v
    return C


def dexp_inv_series(v: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad² term: I − ½ ad_v + (1/12) ad_v²."""
    return M.dexp_inv_series(ad(v))


def dexp_inv_linear(v: np.ndarray) -> np.ndarray:
    """dexp⁻¹ truncated after the ad term: I − ½ ad_v."""
    return M.dexp_inv_linear(ad(v))
