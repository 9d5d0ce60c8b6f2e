"""A car riding over terrain: the planned planar motion, the wheels on the ground, the body on its suspension.

The car's path is planned in the ground plane (``core.vehicles.car``, ``core.dmoc``; the slope enters
only the drive dynamics). This module makes the body and wheels follow the terrain under that path,
as secondary motion (:mod:`core.parts.secondary` does the same for parts hung on a vehicle):

1. the wheels are put on the terrain at every step of a fine grid (:mod:`.wheels`: hubs, contacts,
   axles, and the terrain's height and attitude under the car);
2. the sprung body is simulated on the tree variational integrator (Johnson & Murphey 2009;
   ``docs/equations.md``, "Tree integrator"): kinematic root variables — x, y, the ground height under
   the rear axle point, yaw — follow the plan (their "kinematic configuration variables", eqs. 16, 44),
   and the body has dynamic heave, pitch and roll joints (g = T(x, y, ground + heave) R_z(yaw)
   R_y(pitch) R_x(roll), the frame of the rear axle point on the ground); each wheel's hub height is a
   further kinematic variable, and a vertical spring-damper joins it to the body's mount at the wheel's
   centre (:mod:`.struts`; springs and dampers from a ride frequency and damping ratio,
   :mod:`.suspension`); gravity acts along −z. The body's mass is the car's, at the centre of mass
   of :func:`.suspension.corners`; the wheels are massless and follow the ground exactly.
3. the body starts at rest on its springs (static equilibrium at the first sample) and the result is
   read at the samples: the body's world pose, each wheel's hub, contact, axle, suspension travel and
   spin along its own 3D contact path (:func:`.wheels.rolling_spin`); steering is the plan's.

The samples must be evenly spaced (animation frames or a trajectory's nodes); the integrator takes
``substeps`` = ⌈spacing / max_step⌉ steps per sample, and the planar pose between samples is the
cubic spline through them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy.interpolate import CubicSpline

from ..errors import ScenarioError
from ..lie import quaternion
from ..tree import variational
from ..tree.frames import WORLD, Frame, Tree
from ..tree.prescribed import Prescribed
from ..tree.system import Body, solve_small
from .struts import Strut, StrutSystem
from .surface import Terrain
from .suspension import GRAVITY, Suspension, corners
from .wheels import TRACK, Footing, RideWheel, car_wheels, place_wheels, rolling_spin

if TYPE_CHECKING:
    from ..trajectory import Trajectory

ROOT = "car"
MAX_STEP = 1.0 / 120.0     # s: the integrator's largest step (the bounce at 1–2 Hz needs far less)
KINEMATIC = ("x", "y", "ground", "yaw")
DYNAMIC = ("heave", "pitch", "roll")


@dataclass(frozen=True)
class PlanarPath:
    """The planned motion at evenly spaced samples: ``time`` (F,) s, ``position`` (F, 2) m of the rear
    axle point, ``heading`` and ``steering`` (F,) rad."""

    time: np.ndarray
    position: np.ndarray
    heading: np.ndarray
    steering: np.ndarray

    @classmethod
    def from_trajectory(cls, trajectory: "Trajectory") -> "PlanarPath":
        """The nodes of a car trajectory (heading, or the yaw of its orientation; steering_angle, or 0)."""
        heading = trajectory.heading
        if heading is None:
            R = quaternion.to_matrix(np.asarray(trajectory.orientation, dtype=float))
            heading = np.arctan2(R[:, 1, 0], R[:, 0, 0])
        n = len(trajectory.time)
        steering = trajectory.shape.get("steering_angle", np.zeros(n))
        return cls(np.asarray(trajectory.time, dtype=float), np.asarray(trajectory.position, dtype=float)[:, :2],
                   np.unwrap(np.asarray(heading, dtype=float)), np.asarray(steering, dtype=float))


@dataclass
class WheelRide:
    """One wheel at the samples: ``hub``, ``contact``, ``axle`` (F, 3) world; ``hub_in_body`` (F, 3)
    the hub in the body frame; ``spin`` (F,) rad from 0; ``steering`` (F,) rad; ``travel`` (F,) m, the
    hub's rise towards the body from its ride-height place (positive: the spring compressed)."""

    hub: np.ndarray
    contact: np.ndarray
    axle: np.ndarray
    hub_in_body: np.ndarray
    spin: np.ndarray
    steering: np.ndarray
    travel: np.ndarray


