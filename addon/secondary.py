"""Simulate a vehicle's parts and bake them: scene → parts → core.parts → joint rotations → F-curves.

Two engines on the same part settings (``addon.articulation``):

* **Secondary Motion** (``core.parts.secondary``, the tree variational integrator): the
  vehicle's world pose, evaluated at every frame from Start to End (keyed, solved and baked,
  driven or constrained alike), drives the root of the tree; the parts start at rest
  relative to it. Only the parts are keyed; the vehicle keeps its animation.
* **Articulated** (``core.parts.articulated``, a free-base chain): the vehicle (mass and
  inertia from its settings, pose at Start, forward Speed) and its hinged parts (initial
  rates from their settings) move together, integrated by the chosen Lie group method; the
  vehicle's pose and the parts are baked in one go.

Timing as elsewhere: steps = (End − Start) × Steps per Frame, dt = 1 / (fps × Steps per
Frame); frame Start + k shows node k × Steps per Frame. Everything is computed before the
scene changes, so an error leaves it as it was.
"""
from __future__ import annotations

import time

import numpy as np

from . import articulation
from .articulation import PartsError


def _timing(scene) -> tuple[int, int, float, int]:
    s = scene.vehicle_motion
    start, end, spf = int(s.frame_start), int(s.frame_end), int(s.steps_per_frame)
    fps = scene.render.fps / scene.render.fps_base
    if end <= start:
        raise PartsError(f"the End frame ({end}) must come after the Start frame ({start})")
    return start, end, fps, spf


def _core_error(vehicle, exc) -> PartsError:
    return PartsError(f"'{vehicle.name}': {exc}")


def vehicle_poses(scene, vehicle, frames) -> tuple[np.ndarray, np.ndarray]:
    """The vehicle's world position (metres, (K, 3)) and orientation (sign-continuous unit
    quaternions, (K, 4)) at each frame, from its evaluated matrix_world."""
    from ..core.lie import quaternion
    unit = articulation.scale_length(scene)
    current, subframe = scene.frame_current, scene.frame_subframe
    mats = np.empty((len(frames), 4, 4))
    try:
        for k, f in enumerate(frames):
            scene.frame_set(int(f))
            mats[k] = np.array(vehicle.matrix_world)
    finally:
        scene.frame_set(current, subframe=subframe)
    R = np.stack([articulation.rotation_of(vehicle, m) for m in mats])
    return mats[:, :3, 3] * unit, quaternion.make_continuous(quaternion.from_matrix(R))


def simulate_secondary(scene, vehicle) -> tuple[str, str]:
    """Secondary Motion: simulate and bake the parts of ``vehicle``; (report level, message)."""
    from ..core.errors import ScenarioError
    from ..core.parts import secondary
    settings = vehicle.vehicle_motion_parts
    start, end, fps, spf = _timing(scene)
    if not articulation.is_animated(vehicle):
        raise PartsError(f"'{vehicle.name}' has no motion for its parts to follow: key, solve or simulate it first")
    reading = articulation.read_parts(scene, vehicle, start)
    frames = np.arange(start, end + 1)
    position, orientation = vehicle_poses(scene, vehicle, frames)
    t0 = time.perf_counter()
    try:
        result = secondary.simulate(reading.parts, (frames - start) / fps, position, orientation,
                                    1.0 / (fps * spf), (end - start) * spf, gravity=settings.gravity,
                                    label=lambda t: f"frame {start + t * fps:.4g}")
    except ScenarioError as exc:
        raise _core_error(vehicle, exc) from None
    wall = time.perf_counter() - t0
    angles = {name: a[::spf] for name, a in result.angles.items()}
    from .baking import bake_channels
    plan = articulation.joint_channels(reading, angles)
    baked = bake_channels(vehicle, plan, frames.astype(float), scene)
    st = result.stats
    message = (f"Secondary motion of '{vehicle.name}': {len(reading.parts)} parts, {st['steps']} steps of "
               f"{st['dt']:.4g} s (variational, {st['newton_iterations_mean']:.1f} Newton iterations a step, "
               f"{wall:.2f} s); baked frames {baked.frame_start}–{baked.frame_end} onto {', '.join(baked.objects)}")
    settings.last_summary = message
    return "INFO", message


def simulate_articulated(scene, vehicle) -> tuple[str, str]:
    """Articulated: simulate the vehicle and its hinged parts as a free-base chain and bake both."""
    from ..core.errors import ScenarioError
    from ..core.parts import articulated
    from .baking import bake
    settings = vehicle.vehicle_motion_parts
    vs = vehicle.vehicle_motion
    start, end, fps, spf = _timing(scene)
    reading = articulation.read_parts(scene, vehicle, start)
    unit = reading.scale
    world = reading.rest_world[vehicle.name]
    R0 = articulation.rotation_of(vehicle, world)
    x0 = world[:3, 3] * unit
    method = settings.method.lower()
    t0 = time.perf_counter()
    try:
        result = articulated.simulate(reading.parts, float(vs.mass), tuple(vs.inertia), R0, x0, (0.0, 0.0, 0.0),
                                      (float(vs.speed) * unit, 0.0, 0.0), 1.0 / (fps * spf), (end - start) * spf,
                                      method=method, gravity=settings.gravity)
    except ScenarioError as exc:
        raise _core_error(vehicle, exc) from None
    wall = time.perf_counter() - t0
    trajectory = result.trajectory
    trajectory.position = np.asarray(trajectory.position) / unit
    trajectory.linear_velocity = np.asarray(trajectory.linear_velocity) / unit
    angles = {name: a[::spf] for name, a in result.angles.items()}
    plan = articulation.joint_channels(reading, angles)
    baked = bake(vehicle, trajectory, frame_start=start, fps=fps, scene=scene, parts=plan)
    L = np.asarray(trajectory.momentum_angular)
    drift = float(np.max(np.abs(L - L[0]))) if L.ndim == 2 else float("nan")
    message = (f"Articulated motion of '{vehicle.name}': {len(reading.parts)} parts, {(end - start) * spf} steps "
               f"of {1.0 / (fps * spf):.4g} s ({method}, {wall:.2f} s, angular momentum drift {drift:.2g}); "
               f"baked frames {baked.frame_start}–{baked.frame_end} onto {', '.join(baked.objects)}")
    level = "WARNING" if baked.warnings else "INFO"
    if baked.warnings:
        message += "; " + "; ".join(baked.warnings)
    settings.last_summary = message
    return level, message


def simulate(scene, vehicle) -> tuple[str, str]:
    """Run the engine the vehicle's part settings ask for."""
    if vehicle.vehicle_motion_parts.mode == "ARTICULATED":
        return simulate_articulated(scene, vehicle)
    return simulate_secondary(scene, vehicle)


__all__ = ["simulate", "simulate_secondary", "simulate_articulated", "vehicle_poses", "PartsError"]
