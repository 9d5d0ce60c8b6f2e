"""The ``solve`` scenario (TOML) → a DMOC problem. Every error names its key.

Keys (a contract relied on outside the project; SI units, angles in radians)::

    [vehicle]            type and parameters exactly as for ``simulate`` (same readers), plus
                         collision_radius = r   (one sphere at the body origin), or
                         collision_spheres = [[x, y, z, r], ...]   (body frame)
    [integrator]         method (as for simulate), steps, alpha (car, snakeboard)
    [time]               duration = T   (fixed)   or   min = …, max = …   (free duration, h = T/N;
                         from 0.001 s to 86 400 s)
    [start]              the full start state (vehicle keys: position, heading | orientation,
                         speed | velocity, shape entries …; defaults 0 / identity)
    [goal]               any subset of the same keys (each given one is imposed at the last node)
    [[waypoints]]        time, position, radius (default 0.5 m), heading (optional), exact (default
                         false: at the node nearest to time; true: at time itself, between nodes),
                         point = [x, y, z] (the body point that must pass, body frame; default the
                         reference point: the car's rear axle, an SE(3) vehicle's centre of mass;
                         z is ignored for the planar car and snakeboard)
    [[obstacles]]        type = "sphere" (center, radius) | "box" (center, half_extents,
                         orientation = [w, x, y, z]) | "capsule" (a, b, radius); margin (default 0);
                         contact = [{time, allowance, span}, ...] (optional, fixed duration): the
                         vehicle touches the obstacle at ``time`` (s); node k's clearance floor is
                         allowance + (margin − allowance) min(1, |t_k − time|/span)² (the lowest over
                         the contacts): ``allowance`` (m, at most the margin, negative where the spheres
                         reach into the obstacle at the touching pose), ``span`` (s, default 1)
    [bounds]             [lo, hi] per input and shape variable, and speed
    [cost]               effort, duration, path_length, hazard, smoothness (weights, default
                         effort = 1), hazard_length (m, default 1); [cost.input_weights] per input
    [solver]             backend = "scipy" | "ipopt", max_iter, tol, time_limit_s, hessian
                         ("exact" | "limited-memory")

Waypoint times are seconds and need a fixed duration (with a free duration a waypoint has no
fixed node). Positions have the vehicle's dimension (2 for the planar car and snakeboard,
3 otherwise); obstacles are always 3-D (planar vehicles move in the plane z = 0).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from ..errors import ScenarioError
from ..lie import quaternion
from ..scenario import Table
from .constraints import CostWeights, Spec, Waypoint
from .models import MODELS, Model
from .obstacles import Contact, Obstacle
from .solve import BACKENDS, SolverOptions

OBSTACLE_TYPES = ("sphere", "box", "capsule")
MAX_DURATION_S = 86_400.0  # a day: longer is no shot, and h = T/N that large breaks the discretisation
MIN_DURATION_S = 1e-3      # a millisecond: shorter, h = T/N underflows the dynamics' divisions
COST_KEYS = ("effort", "duration", "path_length", "hazard", "smoothness")


@dataclass
class Setup:
    model: Model
    spec: Spec
    options: SolverOptions


def read_spheres(vehicle: Table, default_radius: float) -> np.ndarray:
    if vehicle.has("collision_radius") and vehicle.has("collision_spheres"):
        raise vehicle.error("collision_spheres", "give collision_radius or collision_spheres, not both")
    if vehicle.has("collision_spheres"):
        rows = vehicle.rows("collision_spheres", 4)
        bad = np.flatnonzero(rows[:, 3] < 0)
        if bad.size:
            raise ScenarioError(f"[vehicle] collision_spheres[{int(bad[0])}]", "radius must not be negative")
        return rows
    r = vehicle.number("collision_radius", default_radius, nonnegative=True)
    return np.array([[0.0, 0.0, 0.0, r]])


def read_time(root: Table, model: Model) -> None:
    t = root.table("time", required=True)
    if t.has("duration"):
        if t.has("min") or t.has("max"):
            raise t.error("duration", "give either duration (fixed) or min/max (free duration), not both")
        model.base[model.T] = t.number("duration", positive=True, low=MIN_DURATION_S, high=MAX_DURATION_S)
        model.fixed[model.T] = True
    elif t.has("min") or t.has("max"):
        lo = t.number("min", positive=True, low=MIN_DURATION_S, high=MAX_DURATION_S)
        hi = t.number("max", positive=True, low=MIN_DURATION_S, high=MAX_DURATION_S)
        if lo > hi:
            raise t.error("min", f"min {lo:g} exceeds max {hi:g}")
        model.lo[model.T], model.hi[model.T] = lo, hi
        model.base[model.T] = 0.5 * (lo + hi)
    else:
        raise t.error("duration", "missing (or give min and max for a free duration)")
    t.finish()


def read_contacts(t: Table, margin: float, model: Model | None) -> tuple[Contact, ...]:
    """An obstacle's ``contact`` array: each {time, allowance, span}, the time within the fixed duration,
    the allowance (m, the lowered floor) at most the margin, span (s) positive (default 1)."""
    out = []
    for c in t.tables("contact"):
        if model is not None and not model.fixed[model.T]:
            raise c.error("time", "contacts need a fixed [time] duration")
        high = float(model.base[model.T]) if model is not None else None
        time = c.number("time", nonnegative=True, high=high)
        allowance = c.number("allowance", high=margin)
        span = c.number("span", 1.0, positive=True, high=MAX_DURATION_S)
        c.finish()
        out.append(Contact(float(time), float(allowance), float(span)))
    return tuple(out)


def read_obstacles(root: Table, model: Model | None = None) -> list[Obstacle]:
    out = []
    for i, t in enumerate(root.tables("obstacles")):
        kind = t.string("type", choices=OBSTACLE_TYPES)
        label = f"obstacle #{i + 1} ({kind})"
        margin = t.number("margin", 0.0, nonnegative=True)
        contacts = read_contacts(t, margin, model)
        if kind == "sphere":
            ob = Obstacle(kind, center=t.vector("center", 3), radius=t.number("radius", positive=True),
                          margin=margin, label=label, contacts=contacts)
        elif kind == "box":
            q = t.quaternion("orientation", [1.0, 0.0, 0.0, 0.0])
            ob = Obstacle(kind, center=t.vector("center", 3), half_extents=t.vector("half_extents", 3, positive=True),
                          rotation=quaternion.to_matrix(q), margin=margin, label=label, contacts=contacts)
        else:
            a, b = t.vector("a", 3), t.vector("b", 3)
            if np.linalg.norm(b - a) == 0.0:
                raise t.error("b", "must differ from a (use a sphere for a point)")
            ob = Obstacle(kind, a=a, b=b, radius=t.number("radius", positive=True), margin=margin, label=label,
                          contacts=contacts)
        t.finish()
        out.append(ob)
    return out


def read_waypoints(root: Table, model: Model) -> list[Waypoint]:
    out = []
    fixed_T = bool(model.fixed[model.T])
    dim = model.position_dim
    for i, t in enumerate(root.tables("waypoints")):
        time = t.number("time", positive=True)
        if not fixed_T:
            raise t.error("time", "waypoints need a fixed [time] duration")
        T = float(model.base[model.T])
        if time > T:
            raise t.error("time", f"{time:g} s is after the end of the motion ({T:g} s)")
        pos = t.vector("position", dim)
        heading = t.number("heading") if t.has("heading") else None
        wp = Waypoint(time=time, position=np.concatenate([pos, np.zeros(3 - dim)]),
                      radius=t.number("radius", 0.5, nonnegative=True), heading=heading, label=f"#{i + 1}",
                      exact=t.boolean("exact", False),
                      point=t.vector("point", 3, [0.0, 0.0, 0.0]) * ([1.0, 1.0, 0.0] if dim == 2 else 1.0))
        t.finish()
        out.append(wp)
    return out


def read_cost(root: Table, model: Model) -> CostWeights:
    t = root.table("cost")
    given = any(t.has(k) for k in COST_KEYS)
    w = CostWeights(**{k: t.number(k, 1.0 if (k == "effort" and not given) else 0.0, nonnegative=True)
                       for k in COST_KEYS})
    w.hazard_length = t.number("hazard_length", 1.0, positive=True)
    iw = t.table("input_weights")
    for name in iw.keys():
        if name not in model.inputs:
            raise ScenarioError(f"[cost.input_weights] {name}",
                                f"unknown input; this vehicle's inputs are: {', '.join(model.inputs)}")
        w.input_weights[name] = iw.number(name, nonnegative=True)
    iw.finish()
    if w.duration and model.fixed[model.T]:
        raise t.error("duration", "a duration cost needs a free duration ([time] min and max)")
    if not any(getattr(w, k) for k in COST_KEYS):
        raise t.error("effort", "every cost weight is zero: nothing to minimise")
    t.finish()
    return w


def read_solver(root: Table, backend: str | None, model: Model | None = None) -> SolverOptions:
    t = root.table("solver")
    o = SolverOptions()
    if model is not None:
        o.tol = getattr(model, "default_tol", o.tol)
    name = t.string("backend", "scipy", choices=BACKENDS)
    o.backend = backend or name
    o.max_iter = t.number("max_iter", o.max_iter, integer=True, low=1)
    o.tol = t.number("tol", o.tol, positive=True)
    o.constraint_tol = t.number("constraint_tol", o.constraint_tol, positive=True)
    o.time_limit_s = t.number("time_limit_s", o.time_limit_s, positive=True)
    o.hessian = t.string("hessian", o.hessian, choices=("exact", "limited-memory"))
    o.method = t.string("method", o.method, choices=("auto", "ipm", "trust-constr"))
    t.finish()
    return o


def read(root: Table, backend: str | None = None) -> Setup:
    """Read a whole solve scenario; raises ScenarioError naming the key."""
    vehicle = root.table("vehicle", required=True)
    kind = vehicle.string("type", choices=sorted(MODELS))
    module = importlib.import_module(f".models.{MODELS[kind]}", __package__)
    model: Model = module.read_model(root, vehicle)
    spheres = read_spheres(vehicle, model.default_collision_radius)
    vehicle.finish()
    read_time(root, model)
    for key in ("start", "goal", "bounds"):
        t = root.table(key)
        getattr(model, f"read_{key}")(t)
        t.finish()
    spec = Spec(spheres=spheres, obstacles=read_obstacles(root, model), waypoints=read_waypoints(root, model),
                cost=read_cost(root, model))
    options = read_solver(root, backend, model)
    root.finish()
    return Setup(model, spec, options)


__all__ = ["read", "Setup", "read_spheres", "OBSTACLE_TYPES"]
