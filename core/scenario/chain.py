"""Scenario reader for ``type = "chain"``: rigid bodies joined by revolute joints, base free in SE(3)
(Park & Chung §V; model in :mod:`core.vehicles.chain`).

``[vehicle]``: ``base_mass`` (kg), ``base_inertia`` = [J₁, J₂, J₃] (kg m², principal, about the
base's centre of mass, which is the base frame's origin), ``gravity`` (bool, default false;
9.81 m/s² along −z).

``[[joints]]`` (one table per joint, numbered #1, #2, … in file order; joint i carries body i):
``parent`` (0 = the base, else the number of an earlier joint — a tree is allowed),
``position`` (joint origin in the parent's frame, m), ``axis`` (rotation axis in the parent's
frame, non-zero; normalised), ``mass`` (kg), ``inertia`` (principal moments about the body's
centre of mass, axes of the body's frame, kg m²), ``offset`` (the body's centre of mass from the
joint in the body's frame, m; default [0, 0, 0]). Body i's frame is the parent's frame turned by
the joint angle about the axis, with its origin at the joint.

``[integrator]``: ``method`` (default "cf4"; any of ``magnus``, ``cg2``–``cg4``, ``cf2``–``cf4``,
``mk2``–``mk4``, ``rk4``), ``dt``, ``steps``.

``[initial]``: base ``position``, ``orientation`` (w, x, y, z), ``angular_velocity`` and
``linear_velocity`` (base body frame), ``joint_angles`` and ``joint_rates`` (one per joint;
default zero).

Inputs (``[controls.NAME]``, one value per step, held over the step; default zero):
``torque_1`` … ``torque_N`` (joint torques, N m) and body wrenches
``body_K_torque_x|y|z``, ``body_K_force_x|y|z`` for K = 0 (base) … N, in body K's frame about
its centre of mass.

Output: the base trajectory as for a rigid body, ``shape`` ``joint_1`` … (rad), series
``energy`` (kinetic + potential) and ``momentum`` (``angular``, ``linear``: spatial momentum of
the whole system about the world origin), plus ``joint_rates`` and ``links`` (world pose of each
body's frame). A bad chain description is refused naming the entry, e.g.
``[[joints]] #2 parent: ...``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..lie import quaternion
from ..trajectory import Trajectory
from ..vehicles.chain import CHAIN_METHODS, DEFAULT_METHOD, Chain, ChainState, Joint
from . import Table, check_number, check_vector
from .common import read_integrator
from .controls import read_controls

JOINT_KEYS = ("parent", "position", "axis", "mass", "inertia", "offset")
_WRENCH_PARTS = ("torque_x", "torque_y", "torque_z", "force_x", "force_y", "force_z")


def input_names(n_joints: int) -> list[str]:
    """``torque_1`` … ``torque_N``, then ``body_K_<part>`` for K = 0 … N."""
    return ([f"torque_{i}" for i in range(1, n_joints + 1)]
            + [f"body_{k}_{p}" for k in range(n_joints + 1) for p in _WRENCH_PARTS])


def _read_joint(i: int, data: Any) -> Joint:
    where = lambda key: f"[[joints]] #{i} {key}"  # noqa: E731
    if not isinstance(data, dict):
        raise ScenarioError(f"[[joints]] #{i}", "must be a table")
    for key in data:
        if key not in JOINT_KEYS:
            raise ScenarioError(where(key), f"unknown key; a joint has: {', '.join(JOINT_KEYS)}")
    for key in JOINT_KEYS[:-1]:
        if key not in data:
            raise ScenarioError(where(key), "missing")
    parent = data["parent"]
    if isinstance(parent, bool) or not isinstance(parent, int):
        raise ScenarioError(where("parent"), f"must be a whole number (0 = the base), got {parent!r}")
    return Joint(parent=parent,
                 position=check_vector(data["position"], where("position"), 3),
                 axis=check_vector(data["axis"], where("axis"), 3),
                 mass=check_number(data["mass"], where("mass"), positive=True),
                 inertia=check_vector(data["inertia"], where("inertia"), 3, positive=True),
                 offset=check_vector(data.get("offset", [0.0, 0.0, 0.0]), where("offset"), 3))


def read_chain(root: Table, vehicle: Table) -> Chain:
    """The chain of ``[vehicle]`` and ``[[joints]]`` (validated; errors name the entry)."""
    base_mass = vehicle.number("base_mass", positive=True)
    base_inertia = vehicle.vector("base_inertia", 3, positive=True)
    gravity = vehicle.boolean("gravity", False)
    joints = [_read_joint(i, t.data) for i, t in enumerate(root.tables("joints"), start=1)]
    return Chain(base_mass, base_inertia, joints, gravity)


def read_initial(root: Table, n_joints: int) -> ChainState:
    t = root.table("initial")
    x = t.vector("position", 3, [0.0, 0.0, 0.0])
    q = t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0])
    w = t.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
    v = t.vector("linear_velocity", 3, [0.0, 0.0, 0.0])
    angles = t.vector("joint_angles", n_joints, np.zeros(n_joints))
    rates = t.vector("joint_rates", n_joints, np.zeros(n_joints))
    t.finish()
    return ChainState(R=quaternion.to_matrix(q), x=x, omega=w, v=v, q=angles, qd=rates)


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    chain = read_chain(root, vehicle)
    vehicle.finish()
    settings = read_integrator(root, CHAIN_METHODS, default_method=DEFAULT_METHOD)
    initial = read_initial(root, chain.n_joints)
    n = chain.n_joints
    torques = wrenches = None
    if root.has("controls"):
        c = read_controls(root, input_names(n), settings.steps, settings.dt)
        torques = np.stack([c[f"torque_{i}"] for i in range(1, n + 1)], axis=-1) if n else None
        wrenches = np.stack([np.stack([c[f"body_{k}_{p}"] for p in _WRENCH_PARTS], axis=-1)
                             for k in range(n + 1)], axis=-2)
    root.finish()
    return chain.simulate(initial, settings.dt, settings.steps, settings.method, torques, wrenches)


__all__ = ["simulate", "read_chain", "read_initial", "input_names", "JOINT_KEYS"]
