"""The boat's spec (paper §4.3.2; dynamics in :mod:`core.vehicles.boat`).

The preset, "rib", is a ~5 m rigid inflatable boat of 800 kg on the default hull (length × beam ×
height = 5 × 2 × 0.8 m), with the inertia of a uniform box of that size and two thrusters at the
transom. A scenario's boat may have its own hull and thrusters (``core.scenario.boat``): then its
inertia defaults to the hull's, and it has one input per thruster, each bounded as these two.
"""
from __future__ import annotations

from typing import Any, Sequence

from .spec import INERTIA, MASS, Input, Parameter, Part, Preset, VehicleSpec

DEFAULT_LENGTH, DEFAULT_BEAM, DEFAULT_HEIGHT = 5.0, 2.0, 0.8
DEFAULT_MASS = 800.0


def box_inertia(mass: float, length: float, beam: float, height: float) -> tuple[float, float, float]:
    """J of a uniform box (used as the default boat inertia): m/12 (b² + h², l² + h², l² + b²)."""
    return (mass * (beam**2 + height**2) / 12, mass * (length**2 + height**2) / 12,
            mass * (length**2 + beam**2) / 12)


BOAT = VehicleSpec(
    name="boat", label="Boat", description="Floating rigid body driven by thrusters",
    parameters=(
        MASS, INERTIA,
        Parameter("max_thrust", "Max Thrust", "N", "Largest force of each thruster, forward or reverse"),
    ),
    presets=(
        Preset("rib", "RIB Boat", "A five-metre rigid inflatable boat with two thrusters at the transom",
               dict(mass=DEFAULT_MASS, inertia=box_inertia(DEFAULT_MASS, DEFAULT_LENGTH, DEFAULT_BEAM, DEFAULT_HEIGHT),
                    max_thrust=1500.0)),
    ),
    default_preset="rib",
    inputs=(
        Input("thruster_1", "N", "Thrust of the starboard transom thruster", limit="max_thrust"),
        Input("thruster_2", "N", "Thrust of the port transom thruster", limit="max_thrust"),
    ),
    parts=(Part("rudder", optional=True),),   # the model has no rudder: nothing turns it
    solvable=True,
)


def thruster_bounds(boat: Any, names: Sequence[str]) -> dict[str, tuple[float, float]]:
    """(lower, upper) of each of a boat's thruster inputs ``names`` (thruster_1 … thruster_n: one per thruster),
    every one bounded as the spec's thrusters."""
    bounds = BOAT.inputs[0].bounds(boat)
    return {name: bounds for name in names}


__all__ = ["BOAT", "thruster_bounds", "box_inertia", "DEFAULT_LENGTH", "DEFAULT_BEAM", "DEFAULT_HEIGHT",
           "DEFAULT_MASS"]
