"""Scenario reader for ``type = "rigid_body"``: a free rigid body, optionally under gravity."""
from __future__ import annotations

from ..integrators import METHODS, integrate
from ..trajectory import Trajectory
from ..vehicles.rigid_body import RigidBody
from . import Table
from .common import read_integrator, read_se3_initial


def read_body(vehicle: Table) -> RigidBody:
    return RigidBody(mass=vehicle.number("mass", positive=True),
                     inertia=vehicle.vector("inertia", 3, positive=True),
                     gravity=vehicle.boolean("gravity", False))


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
