"""Reduced kernels of the holonomic variational integrator: one body with M = m I₃, unknown ω alone.

The discrete Euler–Poincaré equation (Kobilarov, Crane & Desbrun 2009, "Lie group integrators for
animation and control of vehicles", eq. 10) in momentum form, C_τ(hξ)ᵀ𝕀ξ = b, has six unknowns;
with M = m I₃ the linear block is solved in closed form (e.g. for vi-cay (I + (h/2)ω̂) m v = b^v
gives m v = (b − u×b + u(u·b))/(1 + |u|²), u = (h/2)ω), which leaves Newton on ω (:mod:`.newton`).
docs/equations.md, "Holonomic variational integrator" and "Difference maps τ and their tangents".

Arguments: ω (3), J (3), h, 1/m, b = (b^ω, b^v) the right-hand side of eq. (10).
  rj     → residual G(ω) (3) and its Jacobian dG/dω (row-major 3×3)
  res    → G(ω) alone (chord updates reuse an earlier Jacobian)
  finish → p = m v (3), μ⁺ = C(−hξ)ᵀ𝕀ξ (6), quaternion of the rotation of τ(hξ) (4),
           translation of τ(hξ) (3)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .coefficients import exp_coefficients_array, exp_coefficients_scalar


@dataclass(frozen=True)
class Kernel:
    """A reduced (isotropic-mass) kernel for floats and for arrays: ``rj`` (residual and Jacobian),
    ``res`` (residual alone, for chord updates) and ``finish``; ``pv_max`` is where the Newton
    error bound (:func:`.newton.newton_bound`) stops being trusted in p_v = h²|b^v|²/(m J_min)
    (None: the residual does not see b^v)."""

    rj: Callable
    res: Callable
    finish: Callable
    rj_array: Callable
    res_array: Callable
    finish_array: Callable
    pv_max: float | None


# ==============================================================================================
# Hand-unrolled code, from here to the end of the module.
# Every 3-vector and 3×3 operation is spelt out in scalars, on purpose. One body's step costs
# ~10 µs in plain Python floats, while any numpy call on a 3-vector or 3×3 matrix costs ~1 µs of
# per-call overhead, and a step needs dozens of them: the numpy path (the "generic" column of
# benchmarks/vi_speed.py) is 30–80× slower per step. Written with + − × ÷ ** only,
# the same function also runs on (B,) component arrays for a batch. Each kernel recomputes its
# prelude (u = (h/2)ω, y = Jω, s, p) instead of calling a shared helper: a Python call costs about
# as much as ten of these float operations, and rj / res / finish run in every step.
# ==============================================================================================


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
    """C = I − ½ ad with M = m I₃: G = (I + û) J ω − b^ω, u = (h/2)ω (v × m v = 0 decouples v)."""
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
    """C = I − ½ ad after the solve: p = (I + û)⁻¹ b^v, μ⁺ = ((I − û) J ω, (I − û) p)."""
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
    """vi-cay-ln after the solve: :func:`_ln_out` (inlined: this runs in every step), then the
    paper's Cayley pose (eq. 13).

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
        translation so3.dexp(a) h v = c + cosc a×c + k1(a(a·c) − θ²c) (eq. 13)."""
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



KERNELS: dict[str, Kernel] = {
    "vi-cay": Kernel(_cay_rj, _cay_res, _cay_finish, _cay_rj, _cay_res, _cay_finish, math.inf),
    "vi-cay-ln": Kernel(_ln_rj, _ln_res, _cay_ln_finish, _ln_rj, _ln_res, _cay_ln_finish, None),
    "vi-exp": Kernel(_exp_rj_s, _exp_res_s, _exp_finish_s, _exp_rj_a, _exp_res_a, _exp_finish_a, 10.0),
    "vi-exp-ln": Kernel(_ln_rj, _ln_res, _exp_ln_finish_s, _ln_rj, _ln_res, _exp_ln_finish_a, None),
}

__all__ = ["Kernel", "KERNELS"]
