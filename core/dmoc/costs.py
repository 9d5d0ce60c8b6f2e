"""Cost terms of the DMOC problem (paper §6: "minimum control effort, minimum time,
minimum distance, or safest travel"), each a :class:`~core.dmoc.problem.Group` whose
values are summed. h = T/N throughout (T the duration, a variable when free).

    effort      Σ_k h Σ_i w_i u_{k,i}²                      (control effort, §6 / Fig. 11)
    duration    w T                                          (free final time)
    smoothness  Σ_{k≥1} Σ_i w_i (u_{k,i} − u_{k−1,i})² / h
    path length Σ_k (√(|p_{k+1} − p_k|² + ε²) − ε)           (a smooth |Δp|, ε = 1 mm)
    hazard      Σ_k h w exp(−d_k/ℓ)                          (see obstacles.py; built in constraints.py)

Each has its analytic gradient and Hessian.
"""
from __future__ import annotations

import numpy as np

from .problem import Group

PATH_EPS = 1e-3


def effort(u_idx: np.ndarray, T_idx: int, weights: np.ndarray, scale: float = 1.0) -> Group:
    """Σ_k (T/N) Σ_i w_i u_{k,i}² over the N steps; local = (u_k, T)."""
    N, nu = u_idx.shape
    w = scale * np.asarray(weights, dtype=float)
    idx = np.concatenate([u_idx, np.full((N, 1), T_idx)], axis=1)

    def fun(X):
        u, h = X[:, :nu], X[:, nu] / N
        return (h * (u * u @ w))[:, None]

    def jac(X):
        u, h = X[:, :nu], X[:, nu] / N
        J = np.empty((X.shape[0], 1, nu + 1))
        J[:, 0, :nu] = 2.0 * h[:, None] * w * u
        J[:, 0, nu] = (u * u @ w) / N
        return J

    def hess(X, lam):
        """λ [2h diag(w), 2wu/N; 2(wu)ᵀ/N, 0]."""
        u, h = X[:, :nu], X[:, nu] / N
        lm = lam[:, 0]
        H = np.zeros((X.shape[0], nu + 1, nu + 1))
        H.reshape(X.shape[0], -1)[:, :nu * (nu + 2):nu + 2] = (2.0 * lm * h)[:, None] * w  # the (u, u) diagonal
        H[:, :nu, nu] = H[:, nu, :nu] = (2.0 * lm / N)[:, None] * w * u
        return H

    mask = np.ones((1, nu + 1), dtype=bool)
    mask[0, :nu] = w != 0
    return Group("cost: effort", idx, fun, mask, jac=jac, hess=hess)


def duration(T_idx: int, weight: float) -> Group:
    """w T (linear)."""
    return Group("cost: duration", np.array([[T_idx]]), lambda X: weight * X,
                 np.ones((1, 1), dtype=bool), jac=lambda X: np.full((X.shape[0], 1, 1), weight), linear=True)


def smoothness(u_idx: np.ndarray, T_idx: int, weights: np.ndarray, scale: float = 1.0) -> Group:
    """Σ_{k=1}^{N−1} Σ_i w_i (u_{k,i} − u_{k−1,i})² / h; local = (u_{k−1}, u_k, T)."""
    N, nu = u_idx.shape
    w = scale * np.asarray(weights, dtype=float)
    idx = np.concatenate([u_idx[:-1], u_idx[1:], np.full((N - 1, 1), T_idx)], axis=1)

    def fun(X):
        du = X[:, nu:2 * nu] - X[:, :nu]
        return ((du * du @ w) * N / X[:, 2 * nu])[:, None]

    def jac(X):
        du = X[:, nu:2 * nu] - X[:, :nu]
        inv_h = N / X[:, 2 * nu]
        g = 2.0 * w * du * inv_h[:, None]
        J = np.empty((X.shape[0], 1, 2 * nu + 1))
        J[:, 0, :nu] = -g
        J[:, 0, nu:2 * nu] = g
        J[:, 0, 2 * nu] = -(du * du @ w) * inv_h / X[:, 2 * nu]
        return J

    def hess(X, lam):
        """f = Σ w du²/T·N over (u_{k−1}, u_k, T): ∂²/∂du² = 2w N/T, ∂²/∂du∂T = −2w du N/T², ∂²/∂T² = 2 f/T²
        (du = u_k − u_{k−1}: the (u, u) block is [D, −D; −D, D])."""
        du = X[:, nu:2 * nu] - X[:, :nu]
        T = X[:, 2 * nu]
        lm = lam[:, 0]
        B = X.shape[0]
        D = (2.0 * lm * N / T)[:, None] * w
        gT = (-2.0 * lm * N / T**2)[:, None] * w * du
        H = np.zeros((B, 2 * nu + 1, 2 * nu + 1))
        i = np.arange(nu)
        H[:, i, i] = H[:, nu + i, nu + i] = D
        H[:, i, nu + i] = H[:, nu + i, i] = -D
        H[:, nu:2 * nu, 2 * nu] = H[:, 2 * nu, nu:2 * nu] = gT
        H[:, :nu, 2 * nu] = H[:, 2 * nu, :nu] = -gT
        H[:, 2 * nu, 2 * nu] = 2.0 * lm * (du * du @ w) * N / T**3
        return H

    mask = np.ones((1, 2 * nu + 1), dtype=bool)
    mask[0, :nu] = mask[0, nu:2 * nu] = w != 0
    return Group("cost: smoothness", idx, fun, mask, jac=jac, hess=hess)


def path_length(p_idx: np.ndarray, weight: float) -> Group:
    """w Σ_k (√(|p_{k+1} − p_k|² + ε²) − ε); local = (p_k, p_{k+1})."""
    d = p_idx.shape[1]
    idx = np.concatenate([p_idx[:-1], p_idx[1:]], axis=1)

    def fun(X):
        dp = X[:, d:] - X[:, :d]
        return (weight * (np.sqrt(np.sum(dp * dp, axis=1) + PATH_EPS**2) - PATH_EPS))[:, None]

    def jac(X):
        dp = X[:, d:] - X[:, :d]
        g = weight * dp / np.sqrt(np.sum(dp * dp, axis=1) + PATH_EPS**2)[:, None]
        return np.concatenate([-g, g], axis=1)[:, None, :]

    def hess(X, lam):
        """w λ [A, −A; −A, A], A = (I − nnᵀ)/ℓ with ℓ = √(|dp|² + ε²), n = dp/ℓ."""
        dp = X[:, d:] - X[:, :d]
        ell = np.sqrt(np.sum(dp * dp, axis=1) + PATH_EPS**2)
        n = dp / ell[:, None]
        A = (weight * lam[:, 0] / ell)[:, None, None] * (np.eye(d) - n[:, :, None] * n[:, None, :])
        return np.block([[A, -A], [-A, A]])

    return Group("cost: path_length", idx, fun, np.ones((1, 2 * d), dtype=bool), jac=jac, hess=hess)


__all__ = ["effort", "duration", "smoothness", "path_length", "PATH_EPS"]
