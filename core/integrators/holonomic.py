"""Holonomic variational integrator of the paper, eqs. (9)–(10) with α = 1, in momentum form.

Conventions of ``docs/equations.md`` (section "Holonomic variational integrator"):
body velocity ξ = (ω, v), 𝕀 = diag(J₁, J₂, J₃, m, m, m), body wrench f = (τ, F), pose
g = (R, x), g_{k+1} = g_k τ(h ξ_k) (eq. 9). The discrete Euler–Poincaré equation (10),

    C_τ(h ξ_k)ᵀ 𝕀 ξ_k − C_τ(−h ξ_{k−1})ᵀ 𝕀 ξ_{k−1} = h f_k,

is run as a map on (g_k, m_k), m_k the momentum at node k (discrete Legendre transform):

    solve  C_τ(h ξ)ᵀ 𝕀 ξ = m_k + (h/2) f_k        for ξ = ξ_k   (Newton, analytic Jacobian)
    g_{k+1} = g_k τ(h ξ_k)                                       (eq. 9)
    μ_{k+1} = C_τ(−h ξ_k)ᵀ 𝕀 ξ_k                                 (the momentum arriving at k+1)
    m_{k+1} = μ_{k+1} + (h/2) f_{k+1}

with m_0 = 𝕀 ξ(0) (the start-up rule of equations.md). Between two steps the two half
kicks add up to h f_k, so for k ≥ 1 this is eq. (10) exactly; splitting the kick keeps the
scheme second order with forces too (kick–drift–kick). Without the split, m_0 = 𝕀 ξ(0)
followed by a full kick h f_0 shifts a constant force by half a step and leaves an O(h)
error (a dropped body would miss x₀ − ½ g t² by ½ g h t); here a dropped body follows
x₀ + v₀ t − ½ g t² exactly. Both half kicks of step k use f(k, ·), so a wrench given per
step (an array (steps, ..., 6): piecewise constant controls) acts like the zero-order hold of
the baselines and of the DOP853 reference, to second order. The wrench is evaluated as
f(k, R, x, ξ_prev) with ξ_prev the last solved step velocity (ξ(0) at node 0), as in eq. (10)
(f_ext(g_k, ξ_{k−1})).

Output at node k: velocity 𝕀⁻¹ m_k (node 0 is exactly ξ(0)), spatial momentum about the
world origin L_k = R_k m^ω + x_k × (R_k m^v), P_k = R_k m^v.

Pairings (τ, C_τ) offered (the method names are a contract):

``vi-cay``        τ = matrix Cayley transform (se3.cay), C = exact C_cay. Conserves the discrete
                  spatial momentum of a free body to round-off (discrete Noether:
                  C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ); kinetic energy bounded, no drift.
``vi-cay-ln``     the paper's Appendix A: τ = se3.cay_paper with C_LN = I − ½ ad. Conserves the
                  spatial momentum to round-off and, with M = m I₃, the node kinetic energy
                  ½ mᵀ𝕀⁻¹m too: the reduced equations are (I + (h/2)ω̂) J ω = b^ω and
                  (I + (h/2)ω̂) m v = b^v, and μ⁺ = (I − (h/2)ω̂)(Jω, m v) has the same
                  ½ μᵀ𝕀⁻¹μ as b because ω × Jω ⊥ ω.
``vi-exp``        τ = exp with the closed-form dexp⁻¹ (Park & Chung, eqs. 23–24):
                  conserves the spatial momentum to round-off; energy bounded.
``vi-exp-ln``     τ = exp with C_LN: approximate pairing. The node energy is still exact (same
                  reduced equations as vi-cay-ln), but the spatial momentum is not conserved.
``vi-exp-series`` τ = exp with the truncated C_exp = I − ½ ad + (1/12) ad² (eq. 14): approximate;
                  momentum and energy drift.
Measured on the asymmetric tumbling test body (J = (3, 2, 1), m = 2, ω₀ = (0.1, 2, 0.4),
v₀ = (1, 0.5, −0.3), h = 0.05; tests/core/test_holonomic_conservation.py): vi-exp-ln loses the
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
vi-cay-ln, :mod:`.composition`).

All five are second order (symmetric discrete Lagrangian: τ(−ξ) = τ(ξ)⁻¹ and ℓ even).

Implementation. The generic path is batched numpy: Newton on the 6 unknowns with the
analytic Jacobian C(hξ)ᵀ𝕀 + h ∂_η[C(η)ᵀ μ] (derived per C below). With M = m I₃ the linear
block is eliminated in closed form, e.g. for vi-cay (I + (h/2)ω̂) m v = b^v gives
m v = (b − u×b + u(u·b))/(1 + |u|²), u = (h/2)ω, which leaves Newton on ω alone with a
3×3 Cramer solve. Those reduced kernels use + − × ÷ only, so one code runs on Python floats
(the single-body fast path: no numpy inside the loop) and on numpy arrays over a batch.
Newton in the reduced paths starts from a quartic extrapolation of the last five ω (error
O(h⁵)) and stops on an a-priori bound of the error left (:func:`newton_bound`) rather than on an
extra, merely confirming update; a second update, when needed, is a chord update that reuses the
first Jacobian and evaluates the residual only (tests/core/test_holonomic_fast_newton.py checks the
bound and the agreement with plain Newton). At h = 0.05 that is about 1.15 updates per solve
instead of 2.
The orientation is carried as a unit quaternion in the reduced paths: the step rotation of
τ(hξ) has the closed form (1, (h/2)ω)/√(1 + |h ω/2|²) for Cayley and (cos(θ/2), sin(θ/2) a/θ)
for exp, and a quaternion needs 4 numbers where R needs 9 (and no conversion at output).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from math import factorial
from typing import Callable, Sequence

import numpy as np

from ..lie import quaternion, se3, so3
from ..trajectory import Trajectory
from .common import HolonomicSystem, RigidState, WrenchFunction, WrenchSpec
from .euler_poincare import checked_inputs

NEWTON_TOL = 1e-14     # relative, in the kinetic-energy norm of the velocity update
NEWTON_MAX_ITER = 20
XI_LIMIT = 1e8         # |ω| or |v| beyond this counts as a blow-up
UR_MAX = 2.0           # the Newton error bound is trusted for (h/2)|ω| J_max/J_min ≤ UR_MAX
CHORDS = 2             # chord (simplified-Newton) updates per Jacobian
CHORD_START = 1e-4     # … used after a Newton update with kc D₁ below this (contraction ≈ √(kc D₁))
PREDICTOR_DEGREE = 4   # Newton's start: polynomial extrapolation of the last ω (error O(h⁵))

# ----------------------------------------------------------------------------------------------
# Scalar coefficient functions of t2 = θ² and their t2-derivatives (for the exp pairing).
# The derivatives are not in core.lie._series: series below t2 = 1/4 (exact rationals from
# the Bernoulli numbers), the defining formulas above.
# ----------------------------------------------------------------------------------------------


def _bernoulli(n: int) -> list[Fraction]:
    B = [Fraction(0)] * (n + 1)
    B[0] = Fraction(1)
    for k in range(1, n + 1):
        B[k] = -sum(Fraction(math.comb(k + 1, j)) * B[j] for j in range(k)) / (k + 1)
    return B


def _series_tables(t2_max: float, terms: int = 16) -> dict[str, list[float]]:
    """Taylor coefficients in t2 = θ², cut where a term drops below 1e-18 of the first at t2_max."""
    B = _bernoulli(2 * terms + 6)
    f = [Fraction(1, factorial(j)) for j in range(2 * terms + 8)]
    sgn = lambda n: (-1) ** n  # noqa: E731
    ser = {
        "sinc": [sgn(n) * f[2 * n + 1] for n in range(terms)],
        "cosc": [sgn(n) * f[2 * n + 2] for n in range(terms)],
        "k1": [sgn(n) * f[2 * n + 3] for n in range(terms)],
        # k4 = (1 − γ)/θ², γ = (θ/2)cot(θ/2) = Σ (−1)ⁿ B₂ₙ θ²ⁿ/(2n)!
        "k4": [-sgn(n) * B[2 * n] * f[2 * n] for n in range(1, terms + 1)],
        # k5 = (1/β + γ − 2)/θ⁴ with 1/β = γ − y γ'(y), y = θ/2
        "k5": [(2 - 2 * n) * sgn(n) * B[2 * n] * f[2 * n] for n in range(2, terms + 2)],
        # quaternion of exp(a): (cos(θ/2), sin(θ/2)/θ · a)
        "qc": [sgn(n) * f[2 * n] / 4**n for n in range(terms)],
        "qs": [sgn(n) * f[2 * n + 1] / (2 * 4**n) for n in range(terms)],
    }
    for k in ("cosc", "k1", "k4", "k5"):
        ser["d" + k] = [j * c for j, c in enumerate(ser[k]) if j > 0]

    def cut(c: list[Fraction]) -> list[float]:
        n = next(i for i in range(1, len(c))
                 if abs(c[i]) * Fraction(t2_max) ** i < abs(c[0]) * Fraction(1, 10**18))
        return [float(x) for x in c[:n]]

    return {k: cut(v) for k, v in ser.items()}


_SERIES_T2 = 0.25  # θ < 0.5: series; the direct formulas lose < 1e-12 relative above it
_SER = _series_tables(_SERIES_T2)
COEFFICIENT_NAMES = ("sinc", "cosc", "k1", "k4", "k5", "dcosc", "dk1", "dk4", "dk5", "qc", "qs")


def _horner(t2, coeffs: Sequence[float]):
    out = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        out = out * t2 + c
    return out


def _direct(t2, sin, cos, sqrt):
    th = sqrt(t2)
    sn, cs = sin(th), cos(th)
    sinc = sn / th
    cosc = (1.0 - cs) / t2
    k1 = (th - sn) / (th * t2)
    sh, ch = sin(0.5 * th), cos(0.5 * th)
    gam = 0.5 * th * ch / sh            # γ = (θ/2) cot(θ/2)
    ib = 0.25 * t2 / (sh * sh)          # 1/β = (θ/2)²/sin²(θ/2)
    k4 = (1.0 - gam) / t2
    k5 = (ib + gam - 2.0) / (t2 * t2)
    dgam = (gam - ib) / (2.0 * t2)      # dγ/dθ²
    dib = ib * (1.0 - gam) / t2         # d(1/β)/dθ²
    dcosc = (sinc - 2.0 * cosc) / (2.0 * t2)
    dk1 = (cosc - 3.0 * k1) / (2.0 * t2)
    dk4 = (-dgam - k4) / t2
    dk5 = ((dib + dgam) / t2 - 2.0 * k5) / t2
    return sinc, cosc, k1, k4, k5, dcosc, dk1, dk4, dk5, ch, sh / th


def _compile_scalar_coefficients() -> Callable[[float], tuple]:
    """The scalar coefficient function with every Horner polynomial unrolled into one expression.

    CPython spends most of a Horner loop on loop overhead; the unrolled source is ~3× faster,
    which matters inside the single-body vi-exp loop (three calls per step).
    """
    def unrolled(c: Sequence[float]) -> str:
        e = repr(c[-1])
        for x in reversed(c[:-1]):
            e = f"({x!r} + t2 * {e})"
        return e
    polys = ",\n            ".join(unrolled(_SER[n]) for n in COEFFICIENT_NAMES)
    src = (f"def exp_coefficients_scalar(t2):\n"
           f"    if t2 < {_SERIES_T2!r}:\n"
           f"        return ({polys})\n"
           f"    return _direct(t2, _sin, _cos, _sqrt)\n")
    env = {"_direct": _direct, "_sin": math.sin, "_cos": math.cos, "_sqrt": math.sqrt}
    exec(compile(src, "<holonomic coefficients>", "exec"), env)  # noqa: S102 - generated from _SER only
    return env["exp_coefficients_scalar"]


exp_coefficients_scalar = _compile_scalar_coefficients()
exp_coefficients_scalar.__annotations__ = {"t2": float, "return": tuple}
exp_coefficients_scalar.__doc__ = (
    "(sinc, cosc, k1, k4, k5, dcosc, dk1, dk4, dk5, qc, qs) at θ² = t2 as plain floats "
    "(d = d/dθ²; qc = cos(θ/2), qs = sin(θ/2)/θ).")


def exp_coefficients_array(t2: np.ndarray) -> tuple[np.ndarray, ...]:
    """Batched :func:`exp_coefficients_scalar`."""
    t2 = np.asarray(t2, dtype=float)
    small = t2 < _SERIES_T2
    big = np.where(small, 1.0, t2)
    with np.errstate(all="ignore"):
        direct = _direct(big, np.sin, np.cos, np.sqrt)
    return tuple(np.where(small, _horner(t2, _SER[n]), d) for n, d in zip(COEFFICIENT_NAMES, direct))


# ----------------------------------------------------------------------------------------------
# Generic pairing maps (batched numpy): C(η)ᵀ μ and its derivative K(η, μ) = ∂_η [C(η)ᵀ μ].
# ----------------------------------------------------------------------------------------------


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
    """∂_η[C_LN(η)ᵀ μ] = −½ Λ(μ), since C_LNᵀ μ = μ − ½ ad_ηᵀ μ."""
    return -0.5 * _lam(mu)


def _K_series(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η of (I − ½ adᵀ + (1/12) adᵀ²) μ = −½Λ(μ) + (1/12)(Λ(adᵀμ) + adᵀ Λ(μ))."""
    adT = np.swapaxes(se3.ad(eta), -1, -2)
    z = np.einsum("...ij,...j->...i", adT, mu)
    return -0.5 * _lam(mu) + (_lam(z) + adT @ _lam(mu)) / 12.0


