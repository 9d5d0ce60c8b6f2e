"""Solving the DMOC program (paper §6, Fig. 11): backends, warm start, honest status.

Backends (both get the exact sparse constraint Jacobian and a sparse Lagrangian Hessian
from :class:`~core.dmoc.problem.NLP`):

* ``scipy`` (default; runs inside Blender with its bundled scipy): the interior-point method
  of :mod:`core.dmoc.ipm` (IPOPT's algorithm on scipy.sparse/SuperLU), falling back to
  ``scipy.optimize.minimize(method="trust-constr")`` (sparse Jacobian and Hessian) from its
  best point when it stalls (``[solver] method``).
* ``ipopt`` through cyipopt when it imports (``scripts/install_ipopt.sh``): exact Hessian
  by default, ``hessian = "limited-memory"`` for IPOPT's L-BFGS.

A solve reports, without embellishment: ``converged`` and a one-word ``status``
(``converged``, ``infeasible``, ``iteration_limit``, ``time_limit``, ``stalled``,
``numerical_failure``), a ``message`` naming the worst constraint group when the result
is not feasible, the cost, the maximum constraint violation (constraint rows and variable
bounds), the iterations and the wall time. A solve that does not converge returns its
best iterate (the feasible point of least cost seen, else the least infeasible one).

``max_iter`` and ``time_limit_s`` are budgets for the whole call of :func:`solve`. The time counts
from its start (presolve, scaling, the feasibility phase and polish included). The ``auto`` fallback
to trust-constr gets only the iterations and the time the interior point left: with no iterations
left it does not run (an iteration limit), nor with less than a fifth of the time left. Each backend
stops at the first iteration that ends past the deadline, so the wall time exceeds the limit by about
one iteration at most. A limit reported is a limit reached, and its message states the iterations
and seconds used. Each backend tests convergence before its limits, so a point that meets the
tolerances is reported converged.

Before any iteration, ``presolve`` checks what the scenario fixes: a fixed variable
(start state, exact goal) outside its bounds, or a constraint that depends only on fixed
variables and is violated, is reported as infeasible at once, naming the group.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from .problem import NLP

BACKENDS = ("scipy", "ipopt")
STATUSES = ("converged", "infeasible", "iteration_limit", "time_limit", "stalled", "numerical_failure")
LIMITS = ("iteration_limit", "time_limit")
INF = 1e20


def ipopt_available() -> bool:
    try:
        import cyipopt  # noqa: F401
    except Exception:  # ImportError, or a broken shared library
        return False
    return True


@dataclass
class SolverOptions:
    backend: str = "scipy"
    max_iter: int = 1000
    tol: float = 1e-8                  # optimality (scaled KKT) tolerance
    constraint_tol: float = 1e-9       # absolute feasibility required to call a point converged
    time_limit_s: float = 120.0
    hessian: str = "exact"             # or "limited-memory" (IPOPT only)
    ipopt_scaling: bool = True         # our variable/row scaling (else IPOPT's gradient-based)
    warm: bool = False                 # z0 is a solution-quality guess: start with a small barrier
    feasibility_phase: bool = False    # trust-constr: least-squares restoration of feasibility first (``restore``)
    method: str = "auto"               # scipy backend: "ipm" (core.dmoc.ipm), "trust-constr", or "auto":
                                       # the interior point first, trust-constr from its best point if it fails
    verbose: bool = False
    ipopt_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class SolveResult:
    z: np.ndarray
    converged: bool
    status: str
    message: str
    cost: float
    max_constraint_violation: float
    iterations: int
    wall_time_s: float
    backend: str
    worst_group: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] | None = None   # NLP.worst_detail of a point that is not converged
    duals: Any = None   # core.dmoc.ipm.Duals of the returned point (scipy interior point), for a warm re-solve

    def stats(self) -> dict[str, Any]:
        out = {"converged": bool(self.converged), "status": self.status, "message": self.message,
               "cost": float(self.cost), "max_constraint_violation": float(self.max_constraint_violation),
               "iterations": int(self.iterations), "wall_time_s": float(self.wall_time_s),
               "backend": self.backend, **self.extra}
        if self.failure is not None:
            out["failure"] = dict(self.failure)
        return out


class _Tracker:
    """Keeps the best point evaluated so far: feasible with least cost, else least violation;
    counts the iterations and passes each iterate to the caller's ``progress(k, z)``."""

    def __init__(self, nlp: NLP, feas_tol: float,
                 progress: Callable[[int, np.ndarray], None] | None = None):
        self.nlp = nlp
        self.tol = feas_tol
        self.best: tuple[bool, float, float, np.ndarray] | None = None
        self.progress = progress
        self.count = -1   # the backends report their starting point as iteration 0
        self.offset = 0   # iterations of an earlier backend run (the trust-constr fallback), for progress

    def report(self, z: np.ndarray | None, k: int | None = None) -> None:
        """Iteration k (default: the next one) is at z (progress only)."""
        self.count = self.count + 1 if k is None else int(k)
        if self.progress is not None and z is not None:
            self.progress(self.offset + self.count, z)

    def step(self, z: np.ndarray, k: int | None = None) -> None:
        """Iteration k is at z: track it, then report it."""
        self.see(z)
        self.report(z, k)

    def see(self, z: np.ndarray) -> None:
        if not np.all(np.isfinite(z)):
            return
        ev = self.nlp.evaluate(z)
        if not (math.isfinite(ev.cost) and np.all(np.isfinite(ev.cons))):
            return
        viol = self.nlp.max_violation(z)
        feas = viol <= self.tol
        b = self.best
        if (b is None or (feas and not b[0]) or (feas and b[0] and ev.cost < b[1])
                or (not feas and not b[0] and viol < b[2])):
            self.best = (feas, ev.cost, viol, np.array(z, dtype=float))


