"""``vi-cay4``: a fourth-order variational integrator, the triple jump of the vi-cay-ln step.

Kernel. The composed map is the paper's own Appendix A pairing (``vi-cay-ln`` of
:mod:`.holonomic`): τ = se3.cay_paper (rotation cay(hω), translation 2/(4 + θ²)(2I + ĥω) h v,
paper eq. 13) with C_LN(η) = I − ½ ad_η. Its momentum-form step Φ_h : (g_k, m_k) ↦ (g_{k+1},
m_{k+1}) (eqs. 9–10, equations.md "Holonomic variational integrator") is

    (I + û) J ω = b^ω,   (I + û) p = b^v,   u = (h/2) ω,   b = m_k + (h/2) f_k      (eq. 10)
    g_{k+1} = g_k τ(hξ),   μ⁺ = C_LN(−hξ)ᵀ𝕀ξ = ((I − û) J ω, (I − û) p) = 2 (Jω, p) − b
    m_{k+1} = μ⁺ + (h/2) f_{k+1}

(the last form of μ⁺ because (I + û)(Jω, p) = b). The map is symmetric, Φ_h⁻¹ = Φ_{−h}:
cay_paper(−η) = cay_paper(η)⁻¹ (tests/core/test_holonomic.py checks it) and C_LN(−η) is
C_LN(η) with the sign of the ad term flipped, so solving the step backwards from (g_{k+1},
m_{k+1}) with −h gives back (g_k, m_k); the half kicks keep the forced step symmetric for a
wrench that depends on the pose only. It satisfies the discrete Noether identity
C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ, so the spatial momentum of a free body is conserved exactly, and
with M = m I₃ the node kinetic energy too. The symmetric triple jump (Yoshida 1990; Hairer,
Lubich & Wanner, *Geometric Numerical Integration*, §II.4)

    Ψ_h = Φ_{γ₁h} ∘ Φ_{γ₂h} ∘ Φ_{γ₁h},   γ₁ = 1/(2 − 2^{1/3}),   γ₂ = 1 − 2γ₁ (< 0)

is of order 4 and keeps what every sub-step conserves. γ₂ ≈ −1.70: the middle sub-step goes
backwards by 1.7 h. Why C_LN and not the exact-C_cay vi-cay kernel the first vi-cay4 composed:
the rotation equation (I + û) J ω = b^ω does not see the linear momentum, so there is no
spin–translation coupling error growing with |v|² (see :mod:`.holonomic`), the step is about a
third cheaper, and on the Fig. 4 benchmark the composed error is 2–3× smaller at equal steps.

World-frame linear momentum. With P = R_k b^v (the spatial linear momentum, kicks included) the
translation of τ is R_k (h/m)(I + û)p/(1 + |u|²) = (h/m) P/(1 + |u|²) and R_{k+1}μ⁺_v = P, so the
fast paths carry P instead of the body b^v: x_{k+1} = x_k + (h/m) P/(1 + |u|²), P unchanged by
the drift, P += (h/2) R F at a kick. The body momentum R_kᵀP is formed only for the output and
for a wrench function's ξ argument.

Newton (the only implicit part, three unknowns). G(ω) = Jω + (h/2) ω × Jω − b^ω is quadratic,
A = dG/dω = J + (h/2)(ω̂J − (Jω)^). With δ a Newton update, the residual after it is exactly
Q(δ) = (h/2) δ × Jδ, so the error left is e = A⁻¹Q(δ); after a simplified-Newton ("chord")
update δ_n with the Jacobian A₀ of the last Newton update Δ, e ≈ A₀⁻¹(h/2)(Δ × Jδ_n + δ_n × JΔ).
With A ≈ J, |δ|² ≤ D/J_min and |Jδ|² ≤ J_max D (D = δᵀJδ):

    eᵀJe ≤ 4 (h/2)² (J_max/J_min²) D₁ D_n ≤ kc D₁ D_n,   kc = 2h² J_max/J_min²

(D_n = D₁ for a Newton update), and an update is accepted, without evaluating the residual
again, once kc D₁ D_n ≤ ``FAST_TOL``² · b^ωᵀJ⁻¹b^ω: the error left is below round-off.
tests/core/test_holonomic.py checks the bound on random bodies, steps and guesses for
(h/2)|ω| J_max/J_min ≤ 2 (measured worst: 6 % of it). A chord update contracts the error by
about √(kc D₁), so it is used (at most ``CHORDS`` per Jacobian) only after a Newton update
with kc D₁ < 1e-4. ``strict=True`` instead runs full Newton updates until |δ| itself is
below ``NEWTON_TOL`` (the reference the tests compare the fast termination against).

Initial guesses. Each sub-step's ω is extrapolated from the same sub-step of the five previous
steps (degree 4, error h⁵ω⁽⁵⁾), and the extrapolation error the other sub-steps have just made
is added: sub-step j is centred at t_k + c_j h (c = 0.676, 0.5, 0.324), the error is nearly one
smooth function of that time, and its linear extrapolation from the errors already known
(E1, E3 of step k − 1, E1 of step k) removes another factor 10–100 (measured on the Fig. 4
bodies; exact for ω a polynomial of degree 6 in t). A solve that fails from the guess restarts
from J⁻¹b^ω, then follows the solution from h = 0 by continuation in h (large |hω|, where
Newton from J⁻¹b^ω can cycle); only then is it a blow-up.

Paths. One body: plain floats, sub-step after sub-step. A batch with a wrench: the same on
(B, 3) arrays, one LAPACK call per Newton update. A free batch of up to ``JOINT_MAX_BATCH``
bodies: :func:`_run_joint`, the three sub-steps as one block-triangular system (a pass of
numpy calls updates all three). In both
batch paths a Newton pass covers every body, and once at most max(4, B/16) bodies are left
they finish on floats, which is cheaper than another pass.

Wrench: f(k, R, x, ξ_prev) (ξ_prev the last solved sub-step velocity) at each sub-node,
applied as half kicks around each sub-step, exactly as in :mod:`.holonomic`. With a wrench
that depends on the velocity the composed step is no longer symmetric and the order can drop
to 2.
"""
from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np

from ..lie import quaternion
from ..trajectory import Trajectory
from . import holonomic
from .common import HolonomicSystem, RigidState, WrenchFunction, WrenchSpec

