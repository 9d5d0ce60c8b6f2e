"""Scenario reader for ``type = "tree"``: a mechanism in generalised coordinates (Johnson & Murphey).

Layout (every key is checked; unknown keys are refused)::

    [vehicle]
    type = "tree"
    gravity = [0.0, 0.0, -9.81]          # optional, this default

    [[frames]]                           # one per frame, any order
    name = "link1"
    parent = "world"                     # "world" (default) or another frame's name
    transform = "ry"                     # tx ty tz rx ry rz (translation along / rotation about the
                                         # parent's axis) or fixed
    variable = "theta1"                  # a configuration variable's name, or
    value = 0.5                          # the constant (m or rad): exactly one of the two
    mass = 1.0                           # optional, > 0: a body at the frame's origin
    inertia = [0.1, 0.1, 0.0]            # optional, principal inertias in the frame's axes (needs mass)
    kinematic = false                    # optional: the variable is prescribed, not solved for
    # transform = "fixed" takes instead:
    position = [0.0, 0.0, -1.0]          # offset in the parent's axes (default 0)
    orientation = [1.0, 0.0, 0.0, 0.0]   # unit quaternion w, x, y, z (default identity)

    [[constraints]]                      # holonomic, enforced exactly by multipliers
    type = "distance"                    # |p_a − p_b| = length (> 0)
    a = "link1"
    b = "link2"
    length = 1.0
    # type = "point_on_plane": the origin of frame b stays on the plane through frame a's
    #   origin with normal `normal` (in a's axes, default [0, 0, 1]), shifted by `offset`
    #   (signed distance along the normal, default 0).
    # type = "point_to_point": the origins of a and b coincide along `directions`
    #   (default [[1,0,0], [0,1,0], [0,0,1]]; a planar mechanism lists its two in-plane
    #   axes) given in the axes of frame `frame` (default "world").

    [[springs]]                          # V = ½ stiffness (|p_a − p_b| − rest_length)²
    a = "world"
    b = "slider"
    stiffness = 100.0
    rest_length = 0.5                    # default 0

    [[dampers]]                          # generalised force −coefficient · dq
    variable = "theta1"
    coefficient = 0.1

    [[forces]]                           # constant generalised force (N or N·m)
    variable = "theta1"
    value = 0.5

    [[wrenches]]                         # constant body wrench at a frame's origin, frame axes
    frame = "link2"
    torque = [0.0, 0.1, 0.0]             # default 0
    force = [0.0, 0.0, 0.0]              # default 0

    [prescribed]                         # drives of kinematic variables: cubic spline samples
    cart = { time = [0.0, 1.0, 2.0], value = [0.0, 0.5, 0.0] }

    [initial]
    q = { theta1 = 0.5 }                 # missing variables start at 0; projected onto the constraints
    dq = { theta1 = 0.0 }                # missing rates are 0 (a kinematic variable without
                                         # [prescribed] samples moves at its initial rate)

    [integrator]
    method = "variational"               # default; "variational4": the same step composed as Yoshida's
                                         # triple jump (order 4, 3 sub-steps, alpha must be 0.5);
                                         # "rk4": the index-reduced baseline
    dt = 0.01
    steps = 1000
    alpha = 0.5                          # variational only: midpoint parameter in [0, 1]

Output: see :mod:`core.tree.output`.
"""
from __future__ import annotations

import numpy as np

from ..errors import ScenarioError
from ..trajectory import Trajectory
from ..tree import rk4, variational
from ..tree.constraints import Distance, PointOnPlane, PointToPoint
from ..tree.frames import TRANSFORMS, WORLD, Frame, Tree
from ..tree.output import to_trajectory
from ..tree.prescribed import Prescribed
from ..tree.system import Body, Damper, Force, Spring, System, Wrench
from . import Table
from .common import read_integrator

METHODS: tuple[str, ...] = ("variational", "variational4", "rk4")
CONSTRAINT_TYPES: tuple[str, ...] = ("distance", "point_on_plane", "point_to_point")


def _name(t: Table, key: str, default=None) -> str:
    value = t.string(key) if default is None else t.string(key, default)
    if not value:
        raise t.error(key, "must not be empty")
    return value


def read_frames(root: Table) -> tuple[list[Frame], list[Body]]:
    entries = root.tables("frames")
    if not entries:
        raise ScenarioError("[[frames]]", "missing: give at least one frame")
    frames, bodies = [], []
    for t in entries:
        name = _name(t, "name")
        parent = _name(t, "parent", WORLD)
        kind = t.string("transform", choices=TRANSFORMS)
        kinematic = t.boolean("kinematic", False)
        if kind == "fixed":
            for key in ("variable", "value"):
                if t.has(key):
                    raise t.error(key, "a fixed frame takes position and orientation instead")
            position = t.vector("position", 3, [0.0, 0.0, 0.0])
            orientation = t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0])
            if kinematic:
                raise t.error("kinematic", "only a frame with a variable can be kinematic")
            frame = Frame(name, parent, kind, position=tuple(position), orientation=tuple(orientation))
        else:
            for key in ("position", "orientation"):
                if t.has(key):
                    raise t.error(key, f"only a fixed frame takes {key} (this one is {kind})")
            if t.has("variable") and t.has("value"):
                raise t.error("value", "give either a variable or a constant value, not both")
            if t.has("variable"):
                frame = Frame(name, parent, kind, variable=_name(t, "variable"), kinematic=kinematic)
            elif t.has("value"):
                if kinematic:
                    raise t.error("kinematic", "only a frame with a variable can be kinematic")
                frame = Frame(name, parent, kind, value=t.number("value"))
            else:
                raise t.error("variable", f"missing: a {kind} frame needs a variable name or a constant value")
        if t.has("mass"):
            mass = t.number("mass", positive=True)
            inertia = t.vector("inertia", 3, [0.0, 0.0, 0.0], nonnegative=True)
            bodies.append(Body(name, mass, tuple(inertia)))
        elif t.has("inertia"):
            raise t.error("inertia", "needs a mass on the same frame")
        t.finish()
        frames.append(frame)
    return frames, bodies