def presolve(nlp: NLP) -> str:
    """'' when nothing fixed is contradictory, else a message naming the constraint group."""
    y = nlp.base
    fixed = nlp.fixed
    from_meta = nlp.meta.get("lower_full"), nlp.meta.get("upper_full")
    if from_meta[0] is not None:
        lo, hi = from_meta
        bad = np.flatnonzero(fixed & ((y < lo - 1e-12) | (y > hi + 1e-12)))
        if bad.size:
            i = int(bad[0])
            return (f"bounds: {nlp.layout.name_of(i)} is fixed at {y[i]:.6g} by the scenario "
                    f"(start/goal) but its bounds are [{lo[i]:.6g}, {hi[i]:.6g}]")
    for g in nlp.constraints:
        allfixed = np.all(fixed[g.idx], axis=1)
        if not np.any(allfixed):
            continue
        k = np.flatnonzero(allfixed)
        X = y[g.idx[k]]
        params = tuple(p[k] for p in g.params)
        v = g.values(X, params)
        viol = np.maximum(np.maximum(g.lower[k] - v, v - g.upper[k]), 0.0)
        if np.max(viol, initial=0.0) > 1e-9:
            j = int(np.argmax(np.max(viol, axis=1)))
            label = g.labels[k[j]] if g.labels is not None else f"instance {k[j]}"
            return f"{g.name} ({label}) is violated by {float(np.max(viol[j])):.3g} at values fixed by the scenario"
    for check in nlp.meta.get("presolve_checks", ()):
        msg = check()
        if msg:
            return msg
    return ""


