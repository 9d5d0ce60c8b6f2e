"""Settings: the scene's (frame rate, frame range, Solve Settings) and the vehicle's (its parameters and
input limits from its spec, its parts, its control channels), as the scene reader passes them on.

Frames ↔ seconds and scene units ↔ metres are ``core.shot.frames.FrameMap`` (fps = render.fps /
render.fps_base: :func:`frame_rate`; positions times ``unit_settings.scale_length``). Vehicle dimensions
are metres whatever the Unit Scale. The vehicle's settings must be finite and its limits positive, as core
requires; control channels must lie within those limits. Problems are a SceneError in panel words.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import VehicleMotionError
from ..core.shot.frames import FrameMap, check_range, fmt_frame, scene_fps, shot_range
from ..core.shot.geometry import floats
from ..core.shot.plan import ShotError, ShotSettings, check_steps
from ..core.vehicles.spec import VehicleSpec
from .properties import CHILD_ROLES
from .scene_keys import SPEED_PATH, SceneError, descendants, out_of_range, range_text


# ----------------------------------------------------------------------------- the scene

def frame_rate(scene) -> float:
    """The scene's frames per second: render.fps / render.fps_base (29.97 = 30 / 1.001)."""
    render = scene.render
    return scene_fps(render.fps, render.fps_base)


def simulation_range(scene) -> tuple[int, int]:
    """The frames Simulate and secondary motion span: the scene's frame range, or the add-on's own
    (Vehicle Motion › Own Frame Range)."""
    s = scene.vehicle_motion
    own = bool(s.use_frame_range)
    start, end = (s.frame_start, s.frame_end) if own else (scene.frame_start, scene.frame_end)
    try:
        check_range(start, end, "Vehicle Motion › Frame Range" if own else "the scene's frame range")
    except VehicleMotionError as exc:
        raise SceneError(str(exc)) from None
    return int(start), int(end)


def frame_map(scene, start: float, end: float, scale: float, solve: bool = False) -> FrameMap:
    """Frames ↔ seconds of the range; Solve's nodes as Node Spacing says (core.shot.grid: Automatic is
    chosen by the planner), Simulate's always Steps per Frame."""
    s = scene.vehicle_motion
    spacing = s.node_spacing if solve else "PER_FRAME"
    fm = FrameMap(start, end, frame_rate(scene), s.steps_per_frame, scale, spacing=spacing,
                  node_count=int(s.node_count))
    if spacing != "AUTOMATIC":
        check_steps(fm)
    return fm


def solve_range(scene, vehicle, key_frames: list[float], landings: list[float],
                warnings: list[str]) -> tuple[float, float]:
    """The vehicle's first to last key or landing (clipped to the scene's range), or the add-on's own range."""
    s = scene.vehicle_motion
    override = (s.frame_start, s.frame_end) if s.use_frame_range else None
    try:
        start, end, found = shot_range(key_frames, (scene.frame_start, scene.frame_end), override,
                                       goal_frames=landings)
    except ShotError:
        raise
    except VehicleMotionError as exc:
        raise SceneError(f"'{vehicle.name}': {exc}") from None
    warnings.extend(f"'{vehicle.name}': {w}" for w in found)
    return start, end


def shot_settings(scene) -> ShotSettings:
    """Solve Settings: key tolerance, cost weights, solver (Automatic: IPOPT when cyipopt is installed)."""
    s = scene.vehicle_motion
    backend = s.solver_backend.lower()
    if backend == "auto":
        import importlib.util
        backend = "ipopt" if importlib.util.find_spec("cyipopt") is not None else "scipy"
    return ShotSettings(
        key_tolerance=float(s.key_tolerance),
        weights={"effort": s.weight_effort, "path_length": s.weight_path_length, "hazard": s.weight_hazard,
                 "smoothness": s.weight_smoothness},
        weight_duration=float(s.weight_duration),
        solver={"backend": backend, "max_iter": int(s.max_iter), "tol": float(s.tol),
                "time_limit_s": float(s.time_limit_s)},
        time_limit_s=float(s.time_limit_s))


# ----------------------------------------------------------------------------- the vehicle

def check_parameters(vehicle, spec: VehicleSpec, fcurves, scale: float) -> None:
    """The vehicle's settings are finite and the positive ones (its limits: the Max … settings) positive,
    as core requires; named in panel words. An unkeyed Speed is a sane speed."""
    s = vehicle.vehicle_motion
    props = type(s).bl_rna.properties
    for p in spec.scenario_parameters:
        value = getattr(s, p.name)
        values = [float(x) for x in value] if p.kind == "vector" else [float(value)]
        label = props[p.name].name
        if not all(math.isfinite(x) for x in values):
            raise SceneError(f"'{vehicle.name}' {label} is not a finite number: set it in the Vehicle panel")
        if p.positive and values[0] <= 0:
            raise SceneError(f"'{vehicle.name}' {label} is {values[0]:g}: it must be positive (set it in the "
                             "Vehicle panel)")
    speed = float(s.speed)
    if not any(fc.data_path == SPEED_PATH for fc in fcurves) and out_of_range(speed, "m/s", scale):
        shown = f"{speed * scale:.3g} m/s" if math.isfinite(speed) else f"{speed:g}"
        why = range_text("m/s") if math.isfinite(speed) else "not a finite number"
        raise SceneError(f"'{vehicle.name}' Speed is {shown}, out of range ({why}): set it in the Vehicle panel")