GAMMA1 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
GAMMA2 = 1.0 - 2.0 * GAMMA1
TRIPLE_JUMP: tuple[float, float, float] = (GAMMA1, GAMMA2, GAMMA1)
KERNEL = "vi-cay-ln"          # the composed pairing (holonomic.PAIRINGS)
FAST_TOL = 1e-16              # bound on the Newton error left, relative (energy norm)
CHORDS = 2                    # simplified-Newton updates per Jacobian
JOINT_MAX_BATCH = 64          # free batches up to this size solve the three sub-steps jointly

# Sub-step j covers [t_k + c_j h − |γ_j| h/2, t_k + c_j h + |γ_j| h/2] (c = 0.676, 0.5, 0.324);
# its extrapolation error E_j(k) ≈ F(t_k + c_j h) for one smooth F. E1 of this step and of the
# previous one and E3 of the previous one are known when a sub-step starts: linear in time,
#   E1(k) ≈ E1(k−1) + (E1(k−1) − E3(k−1))/(c₁ − c₃),   E_j(k) ≈ E1(k) + (c_j − c₁)(E1(k) − E1(k−1)).
_C = (0.5 * GAMMA1, GAMMA1 + 0.5 * GAMMA2, 1.0 - 0.5 * GAMMA1)
_K0 = 1.0 / (_C[0] - _C[2])
_KJ = (0.0, _C[1] - _C[0], _C[2] - _C[0])

# Extrapolation weights, oldest value first, for 1…5 stored values (degree 0…4).
_EXTRAP = {1: (1.0,), 2: (-1.0, 2.0), 3: (1.0, -3.0, 3.0), 4: (-1.0, 4.0, -6.0, 4.0),
           5: (1.0, -5.0, 10.0, -10.0, 5.0)}


def _accept_coefficients(J: np.ndarray, hs: Sequence[float]) -> list:
    """2 h² J_max/J_min² per sub-step (J (..., 3)): the factor of the Newton error bound."""
    J = np.asarray(J, dtype=float)
    c = J.max(-1) / J.min(-1) ** 2
    return [2.0 * h * h * c for h in hs]


def _newton_ln(w1: float, w2: float, w3: float, b1: float, b2: float, b3: float, J1: float, J2: float,
               J3: float, hh: float, kc: float, tolE: float, strict: bool) -> tuple:
    """Solve G(ω) = Jω + (h/2) ω × Jω − b = 0 from (w1, w2, w3) on floats (module docstring):
    one Newton update, up to ``CHORDS`` chord updates with its adjugate (only when the Newton
    update was small, kc D₁ < 1e-4: a chord contracts the error by about √(kc D₁)), a fresh
    Newton update, …; accepted when kc D₁ D ≤ tolE (strict: D ≤ tolE). Returns (ω₁, ω₂, ω₃, Newton updates, chord
    updates, 1.0 if converged else 0.0)."""
    J23, J13, J12 = J2 * J3, J1 * J3, J1 * J2
    chords = 0
    nn = nc = 0
    D1 = 0.0
    for _ in range(holonomic.NEWTON_MAX_ITER):
        y1 = J1 * w1
        y2 = J2 * w2
        y3 = J3 * w3
        u1 = hh * w1
        u2 = hh * w2
        u3 = hh * w3
        G1 = y1 + u2 * y3 - u3 * y2 - b1
        G2 = y2 + u3 * y1 - u1 * y3 - b2
        G3 = y3 + u1 * y2 - u2 * y1 - b3
        if chords == 0:     # fresh Jacobian J + (h/2)(ω̂J − ŷ) and its adjugate
            nn += 1
            hy1 = hh * y1
            hy2 = hh * y2
            hy3 = hh * y3
            a01 = hy3 - u3 * J2
            a02 = u2 * J3 - hy2
            a10 = u3 * J1 - hy3
            a12 = hy1 - u1 * J3
            a20 = hy2 - u2 * J1
            a21 = u1 * J2 - hy1
            c00 = J23 - a12 * a21
            c01 = a02 * a21 - a01 * J3
            c02 = a01 * a12 - a02 * J2
            c10 = a12 * a20 - a10 * J3
            c11 = J13 - a02 * a20
            c12 = a02 * a10 - J1 * a12
            c20 = a10 * a21 - J2 * a20
            c21 = a01 * a20 - J1 * a21
            c22 = J12 - a01 * a10
            idet = 1.0 / (J1 * c00 + a01 * c10 + a02 * c20)
        else:
            nc += 1
        d1 = (c00 * G1 + c01 * G2 + c02 * G3) * idet
        d2 = (c10 * G1 + c11 * G2 + c12 * G3) * idet
        d3 = (c20 * G1 + c21 * G2 + c22 * G3) * idet
        w1 -= d1
        w2 -= d2
        w3 -= d3
        D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
        if strict:
            if D <= tolE:
                return w1, w2, w3, nn, nc, 1.0
            continue
        if chords == 0:
            D1 = D
        if kc * D1 * D <= tolE:
            return w1, w2, w3, nn, nc, 1.0
        # a chord contracts the error by ≈ √(kc D₁): worth it only after a small Newton update
        chords = chords + 1 if chords < CHORDS and kc * D1 < 1e-4 else 0
    return w1, w2, w3, nn, nc, 0.0



def _newton_ln_continued(b1: float, b2: float, b3: float, J1: float, J2: float, J3: float, hh: float,
                         kc: float, tolE: float, strict: bool, depth: int = 6) -> tuple:
    """The last resort of a failed solve (large |hω|, a guess Newton cannot start from): follow
    the solution from h = 0, where ω = J⁻¹b, by continuation in h, halving the increment of h
    whenever Newton fails. Same return as :func:`_newton_ln` (counts summed)."""
    w1, w2, w3 = b1 / J1, b2 / J2, b3 / J3
    s, ds, nn, nc = 0.0, 0.5, 0, 0
    while s < 1.0:
        t = min(1.0, s + ds)
        r = _newton_ln(w1, w2, w3, b1, b2, b3, J1, J2, J3, t * hh, kc * t * t, tolE, strict)
        nn += r[3]
        nc += r[4]
        if r[5] == 1.0:
            w1, w2, w3 = r[:3]
            s = t
            ds *= 2.0
        elif depth:
            ds *= 0.5
            depth -= 1
        else:
            return w1, w2, w3, nn, nc, 0.0
    return w1, w2, w3, nn, nc, 1.0

# ----------------------------------------------------------------------------------------------
# One body on Python floats
# ----------------------------------------------------------------------------------------------