def solve(nlp: NLP, z0: np.ndarray, options: SolverOptions | None = None,
          callback: Callable[[int, np.ndarray], None] | None = None, duals: Any = None) -> SolveResult:
    """Solve from z0 (free variables). Never raises for a failed solve: the status says what happened.

    ``duals``: the multipliers (core.dmoc.ipm.Duals) of a solution of a problem with the same
    ``nlp.structure_key()``, z0 being that solution: the scipy interior point starts primal-dual warm
    (``interior_point``'s ``warm``); the other backends ignore them. The result's ``duals`` are those of its
    point when the interior point ended there.

    ``options.max_iter`` and ``options.time_limit_s`` bound this whole call (module docstring).
    ``callback(k, z)`` is called at every iteration k (1, 2, …) of the backend with its iterate z;
    an exception it raises that is not numerical (e.g. a cancel) propagates."""
    options = options or SolverOptions()
    if options.backend not in BACKENDS:
        raise ValueError(f"unknown backend {options.backend!r}")
    t0 = time.perf_counter()
    z0 = np.clip(np.asarray(z0, dtype=float), nlp.lb, nlp.ub)
    why = presolve(nlp)
    if why:
        return _result(nlp, z0, False, "infeasible", "infeasible: " + why, 0, t0, options.backend, options.tol)
    tracker = _Tracker(nlp, options.constraint_tol, callback)
    note = ""   # what a limit message adds to the counts
    out_duals = None   # the interior point's multipliers at the z it returned
    try:
        if options.backend == "ipopt":
            if not ipopt_available():
                raise RuntimeError("the ipopt backend needs cyipopt (scripts/install_ipopt.sh)")
            z, status, msg, iters = _solve_ipopt(nlp, z0, options, tracker, t0)
        elif options.method == "trust-constr":
            z, status, msg, iters = _solve_scipy(nlp, z0, options, tracker, t0)
        else:
            z, status, msg, iters, out_duals = _solve_ipm(nlp, z0, options, tracker, t0, duals)
            if options.method == "auto" and status in ("stalled", "numerical_failure"):
                # trust-constr from the interior point's best point, with the iterations and time it left
                left = options.max_iter - iters
                if left <= 0:
                    status, note = "iteration_limit", f"; none left for trust-constr after the interior point: {msg}"
                elif time.perf_counter() - t0 < 0.8 * options.time_limit_s:
                    start = tracker.best[3] if tracker.best is not None else z
                    tracker.offset = iters
                    out_duals = None   # trust-constr's point is not the interior point's
                    z, status2, msg2, iters2 = _solve_scipy(nlp, start, replace(options, max_iter=left), tracker, t0)
                    note = f"; {iters} in the interior point ({msg}), then {iters2} in trust-constr from its best point"
                    status, msg, iters = status2, f"{msg2} (trust-constr after the interior point: {msg})", iters + iters2
    except (FloatingPointError, np.linalg.LinAlgError, ValueError, ArithmeticError) as exc:
        z, status, msg, iters = z0, "numerical_failure", f"numerical failure: {exc}", 0
    if status in LIMITS:
        if not note and "restoration" in msg:
            note = " in the interior point's restoration phase"
        msg = limit_message(status, options, iters, time.perf_counter() - t0) + note
    converged = status == "converged"
    if not converged and tracker.best is not None:
        z = tracker.best[3]
    if not np.all(np.isfinite(z)):
        z = tracker.best[3] if tracker.best is not None else z0
    result = _result(nlp, z, converged, status, msg, iters, t0, options.backend, options.tol)
    if converged:
        result.duals = out_duals
    return result


def limit_message(status: str, options: SolverOptions, iterations: int, seconds: float) -> str:
    """The message of a solve stopped by its iteration or time limit, with the real counts."""
    head = (f"iteration limit of {options.max_iter} reached" if status == "iteration_limit"
            else f"time limit of {options.time_limit_s:g} s reached")
    return f"{head} ({iterations} iterations, {seconds:.3g} s)"


def _result(nlp: NLP, z: np.ndarray, converged: bool, status: str, msg: str, iters: int,
            t0: float, backend: str, tol: float = float("nan")) -> SolveResult:
    ev = nlp.evaluate(z)
    viol = nlp.max_violation(z)
    worst, _ = nlp.worst(z)
    if not converged and worst and worst not in msg and viol > 1e-9:
        msg = f"{msg}; largest violation {viol:.3g} in {worst}"
    return SolveResult(z=np.array(z, dtype=float), converged=converged, status=status, message=msg,
                       cost=float(ev.cost), max_constraint_violation=viol, iterations=int(iters),
                       wall_time_s=time.perf_counter() - t0, backend=backend, worst_group=worst,
                       failure=None if converged else nlp.worst_detail(z),
                       extra={"variables": nlp.n, "constraints": nlp.m, "tol": tol,
                              "jacobian_nonzeros": nlp.jac_pattern.nnz,
                              "hessian_nonzeros": nlp.hess_pattern.nnz})


