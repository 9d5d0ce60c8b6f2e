"""The pairings (τ, C_τ) of the holonomic variational integrator, as generic 6×6 numpy maps.

A pairing is a group difference map τ: se(3) → SE(3) with C_τ, the matrix of its inverse
right-trivialised tangent (Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation
and control of vehicles", eqs. 9–14, Appendix A; docs/equations.md, "Group difference maps τ and
their tangents"). Newton on the six unknowns of eq. (10) needs C(η)ᵀμ and its derivative
K(η, μ) = ∂_η[C(η)ᵀμ], derived per C below. The method names are a contract:

``vi-cay``        τ = matrix Cayley transform (se3.cay), C = se3.dcay_inv. Conserves the discrete
                  spatial momentum of a free body to round-off (discrete Noether:
                  C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ); kinetic energy bounded, no drift.
``vi-cay-ln``     the paper's Appendix A: τ = se3.cay_paper with C = se3.dexp_inv_linear = I − ½ ad
                  (the paper's C_LN). Conserves the spatial momentum to round-off and, with
                  M = m I₃, the node kinetic energy ½ mᵀ𝕀⁻¹m too: the reduced equations are
                  (I + (h/2)ω̂) J ω = b^ω and (I + (h/2)ω̂) m v = b^v, and
                  μ⁺ = (I − (h/2)ω̂)(Jω, m v) has the same ½ μᵀ𝕀⁻¹μ as b because ω × Jω ⊥ ω.
``vi-exp``        τ = exp with the closed-form se3.dexp_inv (Park & Chung, eqs. 23–24):
                  conserves the spatial momentum to round-off; energy bounded.
``vi-exp-ln``     τ = exp with se3.dexp_inv_linear: approximate pairing. The node energy is still
                  exact (same reduced equations as vi-cay-ln), but the spatial momentum is not
                  conserved.
``vi-exp-series`` τ = exp with se3.dexp_inv_series = I − ½ ad + (1/12) ad² (eq. 14): approximate;
                  momentum and energy drift.

Measured on the asymmetric tumbling test body (J = (3, 2, 1), m = 2, ω₀ = (0.1, 2, 0.4),
v₀ = (1, 0.5, −0.3), h = 0.05; tests/core/integrators/test_holonomic_conservation.py): vi-exp-ln loses the
direction of the linear momentum, |ΔP|/|P₀| ≈ 0.8 and |ΔL|/|L₀| ≈ 50 after 10⁴ steps (L carries
x × P), with the energy exact; vi-exp-series |ΔL|/|L₀| ≈ 5e-4, |ΔP|/|P₀| ≈ 3e-5 after 2·10³
steps and a kinetic-energy trend of 3e-6 of E₀ (oscillation 3e-4). The conserving pairings stay
at round-off (≈ 1e-13 of the terms summed in L) over 10⁵–10⁶ steps.

Caveat of the exact SE(3) maps (vi-cay, vi-exp): the discrete equations couple spin and
linear momentum, e.g. for vi-cay the angular equation carries (h²/4) m v × (ω × v), O(h² m|v|²/J)
relative to Jω. Total momentum is still exact, but a fast-moving body's rotation (and the
straightness of a free body's centre-of-mass path) has an O(h²) error that grows with |v|²:
over 4 s at h = 0.02 a falling tumbling body's rotation differs from the torque-free one by
0.4 rad with vi-cay, 0.14 rad with vi-exp and not at all with vi-cay-ln / vi-exp-ln, whose
angular equation (I + (h/2)ω̂) Jω = b^ω does not see v (nor vi-cay4, the triple jump of
vi-cay-ln, :mod:`.triple_jump`).

All five are second order (symmetric discrete Lagrangian: τ(−ξ) = τ(ξ)⁻¹ and ℓ even).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...lie import se3, so3
from .coefficients import exp_coefficients_array
from .kernels import KERNELS, Kernel


def _outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., :, None] * b[..., None, :]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _lam(mu: np.ndarray) -> np.ndarray:
    """Λ(μ) with ad_ηᵀ μ = Λ(μ) η: [[μ̂_ω, μ̂_v], [μ̂_v, 0]]."""
    Hw, Hv = so3.hat(mu[..., :3]), so3.hat(mu[..., 3:])
    out = np.zeros(mu.shape[:-1] + (6, 6))
    out[..., :3, :3] = Hw
    out[..., :3, 3:] = Hv
    out[..., 3:, :3] = Hv
    return out


def _K_ln(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η[dexp_inv_linear(η)ᵀ μ] = −½ Λ(μ), since (I − ½ ad_η)ᵀ μ = μ − ½ ad_ηᵀ μ."""
    return -0.5 * _lam(mu)


