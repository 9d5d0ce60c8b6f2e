"""Keys and poses: what the artist keyed on a vehicle, read from its source action (the action it plays,
or the one a bake replaced), checked before anything is evaluated.

Numbers: every position the reader takes (the vehicle's keys and poses, constraint empties, obstacle
vertices) must lie within ``MAX_DISTANCE`` = 1e6 m (1000 km) of the world origin, and every speed (speed
keys, the Speed setting, speed limits) be at most ``MAX_SPEED`` = 1e4 m/s (10 km/s), in metres after Unit
Scale; keyed transform channels must be finite numbers (Blender keeps keys and transforms as 32-bit
floats: 1e40 typed in is stored as 3.4e38, a custom property key of 1e300 as inf). A number that breaks
this is a :class:`SceneError` naming the object, the channel and the frame.
"""
from __future__ import annotations

import math

import mathutils
import numpy as np

from ..core.shot.frames import FrameMap, fmt_frame, same_frame
from ..core.shot.geometry import polar
from ..core.shot.plan import KeyPose, ShotError
from . import action_compat

MAX_DISTANCE = 1e6   # m: positions within 1000 km of the world origin
MAX_SPEED = 1e4      # m/s: speeds up to 10 km/s

LOCATION_PATHS = frozenset({"location", "delta_location"})
ROTATION_PATHS = frozenset({"rotation_euler", "rotation_quaternion", "rotation_axis_angle",
                            "delta_rotation_euler", "delta_rotation_quaternion"})
SCALE_PATHS = frozenset({"scale", "delta_scale"})
SPEED_PATH = "vehicle_motion.speed"


class SceneError(ShotError):
    """The scene cannot become a problem; the message names the object or frame."""


_CHANNEL_NAMES = {"location": "", "delta_location": "delta ", "rotation_euler": "rotation ",
                  "delta_rotation_euler": "delta rotation ", "rotation_quaternion": "rotation ",
                  "delta_rotation_quaternion": "delta rotation ", "scale": "scale ", "delta_scale": "delta scale "}


def _channel(path: str, index: int) -> str:
    """An F-curve's channel as the artist sees it: x, delta y, rotation Z, rotation W, scale X, speed."""
    if path == SPEED_PATH:
        return "speed"
    if path in LOCATION_PATHS:
        return _CHANNEL_NAMES[path] + "xyz"[index]
    letters = "WXYZ" if "quaternion" in path else "XYZ"
    return _CHANNEL_NAMES.get(path, path + " ") + (letters[index] if index < len(letters) else str(index))


def out_of_range(value: float, unit: str, scale: float) -> bool:
    """A position (unit "m") or speed ("m/s") in scene units that is not finite or beyond its bound."""
    bound = MAX_DISTANCE if unit == "m" else MAX_SPEED
    return not math.isfinite(value) or abs(value) * scale > bound


def range_text(unit: str) -> str:
    return ("Vehicle Motion works within 1000 km of the world origin" if unit == "m"
            else "Vehicle Motion handles speeds up to 10 km/s")


def check_keys(obj, fcurves, scale: float) -> None:
    """Refuse an absurd key of obj's transform or speed channels before anything is evaluated:
    a location beyond ``MAX_DISTANCE``, a speed beyond ``MAX_SPEED`` (in metres after Unit Scale),
    or any transform key that is not a finite number; the earliest bad key is named with its
    channel and frame."""
    bad = []
    for fc in fcurves:
        path = fc.data_path
        if path not in LOCATION_PATHS | ROTATION_PATHS | SCALE_PATHS | {SPEED_PATH}:
            continue
        unit = "m" if path in LOCATION_PATHS else "m/s" if path == SPEED_PATH else ""
        for kp in fc.keyframe_points:
            frame, value = float(kp.co[0]), float(kp.co[1])
            if (unit and out_of_range(value, unit, scale)) or not math.isfinite(value):
                bad.append((frame, path, fc.array_index, value, unit))
    if not bad:
        return
    frame, path, index, value, unit = min(bad, key=lambda b: b[:3])
    shown = f"{value * scale:.3g} {unit}" if unit and math.isfinite(value) else f"{value:g}"
    why = range_text(unit) if math.isfinite(value) else "not a finite number"
    raise SceneError(f"'{obj.name}' is keyed at {_channel(path, index)} = {shown} at frame {fmt_frame(frame)}, "
                     f"out of range ({why}): fix that key")


