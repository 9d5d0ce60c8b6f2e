"""Scenario reader for ``type = "rigid_body"``: a free rigid body, optionally under gravity."""
from __future__ import annotations

from ..integrators import METHODS, integrate
from ..trajectory import Trajectory
from ..vehicles.rigid_body import RigidBody
from ..vehicles.rigid_body_spec import RIGID_BODY
from . import Table
from .common import read_integrator, read_parameters, read_se3_initial


def read_body(vehicle: Table) -> RigidBody:
    """Mass and inertia are required; gravity is off unless asked for."""
    return RigidBody(**read_parameters(vehicle, RIGID_BODY, RIGID_BODY.defaults()))


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    body = read_body(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS)
    initial = read_se3_initial(root)
    root.finish()
    traj = integrate(body.system(), initial, settings.dt, settings.steps, settings.method)
    traj.vehicle = "rigid_body"
    return traj