def _run_scalar(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
                steps: int, fn: WrenchFunction | None, strict: bool):
    """Rows (n, 13) = (unit q, x, b^ω, P world), Newton and chord counts, solves, blew_up."""
    J1, J2, J3, m = (float(c) for c in inertia[:4])
    iJ1, iJ2, iJ3, im = 1.0 / J1, 1.0 / J2, 1.0 / J3, 1.0 / m
    hs = [g * dt for g in TRIPLE_JUMP]
    hhs = [0.5 * h for h in hs]
    cs = [h * im for h in hs]
    kcs = [float(c) for c in _accept_coefficients(inertia[:3], hs)]
    kicks = [0.5 * (hs[j] + hs[j + 1]) if j < 2 else 0.5 * hs[j] for j in range(3)]
    tol2 = FAST_TOL * FAST_TOL
    tol2s = holonomic.NEWTON_TOL * holonomic.NEWTON_TOL
    qw, qx, qy, qz = (float(c) for c in q0)
    x1, x2, x3 = (float(c) for c in x0)
    w1, w2, w3, v1, v2, v3 = (float(c) for c in xi0)
    bw1, bw2, bw3 = J1 * w1, J2 * w2, J3 * w3
    # P = R(q) m v
    c1 = qy * v3 - qz * v2
    c2 = qz * v1 - qx * v3
    c3 = qx * v2 - qy * v1
    P1 = m * (v1 + 2.0 * (qw * c1 + qy * c3 - qz * c2))
    P2 = m * (v2 + 2.0 * (qw * c2 + qz * c1 - qx * c3))
    P3 = m * (v3 + 2.0 * (qw * c3 + qx * c2 - qy * c1))
    record = holonomic.StepRows((qw, qx, qy, qz, x1, x2, x3, bw1, bw2, bw3, P1, P2, P3), 13)
    hist: list[list] = [[], [], []]
    err: list = [None, None, None]    # last extrapolation errors E1, (unused), E3
    e1p = None                        # E1 of the step before
    prev = [w1, w2, w3, v1, v2, v3]
    n_newton = n_chord = solves = 0
    blew = False

    def kick(k, kk, qw, qx, qy, qz, x, prev, bw, P):
        """b^ω += kk τ, P += kk R F for f = fn(k, R, x, ξ_prev) (q normalised here)."""
        s = 1.0 / math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        f = holonomic._wrench_floats(fn, k, (qw * s, qx * s, qy * s, qz * s), x, prev)
        R = quaternion.to_matrix(np.array([qw, qx, qy, qz]) * s)
        F = R @ np.array(f[3:])
        return ([bw[0] + kk * f[0], bw[1] + kk * f[1], bw[2] + kk * f[2]],
                [P[0] + kk * F[0], P[1] + kk * F[1], P[2] + kk * F[2]])

    try:
        for k in range(steps):
            if fn is not None:
                (bw1, bw2, bw3), (P1, P2, P3) = kick(k, 0.5 * hs[0], qw, qx, qy, qz, (x1, x2, x3), prev,
                                                     (bw1, bw2, bw3), (P1, P2, P3))
            for j in (0, 1, 2):
                hh = hhs[j]
                hj = hist[j]
                n = len(hj)
                if n == 5:
                    a, b, c, d, e = hj
                    p1 = 5.0 * (e[0] - b[0]) - 10.0 * (d[0] - c[0]) + a[0]
                    p2 = 5.0 * (e[1] - b[1]) - 10.0 * (d[1] - c[1]) + a[1]
                    p3 = 5.0 * (e[2] - b[2]) - 10.0 * (d[2] - c[2]) + a[2]
                    # add the extrapolation error expected from the errors already seen (E1, E3)
                    e1 = err[0]
                    if j == 0:
                        e3 = err[2]
                        if e1 is not None and e3 is not None:
                            w1 = p1 + e1[0] + _K0 * (e1[0] - e3[0])
                            w2 = p2 + e1[1] + _K0 * (e1[1] - e3[1])
                            w3 = p3 + e1[2] + _K0 * (e1[2] - e3[2])
                        else:
                            w1, w2, w3 = p1, p2, p3
                    elif e1 is not None and e1p is not None:
                        kj = _KJ[j]
                        w1 = p1 + e1[0] + kj * (e1[0] - e1p[0])
                        w2 = p2 + e1[1] + kj * (e1[1] - e1p[1])
                        w3 = p3 + e1[2] + kj * (e1[2] - e1p[2])
                    else:
                        w1, w2, w3 = p1, p2, p3
                elif n == 0:
                    p1 = None
                    w1, w2, w3 = bw1 * iJ1, bw2 * iJ2, bw3 * iJ3
                else:
                    p1 = None
                    cf = _EXTRAP[n]
                    w1 = sum(c * v[0] for c, v in zip(cf, hj))
                    w2 = sum(c * v[1] for c, v in zip(cf, hj))
                    w3 = sum(c * v[2] for c, v in zip(cf, hj))
                tolE = (tol2s if strict else tol2) * (bw1 * bw1 * iJ1 + bw2 * bw2 * iJ2 + bw3 * bw3 * iJ3)
                kc = kcs[j]
                sol = _newton_ln(w1, w2, w3, bw1, bw2, bw3, J1, J2, J3, hh, kcs[j], tolE, strict)
                if sol[5] == 0.0 and math.isfinite(bw1 + bw2 + bw3):   # restart from J⁻¹b^ω
                    n_newton += sol[3]
                    n_chord += sol[4]
                    sol = _newton_ln(bw1 * iJ1, bw2 * iJ2, bw3 * iJ3, bw1, bw2, bw3, J1, J2, J3, hh, kcs[j],
                                     tolE, strict)
                    if sol[5] == 0.0:      # continuation in h from J⁻¹b^ω
                        n_newton += sol[3]
                        n_chord += sol[4]
                        sol = _newton_ln_continued(bw1, bw2, bw3, J1, J2, J3, hh, kcs[j], tolE, strict)
                w1, w2, w3, nn, nc, ok = sol
                n_newton += nn
                n_chord += nc
                if not ok:
                    raise FloatingPointError
                solves += 1
                if j != 1:
                    if j == 0:
                        e1p = err[0]
                    err[j] = (w1 - p1, w2 - p2, w3 - p3) if p1 is not None else None
                if n == 5:
                    del hj[0]
                hj.append((w1, w2, w3))
                # μ⁺_ω = 2Jω − b^ω; pose: q ← q ⊗ (1, u) (normalised at the node), x += (h/m) P/(1 + |u|²)
                u1 = hh * w1
                u2 = hh * w2
                u3 = hh * w3
                if fn is not None:   # body p = (I + û)⁻¹ R_kᵀP for ξ_prev, before q moves
                    s = 1.0 / math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
                    bv = quaternion.to_matrix(np.array([qw, qx, qy, qz]) * s).T @ np.array([P1, P2, P3])
                    us = u1 * bv[0] + u2 * bv[1] + u3 * bv[2]
                    ni = 1.0 / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
                    prev = [w1, w2, w3,
                            (bv[0] - u2 * bv[2] + u3 * bv[1] + u1 * us) * ni * im,
                            (bv[1] - u3 * bv[0] + u1 * bv[2] + u2 * us) * ni * im,
                            (bv[2] - u1 * bv[1] + u2 * bv[0] + u3 * us) * ni * im]
                bw1 = 2.0 * J1 * w1 - bw1
                bw2 = 2.0 * J2 * w2 - bw2
                bw3 = 2.0 * J3 * w3 - bw3
                t = cs[j] / (1.0 + u1 * u1 + u2 * u2 + u3 * u3)
                x1 += t * P1
                x2 += t * P2
                x3 += t * P3
                qw, qx, qy, qz = (qw - qx * u1 - qy * u2 - qz * u3,
                                  qx + qw * u1 + qy * u3 - qz * u2,
                                  qy + qw * u2 + qz * u1 - qx * u3,
                                  qz + qw * u3 + qx * u2 - qy * u1)
                if fn is not None:
                    (bw1, bw2, bw3), (P1, P2, P3) = kick(k, kicks[j], qw, qx, qy, qz, (x1, x2, x3), prev,
                                                         (bw1, bw2, bw3), (P1, P2, P3))
            s = 1.0 / math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
            qw *= s
            qx *= s
            qy *= s
            qz *= s
            if not (abs(w1) + abs(w2) + abs(w3) < holonomic.XI_LIMIT
                    and (abs(P1) + abs(P2) + abs(P3)) * im < holonomic.XI_LIMIT
                    and math.isfinite(qw + qx + qy + qz + x1 + x2 + x3 + bw1 + bw2 + bw3)):
                raise FloatingPointError
            record.add((qw, qx, qy, qz, x1, x2, x3, bw1, bw2, bw3, P1, P2, P3))
    except (FloatingPointError, ZeroDivisionError, OverflowError, ValueError):
        blew = True
    return record.array(), n_newton, n_chord, solves, blew


