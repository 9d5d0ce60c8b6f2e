"""Scenario reader for ``type = "helicopter"`` (paper §4.3.1; model in core.vehicles.helicopter).

``[vehicle]`` keys (SI units, angles in radians; every key optional, defaults of the
"light helicopter" preset — a Robinson R22-like 600 kg two-seater):

* ``mass`` (kg, 600), ``inertia`` = [J₁, J₂, J₃] roll, pitch, yaw (kg m², [300, 850, 700]);
* ``main_rotor_offset`` d_t, rotor hub height above the centre of mass (m, 1.2);
* ``tail_rotor_offset`` d_r, tail rotor distance behind the centre of mass (m, 4.5);
* ``max_tilt`` (rad, 10° = 0.1745), limit of |pitch_tilt| and |roll_tilt|;
* ``max_collective`` (N, default 1.6·mass·9.81), collective limit [0, max];
* ``max_yaw`` (N, 1000), tail-rotor force limit [−max, max];
* ``rotor_speed`` (rad/s, 55.5), spin of the animated main rotor.

Inputs (one value per step, ``[controls.NAME]`` with ``values`` or a sinusoid): ``collective``
(N), ``yaw`` (N), ``pitch_tilt`` and ``roll_tilt`` (rad, the commanded rotor tilt at each step).
Positive pitch_tilt accelerates forward (+x body), positive roll_tilt to the right (−y),
positive yaw turns the nose left (+z). ``[integrator]`` method (default "vi-cay-ln", the paper's Appendix A pairing), dt, steps;
``[initial]`` as for the rigid body. Gravity is 9.81 m/s² along −z.
"""
from __future__ import annotations

from ..integrators import METHODS, VEHICLE_DEFAULT_METHOD
from ..integrators.common import GRAVITY
from ..trajectory import Trajectory
from ..vehicles.helicopter import INPUTS, PRESETS, Helicopter
from . import Table
from .common import read_integrator, read_se3_initial
from .controls import read_controls


def read_helicopter(vehicle: Table) -> Helicopter:
    d = PRESETS["light helicopter"]
    mass = vehicle.number("mass", d.mass, positive=True)
    return Helicopter(
        mass=mass,
        inertia=tuple(vehicle.vector("inertia", 3, d.inertia, positive=True)),
        main_rotor_offset=vehicle.number("main_rotor_offset", d.main_rotor_offset, positive=True),
        tail_rotor_offset=vehicle.number("tail_rotor_offset", d.tail_rotor_offset, positive=True),
        max_tilt=vehicle.number("max_tilt", d.max_tilt, positive=True, high=1.5),
        max_collective=vehicle.number("max_collective", 1.6 * mass * GRAVITY, positive=True),
        max_yaw=vehicle.number("max_yaw", d.max_yaw, positive=True),
        rotor_speed=vehicle.number("rotor_speed", d.rotor_speed),
    )


def limits(heli: Helicopter) -> dict[str, tuple[float, float]]:
    return {"collective": (0.0, heli.max_collective), "yaw": (-heli.max_yaw, heli.max_yaw),
            "pitch_tilt": (-heli.max_tilt, heli.max_tilt), "roll_tilt": (-heli.max_tilt, heli.max_tilt)}


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    heli = read_helicopter(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS, default_method=VEHICLE_DEFAULT_METHOD)
    initial = read_se3_initial(root)
    controls = read_controls(root, INPUTS, settings.steps, settings.dt, limits(heli))
    root.finish()
    return heli.simulate(initial, controls, settings.dt, settings.steps, settings.method)
