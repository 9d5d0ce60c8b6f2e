"""Simulate a vehicle's parts and bake them: scene → parts → core.parts → joint rotations → F-curves.

Two engines on the same part settings (``addon.articulation``):

* **Secondary Motion** (``core.parts.secondary``, the tree variational integrator): the
  vehicle's world pose, evaluated at every frame from Start to End (keyed, solved and baked,
  driven or constrained alike), drives the root of the tree; the parts start at rest
  relative to it. Only the parts are keyed; the vehicle keeps its animation.
* **Articulated** (``core.parts.articulated``, a free-base chain): the vehicle (pose at
  Start, forward Speed) and its hinged parts (initial rates from their settings) move
  together, integrated by the chosen Lie group method, gravity on every body; the
  vehicle's pose, its rotors and the parts are baked in one go. The base carries the
  vehicle's own forces from its core model (``core.parts.base``), read as the Simulate
  operator reads them (``scene_reader.read_simulation``: parameters, and the control
  channels keyed as custom properties on the vehicle): a helicopter's rotor, a boat's
  buoyancy, damping, current, wind and thrusters; a rigid body has none. A car or a
  snakeboard has no free-base model and is refused.

Timing as for Simulate (whatever Node Spacing Solve uses): steps = (End − Start) × Steps per Frame,
dt = 1 / (fps × Steps per Frame); frame Start + k shows node k × Steps per Frame. Everything is
computed before the scene changes, so an error leaves it as it was.
"""
from __future__ import annotations

import time

import numpy as np

from . import articulation
from .articulation import PartsError


def _timing(scene) -> tuple[int, int, float, int]:
    from .scene_settings import frame_rate, simulation_range
    start, end = simulation_range(scene)
    fps = frame_rate(scene)
    return start, end, fps, int(scene.vehicle_motion.steps_per_frame)


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
               f"{wall:.2f} s); baked frames {baked.frames()} onto {', '.join(baked.objects)}")
    settings.last_summary = message
    return "INFO", message


def vehicle_base(scene, vehicle, steps: int, dt: float):
    """The vehicle as the chain's base (``core.parts.base.VehicleBase``) and the reader's warnings."""
    from ..core.errors import ScenarioError
    from ..core.parts import base
    from .properties import CORE_VEHICLE_NAMES
    vs = vehicle.vehicle_motion
    kind = CORE_VEHICLE_NAMES.get(vs.vehicle_type)
    if kind not in base.BASE_TYPES:
        label = vs.vehicle_type.replace("_", " ").lower()
        raise PartsError(f"'{vehicle.name}' is a {label}, which has no free-base model for Articulated parts "
                         f"(a helicopter, a boat or a rigid body has): use Secondary Motion")
    if kind == "rigid_body":
        return base.rigid_base(float(vs.mass), tuple(vs.inertia)), []
    from .scene_reader import read_simulation
    problem = read_simulation(scene, vehicle)          # the Simulate operator's reading: SceneError names it
    if problem.frame_map.steps != steps:
        raise PartsError(f"'{vehicle.name}': the control channels cover {problem.frame_map.steps} steps, "
                         f"the parts take {steps}")
    scenario, warnings = problem.scenario, list(problem.warnings)
    if "hull_vertices" in scenario["vehicle"]:  # the chain's base pose is the object's origin: the default hull
        scenario = dict(scenario, vehicle={k: v for k, v in scenario["vehicle"].items()
                                           if k not in ("hull_vertices", "hull_faces")})
        warnings.append(f"'{vehicle.name}' floats on the default hull in Articulated mode (Simulate and Solve "
                        "float it on its own mesh)")
    try:
        return base.from_scenario(scenario, steps, dt), warnings
    except ScenarioError as exc:
        raise _core_error(vehicle, exc) from None


def simulate_articulated(scene, vehicle) -> tuple[str, str]:
    """Articulated: simulate the vehicle and its hinged parts as a free-base chain and bake both."""
    from ..core.errors import ScenarioError
    from ..core.parts import articulated
    from .baking import bake
    settings = vehicle.vehicle_motion_parts
    vs = vehicle.vehicle_motion
    start, end, fps, spf = _timing(scene)
    steps, dt = (end - start) * spf, 1.0 / (fps * spf)
    reading = articulation.read_parts(scene, vehicle, start)
    base, warnings = vehicle_base(scene, vehicle, steps, dt)
    unit = reading.scale
    world = reading.rest_world[vehicle.name]
    R0 = articulation.rotation_of(vehicle, world)
    x0 = world[:3, 3] * unit
    method = settings.method.lower()
    t0 = time.perf_counter()
    try:
        result = articulated.simulate_vehicle(reading.parts, base, R0, x0, (0.0, 0.0, 0.0),
                                              (float(vs.speed) * unit, 0.0, 0.0), dt, steps, method=method,
                                              gravity=settings.gravity,
                                              label=lambda t: f"frame {start + t * fps:.4g}")
    except ScenarioError as exc:
        raise _core_error(vehicle, exc) from None
    wall = time.perf_counter() - t0
    trajectory = result.trajectory
    trajectory.position = np.asarray(trajectory.position) / unit
    trajectory.linear_velocity = np.asarray(trajectory.linear_velocity) / unit
    angles = {name: a[::spf] for name, a in result.angles.items()}
    plan = articulation.joint_channels(reading, angles)
    baked = bake(vehicle, trajectory, frame_start=start, fps=fps, scene=scene, parts=plan)
    forces = {"helicopter": "rotor from its control channels", "boat": "buoyancy, damping, wind, thrusters",
              "rigid_body": "no forces of its own"}[base.kind]
    message = (f"Articulated motion of '{vehicle.name}': {len(reading.parts)} parts, {steps} steps "
               f"of {dt:.4g} s ({method}, {wall:.2f} s, {base.kind.replace('_', ' ')}: {forces}"
               f"{', gravity' if settings.gravity else ''}); "
               f"baked frames {baked.frames()} onto {', '.join(baked.objects)}")
    warnings = warnings + list(baked.warnings)
    if warnings:
        message += "; " + "; ".join(warnings)
    settings.last_summary = message
    return ("WARNING" if warnings else "INFO"), message


def simulate(scene, vehicle) -> tuple[str, str]:
    """Run the engine the vehicle's part settings ask for."""
    if vehicle.vehicle_motion_parts.mode == "ARTICULATED":
        return simulate_articulated(scene, vehicle)
    return simulate_secondary(scene, vehicle)


__all__ = ["simulate", "simulate_secondary", "simulate_articulated", "vehicle_base", "vehicle_poses", "PartsError"]