@dataclass
class RideResult:
    """The ride at the samples: the body frame (the rear axle point on the ground at ride height)
    ``position`` (F, 3) and ``orientation`` (F, 4, w x y z); ``heave`` (F,) m above the ground under
    the car, ``pitch`` and ``roll`` (F,) rad (R_z(yaw) R_y(pitch) R_x(roll)); the terrain under the
    car: ``ground`` (F,) m, ``terrain_pitch``, ``terrain_roll`` (F,) rad; ``centre_of_mass`` (F, 3);
    ``wheels``: role → :class:`WheelRide`."""

    time: np.ndarray
    position: np.ndarray
    orientation: np.ndarray
    heave: np.ndarray
    pitch: np.ndarray
    roll: np.ndarray
    ground: np.ndarray
    terrain_pitch: np.ndarray
    terrain_roll: np.ndarray
    centre_of_mass: np.ndarray
    wheels: dict[str, WheelRide]
    stats: dict = field(default_factory=dict)


def fine_grid(time: np.ndarray, max_step: float) -> tuple[int, float]:
    """(substeps per sample interval, step) for evenly spaced sample times."""
    t = np.asarray(time, dtype=float)
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)):
        raise ScenarioError("ride", "needs at least 2 finite sample times")
    gaps = np.diff(t)
    spacing = (t[-1] - t[0]) / (t.size - 1)
    if not spacing > 0 or np.max(np.abs(gaps - spacing)) > 1e-9 * max(1.0, float(np.max(np.abs(t)))):
        raise ScenarioError("ride", "the sample times must be evenly spaced and increasing")
    if not (math.isfinite(max_step) and max_step > 0):
        raise ScenarioError("ride", f"max_step must be a positive number of seconds, got {max_step}")
    substeps = max(1, math.ceil(spacing / max_step - 1e-9))
    return substeps, spacing / substeps


def refine(path: PlanarPath, substeps: int, dt: float) -> tuple[np.ndarray, ...]:
    """The planar pose on the fine grid (times from 0): cubic splines through the samples, which the
    grid keeps exactly at every ``substeps``-th node."""
    steps = (len(path.time) - 1) * substeps
    t = dt * np.arange(steps + 1)
    s = path.time - path.time[0]
    out = []
    for values in (path.position[:, 0], path.position[:, 1], path.heading, path.steering):
        fine = CubicSpline(s, values, bc_type="not-a-knot")(t) if len(s) > 2 else np.interp(t, s, values)
        fine[::substeps] = values
        out.append(fine)
    return (t, *out)


def ride_model(wheels: Sequence[RideWheel], suspension: Suspension, mass: float, yaw_inertia: float
               ) -> tuple[Tree, list[Body], list[Strut]]:
    """The tree, the body and the struts of the ride (module docstring, step 2). Kinematic variables:
    ``car.x``, ``car.y``, ``car.ground``, ``car.yaw`` and ``hub.<role>`` of every wheel; dynamic:
    ``car.heave``, ``car.pitch``, ``car.roll``."""
    roots = [(f"{ROOT}.x", "tx"), (f"{ROOT}.y", "ty"), (f"{ROOT}.ground", "tz"), (f"{ROOT}.yaw", "rz"),
             (f"{ROOT}.heave", "tz"), (f"{ROOT}.pitch", "ry"), (ROOT, "rx")]
    frames, parent = [], WORLD
    for i, (name, kind) in enumerate(roots):
        variable = f"{ROOT}.{(KINEMATIC + DYNAMIC)[i]}"
        frames.append(Frame(name, parent, kind, variable=variable, kinematic=i < len(KINEMATIC)))
        parent = name
    corner = corners(suspension, mass, {w.role: np.asarray(w.centre, dtype=float) for w in wheels})
    frames.append(Frame(f"{ROOT}.mass", ROOT, "fixed", position=tuple(corner.centre_of_mass)))
    frames += [Frame(f"hub.{w.role}", WORLD, "tz", variable=f"hub.{w.role}", kinematic=True) for w in wheels]
    struts = [Strut(ROOT, w.centre, f"hub.{w.role}", float(corner.stiffness[i]), float(corner.damping[i]),
                    corner.free_length) for i, w in enumerate(wheels)]
    body = Body(f"{ROOT}.mass", float(mass), suspension.inertia(float(yaw_inertia)))
    return Tree(frames), [body], struts


def build_system(wheels: Sequence[RideWheel], suspension: Suspension, mass: float, yaw_inertia: float,
                 time: np.ndarray, x: np.ndarray, y: np.ndarray, yaw: np.ndarray, footing: Footing
                 ) -> StrutSystem:
    """:func:`ride_model` driven by samples on the fine grid ``time`` (from 0): the planar pose, and the
    ground and hub heights of ``footing``."""
    tree, bodies, struts = ride_model(wheels, suspension, mass, yaw_inertia)
    series = {f"{ROOT}.x": x, f"{ROOT}.y": y, f"{ROOT}.ground": footing.ground, f"{ROOT}.yaw": yaw}
    series.update({f"hub.{w.role}": footing.hub[:, i, 2] for i, w in enumerate(wheels)})
    drives = {name: Prescribed.samples(time, values, where=f"ride {name}") for name, values in series.items()}
    return StrutSystem(tree, bodies, gravity=(0.0, 0.0, -GRAVITY), drives=drives, struts=struts)


