"""The generic driver: any pairing, any diagonal 𝕀, Newton on the six unknowns of eq. (10).

Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation and control of vehicles",
eqs. 9–10 in momentum form (docs/equations.md, "Holonomic variational integrator"), batched numpy
over (B,) bodies with the analytic Jacobian C(hξ)ᵀ𝕀 + h ∂_η[C(η)ᵀμ] of :mod:`.pairings`. It is the
path of vi-exp-series (no reduced kernel), of an anisotropic M, of ``fast=False`` (the benchmark
baseline), and of vi-cay4 there (the vi-cay-ln step composed with ``substeps=TRIPLE_JUMP``).
Newton starts from a quadratic extrapolation of the last three ξ of the same sub-step and
stops on the plain tests (update below ``NEWTON_TOL`` in the energy norm, or the
quadratic-convergence estimate).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..common import WrenchFunction
from .newton import NEWTON_MAX_ITER, NEWTON_TOL
from .pairings import Pairing
from .runs import XI_LIMIT, RunTally, batch_wrench, substeps_of


def solve_batched(A: np.ndarray, b: np.ndarray) -> np.ndarray:
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


def run_generic(pairing: Pairing, inertia: np.ndarray, R0: np.ndarray, x0: np.ndarray,
                xi0: np.ndarray, dt: float, steps: int, subs: Sequence[float],
                fn: WrenchFunction | None, batch: tuple[int, ...]):
    """Any pairing, any diagonal 𝕀: Newton on 6 unknowns, batched over (B,). Returns the node
    rotations (n, B, 3, 3), positions (n, B, 3), momenta (n, B, 6) and the :class:`.runs.RunTally`."""
    B = R0.shape[0]
    R_rec = np.empty((steps + 1, B, 3, 3))
    x_rec = np.empty((steps + 1, B, 3))
    m_rec = np.empty((steps + 1, B, 6))
    R_rec[0], x_rec[0], m_rec[0] = R0, x0, inertia * xi0
    R, x, mom = R0.copy(), x0.copy(), inertia * xi0
    prev = xi0.copy()
    hs, kicks = substeps_of(dt, subs)
    ns = len(hs)
    hist: list[list] = [[] for _ in hs]
    tol2 = NEWTON_TOL * NEWTON_TOL
    tally = RunTally(B, steps)
    alive = tally.alive             # updated in place by tally.retire

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
            d = solve_batched(Jac, np.where(np.isfinite(F), F, 0.0))
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
            b = mom + 0.5 * hs[0] * batch_wrench(fn, k, R, x, prev, batch) if fn is not None else mom
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
                tally.solves += 1
                tally.updates += np.where(alive, np.minimum(it_at, NEWTON_MAX_ITER), 0)
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
                    mu_plus = mu_plus + kicks[j] * batch_wrench(fn, k, R, x, prev, batch)
                b = mu_plus
                dead = ~ok
            ok &= np.isfinite(b).all(-1) & np.isfinite(x).all(-1) & np.isfinite(R).all(axis=(-1, -2))
            if tally.retire(ok, k):
                break
            R = np.where(alive[:, None, None], R, R_rec[k])
            x = np.where(alive[:, None], x, x_rec[k])
            mom = np.where(alive[:, None], b, m_rec[k])
            R_rec[k + 1], x_rec[k + 1], m_rec[k + 1] = R, x, mom
    n = tally.n_nodes
    return R_rec[:n], x_rec[:n], m_rec[:n], tally
