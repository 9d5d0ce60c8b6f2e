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
from ..vehicles.helicopter import Helicopter
from ..vehicles.helicopter_spec import HELICOPTER
from . import Table
from .common import read_integrator, read_parameter, read_parameters, read_se3_initial
from .controls import read_controls


def read_helicopter(vehicle: Table) -> Helicopter:
    """``[vehicle]`` parameters; missing ones are the preset's, but ``max_collective`` is 1.6 × the weight."""
    defaults = HELICOPTER.defaults()
    mass = read_parameter(vehicle, HELICOPTER.parameter("mass"), defaults["mass"])
    defaults.update(mass=mass, max_collective=1.6 * mass * GRAVITY)
    return Helicopter(**read_parameters(vehicle, HELICOPTER, defaults))


def limits(heli: Helicopter) -> dict[str, tuple[float, float]]:
    return HELICOPTER.input_bounds(heli)


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    heli = read_helicopter(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS, default_method=VEHICLE_DEFAULT_METHOD)
    initial = read_se3_initial(root)
    controls = read_controls(root, HELICOPTER.input_names, settings.steps, settings.dt, limits(heli))
    root.finish()
    return heli.simulate(initial, controls, settings.dt, settings.steps, settings.method)
