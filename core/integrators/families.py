"""The Lie group integrator families behind ``integrate(..., method=NAME)``: the Magnus update of the
article *Numerical Integration for Rotational Dynamics* and the Crouch–Grossman, commutator-free and
Munthe-Kaas methods of Park & Chung 2005.

``FAMILIES`` maps a method name to ``f(system, initial, dt, steps, wrench) -> Trajectory``,
the signature of :data:`.baselines.BASELINES`:

- ``magnus``: Heun on the velocities + the Magnus update of the pose (order 2, one exponential
  per step; :mod:`.magnus`);
- ``cg2``, ``cg3``, ``cg4``: Crouch–Grossman (Park & Chung Table I; 3, 6, 15 exponentials per step);
- ``cf2``, ``cf3``, ``cf4``: commutator-free (Table II; 3, 3, 5 exponentials per step);
- ``mk2``, ``mk3``, ``mk4``: Munthe-Kaas with the closed-form dexp⁻¹ (Table III; 2, 3, 4
  exponentials and 1, 2, 3 dexp⁻¹ per step) — :mod:`.lie_rk`.

Every returned Trajectory has ``stats["exp_evaluations_per_step"]`` (counted during the run),
``dexp_inv_evaluations_per_step`` and ``rate_evaluations_per_step``. ``ORDERS`` gives the
order of each method (fitted in tests/core/lie/test_lie_rk.py and tests/core/integrators/test_magnus.py).
"""
from __future__ import annotations

from functools import partial
from typing import Callable

from ..trajectory import Trajectory
from .common import HolonomicSystem, RigidState, WrenchSpec
from .lie_rk import TABLEAUX, lie_rk
from .magnus import magnus

FamilyFunction = Callable[[HolonomicSystem, RigidState, float, int, WrenchSpec], Trajectory]

FAMILIES: dict[str, FamilyFunction] = {"magnus": magnus}
FAMILIES.update({name: partial(lie_rk, name) for name in TABLEAUX})

ORDERS: dict[str, int] = {"magnus": 2, **{name: tab.order for name, tab in TABLEAUX.items()}}

__all__ = ["FAMILIES", "ORDERS"]