# ----------------------------------------------------------------------------------------------
# A batch: (B, k) arrays and small constant matrices. Per-call numpy overhead dominates for
# the batches this runs (tens of bodies), so each quantity is one matmul of an outer product
# with a constant matrix where possible, and the 3×3 Newton systems go to LAPACK in one call.
# ----------------------------------------------------------------------------------------------

def _levi_civita() -> np.ndarray:
    e = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        e[i, j, k], e[i, k, j] = 1.0, -1.0
    return e


_EPS = _levi_civita()


def _residual_jacobian_matrix(hh: float) -> np.ndarray:
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


def _quaternion_step_matrix(hh: float) -> np.ndarray:
    """Q (12, 4) with (q ⊗ ω).reshape(12) @ Q = q ⊗ (0, (h/2)ω) (quaternion product)."""
    Q = np.zeros((4, 3, 4))
    for j, a in enumerate(np.eye(4)):
        for k, b in enumerate(np.eye(3)):
            Q[j, k] = hh * quaternion.multiply(a, np.concatenate([[0.0], b]))
    return Q.reshape(12, 4)


_QUARTIC = (5.0, -10.0, 10.0, -5.0, 1.0)     # ω(k) ≈ Σ_i a_i ω(k − i), i = 1…5
_LAGS = 7                                    # ring buffer: ω_j(k), …, ω_j(k − 6)


def _predictor_weights(joint: bool = False) -> np.ndarray:
    """W (7, 3, 3·7): the guesses of the three sub-steps of step k (k ≥ 6) as one linear
    combination of the ring buffer H[(k − lag) % 7, sub] — the quartic extrapolation plus the
    error correction of _K0/_KJ written out in terms of the stored ω. ``joint``: all three
    guesses before any sub-step of step k is solved (the corrections of sub-steps 2 and 3 then
    extrapolate E1, E3 of step k − 1 to t_k + c_j h, like sub-step 1's)."""
    W = np.zeros((_LAGS, 3, _LAGS, 3))

    def add(kmod, j, lag, sub, c):
        W[kmod, j, (kmod - lag) % _LAGS, sub] += c

    for kmod in range(_LAGS):
        for j in range(3):
            for i, a in enumerate(_QUARTIC, 1):                   # P_j(k)
                add(kmod, j, i, j, a)

        def error(j, lag, sub, c):       # c · E_sub(k − lag) = c (ω_sub(k−lag) − P_sub(k−lag))
            add(kmod, j, lag, sub, c)
            for i, a in enumerate(_QUARTIC, 1):
                add(kmod, j, lag + i, sub, -c * a)

        for j in range(3) if joint else (0,):
            f = (_C[j] - _C[0] + 1.0) / (_C[0] - _C[2])
            error(j, 1, 0, 1.0 + f)
            error(j, 1, 2, -f)
        if not joint:
            for j in (1, 2):
                error(j, 0, 0, 1.0 + _KJ[j])
                error(j, 1, 0, -_KJ[j])
    return W.reshape(_LAGS, 3, _LAGS * 3)


# adj(A)_ij = A_{j+1,i+1} A_{j+2,i+2} − A_{j+1,i+2} A_{j+2,i+1} (indices mod 3), A flattened
_ADJ_IDX = np.array([[3 * ((j + 1) % 3) + (i + 1) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 2) % 3) + (i + 2) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 1) % 3) + (i + 2) % 3 for i in range(3) for j in range(3)],
                     [3 * ((j + 2) % 3) + (i + 1) % 3 for i in range(3) for j in range(3)]]).ravel()


