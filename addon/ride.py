"""A car's ride over the scene's Ground at bake time (``core.terrain.ride``): body heave, pitch and roll
on its suspension, each wheel on the ground and spinning along its own 3D contact path.

The path stays the planned planar one; the bake takes its frames from here instead of the plane:
the body pose, each wheel's spin (``wheel_angle_<role>``) and each wheel's hub moving against the body
(its location channel). Without a Ground, or for other vehicles, the bake is unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core.errors import VehicleMotionError
from .scene_ground import scene_ground
from .scene_keys import SceneError


@dataclass
class RideFrames:
    """The ride at the bake's times (``position`` (K, 3) world scene units of the rear axle point on the
    ground, ``rotation`` (K, 3, 3)), the wheels' spins on the sample union (role → (U,) rad from 0) and
    their hubs' moves in the body frame (role → (K, 3) scene units) at the bake's times."""

    position: np.ndarray
    rotation: np.ndarray
    spins: dict[str, np.ndarray]
    hub_moves: dict[str, np.ndarray]
    ground: str


def _suspension(obj):
    from ..core.terrain.suspension import Suspension
    return Suspension.preset(obj.vehicle_motion.suspension.lower())


def _wheels(obj, trajectory, params: dict, scale: float, warnings: list[str]):
    """The measured wheels (the trajectory's stats); the model's four wheels (typed radius and wheelbase,
    a 1.5 m track) when there are none or they do not span a track and a wheelbase."""
    from ..core.terrain.wheels import TRACK, car_wheels, wheels_from_tables
    tables = trajectory.stats.get("wheels") if isinstance(trajectory.stats, dict) else None
    if tables:
        wheels = wheels_from_tables(tables, scale)
        xy = np.array([w.centre[:2] for w in wheels])
        if len(wheels) >= 3 and np.linalg.matrix_rank(xy - xy.mean(axis=0), tol=1e-3) == 2:
            return wheels
        warnings.append(f"'{obj.name}': its wheels do not span a track and a wheelbase, so it rides on the "
                        f"ground as four wheels {TRACK:g} m apart at the typed Wheelbase and Wheel Radius")
    return car_wheels(params["wheel_radius"], params["wheelbase"])


def _grid(t0: float, t1: float, fps: float) -> np.ndarray:
    """Evenly spaced times from t0 to t1, at most 1/fps apart (the ride needs an even grid)."""
    n = max(1, math.ceil((t1 - t0) * fps - 1e-9))
    return t0 + (t1 - t0) * np.arange(n + 1) / n


def _at(grid: np.ndarray, values: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Linear interpolation of ``values`` (G, ...) from ``grid`` to ``times``."""
    flat = values.reshape(len(grid), -1)
    out = np.stack([np.interp(times, grid, flat[:, j]) for j in range(flat.shape[1])], axis=-1)
    return out.reshape((len(times),) + values.shape[1:])


def car_ride(obj, scene, trajectory, union: np.ndarray, times: np.ndarray, fps: float,
             warnings: list[str]) -> RideFrames | None:
    """The ride of car ``obj`` along ``trajectory`` (world scene units) over the scene's Ground; None
    without a Ground. Raises SceneError (one line) when the ride cannot be computed."""
    ground = scene_ground(scene, warnings)
    if ground is None:
        return None
    from ..core.lie import quaternion
    from ..core.shot.resample import sample
    from ..core.terrain.ride import PlanarPath, ride
    from .properties import SPECS
    from .scene_settings import parameters
    scale = float(scene.unit_settings.scale_length) or 1.0
    params = parameters(obj, SPECS["CAR"])
    t = np.asarray(trajectory.time, dtype=float)
    grid = _grid(float(t[0]), float(t[-1]), max(fps, 1.0))
    at = sample(trajectory, grid)
    steering = at.shape.get("steering_angle", np.zeros(len(grid)))
    path = PlanarPath(grid, at.position[:, :2] * scale, at.heading, np.asarray(steering, dtype=float))
    car = SimpleNamespace(mass=params["mass"], yaw_inertia=params["yaw_inertia"],
                          wheel_radius=params["wheel_radius"], wheelbase=params["wheelbase"])
    wheels = _wheels(obj, trajectory, params, scale, warnings)
    try:
        result = ride(ground.terrain, car, path, wheels, _suspension(obj))
    except VehicleMotionError as exc:
        raise SceneError(f"'{obj.name}' over the ground {ground.label}: {exc}") from None
    q = _at(grid, result.orientation, times)
    rotation = quaternion.to_matrix(q / np.linalg.norm(q, axis=-1, keepdims=True))
    rest = {w.role: np.asarray(w.centre) for w in wheels}
    hub_moves = {role: _at(grid, w.hub_in_body - rest[role], times) / scale for role, w in result.wheels.items()}
    spins = {role: _at(grid, w.spin, union) for role, w in result.wheels.items()}
    if result.stats.get("contacts_sampled"):
        warnings.append(f"'{obj.name}': {result.stats['contacts_sampled']} wheel contacts on the ground "
                        f"{ground.label} rest on a fold between faces or bridge a dip narrower than the wheel "
                        "(placed by the rim's lowest sample)")
    return RideFrames(position=_at(grid, result.position, times) / scale, rotation=rotation, spins=spins,
                      hub_moves=hub_moves, ground=ground.label)


__all__ = ["RideFrames", "car_ride"]