def check_pose(obj, m: np.ndarray, frame: float | None, scale: float) -> None:
    """Refuse a world matrix that is not finite or a position beyond ``MAX_DISTANCE``."""
    when = "" if frame is None else f" at frame {fmt_frame(frame)}"
    parent = f" or its parent '{obj.parent.name}'" if obj.parent is not None else ""
    if not np.all(np.isfinite(m)):
        raise SceneError(f"'{obj.name}' has a transform that is not a finite number{when}: fix its location, "
                         f"rotation or scale{parent}")
    distance = float(np.linalg.norm(m[:3, 3])) * scale
    if distance > MAX_DISTANCE:
        raise SceneError(f"'{obj.name}' is {distance:.3g} m from the world origin{when}, out of range "
                         f"({range_text('m')}): move it{parent}")


def is_animated(ob) -> bool:
    while ob is not None:
        anim = ob.animation_data
        if anim is not None and (anim.action is not None or len(anim.drivers) or len(anim.nla_tracks)):
            return True
        if any(not c.mute for c in ob.constraints):
            return True
        ob = ob.parent
    return False


def descendants(obj) -> list:
    out, stack = [], list(obj.children)
    while stack:
        ob = stack.pop()
        out.append(ob)
        stack.extend(ob.children)
    return out


def source_action(obj) -> action_compat.ActionRef | None:
    """The action holding the artist's keys: the one played now, or the one a bake replaced."""
    s = obj.vehicle_motion
    if s.is_baked:
        if s.original_action is None:
            return None
        return action_compat.ActionRef(s.original_action,
                                       action_compat.find_slot(s.original_action, s.original_slot))
    return action_compat.assigned(obj)


def source_fcurves(obj) -> list:
    ref = source_action(obj)
    return [] if ref is None else action_compat.fcurves(ref)


def frames_keyed(fcurves, paths=None) -> set[float]:
    frames: set[float] = set()
    for fc in fcurves:
        if paths is None or fc.data_path in paths:
            frames.update(round(float(k.co[0]), 4) for k in fc.keyframe_points)
    return frames


class FrameGuard:
    """Restores the scene's current frame after the reader moved it."""

    def __init__(self, scene):
        self.scene = scene
        self.frame, self.subframe = scene.frame_current, scene.frame_subframe
        self.moved = False

    def set(self, frame: float) -> None:
        """Evaluate the scene at ``frame`` (always: animation is re-applied even at the current frame)."""
        f = math.floor(frame)
        self.scene.frame_set(int(f), subframe=float(frame - f))
        self.moved = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.moved:
            self.scene.frame_set(self.frame, subframe=self.subframe)
        return False


