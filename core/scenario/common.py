"""Readers shared by every vehicle's scenario: ``[integrator]``, the ``[vehicle]`` parameters of a
vehicle's spec (:mod:`core.vehicles.spec`) and the SE(3) ``[initial]`` state."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..integrators.common import RigidState
from ..lie import quaternion
from ..vehicles.spec import Parameter, VehicleSpec
from . import MAX_SOLVE_STEPS, MAX_STEPS, REQUIRED, Table

MIN_DT = 1e-6   # s: a microsecond; finer steps only collect round-off


@dataclass(frozen=True)
class IntegratorSettings:
    method: str
    dt: float | None    # None for a solve: its step is the duration over the steps
    steps: int
    alpha: float


def read_integrator(root: Table, methods: Sequence[str], default_method: str | None = None,
                    with_alpha: bool = False, solve: bool = False) -> IntegratorSettings:
    """``[integrator]``: ``method`` of ``methods`` (required without a default), ``dt`` ≥ MIN_DT and ``steps`` in
    1 … MAX_STEPS for a simulation; a solve (``solve``) has no ``dt`` (the duration fixes it) and 2 …
    MAX_SOLVE_STEPS steps; ``alpha`` in [0, 1] where the method has a quadrature point, else ½."""
    t = root.table("integrator", required=True)
    if default_method is None:
        method = t.string("method", choices=methods)
    else:
        method = t.string("method", default_method, choices=methods)
    dt = None if solve else t.number("dt", positive=True, low=MIN_DT)
    if solve:
        steps = t.number("steps", integer=True, low=2, high=MAX_SOLVE_STEPS)
    else:
        steps = t.number("steps", integer=True, low=1, high=MAX_STEPS)
    alpha = t.number("alpha", 0.5, low=0.0, high=1.0) if with_alpha else 0.5
    t.finish()
    return IntegratorSettings(method, dt, steps, alpha)


def read_parameter(vehicle: Table, p: Parameter, default: Any = REQUIRED) -> Any:
    """``[vehicle]`` key ``p.name`` checked as the spec says: a switch, 3 numbers or a number (positive
    where ``p.positive``, at most ``p.upper``)."""
    if p.kind == "switch":
        return vehicle.boolean(p.name, default)
    if p.kind == "vector":
        return vehicle.vector(p.name, 3, default, positive=p.positive)
    return vehicle.number(p.name, default, positive=p.positive, high=p.upper)


def read_parameters(vehicle: Table, spec: VehicleSpec, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Every scenario parameter of ``spec``, in its order; a key missing from ``vehicle`` takes its value in
    ``defaults``, and without one there it is required."""
    return {p.name: read_parameter(vehicle, p, defaults.get(p.name, REQUIRED)) for p in spec.scenario_parameters}


def read_se3_initial(root: Table) -> RigidState:
    """``[initial]`` position, orientation (w, x, y, z), body angular and linear velocity."""
    t = root.table("initial")
    x = t.vector("position", 3, [0.0, 0.0, 0.0])
    q = t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0])
    w = t.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
    v = t.vector("linear_velocity", 3, [0.0, 0.0, 0.0])
    t.finish()
    return RigidState(R=quaternion.to_matrix(q), x=x, omega=w, v=v)
