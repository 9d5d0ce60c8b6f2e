"""vi-cay4 for a batch of bodies on (B, k) arrays: the triple jump of the vi-cay-ln step
(:mod:`.triple_jump`; Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation and
control of vehicles", eqs. 9–10 with C = I − ½ ad; Yoshida 1990; docs/equations.md, "Holonomic variational
integrator"), carrying the world-frame linear momentum P like :mod:`.cay4_floats`.

Paths. A batch with a wrench: :func:`run_cay4_batch`, sub-step after sub-step, one LAPACK call per
Newton update. A free batch of up to ``JOINT_MAX_BATCH`` bodies: :func:`run_cay4_joint`, the three
sub-steps as one block-triangular system (a pass of numpy calls updates all three). In both a Newton
pass covers every body, and once at most max(4, B/16) bodies are left they finish on floats
(:func:`.newton.newton_ln`), which is cheaper than another pass.
"""
from __future__ import annotations

import numpy as np

from ...lie import quaternion
from ..common import WrenchFunction
from .cay4_matrices import inverse3, quaternion_step_matrix, residual_jacobian_matrix
from .newton import (FAST_TOL, NEWTON_MAX_ITER, NEWTON_TOL, accept_coefficients, newton_ln, newton_ln_continued,
                     newton_ln_rescue)
from .outputs import quaternion_rotate
from .runs import XI_LIMIT, RunTally, batch_wrench, substeps_of
from .triple_jump import EXTRAP, LAGS, PREDICT, PREDICT_JOINT, TRIPLE_JUMP

JOINT_MAX_BATCH = 64          # free batches up to this size solve the three sub-steps jointly
_ONES3 = np.ones(3)
_CONJ = np.array([1.0, -1.0, -1.0, -1.0])


