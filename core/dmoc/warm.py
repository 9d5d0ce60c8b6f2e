"""A solution's multipliers stored with its trajectory, for a primal-dual warm re-solve.

A converged scipy interior-point solve writes its multipliers (``core.dmoc.ipm.Duals``, unscaled) into
the trajectory under the top-level key ``solver_state``, tagged with the problem's
``NLP.structure_key()``. A later solve started from that trajectory (``--initial``, ``solve_scenario(…,
initial=…)``, the add-on's Live Solve, which keeps its last solve-space trajectories in memory) uses them
when its own problem has the same key: only
values moved (a key, the goal, an obstacle), not the shape of the problem. Otherwise the warm start is
primal only. The stored arrays are checked (sizes, finite, bound multipliers ≥ 0) before use.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..trajectory import Trajectory
from .ipm import Duals

KEY = "solver_state"


def attach(traj: Trajectory, nlp: Any, duals: Duals | None) -> None:
    """Store ``duals``, the multipliers of a solution of ``nlp`` (a ``core.dmoc.problem.NLP``), in ``traj``
    (nothing when there are none, or when any is not finite: the output must never carry NaN, and a
    trajectory without them still warm-starts primal)."""
    if duals is None or not all(np.isfinite(a).all() for a in (duals.y, duals.z_lower, duals.z_upper)) \
            or not np.isfinite(duals.mu):
        return
    traj.series[KEY] = {"structure": nlp.structure_key(), "barrier": float(duals.mu),
                        "constraint_multipliers": np.asarray(duals.y, dtype=float),
                        "lower_bound_multipliers": np.asarray(duals.z_lower, dtype=float),
                        "upper_bound_multipliers": np.asarray(duals.z_upper, dtype=float)}


def duals_for(traj: Trajectory, nlp: Any) -> Duals | None:
    """The multipliers stored in ``traj`` if they belong to a problem with the structure of ``nlp``, else
    None: one per constraint row, bound multipliers on (free variables, inequality rows)."""
    state: Any = traj.series.get(KEY)
    if not isinstance(state, dict) or state.get("structure") != nlp.structure_key():
        return None
    m, n_bounds = nlp.m, nlp.n + int(np.count_nonzero(nlp.cl != nlp.cu))
    try:
        y = np.asarray(state["constraint_multipliers"], dtype=float).reshape(-1)
        zl = np.asarray(state["lower_bound_multipliers"], dtype=float).reshape(-1)
        zu = np.asarray(state["upper_bound_multipliers"], dtype=float).reshape(-1)
        mu = float(state["barrier"])
    except (KeyError, TypeError, ValueError):
        return None
    if y.size != m or zl.size != n_bounds or zu.size != n_bounds:
        return None
    arrays = (y, zl, zu, np.array([mu]))
    if not all(np.isfinite(a).all() for a in arrays) or (zl < 0).any() or (zu < 0).any() or mu <= 0:
        return None
    return Duals(y=y, z_lower=zl, z_upper=zu, mu=mu)


__all__ = ["KEY", "attach", "duals_for"]