def read_constraints(root: Table) -> list:
    out = []
    for t in root.tables("constraints"):
        kind = t.string("type", choices=CONSTRAINT_TYPES)
        a, b = _name(t, "a"), _name(t, "b")
        if kind == "distance":
            out.append(Distance(a, b, t.number("length", positive=True)))
        elif kind == "point_on_plane":
            out.append(PointOnPlane(a, b, tuple(t.vector("normal", 3, [0.0, 0.0, 1.0])), t.number("offset", 0.0)))
        else:
            dirs = t.rows("directions", 3) if t.has("directions") else np.eye(3)
            out.append(PointToPoint(a, b, tuple(map(tuple, dirs)), _name(t, "frame", WORLD)))
        t.finish()
    return out


def read_forces(root: Table) -> tuple[list[Spring], list[Damper], list[Force], list[Wrench]]:
    springs = []
    for t in root.tables("springs"):
        springs.append(Spring(_name(t, "a"), _name(t, "b"), t.number("stiffness", nonnegative=True),
                              t.number("rest_length", 0.0, nonnegative=True)))
        t.finish()
    dampers = []
    for t in root.tables("dampers"):
        dampers.append(Damper(_name(t, "variable"), t.number("coefficient", nonnegative=True)))
        t.finish()
    forces = []
    for t in root.tables("forces"):
        forces.append(Force(_name(t, "variable"), t.number("value")))
        t.finish()
    wrenches = []
    for t in root.tables("wrenches"):
        torque = t.vector("torque", 3, [0.0, 0.0, 0.0])
        force = t.vector("force", 3, [0.0, 0.0, 0.0])
        wrenches.append(Wrench(_name(t, "frame"), tuple(np.concatenate([torque, force]))))
        t.finish()
    return springs, dampers, forces, wrenches


def _named_numbers(t: Table, key: str, tree: Tree) -> dict[str, float]:
    sub = t.table(key)
    out = {}
    for name in list(sub.keys()):
        if name not in tree.var_index:
            raise sub.error(name, "unknown variable (the variables are: " + ", ".join(tree.variables) + ")")
        out[name] = sub.number(name)
    sub.finish()
    return out


def read_initial_and_drives(root: Table, tree: Tree) -> tuple[np.ndarray, np.ndarray, dict[str, Prescribed]]:
    t = root.table("initial")
    q = _named_numbers(t, "q", tree)
    dq = _named_numbers(t, "dq", tree)
    t.finish()
    p = root.table("prescribed")
    drives: dict[str, Prescribed] = {}
    for name in list(p.keys()):
        where = f"[prescribed] {name}"
        if name not in tree.var_index:
            raise ScenarioError(where, "unknown variable")
        if not tree.kinematic[tree.var_index[name]]:
            raise ScenarioError(where, f"variable {name!r} is not kinematic (set kinematic = true on its frame)")
        for table, label in ((q, "q"), (dq, "dq")):
            if name in table:
                raise ScenarioError(f"[initial.{label}] {name}", "is prescribed by [prescribed]; remove it here")
        s = p.table(name)
        times = s.vector("time")
        values = s.vector("value")
        s.finish()
        drives[name] = Prescribed.samples(times, values, where)
    p.finish()
    for j in np.flatnonzero(tree.kinematic):
        name = tree.variables[j]
        if name not in drives:
            drives[name] = Prescribed.constant_rate(q.get(name, 0.0), dq.get(name, 0.0))
    q0 = np.array([q.get(v, 0.0) for v in tree.variables])
    dq0 = np.array([dq.get(v, 0.0) for v in tree.variables])
    return q0, dq0, drives


def build(root: Table) -> tuple[System, np.ndarray, np.ndarray]:
    """Read and validate everything but the integrator; returns the system and (q₀, q̇₀)."""
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    gravity = vehicle.vector("gravity", 3, [0.0, 0.0, -9.81])
    vehicle.finish()
    frames, bodies = read_frames(root)
    tree = Tree(frames)
    constraints = read_constraints(root)
    springs, dampers, forces, wrenches = read_forces(root)
    q0, dq0, drives = read_initial_and_drives(root, tree)
    system = System(tree, bodies, gravity, springs, dampers, forces, wrenches, constraints, drives)
    return system, q0, dq0


def simulate(root: Table) -> Trajectory:
    system, q0, dq0 = build(root)
    settings = read_integrator(root, METHODS, default_method="variational", with_alpha=True)
    root.finish()
    if settings.method == "rk4":
        run = rk4.simulate(system, q0, dq0, settings.dt, settings.steps)
    else:
        composed = settings.method == "variational4"
        if composed and settings.alpha != 0.5:
            raise ScenarioError("[integrator] alpha", "method 'variational4' composes the symmetric step: "
                                f"alpha must be 0.5, got {settings.alpha:g}")
        run = variational.simulate(system, q0, dq0, settings.dt, settings.steps, alpha=settings.alpha,
                                   composition="triple_jump" if composed else "none")
    return to_trajectory(system, run)