def static_equilibrium(system: StrutSystem, q: np.ndarray, tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
    """q with its dynamic entries moved (Newton on ∂V/∂q = 0) to where the body rests on its springs."""
    q = np.array(q, dtype=float)
    d = system.dyn
    for _ in range(max_iter):
        _, V_q, V_qq = system.potential(system.kinematics(q), 2)
        step = solve_small(V_qq[np.ix_(d, d)], -V_q[d])
        q[d] += step
        if np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(q[d]))):
            return q
    raise ScenarioError("suspension", "the body finds no rest on its springs at the start")


def ride(terrain: Terrain, car, path: PlanarPath, wheels: Sequence[RideWheel] | None = None,
         suspension: Suspension | None = None, max_step: float = MAX_STEP, track: float = TRACK) -> RideResult:
    """The ride of ``car`` (anything with ``mass``, ``yaw_inertia``, ``wheel_radius``, ``wheelbase``: a
    :class:`core.vehicles.car.Car`) over ``terrain`` along ``path`` (module docstring). ``wheels``:
    default :func:`.wheels.car_wheels` with ``track`` (m); ``suspension``: default :class:`Suspension`.
    Raises ScenarioError for bad input or when the integrator fails."""
    suspension = Suspension() if suspension is None else suspension
    wheels = tuple(car_wheels(car.wheel_radius, car.wheelbase, track) if wheels is None else wheels)
    F = len(path.time)
    for name, values, shape in (("position", path.position, (F, 2)), ("heading", path.heading, (F,)),
                                ("steering", path.steering, (F,))):
        if np.shape(values) != shape or not np.all(np.isfinite(values)):
            raise ScenarioError("ride", f"the path's {name} needs {shape} finite values, got shape {np.shape(values)}")
    substeps, dt = fine_grid(path.time, max_step)
    t, x, y, yaw, steer = refine(path, substeps, dt)
    footing = place_wheels(terrain, wheels, np.stack([x, y], axis=-1), yaw, steer)
    system = build_system(wheels, suspension, car.mass, car.yaw_inertia, t, x, y, yaw, footing)
    tree = system.tree
    dyn_index = [tree.var_index[f"{ROOT}.{v}"] for v in DYNAMIC]
    q0 = np.zeros(tree.n)
    q0[system.kin] = system.drive(0.0)[0]
    q0[dyn_index] = (0.0, footing.pitch[0], footing.roll[0])
    q0 = static_equilibrium(system, q0)
    dq0 = np.zeros(tree.n)
    dq0[dyn_index[1:]] = [CubicSpline(t, a).derivative()(0.0) if len(t) > 2 else (a[1] - a[0]) / dt
                          for a in (footing.pitch, footing.roll)]
    steps = len(t) - 1
    run = variational.simulate(system, q0, dq0, dt, steps)
    if run.blew_up:
        raise ScenarioError("suspension", f"the integrator failed at t = {path.time[0] + run.time[-1]:.4g} s "
                            f"({run.message.split(' (')[0]}); try a smaller max_step or more damping")
    Q = run.q[::substeps]
    G = tree.transforms(Q)
    body = G[:, tree.index[ROOT]]
    R, p = body[:, :3, :3], body[:, :3, 3]
    travel = -system.strut_lengths(Q)
    spins = rolling_spin(wheels, path.position, path.heading, path.steering, footing, substeps)
    every = slice(None, None, substeps)
    out = {}
    for i, w in enumerate(wheels):
        hub = footing.hub[every, i]
        out[w.role] = WheelRide(hub=hub, contact=footing.contact[every, i], axle=footing.axle[every, i],
                                hub_in_body=np.einsum("fji,fj->fi", R, hub - p), spin=spins[w.role],
                                steering=path.steering * (1.0 if w.steered else 0.0), travel=travel[:, i])
    stats = {"method": run.method, "dt": float(dt), "substeps": int(substeps), "steps": int(steps),
             "wall_time_s": run.wall_time_s, "newton_iterations_mean": float(np.mean(run.iterations)),
             "contacts_sampled": int(np.count_nonzero(~footing.converged))}
    return RideResult(time=np.asarray(path.time, dtype=float), position=p,
                      orientation=quaternion.make_continuous(quaternion.from_matrix(R)),
                      heave=Q[:, dyn_index[0]], pitch=Q[:, dyn_index[1]], roll=Q[:, dyn_index[2]],
                      ground=footing.ground[every], terrain_pitch=footing.pitch[every],
                      terrain_roll=footing.roll[every], centre_of_mass=G[:, tree.index[f"{ROOT}.mass"], :3, 3],
                      wheels=out, stats=stats)


__all__ = ["PlanarPath", "RideResult", "WheelRide", "ride", "ride_model", "build_system", "static_equilibrium",
           "fine_grid", "refine", "ROOT", "MAX_STEP"]