# ------------------------------------------------------------------------------------------------
# scipy trust-constr
# ------------------------------------------------------------------------------------------------
def scaling(nlp: NLP, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Variable, constraint-row and objective scales for a solver that is not scale invariant.

    Variables: per layout block and last-axis column (e.g. every node's wheel momentum),
    the largest magnitude in the initial guess or the finite bounds, at least 1. Rows: the
    inverse of the largest entry of the row of the variable-scaled Jacobian at z0 (clipped to
    [1e-6, 1e6]; rows without free columns keep 1). Objective: 1 / max(1, |scaled gradient|∞).
    """
    y0 = nlp.full(z0)
    lo, hi = nlp.meta.get("lower_full"), nlp.meta.get("upper_full")
    full = np.ones(nlp.layout.size)
    for idx in nlp.layout.blocks.values():
        idx = np.asarray(idx)
        groups = idx.reshape(-1, idx.shape[-1]) if idx.ndim >= 2 else idx.reshape(-1, 1)
        for j in range(groups.shape[1]):
            col = groups[:, j]
            mag = float(np.max(np.abs(y0[col]), initial=0.0))
            if lo is not None:
                for b in (lo[col], hi[col]):
                    fin = np.abs(b[np.isfinite(b)])
                    if fin.size:
                        mag = max(mag, float(fin.max()))
            full[col] = max(mag, 1.0)
    D = full[nlp.free]
    if nlp.m:
        J = nlp.jacobian(z0).multiply(D[None, :]).tocsr()
        rown = np.asarray(abs(J).max(axis=1).todense()).ravel()
        Sc = np.where(rown > 0, 1.0 / np.maximum(rown, 1e-300), 1.0)
        Sc = np.clip(Sc, 1e-6, 1e6)
    else:
        Sc = np.ones(0)
    g = nlp.gradient(z0) * D
    sf = 1.0 / max(1.0, float(np.max(np.abs(g), initial=0.0)))
    return D, Sc, sf


def polish(nlp: NLP, z: np.ndarray, tol: float, D: np.ndarray | None = None, iterations: int = 4,
           deadline: float = math.inf) -> np.ndarray:
    """Minimum-norm Gauss–Newton projection onto the equality rows and the active inequality rows
    (|c − bound| < 1e-6), variables at a bound held: removes the last ~1e-8 of constraint violation that a
    solver converged on a scaled problem can leave. No step starts after ``deadline``. Returns z unchanged
    if it does not reduce the violation."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    D = np.ones(nlp.n) if D is None else D
    best, best_v = z.copy(), nlp.max_violation(z)
    cur = z.copy()
    for _ in range(iterations):
        if best_v <= tol or time.perf_counter() > deadline:
            break
        c = nlp.constraint_values(cur)
        lo_act = np.abs(c - nlp.cl) < 1e-6
        hi_act = np.abs(c - nlp.cu) < 1e-6
        rows = np.flatnonzero(lo_act | hi_act | (c < nlp.cl) | (c > nlp.cu))
        target = np.where(c < nlp.cl, nlp.cl, np.where(c > nlp.cu, nlp.cu, np.where(lo_act, nlp.cl, nlp.cu)))
        if not len(rows):
            break
        free = (cur > nlp.lb + 1e-12) & (cur < nlp.ub - 1e-12)
        J = (nlp.jacobian(cur)[rows] @ sp.diags(D * free)).tocsr()
        r = (c - target)[rows]
        JJ = (J @ J.T).tocsc()
        reg = 1e-14 * max(1.0, float(abs(JJ).max()))
        step = J.T @ spsolve(JJ + reg * sp.identity(JJ.shape[0], format="csc"), -r)
        cur = np.clip(cur + D * free * step, nlp.lb, nlp.ub)
        v = nlp.max_violation(cur)
        if v < best_v:
            best, best_v = cur.copy(), v
    return best


def restore(nlp: NLP, z0: np.ndarray, D: np.ndarray, Sc: np.ndarray, max_nfev: int = 200,
            deadline: float = math.inf) -> np.ndarray:
    """Feasibility phase: least squares of the scaled constraint violations (equalities, and
    inequalities outside their bounds) within the variable bounds, scipy ``least_squares`` (trust
    region reflective, sparse Jacobian, LSMR). trust-constr is slow to reach feasibility from far
    away; from a nearly feasible point it converges much better. Returns z0 if nothing improves."""
    import scipy.sparse as sp
    from scipy.optimize import least_squares

    lb, ub = nlp.lb / D, nlp.ub / D
    x0 = np.clip(z0 / D, lb, ub)

    def res(x):
        if time.perf_counter() > deadline:
            raise TimeoutError
        c = nlp.constraint_values(D * x)
        return Sc * np.where(c < nlp.cl, c - nlp.cl, np.where(c > nlp.cu, c - nlp.cu, 0.0))

    def jac(x):
        c = nlp.constraint_values(D * x)
        act = ((c < nlp.cl) | (c > nlp.cu)).astype(float)
        return (sp.diags(Sc * act) @ nlp.jacobian(D * x) @ sp.diags(D)).tocsr()

    try:
        r = least_squares(res, x0, jac=jac, bounds=(lb, ub), method="trf", tr_solver="lsmr",
                          max_nfev=max_nfev, ftol=1e-12, xtol=1e-12, gtol=1e-12)
    except (TimeoutError, ValueError, np.linalg.LinAlgError):
        return z0
    z = np.clip(D * r.x, nlp.lb, nlp.ub)
    return z if nlp.max_violation(z) < nlp.max_violation(z0) else z0


def _solve_ipm(nlp: NLP, z0: np.ndarray, o: SolverOptions, tracker: _Tracker, t0: float, duals: Any = None):
    """The scipy backend's interior-point method (core.dmoc.ipm) on the scaled problem; (z, status, message,
    iterations, the multipliers at z or None)."""
    from .ipm import interior_point

    deadline = t0 + o.time_limit_s
    D, Sc, sf = scaling(nlp, z0)
    r = interior_point(nlp, z0, D, Sc, sf, tol=o.tol, constraint_tol=o.constraint_tol, max_iter=o.max_iter,
                       deadline=deadline, callback=tracker.step, verbose=o.verbose, warm=duals)
    z = r.z
    viol = nlp.max_violation(z)
    if r.status == "converged" and viol > o.constraint_tol:
        z = polish(nlp, z, o.constraint_tol, D, deadline=deadline)
        if nlp.max_violation(z) > o.constraint_tol:
            return z, "stalled", r.message + " but constraints remain violated", r.iterations, None
    tracker.see(z)
    return z, r.status, r.message, r.iterations, r.duals


def _solve_scipy(nlp: NLP, z0: np.ndarray, o: SolverOptions, tracker: _Tracker, t0: float):
    """trust-constr on the scaled problem x = z / D, ĉ = Sc c, f̂ = sf f (sparse Jacobian and Hessians), at most
    ``o.max_iter`` iterations, stopped at the first iteration that ends after t0 + ``o.time_limit_s`` unless it
    meets trust-constr's own convergence test (then trust-constr stops there itself)."""
    import warnings

    import scipy.sparse as sp
    from scipy.optimize import Bounds, NonlinearConstraint, minimize

    deadline = t0 + o.time_limit_s
    D, Sc, sf = scaling(nlp, z0)
    if o.feasibility_phase and nlp.m and nlp.max_violation(z0) > 1e-6 and not o.warm:
        z0 = restore(nlp, z0, D, Sc, deadline=t0 + 0.25 * o.time_limit_s)
    Dm, Scm = sp.diags(D), sp.diags(Sc)
    state = {"iters": 0, "timeout": False}

    def cb(intermediate_result) -> bool:
        state["iters"] = int(getattr(intermediate_result, "nit", state["iters"] + 1))
        tracker.step(D * np.asarray(intermediate_result.x), intermediate_result.nit)
        if time.perf_counter() > deadline and not (intermediate_result.optimality < o.tol
                                                   and intermediate_result.constr_violation < o.tol):
            state["timeout"] = True
            return True
        return False

    constraints = []
    if nlp.m:
        constraints.append(NonlinearConstraint(
            lambda x: Sc * nlp.constraint_values(D * x), Sc * nlp.cl, Sc * nlp.cu,
            jac=lambda x: (Scm @ nlp.jacobian(D * x) @ Dm).tocsr(),
            hess=lambda x, v: (Dm @ nlp.hessian(D * x, v * Sc, 0.0) @ Dm).tocsr()))
    zero = np.zeros(nlp.m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(lambda x: sf * nlp.objective(D * x), z0 / D, jac=lambda x: sf * D * nlp.gradient(D * x),
                       hess=lambda x: (Dm @ nlp.hessian(D * x, zero, sf) @ Dm).tocsr(),
                       method="trust-constr", bounds=Bounds(nlp.lb / D, nlp.ub / D, keep_feasible=False),
                       constraints=constraints, callback=cb,
                       options={"maxiter": o.max_iter, "gtol": o.tol, "xtol": 1e-14,
                                "sparse_jacobian": True, "verbose": 2 if o.verbose else 0,
                                **({"initial_barrier_parameter": 1e-6, "initial_barrier_tolerance": 1e-6,
                                    "initial_tr_radius": 1e-2} if o.warm else {})})
    z = D * np.asarray(res.x, dtype=float)
    viol = nlp.max_violation(z)
    if res.status in (1, 2, 4) and o.constraint_tol < viol < 1e-4:
        z = polish(nlp, z, o.constraint_tol, D, deadline=deadline)
        viol = nlp.max_violation(z)
        if viol > o.constraint_tol and time.perf_counter() > deadline:
            state["timeout"] = True   # the polish the point needed found no time left
    tracker.see(z)
    iters = int(getattr(res, "nit", state["iters"]))
    if state["timeout"]:
        return z, "time_limit", f"time limit of {o.time_limit_s:g} s reached", iters
    if res.status in (1, 4) and viol <= o.constraint_tol:
        return z, "converged", "optimal: first-order conditions met (trust-constr gtol)", iters
    if res.status == 2:
        opt = float(getattr(res, "optimality", np.inf))
        if viol <= o.constraint_tol and opt <= max(1e3 * o.tol, 1e-5):
            return z, "converged", f"optimal to {opt:.2g} (trust region below xtol)", iters
        return z, "stalled", f"stalled: trust region collapsed (optimality {opt:.2g})", iters
    if res.status == 0:
        return z, "iteration_limit", f"iteration limit of {o.max_iter} reached", iters
    if res.status in (1, 4):
        return z, "stalled", "trust-constr stopped with the constraints violated", iters
    return z, "numerical_failure", f"trust-constr: {res.message}", iters


# ------------------------------------------------------------------------------------------------
# IPOPT (cyipopt)
# ------------------------------------------------------------------------------------------------
_IPOPT_STATUS = {
    0: ("converged", "optimal (IPOPT: solve succeeded)"),
    1: ("converged", "acceptable (IPOPT: solved to acceptable level)"),
    2: ("infeasible", "infeasible (IPOPT: infeasible problem detected)"),
    3: ("stalled", "search direction too small"),
    4: ("numerical_failure", "iterates diverging"),
    5: ("stalled", "user stop"),
    6: ("converged", "feasible point found"),
    -1: ("iteration_limit", "iteration limit reached"),
    -2: ("numerical_failure", "restoration failed"),
    -3: ("numerical_failure", "error in step computation"),
    -4: ("time_limit", "time limit reached"),
    -5: ("time_limit", "time limit reached"),   # max_wall_time (IPOPT ≥ 3.14)
    -10: ("numerical_failure", "not enough degrees of freedom"),
    -11: ("numerical_failure", "invalid problem definition"),
    -12: ("numerical_failure", "invalid option"),
    -13: ("numerical_failure", "invalid number detected"),
}


class _IpoptAdapter:
    """cyipopt's problem object: the NLP's functions, and at every iteration the tracker sees the point last
    evaluated (the accepted trial point). The deadline: IPOPT's own ``max_wall_time`` stops the main phase
    (IPOPT tests it after its convergence test, which a stop from this callback would pre-empt); this
    callback stops the restoration phase, where no iterate is tested for convergence, and every phase when
    ``own_clock`` is False (IPOPT < 3.14, without ``max_wall_time``)."""

    def __init__(self, nlp: NLP, tracker: _Tracker, deadline: float, own_clock: bool = False):
        self.nlp, self.tracker, self.deadline, self.own_clock = nlp, tracker, deadline, own_clock
        self.iters = 0
        self.timeout = False
        self._hrows, self._hcols = nlp.hess_pattern.rows, nlp.hess_pattern.cols
        self._jrows, self._jcols = nlp.jac_pattern.rows, nlp.jac_pattern.cols
        self.last_x: np.ndarray | None = None

    def objective(self, x):
        self.last_x = x
        return self.nlp.objective(x)

    def gradient(self, x):
        return self.nlp.gradient(x)

    def constraints(self, x):
        self.last_x = x
        return self.nlp.constraint_values(x)

    def jacobianstructure(self):
        return self._jrows, self._jcols

    def jacobian(self, x):
        return self.nlp.jacobian_values(x)

    def hessianstructure(self):
        return self._hrows, self._hcols

    def hessian(self, x, lagrange, obj_factor):
        return self.nlp.hessian_values(x, lagrange, obj_factor)

    def intermediate(self, alg_mod, iter_count, obj_value, inf_pr, inf_du, mu, d_norm,
                     regularization_size, alpha_du, alpha_pr, ls_trials):
        self.iters = int(iter_count)
        if self.last_x is not None:
            self.tracker.see(self.last_x)
        self.tracker.report(self.last_x, iter_count)
        if time.perf_counter() > self.deadline and (alg_mod == 1 or not self.own_clock):
            self.timeout = True
            return False
        return True


def _solve_ipopt(nlp: NLP, z0: np.ndarray, o: SolverOptions, tracker: _Tracker, t0: float):
    import cyipopt

    deadline = t0 + o.time_limit_s
    own_clock = tuple(getattr(cyipopt, "IPOPT_VERSION", (0,))) >= (3, 14)   # max_wall_time exists
    ad = _IpoptAdapter(nlp, tracker, deadline, own_clock)
    lb = np.where(np.isfinite(nlp.lb), nlp.lb, -INF)
    ub = np.where(np.isfinite(nlp.ub), nlp.ub, INF)
    cl = np.where(np.isfinite(nlp.cl), nlp.cl, -INF)
    cu = np.where(np.isfinite(nlp.cu), nlp.cu, INF)
    prob = cyipopt.Problem(n=nlp.n, m=nlp.m, problem_obj=ad, lb=lb, ub=ub, cl=cl, cu=cu)
    opts = {"tol": o.tol, "constr_viol_tol": o.constraint_tol, "max_iter": int(o.max_iter),
            "print_level": 5 if o.verbose else 0,
            "sb": "yes", "mu_strategy": "adaptive", "bound_relax_factor": 0.0,
            "hessian_approximation": "limited-memory" if o.hessian == "limited-memory" else "exact"}
    if tuple(getattr(cyipopt, "IPOPT_VERSION", (0,))) < (3, 14, 19):
        # MUMPS 5.5.1 (the cyipopt-wheels build) factorises the block-banded DMOC KKT systems
        # faster with AMD than with its automatic choice; with MUMPS 5.8.2 and METIS (casadi's
        # Ipopt 3.14.19) the automatic choice is at least as fast
        opts["mumps_pivot_order"] = 0
    if o.ipopt_scaling:
        D, Sc, sf = scaling(nlp, z0)
        prob.set_problem_scaling(obj_scaling=sf, x_scaling=1.0 / D, g_scaling=Sc)
        opts["nlp_scaling_method"] = "user-scaling"
    left = deadline - time.perf_counter()   # the budget after the set-up above
    if left <= 0.0:
        prob.close()
        tracker.see(z0)
        return z0, "time_limit", "time limit reached before IPOPT started", 0
    opts["max_wall_time" if own_clock else "max_cpu_time"] = float(left)
    opts.update(o.ipopt_options)
    for k, v in opts.items():
        prob.add_option(k, v)
    z, info = prob.solve(z0)
    prob.close()
    z = np.asarray(z, dtype=float)
    tracker.see(z)
    code = int(info["status"])
    status, msg = _IPOPT_STATUS.get(code, ("numerical_failure", f"IPOPT status {code}"))
    if ad.timeout:
        status, msg = "time_limit", f"time limit of {o.time_limit_s:g} s reached"
    elif code == 5:  # user stop without timeout cannot happen; keep IPOPT's word
        status = "stalled"
    if status == "converged" and nlp.max_violation(z) > 10.0 * o.constraint_tol:
        status, msg = "stalled", msg + " but constraints remain violated"
    return z, status, msg, ad.iters


__all__ = ["solve", "presolve", "limit_message", "SolverOptions", "SolveResult", "BACKENDS", "STATUSES",
           "ipopt_available"]
