"""The drivers of the reduced kernels (M = m I₃): one body on Python floats, a batch on (B,)
component arrays; any pairing with a kernel and any composition of its step (``substeps``).

The scheme (Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation and control of
vehicles", eqs. 9–10 in momentum form; docs/equations.md, "Holonomic variational integrator"):

    solve  C_τ(h ξ)ᵀ 𝕀 ξ = m_k + (h/2) f_k        for ξ = ξ_k   (Newton, :mod:`.newton`)
    g_{k+1} = g_k τ(h ξ_k)                                       (eq. 9)
    m_{k+1} = C_τ(−h ξ_k)ᵀ 𝕀 ξ_k + (h/2) f_{k+1}

Each sub-step of a composition (fractions ``substeps`` of dt) is such a step of length h_j, with
the half kicks of :func:`.runs.substeps_of` between them. The orientation is carried as a unit
quaternion: the step rotation of τ(hξ) has the closed form (1, (h/2)ω)/√(1 + |h ω/2|²) for Cayley
and (cos(θ/2), sin(θ/2) a/θ) for exp, and a quaternion needs 4 numbers where R needs 9 (and no
conversion at output). Records: (n, 13) rows (q, x, m) for one body, (n, 13, B) for a batch.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...lie import quaternion
from ..common import WrenchFunction
from .kernels import Kernel
from .newton import (NEWTON_MAX_ITER, NEWTON_TOL, PREDICTOR_DEGREE, array_bound, extrapolate, newton_arrays,
                     newton_bound, newton_scalar)
from .runs import XI_LIMIT, RunTally, StepRows, batch_wrench, substeps_of, wrench_floats


def run_scalar(kernel: Kernel, inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray,
               xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
               fn: WrenchFunction | None):
    """One body in plain Python floats. Returns rows (n, 13) = (q, x, m) and the
    :class:`.runs.RunTally`."""
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
    hs, kicks = substeps_of(dt, subs)
    ns = len(hs)
    hist: list[tuple] = [() for _ in hs]   # the last PREDICTOR_DEGREE + 1 ω of each sub-step, newest last
    prev = (w1, w2, w3, v1, v2, v3)        # ξ_prev for the wrench
    tol2 = NEWTON_TOL * NEWTON_TOL
    iters = solves = 0
    blew = False
    try:
        for k in range(steps):
            if fn is not None:
                f = wrench_floats(fn, k, (qw, qx, qy, qz), (x1, x2, x3), prev)
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
                    g1, g2, g3 = extrapolate(hj)
                    kc = newton_bound(pv_max, h, Jmax, Jmin, im, g1, g2, g3, b1, b2, b3)
                    sol = newton_scalar(rj, res, g1, g2, g3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3,
                                        tolE, kc)
                if sol is None:     # explicit start 𝕀⁻¹b; also the retry after a failed extrapolation
                    if len(hj) >= 2:
                        iters += NEWTON_MAX_ITER   # the failed attempt counts
                    g1, g2, g3 = bw1 / J1, bw2 / J2, bw3 / J3
                    kc = newton_bound(pv_max, h, Jmax, Jmin, im, g1, g2, g3, b1, b2, b3)
                    sol = newton_scalar(rj, res, g1, g2, g3, J1, J2, J3, h, im,
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
                    f = wrench_floats(fn, k, (qw, qx, qy, qz), (x1, x2, x3), prev)
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
    rows = record.array()
    return rows, RunTally.of_single_body(blew, len(rows), steps, iters, solves)


def run_batch(kernel: Kernel, inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray,
              xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
              fn: WrenchFunction | None, batch: tuple[int, ...]):
    """B bodies: the same reduced kernel on (B,) component arrays.

    Per-op numpy overhead dominates at B ~ 1000, so the common path avoids masks; they are
    applied only once a body has failed. Returns rec (n, 13, B) = (q, x, m) and the
    :class:`.runs.RunTally`.
    """
    rj, res, finish, pv_max = kernel.rj_array, kernel.res_array, kernel.finish_array, kernel.pv_max
    B = q0.shape[0]
    I6 = np.ascontiguousarray(inertia.T)           # (6, B)
    J1, J2, J3, m = I6[0], I6[1], I6[2], I6[3]
    iJ = 1.0 / I6[:3]
    im = 1.0 / m
    bound_at = array_bound(pv_max, I6[:3].max(0), I6[:3].min(0), im)
    ilim6 = 1.0 / (XI_LIMIT * I6)
    rec = np.empty((steps + 1, 13, B))
    rec[0, :4] = q0.T
    rec[0, 4:7] = x0.T
    rec[0, 7:] = (inertia * xi0).T
    qw, qx, qy, qz = rec[0, :4].copy()
    x1, x2, x3 = rec[0, 4:7].copy()
    mom = rec[0, 7:].copy()
    prev = xi0.copy()
    hs, kicks = substeps_of(dt, subs)
    ns = len(hs)
    hist: list[list] = [[] for _ in hs]
    tol2 = NEWTON_TOL * NEWTON_TOL
    tally = RunTally(B, steps)
    alive = tally.alive             # updated in place by tally.retire

    def wrench_at(k):
        R = quaternion.to_matrix(np.stack([qw, qx, qy, qz], axis=-1))
        return batch_wrench(fn, k, R, np.stack([x1, x2, x3], axis=-1), prev, batch).T

    with np.errstate(all="ignore"):
        for k in range(steps):
            b = mom + 0.5 * hs[0] * wrench_at(k) if fn is not None else mom
            ok = alive.copy()
            for j in range(ns):
                h = hs[j]
                if tally.any_dead:
                    b = np.where(ok, b, 0.0)   # failed bodies solve a trivial system
                bb = b * b
                tolE = tol2 * ((bb[:3] * iJ).sum(0) + (bb[3] + bb[4] + bb[5]) * im)
                explicit = b[:3] * iJ
                hj = hist[j]
                # polynomial extrapolation of the last ω ((3, B) arrays, wrapped as 1-vectors)
                g = extrapolate([(v,) for v in hj])[0] if len(hj) >= 2 else explicit
                if tally.any_dead:
                    g = np.where(ok, g, 0.0)   # b = 0, ω = 0: converged at once
                bound = bound_at(h, bb)
                w, done, cnt = newton_arrays(rj, res, g, b, J1, J2, J3, h, im, tolE, bound(g))
                if g is not explicit and not done.all():
                    w2, done2, cnt2 = newton_arrays(rj, res, explicit, b, J1, J2, J3, h, im, tolE,
                                                    bound(explicit))
                    w = np.where(done, w, w2)
                    cnt = np.where(done, cnt, cnt + cnt2)
                    done = done | done2
                tally.solves += 1
                tally.updates += np.where(alive, cnt, 0.0) if tally.any_dead else cnt
                fin = finish(w[0], w[1], w[2], J1, J2, J3, h, im, b[3], b[4], b[5])
                if not done.all():     # Newton failed for some bodies: they stop here
                    ok &= done
                    tally.any_dead = True
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
            if tally.any_dead or not (mag.max() < 1.0 and math.isfinite(row[:7].sum())):
                ok &= np.isfinite(row).all(0) & (mag < 1.0).all(0)
                if tally.retire(ok, k):
                    break
                row[:, ~alive] = rec[k][:, ~alive]   # frozen at the last good node
            qw, qx, qy, qz = row[:4]        # views: the next step only reads them
            x1, x2, x3 = row[4:7]
            mom = row[7:]
    return rec[:tally.n_nodes], tally