class Pose:
    """World pose of an object at any frame, from the F-curves of its source action (so a
    baked vehicle is read from the keys it had before the bake) and its parent's space."""

    def __init__(self, obj, guard: FrameGuard):
        self.obj, self.guard = obj, guard
        if obj.rotation_mode == "AXIS_ANGLE":
            raise SceneError(f"'{obj.name}' uses the Axis Angle rotation mode, which Vehicle Motion cannot "
                             "read or bake: set it to Quaternion or an Euler order")
        self.curves = {(fc.data_path, fc.array_index): fc for fc in source_fcurves(obj) if not fc.mute}
        s = obj.vehicle_motion
        if s.is_baked:
            self.rest = (tuple(s.rest_location), tuple(s.rest_rotation_quaternion), tuple(s.rest_rotation_euler))
        else:
            self.rest = (tuple(obj.location), tuple(obj.rotation_quaternion), tuple(obj.rotation_euler))
        self._parent_static = None
        self._parent_cache: dict[float, np.ndarray] = {}

    def _value(self, path: str, size: int, default) -> list[float]:
        out = list(default)
        for i in range(size):
            fc = self.curves.get((path, i))
            if fc is not None:
                out[i] = fc.evaluate(self._frame)
        return out

    def channels(self, frame: float) -> dict:
        self._frame = frame
        obj = self.obj
        return {
            "location": self._value("location", 3, self.rest[0]),
            "rotation_quaternion": self._value("rotation_quaternion", 4, self.rest[1]),
            "rotation_euler": self._value("rotation_euler", 3, self.rest[2]),
            "scale": self._value("scale", 3, obj.scale),
            "delta_location": self._value("delta_location", 3, obj.delta_location),
            "delta_rotation_quaternion": self._value("delta_rotation_quaternion", 4, obj.delta_rotation_quaternion),
            "delta_rotation_euler": self._value("delta_rotation_euler", 3, obj.delta_rotation_euler),
            "delta_scale": self._value("delta_scale", 3, obj.delta_scale),
        }

    def basis(self, frame: float) -> np.ndarray:
        c = self.channels(frame)
        mode = self.obj.rotation_mode
        if mode == "QUATERNION":
            rot = mathutils.Quaternion(c["rotation_quaternion"]).normalized()
            delta = mathutils.Quaternion(c["delta_rotation_quaternion"]).normalized()
        else:
            rot = mathutils.Euler(c["rotation_euler"], mode).to_quaternion()
            delta = mathutils.Euler(c["delta_rotation_euler"], mode).to_quaternion()
        r = np.array((delta @ rot).to_matrix())
        s = np.array(c["scale"]) * np.array(c["delta_scale"])
        m = np.eye(4)
        m[:3, :3] = r * s[None, :]
        m[:3, 3] = np.array(c["location"]) + np.array(c["delta_location"])
        return m

    def parent_space(self, frame: float) -> np.ndarray:
        obj = self.obj
        if obj.parent is None:
            return np.eye(4)
        if not is_animated(obj.parent):
            if self._parent_static is None:
                self._parent_static = np.array(obj.matrix_world @ obj.matrix_basis.inverted_safe())
            return self._parent_static
        if frame not in self._parent_cache:
            self.guard.set(frame)
            self._parent_cache[frame] = np.array(obj.matrix_world @ obj.matrix_basis.inverted_safe())
        return self._parent_cache[frame]

    def world(self, frame: float) -> np.ndarray:
        return self.parent_space(frame) @ self.basis(frame)

    def euler_heading(self, frame: float) -> float | None:
        """The keyed Euler Z angle when it is the heading (no parent, no tilt, no delta
        rotation): keeps whole turns an artist keyed (0 → 360° is a loop, not no turn)."""
        obj = self.obj
        if obj.parent is not None or obj.rotation_mode == "QUATERNION":
            return None
        c = self.channels(frame)
        if any(abs(a) > 1e-6 for a in c["delta_rotation_euler"]):
            return None
        x, y, z = c["rotation_euler"]
        if abs(x) > 1e-6 or abs(y) > 1e-6:
            return None
        return float(z)


def speed_at(obj, frame: float) -> float:
    fc = next((fc for fc in source_fcurves(obj) if fc.data_path == SPEED_PATH and not fc.mute), None)
    return float(fc.evaluate(frame)) if fc is not None else float(obj.vehicle_motion.speed)


def keyed_frames(obj) -> list[float]:
    """Sorted frames at which obj (its source action, unmuted F-curves) has keys."""
    return sorted(frames_keyed([fc for fc in source_fcurves(obj) if not fc.mute]))


def check_all_keys(obj, fcurves, scale: float) -> None:
    """The vehicle's keys and its parents' (they move it between its own keys) are sane numbers."""
    check_keys(obj, fcurves, scale)
    ob = obj.parent
    while ob is not None:
        check_keys(ob, [fc for fc in source_fcurves(ob) if not fc.mute], scale)
        ob = ob.parent


