"""vi-cay4's batch kernels as constant matrices: the vi-cay-ln residual and Jacobian, the quaternion step
and 3×3 inverses, each one numpy call over the batch (:mod:`.cay4_arrays`).

Per-call numpy overhead dominates for the batches these run (tens of bodies), so each quantity is
one matmul of an outer product with a constant matrix where possible. The residual is the one of
the vi-cay-ln step (Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation and
control of vehicles", eq. 10 with C = I − ½ ad, Appendix A), G(ω) = Jω + (h/2) ω × Jω − b^ω (:mod:`.newton`).
"""
from __future__ import annotations

import numpy as np

from ...lie import quaternion


def _levi_civita() -> np.ndarray:
    e = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        e[i, j, k], e[i, k, j] = 1.0, -1.0
    return e


_EPS = _levi_civita()


def residual_jacobian_matrix(hh: float) -> np.ndarray:
    """M (24, 12) with ([ω, 1] ⊗ [y, J]).reshape(24) @ M = (G + b^ω, A − diag J), y = Jω.

    G + b^ω = y + (h/2) ω × y, i.e. (G + b^ω)_k = y_k + (h/2) Σ ε_kij ω_i y_j;
    A − diag J = (h/2)(ω̂J − ŷ), flattened row-major, entry (r, c) = (h/2) Σ_k ε_rck (y_k − ω_k J_c)
    (ω̂_rc = −ε_rck ω_k, ŷ_rc = −ε_rck y_k). Feature 6a + s of the outer product: a < 3 → ω_a,
    a = 3 → 1; s < 3 → y_s, s ≥ 3 → J_{s−3}.
    """
    M = np.zeros((4, 6, 12))
    for k in range(3):
        M[3, k, k] = 1.0
        for i in range(3):
            for j in range(3):
                M[i, j, k] += hh * _EPS[k, i, j]
    for r in range(3):
        for c in range(3):
            for k in range(3):
                M[3, k, 3 + 3 * r + c] += hh * _EPS[r, c, k]
                M[k, 3 + c, 3 + 3 * r + c] -= hh * _EPS[r, c, k]
    return M.reshape(24, 12)


def quaternion_step_matrix(hh: float) -> np.ndarray:
    """Q (12, 4) with (q ⊗ ω).reshape(12) @ Q = q ⊗ (0, (h/2)ω) (quaternion product)."""
    Q = np.zeros((4, 3, 4))
    for j, a in enumerate(np.eye(4)):
        for k, b in enumerate(np.eye(3)):
            Q[j, k] = hh * quaternion.multiply(a, np.concatenate([[0.0], b]))
    return Q.reshape(12, 4)


# adj(A)_ij = A_{j+1,i+1} A_{j+2,i+2} − A_{j+1,i+2} A_{j+2,i+1} (indices mod 3), A flattened
_ADJ_IDX = np.array([[3 * ((j + 1) % 3) + (i + 1) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 2) % 3) + (i + 2) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 1) % 3) + (i + 2) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 2) % 3) + (i + 1) % 3 for i in range(3) for j in range(3)]]).ravel()


def inverse3(A9: np.ndarray) -> np.ndarray:
    """Inverses (..., 3, 3) of 3×3 matrices given flattened (..., 9): adjugate over determinant.
    Elementwise, so it scales with the batch (LAPACK's per-matrix call does not)."""
    p = np.take(A9, _ADJ_IDX, axis=-1).reshape(A9.shape[:-1] + (4, 9))
    adj = p[..., 0, :] * p[..., 1, :] - p[..., 2, :] * p[..., 3, :]
    det = np.einsum("...i,...i->...", A9[..., :3], adj[..., 0::3])
    return (adj / det[..., None]).reshape(A9.shape[:-1] + (3, 3))


__all__ = ["residual_jacobian_matrix", "quaternion_step_matrix", "inverse3"]
