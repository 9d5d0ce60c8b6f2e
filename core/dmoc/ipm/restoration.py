"""Feasibility restoration of the interior point (Wächter & Biegler 2006, §3.3), entered when the filter line
search finds no acceptable step: Levenberg–Marquardt steps on the violation inside the bounds.

Its barrier parameter μ_r starts at max(μ, |r|∞), IPOPT's resto_mu: far from feasibility the barrier keeps x
central while the violation falls, instead of letting the points that sit near bounds at a small main-loop μ
cut every step short. It falls (WB06 eq. 7's rule) whenever the merit is stationary to κ_ε μ_r, down to
``MU_R_MIN``: a large μ_r would hold x off the bounds that keep the violation up (a helicopter whose
collective bounds contradict hovering). When the violation stops falling at a small μ_r (``STALL_*``), the
restoration ends: infeasible when some scaled row is still far from zero, else stalled near a feasible point
(which ``[solver] method = "auto"`` hands to trust-constr).
"""
from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from .barrier import KAPPA_EPS, monotone_decrease
from .bounds import fraction_to_boundary, gap_function
from .kkt import KKTSystem
from .line_search import Filter
from .scaled import ScaledProgram

MU_R_MIN = 1e-9
# once μ_r ≤ STALL_MU, a violation whose least |r|₂ falls less than STALL_DROP (relative) over STALL_WINDOW
# accepted steps at one μ_r has stopped: at a local minimum (infeasible) when some scaled row is still off by
# more than STALL_FLOOR, else the restoration has stalled near a feasible point
STALL_MU, STALL_WINDOW, STALL_DROP, STALL_FLOOR = 1e-4, 20, 1e-3, 1e-2
REDUCTION = 0.9           # the restoration ends once θ has fallen to this × θ at its start
MAX_BACKTRACKS = 20


class Restored(NamedTuple):
    """How the restoration ended: "ok" (``w``: the restored point, slacks included), "infeasible"
    (``violation``: |r|₁ where it stopped), "stalled" or "time_limit"."""
    status: str
    w: np.ndarray | None = None
    violation: float = math.nan