class _Start:
    """What both batch drivers set up alike: per-body constants, sub-step lengths, the Newton
    error-bound factors and tolerances, the blow-up limits, and the node record with node 0
    (rec (steps + 1, B, 13) = (q, x, b^ω, P world))."""

    def __init__(self, inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
                 steps: int, strict: bool):
        B = self.B = inertia.shape[0]
        J = self.J = np.ascontiguousarray(inertia[:, :3])
        self.J2 = 2.0 * J
        self.iJ = iJ = 1.0 / J
        m = inertia[:, 3]
        self.im = im = 1.0 / m
        self.DJ9 = np.zeros((B, 9))
        self.DJ9[:, [0, 4, 8]] = J
        hs, self.kicks = substeps_of(dt, TRIPLE_JUMP)
        self.hs = hs
        self.hhs = hhs = [0.5 * h for h in hs]
        self.QS = [quaternion_step_matrix(hh) for hh in hhs]
        self.kcs = kcs = accept_coefficients(J, hs)
        self.kcf = [kc.tolist() for kc in kcs]
        self.Jf = J.tolist()
        self.tol2 = (NEWTON_TOL if strict else FAST_TOL) ** 2
        self.few = max(4, B // 16)            # stragglers finished on floats
        self.limits = np.concatenate([np.zeros((B, 7)), iJ, np.repeat(im[:, None], 3, 1)], axis=1)
        self.rec = np.empty((steps + 1, B, 13))
        self.q = q0.copy()
        self.x = x0.copy()
        self.bw = J * xi0[:, :3]
        self.P = m[:, None] * quaternion_rotate(self.q, xi0[:, 3:])
        self.rec[0] = np.concatenate([self.q, self.x, self.bw, self.P], axis=1)
        self.H = np.zeros((LAGS, 3, B * 3))  # ring buffer of the solved ω per sub-step
        self.tally = RunTally(B, steps)


def run_cay4_batch(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
                   steps: int, fn: WrenchFunction | None, batch: tuple[int, ...], strict: bool):
    """B bodies on (B, k) arrays, sub-step after sub-step. Returns rec (n, B, 13) = (q, x, b^ω,
    P world) and the :class:`.runs.RunTally` (no chord updates here)."""
    st = _Start(inertia, q0, x0, xi0, dt, steps, strict)
    B, J, J2, iJ, im, DJ9, hs, hhs, QS = st.B, st.J, st.J2, st.iJ, st.im, st.DJ9, st.hs, st.hhs, st.QS
    kcs, kcf, Jf, tol2, few, limits, rec, H = st.kcs, st.kcf, st.Jf, st.tol2, st.few, st.limits, st.rec, st.H
    q, x, bw, P, tally, kicks = st.q, st.x, st.bw, st.P, st.tally, st.kicks
    alive = tally.alive             # updated in place by tally.retire
    MS = [residual_jacobian_matrix(hh) for hh in hhs]
    DEN = [np.array([hh * hh, hh * hh, hh * hh, 1.0]) for hh in hhs]    # [ω, 1]² ↦ 1 + |u|²
    cims = [h * im for h in hs]
    tolEf: list = []
    max_iter = NEWTON_MAX_ITER
    prev = xi0.copy()
    Hf = H.reshape(LAGS * 3, B * 3)
    w4 = np.ones((B, 4))       # [ω, 1]: the Newton unknowns, updated in place
    yJ = np.empty((B, 6))      # [Jω, J]
    yJ[:, 3:] = J

    def weights(bw_):
        """Per-body weights Wn of the acceptance test Σ_i d_i² Wn_i ≤ 1 (:mod:`.newton`):
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
        f = batch_wrench(fn, k, R, x, prev, batch)
        bw = bw + kk * f[:, :3]
        P = P + kk * np.einsum("bij,bj->bi", R, f[:, 3:])

    def solve(b, j, Wn):
        """Newton from the guesses in w4[:, :3] (updated in place): converged, and the updates
        per body (passes over the whole batch, plus a straggler's own on floats).

        Full Newton updates only: a chord update costs a batch nearly as much (the LAPACK call
        dominates) and converges linearly. D = Σ d_i² Wn_i; accepted when D ≤ 1, i.e. the bound
        kc D² on the error left is below tol² b^ωᵀJ⁻¹b^ω (strict: the update itself is). Once at
        most ``few`` bodies are left they finish on floats (:func:`.newton.newton_ln`), which costs a
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
                    w1, w2, w3, a, c, conv = newton_ln(*w[i].tolist(), *b[i].tolist(), *Jf[i], hhs[j],
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
            ok = alive.copy() if tally.any_dead else None
            kmod = k % LAGS
            for j in (0, 1, 2):
                if tally.any_dead:
                    bw = np.where(ok[:, None], bw, 0.0)
                if fn is not None or tally.any_dead:    # b^ωᵀJ⁻¹b^ω is constant for a free body
                    Wns = weights(bw)
                w = w4[:, :3]
                if k >= 6:
                    w[...] = (PREDICT[kmod, j] @ Hf).reshape(B, 3)
                elif k:
                    w[...] = sum(c * H[i % LAGS, j]
                                 for i, c in enumerate(EXTRAP[min(k, 5)], k - min(k, 5))).reshape(B, 3)
                else:
                    w[...] = bw * iJ
                if tally.any_dead:
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
                        r = newton_ln_continued(*bw[i].tolist(), *Jf[i], hhs[j], kcf[j][i], tolEf[i], strict)
                        if r[5] == 1.0:        # continuation in h from J⁻¹b^ω
                            w[i] = r[:3]
                            done[i] = True
                            nn = nn + np.zeros(B)
                            nn[i] += r[3] + r[4]
                    if not done.all():
                        ok = (alive.copy() if ok is None else ok) & done
                        tally.any_dead = True
                        w[~ok] = 0.0
                tally.solves += 1
                tally.updates += np.where(alive, nn, 0.0) if tally.any_dead else nn
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
            if tally.any_dead or not np.abs(row * limits).max() < XI_LIMIT / 3:
                good = np.einsum("bi,bi->b", np.abs(row), limits) < XI_LIMIT
                ok = (alive.copy() if ok is None else ok) & good
                if tally.retire(ok, k):
                    break
                row[~alive] = rec[k][~alive]   # frozen at the last good node
                q, x, bw, P = row[:, :4].copy(), row[:, 4:7].copy(), row[:, 7:10].copy(), row[:, 10:].copy()
    return rec[:tally.n_nodes], tally


def run_cay4_joint(inertia: np.ndarray, q0: np.ndarray, x0: np.ndarray, xi0: np.ndarray, dt: float,
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
    after a pass or two finish on floats, sub-step after sub-step (:func:`.newton.newton_ln`).
    The translation needs no solve: x_{k+1} = x_k + Σ_j (h_j/m) P/(1 + |u_j|²).
    Returns what :func:`run_cay4_batch` returns."""
    st = _Start(inertia, q0, x0, xi0, dt, steps, strict)
    B, J, J2, iJ, im, DJ9, hs, hhs, QS = st.B, st.J, st.J2, st.iJ, st.im, st.DJ9, st.hs, st.hhs, st.QS
    kcs, kcf, Jf, tol2, few, limits, rec, H = st.kcs, st.kcf, st.Jf, st.tol2, st.few, st.limits, st.rec, st.H
    q, x, bw, P, tally = st.q, st.x, st.bw, st.P, st.tally
    alive = tally.alive             # updated in place by tally.retire
    M3 = np.stack([residual_jacobian_matrix(hh) for hh in hhs])         # (3, 24, 12)
    DEN3 = np.array([[hh * hh, hh * hh, hh * hh, 1.0] for hh in hhs])[:, :, None]   # (3, 4, 1)
    CIM3 = np.stack([h * im for h in hs])                                 # (3, B)
    passes = 3                        # joint passes before every open body goes to floats
    Hf = H.reshape(LAGS * 3, B * 3)
    W4 = np.ones((3, B, 4))           # [ω_j, 1] per sub-step
    W = W4[..., :3]
    YJ = np.empty((3, B, 6))          # [Jω_j, J]
    YJ[..., 3:] = J
    Fb = np.empty((3, B, 3))          # b₁, b₂, b₃
    Dd = np.empty((3, B, 3))          # the updates

    def tolerances(b1):
        """tol² b^ωᵀJ⁻¹b^ω per body (the same for the three sub-steps of a free body) and the
        weights Wn (3, B, 3) of the test Σ_i d_i² Wn_i ≤ 1 (see :func:`run_cay4_batch`)."""
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
            r = newton_ln(*W[j, i].tolist(), *b, *Ji, hhs[j], kcf[j][i], tolEf[i], strict)
            count += r[3] + r[4]
            if r[5] != 1.0:
                r = newton_ln_rescue(b[0] / Ji[0], b[1] / Ji[1], b[2] / Ji[2], *b, *Ji, hhs[j], kcf[j][i],
                                     tolEf[i], strict)
                count += r[3] + r[4]
                if r[5] != 1.0:
                    return False, count
            W[j, i] = r[:3]
            b = [2.0 * Ji[c] * r[c] - b[c] for c in range(3)]
        return True, count

    tolEf, Wn = tolerances(bw)
    with np.errstate(all="ignore"):
        for k in range(steps):
            kmod = k % LAGS
            if k >= 6:
                W[...] = (PREDICT_JOINT[kmod] @ Hf).reshape(3, B, 3)
            elif k:
                n = min(k, 5)
                W[...] = sum(c * H[i % LAGS] for i, c in enumerate(EXTRAP[n], k - n)).reshape(3, B, 3)
            else:
                W[...] = bw * iJ
            ok = alive.copy()
            if not alive.all():
                W[:, ~alive] = 0.0
            loops = 0
            for _ in range(passes):
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
                    Ai = inverse3(A9)
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
            tally.updates += 3 * loops   # one update of each sub-step per pass
            for i in left:     # stragglers, and all open bodies after `passes` passes
                if not alive[i]:
                    continue
                good, count = on_floats(i, int(np.argmax(open_[:, i])), tolEf)
                tally.updates[i] += count
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
            if not (ok.all() and np.abs(row * limits).max() < XI_LIMIT / 3):
                ok &= np.einsum("bi,bi->b", np.abs(row), limits) < XI_LIMIT
                if tally.retire(ok, k):
                    break
                row[~alive] = rec[k][~alive]   # frozen at the last good node
                q, x, bw, P = row[:, :4].copy(), row[:, 4:7].copy(), row[:, 7:10].copy(), row[:, 10:].copy()
                bw[~alive] = 0.0               # a frozen body solves b = 0, ω = 0
                tolEf, Wn = tolerances(bw)
    tally.solves = 3 * (tally.n_nodes - 1)
    return rec[:tally.n_nodes], tally


__all__ = ["JOINT_MAX_BATCH", "run_cay4_batch", "run_cay4_joint"]
