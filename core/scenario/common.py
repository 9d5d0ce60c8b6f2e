"""Readers shared by every vehicle's scenario: ``[integrator]`` and the SE(3) ``[initial]`` state."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..integrators.common import RigidState
from ..lie import quaternion
from . import Table

MAX_STEPS = 10_000_000
MIN_DT = 1e-6   # s: a microsecond; finer steps only collect round-off


@dataclass(frozen=True)
class IntegratorSettings:
    method: str
    dt: float
    steps: int
    alpha: float


def read_integrator(root: Table, methods: Sequence[str], default_method: str | None = None,
                    with_alpha: bool = False) -> IntegratorSettings:
    t = root.table("integrator", required=True)
    if default_method is None:
        method = t.string("method", choices=methods)
    else:
        method = t.string("method", default_method, choices=methods)
    dt = t.number("dt", positive=True, low=MIN_DT)
    steps = t.number("steps", integer=True, low=1, high=MAX_STEPS)
    alpha = t.number("alpha", 0.5, low=0.0, high=1.0) if with_alpha else 0.5
    t.finish()
    return IntegratorSettings(method, dt, steps, alpha)


def read_se3_initial(root: Table) -> RigidState:
    """``[initial]`` position, orientation (w, x, y, z), body angular and linear velocity."""
    t = root.table("initial")
    x = t.vector("position", 3, [0.0, 0.0, 0.0])
    q = t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0])
    w = t.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
    v = t.vector("linear_velocity", 3, [0.0, 0.0, 0.0])
    t.finish()
    return RigidState(R=quaternion.to_matrix(q), x=x, omega=w, v=v)