class Restoration:
    """The restoration phase from the point w (violation θ, main-loop barrier parameter μ) in x:
    Levenberg–Marquardt steps on ½|r(x)|² + ζ/2 |x − x_r|² − μ_r Σ log(bound gaps of x),
    r = (c_E − t_E, the violation of the I rows), each the KKT system with W = 0,
    Dx = ζ + λ_LM + μ_r/gap², dc = 1 on the rows in r (a huge dc removes a satisfied inequality row); the
    fraction-to-boundary rule keeps x interior. The slacks are put back at the constraint values (pushed
    inside their bounds)."""

    def __init__(self, prog: ScaledProgram, kkt: KKTSystem, w: np.ndarray, theta: float, mu: float,
                 filter: Filter):
        self.prog, self.kkt, self.theta, self.mu, self.filter = prog, kkt, theta, mu, filter
        n = prog.n
        self.x_r = w[:n].copy()
        self.hasL, self.hasU = np.isfinite(prog.Lx), np.isfinite(prog.Ux)
        self.gap = gap_function(prog.Lx, prog.Ux)
        self.x = w[:n].copy()
        _, self.c = prog.evaluate(self.x)
        self.r = self.residual(self.c)
        self.mu_r = max(mu, 1e-8, float(np.max(np.abs(self.r), initial=0.0)))
        self.zeta = math.sqrt(self.mu_r) * 1e-2
        _, self.J = prog.gradients(self.x)
        self.lm = 1e-4             # the Levenberg–Marquardt parameter λ_LM
        self.least: list[float] = []   # the least |r|₂ up to every accepted step at this μ_r

    def run(self, deadline: float, verbose: bool = False, max_iter: int = 200) -> Restored:
        for k in range(max_iter):
            if time.perf_counter() > deadline:
                return Restored("time_limit")
            step = self._step()
            if isinstance(step, Restored):
                return step
            if step is None:   # no descent: a larger λ_LM
                self.lm *= 10.0
                if self.lm > 1e10:
                    return Restored("stalled")
                continue
            done = self._accept(k, *step, verbose)
            if done is not None:
                return done
        return Restored("stalled")

    def residual(self, c: np.ndarray) -> np.ndarray:
        """r: c_E − t_E, and on the I rows the distance of c_I from [Ls, Us]."""
        prog = self.prog
        r = np.zeros(prog.m)
        r[prog.E] = c[prog.E] - prog.t_E
        ci = c[prog.I]
        r[prog.I] = np.where(ci < prog.Ls, ci - prog.Ls, np.where(ci > prog.Us, ci - prog.Us, 0.0))
        return r

    def _merit(self, r: np.ndarray, x: np.ndarray) -> float:
        lo, hi = self.gap(x)
        hasL, hasU = self.hasL, self.hasU
        if np.any(lo[hasL] <= 0) or np.any(hi[hasU] <= 0):
            return np.inf
        return (0.5 * float(r @ r) + 0.5 * self.zeta * float((x - self.x_r) @ (x - self.x_r))
                - self.mu_r * (np.sum(np.log(lo[hasL])) + np.sum(np.log(hi[hasU]))))

    def _barrier_gradient(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """∇ of −μ_r Σ log(bound gaps) at the point with gaps (lo, hi)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.where(self.hasL, self.mu_r / lo, 0.0) + np.where(self.hasU, self.mu_r / hi, 0.0)

    def _slacks_for(self, c: np.ndarray) -> np.ndarray:
        prog = self.prog
        ci = np.clip(c[prog.I], prog.Ls, prog.Us)
        width = prog.Us - prog.Ls
        k = np.where(np.isfinite(width), np.minimum(1e-6, 0.01 * width), 1e-6)
        return np.clip(ci, prog.Ls + k, prog.Us - k)

    def _step(self):
        """A Levenberg–Marquardt step with backtracking on the merit: (α, x, c, r) of the new point, None when
        no α of the backtracking decreases the merit enough, Restored("stalled") when K cannot be factored."""
        prog, kkt, xc, r, mI = self.prog, self.kkt, self.x, self.r, self.prog.mI
        hasL, hasU, mu_r, zeta = self.hasL, self.hasU, self.mu_r, self.zeta
        lo, hi = self.gap(xc)
        with np.errstate(divide="ignore", invalid="ignore"):
            SB = np.where(hasL, mu_r / lo**2, 0.0) + np.where(hasU, mu_r / hi**2, 0.0)
        gB = self._barrier_gradient(lo, hi)
        active = r != 0
        active[prog.E] = True
        dc = np.where(active, 1.0, 1e20)
        rx = zeta * (xc - self.x_r) + gB
        if kkt.factor(None, self.J.v, SB + zeta + self.lm, np.full(mI, 1e20), dc) != kkt.m:
            return Restored("stalled")
        dx, _, _, _ = kkt.solve(rx, np.zeros(mI), r)
        alpha = min(fraction_to_boundary(lo[hasL], dx[hasL], 0.99), fraction_to_boundary(hi[hasU], -dx[hasU], 0.99))
        m0 = self._merit(r, xc)
        slope = float((self.J.T(r) + rx) @ dx)
        for _ in range(MAX_BACKTRACKS):
            xt = xc + alpha * dx
            _, ct = prog.evaluate(xt)
            rt = self.residual(ct)
            if self._merit(rt, xt) <= m0 + 1e-4 * alpha * min(slope, 0.0):
                return alpha, xt, ct, rt
            alpha *= 0.5
        return None

    def _accept(self, k: int, alpha: float, xc: np.ndarray, c: np.ndarray, r: np.ndarray,
                verbose: bool) -> Restored | None:
        """Move to the new point; how the restoration ends there, or None to go on."""
        prog = self.prog
        self.lm = max(self.lm / 3.0, 1e-10) if alpha > 0.5 else self.lm * 2.0
        self.x, self.c, self.r = xc, c, r
        wt = np.concatenate([xc, self._slacks_for(c)])
        th = float(np.sum(np.abs(prog.residual(c, wt[prog.n:]))))
        if verbose:
            print(f"      restoration {k}: theta {th:.3e} |r|1 {float(np.sum(np.abs(r))):.3e} alpha {alpha:.2e} "
                  f"lm {self.lm:.1e}")
        if th <= REDUCTION * self.theta:
            f_t, _ = prog.evaluate(xc)
            phi_t = prog.barrier(f_t, *prog.gap(wt), self.mu)
            if np.isfinite(phi_t) and not self.filter.blocks(th, phi_t):
                return Restored("ok", wt)
        _, self.J = prog.gradients(xc)
        return self._stopped_or_lower_mu(r)

    def _stopped_or_lower_mu(self, r: np.ndarray) -> Restored | None:
        """Infeasible at a stationary point of |r|² that is not feasible, or where |r| has stopped falling far from
        zero; stalled where it stopped near zero; else None, with μ_r lowered when the merit is stationary."""
        xc = self.x
        # stationarity of the violation: the gradient of ½|r|² (projected on the bounds) vanishes
        gv = self.J.T(r)
        lo, hi = self.gap(xc)
        proj = np.where((self.hasL & (lo < 1e-6) & (gv > 0)) | (self.hasU & (hi < 1e-6) & (gv < 0)), 0.0, gv)
        rn = float(np.sum(np.abs(r)))
        if rn > 1e-6 and float(np.max(np.abs(proj), initial=0.0)) <= 1e-8 * max(1.0, rn):
            return Restored("infeasible", violation=rn)
        # the merit stationary to κ_ε μ_r (as WB06 eq. 7 tests E_μ): a smaller μ_r
        if self.mu_r > MU_R_MIN:
            stationarity = gv + self.zeta * (xc - self.x_r) + self._barrier_gradient(lo, hi)
            if float(np.max(np.abs(stationarity), initial=0.0)) <= KAPPA_EPS * self.mu_r:
                self.mu_r = monotone_decrease(self.mu_r, MU_R_MIN)
                self.zeta = math.sqrt(self.mu_r) * 1e-2
                self.least.clear()
                return None
        if self.mu_r <= STALL_MU:
            least = self.least
            least.append(min(float(np.sqrt(r @ r)), least[-1] if least else math.inf))
            if len(least) > STALL_WINDOW and least[-1] >= (1.0 - STALL_DROP) * least[-STALL_WINDOW - 1]:
                return Restored("infeasible", violation=rn) if float(np.max(np.abs(r))) > STALL_FLOOR \
                    else Restored("stalled")
        return None


def restoration(prog: ScaledProgram, kkt: KKTSystem, w: np.ndarray, theta: float, mu: float, filter: Filter,
                deadline: float, verbose: bool = False, max_iter: int = 200) -> Restored:
    """Restore feasibility from w: "ok" once the main problem's θ has fallen to 0.9 θ and the point is
    acceptable to ``filter`` (φ_μ at the main loop's μ); see :class:`Restoration`."""
    return Restoration(prog, kkt, w, theta, mu, filter).run(deadline, verbose, max_iter)
