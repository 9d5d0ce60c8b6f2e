"""The snakeboard's spec (main paper §5.2.2, docs/snakeboard.md; dynamics in :mod:`core.vehicles.snakeboard`).

The one preset, "rider", is a board (≈5 kg) with a standing 55 kg rider, plates 0.3 m from the centre
and a torso of 1 kg m². The model's yaw inertia of the whole board is m l², so rotor_inertia < m l².
"""
from __future__ import annotations

import math

from .spec import MASS, Channel, Input, Parameter, Part, Preset, VehicleSpec

SNAKEBOARD = VehicleSpec(
    name="snakeboard", label="Snakeboard", description="Snakeboard propelled by its rider's twist",
    parameters=(
        MASS,
        Parameter("half_wheelbase", "Half Wheelbase", "m", "Distance from the board's centre to each wheel axle",
                  is_length=True, minimum=1e-3),
        Parameter("rotor_inertia", "Rotor Inertia", "kg·m²",
                  "Inertia of the rider's twisting torso and arms about the vertical; must be below "
                  "mass × half wheelbase²", minimum=1e-6),
        Parameter("wheel_inertia", "Wheel Inertia", "kg·m²", "One foot plate with its wheels about its pivot",
                  minimum=1e-6),
        Parameter("max_wheel_angle", "Max Wheel Angle", "rad",
                  "Largest angle of the foot plates either way"),
        Parameter("max_rotor_torque", "Max Rotor Torque", "N·m", "Largest twisting torque of the rider"),
        Parameter("max_steering_torque", "Max Steering Torque", "N·m", "Largest torque turning the foot plates"),
    ),
    presets=(
        Preset("rider", "Snakeboard", "A snakeboard with a standing rider",
               dict(mass=60.0, half_wheelbase=0.3, rotor_inertia=1.0, wheel_inertia=0.05,
                    max_wheel_angle=math.radians(60.0), max_rotor_torque=80.0, max_steering_torque=20.0)),
    ),
    default_preset="rider",
    inputs=(
        Input("rotor_torque", "N·m", "The rider's twisting torque on the torso", limit="max_rotor_torque"),
        Input("steering_torque", "N·m", "Torque turning the foot plates", limit="max_steering_torque"),
    ),
    shape=(
        Channel("rotor_angle", "rad", "The rider's twist ψ"),
        Channel("wheel_angle", "rad", "Angle φ of the foot plates (front +φ, rear −φ)", limit="max_wheel_angle"),
    ),
    parts=(
        Part("truck_front", ("wheel_angle",)),
        Part("truck_rear", ("-wheel_angle",)),
        Part("rider", ("rotor_angle",), spins=True, optional=True),
    ),
    planar=True, solvable=True,
)

__all__ = ["SNAKEBOARD"]
