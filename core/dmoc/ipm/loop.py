"""The interior point's iteration (Wächter & Biegler 2006, Algorithm A): an :class:`InteriorPoint` holds the
iterate and the method's state, and each :meth:`InteriorPoint.step` measures optimality, updates μ, factors
the Newton matrix with inertia correction, solves for the step and runs the filter line search (or the
restoration phase)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..problem import NLP
from .barrier import MU_MIN, BarrierParameter
from .bounds import bound_push
from .kkt import KKTSystem, correct_inertia
from .line_search import FilterLineSearch, Trial
from .optimality import Optimality, measure
from .restoration import restoration
from .scaled import Duals, ScaledProgram

KAPPA_SIGMA = 1e10        # bound-multiplier safeguard (WB06 eq. 16)
BOUND_PUSH = 1e-2         # a cold start's bound push (IPOPT's bound_push, bound_frac)
WARM_PUSH, WARM_MULT_PUSH = 1e-9, 1e-9   # a warm start's bound push and multiplier floor (IPOPT's warm_start_*)
MU_INIT = 0.1
BOUND_MULT_RESET = 1e3    # after a restoration, bound multipliers above this restart at 1 (IPOPT's default)


@dataclass
class IPMResult:
    z: np.ndarray
    status: str          # converged, iteration_limit, time_limit, stalled, numerical_failure, infeasible
    message: str
    iterations: int
    kkt_error: float
    factorizations: int = 0
    duals: Duals | None = None


@dataclass
class _Direction:
    """The Newton step (dw, dy, dzL, dzU), its barrier terms and right-hand side, and its step limits."""
    dw: np.ndarray
    dy: np.ndarray
    dzL: np.ndarray
    dzU: np.ndarray
    bL: np.ndarray
    bU: np.ndarray
    r_mu: np.ndarray
    tau: float
    a_max: float    # the primal fraction-to-the-boundary step
    a_z: float      # the bound multipliers' step


class InteriorPoint:
    """The method's state on one program: the iterate ``pt`` (a :class:`Point`) with the multipliers y (rows),
    zL, zU (bounds of (x, s)) and the derivatives ``grad``, ``J`` there; ``barrier`` (μ and its mode); the
    line search with its filter; the last inertia correction δ_w; the iteration count, the optimality error
    and, once :meth:`step` returns False, ``status`` and ``message``. See :func:`interior_point`."""

    def __init__(self, nlp: NLP, z0: np.ndarray, D: np.ndarray, Sc: np.ndarray, sf: float, tol: float,
                 constraint_tol: float, max_iter: int, deadline: float,
                 callback: Callable[[np.ndarray], None] | None, verbose: bool, mu_strategy: str,
                 warm: Duals | None):
        if mu_strategy not in ("adaptive", "monotone"):
            raise ValueError(f"mu_strategy must be 'adaptive' or 'monotone', got {mu_strategy!r}")
        self.prog = prog = ScaledProgram(nlp, D, Sc, sf)
        self.tol, self.constraint_tol, self.max_iter, self.deadline = tol, constraint_tol, max_iter, deadline
        self.callback, self.verbose = callback, verbose
        self.kkt = KKTSystem(prog.n, prog.m, prog.I, nlp.hess_pattern.rows, nlp.hess_pattern.cols,
                             nlp.jac_pattern.rows, nlp.jac_pattern.cols)
        self._start(z0, warm)
        theta0 = self.pt.theta
        hasL, hasU, lo, hi, nb = prog.hasL, prog.hasU, self.pt.lo, self.pt.hi, prog.nb
        mu = MU_INIT if warm is None else min(MU_INIT, max(warm.mu, MU_MIN))
        mu_max = min(1e5, 1e3 * (float(np.sum(lo[hasL] * self.zL[hasL]) + np.sum(hi[hasU] * self.zU[hasU])) / nb
                                 if nb else 1.0))
        self.barrier = BarrierParameter(mu, mu_strategy == "adaptive" and nb > 0, tol, mu_max)
        self.search = FilterLineSearch(prog, self.kkt, 1e4 * max(1.0, theta0), 1e-4 * max(1.0, theta0), mu)
        self.delta_w_last = 0.0
        self.it = 0
        self.kkt_error = np.inf
        self.status, self.message = "iteration_limit", f"iteration limit of {max_iter} reached"

    def _start(self, z0: np.ndarray, warm: Duals | None) -> None:
        """IPOPT's initial point: x pushed inside its bounds, the slacks at the pushed constraint values; bound
        multipliers 1 and least-squares y, or a warm start's multipliers (WB06 §3.6)."""
        prog = self.prog
        hasL, hasU = prog.hasL, prog.hasU
        k1 = WARM_PUSH if warm is not None else BOUND_PUSH
        x = bound_push(np.clip(z0 / prog.D, prog.Lx, prog.Ux), prog.Lx, prog.Ux, k1)
        f, c = prog.evaluate(x)
        s = bound_push(c[prog.I], prog.Ls, prog.Us, k1)
        w = np.concatenate([x, s])
        self.grad, self.J = prog.gradients(x)
        if warm is not None:
            self.zL = np.where(hasL, np.maximum(warm.z_lower / prog.b_unscale, WARM_MULT_PUSH), 0.0)
            self.zU = np.where(hasU, np.maximum(warm.z_upper / prog.b_unscale, WARM_MULT_PUSH), 0.0)
            self.y = warm.y / prog.y_unscale
        else:
            self.zL = np.where(hasL, 1.0, 0.0)
            self.zU = np.where(hasU, 1.0, 0.0)
            self.y = self._least_squares_multipliers()
        self.pt = prog.point(w, f, c)   # the bound gaps always the current w's: they move with w

    def _least_squares_multipliers(self) -> np.ndarray:
        """Least-squares y: min |∇f_w − z_L + z_U + J_wᵀ y| (IPOPT's initial estimate); 0 when it fails or is
        large."""
        prog, kkt, n, m = self.prog, self.kkt, self.prog.n, self.prog.m
        if m == 0:
            return np.zeros(0)
        r_x = self.grad - self.zL[:n] + self.zU[:n]
        r_s = -self.zL[n:] + self.zU[n:]
        if kkt.factor(None, self.J.v, np.ones(n), np.ones(prog.mI), np.zeros(m)) != m:
            return np.zeros(m)
        _, _, y_ls, rn = kkt.solve(r_x, r_s, np.zeros(m))
        if not np.all(np.isfinite(y_ls)) or rn > 1e-6 or np.max(np.abs(y_ls), initial=0.0) > 1e3:
            return np.zeros(m)
        return y_ls

    def run(self) -> IPMResult:
        while self.step():
            pass
        return self.result()

    def result(self) -> IPMResult:
        prog = self.prog
        return IPMResult(z=prog.D * self.pt.w[:prog.n], status=self.status, message=self.message,
                         iterations=self.it, kkt_error=self.kkt_error, factorizations=self.kkt.factorizations,
                         duals=prog.unscaled_duals(self.y, self.zL, self.zU, self.barrier.mu))

    def step(self) -> bool:
        """One iteration; False when the solve has ended (converged, a limit, or a failure: ``status``)."""
        opt = measure(self.prog, self.pt, self.grad, self.J, self.y, self.zL, self.zU)
        z = self.prog.D * self.pt.w[:self.prog.n]   # the unscaled iterate (read-only: callback and NLP share it)
        if self._finished(opt, z):
            return False
        if self.barrier.update(opt, self.prog.damp, self.prog.hasL, self.prog.hasU):
            self.search.filter.reset(self.barrier.mu)
        self.it += 1
        d = self._direction(opt, z)
        if d is None:
            return False
        trial = self.search.search(self.pt, self.grad, d.dw, d.r_mu, d.bL, d.bU, d.a_max, d.tau, self.barrier.mu)
        if trial is None:
            return self._restore()
        self._accept(trial, d, opt)
        return True

    def _finished(self, opt: Optimality, z: np.ndarray) -> bool:
        """Report the iterate and test the termination criteria (WB06 eq. 5 and the limits)."""
        self.kkt_error = opt.kkt
        if self.callback is not None:
            self.callback(z)
        if self.verbose:
            print(f"{self.it:4d} f {self.pt.f / self.prog.sf:.8e} viol {opt.viol:.2e} du {opt.dual_inf:.2e} "
                  f"kkt {opt.kkt:.2e} mu {self.barrier.mu:.1e} dw {self.delta_w_last:.1e} "
                  f"{'free' if self.barrier.free else 'fixed'}")
        if opt.kkt <= self.tol and self.prog.nlp.max_violation(z) <= self.constraint_tol:
            self.status, self.message = "converged", f"optimal: KKT error {opt.kkt:.2g} (scipy interior point)"
            return True
        if self.it >= self.max_iter:
            return True
        if time.perf_counter() > self.deadline:
            self.status, self.message = "time_limit", "time limit reached"
            return True
        return False

    def _direction(self, opt: Optimality, z: np.ndarray) -> _Direction | None:
        """The Newton step on the inertia-corrected matrix (WB06 eq. 11, §3.1); None (status set) when K cannot
        be factored with the right inertia or the step is not finite."""
        prog, kkt, pt, bar = self.prog, self.kkt, self.pt, self.barrier
        hasL, hasU, zL, zU = prog.hasL, prog.hasU, self.zL, self.zU
        hv = prog.hessian(z, self.y)
        with np.errstate(divide="ignore", invalid="ignore"):
            SigL = np.where(hasL, zL / pt.lo, 0.0)
            SigU = np.where(hasU, zU / pt.hi, 0.0)
        delta_w = correct_inertia(kkt, hv, self.J.v, SigL + SigU, bar.mu, self.delta_w_last)
        if delta_w is None:
            self.status, self.message = "numerical_failure", "could not factor the KKT matrix with the right inertia"
            return None
        self.delta_w_last = delta_w
        if bar.free:
            dw, dy = bar.free_step(prog, kkt, opt, pt, zL, zU, SigL, SigU)
            self.search.filter.reset(bar.mu)
        mu = bar.mu
        bL, bU, r_b = prog.barrier_terms(pt.lo, pt.hi, mu)
        r_mu = opt.r_0 + r_b
        if not bar.free:
            dw, dy = kkt.newton(r_mu, pt.g)
        dzL = np.where(hasL, bL - zL - SigL * dw, 0.0)
        dzU = np.where(hasU, bU - zU + SigU * dw, 0.0)
        tau = max(0.99, 1.0 - mu)
        if not (np.isfinite(dw).all() and np.isfinite(dy).all()):
            self.status, self.message = "numerical_failure", "the Newton step is not finite"
            return None
        return _Direction(dw, dy, dzL, dzU, bL, bU, r_mu, tau, prog.primal_step_limit(pt.lo, pt.hi, dw, tau),
                          prog.dual_step_limit(zL, zU, dzL, dzU, tau))

    def _accept(self, trial: Trial, d: _Direction, opt: Optimality) -> None:
        """Move to the accepted trial point; the bound multipliers kept within κ_Σ of μ/gap (WB06 eq. 16)."""
        prog, mu, alpha = self.prog, self.barrier.mu, trial.alpha
        if self.verbose:
            print(f"      alpha {alpha:.2e} a_max {d.a_max:.2e} a_z {d.a_z:.2e} trials {trial.trials} "
                  f"soc {trial.soc}{' f' if trial.f_type else ' h'}")
        self.pt = pt = trial.point
        self.y = self.y + alpha * d.dy
        zL = self.zL + d.a_z * d.dzL
        zU = self.zU + d.a_z * d.dzU
        self.barrier.accepted(opt.quality)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.zL = np.where(prog.hasL, np.clip(zL, mu / (KAPPA_SIGMA * pt.lo), KAPPA_SIGMA * mu / pt.lo), 0.0)
            self.zU = np.where(prog.hasU, np.clip(zU, mu / (KAPPA_SIGMA * pt.hi), KAPPA_SIGMA * mu / pt.hi), 0.0)
        self.grad, self.J = prog.gradients(pt.w[:prog.n])

    def _restore(self) -> bool:
        """The restoration phase from the current point; False (status set) when it fails. After it the
        constraint multipliers restart at 0 (IPOPT's default constr_mult_reset_threshold = 0)."""
        prog, theta = self.prog, self.pt.theta
        rest = restoration(prog, self.kkt, self.pt.w, theta, self.barrier.mu, self.search.filter, self.deadline,
                           self.verbose)
        if rest.status == "infeasible":
            self.status = "infeasible"
            self.message = ("infeasible (scipy interior point): the constraint violation stopped at a local "
                            f"minimum, scaled |g|₁ = {rest.violation:.3g}")
            return False
        if rest.status != "ok":
            self.status = "time_limit" if rest.status == "time_limit" else "stalled"
            self.message = ("time limit reached in the restoration phase" if self.status == "time_limit" else
                            "the line search cannot make progress and the restoration failed "
                            f"(scipy interior point); constraint violation {theta:.3g}")
            return False
        self.pt = pt = prog.evaluate_point(rest.w)
        if max(float(np.max(self.zL, initial=0.0)), float(np.max(self.zU, initial=0.0))) > BOUND_MULT_RESET:
            self.zL, self.zU = np.where(prog.hasL, 1.0, 0.0), np.where(prog.hasU, 1.0, 0.0)
        self.grad, self.J = prog.gradients(pt.w[:prog.n])
        self.barrier.restored()
        self.y = np.zeros(prog.m)
        if self.verbose:
            print(f"      restoration: theta {theta:.3e} -> {float(np.sum(np.abs(pt.g))):.3e}")
        return True


def interior_point(nlp: NLP, z0: np.ndarray, D: np.ndarray, Sc: np.ndarray, sf: float, tol: float = 1e-8,
                   constraint_tol: float = 1e-9, max_iter: int = 1000, deadline: float = math.inf,
                   callback: Callable[[np.ndarray], None] | None = None, verbose: bool = False,
                   mu_strategy: str = "adaptive", warm: Duals | None = None) -> IPMResult:
    """Minimise nlp from z0 on the program scaled by (D, Sc, sf); see the package docstring.

    ``warm``: multipliers of a solution of a nearby problem of the same structure (primal-dual warm start,
    IPOPT's ``warm_start_init_point``): z0 is pushed into its bounds by only ``WARM_PUSH``, the multipliers
    start at ``warm``'s (bound multipliers at least ``WARM_MULT_PUSH``) and μ at ``warm.mu``, instead of a
    bound push of 1e-2, z = 1, least-squares λ and μ = 0.1."""
    return InteriorPoint(nlp, z0, D, Sc, sf, tol, constraint_tol, max_iter, deadline, callback, verbose,
                         mu_strategy, warm).run()


__all__ = ["InteriorPoint", "IPMResult", "interior_point"]
