"""The car's spec (main paper §5.2.1, Kelly–Murray model; dynamics in :mod:`core.vehicles.car`).

Presets: plausible SI values. Yaw inertia somewhat below m (length² + width²)/12 of a uniform box (the
mass sits between the axles); the rear-wheel inertia lumps both rear wheels and the driveline;
max_torque is at the wheels (engine × gearing); max_steering_rate is in tan(φ) per second (lock to
lock in about 1.2–1.3 s). A scenario without a preset gives every parameter.
"""
from __future__ import annotations

import math

from .spec import MASS, Channel, Input, Parameter, Part, Preset, VehicleSpec

WHEELS = ("rear_left", "rear_right", "front_left", "front_right")

CAR = VehicleSpec(
    name="car", label="Car", description="Rear-wheel drive car with front steering (Kelly–Murray model)",
    parameters=(
        MASS,
        Parameter("wheel_inertia", "Wheel Inertia", "kg·m²", "Rolling inertia of the rear wheels and driveline",
                  minimum=1e-6),
        Parameter("yaw_inertia", "Yaw Inertia", "kg·m²", "Moment of inertia about the vertical axis", minimum=1e-6),
        Parameter("wheel_radius", "Wheel Radius", "m", "Radius of the driven wheels", is_length=True, minimum=1e-3),
        Parameter("wheelbase", "Wheelbase", "m", "Distance between the front and rear axles", is_length=True,
                  minimum=1e-3),
        Parameter("max_steering_angle", "Max Steering Angle", "rad",
                  "Largest steering angle either way"),
        Parameter("max_steering_rate", "Max Steering Rate", "1/s",
                  "Largest rate of tan(steering angle), about rad/s near straight ahead"),
        Parameter("max_torque", "Max Torque", "N·m", "Largest drive torque at the rear wheels"),
    ),
    presets=(
        Preset("hatchback", "Hatchback", "A small front-engined car",
               dict(mass=1200.0, wheel_inertia=1.8, yaw_inertia=1700.0, wheel_radius=0.30, wheelbase=2.55,
                    max_steering_angle=math.radians(35.0), max_steering_rate=1.2, max_torque=2000.0)),
        Preset("pickup", "Pickup Truck", "A heavy, long-wheelbase car",
               dict(mass=2200.0, wheel_inertia=3.5, yaw_inertia=4200.0, wheel_radius=0.38, wheelbase=3.30,
                    max_steering_angle=math.radians(33.0), max_steering_rate=1.0, max_torque=4000.0)),
    ),
    inputs=(
        Input("torque", "N·m", "Drive torque f^ψ at the rear wheels", limit="max_torque"),
        Input("steering_rate", "1/s", "Rate u^σ of σ = tan φ (not the rate of φ)", limit="max_steering_rate"),
    ),
    shape=(
        Channel("wheel_angle", "rad", "Rolling angle ψ of the rear wheels"),
        Channel("steering_angle", "rad", "Steering angle φ = atan σ", limit="max_steering_angle"),
    ),
    derived=(
        Channel("front_wheel_roll", "rad", "Rolling angle of the front wheels: 1/cos φ as far as the rear ones"),
        *(Channel(f"wheel_angle_{w}", "rad", f"Spin of the {w.replace('_', ' ')} wheel along its own path, "
                  "when the trajectory knows the car's wheels") for w in WHEELS),
    ),
    parts=(
        Part("wheel_rear_left", ("wheel_angle_rear_left", "wheel_angle"), spins=True),
        Part("wheel_rear_right", ("wheel_angle_rear_right", "wheel_angle"), spins=True),
        Part("wheel_front_left", ("wheel_angle_front_left", "front_wheel_roll"), spins=True),
        Part("wheel_front_right", ("wheel_angle_front_right", "front_wheel_roll"), spins=True),
        # the front wheels steer themselves without knuckles
        Part("knuckle_front_left", ("steering_angle",), optional=True),
        Part("knuckle_front_right", ("steering_angle",), optional=True),
    ),
    planar=True, solvable=True,
)

__all__ = ["CAR", "WHEELS"]