def _inverse3(A9: np.ndarray) -> np.ndarray:
    """Inverses (..., 3, 3) of 3×3 matrices given flattened (..., 9): adjugate over determinant.
    Elementwise, so it scales with the batch (LAPACK's per-matrix call does not)."""
    p = np.take(A9, _ADJ_IDX, axis=-1).reshape(A9.shape[:-1] + (4, 9))
    adj = p[..., 0, :] * p[..., 1, :] - p[..., 2, :] * p[..., 3, :]
    det = np.einsum("...i,...i->...", A9[..., :3], adj[..., 0::3])
    return (adj / det[..., None]).reshape(A9.shape[:-1] + (3, 3))


_PREDICT = _predictor_weights()
_PREDICT_JOINT = _predictor_weights(joint=True)
_ONES3 = np.ones(3)
_CONJ = np.array([1.0, -1.0, -1.0, -1.0])


def _run_batch(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
               steps: int, fn: WrenchFunction | None, batch: tuple[int, ...], strict: bool):
    """B bodies on (B, k) arrays. Returns rec (n, B, 13) = (q, x, b^ω, P world), Newton and
    chord (none here) counts per body, solves, alive, last_good."""
    B = inertia.shape[0]
    J = np.ascontiguousarray(inertia[:, :3])
    J2 = 2.0 * J
    iJ = 1.0 / J
    m = inertia[:, 3]
    im = 1.0 / m
    DJ9 = np.zeros((B, 9))
    DJ9[:, [0, 4, 8]] = J
    hs = [g * dt for g in TRIPLE_JUMP]
    hhs = [0.5 * h for h in hs]
    MS = [_residual_jacobian_matrix(hh) for hh in hhs]
    QS = [_quaternion_step_matrix(hh) for hh in hhs]
    DEN = [np.array([hh * hh, hh * hh, hh * hh, 1.0]) for hh in hhs]    # [ω, 1]² ↦ 1 + |u|²
    cims = [h * im for h in hs]
    kcs = _accept_coefficients(J, hs)
    tol2 = (holonomic.NEWTON_TOL if strict else FAST_TOL) ** 2
    few = max(4, B // 16)            # stragglers finished on floats
    Jf = J.tolist()
    kcf = [kc.tolist() for kc in kcs]
    tolEf: list = []
    kicks = [0.5 * (hs[j] + hs[j + 1]) if j < 2 else 0.5 * hs[j] for j in range(3)]
    limits = np.concatenate([np.zeros((B, 7)), iJ, np.repeat(im[:, None], 3, 1)], axis=1)
    max_iter = holonomic.NEWTON_MAX_ITER
    rec = np.empty((steps + 1, B, 13))
    q = q0.copy()
    x = x0.copy()
    bw = J * xi0[:, :3]
    P = m[:, None] * quaternion_rotate(q, xi0[:, 3:])
    rec[0] = np.concatenate([q, x, bw, P], axis=1)
    prev = xi0.copy()
    H = np.zeros((_LAGS, 3, B * 3))     # ring buffer of the solved ω per sub-step
    Hf = H.reshape(_LAGS * 3, B * 3)
    w4 = np.ones((B, 4))       # [ω, 1]: the Newton unknowns, updated in place
    yJ = np.empty((B, 6))      # [Jω, J]
    yJ[:, 3:] = J
    alive = np.ones(B, dtype=bool)
    any_dead = False
    last_good = np.full(B, steps, dtype=int)
    n_newton = np.zeros(B)
    solves = 0
    n_nodes = steps + 1

    def weights(bw_):
        """Per-body weights Wn of the acceptance test Σ_i d_i² Wn_i ≤ 1 (module docstring):
        fast: kc D² ≤ tol² b^ωᵀJ⁻¹b^ω, D = δᵀJδ; strict: D ≤ tol² b^ωᵀJ⁻¹b^ω."""
        nonlocal tolEf
        tolE = tol2 * ((bw_ * bw_ * iJ) @ _ONES3)
        tolEf = tolE.tolist()
        with np.errstate(divide="ignore"):
            if strict:
                return [J / tolE[:, None]] * 3
            return [J * np.sqrt(kc / tolE)[:, None] for kc in kcs]

    def kick(k, kk, qn):
        nonlocal bw, P
        R = quaternion.to_matrix(qn)
        f = np.asarray(fn(k, R.reshape(batch + (3, 3)), x.reshape(batch + (3,)), prev.reshape(batch + (6,))),
                       dtype=float)
        f = np.broadcast_to(f, batch + (6,)).reshape(B, 6)
        bw = bw + kk * f[:, :3]
        P = P + kk * np.einsum("bij,bj->bi", R, f[:, 3:])

    def solve(b, j, Wn):
        """Newton from the guesses in w4[:, :3] (updated in place): converged, and the updates
        per body (passes over the whole batch, plus a straggler's own on floats).

        Full Newton updates only: a chord update costs a batch nearly as much (the LAPACK call
        dominates) and converges linearly. D = Σ d_i² Wn_i; accepted when D ≤ 1, i.e. the bound
        kc D² on the error left is below tol² b^ωᵀJ⁻¹b^ω (strict: the update itself is). Once at
        most ``few`` bodies are left they finish on floats (:func:`_newton_ln`), which costs a
        few µs per body against tens of µs for one more pass over the batch."""
        M = MS[j]
        w = w4[:, :3]
        done = None
        for it in range(max_iter):
            np.multiply(J, w, out=yJ[:, :3])
            out = (w4[:, :, None] * yJ[:, None, :]).reshape(B, 24) @ M
            d = np.linalg.solve((out[:, 3:] + DJ9).reshape(B, 3, 3), (out[:, :3] - b)[:, :, None])[:, :, 0]
            w -= d       # (a converged body's further updates are below round-off)
            Dn = (d * d * Wn) @ _ONES3
            if it == 0:
                if Dn.max() <= 1.0:      # every body at once (NaN fails)
                    return np.ones(B, dtype=bool), 1.0
                done = Dn <= 1.0
            else:
                done |= Dn <= 1.0
            left = np.flatnonzero(~done)
            if len(left) <= few:
                nn = np.full(B, it + 1.0)
                for i in left.tolist():
                    w1, w2, w3, a, c, conv = _newton_ln(*w[i].tolist(), *b[i].tolist(), *Jf[i], hhs[j],
                                                        kcf[j][i], tolEf[i], strict)
                    w[i] = (w1, w2, w3)
                    nn[i] += a + c
                    done[i] = conv == 1.0
                return done, nn
        return done, float(max_iter)

    Wns = weights(bw)
    with np.errstate(all="ignore"):
        for k in range(steps):
            if fn is not None:
                kick(k, 0.5 * hs[0], q)
            ok = alive.copy() if any_dead else None
            kmod = k % _LAGS
            for j in (0, 1, 2):
                if any_dead:
                    bw = np.where(ok[:, None], bw, 0.0)
                if fn is not None or any_dead:    # b^ωᵀJ⁻¹b^ω is constant for a free body
                    Wns = weights(bw)
                w = w4[:, :3]
                if k >= 6:
                    w[...] = (_PREDICT[kmod, j] @ Hf).reshape(B, 3)
                elif k:
                    w[...] = sum(c * H[i % _LAGS, j]
                                 for i, c in enumerate(_EXTRAP[min(k, 5)], k - min(k, 5))).reshape(B, 3)
                else:
                    w[...] = bw * iJ
                if any_dead:
                    w[~ok] = 0.0
                done, nn = solve(bw, j, Wns[j])
                if not done.all():
                    if k:                # restart the failed bodies from J⁻¹b^ω
                        w_first = w.copy()
                        w[...] = bw * iJ
                        done2, nn2 = solve(bw, j, Wns[j])
                        w[done] = w_first[done]
                        nn = nn + np.where(done, 0, nn2)
                        done = done | done2
                    for i in np.flatnonzero(~done & (ok if ok is not None else alive)).tolist():
                        r = _newton_ln_continued(*bw[i].tolist(), *Jf[i], hhs[j], kcf[j][i], tolEf[i], strict)
                        if r[5] == 1.0:        # continuation in h from J⁻¹b^ω
                            w[i] = r[:3]
                            done[i] = True
                            nn = nn + np.zeros(B)
                            nn[i] += r[3] + r[4]
                    if not done.all():
                        ok = (alive.copy() if ok is None else ok) & done
                        any_dead = True
                        w[~ok] = 0.0
                solves += 1
                n_newton += np.where(alive, nn, 0.0) if any_dead else nn
                w = w.copy()
                H[kmod, j] = w.ravel()
                if fn is not None:   # body p = (I + û)⁻¹ R_kᵀP for ξ_prev, before q moves
                    u = hhs[j] * w
                    qn = q / np.sqrt(np.einsum("bi,bi->b", q, q))[:, None]
                    bv = quaternion_rotate(qn * _CONJ, P)
                    pv = (bv - np.cross(u, bv) + u * np.einsum("bi,bi->b", u, bv)[:, None]) \
                        / (1.0 + np.einsum("bi,bi->b", u, u))[:, None]
                    prev = np.concatenate([w, pv * im[:, None]], axis=1)
                # μ⁺_ω = 2Jω − b^ω;  x += (h/m) P/(1 + |u|²);  q ← q ⊗ (1, u)
                bw = J2 * w - bw
                x = x + (cims[j] / ((w4 * w4) @ DEN[j]))[:, None] * P
                q = q + (q[:, :, None] * w[:, None, :]).reshape(B, 12) @ QS[j]
                if fn is not None:
                    qn = q / np.sqrt(np.einsum("bi,bi->b", q, q))[:, None]
                    kick(k, kicks[j], qn)
            q = q / np.sqrt((q * q) @ np.ones(4))[:, None]
            row = rec[k + 1]
            row[...] = np.concatenate([q, x, bw, P], axis=1)
            # finite (0·inf and 0·nan are nan) and node |ω|, |v| (1-norms) within XI_LIMIT
            if any_dead or not np.abs(row * limits).max() < holonomic.XI_LIMIT / 3:
                good = np.einsum("bi,bi->b", np.abs(row), limits) < holonomic.XI_LIMIT
                ok = (alive.copy() if ok is None else ok) & good
                newly = alive & ~ok
                if newly.any():
                    any_dead = True
                    last_good[newly] = k
                    alive &= ok
                    if not alive.any():
                        n_nodes = k + 1
                        break
                row[~alive] = rec[k][~alive]   # frozen at the last good node
                q, x, bw, P = row[:, :4].copy(), row[:, 4:7].copy(), row[:, 7:10].copy(), row[:, 10:].copy()
    return rec[:n_nodes], n_newton, np.zeros(B), solves, alive, last_good


def _run_joint(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
               steps: int, strict: bool):
    """A batch of free bodies (no wrench): the three sub-steps of a step solved as one system.

    Without a wrench the momenta entering the sub-steps are linear in the solved ω:
    b₂ = 2Jω₁ − b₁, b₃ = 2Jω₂ − b₂ (μ⁺ = 2Jω − b), so (G₁(ω₁), G₂(ω₂; ω₁), G₃(ω₃; ω₁, ω₂)) = 0
    is one system of 9 unknowns whose Jacobian is block lower-triangular,

        [[A₁, 0, 0], [−2J, A₂, 0], [2J, −2J, A₃]],   A_j = J + (h_j/2)(ω̂_jJ − (Jω_j)^),

    and Newton on it needs one pass of numpy calls per iteration for all three sub-steps
    (residuals and blocks of the three in one matmul, then d₁ = A₁⁻¹F₁, d₂ = A₂⁻¹(F₂ + 2J d₁),
    d₃ = A₃⁻¹(F₃ + 2J(d₂ − d₁))). The residual after an update is exactly Q_j(d_j) per sub-step
    (the coupling is linear), so the acceptance test is the sub-steps' own. Bodies still open
    after a pass or two finish on floats, sub-step after sub-step (:func:`_newton_ln`).
    The translation needs no solve: x_{k+1} = x_k + Σ_j (h_j/m) P/(1 + |u_j|²).
    Returns what :func:`_run_batch` returns."""
    B = inertia.shape[0]
    J = np.ascontiguousarray(inertia[:, :3])
    J2 = 2.0 * J
    iJ = 1.0 / J
    m = inertia[:, 3]
    im = 1.0 / m
    DJ9 = np.zeros((B, 9))
    DJ9[:, [0, 4, 8]] = J
    hs = [g * dt for g in TRIPLE_JUMP]
    hhs = [0.5 * h for h in hs]
    M3 = np.stack([_residual_jacobian_matrix(hh) for hh in hhs])        # (3, 24, 12)
    QS = [_quaternion_step_matrix(hh) for hh in hhs]
    DEN3 = np.array([[hh * hh, hh * hh, hh * hh, 1.0] for hh in hhs])[:, :, None]   # (3, 4, 1)
    CIM3 = np.stack([h * im for h in hs])                                 # (3, B)
    kcs = _accept_coefficients(J, hs)
    tol2 = (holonomic.NEWTON_TOL if strict else FAST_TOL) ** 2
    few = max(4, B // 16)
    passes = 3                        # joint passes before every open body goes to floats
    limits = np.concatenate([np.zeros((B, 7)), iJ, np.repeat(im[:, None], 3, 1)], axis=1)
    rec = np.empty((steps + 1, B, 13))
    q = q0.copy()
    x = x0.copy()
    bw = J * xi0[:, :3]
    P = m[:, None] * quaternion_rotate(q, xi0[:, 3:])
    rec[0] = np.concatenate([q, x, bw, P], axis=1)
    H = np.zeros((_LAGS, 3, B * 3))
    Hf = H.reshape(_LAGS * 3, B * 3)
    W4 = np.ones((3, B, 4))           # [ω_j, 1] per sub-step
    W = W4[..., :3]
    YJ = np.empty((3, B, 6))          # [Jω_j, J]
    YJ[..., 3:] = J
    Fb = np.empty((3, B, 3))          # b₁, b₂, b₃
    Dd = np.empty((3, B, 3))          # the updates
    Jf = J.tolist()
    kcf = [kc.tolist() for kc in kcs]
    alive = np.ones(B, dtype=bool)
    last_good = np.full(B, steps, dtype=int)
    n_newton = np.zeros(B)
    n_nodes = steps + 1

    def tolerances(b1):
        """tol² b^ωᵀJ⁻¹b^ω per body (the same for the three sub-steps of a free body) and the
        weights Wn (3, B, 3) of the test Σ_i d_i² Wn_i ≤ 1 (see :func:`_run_batch`)."""
        tolE = tol2 * ((b1 * b1 * iJ) @ _ONES3)
        with np.errstate(divide="ignore"):
            if strict:
                Wn = np.broadcast_to(J / tolE[:, None], (3, B, 3))
            else:
                Wn = np.stack([J * np.sqrt(kc / tolE)[:, None] for kc in kcs])
        return tolE.tolist(), np.where(tolE[:, None] > 0.0, Wn, 0.0)   # b = 0 (frozen): ω = 0 at once

    def on_floats(i, j0, tolEf):
        """Body i's sub-steps j0, j0 + 1, … on floats, from the current ω (then J⁻¹b, then
        continuation in h); the earlier ones, converged, only pass their momentum on."""
        b = bw[i].tolist()
        Ji = Jf[i]
        for j in range(j0):
            b = [2.0 * Ji[c] * W[j, i, c] - b[c] for c in range(3)]
        count = 0
        for j in range(j0, 3):
            r = _newton_ln(*W[j, i].tolist(), *b, *Ji, hhs[j], kcf[j][i], tolEf[i], strict)
            count += r[3] + r[4]
            if r[5] != 1.0:
                r = _newton_ln(b[0] / Ji[0], b[1] / Ji[1], b[2] / Ji[2], *b, *Ji, hhs[j], kcf[j][i], tolEf[i],
                               strict)
                count += r[3] + r[4]
                if r[5] != 1.0:
                    r = _newton_ln_continued(*b, *Ji, hhs[j], kcf[j][i], tolEf[i], strict)
                    count += r[3] + r[4]
                    if r[5] != 1.0:
                        return False, count
            W[j, i] = r[:3]
            b = [2.0 * Ji[c] * r[c] - b[c] for c in range(3)]
        return True, count

    tolEf, Wn = tolerances(bw)
    with np.errstate(all="ignore"):
        for k in range(steps):
            kmod = k % _LAGS
            if k >= 6:
                W[...] = (_PREDICT_JOINT[kmod] @ Hf).reshape(3, B, 3)
            elif k:
                n = min(k, 5)
                W[...] = sum(c * H[i % _LAGS] for i, c in enumerate(_EXTRAP[n], k - n)).reshape(3, B, 3)
            else:
                W[...] = bw * iJ
            ok = alive.copy()
            if not alive.all():
                W[:, ~alive] = 0.0
            loops = 0
            for it in range(passes):
                loops += 1
                np.multiply(J, W, out=YJ[..., :3])
                out = (W4[..., :, None] * YJ[..., None, :]).reshape(3, B, 24) @ M3
                Fb[0] = bw
                np.subtract(J2 * W[0], bw, out=Fb[1])
                np.subtract(J2 * W[1], Fb[1], out=Fb[2])
                F = (out[..., :3] - Fb)[..., None]
                A9 = out[..., 3:] + DJ9
                if B <= JOINT_MAX_BATCH:   # LAPACK per block row: the cheapest calls for small batches
                    A = A9.reshape(3, B, 3, 3)
                    Dd[0] = np.linalg.solve(A[0], F[0])[..., 0]
                    Dd[1] = np.linalg.solve(A[1], F[1] + (J2 * Dd[0])[..., None])[..., 0]
                    Dd[2] = np.linalg.solve(A[2], F[2] + (J2 * (Dd[1] - Dd[0]))[..., None])[..., 0]
                else:             # elementwise adjugate inverses: scale with the batch
                    Ai = _inverse3(A9)
                    Z = np.einsum("sbij,sbj->sbi", Ai, F[..., 0])
                    Dd[0] = Z[0]
                    Dd[1] = Z[1] + np.einsum("bij,bj->bi", Ai[1], J2 * Dd[0])
                    Dd[2] = Z[2] + np.einsum("bij,bj->bi", Ai[2], J2 * (Dd[1] - Dd[0]))
                W -= Dd
                Dn = (Dd * Dd * Wn) @ _ONES3                   # (3, B)
                if Dn.max() <= 1.0:                             # NaN fails
                    left = []
                    break
                open_ = ~(Dn <= 1.0)
                left = np.flatnonzero(open_.any(0)).tolist()
                if len(left) <= few:
                    break
            n_newton += 3 * loops        # one update of each sub-step per pass
            for i in left:     # stragglers, and all open bodies after `passes` passes
                if not alive[i]:
                    continue
                good, count = on_floats(i, int(np.argmax(open_[:, i])), tolEf)
                n_newton[i] += count
                if not good:
                    ok[i] = False
                    W[:, i] = 0.0
            H[kmod] = W.reshape(3, B * 3)
            # translation Σ_j (h_j/m) P/(1 + |u_j|²); node momentum μ⁺ = 2J(ω₃ − ω₂ + ω₁) − b₁
            x = x + ((CIM3 / ((W4 * W4) @ DEN3)[..., 0]).sum(0))[:, None] * P
            bw = J2 * (W[2] - W[1] + W[0]) - bw
            for j in range(3):
                q = q + (q[:, :, None] * W[j][:, None, :]).reshape(B, 12) @ QS[j]
            q = q / np.sqrt((q * q) @ np.ones(4))[:, None]
            row = rec[k + 1]
            row[...] = np.concatenate([q, x, bw, P], axis=1)
            if not (ok.all() and np.abs(row * limits).max() < holonomic.XI_LIMIT / 3):
                good = np.einsum("bi,bi->b", np.abs(row), limits) < holonomic.XI_LIMIT
                ok &= good
                newly = alive & ~ok
                if newly.any():
                    last_good[newly] = k
                    alive &= ok
                    if not alive.any():
                        n_nodes = k + 1
                        break
                row[~alive] = rec[k][~alive]   # frozen at the last good node
                q, x, bw, P = row[:, :4].copy(), row[:, 4:7].copy(), row[:, 7:10].copy(), row[:, 10:].copy()
                bw[~alive] = 0.0               # a frozen body solves b = 0, ω = 0
                tolEf, Wn = tolerances(bw)
    return rec[:n_nodes], n_newton, np.zeros(B), 3 * (n_nodes - 1), alive, last_good


def quaternion_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v = v + 2 q_w (q_v × v) + 2 q_v × (q_v × v) for unit q (..., 4), v (..., 3)."""
    qv = q[..., 1:]
    c = np.cross(qv, v)
    return v + 2.0 * (q[..., :1] * c + np.cross(qv, c))


def _assemble(rec: np.ndarray, inertia: np.ndarray, xi0: np.ndarray, batch: tuple[int, ...], dt: float,
              stats: dict) -> Trajectory:
    """Trajectory from rec (n, B, 13) = (unit q, x, b^ω, P world): body m^v = R(q)ᵀP,
    L = R(q) b^ω + x × P (spatial momentum about the world origin)."""
    n = rec.shape[0]
    q, x, bw, P = rec[..., :4], rec[..., 4:7], rec[..., 7:10], rec[..., 10:]
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    mv = quaternion_rotate(conj, P)
    L = quaternion_rotate(q, bw) + np.cross(x, P)
    w = bw / inertia[:, :3]
    v = mv / inertia[:, 3:]
    w[0], v[0] = xi0[:, :3], xi0[:, 3:]   # node 0 carries the given initial velocity exactly
    shape = (n,) + batch
    return Trajectory(time=dt * np.arange(n), position=x.reshape(shape + (3,)),
                      orientation=q.reshape(shape + (4,)), angular_velocity=w.reshape(shape + (3,)),
                      linear_velocity=v.reshape(shape + (3,)), momentum_angular=L.reshape(shape + (3,)),
                      momentum_linear=P.reshape(shape + (3,)), stats=stats, vehicle="rigid_body")


def integrate_cay4(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
                   wrench: WrenchSpec = None, *, fast: bool = True, strict: bool = False,
                   joint: bool | None = None) -> Trajectory:
    """vi-cay4: the triple-jump composition of the vi-cay-ln step (order 4, spatial momentum and,
    with M = m I₃, node kinetic energy exact).

    Same interface, batching, outputs and blow-up handling as :func:`.holonomic.integrate`.
    With M = m I₃ the fused kernels above run (plain floats for one body, (B, 3) arrays for a
    batch); ``fast=False`` or an anisotropic M runs the generic 6×6 path of
    :func:`.holonomic.integrate` with ``substeps=TRIPLE_JUMP``. ``strict`` replaces the
    accept-after-update Newton termination by full Newton to |δ| ≤ NEWTON_TOL. ``joint``: solve
    a free batch's three sub-steps as one system (default: for batches of at most
    ``JOINT_MAX_BATCH`` bodies, where it saves numpy calls; larger batches are dominated by the
    per-matrix LAPACK work, where sub-step after sub-step is cheaper). Stats:
    ``newton_iterations_mean`` = Newton + chord updates per solve (three solves per step),
    ``chord_iterations_mean`` the chord share.
    """
    t0 = time.perf_counter()
    setup = holonomic.prepare(system, initial, dt, steps, wrench)
    batch, inertia, R0, x0, xi0, fn = (setup[k] for k in ("batch", "inertia", "R0", "x0", "xi0", "fn"))
    if not (fast and holonomic.isotropic_mass(inertia)):
        return holonomic.integrate(system, initial, dt, steps, KERNEL, wrench, fast=False,
                                   substeps=TRIPLE_JUMP, name="vi-cay4")
    dt, steps = float(dt), int(steps)
    q0 = quaternion.from_matrix(R0)
    if batch == ():
        rows, nn, nc, solves, blew = _run_scalar(inertia[0], q0[0], x0[0], xi0[0], dt, steps, fn, strict)
        rec = rows[:, None, :]
        n_newton, n_chord = np.array([float(nn)]), np.array([float(nc)])
        alive = np.array([not blew])
        last_good = np.array([len(rows) - 1 if blew else steps])
        path = "scalar"
    elif fn is None and (joint if joint is not None else inertia.shape[0] <= JOINT_MAX_BATCH):
        rec, n_newton, n_chord, solves, alive, last_good = _run_joint(inertia, q0, x0, xi0, dt, steps, strict)
        path = "batch"
    else:
        rec, n_newton, n_chord, solves, alive, last_good = _run_batch(inertia, q0, x0, xi0, dt, steps, fn,
                                                                      batch, strict)
        path = "batch"
    stats = {"method": "vi-cay4", "steps": steps, "dt": dt, "blew_up": bool(not alive.all()), "path": path,
             "kernel": KERNEL,
             "newton_iterations_mean": float(np.mean(n_newton + n_chord)) / solves if solves else 0.0,
             "chord_iterations_mean": float(np.mean(n_chord)) / solves if solves else 0.0}
    if batch:
        stats["blew_up_per_body"] = (~alive).reshape(batch).tolist()
        stats["last_good_node"] = last_good.reshape(batch).tolist()
    else:
        stats["last_good_node"] = int(last_good[0])
    traj = _assemble(rec, inertia, xi0, batch, dt, stats)
    traj.stats["wall_time_s"] = time.perf_counter() - t0
    return traj


__all__ = ["GAMMA1", "GAMMA2", "TRIPLE_JUMP", "KERNEL", "FAST_TOL", "integrate_cay4", "quaternion_rotate"]
