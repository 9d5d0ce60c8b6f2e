"""vi-cay4 for one body on Python floats: the triple jump of the vi-cay-ln step (:mod:`.triple_jump`).

World-frame linear momentum. With P = R_k b^v (the spatial linear momentum, kicks included) the
translation of τ is R_k (h/m)(I + û)p/(1 + |u|²) = (h/m) P/(1 + |u|²) and R_{k+1}μ⁺_v = P, so the
fast paths carry P instead of the body b^v: x_{k+1} = x_k + (h/m) P/(1 + |u|²), P unchanged by
the drift, P += (h/2) R F at a kick. The body momentum R_kᵀP is formed only for the output and
for a wrench function's ξ argument. With μ⁺_ω = 2Jω − b^ω (Kobilarov, Crane & Desbrun 2009,
eq. 10 with C = I − ½ ad; docs/equations.md, "Holonomic variational integrator") a sub-step needs no
kernel call besides the fused Newton solve (:func:`.newton.newton_ln`). With the guesses of
:mod:`.triple_jump` that makes a step about twice as fast as the vi-cay-ln step composed through
:func:`.reduced.run_scalar` (``substeps``).

Wrench: f(k, R, x, ξ_prev) (ξ_prev the last solved sub-step velocity) at each sub-node, applied as
half kicks around each sub-step (:func:`.runs.substeps_of`). With a wrench that depends on the
velocity the composed step is no longer symmetric and the order can drop to 2.
"""
from __future__ import annotations

import math

import numpy as np

from ...lie import quaternion
from ..common import WrenchFunction
from .newton import FAST_TOL, NEWTON_TOL, accept_coefficients, newton_ln, newton_ln_rescue
from .runs import XI_LIMIT, RunTally, StepRows, substeps_of, wrench_floats
from .triple_jump import EXTRAP, K0, KJ, TRIPLE_JUMP


def run_cay4_scalar(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
                    steps: int, fn: WrenchFunction | None, strict: bool):
    """Rows (n, 13) = (unit q, x, b^ω, P world) and the :class:`.runs.RunTally`."""
    J1, J2, J3, m = (float(c) for c in inertia[:4])
    iJ1, iJ2, iJ3, im = 1.0 / J1, 1.0 / J2, 1.0 / J3, 1.0 / m
    hs, kicks = substeps_of(dt, TRIPLE_JUMP)
    hhs = [0.5 * h for h in hs]
    cs = [h * im for h in hs]
    kcs = [float(c) for c in accept_coefficients(inertia[:3], hs)]
    tol2 = FAST_TOL * FAST_TOL
    tol2s = NEWTON_TOL * NEWTON_TOL
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
    record = StepRows((qw, qx, qy, qz, x1, x2, x3, bw1, bw2, bw3, P1, P2, P3), 13)
    hist: list[list] = [[], [], []]
    err: list = [None, None, None]    # last extrapolation errors E1, (unused), E3
    e1p = None                        # E1 of the step before
    prev = [w1, w2, w3, v1, v2, v3]
    n_newton = n_chord = solves = 0
    blew = False

    def kick(k, kk, qw, qx, qy, qz, x, prev, bw, P):
        """b^ω += kk τ, P += kk R F for f = fn(k, R, x, ξ_prev) (q normalised here)."""
        s = 1.0 / math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        f = wrench_floats(fn, k, (qw * s, qx * s, qy * s, qz * s), x, prev)
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
                            w1 = p1 + e1[0] + K0 * (e1[0] - e3[0])
                            w2 = p2 + e1[1] + K0 * (e1[1] - e3[1])
                            w3 = p3 + e1[2] + K0 * (e1[2] - e3[2])
                        else:
                            w1, w2, w3 = p1, p2, p3
                    elif e1 is not None and e1p is not None:
                        kj = KJ[j]
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
                    cf = EXTRAP[n]
                    w1 = sum(c * v[0] for c, v in zip(cf, hj))
                    w2 = sum(c * v[1] for c, v in zip(cf, hj))
                    w3 = sum(c * v[2] for c, v in zip(cf, hj))
                tolE = (tol2s if strict else tol2) * (bw1 * bw1 * iJ1 + bw2 * bw2 * iJ2 + bw3 * bw3 * iJ3)
                sol = newton_ln(w1, w2, w3, bw1, bw2, bw3, J1, J2, J3, hh, kcs[j], tolE, strict)
                if sol[5] == 0.0 and math.isfinite(bw1 + bw2 + bw3):   # from J⁻¹b^ω, then continuation
                    n_newton += sol[3]
                    n_chord += sol[4]
                    sol = newton_ln_rescue(bw1 * iJ1, bw2 * iJ2, bw3 * iJ3, bw1, bw2, bw3, J1, J2, J3, hh, kcs[j],
                                           tolE, strict)
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
            if not (abs(w1) + abs(w2) + abs(w3) < XI_LIMIT
                    and (abs(P1) + abs(P2) + abs(P3)) * im < XI_LIMIT
                    and math.isfinite(qw + qx + qy + qz + x1 + x2 + x3 + bw1 + bw2 + bw3)):
                raise FloatingPointError
            record.add((qw, qx, qy, qz, x1, x2, x3, bw1, bw2, bw3, P1, P2, P3))
    except (FloatingPointError, ZeroDivisionError, OverflowError, ValueError):
        blew = True
    rows = record.array()
    return rows, RunTally.of_single_body(blew, len(rows), steps, n_newton, solves, n_chord)
