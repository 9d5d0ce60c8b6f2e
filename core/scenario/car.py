"""Scenario reader for ``type = "car"``: the car of §5.2.1 with the explicit nonholonomic update.

Keys (a contract relied on outside the project; SI units, angles in radians)::

    [vehicle]
    type = "car"
    preset = "hatchback"          # optional: "hatchback" or "pickup" fills every parameter below;
                                  # any parameter given explicitly overrides the preset's value.
                                  # Without a preset, every parameter is required.
    mass = 1200.0                 # kg
    wheel_inertia = 1.8           # kg·m², rear wheels + driveline about the rear axle
    yaw_inertia = 1700.0          # kg·m², about the vertical axis
    wheel_radius = 0.30           # m
    wheelbase = 2.55              # m, rear axle to front axle
    max_steering_angle = 0.61     # rad, below π/2; the steering saturates there (stats warning)
    max_steering_rate = 1.2       # 1/s, limit on |steering_rate| (the rate of tan φ)
    max_torque = 2000.0           # N·m, limit on |torque| at the rear wheels

    [vehicle.terrain]             # optional: a sloped plane or a triangle mesh (core.scenario.terrain);
                                  # its gravity along the ground enters the drive, the path stays planar

    [integrator]
    method = "vi"                 # the only method (default)
    dt = 0.02                     # s
    steps = 3000
    alpha = 0.5                   # quadrature point α ∈ [0, 1] (default ½: second order)

    [initial]                     # all optional, default 0
    position = [0.0, 0.0]         # m
    heading = 0.0                 # rad
    steering_angle = 0.0          # rad, |·| ≤ max_steering_angle
    wheel_angle = 0.0             # rad
    wheel_rate = 0.0              # rad/s (rear wheel; forward speed = wheel_radius · wheel_rate)

    [controls.torque]             # N·m, values = [...] per step or offset + sinusoids
    [controls.steering_rate]      # 1/s (rate of tan φ); both default to zero

Inputs outside ±max_torque / ±max_steering_rate are refused with one line naming the input.
"""
from __future__ import annotations

from ..trajectory import Trajectory
from ..vehicles.car import Car, CarInitial, simulate as simulate_car
from ..vehicles.car_spec import CAR
from . import Table
from .common import read_integrator, read_parameters
from .controls import read_controls
from .terrain import read_terrain

METHODS = ("vi",)


def read_car(vehicle: Table) -> Car:
    """``[vehicle]`` parameters, with an optional ``preset`` supplying defaults."""
    preset = vehicle.string("preset", None, choices=sorted(CAR.preset_names)) if vehicle.has("preset") else None
    base = CAR.preset(preset).values if preset else {}
    return Car(**read_parameters(vehicle, CAR, base))


def read_initial(root: Table) -> CarInitial:
    t = root.table("initial")
    position = t.vector("position", 2, [0.0, 0.0])
    initial = CarInitial(position=(float(position[0]), float(position[1])),
                         heading=t.number("heading", 0.0),
                         steering_angle=t.number("steering_angle", 0.0),
                         wheel_angle=t.number("wheel_angle", 0.0),
                         wheel_rate=t.number("wheel_rate", 0.0))
    t.finish()
    return initial


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    car = read_car(vehicle)
    terrain = read_terrain(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS, "vi", with_alpha=True)
    initial = read_initial(root)
    initial.check(car)
    controls = read_controls(root, CAR.input_names, settings.steps, settings.dt, CAR.input_bounds(car))
    root.finish()
    return simulate_car(car, initial, controls, settings.dt, settings.steps, settings.alpha, terrain)
