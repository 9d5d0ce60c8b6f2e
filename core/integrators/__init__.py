"""The SE(3) integrators behind one call: ``integrate(system, initial, dt, steps, method, wrench)``.

Variational integrators (paper §3–4, :mod:`.variational`):
``vi-cay``, ``vi-cay-ln``, ``vi-exp`` (exact discrete momentum), ``vi-exp-ln``,
``vi-exp-series`` (approximate pairings) and ``vi-cay4`` (fourth order). Baselines of the
paper's comparison (§3.3, :mod:`.baselines`): ``rk2``, ``rk2i``, ``rk4``, ``lie-newmark``,
``lie-euler``. Lie group families of the Magnus paper and Park & Chung (:mod:`.families`): ``magnus``,
``cg2``–``cg4``, ``cf2``–``cf4``, ``mk2``–``mk4``. Every method returns a
:class:`~core.trajectory.Trajectory`.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ..trajectory import Trajectory
from .baselines import BASELINES
from .common import VEHICLE_DEFAULT_METHOD, HolonomicSystem, RigidState, WrenchSpec, combine, wrench_function
from .families import FAMILIES
from .variational import PAIRINGS, integrate_cay4
from .variational import integrate as integrate_pairing

METHODS: tuple[str, ...] = ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln", "vi-exp-series", "vi-cay4",
                            "rk2", "rk2i", "rk4", "lie-newmark", "lie-euler",
                            "magnus", "cg2", "cg3", "cg4", "cf2", "cf3", "cf4", "mk2", "mk3", "mk4")


def integrate(system: HolonomicSystem, initial: RigidState, dt: float, steps: int, method: str,
              wrench: WrenchSpec = None) -> Trajectory:
    """Integrate a rigid body on SE(3) with ``method`` from ``initial``: ``steps`` steps of ``dt``.

    The wrench is ``system.wrench`` plus ``wrench`` (None, an array (steps, ..., 6) of body
    wrenches (torque, force) per step, or f(k, R, x, ξ) → (..., 6)). Batch shape () or (B,)
    (any leading batch shape): the Trajectory arrays are then (N+1, B, 3) etc. Stats always
    hold wall_time_s, newton_iterations_mean (0 for explicit methods), blew_up, method, steps
    and dt. Unknown method → ValueError listing the valid ones.
    """
    if method not in METHODS:
        raise ValueError(f"unknown integration method {method!r}; valid methods: {', '.join(METHODS)}")
    try:
        steps_i, dt_f = int(steps), float(dt)
    except (TypeError, ValueError):
        raise ValueError(f"steps and dt must be numbers, got steps={steps!r}, dt={dt!r}") from None
    if steps_i != steps or steps_i < 0:
        raise ValueError(f"steps must be a non-negative whole number, got {steps!r}")
    if not (math.isfinite(dt_f) and dt_f > 0):
        raise ValueError(f"dt must be a finite positive number, got {dt!r}")
    t0 = time.perf_counter()
    batch = np.broadcast_shapes(np.shape(system.inertia)[:-1], np.shape(initial.R)[:-2],
                                np.shape(initial.x)[:-1], np.shape(initial.omega)[:-1],
                                np.shape(initial.v)[:-1])
    fn = combine(system.wrench, wrench_function(wrench, steps_i, batch))
    bare = dataclasses.replace(system, wrench=None)   # the combined wrench is passed explicitly
    if method == "vi-cay4":
        traj = integrate_cay4(bare, initial, dt_f, steps_i, fn)
    elif method in PAIRINGS:
        traj = integrate_pairing(bare, initial, dt_f, steps_i, method, fn)
    elif method in FAMILIES:
        traj = FAMILIES[method](bare, initial, dt_f, steps_i, fn)
    else:
        traj = BASELINES[method](bare, initial, dt_f, steps_i, fn)
    stats = traj.stats
    stats.setdefault("newton_iterations_mean", 0.0)
    stats.setdefault("blew_up", False)
    stats["method"] = method
    stats["steps"] = steps_i
    stats["dt"] = dt_f
    stats["wall_time_s"] = time.perf_counter() - t0
    return traj


__all__ = ["METHODS", "VEHICLE_DEFAULT_METHOD", "integrate", "HolonomicSystem", "RigidState", "WrenchSpec", "BASELINES", "FAMILIES"]
