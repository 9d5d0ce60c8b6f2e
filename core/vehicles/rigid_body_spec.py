"""The free rigid body's spec (dynamics in :mod:`core.vehicles.rigid_body`): no preset, no inputs;
a scenario gives its mass and inertia, and gravity is off unless asked for."""
from __future__ import annotations

from .spec import INERTIA, MASS, Parameter, VehicleSpec

RIGID_BODY = VehicleSpec(
    name="rigid_body", label="Rigid Body", description="Free rigid body, optionally under gravity",
    parameters=(
        MASS, INERTIA,
        Parameter("gravity", "Gravity", "", "Apply gravity (9.81 m/s² along -Z)", kind="switch", default=False,
                  positive=False),
    ),
)

__all__ = ["RIGID_BODY"]