def _K_series(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η of (I − ½ adᵀ + (1/12) adᵀ²) μ = −½Λ(μ) + (1/12)(Λ(adᵀμ) + adᵀ Λ(μ))."""
    adT = np.swapaxes(se3.ad(eta), -1, -2)
    z = np.einsum("...ij,...j->...i", adT, mu)
    return -0.5 * _lam(mu) + (_lam(z) + adT @ _lam(mu)) / 12.0


def _K_cay(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η of dcay_inv(η)ᵀ μ = (μ_ω + ½a×μ_ω + ¼a(a·μ_ω) + ½c×q, q), q = μ_v + ½a×μ_v, η = (a, c)."""
    a, c = eta[..., :3], eta[..., 3:]
    mw, mv = mu[..., :3], mu[..., 3:]
    q = mv + 0.5 * np.cross(a, mv)
    out = np.zeros(eta.shape[:-1] + (6, 6))
    out[..., :3, :3] = (-0.5 * so3.hat(mw) + 0.25 * _dot(a, mw)[..., None, None] * np.eye(3)
                        + 0.25 * _outer(a, mw) - 0.25 * so3.hat(c) @ so3.hat(mv))
    out[..., :3, 3:] = -0.5 * so3.hat(q)
    out[..., 3:, :3] = -0.5 * so3.hat(mv)
    return out


def _K_exp(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η of dexp⁻¹_ηᵀ μ (closed form, Park & Chung eqs. 23–24).

    dexp⁻¹ᵀ μ = (Aᵀμ_ω + Lᵀμ_v, Aᵀμ_v) with Aᵀy = y + ½a×y + k4(a(a·y) − θ²y) and
    Lᵀy = ½c×y + k4(c(a·y) + a(c·y) − 2(a·c)y) + k5(a·c)(a(a·y) − θ²y); k4, k5 depend on θ² = |a|².
    """
    a, c = eta[..., :3], eta[..., 3:]
    mw, mv = mu[..., :3], mu[..., 3:]
    t2 = _dot(a, a)
    co = exp_coefficients_array(t2)
    k4, k5, dk4, dk5 = (x[..., None, None] for x in (co[3], co[4], co[7], co[8]))
    eye = np.eye(3)

    def sym_part(y):  # d/da of a(a·y) − θ²y
        return _dot(a, y)[..., None, None] * eye + _outer(a, y) - 2 * _outer(y, a)

    def d_At(y):  # d/da [Aᵀ y]
        z = a * _dot(a, y)[..., None] - t2[..., None] * y
        return -0.5 * so3.hat(y) + 2 * dk4 * _outer(z, a) + k4 * sym_part(y)

    ac = _dot(a, c)[..., None, None]
    y = mv
    ay, cy = _dot(a, y)[..., None], _dot(c, y)[..., None]
    zy = a * ay - t2[..., None] * y                    # a(a·y) − θ²y
    bracket = c * ay + a * cy - 2 * ac[..., 0] * y     # c(a·y) + a(c·y) − 2(a·c)y
    dL_dc = -0.5 * so3.hat(y) + k4 * sym_part(y) + k5 * _outer(zy, a)
    dL_da = (2 * dk4 * _outer(bracket, a)
             + k4 * (_outer(c, y) + cy[..., None] * eye - 2 * _outer(y, c))
             + 2 * dk5 * ac * _outer(zy, a) + k5 * _outer(zy, c) + k5 * ac * sym_part(y))
    out = np.zeros(eta.shape[:-1] + (6, 6))
    out[..., :3, :3] = d_At(mw) + dL_da
    out[..., :3, 3:] = dL_dc
    out[..., 3:, :3] = d_At(mv)
    return out


def _tau_cay(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return so3.cay(eta[..., :3]), np.einsum("...ij,...j->...i", se3.B_cay(eta[..., :3]), eta[..., 3:])


def _tau_cay_paper(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (so3.cay(eta[..., :3]),
            np.einsum("...ij,...j->...i", se3.B_cay_paper(eta[..., :3]), eta[..., 3:]))


def _tau_exp(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return so3.exp(eta[..., :3]), np.einsum("...ij,...j->...i", so3.dexp(eta[..., :3]), eta[..., 3:])


@dataclass(frozen=True)
class Pairing:
    """A group difference map τ with its C_τ: generic 6×6 maps plus an optional reduced kernel."""

    name: str
    tau: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]   # η → (rotation, translation)
    C: Callable[[np.ndarray], np.ndarray]                         # η → C_τ(η) (..., 6, 6)
    K: Callable[[np.ndarray, np.ndarray], np.ndarray]             # (η, μ) → ∂_η[C(η)ᵀμ]
    conserves_momentum: bool
    kernel: Kernel | None


PAIRINGS: dict[str, Pairing] = {
    "vi-cay": Pairing("vi-cay", _tau_cay, se3.dcay_inv, _K_cay, True, KERNELS["vi-cay"]),
    "vi-cay-ln": Pairing("vi-cay-ln", _tau_cay_paper, se3.dexp_inv_linear, _K_ln, True, KERNELS["vi-cay-ln"]),
    "vi-exp": Pairing("vi-exp", _tau_exp, se3.dexp_inv, _K_exp, True, KERNELS["vi-exp"]),
    "vi-exp-ln": Pairing("vi-exp-ln", _tau_exp, se3.dexp_inv_linear, _K_ln, False, KERNELS["vi-exp-ln"]),
    "vi-exp-series": Pairing("vi-exp-series", _tau_exp, se3.dexp_inv_series, _K_series, False, None),
}
VI_METHODS: tuple[str, ...] = tuple(PAIRINGS)


def momentum_map(method: str, h: float, xi: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """ξ ↦ C_τ(hξ)ᵀ 𝕀 ξ, the left-hand side of eq. (10) (batched)."""
    p = PAIRINGS[method]
    xi = np.asarray(xi, dtype=float)
    C = p.C(h * xi)
    return np.einsum("...ji,...j->...i", C, np.asarray(inertia, dtype=float) * xi)


def momentum_map_jacobian(method: str, h: float, xi: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """Analytic d/dξ [C_τ(hξ)ᵀ 𝕀 ξ] = C_τ(hξ)ᵀ 𝕀 + h K(hξ, 𝕀ξ) (batched, (..., 6, 6))."""
    p = PAIRINGS[method]
    xi = np.asarray(xi, dtype=float)
    inertia = np.asarray(inertia, dtype=float)
    eta = h * xi
    CT = np.swapaxes(p.C(eta), -1, -2)
    return CT * inertia[..., None, :] + h * p.K(eta, inertia * xi)


def _floats(*arrays) -> list[float]:
    return [float(c) for a in arrays for c in np.ravel(a)]


def _kernel(method: str) -> Kernel:
    k = PAIRINGS[method].kernel
    if k is None:
        raise ValueError(f"{method} has no reduced kernel")
    return k


def reduced_residual(method: str, h: float, omega: np.ndarray, J: np.ndarray, mass: float,
                     b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Residual G(ω) (3,) and Jacobian (3, 3) of the reduced (M = m I₃) equations (scalar kernel)."""
    k = _kernel(method)
    w, Jf, bf = _floats(omega), _floats(J), _floats(b)
    r = k.rj(*w, *Jf, float(h), 1.0 / float(mass), *bf)
    return np.array(r[:3]), np.array(r[3:]).reshape(3, 3)


def reduced_finish(method: str, h: float, omega: np.ndarray, J: np.ndarray, mass: float,
                   b_v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(m v, μ⁺, step quaternion, step translation) of the reduced kernel after a solve (scalar)."""
    r = _kernel(method).finish(*_floats(omega), *_floats(J), float(h), 1.0 / float(mass), *_floats(b_v))
    return np.array(r[:3]), np.array(r[3:9]), np.array(r[9:13]), np.array(r[13:16])


__all__ = ["Pairing", "PAIRINGS", "VI_METHODS", "momentum_map", "momentum_map_jacobian", "reduced_residual",
           "reduced_finish"]
