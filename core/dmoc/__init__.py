"""Discrete Mechanics and Optimal Control (paper §6): optimise a vehicle's trajectory subject to
its variational integrator. ``solve_scenario`` is what ``python -m core solve`` runs.

The stages, each public in its module: ``scenario.read`` (the TOML table → Setup), ``constraints.assemble``
(→ the NLP of ``problem``), ``initial_guess.initial_guess``, ``solve.scaling`` and ``solve.solve`` (the
backends; the scipy one is the interior point of the ``ipm`` package), ``warm`` (multipliers kept with a
trajectory). Also: ``costs`` (shared groups), ``obstacles`` (signed distances), ``models`` (each vehicle's
discrete dynamics), ``plot`` (PNG, lazily). They are not re-exported here: ``solve`` and ``initial_guess``
would shadow their modules.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from ..trajectory import Trajectory


def solve_scenario(root: Any, backend: str | None = None, initial: Trajectory | None = None,
                   options: Any = None,
                   callback: Callable[[int, float], None] | None = None) -> tuple[Trajectory, Any, Any]:
    """Scenario table → (trajectory with controls and stats, SolveResult, Setup).

    ``initial``: warm start from a trajectory (same steps); default: ``initial_guess``. When it carries the
    multipliers of a solve of a problem with the same structure (``core.dmoc.warm``), the start is
    primal-dual (``stats.warm_start``: "primal-dual", else "primal"; "none" without ``initial``); the
    outer solves after the first start from the previous one's multipliers. A converged result stores
    its multipliers in the trajectory.
    ``[solver] max_iter`` and ``time_limit_s`` bound all the outer solves together: each gets what the
    earlier ones left, and none starts once either is spent. When a re-solve after re-centring does not
    converge (e.g. stops at a limit) and the solve before it converged, that converged point is the result.
    ``callback(iterations, max_violation)``: progress, called in the solving thread with the
    iterations so far (counted over the outer solves) and the largest constraint violation
    (constraint rows and bounds, ``NLP.max_violation``) of the current iterate — at every
    iteration the backend reports through ``core.dmoc.solve.solve``'s ``callback``, and at the
    end of every outer solve. To stop the solve from it, raise a BaseException subclass (a cancel):
    it propagates, while the backends turn numerical exceptions into a failed status.
    Raises ScenarioError for bad input; a failed solve is a result, not an exception.
    """
    from .constraints import assemble
    from .initial_guess import initial_guess
    from .scenario import read
    from .solve import LIMITS, limit_message, solve
    from .warm import attach, duals_for

    t0 = time.perf_counter()
    setup = read(root, backend)
    if options is not None:
        setup.options = options
    model, spec = setup.model, setup.spec
    y0 = _warm_start(model, initial) if initial is not None else initial_guess(model, spec)
    setup.options.warm = initial is not None
    budget = setup.options   # its max_iter and time_limit_s bound all the outer solves together
    result = previous = None
    iterations, solve_time, outer = 0, 0.0, 0
    start = 0.0   # when the first solve started
    duals, warm_kind = None, "none" if initial is None else "primal"
    for outer in range(1, 5):  # outer solves: SE(3) models re-centre their pose charts between them
        nlp = assemble(model, spec)
        if outer == 1:
            start, left = time.perf_counter(), budget
            if initial is not None:
                duals = duals_for(initial, nlp)
                warm_kind = "primal" if duals is None else "primal-dual"
        else:
            left = replace(budget, max_iter=budget.max_iter - iterations,
                           time_limit_s=budget.time_limit_s - (time.perf_counter() - start))
        result = solve(nlp, nlp.reduce(y0), left, callback=_progress(callback, nlp, iterations), duals=duals)
        duals = result.duals
        iterations += result.iterations
        if callback is not None:
            callback(iterations, float(result.max_constraint_violation))
        solve_time += result.wall_time_s
        if previous is not None and not result.converged:
            # the re-solve after re-centring failed (often: no budget left) but the solve before converged:
            # that point stands, in the current charts
            stopped = result.status.replace("_", " ")
            result, y0 = previous
            result.z = nlp.reduce(y0)
            result.message += f"; the re-solve after re-centring the pose charts stopped ({stopped})"
            if callback is not None:
                callback(iterations, float(result.max_constraint_violation))
            break
        if outer > 1 and result.status in LIMITS:
            result.message = (f"{limit_message(result.status, budget, iterations, solve_time)} over {outer} "
                              f"outer solves (pose charts re-centred between them); the last: {result.message}")
        y0 = nlp.full(result.z)
        spent = iterations >= budget.max_iter or time.perf_counter() - start >= budget.time_limit_s
        if result.status == "infeasible" or spent or not model.recentre(y0):
            break
        previous = (result, y0) if result.converged else None   # y0 re-centred in place: the current charts
        budget.warm = True
    result.iterations = iterations
    result.wall_time_s = solve_time
    traj = model.trajectory(y0)
    if result.converged:
        attach(traj, nlp, result.duals)
    traj.stats.update(result.stats())
    traj.stats["warm_start"] = warm_kind
    traj.stats["outer_solves"] = outer
    traj.stats["wall_time_s"] = time.perf_counter() - t0
    traj.stats["solve_time_s"] = solve_time
    return traj, result, setup


def _warm_start(model: Any, initial: Trajectory) -> np.ndarray:
    """The decision variables of ``initial``; a trajectory of another vehicle or size, or one that gives
    non-finite values, is a ScenarioError at "initial trajectory"."""
    from ..errors import ScenarioError

    if model.vehicle and initial.vehicle != model.vehicle:
        raise ScenarioError("initial trajectory", f"is a {initial.vehicle.replace('_', ' ')} trajectory; this "
                            f"scenario's vehicle is a {model.vehicle.replace('_', ' ')}")
    try:
        y0 = model.from_trajectory(initial)
    except ScenarioError:
        raise
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ScenarioError("initial trajectory", f"is not a {model.vehicle} trajectory of this scenario "
                            f"(missing or malformed {exc})") from None
    if not np.all(np.isfinite(y0)):
        raise ScenarioError("initial trajectory", "gives values that are not finite")
    return y0


def _progress(callback: Callable[[int, float], None] | None, nlp: Any,
              done: int) -> Callable[[int, np.ndarray], None] | None:
    """core.dmoc.solve's per-iteration ``callback(k, z)`` (z: the free variables) → ``callback(done + k,
    max violation of z)``."""
    if callback is None:
        return None

    def step(k: int, z: np.ndarray) -> None:
        callback(done + int(k), float(nlp.max_violation(z)))
    return step


__all__ = ["solve_scenario"]