def parameters(vehicle, spec: VehicleSpec) -> dict:
    """The scenario's ``[vehicle]`` table: ``type`` and every scenario parameter of the spec (SI: dimensions
    are metres, whatever the Unit Scale)."""
    s = vehicle.vehicle_motion
    out: dict = {"type": spec.name}
    for p in spec.scenario_parameters:
        value = getattr(s, p.name)
        if p.kind == "vector":
            out[p.name] = [float(x) for x in value]
        elif p.kind == "switch":
            out[p.name] = bool(value)
        else:
            out[p.name] = float(value)
    return out


def input_limits(vehicle, spec: VehicleSpec) -> dict[str, float]:
    """|input| limit per input (the planner weighs effort by 1/limit²)."""
    s = vehicle.vehicle_motion
    return {i.name: i.bound(s) for i in spec.inputs}


def check_parts(vehicle, spec: VehicleSpec, warnings: list[str]) -> None:
    """The part objects are the vehicle's children (else they would not follow it) in a rotation mode the
    bake can key; a vehicle without a required part is a proxy (warned: its body moves, the part does not)."""
    s = vehicle.vehicle_motion
    family = set(descendants(vehicle))
    missing = [CHILD_ROLES[p.role][0] for p in spec.parts if not p.optional and getattr(s, p.role) is None]
    if missing:  # a proxy (layout before the model exists): the body moves, the parts it lacks do not
        warnings.append(f"'{vehicle.name}' has no {', '.join(missing)} object"
                        f"{'s' if len(missing) > 1 else ''} (Vehicle › Parts): the bake moves its body only")
    for part in spec.parts:
        child = getattr(s, part.role)
        if child is None:
            continue
        if child not in family:
            raise SceneError(f"'{child.name}' ({CHILD_ROLES[part.role][0]} of '{vehicle.name}') is not parented "
                             f"to '{vehicle.name}', so it would not follow the motion")
        if child.rotation_mode == "AXIS_ANGLE":
            raise SceneError(f"'{child.name}' uses the Axis Angle rotation mode: set it to Quaternion or "
                             "an Euler order")


def control_values(vehicle, spec: VehicleSpec, fcurves, fm: FrameMap, warnings: list[str]) -> dict:
    """Each control channel (a custom property on the vehicle named as an input of its spec, keyed or
    constant) sampled at the start of every step, checked against the vehicle's limits with the frame
    named: the scenario's ``[controls]`` table."""
    s = vehicle.vehicle_motion
    curves = {fc.data_path: fc for fc in fcurves}
    frames = fm.frame_start + np.arange(fm.steps) / fm.steps_per_frame
    out = {}
    missing = []
    for name, (lo, hi) in spec.input_bounds(s).items():
        fc = curves.get(f'["{name}"]')
        if fc is not None:
            for kp in sorted(fc.keyframe_points, key=lambda k: k.co[0]):
                v = float(kp.co[1])
                if math.isnan(v):
                    raise SceneError(f"'{vehicle.name}' control '{name}' is keyed to nan (not a number) at frame "
                                     f"{fmt_frame(kp.co[0])}; its limits are [{lo:.6g}, {hi:.6g}]")
                if math.isinf(v):
                    raise SceneError(f"'{vehicle.name}' control '{name}' is keyed to {v:g} at frame "
                                     f"{fmt_frame(kp.co[0])}, outside its limits [{lo:.6g}, {hi:.6g}] (a key "
                                     "beyond ±3.4e38 is stored as inf)")
            values = np.array([fc.evaluate(float(f)) for f in frames])
        elif name in vehicle.keys():
            try:
                values = np.full(len(frames), float(vehicle[name]))
            except (TypeError, ValueError):
                raise SceneError(f"'{vehicle.name}' custom property '{name}' must be a number") from None
        else:
            missing.append(name)
            continue
        bad = np.flatnonzero(~((values >= lo - 1e-9) & (values <= hi + 1e-9)))  # nan too
        if bad.size:
            k = int(bad[0])
            raise SceneError(f"'{vehicle.name}' control '{name}' is {values[k]:.6g} at frame {fmt_frame(frames[k])}, "
                             f"outside its limits [{lo:.6g}, {hi:.6g}]")
        out[name] = {"values": floats(values)}
    if missing and len(missing) == len(spec.inputs):
        warnings.append(f"'{vehicle.name}' has none of the control channels {', '.join(missing)} "
                        "(custom properties): every input is zero")
    elif missing:
        warnings.append(f"'{vehicle.name}' has no {', '.join(missing)} channel: zero")
    return out
