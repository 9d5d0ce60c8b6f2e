"""Scenario reader for ``type = "snakeboard"`` (main paper §5.2.2; see docs/snakeboard.md).

Keys (SI units, angles in radians; every ``[vehicle]`` key defaults to the rider preset
:meth:`core.vehicles.snakeboard.Snakeboard.rider`)::

    [vehicle]
    type = "snakeboard"
    mass = 60.0                 # m, board + rider [kg]
    half_wheelbase = 0.3        # l, centre to each wheel axle [m]
    rotor_inertia = 1.0         # I, the twisting torso ("rotor") [kg m²]; must be < m l²
    wheel_inertia = 0.05        # J, one steering plate with the foot [kg m²]
    max_wheel_angle = 1.0472    # |φ| limit [rad], below π/2; an inelastic stop holds it
    max_rotor_torque = 80.0     # |rotor_torque| limit [N m]
    max_steering_torque = 20.0  # |steering_torque| limit [N m]

    [integrator]
    dt = 0.01                   # step h [s]
    steps = 1000
    alpha = 0.5                 # quadrature point r_{k+α}; ½ is second order, 0 and 1 first order
    method = "variational"      # optional; the only method

    [initial]
    position = [0.0, 0.0]       # board centre (x, y) [m]
    heading = 0.0               # θ [rad]
    rotor_angle = 0.0           # ψ [rad]
    wheel_angle = 0.0           # φ [rad], |φ| ≤ max_wheel_angle
    rotor_rate = 0.0            # ψ̇ [rad/s]
    wheel_rate = 0.0            # φ̇ [rad/s]
    speed = 0.0                 # forward body speed v_x [m/s]  — or, instead of speed:
    # momentum = 0.0            # p = ⟨∂ℓ/∂ξ, e₁⟩ [kg m²/s] (the nonholonomic momentum)

    [controls.rotor_torque]     # values = [...] per step, or offset/amplitude/frequency/phase
    [controls.steering_torque]
"""
from __future__ import annotations

from ..errors import ScenarioError
from ..trajectory import Trajectory
from ..vehicles.snakeboard import Snakeboard, SnakeboardState, simulate as run
from ..vehicles.snakeboard_spec import SNAKEBOARD
from . import Table
from .common import read_integrator, read_parameters
from .controls import read_controls

PARAMETERS = SNAKEBOARD.parameter_names


def read_board(vehicle: Table) -> Snakeboard:
    # cross-checks (I < m l², max_wheel_angle < π/2) name their key
    return Snakeboard(**read_parameters(vehicle, SNAKEBOARD, SNAKEBOARD.defaults()))


def read_initial(root: Table, board: Snakeboard) -> SnakeboardState:
    t = root.table("initial")
    x, y = t.vector("position", 2, [0.0, 0.0])
    lo, hi = SNAKEBOARD.channel("wheel_angle").bounds(board)
    kw = dict(heading=t.number("heading", 0.0), x=float(x), y=float(y),
              rotor_angle=t.number("rotor_angle", 0.0),
              wheel_angle=t.number("wheel_angle", 0.0, low=lo, high=hi),
              rotor_rate=t.number("rotor_rate", 0.0), wheel_rate=t.number("wheel_rate", 0.0))
    if t.has("speed") and t.has("momentum"):
        raise t.error("momentum", "give either speed or momentum, not both")
    if t.has("momentum"):
        state = SnakeboardState(momentum=t.number("momentum"), **kw)
    else:
        state = SnakeboardState.with_speed(board, t.number("speed", 0.0), **kw)
    t.finish()
    return state


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type", choices=("snakeboard",))
    board = read_board(vehicle)
    vehicle.finish()
    settings = read_integrator(root, ("variational",), default_method="variational", with_alpha=True)
    initial = read_initial(root, board)
    controls = read_controls(root, SNAKEBOARD.input_names, settings.steps, settings.dt, SNAKEBOARD.input_bounds(board))
    root.finish()
    return run(board, initial, controls, settings.dt, settings.steps, settings.alpha)


__all__ = ["simulate", "read_board", "read_initial", "PARAMETERS", "ScenarioError"]