def key_frames(obj, fcurves, landings: list[float] = ()) -> list[float]:
    """Every frame at which the vehicle's transform or speed is keyed (a single one will do when a
    Land / Dock empty after it gives the goal: ``landings``)."""
    transform = LOCATION_PATHS | ROTATION_PATHS | SCALE_PATHS
    frames = sorted(frames_keyed(fcurves, transform | {SPEED_PATH}))
    name = obj.name
    if not frames:
        raise SceneError(f"'{name}' has no keyframes: key its location at the start and at the goal")
    if len(frames) == 1 and not any(f > frames[0] + 1e-6 for f in landings):
        raise SceneError(f"'{name}' has a single keyframe (frame {fmt_frame(frames[0])}): key its goal "
                         "pose too (at least a start and a goal keyframe), or add a Land / Dock Here empty")
    return frames


def landing_frames(scene, vehicle) -> list[float]:
    """The frames of the Land / Dock Here empties on ``vehicle`` (keyed, or their When set to a frame):
    a landing is a goal pose, so its frame counts as a key for the shot's frame range."""
    out = set()
    for ob in scene.objects:
        s = ob.vehicle_motion
        if s.constraint_kind != "LAND" or ob is vehicle or ob.type != "EMPTY":
            continue
        if s.constraint_vehicle is not None and s.constraint_vehicle != vehicle:
            continue
        if s.constraint_timing == "FRAME":
            out.add(float(s.constraint_frame))
        elif s.constraint_timing != "SHOT":
            out.update(frames_keyed([fc for fc in source_fcurves(ob) if not fc.mute]))
    return sorted(out)


def vehicle_pose(obj, pose: Pose, frame: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """World position and rotation of the vehicle at ``frame`` (checked: finite, within range)."""
    m = pose.world(frame)
    check_pose(obj, m, frame, scale)
    return m[:3, 3].copy(), polar(m[:3, :3])


def key_poses(obj, pose: Pose, fcurves, frames: list[float], fm: FrameMap, own_range: bool, scale: float,
              warnings: list[str]) -> list[KeyPose]:
    """The vehicle's pose at each keyed frame inside the range (and at its start frame); keys outside
    the add-on's own range (``own_range``) are warned about and ignored."""
    fs, fe = fm.frame_start, fm.frame_end
    name = obj.name
    if frames[0] > fs + 1e-6:
        raise SceneError(f"'{name}' is first keyed at frame {fmt_frame(frames[0])}, after the start frame "
                         f"{fmt_frame(fs)} (Vehicle Motion › Frame Range): key its start pose at frame "
                         f"{fmt_frame(fs)}")
    if own_range:
        outside = [f for f in frames if f < fs - 1e-6 or f > fe + 1e-6]
        if outside:
            warnings.append(f"keys of '{name}' at frames {', '.join(fmt_frame(f) for f in outside)} are "
                            f"outside frames {fmt_frame(fs)}–{fmt_frame(fe)} and ignored")
    inside = [f for f in frames if fs - 1e-6 <= f <= fe + 1e-6]
    if not inside or not same_frame(inside[0], fs):
        inside = [fs] + inside  # keyed before Start: the pose there is the start
    rot_keys = frames_keyed(fcurves, ROTATION_PATHS)
    speed_keys = frames_keyed(fcurves, {SPEED_PATH})
    out = []
    for f in inside:
        p, r = vehicle_pose(obj, pose, f, scale)
        first = f is inside[0]
        keyed_speed = any(same_frame(f, k) for k in speed_keys)
        out.append(KeyPose(f, p, r, rotation_keyed=any(same_frame(f, k) for k in rot_keys),
                           speed=speed_at(obj, f) if (first or keyed_speed) else None,
                           euler_heading=pose.euler_heading(f)))
    return out