def _K_cay(eta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """∂_η of C_cayᵀ μ = (μ_ω + ½a×μ_ω + ¼a(a·μ_ω) + ½c×q, q), q = μ_v + ½a×μ_v, η = (a, c)."""
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
    return so3.cay(eta[..., :3]), np.einsum("...ij,...j->...i", so3.B_cay(eta[..., :3]), eta[..., 3:])


def _tau_cay_paper(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (so3.cay(eta[..., :3]),
            np.einsum("...ij,...j->...i", so3.B_cay_paper(eta[..., :3]), eta[..., 3:]))


def _tau_exp(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return so3.exp(eta[..., :3]), np.einsum("...ij,...j->...i", so3.dexp(eta[..., :3]), eta[..., 3:])


# ----------------------------------------------------------------------------------------------
# Reduced kernels (isotropic M = m I₃): the unknown is ω alone. They use + − × ÷ ** and coef()
# only, so they run on Python floats and on numpy arrays alike. Arguments: ω (3), J (3), h,
# 1/m, b = (b^ω, b^v) the right-hand side of eq. (10).
#   rj     → residual G(ω) (3) and its Jacobian dG/dω (row-major 3×3)
#   finish → p = m v (3), μ⁺ = C(−hξ)ᵀ𝕀ξ (6), quaternion of the rotation of τ(hξ) (4),
#            translation of τ(hξ) (3)
# ----------------------------------------------------------------------------------------------


def _cay_rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
    """vi-cay: G = (I + û + uuᵀ) J ω + (h/2) v × b^v − b^ω with u = (h/2)ω, m v = (I + û)⁻¹ b^v.

    (I + û)⁻¹ = (I − û + uuᵀ)/(1 + |u|²); (h/2) v × b^v = T = (h/2m)(u|p|² − p s), p = m v,
    s = u·b = u·p, |p|² = (|b|² + s²)/(1 + |u|²) (b = b^v). With y = Jω and d/dω = (h/2) d/du:

        dG/dω = (I + û + uuᵀ)J + (h/2)(−ŷ + (u·y)I + u yᵀ) + (h/2) dT/du
        dT/du = (h/2m)(|p|² I + u gᵀ − s P′ − p bᵀ),  g = ∇_u|p|² = 2(s b − |p|² u)/(1 + |u|²),
        P′ = dp/du = (b̂ + s I + u bᵀ − 2 p uᵀ)/(1 + |u|²),

    collected below as δ_ij(J_j + D) + û_ij J_j + u_i e_j + q p_i z_j − ĉ_ij, q = h²/4m.
    """
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    uy = u1 * y1 + u2 * y2 + u3 * y3
    s = u1 * b1 + u2 * b2 + u3 * b3
    inv_n = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
    p1 = (b1 - u2 * b3 + u3 * b2 + u1 * s) * inv_n
    p2 = (b2 - u3 * b1 + u1 * b3 + u2 * s) * inv_n
    p3 = (b3 - u1 * b2 + u2 * b1 + u3 * s) * inv_n
    pp = (b1 * b1 + b2 * b2 + b3 * b3 + s * s) * inv_n
    k = hh * im
    G1 = y1 + u2 * y3 - u3 * y2 + u1 * uy + k * (u1 * pp - p1 * s) - bw1
    G2 = y2 + u3 * y1 - u1 * y3 + u2 * uy + k * (u2 * pp - p2 * s) - bw2
    G3 = y3 + u1 * y2 - u2 * y1 + u3 * uy + k * (u3 * pp - p3 * s) - bw3
    q = hh * k
    sn = s * inv_n
    ppn2 = 2.0 * pp * inv_n
    D = q * (pp - s * sn) + hh * uy
    e1 = h * y1 + q * (sn * b1 - ppn2 * u1)
    e2 = h * y2 + q * (sn * b2 - ppn2 * u2)
    e3 = h * y3 + q * (sn * b3 - ppn2 * u3)
    z1 = 2.0 * sn * u1 - b1
    z2 = 2.0 * sn * u2 - b2
    z3 = 2.0 * sn * u3 - b3
    qsn = q * sn
    c1 = hh * y1 + qsn * b1
    c2 = hh * y2 + qsn * b2
    c3 = hh * y3 + qsn * b3
    qp1 = q * p1
    qp2 = q * p2
    qp3 = q * p3
    return (G1, G2, G3,
            J1 + D + u1 * e1 + qp1 * z1, -u3 * J2 + u1 * e2 + qp1 * z2 + c3, u2 * J3 + u1 * e3 + qp1 * z3 - c2,
            u3 * J1 + u2 * e1 + qp2 * z1 - c3, J2 + D + u2 * e2 + qp2 * z2, -u1 * J3 + u2 * e3 + qp2 * z3 + c1,
            -u2 * J1 + u3 * e1 + qp3 * z1 + c2, u1 * J2 + u3 * e2 + qp3 * z2 - c1, J3 + D + u3 * e3 + qp3 * z3)


def _cay_res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
    """The residual G of :func:`_cay_rj` alone (the chord updates reuse an earlier Jacobian)."""
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    uy = u1 * y1 + u2 * y2 + u3 * y3
    s = u1 * b1 + u2 * b2 + u3 * b3
    inv_n = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
    pp = (b1 * b1 + b2 * b2 + b3 * b3 + s * s) * inv_n
    k = hh * im
    ks = k * s * inv_n          # k s p = ks (b − u×b + u s)
    return (y1 + u2 * y3 - u3 * y2 + u1 * uy + k * u1 * pp - ks * (b1 - u2 * b3 + u3 * b2 + u1 * s) - bw1,
            y2 + u3 * y1 - u1 * y3 + u2 * uy + k * u2 * pp - ks * (b2 - u3 * b1 + u1 * b3 + u2 * s) - bw2,
            y3 + u1 * y2 - u2 * y1 + u3 * uy + k * u3 * pp - ks * (b3 - u1 * b2 + u2 * b1 + u3 * s) - bw3)


def _cay_finish(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3):
    """vi-cay after the solve: p = (I + û)⁻¹ b^v, μ⁺ = ((I − û + uuᵀ)Jω + T, (I − û) p), τ = se3.cay.

    T = (h/2m)(u|p|² − p(u·b)) as in G (it keeps its sign under ξ → −ξ). Rotation cay(2u) has
    the quaternion (1, u)/√(1 + |u|²); translation (I − û)⁻¹ h v = (h/m)(I − û)⁻¹(I + û)⁻¹ b^v
    = (h/m)(I − û²)⁻¹ b^v = (h/m)(b^v + u(u·b^v))/(1 + |u|²) (Sherman–Morrison on (1 + |u|²)I − uuᵀ).
    """
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    uy = u1 * y1 + u2 * y2 + u3 * y3
    s = u1 * b1 + u2 * b2 + u3 * b3
    inv_n = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
    p1 = (b1 - u2 * b3 + u3 * b2 + u1 * s) * inv_n
    p2 = (b2 - u3 * b1 + u1 * b3 + u2 * s) * inv_n
    p3 = (b3 - u1 * b2 + u2 * b1 + u3 * s) * inv_n
    pp = (b1 * b1 + b2 * b2 + b3 * b3 + s * s) * inv_n
    k = hh * im
    hk = h * im * inv_n
    qn = inv_n ** 0.5
    return (p1, p2, p3,
            y1 - u2 * y3 + u3 * y2 + u1 * uy + k * (u1 * pp - p1 * s),
            y2 - u3 * y1 + u1 * y3 + u2 * uy + k * (u2 * pp - p2 * s),
            y3 - u1 * y2 + u2 * y1 + u3 * uy + k * (u3 * pp - p3 * s),
            p1 - u2 * p3 + u3 * p2, p2 - u3 * p1 + u1 * p3, p3 - u1 * p2 + u2 * p1,
            qn, qn * u1, qn * u2, qn * u3,
            hk * (b1 + u1 * s), hk * (b2 + u2 * s), hk * (b3 + u3 * s))


def _ln_rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
    """C_LN with M = m I₃: G = (I + û) J ω − b^ω, u = (h/2)ω (v × m v = 0 decouples v)."""
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    return (y1 + u2 * y3 - u3 * y2 - bw1, y2 + u3 * y1 - u1 * y3 - bw2, y3 + u1 * y2 - u2 * y1 - bw3,
            J1, -u3 * J2 + hh * y3, u2 * J3 - hh * y2,
            u3 * J1 - hh * y3, J2, -u1 * J3 + hh * y1,
            -u2 * J1 + hh * y2, u1 * J2 - hh * y1, J3)


def _ln_res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
    """The residual G of :func:`_ln_rj` alone."""
    hh = 0.5 * h
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    return (y1 + hh * (w2 * y3 - w3 * y2) - bw1, y2 + hh * (w3 * y1 - w1 * y3) - bw2,
            y3 + hh * (w1 * y2 - w2 * y1) - bw3)


def _ln_out(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3):
    """C_LN after the solve: p = (I + û)⁻¹ b^v, μ⁺ = ((I − û) J ω, (I − û) p)."""
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    s = u1 * b1 + u2 * b2 + u3 * b3
    inv_n = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
    p1 = (b1 - u2 * b3 + u3 * b2 + u1 * s) * inv_n
    p2 = (b2 - u3 * b1 + u1 * b3 + u2 * s) * inv_n
    p3 = (b3 - u1 * b2 + u2 * b1 + u3 * s) * inv_n
    return (p1, p2, p3,
            y1 - u2 * y3 + u3 * y2, y2 - u3 * y1 + u1 * y3, y3 - u1 * y2 + u2 * y1,
            p1 - u2 * p3 + u3 * p2, p2 - u3 * p1 + u1 * p3, p3 - u1 * p2 + u2 * p1)


def _cay_ln_finish(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3):
    """vi-cay-ln after the solve: :func:`_ln_out`, then the paper's Cayley pose (eq. 13).

    Rotation cay(2u): quaternion (1, u)/√(1 + |u|²); translation 2/(4 + θ²)(2I + â) h v with
    a = 2u, i.e. (h/m)(I + û)p/(1 + |u|²) = (h/m) b^v/(1 + |u|²), since (I + û)p = b^v.
    """
    hh = 0.5 * h
    u1 = hh * w1
    u2 = hh * w2
    u3 = hh * w3
    y1 = J1 * w1
    y2 = J2 * w2
    y3 = J3 * w3
    s = u1 * b1 + u2 * b2 + u3 * b3
    inv_n = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
    p1 = (b1 - u2 * b3 + u3 * b2 + u1 * s) * inv_n
    p2 = (b2 - u3 * b1 + u1 * b3 + u2 * s) * inv_n
    p3 = (b3 - u1 * b2 + u2 * b1 + u3 * s) * inv_n
    hk = h * im * inv_n
    qn = inv_n ** 0.5
    return (p1, p2, p3,
            y1 - u2 * y3 + u3 * y2, y2 - u3 * y1 + u1 * y3, y3 - u1 * y2 + u2 * y1,
            p1 - u2 * p3 + u3 * p2, p2 - u3 * p1 + u1 * p3, p3 - u1 * p2 + u2 * p1,
            qn, qn * u1, qn * u2, qn * u3,
            hk * b1, hk * b2, hk * b3)


def _make_exp_kernels(coef: Callable):
    """Kernels of vi-exp (closed-form dexp⁻¹) and the exp pose, for a coefficient backend."""

    def rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
        """G = Aᵀ J ω + (h/m) T − b^ω with p = m v = dexp(a)ᵀ b^v, a = hω (isotropic M).

        From dexp⁻¹ (Park & Chung eqs. 23–24) with c = (h/m)p (so c × p = 0): Aᵀy = y + ½a×y +
        k4(a(a·y) − θ²y), T = k4(a|p|² − s p) + k5 s(a s − θ²p), s = a·b = a·p. Jacobian, with
        y = Jω, d/dω = h d/da and k′ = dk/dθ² (so dk/da = 2k′aᵀ):

            dG/dω = AᵀJ + h(−½ŷ + 2k4′(a(a·y) − θ²y)aᵀ + k4((a·y)I + a yᵀ − 2y aᵀ)) + h(h/m) dT/da
            dT/da = 2k4′(a|p|² − s p)aᵀ + k4(|p|²I + a d|p|²ᵀ − p bᵀ − s P′)
                    + 2k5′ s(a s − θ²p)aᵀ + k5((a s − θ²p)bᵀ + s(s I + a bᵀ − 2p aᵀ − θ²P′))
            P′ = dp/da = cosc b̂ + k1 s I + U aᵀ + k1 a bᵀ,
                 U = −2cosc′ a×b + 2k1′(a s − θ²b) − 2k1 b,   d|p|² = 2P′ᵀp,

        collected below as δ_ij diag_j + ½â_ij J_j − ĉ_ij + a_i e_j + V_i a_j + W_i b_j.
        """
        a1 = h * w1
        a2 = h * w2
        a3 = h * w3
        t2 = a1 * a1 + a2 * a2 + a3 * a3
        _, cosc, k1, k4, k5, dcosc, dk1, dk4, dk5 = coef(t2)[:9]
        y1 = J1 * w1
        y2 = J2 * w2
        y3 = J3 * w3
        ay = a1 * y1 + a2 * y2 + a3 * y3
        s = a1 * b1 + a2 * b2 + a3 * b3
        x1 = a2 * b3 - a3 * b2
        x2 = a3 * b1 - a1 * b3
        x3 = a1 * b2 - a2 * b1
        p1 = b1 - cosc * x1 + k1 * (a1 * s - t2 * b1)
        p2 = b2 - cosc * x2 + k1 * (a2 * s - t2 * b2)
        p3 = b3 - cosc * x3 + k1 * (a3 * s - t2 * b3)
        pp = p1 * p1 + p2 * p2 + p3 * p3
        hm = h * im
        X1 = a1 * pp - s * p1
        X2 = a2 * pp - s * p2
        X3 = a3 * pp - s * p3
        Y1 = a1 * s - t2 * p1
        Y2 = a2 * s - t2 * p2
        Y3 = a3 * s - t2 * p3
        Z1 = a1 * ay - t2 * y1
        Z2 = a2 * ay - t2 * y2
        Z3 = a3 * ay - t2 * y3
        k5s = k5 * s
        G1 = y1 + 0.5 * (a2 * y3 - a3 * y2) + k4 * Z1 + hm * (k4 * X1 + k5s * Y1) - bw1
        G2 = y2 + 0.5 * (a3 * y1 - a1 * y3) + k4 * Z2 + hm * (k4 * X2 + k5s * Y2) - bw2
        G3 = y3 + 0.5 * (a1 * y2 - a2 * y1) + k4 * Z3 + hm * (k4 * X3 + k5s * Y3) - bw3
        # P' = dp/da = cosc b̂ + k1 s I + U aᵀ + k1 a bᵀ
        U1 = -2.0 * dcosc * x1 + 2.0 * dk1 * (a1 * s - t2 * b1) - 2.0 * k1 * b1
        U2 = -2.0 * dcosc * x2 + 2.0 * dk1 * (a2 * s - t2 * b2) - 2.0 * k1 * b2
        U3 = -2.0 * dcosc * x3 + 2.0 * dk1 * (a3 * s - t2 * b3) - 2.0 * k1 * b3
        pU = p1 * U1 + p2 * U2 + p3 * U3
        # d|p|²/da = 2 P'ᵀ p = 2(cosc p×b + k1 s p + (p·U) a + k1 s b)
        dp1 = 2.0 * (cosc * (p2 * b3 - p3 * b2) + k1 * s * (p1 + b1) + pU * a1)
        dp2 = 2.0 * (cosc * (p3 * b1 - p1 * b3) + k1 * s * (p2 + b2) + pU * a2)
        dp3 = 2.0 * (cosc * (p1 * b2 - p2 * b1) + k1 * s * (p3 + b3) + pU * a3)
        hhm = h * hm
        sig = hhm * (k4 * s + k5s * t2)
        # Jac_ij = δ_ij(diag_j) + ½ â_ij J_j − ĉ_ij + a_i e_j + V_i a_j + W_i b_j
        D0 = h * k4 * ay + hhm * (k4 * pp + k5s * s) - sig * k1 * s
        dg = 1.0 - k4 * t2
        e1 = 2.0 * h * k4 * y1 + hhm * k4 * dp1
        e2 = 2.0 * h * k4 * y2 + hhm * k4 * dp2
        e3 = 2.0 * h * k4 * y3 + hhm * k4 * dp3
        V1 = h * (2.0 * dk4 * Z1 - 2.0 * k4 * y1) + hhm * (2.0 * dk4 * X1 + 2.0 * dk5 * s * Y1 - 2.0 * k5s * p1) - sig * U1
        V2 = h * (2.0 * dk4 * Z2 - 2.0 * k4 * y2) + hhm * (2.0 * dk4 * X2 + 2.0 * dk5 * s * Y2 - 2.0 * k5s * p2) - sig * U2
        V3 = h * (2.0 * dk4 * Z3 - 2.0 * k4 * y3) + hhm * (2.0 * dk4 * X3 + 2.0 * dk5 * s * Y3 - 2.0 * k5s * p3) - sig * U3
        W1 = hhm * (-k4 * p1 + k5 * Y1 + k5s * a1) - sig * k1 * a1
        W2 = hhm * (-k4 * p2 + k5 * Y2 + k5s * a2) - sig * k1 * a2
        W3 = hhm * (-k4 * p3 + k5 * Y3 + k5s * a3) - sig * k1 * a3
        sc = sig * cosc
        c1 = 0.5 * h * y1 + sc * b1
        c2 = 0.5 * h * y2 + sc * b2
        c3 = 0.5 * h * y3 + sc * b3
        return (G1, G2, G3,
                dg * J1 + D0 + a1 * e1 + V1 * a1 + W1 * b1,
                -0.5 * a3 * J2 + c3 + a1 * e2 + V1 * a2 + W1 * b2,
                0.5 * a2 * J3 - c2 + a1 * e3 + V1 * a3 + W1 * b3,
                0.5 * a3 * J1 - c3 + a2 * e1 + V2 * a1 + W2 * b1,
                dg * J2 + D0 + a2 * e2 + V2 * a2 + W2 * b2,
                -0.5 * a1 * J3 + c1 + a2 * e3 + V2 * a3 + W2 * b3,
                -0.5 * a2 * J1 + c2 + a3 * e1 + V3 * a1 + W3 * b1,
                0.5 * a1 * J2 - c1 + a3 * e2 + V3 * a2 + W3 * b2,
                dg * J3 + D0 + a3 * e3 + V3 * a3 + W3 * b3)

    def res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3):
        """The residual G of ``rj`` alone (the chord updates reuse an earlier Jacobian)."""
        a1 = h * w1
        a2 = h * w2
        a3 = h * w3
        t2 = a1 * a1 + a2 * a2 + a3 * a3
        _, cosc, k1, k4, k5 = coef(t2)[:5]
        y1 = J1 * w1
        y2 = J2 * w2
        y3 = J3 * w3
        ay = a1 * y1 + a2 * y2 + a3 * y3
        s = a1 * b1 + a2 * b2 + a3 * b3
        p1 = b1 - cosc * (a2 * b3 - a3 * b2) + k1 * (a1 * s - t2 * b1)
        p2 = b2 - cosc * (a3 * b1 - a1 * b3) + k1 * (a2 * s - t2 * b2)
        p3 = b3 - cosc * (a1 * b2 - a2 * b1) + k1 * (a3 * s - t2 * b3)
        pp = p1 * p1 + p2 * p2 + p3 * p3
        hm = h * im
        k5s = k5 * s
        return (y1 + 0.5 * (a2 * y3 - a3 * y2) + k4 * (a1 * ay - t2 * y1) + hm * (k4 * (a1 * pp - s * p1) + k5s * (a1 * s - t2 * p1)) - bw1,
                y2 + 0.5 * (a3 * y1 - a1 * y3) + k4 * (a2 * ay - t2 * y2) + hm * (k4 * (a2 * pp - s * p2) + k5s * (a2 * s - t2 * p2)) - bw2,
                y3 + 0.5 * (a1 * y2 - a2 * y1) + k4 * (a3 * ay - t2 * y3) + hm * (k4 * (a3 * pp - s * p3) + k5s * (a3 * s - t2 * p3)) - bw3)

    def finish(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3):
        """p = dexp(a)ᵀ b^v, μ⁺ = (A(−a)ᵀJω + (h/m)T, A(−a)ᵀp) with A(−a)ᵀy = y − ½a×y + k4(a(a·y) − θ²y);
        then the exp pose: rotation exp(a) (eq. 11) as the quaternion (cos(θ/2), sin(θ/2) a/θ),
        translation B_exp(a) h v = c + cosc a×c + k1(a(a·c) − θ²c) (eq. 13)."""
        a1 = h * w1
        a2 = h * w2
        a3 = h * w3
        t2 = a1 * a1 + a2 * a2 + a3 * a3
        co = coef(t2)
        cosc, k1, k4, k5, qc, qs = co[1], co[2], co[3], co[4], co[9], co[10]
        y1 = J1 * w1
        y2 = J2 * w2
        y3 = J3 * w3
        ay = a1 * y1 + a2 * y2 + a3 * y3
        s = a1 * b1 + a2 * b2 + a3 * b3
        p1 = b1 - cosc * (a2 * b3 - a3 * b2) + k1 * (a1 * s - t2 * b1)
        p2 = b2 - cosc * (a3 * b1 - a1 * b3) + k1 * (a2 * s - t2 * b2)
        p3 = b3 - cosc * (a1 * b2 - a2 * b1) + k1 * (a3 * s - t2 * b3)
        pp = p1 * p1 + p2 * p2 + p3 * p3
        hm = h * im
        k5s = k5 * s
        c1 = hm * p1
        c2 = hm * p2
        c3 = hm * p3
        ac = hm * s     # a·c = (h/m) a·p and a·p = a·b
        return (p1, p2, p3,
                y1 - 0.5 * (a2 * y3 - a3 * y2) + k4 * (a1 * ay - t2 * y1) + hm * (k4 * (a1 * pp - s * p1) + k5s * (a1 * s - t2 * p1)),
                y2 - 0.5 * (a3 * y1 - a1 * y3) + k4 * (a2 * ay - t2 * y2) + hm * (k4 * (a2 * pp - s * p2) + k5s * (a2 * s - t2 * p2)),
                y3 - 0.5 * (a1 * y2 - a2 * y1) + k4 * (a3 * ay - t2 * y3) + hm * (k4 * (a3 * pp - s * p3) + k5s * (a3 * s - t2 * p3)),
                p1 - 0.5 * (a2 * p3 - a3 * p2) + k4 * (a1 * s - t2 * p1),
                p2 - 0.5 * (a3 * p1 - a1 * p3) + k4 * (a2 * s - t2 * p2),
                p3 - 0.5 * (a1 * p2 - a2 * p1) + k4 * (a3 * s - t2 * p3),
                qc, qs * a1, qs * a2, qs * a3,
                c1 + cosc * (a2 * c3 - a3 * c2) + k1 * (a1 * ac - t2 * c1),
                c2 + cosc * (a3 * c1 - a1 * c3) + k1 * (a2 * ac - t2 * c2),
                c3 + cosc * (a1 * c2 - a2 * c1) + k1 * (a3 * ac - t2 * c3))

    def ln_finish(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3):
        """vi-exp-ln after the solve: :func:`_ln_out`, then the exp pose as in :func:`finish`."""
        o = _ln_out(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3)
        a1 = h * w1
        a2 = h * w2
        a3 = h * w3
        t2 = a1 * a1 + a2 * a2 + a3 * a3
        co = coef(t2)
        cosc, k1, qc, qs = co[1], co[2], co[9], co[10]
        k = h * im
        c1 = k * o[0]
        c2 = k * o[1]
        c3 = k * o[2]
        ac = a1 * c1 + a2 * c2 + a3 * c3
        return o + (qc, qs * a1, qs * a2, qs * a3,
                    c1 + cosc * (a2 * c3 - a3 * c2) + k1 * (a1 * ac - t2 * c1),
                    c2 + cosc * (a3 * c1 - a1 * c3) + k1 * (a2 * ac - t2 * c2),
                    c3 + cosc * (a1 * c2 - a2 * c1) + k1 * (a3 * ac - t2 * c3))

    return rj, res, finish, ln_finish


_exp_rj_s, _exp_res_s, _exp_finish_s, _exp_ln_finish_s = _make_exp_kernels(exp_coefficients_scalar)
_exp_rj_a, _exp_res_a, _exp_finish_a, _exp_ln_finish_a = _make_exp_kernels(exp_coefficients_array)


@dataclass(frozen=True)
class Kernel:
    """A reduced (isotropic-mass) kernel for floats and for arrays: ``rj`` (residual and Jacobian),
    ``res`` (residual alone, for chord updates) and ``finish``; ``pv_max`` is where the Newton
    error bound (:func:`newton_bound`) stops being trusted in p_v = h²|b^v|²/(m J_min) (None: the
    residual does not see b^v)."""

    rj: Callable
    res: Callable
    finish: Callable
    rj_array: Callable
    res_array: Callable
    finish_array: Callable
    pv_max: float | None


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
    "vi-cay": Pairing("vi-cay", _tau_cay, se3.C_cay, _K_cay, True,
                      Kernel(_cay_rj, _cay_res, _cay_finish, _cay_rj, _cay_res, _cay_finish, math.inf)),
    "vi-cay-ln": Pairing("vi-cay-ln", _tau_cay_paper, se3.C_ln, _K_ln, True,
                         Kernel(_ln_rj, _ln_res, _cay_ln_finish, _ln_rj, _ln_res, _cay_ln_finish, None)),
    "vi-exp": Pairing("vi-exp", _tau_exp, se3.C_exp, _K_exp, True,
                      Kernel(_exp_rj_s, _exp_res_s, _exp_finish_s, _exp_rj_a, _exp_res_a, _exp_finish_a, 10.0)),
    "vi-exp-ln": Pairing("vi-exp-ln", _tau_exp, se3.C_ln, _K_ln, False,
                         Kernel(_ln_rj, _ln_res, _exp_ln_finish_s, _ln_rj, _ln_res, _exp_ln_finish_a, None)),
    "vi-exp-series": Pairing("vi-exp-series", _tau_exp, se3.C_exp_series, _K_series, False, None),
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


def reduced_residual(method: str, h: float, omega: np.ndarray, J: np.ndarray, mass: float,
                     b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Residual G(ω) (3,) and Jacobian (3, 3) of the reduced (M = m I₃) equations (scalar kernel)."""
    k = PAIRINGS[method].kernel
    if k is None:
        raise ValueError(f"{method} has no reduced kernel")
    w, Jf, bf = _floats(omega), _floats(J), _floats(b)
    r = k.rj(*w, *Jf, float(h), 1.0 / float(mass), *bf)
    return np.array(r[:3]), np.array(r[3:]).reshape(3, 3)


def reduced_finish(method: str, h: float, omega: np.ndarray, J: np.ndarray, mass: float,
                   b_v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(m v, μ⁺, step quaternion, step translation) of the reduced kernel after a solve (scalar)."""
    k = PAIRINGS[method].kernel
    if k is None:
        raise ValueError(f"{method} has no reduced kernel")
    r = k.finish(*_floats(omega), *_floats(J), float(h), 1.0 / float(mass), *_floats(b_v))
    return np.array(r[:3]), np.array(r[3:9]), np.array(r[9:13]), np.array(r[13:16])


# ----------------------------------------------------------------------------------------------
# Linear algebra helpers
# ----------------------------------------------------------------------------------------------


def _solve3(a00, a01, a02, a10, a11, a12, a20, a21, a22, g1, g2, g3):
    """Cramer's rule for a 3×3 system (floats or arrays)."""
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    idet = 1.0 / (a00 * c00 + a01 * c01 + a02 * c02)
    return ((c00 * g1 + (a02 * a21 - a01 * a22) * g2 + (a01 * a12 - a02 * a11) * g3) * idet,
            (c01 * g1 + (a00 * a22 - a02 * a20) * g2 + (a02 * a10 - a00 * a12) * g3) * idet,
            (c02 * g1 + (a01 * a20 - a00 * a21) * g2 + (a00 * a11 - a01 * a10) * g3) * idet)


def _solve_batched(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for (B, n, n): LAPACK for few systems, numpy Gaussian elimination otherwise.

    np.linalg.solve on a stack of 6×6 systems is dominated by per-matrix overhead (and BLAS
    threading); elimination vectorised over the batch is ~20× faster for B = 1000.
    """
    if A.shape[0] <= 8:
        try:
            return np.linalg.solve(A, b[..., None])[..., 0]
        except np.linalg.LinAlgError:
            # A singular system in the stack (an overflowing Newton step; which one LAPACK flags depends
            # on the CPU's kernels): eliminate below, which gives inf/NaN there for the blow-up check
            pass
    A = A.copy()
    b = b.copy()
    n = A.shape[-1]
    idx = np.arange(A.shape[0])
    for k in range(n):  # loop over the matrix dimension, vectorised over the batch
        piv = k + np.argmax(np.abs(A[:, k:, k]), axis=1)
        rows = A[idx, piv].copy()
        A[idx, piv] = A[:, k]
        A[:, k] = rows
        bk = b[idx, piv].copy()
        b[idx, piv] = b[:, k]
        b[:, k] = bk
        f = A[:, k + 1:, k] / A[:, k, k][:, None]
        A[:, k + 1:, k:] -= f[:, :, None] * A[:, None, k, k:]
        b[:, k + 1:] -= f * b[:, k, None]
    x = np.empty_like(b)
    for k in range(n - 1, -1, -1):
        x[:, k] = (b[:, k] - np.einsum("bi,bi->b", A[:, k, k + 1:], x[:, k + 1:])) / A[:, k, k]
    return x


# ----------------------------------------------------------------------------------------------
# Drivers
# ----------------------------------------------------------------------------------------------


def newton_bound(pv_max: float | None, h: float, Jmax, Jmin, im, w1, w2, w3, b1, b2, b3):
    """Factor kc of the a-priori Newton error bound of the reduced kernels (floats or arrays).

    After a Newton update δ from a guess (D = δᵀJδ) the error left e satisfies eᵀJe ≤ kc D²; after
    a chord update δ_n that reuses that Jacobian, eᵀJe ≤ kc D₁ D_n. For C_LN the residual is
    quadratic, G(ω − δ) − (Newton model) = (h/2) δ × Jδ, which gives kc = 2h² J_max/J_min²
    (derivation in :mod:`.composition`). vi-cay and vi-exp add cubic and b^v-dependent terms; the
    factor (1 + p_v)², p_v = h²|b^v|²/(m J_min), covers them (tests/core/test_holonomic.py checks
    the bound on random bodies, steps, momenta and guesses: measured worst 6 % of it for C_LN,
    37 % for vi-cay, 5 % for vi-exp with p_v ≤ 10, where its bound stops). Trusted for
    u_r = (h/2)|ω| J_max/J_min ≤ ``UR_MAX`` (and p_v ≤ ``pv_max``); elsewhere kc = ∞ and the
    a-posteriori tests of :func:`_newton_scalar` decide alone.
    """
    c = 0.5 * h * Jmax / Jmin
    ur2 = c * c * (w1 * w1 + w2 * w2 + w3 * w3)
    kc = (2.0 * h * h) * Jmax / (Jmin * Jmin)
    if pv_max is not None:
        pv = (h * h) * (b1 * b1 + b2 * b2 + b3 * b3) * im / Jmin
        g = 1.0 + pv
        kc = kc * g * g
    if isinstance(ur2, float):
        return kc if ur2 <= UR_MAX * UR_MAX and (pv_max is None or pv <= pv_max) else math.inf
    ok = ur2 <= UR_MAX * UR_MAX
    if pv_max is not None and pv_max < math.inf:
        ok &= pv <= pv_max
    return np.where(ok, kc, np.inf)


def _adjugate3(a00, a01, a02, a10, a11, a12, a20, a21, a22):
    """Rows of adj(A) and 1/det A of a 3×3 matrix (floats or arrays): A⁻¹ = adj(A)/det A."""
    r00 = a11 * a22 - a12 * a21
    r10 = a12 * a20 - a10 * a22
    r20 = a10 * a21 - a11 * a20
    return (r00, a02 * a21 - a01 * a22, a01 * a12 - a02 * a11,
            r10, a00 * a22 - a02 * a20, a02 * a10 - a00 * a12,
            r20, a01 * a20 - a00 * a21, a00 * a11 - a01 * a10,
            1.0 / (a00 * r00 + a01 * r10 + a02 * r20))


def _extrapolate(hist: Sequence):
    """Polynomial extrapolation of the next value from the last 2–5 (oldest first), degree 1–4:
    error O(h⁵) for the full history. Works on tuples of floats and on arrays alike."""
    n = len(hist)
    if n == 5:
        v0, v1, v2, v3, v4 = hist
        return tuple(a + 5.0 * (e - b) + 10.0 * (c - d) for a, b, c, d, e in zip(v0, v1, v2, v3, v4))
    if n == 4:
        v0, v1, v2, v3 = hist
        return tuple(4.0 * (b + d) - 6.0 * c - a for a, b, c, d in zip(v0, v1, v2, v3))
    if n == 3:
        v0, v1, v2 = hist
        return tuple(a + 3.0 * (c - b) for a, b, c in zip(v0, v1, v2))
    v0, v1 = hist
    return tuple(2.0 * b - a for a, b in zip(v0, v1))


def _newton_scalar(rj, res, w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3, tolE, kc):
    """Newton on the reduced equations; None if it does not converge in NEWTON_MAX_ITER updates.

    Accepts when the update is below the tolerance in the energy norm (D = ΔωᵀJΔω ≤ tol²·2E), or
    when the a-priori bound of :func:`newton_bound` puts the error left below it (kc D₁ D ≤ tol²·2E:
    no extra update to confirm), or, between two Newton updates, when the quadratic-convergence
    estimate D³/D_prev² is. After a small Newton update (kc D₁ < ``CHORD_START``) up to ``CHORDS``
    chord updates reuse its Jacobian: they need the residual only.
    """
    chords = 0
    D1 = Dp = 0.0
    fresh_prev = False
    for it in range(1, NEWTON_MAX_ITER + 1):
        if chords == 0:
            G1, G2, G3, *A = rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
            r00, r01, r02, r10, r11, r12, r20, r21, r22, idet = _adjugate3(*A)
        else:
            G1, G2, G3 = res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
        d1 = (r00 * G1 + r01 * G2 + r02 * G3) * idet
        d2 = (r10 * G1 + r11 * G2 + r12 * G3) * idet
        d3 = (r20 * G1 + r21 * G2 + r22 * G3) * idet
        w1 -= d1
        w2 -= d2
        w3 -= d3
        D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
        if chords == 0:
            if D <= tolE or kc * D * D <= tolE or (fresh_prev and D * D * D <= tolE * Dp * Dp):
                return w1, w2, w3, it
            D1 = D
        elif D <= tolE or kc * D1 * D <= tolE:
            return w1, w2, w3, it
        fresh_prev = chords == 0
        chords = chords + 1 if chords < CHORDS and kc * D1 < CHORD_START else 0
        Dp = D
    return None


def _wrench_floats(fn: WrenchFunction, k: int, q: tuple, x: tuple, xi: tuple) -> list[float]:
    f = np.asarray(fn(k, quaternion.to_matrix(np.array(q, dtype=float)), np.array(x, dtype=float),
                      np.array(xi, dtype=float)), dtype=float)
    if f.size != 6:  # a TypeError is not mistaken for a numerical blow-up below
        raise TypeError(f"the wrench function must return 6 numbers (torque, force), got shape {f.shape}")
    return f.ravel().tolist()


class StepRows:
    """The per-step state tuples of a scalar run, packed into float blocks every 65,536 rows so that
    a long run never holds millions of Python tuples; :meth:`array` is the (n, width) record."""

    __slots__ = ("rows", "blocks", "width")

    def __init__(self, first: tuple, width: int):
        self.rows: list[tuple] = [first]
        self.blocks: list[np.ndarray] = []
        self.width = width

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= 65536:
            self.blocks.append(np.array(self.rows, dtype=float))
            self.rows = []

    def array(self) -> np.ndarray:
        if self.rows or not self.blocks:
            self.blocks.append(np.array(self.rows, dtype=float).reshape(-1, self.width))
            self.rows = []
        return np.concatenate(self.blocks, axis=0)


def _run_scalar(kernel: Kernel, inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray,
                xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
                fn: WrenchFunction | None):
    """One body in plain Python floats. Returns rows (n, 13) = (q, x, m), iterations, solves, blew_up."""
    rj, res, finish, pv_max = kernel.rj, kernel.res, kernel.finish, kernel.pv_max
    J1, J2, J3, m = (float(c) for c in inertia[:4])
    Jmax, Jmin = max(J1, J2, J3), min(J1, J2, J3)
    im = 1.0 / m
    qw, qx, qy, qz = (float(c) for c in q0)
    x1, x2, x3 = (float(c) for c in x0)
    w1, w2, w3, v1, v2, v3 = (float(c) for c in xi0)
    mw1, mw2, mw3 = J1 * w1, J2 * w2, J3 * w3
    mv1, mv2, mv3 = m * v1, m * v2, m * v3
    record = StepRows((qw, qx, qy, qz, x1, x2, x3, mw1, mw2, mw3, mv1, mv2, mv3), 13)
    hs = [float(c) * dt for c in subs]
    ns = len(hs)
    kicks = [0.5 * (hs[j] + hs[j + 1]) if j + 1 < ns else 0.5 * hs[j] for j in range(ns)]
    hist: list[tuple] = [() for _ in hs]   # the last PREDICTOR_DEGREE + 1 ω of each sub-step, newest last
    prev = (w1, w2, w3, v1, v2, v3)        # ξ_prev for the wrench
    tol2 = NEWTON_TOL * NEWTON_TOL
    iters = solves = 0
    blew = False
    try:
        for k in range(steps):
            if fn is not None:
                f = _wrench_floats(fn, k, (qw, qx, qy, qz), (x1, x2, x3), prev)
                kk = 0.5 * hs[0]
                bw1, bw2, bw3 = mw1 + kk * f[0], mw2 + kk * f[1], mw3 + kk * f[2]
                b1, b2, b3 = mv1 + kk * f[3], mv2 + kk * f[4], mv3 + kk * f[5]
            else:
                bw1, bw2, bw3, b1, b2, b3 = mw1, mw2, mw3, mv1, mv2, mv3
            for j in range(ns):
                h = hs[j]
                tolE = tol2 * (bw1 * bw1 / J1 + bw2 * bw2 / J2 + bw3 * bw3 / J3
                               + (b1 * b1 + b2 * b2 + b3 * b3) * im)
                hj = hist[j]
                sol = None
                if len(hj) >= 2:    # polynomial extrapolation (error O(h⁵) with the full history)
                    g1, g2, g3 = _extrapolate(hj)
                    kc = newton_bound(pv_max, h, Jmax, Jmin, im, g1, g2, g3, b1, b2, b3)
                    sol = _newton_scalar(rj, res, g1, g2, g3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3,
                                         tolE, kc)
                if sol is None:     # explicit start 𝕀⁻¹b; also the retry after a failed extrapolation
                    if len(hj) >= 2:
                        iters += NEWTON_MAX_ITER   # the failed attempt counts
                    g1, g2, g3 = bw1 / J1, bw2 / J2, bw3 / J3
                    kc = newton_bound(pv_max, h, Jmax, Jmin, im, g1, g2, g3, b1, b2, b3)
                    sol = _newton_scalar(rj, res, g1, g2, g3, J1, J2, J3, h, im,
                                         bw1, bw2, bw3, b1, b2, b3, tolE, kc)
                    if sol is None:
                        raise FloatingPointError
                w1, w2, w3, it = sol
                iters += it
                solves += 1
                (p1, p2, p3, n1, n2, n3, n4, n5, n6, sw, sx, sy, sz,
                 t1, t2, t3) = finish(w1, w2, w3, J1, J2, J3, h, im, b1, b2, b3)
                v1, v2, v3 = p1 * im, p2 * im, p3 * im
                if not (abs(w1) + abs(w2) + abs(w3) < XI_LIMIT and abs(v1) + abs(v2) + abs(v3) < XI_LIMIT):
                    raise FloatingPointError
                hist[j] = (hj[1:] if len(hj) > PREDICTOR_DEGREE else hj) + ((w1, w2, w3),)
                # x ← x + R(q) t  with  R(q) t = t + 2 q_w (q_v × t) + 2 q_v × (q_v × t)
                cx = qy * t3 - qz * t2
                cy = qz * t1 - qx * t3
                cz = qx * t2 - qy * t1
                x1 += t1 + 2.0 * (qw * cx + qy * cz - qz * cy)
                x2 += t2 + 2.0 * (qw * cy + qz * cx - qx * cz)
                x3 += t3 + 2.0 * (qw * cz + qx * cy - qy * cx)
                # q ← q ⊗ s, i.e. R ← R τ(hξ) (eq. 9)
                qw, qx, qy, qz = (qw * sw - qx * sx - qy * sy - qz * sz,
                                  qw * sx + sw * qx + qy * sz - qz * sy,
                                  qw * sy + sw * qy + qz * sx - qx * sz,
                                  qw * sz + sw * qz + qx * sy - qy * sx)
                if fn is not None:
                    prev = (w1, w2, w3, v1, v2, v3)
                    f = _wrench_floats(fn, k, (qw, qx, qy, qz), (x1, x2, x3), prev)
                    kk = kicks[j]
                    n1 += kk * f[0]
                    n2 += kk * f[1]
                    n3 += kk * f[2]
                    n4 += kk * f[3]
                    n5 += kk * f[4]
                    n6 += kk * f[5]
                bw1, bw2, bw3, b1, b2, b3 = n1, n2, n3, n4, n5, n6
            mw1, mw2, mw3, mv1, mv2, mv3 = bw1, bw2, bw3, b1, b2, b3
            # first-order renormalisation: |q|² − 1 stays at round-off instead of random-walking
            nq = 1.5 - 0.5 * (qw * qw + qx * qx + qy * qy + qz * qz)
            qw *= nq
            qx *= nq
            qy *= nq
            qz *= nq
            if not math.isfinite(qw + qx + qy + qz + x1 + x2 + x3 + mw1 + mw2 + mw3 + mv1 + mv2 + mv3):
                raise FloatingPointError
            record.add((qw, qx, qy, qz, x1, x2, x3, mw1, mw2, mw3, mv1, mv2, mv3))
    except (FloatingPointError, ZeroDivisionError, OverflowError, ValueError):
        blew = True
    return record.array(), iters, solves, blew


def _run_batch(kernel: Kernel, inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray,
               xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
               fn: WrenchFunction | None, batch: tuple[int, ...]):
    """B bodies: the same reduced kernel on (B,) component arrays.

    Per-op numpy overhead dominates at B ~ 1000, so the common path avoids masks; they are
    applied only once a body has failed. Returns rec (n, 13, B) = (q, x, m), iterations per
    body, solves, alive, last_good.
    """
    rj, res, finish, pv_max = kernel.rj_array, kernel.res_array, kernel.finish_array, kernel.pv_max
    B = q0.shape[0]
    I6 = np.ascontiguousarray(inertia.T)           # (6, B)
    J1, J2, J3, m = I6[0], I6[1], I6[2], I6[3]
    iJ = 1.0 / I6[:3]
    im = 1.0 / m
    Jmax, Jmin = I6[:3].max(0), I6[:3].min(0)
    Jratio = Jmax / (Jmin * Jmin)                  # newton_bound's constants, per body
    ur2_lim = (UR_MAX * 2.0 * Jmin / Jmax) ** 2    # (h/2)²|ω|²(J_max/J_min)² ≤ UR_MAX²  ⇔  h²|ω|² ≤ this
    pv_scale = im / Jmin
    ilim6 = 1.0 / (XI_LIMIT * I6)
    rec = np.empty((steps + 1, 13, B))
    rec[0, :4] = q0.T
    rec[0, 4:7] = x0.T
    rec[0, 7:] = (inertia * xi0).T
    qw, qx, qy, qz = rec[0, :4].copy()
    x1, x2, x3 = rec[0, 4:7].copy()
    mom = rec[0, 7:].copy()
    prev = xi0.copy()
    hs = [float(c) * dt for c in subs]
    ns = len(hs)
    kicks = [0.5 * (hs[j] + hs[j + 1]) if j + 1 < ns else 0.5 * hs[j] for j in range(ns)]
    hist: list[list] = [[] for _ in hs]
    tol2 = NEWTON_TOL * NEWTON_TOL
    alive = np.ones(B, dtype=bool)
    any_dead = False
    last_good = np.full(B, steps, dtype=int)
    iters = np.zeros(B)
    solves = 0
    n_nodes = steps + 1

    def wrench_at(k):
        R = quaternion.to_matrix(np.stack([qw, qx, qy, qz], axis=-1)).reshape(batch + (3, 3))
        f = np.asarray(fn(k, R, np.stack([x1, x2, x3], axis=-1).reshape(batch + (3,)),
                          prev.reshape(batch + (6,))), dtype=float)
        return np.broadcast_to(f, batch + (6,)).reshape(B, 6).T

    def newton(g, b, h, tolE, kc):
        """:func:`_newton_scalar` on every body at once (a pass updates all; the chord decision is
        common: only when kc D₁ < CHORD_START for every body not yet converged)."""
        w = g.copy()
        w1, w2, w3 = w
        bw1, bw2, bw3, b1, b2, b3 = b
        done = np.zeros(B, dtype=bool)
        cnt = np.zeros(B)
        chords = 0
        fresh_prev = False
        D1 = Dp = None
        for _ in range(NEWTON_MAX_ITER):
            if chords == 0:
                out = rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
                G1, G2, G3 = out[:3]
                r00, r01, r02, r10, r11, r12, r20, r21, r22, idet = _adjugate3(*out[3:])
            else:
                G1, G2, G3 = res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
            d1 = (r00 * G1 + r01 * G2 + r02 * G3) * idet
            d2 = (r10 * G1 + r11 * G2 + r12 * G3) * idet
            d3 = (r20 * G1 + r21 * G2 + r22 * G3) * idet
            w1 -= d1
            w2 -= d2
            w3 -= d3
            cnt += ~done
            D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
            if chords == 0:
                conv = (D <= tolE) | (kc * D * D <= tolE)
                if fresh_prev:
                    conv |= D * D * D <= tolE * Dp * Dp
                D1 = D
            else:
                conv = (D <= tolE) | (kc * D1 * D <= tolE)
            done |= conv
            if done.all():
                break
            fresh_prev = chords == 0
            chords = chords + 1 if chords < CHORDS and (done | (kc * D1 < CHORD_START)).all() else 0
            Dp = D
        return w, done, cnt

    with np.errstate(all="ignore"):
        for k in range(steps):
            b = mom + 0.5 * hs[0] * wrench_at(k) if fn is not None else mom
            ok = alive.copy()
            for j in range(ns):
                h = hs[j]
                if any_dead:
                    b = np.where(ok, b, 0.0)   # failed bodies solve a trivial system
                bb = b * b
                tolE = tol2 * ((bb[:3] * iJ).sum(0) + (bb[3] + bb[4] + bb[5]) * im)
                explicit = b[:3] * iJ
                hj = hist[j]
                # polynomial extrapolation of the last ω ((3, B) arrays, wrapped as 1-vectors)
                g = _extrapolate([(v,) for v in hj])[0] if len(hj) >= 2 else explicit
                if any_dead:
                    g = np.where(ok, g, 0.0)   # b = 0, ω = 0: converged at once
                kc_base = (2.0 * h * h) * Jratio
                ur_lim = ur2_lim / (h * h)
                pv = None if pv_max is None else (h * h) * (bb[3] + bb[4] + bb[5]) * pv_scale

                def bound(g):
                    """:func:`newton_bound` with its per-body constants hoisted."""
                    ok_b = (g * g).sum(0) <= ur_lim
                    if pv is None:
                        return np.where(ok_b, kc_base, np.inf)
                    if pv_max < math.inf:
                        ok_b &= pv <= pv_max
                    gp = 1.0 + pv
                    return np.where(ok_b, kc_base * gp * gp, np.inf)

                w, done, cnt = newton(g, b, h, tolE, bound(g))
                if g is not explicit and not done.all():
                    w2, done2, cnt2 = newton(explicit, b, h, tolE, bound(explicit))
                    w = np.where(done, w, w2)
                    cnt = np.where(done, cnt, cnt + cnt2)
                    done = done | done2
                solves += 1
                iters += np.where(alive, cnt, 0.0) if any_dead else cnt
                fin = finish(w[0], w[1], w[2], J1, J2, J3, h, im, b[3], b[4], b[5])
                if not done.all():     # Newton failed for some bodies: they stop here
                    ok &= done
                    any_dead = True
                    w = np.where(ok, w, 0.0)
                    fin = [np.where(ok, c, 1.0 if i == 9 else 0.0) for i, c in enumerate(fin)]
                hj.append(w)
                if len(hj) > PREDICTOR_DEGREE + 1:
                    del hj[0]
                sw, sx, sy, sz, t1, t2, t3 = fin[9:16]
                cx = qy * t3 - qz * t2
                cy = qz * t1 - qx * t3
                cz = qx * t2 - qy * t1
                x1 = x1 + t1 + 2.0 * (qw * cx + qy * cz - qz * cy)
                x2 = x2 + t2 + 2.0 * (qw * cy + qz * cx - qx * cz)
                x3 = x3 + t3 + 2.0 * (qw * cz + qx * cy - qy * cx)
                qw, qx, qy, qz = (qw * sw - qx * sx - qy * sy - qz * sz,
                                  qw * sx + sw * qx + qy * sz - qz * sy,
                                  qw * sy + sw * qy + qz * sx - qx * sz,
                                  qw * sz + sw * qz + qx * sy - qy * sx)
                b = np.array(fin[3:9])
                if fn is not None:
                    prev = np.concatenate([w, np.array(fin[:3]) * im]).T
                    b = b + kicks[j] * wrench_at(k)
            nq = 1.5 - 0.5 * (qw * qw + qx * qx + qy * qy + qz * qz)
            row = rec[k + 1]
            np.multiply(qw, nq, out=row[0])
            np.multiply(qx, nq, out=row[1])
            np.multiply(qy, nq, out=row[2])
            np.multiply(qz, nq, out=row[3])
            row[4], row[5], row[6] = x1, x2, x3
            row[7:] = b
            # finite, and the node velocity 𝕀⁻¹m within XI_LIMIT (the blow-up test of the batch path);
            # NaN fails both quick tests (max propagates it), the per-body test runs only then
            mag = np.abs(row[7:]) * ilim6
            if any_dead or not (mag.max() < 1.0 and math.isfinite(row[:7].sum())):
                good = np.isfinite(row).all(0) & (mag < 1.0).all(0)
                ok &= good
                newly = alive & ~ok
                if newly.any():
                    any_dead = True
                    last_good[newly] = k
                    alive &= ok
                    if not alive.any():
                        n_nodes = k + 1
                        break
                row[:, ~alive] = rec[k][:, ~alive]   # frozen at the last good node
            qw, qx, qy, qz = row[:4]        # views: the next step only reads them
            x1, x2, x3 = row[4:7]
            mom = row[7:]
    return rec[:n_nodes], iters, solves, alive, last_good


def _run_generic(pairing: Pairing, inertia: np.ndarray, R0: np.ndarray, x0: np.ndarray,
                 xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
                 fn: WrenchFunction | None, batch: tuple[int, ...]):
    """Any pairing, any diagonal 𝕀: Newton on 6 unknowns, batched over (B,)."""
    B = R0.shape[0]
    R_rec = np.empty((steps + 1, B, 3, 3))
    x_rec = np.empty((steps + 1, B, 3))
    m_rec = np.empty((steps + 1, B, 6))
    R_rec[0], x_rec[0], m_rec[0] = R0, x0, inertia * xi0
    R, x, mom = R0.copy(), x0.copy(), inertia * xi0
    prev = xi0.copy()
    hs = [float(c) * dt for c in subs]
    ns = len(hs)
    hist: list[list] = [[] for _ in hs]
    tol2 = NEWTON_TOL * NEWTON_TOL
    alive = np.ones(B, dtype=bool)
    last_good = np.full(B, steps, dtype=int)
    iters = np.zeros(B)
    solves = 0
    n_nodes = steps + 1

    def wrench_at(k):
        f = np.asarray(fn(k, R.reshape(batch + (3, 3)), x.reshape(batch + (3,)), prev.reshape(batch + (6,))),
                       dtype=float)
        return np.broadcast_to(f, batch + (6,)).reshape(B, 6)

    def newton(xi, b, h, tolE):
        xi = xi.copy()
        done = np.zeros(B, dtype=bool)
        it_at = np.full(B, NEWTON_MAX_ITER + 1)
        dprev = np.zeros(B)
        for it in range(1, NEWTON_MAX_ITER + 1):
            eta = h * xi
            CT = np.swapaxes(pairing.C(eta), -1, -2)
            mu = inertia * xi
            F = np.einsum("bij,bj->bi", CT, mu) - b
            Jac = CT * inertia[:, None, :] + h * pairing.K(eta, mu)
            Jac = np.where(np.isfinite(Jac).all(axis=(-1, -2))[:, None, None], Jac, np.eye(6))
            d = _solve_batched(Jac, np.where(np.isfinite(F), F, 0.0))
            d = np.where(np.isfinite(F).all(-1)[:, None], d, np.nan)
            xi = xi - d
            dd = np.einsum("bi,bi->b", d * inertia, d)
            conv = (dd <= tolE) | (dd ** 3 <= tolE * dprev ** 2)
            newly = conv & ~done
            it_at[newly] = it
            done |= conv
            if done.all():
                break
            dprev = dd
        return xi, done, it_at

    with np.errstate(all="ignore"):
        for k in range(steps):
            dead = ~alive
            b = mom + 0.5 * hs[0] * wrench_at(k) if fn is not None else mom
            ok = alive.copy()
            for j in range(ns):
                h = hs[j]
                b = np.where(dead[:, None], 0.0, b)
                tolE = tol2 * np.einsum("bi,bi->b", b / inertia, b)
                explicit = b / inertia
                hj = hist[j]
                g = (3.0 * (hj[2] - hj[1]) + hj[0] if len(hj) == 3
                     else 2.0 * hj[1] - hj[0] if len(hj) == 2 else explicit)
                xi, done, it_at = newton(g, b, h, tolE)
                if g is not explicit and not done.all():
                    xi2, done2, it2 = newton(explicit, b, h, tolE)
                    retry = ~done & done2
                    xi = np.where(retry[:, None], xi2, xi)
                    it_at = np.where(retry, it_at + it2, it_at)
                    done = done | done2
                solves += 1
                iters += np.where(alive, np.minimum(it_at, NEWTON_MAX_ITER), 0)
                ok &= done & (np.abs(xi).max(axis=-1) < XI_LIMIT)
                xi = np.where(ok[:, None], xi, 0.0)
                hj.append(xi)
                if len(hj) > 3:
                    del hj[0]
                Q, t = pairing.tau(h * xi)
                x = x + np.einsum("bij,bj->bi", R, t)
                R = R @ Q
                prev = xi
                mu_plus = np.einsum("bji,bj->bi", pairing.C(-h * xi), inertia * xi)
                if fn is not None:
                    kk = 0.5 * (h + hs[j + 1]) if j + 1 < ns else 0.5 * h
                    mu_plus = mu_plus + kk * wrench_at(k)
                b = mu_plus
                dead = ~ok
            ok &= np.isfinite(b).all(-1) & np.isfinite(x).all(-1) & np.isfinite(R).all(axis=(-1, -2))
            newly = alive & ~ok
            if newly.any():
                last_good[newly] = k
                alive &= ok
                if not alive.any():
                    n_nodes = k + 1
                    break
            R = np.where(alive[:, None, None], R, R_rec[k])
            x = np.where(alive[:, None], x, x_rec[k])
            mom = np.where(alive[:, None], b, m_rec[k])
            R_rec[k + 1], x_rec[k + 1], m_rec[k + 1] = R, x, mom
    return (R_rec[:n_nodes], x_rec[:n_nodes], m_rec[:n_nodes], iters, solves, alive, last_good)


def _assemble(R: np.ndarray, x: np.ndarray, m: np.ndarray, inertia: np.ndarray, xi0: np.ndarray,
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
    return Trajectory(time=dt * np.arange(len(x)), position=x, orientation=q,
                      angular_velocity=vel[..., :3], linear_velocity=vel[..., 3:],
                      momentum_angular=L, momentum_linear=P, stats=stats, vehicle="rigid_body")


def _assemble_records(rec: np.ndarray, inertia: np.ndarray, xi0: np.ndarray, batch: tuple[int, ...],
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
    shape = (n,) + batch
    return Trajectory(time=dt * np.arange(n), position=pos.reshape(shape + (3,)), orientation=ori.reshape(shape + (4,)),
                      angular_velocity=av.reshape(shape + (3,)), linear_velocity=lv.reshape(shape + (3,)),
                      momentum_angular=L.reshape(shape + (3,)), momentum_linear=P.reshape(shape + (3,)),
                      stats=stats, vehicle="rigid_body")


def isotropic_mass(inertia: np.ndarray) -> bool:
    """True when every body has M = m I₃ (the reduced kernels apply)."""
    inertia = np.asarray(inertia, dtype=float)
    return bool(np.all(inertia[..., 3] == inertia[..., 4]) and np.all(inertia[..., 4] == inertia[..., 5]))


def prepare(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
            wrench: WrenchSpec = None) -> dict:
    """Validated, flattened inputs shared by the VI drivers: batch shape, inertia (B, 6),
    R0 (B, 3, 3), x0 (B, 3), xi0 (B, 6) and the combined wrench function."""
    _, steps, batch, inertia, fn = checked_inputs(system, initial, dt, steps, wrench)
    B = int(np.prod(batch, dtype=int))
    return {"batch": batch, "inertia": inertia.reshape(B, 6),
            "R0": np.broadcast_to(np.asarray(initial.R, dtype=float), batch + (3, 3)).reshape(B, 3, 3).copy(),
            "x0": np.broadcast_to(np.asarray(initial.x, dtype=float), batch + (3,)).reshape(B, 3).copy(),
            "xi0": np.broadcast_to(initial.xi, batch + (6,)).reshape(B, 6).copy(),
            "fn": fn}


def integrate(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
              method: str = "vi-cay", wrench: WrenchSpec = None, *, fast: bool = True,
              substeps: Sequence[float] = (1.0,), name: str | None = None) -> Trajectory:
    """Run a holonomic VI pairing (eqs. 9–10) from ``initial`` for ``steps`` steps of ``dt``.

    ``system.wrench`` and ``wrench`` are added. Batch shape () or any leading batch shape
    (arrays then come out as (N+1,) + batch + (...)). ``substeps`` are the fractions of dt of
    a composition of the basic step (``(1,)``: the plain scheme; vi-cay-ln with the triple jump
    is vi-cay4's generic path, see :mod:`.composition`). With M = m I₃ the reduced kernels run (plain floats for one body, component
    arrays for a batch); ``fast=False`` forces the generic 6×6 numpy path (any diagonal 𝕀,
    the benchmark baseline). Stats: wall_time_s, newton_iterations_mean (per Newton solve),
    blew_up, method, steps, dt, path, last_good_node (and blew_up_per_body for a batch).
    A blow-up (non-finite value, Newton failure, |ω| or |v| > 1e8) stops a single body at its
    last good node (truncated output); in a batch the body is frozen there and the output is
    truncated only once every body has blown up (the baselines' convention).
    """
    t0 = time.perf_counter()
    if method not in PAIRINGS:
        raise ValueError(f"unknown variational method {method!r}; valid: {', '.join(VI_METHODS)}")
    pairing = PAIRINGS[method]
    steps = int(steps)
    dt = float(dt)
    setup = prepare(system, initial, dt, steps, wrench)
    batch, inertia, R0, x0, xi0, fn = (setup[k] for k in ("batch", "inertia", "R0", "x0", "xi0", "fn"))
    reduced = fast and pairing.kernel is not None and isotropic_mass(inertia)
    if reduced:
        q0 = quaternion.from_matrix(R0)
        if batch == ():
            rows, it, solves, blew = _run_scalar(pairing.kernel, inertia[0], q0[0], x0[0], xi0[0], dt,
                                                 steps, substeps, fn)
            rec = rows[:, :, None]
            iters = np.array([float(it)])
            alive = np.array([not blew])
            last_good = np.array([len(rows) - 1 if blew else steps])
            path = "scalar"
        else:
            rec, iters, solves, alive, last_good = _run_batch(pairing.kernel, inertia, q0, x0, xi0, dt,
                                                              steps, substeps, fn, batch)
            path = "batch"
    else:
        R, x, m, iters, solves, alive, last_good = _run_generic(pairing, inertia, R0, x0, xi0, dt, steps,
                                                                substeps, fn, batch)
        path = "generic"
    blew = bool(not alive.all())
    stats = {"method": name or method, "steps": steps, "dt": dt, "blew_up": blew,
             "newton_iterations_mean": float(np.mean(iters)) / solves if solves else 0.0, "path": path}
    if batch:
        stats["blew_up_per_body"] = (~alive).reshape(batch).tolist()
        stats["last_good_node"] = last_good.reshape(batch).tolist()
    else:
        stats["last_good_node"] = int(last_good[0])
    if reduced:
        traj = _assemble_records(rec, inertia, xi0, batch, dt, stats)
    else:
        shape = (len(x),) + batch
        traj = _assemble(R.reshape(shape + (3, 3)), x.reshape(shape + (3,)), m.reshape(shape + (6,)),
                         inertia.reshape(batch + (6,)), xi0.reshape(batch + (6,)), dt, stats)
    traj.stats["wall_time_s"] = time.perf_counter() - t0
    return traj


__all__ = ["PAIRINGS", "VI_METHODS", "Pairing", "Kernel", "integrate", "prepare", "momentum_map",
           "momentum_map_jacobian", "reduced_residual", "reduced_finish", "isotropic_mass",
           "exp_coefficients_scalar", "exp_coefficients_array", "COEFFICIENT_NAMES",
           "NEWTON_TOL", "NEWTON_MAX_ITER", "XI_LIMIT"]
