"""Scene → problem: the first step of scene → problem → solve → trajectory → F-curves.

``read_problem(scene, vehicle)`` turns what an artist set up into the scenario tables of
``core`` (the ``solve`` contract of ``core.dmoc``; ``read_simulation`` builds the
``simulate`` contract) and the mapping between frames and trajectory time. It reads:

* the vehicle's own keyframes (of the action it plays, or of the action it had before a
  bake): the start state at Scene › Vehicle Motion › Start, the goal at End (when keyed
  there), and pass-through poses at the keys in between — position always (within Key
  Tolerance), heading or orientation where a rotation channel is keyed at that frame, and
  speed (``vehicle_motion.speed``) at the start and the goal;
* obstacles: the objects of a collection named ``Obstacles`` and objects flagged as
  obstacles, each a sphere, oriented box or capsule fitted to its evaluated geometry in world
  space (modifiers, scale, rotation, parents and off-centre origins included) — the rule is
  in :meth:`_Reader.obstacles`;
* constraint empties (``vehicle_motion.constraint_kind``): Pass Through (radius = display
  size × world scale), Stop Here (at the empty, zero velocity), Land / Dock Here (at the
  empty, heading along its X axis, at rest), Keep Out (a sphere of the display size) and
  Speed Limit, at the frames the empty is keyed at, at a given frame, or over the shot.

Timing: duration = (End − Start) / fps with fps = render.fps / fps_base, steps = (End −
Start) × steps per frame, so trajectory node k lands on frame Start + k / steps_per_frame.
Units: positions are world coordinates times ``unit_settings.scale_length`` (metres),
relative to an offset (planar vehicles drive on the plane of their start height);
``FrameMap`` maps both ways. A stop or landing between Start and End splits the shot into
segments solved one after the other (each one's start is the previous one's end state).

Numbers: every position the reader takes (the vehicle's keys and poses, constraint empties,
obstacle vertices) must lie within ``MAX_DISTANCE`` = 1e6 m (1000 km) of the world origin, and
every speed (speed keys, the Speed setting, speed limits) be at most ``MAX_SPEED`` = 1e4 m/s
(10 km/s), in metres after Unit Scale; keyed transform channels must be finite numbers (Blender
keeps keys and transforms as 32-bit floats: 1e40 typed in is stored as 3.4e38, a custom property
key of 1e300 as inf); control channels must lie within the vehicle's limits, and those limits
(the vehicle's Max … settings) must be positive, as core requires. A number that breaks this is
refused before anything is solved, naming the object, the channel and the frame.

Everything is read before anything is solved; problems are a :class:`SceneError`, one line
naming the object or frame. The scene is left as it was (the current frame is restored).
The result holds plain numbers and strings only, so a worker thread can use it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import bpy
import mathutils
import numpy as np

from ..core.errors import VehicleMotionError
from . import action_compat
from .properties import CHILD_ROLES, CHILD_ROLES_BY_TYPE, CORE_VEHICLE_NAMES

OBSTACLE_COLLECTION = "Obstacles"
_OBSTACLE_COLLECTION_NAME = re.compile(r"^Obstacles(\.\d+)?$")
PLANAR = frozenset({"CAR", "SNAKEBOARD"})
SOLVABLE = frozenset({"CAR", "SNAKEBOARD", "HELICOPTER", "BOAT"})
REQUIRED_ROLES = {"CAR": ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right")}
# The object types whose evaluated geometry Object.to_mesh() converts (bpy 4.5 and 5.0; every
# other type raises "Object does not have geometry data").
MESH_TYPES = frozenset({"MESH", "CURVE", "SURFACE", "FONT", "META"})
# Types with no geometry at all (the rest — hair curves, point clouds, volumes, grease pencil —
# have geometry that to_mesh cannot read: they convert to a mesh with Object › Convert).
NO_GEOMETRY_TYPES = frozenset({"EMPTY", "LIGHT", "CAMERA", "ARMATURE", "LATTICE", "SPEAKER", "LIGHT_PROBE"})
TYPE_LABELS = {"FONT": "text", "META": "metaball", "CURVES": "hair curves object", "POINTCLOUD": "point cloud",
               "GREASEPENCIL": "grease pencil object", "GPENCIL": "grease pencil object",
               "LIGHT_PROBE": "light probe"}
MAX_STEPS = 20_000
MAX_DISTANCE = 1e6   # m: positions within 1000 km of the world origin
MAX_SPEED = 1e4      # m/s: speeds up to 10 km/s
MIN_SIZE = 1e-6      # m: the thinnest half thickness of an obstacle; smaller in every direction: no size

LOCATION_PATHS = frozenset({"location", "delta_location"})
ROTATION_PATHS = frozenset({"rotation_euler", "rotation_quaternion", "rotation_axis_angle",
                            "delta_rotation_euler", "delta_rotation_quaternion"})
SCALE_PATHS = frozenset({"scale", "delta_scale"})
SPEED_PATH = "vehicle_motion.speed"

# [vehicle] keys of core's readers per vehicle type; lengths are converted with scale_length.
VEHICLE_KEYS: dict[str, tuple[str, ...]] = {
    "CAR": ("mass", "wheel_inertia", "yaw_inertia", "wheel_radius", "wheelbase", "max_steering_angle",
            "max_steering_rate", "max_torque"),
    "SNAKEBOARD": ("mass", "half_wheelbase", "rotor_inertia", "wheel_inertia", "max_wheel_angle",
                   "max_rotor_torque", "max_steering_torque"),
    "HELICOPTER": ("mass", "inertia", "main_rotor_offset", "tail_rotor_offset", "max_tilt", "max_collective",
                   "max_yaw", "rotor_speed"),
    "BOAT": ("mass", "inertia", "max_thrust"),
    "RIGID_BODY": ("mass", "inertia", "gravity"),
}
LENGTH_KEYS = frozenset({"wheel_radius", "wheelbase", "half_wheelbase", "main_rotor_offset", "tail_rotor_offset"})
BOAT_THRUSTERS = 2  # the default hull's two transom thrusters (core.scenario.boat)

# Control channels (custom properties keyed on the vehicle) for Simulate, and their limits.
CONTROL_CHANNELS: dict[str, tuple[str, ...]] = {
    "CAR": ("torque", "steering_rate"),
    "HELICOPTER": ("collective", "yaw", "pitch_tilt", "roll_tilt"),
    "BOAT": tuple(f"thruster_{i + 1}" for i in range(BOAT_THRUSTERS)),
    "SNAKEBOARD": ("rotor_torque", "steering_torque"),
    "RIGID_BODY": (),
}

KIND_LABELS = {"PASS_THROUGH": "pass-through", "STOP": "stop", "LAND": "landing",
               "KEEP_OUT": "keep-out", "SPEED_LIMIT": "speed limit", "KEY": "key"}
TIMED_KINDS = frozenset({"PASS_THROUGH", "STOP", "LAND"})


class SceneError(VehicleMotionError):
    """The scene cannot become a problem; the message names the object or frame."""


# ----------------------------------------------------------------------------- plain results

@dataclass
class FrameMap:
    """Frames ↔ trajectory time, world (Blender units) ↔ solve coordinates (metres)."""
    frame_start: int
    frame_end: int
    fps: float
    steps_per_frame: int
    scale: float = 1.0                                          # unit_settings.scale_length
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)        # world point at the solve origin

    @property
    def frames(self) -> int:
        return self.frame_end - self.frame_start

    @property
    def steps(self) -> int:
        return self.frames * self.steps_per_frame

    @property
    def duration(self) -> float:
        return self.frames / self.fps

    @property
    def dt(self) -> float:
        return 1.0 / (self.fps * self.steps_per_frame)

    def time(self, frame: float) -> float:
        return (frame - self.frame_start) / self.fps

    def frame(self, time: float) -> float:
        return self.frame_start + time * self.fps

    def to_solve(self, p) -> np.ndarray:
        return (np.asarray(p, dtype=float) - np.asarray(self.offset)) * self.scale

    def to_world(self, p) -> np.ndarray:
        return np.asarray(p, dtype=float) / self.scale + np.asarray(self.offset)

    def trajectory_to_world(self, trajectory):
        """A copy of a solve-space trajectory in world coordinates (Blender units)."""
        from ..core.trajectory import Trajectory
        t = trajectory
        stats = dict(t.stats)
        stats.update(frame_start=self.frame_start, fps=self.fps, scale_length=self.scale,
                     world_offset=list(self.offset))
        scale_or_none = (lambda a: None if a is None else np.asarray(a, dtype=float) / self.scale)
        return Trajectory(
            time=np.array(t.time, dtype=float), position=self.to_world(t.position),
            orientation=np.array(t.orientation, dtype=float),
            angular_velocity=np.array(t.angular_velocity, dtype=float),
            linear_velocity=np.asarray(t.linear_velocity, dtype=float) / self.scale,
            momentum_angular=t.momentum_angular, momentum_linear=scale_or_none(t.momentum_linear),
            heading=None if t.heading is None else np.array(t.heading, dtype=float),
            shape={k: np.array(v, dtype=float) for k, v in t.shape.items()},
            controls={k: np.array(v, dtype=float) for k, v in t.controls.items()},
            series=dict(t.series), stats=stats, vehicle=t.vehicle)


@dataclass
class ObstacleShape:
    """A keep-out shape in world coordinates (Blender units)."""
    name: str
    kind: str                               # "sphere" | "box" | "capsule"
    center: np.ndarray
    radius: float = 0.0
    half_extents: np.ndarray | None = None
    rotation: np.ndarray | None = None      # box: columns are its axes in world
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    margin: float = 0.0
    source: str = "obstacle"                # "obstacle" | "keep-out"

    def distance(self, p) -> np.ndarray:
        """Signed distance (negative inside) of world points p (..., 3)."""
        p = np.asarray(p, dtype=float)
        if self.kind == "sphere":
            return np.linalg.norm(p - self.center, axis=-1) - self.radius
        if self.kind == "capsule":
            ab = self.b - self.a
            t = np.clip(((p - self.a) @ ab) / float(ab @ ab), 0.0, 1.0)
            return np.linalg.norm(p - (self.a + t[..., None] * ab), axis=-1) - self.radius
        q = np.abs((p - self.center) @ self.rotation) - self.half_extents
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
        return outside + np.minimum(np.max(q, axis=-1), 0.0)

    def volume(self) -> float:
        if self.kind == "sphere":
            return 4.0 / 3.0 * math.pi * self.radius ** 3
        if self.kind == "capsule":
            return math.pi * self.radius ** 2 * float(np.linalg.norm(self.b - self.a)) \
                + 4.0 / 3.0 * math.pi * self.radius ** 3
        return 8.0 * float(np.prod(self.half_extents))

    def label(self) -> str:
        return f"{self.source} '{self.name}'"

    def table(self, fm: FrameMap) -> dict:
        """The ``[[obstacles]]`` entry (metres, solve coordinates)."""
        s = fm.scale
        out: dict = {"type": self.kind, "margin": self.margin * s}
        if self.kind == "sphere":
            out.update(center=_floats(fm.to_solve(self.center)), radius=max(self.radius * s, MIN_SIZE))
        elif self.kind == "box":
            q = mathutils.Matrix(self.rotation.tolist()).to_quaternion().normalized()
            out.update(center=_floats(fm.to_solve(self.center)),
                       half_extents=_floats(np.maximum(self.half_extents * s, MIN_SIZE)),
                       orientation=_unit_quaternion(q))
        else:
            out.update(a=_floats(fm.to_solve(self.a)), b=_floats(fm.to_solve(self.b)),
                       radius=max(self.radius * s, MIN_SIZE))
        return out


@dataclass
class Constraint:
    """One requirement found in the scene (for the panel list, messages and checks)."""
    name: str                   # the object it comes from
    kind: str                   # KEY, PASS_THROUGH, STOP, LAND, KEEP_OUT, SPEED_LIMIT
    frame: float | None         # None: whole shot
    position: np.ndarray | None = None   # world
    radius: float = 0.0                  # world units
    heading: float | None = None
    orientation: tuple | None = None     # (w, x, y, z) for SE(3) keys
    speed: float | None = None           # world units / s
    speed_limit: float | None = None
    forward: np.ndarray | None = None    # world direction of the body X axis (velocity direction)

    def describe(self) -> str:
        what = KIND_LABELS.get(self.kind, self.kind.lower())
        when = "whole shot" if self.frame is None else f"frame {_fmt_frame(self.frame)}"
        if self.kind == "KEY":
            return f"key of '{self.name}' at {when}"
        return f"{what} '{self.name}' ({when})"


@dataclass
class Segment:
    """One solve: frames [frame_start, frame_end] and its scenario (``start`` of a segment
    after the first is filled from the previous segment's end state by addon.solving)."""
    frame_start: int
    frame_end: int
    scenario: dict
    waypoint_labels: list[str] = field(default_factory=list)
    continues: bool = False


@dataclass
class Problem:
    vehicle: str
    vehicle_type: str
    core_type: str
    frame_map: FrameMap
    segments: list[Segment]
    constraints: list[Constraint]
    obstacles: list[ObstacleShape]
    spheres: np.ndarray                 # (S, 4) body frame, metres
    warnings: list[str] = field(default_factory=list)
    time_limit_s: float = 60.0

    @property
    def scenario(self) -> dict:
        """The scenario of a problem that is one segment."""
        return self.segments[0].scenario

    def describe(self, message: str, segment: Segment | None = None) -> str:
        """A core message with its scenario labels turned into object names and frames."""
        segment = segment or self.segments[0]
        spf = self.frame_map.steps_per_frame

        def obstacle(m):
            i = int(m.group(1)) - 1
            return self.obstacles[i].label() if 0 <= i < len(self.obstacles) else m.group(0)

        def waypoint(m):
            i = int(m.group(1)) - 1
            labels = segment.waypoint_labels
            return labels[i] if 0 <= i < len(labels) else m.group(0)

        def node(m):
            return f"frame {_fmt_frame(segment.frame_start + int(m.group(2)) / spf)}"

        message = re.sub(r"obstacle #(\d+) \(\w+\)", obstacle, message)
        message = re.sub(r"waypoint #(\d+)", waypoint, message)
        message = re.sub(r"\b(node|step) (\d+)", node, message)
        return message


@dataclass
class SimulationProblem:
    vehicle: str
    vehicle_type: str
    frame_map: FrameMap
    scenario: dict
    warnings: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- small helpers

def _floats(v) -> list[float]:
    return [float(x) for x in np.asarray(v, dtype=float).reshape(-1)]


def _unit_quaternion(q) -> list[float]:
    w = [float(x) for x in q]
    n = math.sqrt(sum(x * x for x in w))
    return [x / n for x in w]


def _fmt_frame(frame: float) -> str:
    return f"{frame:g}" if abs(frame - round(frame)) > 1e-6 else str(int(round(frame)))


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _type_label(ob) -> str:
    return TYPE_LABELS.get(ob.type, ob.type.lower().replace("_", " "))


def _vector_text(v) -> str:
    return "(" + ", ".join(f"{float(x):g}" for x in v) + ")"


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


def _out_of_range(value: float, unit: str, scale: float) -> bool:
    """A position (unit "m") or speed ("m/s") in scene units that is not finite or beyond its bound."""
    bound = MAX_DISTANCE if unit == "m" else MAX_SPEED
    return not math.isfinite(value) or abs(value) * scale > bound


def _range_text(unit: str) -> str:
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
            if (unit and _out_of_range(value, unit, scale)) or not math.isfinite(value):
                bad.append((frame, path, fc.array_index, value, unit))
    if not bad:
        return
    frame, path, index, value, unit = min(bad, key=lambda b: b[:3])
    shown = f"{value * scale:.3g} {unit}" if unit and math.isfinite(value) else f"{value:g}"
    why = _range_text(unit) if math.isfinite(value) else "not a finite number"
    raise SceneError(f"'{obj.name}' is keyed at {_channel(path, index)} = {shown} at frame {_fmt_frame(frame)}, "
                     f"out of range ({why}): fix that key")


def check_pose(obj, m: np.ndarray, frame: float | None, scale: float) -> None:
    """Refuse a world matrix that is not finite or a position beyond ``MAX_DISTANCE``."""
    when = "" if frame is None else f" at frame {_fmt_frame(frame)}"
    parent = f" or its parent '{obj.parent.name}'" if obj.parent is not None else ""
    if not np.all(np.isfinite(m)):
        raise SceneError(f"'{obj.name}' has a transform that is not a finite number{when}: fix its location, "
                         f"rotation or scale{parent}")
    distance = float(np.linalg.norm(m[:3, 3])) * scale
    if distance > MAX_DISTANCE:
        raise SceneError(f"'{obj.name}' is {distance:.3g} m from the world origin{when}, out of range "
                         f"({_range_text('m')}): move it{parent}")


def _polar(m3: np.ndarray) -> np.ndarray:
    """The rotation nearest to a 3×3 matrix (removes scale and shear). A mirroring matrix (negative
    scale, det < 0) has no nearest rotation (every one is as near when the scale is uniform): it
    gives the rotation of its axes with Y reversed, so X (forward) and Z (up) keep their world
    directions and an obstacle's box keeps the object's axes."""
    m3 = np.array(m3, dtype=float)
    if np.linalg.det(m3) < 0:
        m3[:, 1] *= -1
    u, _, vt = np.linalg.svd(m3)
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] *= -1
        r = u @ vt
    return r


def _yaw(r: np.ndarray) -> float:
    return math.atan2(r[1, 0], r[0, 0])


def _quaternion(r: np.ndarray) -> tuple:
    return tuple(_unit_quaternion(mathutils.Matrix(r.tolist()).to_quaternion()))


def _is_animated(ob) -> bool:
    while ob is not None:
        anim = ob.animation_data
        if anim is not None and (anim.action is not None or len(anim.drivers) or len(anim.nla_tracks)):
            return True
        if any(not c.mute for c in ob.constraints):
            return True
        ob = ob.parent
    return False


def _descendants(obj) -> list:
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


def _fcurves(obj) -> list:
    ref = source_action(obj)
    return [] if ref is None else action_compat.fcurves(ref)


def _key_frames(fcurves, paths=None) -> set[float]:
    frames: set[float] = set()
    for fc in fcurves:
        if paths is None or fc.data_path in paths:
            frames.update(round(float(k.co[0]), 4) for k in fc.keyframe_points)
    return frames


class _FrameGuard:
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


class _Pose:
    """World pose of an object at any frame, from the F-curves of its source action (so a
    baked vehicle is read from the keys it had before the bake) and its parent's space."""

    def __init__(self, obj, guard: _FrameGuard):
        self.obj, self.guard = obj, guard
        if obj.rotation_mode == "AXIS_ANGLE":
            raise SceneError(f"'{obj.name}' uses the Axis Angle rotation mode, which Vehicle Motion cannot "
                             "read or bake: set it to Quaternion or an Euler order")
        self.curves = {(fc.data_path, fc.array_index): fc for fc in _fcurves(obj) if not fc.mute}
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
        if not _is_animated(obj.parent):
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


def _speed_at(obj, frame: float) -> float:
    fc = next((fc for fc in _fcurves(obj) if fc.data_path == SPEED_PATH and not fc.mute), None)
    return float(fc.evaluate(frame)) if fc is not None else float(obj.vehicle_motion.speed)


# ----------------------------------------------------------------------------- obstacles

def _world_vertices(obj, depsgraph) -> np.ndarray:
    """Vertices of obj's evaluated geometry in world space (N, 3)."""
    ob = obj.evaluated_get(depsgraph)
    mesh = ob.to_mesh()
    try:
        if mesh is None or len(mesh.vertices) == 0:
            return np.zeros((0, 3))
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
    finally:
        ob.to_mesh_clear()
    m = np.array(ob.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def _box_in_frame(v: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre (world) and half extents of the box with axes r (columns) holding v."""
    local = v @ r
    lo, hi = local.min(axis=0), local.max(axis=0)
    return r @ (0.5 * (lo + hi)), 0.5 * (hi - lo)


def fit_shape(name: str, v: np.ndarray, shape: str, frame_hint: np.ndarray | None = None,
              margin: float = 0.0, min_half: float = 0.0) -> ObstacleShape:
    """The sphere, oriented box or capsule (``shape``: SPHERE, BOX, CAPSULE, or AUTO for the
    smallest) that holds the points v (N, 3); the box's axes (a proper rotation, det +1) are the
    object's (frame_hint) or the points' principal axes, whichever gives the smaller box (for
    flat points, of zero volume either way, the one with the smaller sides). Flat points (a
    plane, a line) are a box or capsule of zero thickness across them: every half extent and
    radius is at least ``min_half``, so no distance divides by a zero size."""
    frames = []
    if frame_hint is not None:
        frames.append(frame_hint)
    if len(v) >= 3:
        cov = np.cov((v - v.mean(axis=0)).T)
        _, vecs = np.linalg.eigh(cov)
        if np.linalg.det(vecs) < 0:
            vecs[:, 0] *= -1
        frames.append(vecs)
    if not frames:
        frames.append(np.eye(3))
    best = None
    for r in frames:
        c, e = _box_in_frame(v, r)
        if best is None or np.prod(e) < np.prod(best[2]) - 1e-12 or \
                (np.prod(e) <= np.prod(best[2]) + 1e-12 and np.sum(e) < np.sum(best[2]) * (1.0 - 1e-9)):
            best = (r, c, e)
    r, c, e = best
    box = ObstacleShape(name, "box", c, half_extents=np.maximum(e, min_half), rotation=r, margin=margin)
    sphere = ObstacleShape(name, "sphere", c, radius=max(float(np.max(np.linalg.norm(v - c, axis=1))), min_half),
                           margin=margin)
    # capsule along the box's longest axis through its centre (a segment's: radius 0, then min_half)
    axis = r[:, int(np.argmax(e))]
    rel = v - c
    t = rel @ axis
    radial = np.linalg.norm(rel - t[:, None] * axis, axis=1)
    rad = float(np.max(radial))
    half = float(np.max(np.abs(t) - np.sqrt(np.maximum(rad * rad - radial * radial, 0.0))))
    capsule = None
    if half > 1e-9 * max(rad, 1.0):
        capsule = ObstacleShape(name, "capsule", c, radius=max(rad, min_half), a=c - half * axis, b=c + half * axis,
                                margin=margin)
    if shape == "SPHERE":
        return sphere
    if shape == "BOX":
        return box
    if shape == "CAPSULE":
        return capsule or sphere
    candidates = [s for s in (sphere, box, capsule) if s is not None]
    return min(candidates, key=lambda s: s.volume())


# ----------------------------------------------------------------------------- the reader

class _Reader:
    def __init__(self, scene, vehicle, guard: _FrameGuard):
        self.scene, self.obj, self.guard = scene, vehicle, guard
        self.settings = scene.vehicle_motion
        self.warnings: list[str] = []
        self.vtype = vehicle.vehicle_motion.vehicle_type
        if self.vtype == "NONE":
            raise SceneError(f"'{vehicle.name}' is not a vehicle: set its Vehicle type in the Vehicle panel")
        self.core_type = CORE_VEHICLE_NAMES[self.vtype]
        self.planar = self.vtype in PLANAR
        self.scale = float(scene.unit_settings.scale_length) or 1.0
        self.fm = self._frame_map()
        self.pose = _Pose(vehicle, guard)
        self.fcurves = [fc for fc in _fcurves(vehicle) if not fc.mute]

    # -- frames ------------------------------------------------------------------------------
    def _frame_map(self) -> FrameMap:
        s = self.settings
        render = self.scene.render
        fps = render.fps / render.fps_base
        if s.frame_end <= s.frame_start:
            raise SceneError(f"the frame range is empty: Start {s.frame_start}, End {s.frame_end} "
                             "(Scene › Vehicle Motion): End must be after Start")
        fm = FrameMap(s.frame_start, s.frame_end, fps, s.steps_per_frame, self.scale)
        if fm.steps < 2:
            raise SceneError(f"frames {s.frame_start}–{s.frame_end} give {fm.steps} step; "
                             "raise Steps per Frame or End (at least 2 steps)")
        if fm.steps > MAX_STEPS:
            raise SceneError(f"frames {s.frame_start}–{s.frame_end} × {s.steps_per_frame} steps per frame "
                             f"= {fm.steps} steps; the most a solve takes is {MAX_STEPS}")
        return fm

    # -- vehicle ------------------------------------------------------------------------------
    def check_parameters(self) -> None:
        """The vehicle's settings are finite and its limits (the Max … settings) positive, as core
        requires; named in panel words."""
        s = self.obj.vehicle_motion
        props = type(s).bl_rna.properties
        for key in VEHICLE_KEYS[self.vtype]:
            value = getattr(s, key)
            values = [float(x) for x in value] if key == "inertia" else [float(value)]
            label = props[key].name
            if not all(math.isfinite(x) for x in values):
                raise SceneError(f"'{self.obj.name}' {label} is not a finite number: set it in the Vehicle panel")
            if key.startswith("max_") and values[0] <= 0:
                raise SceneError(f"'{self.obj.name}' {label} is {values[0]:g}: it must be positive (set it in the "
                                 "Vehicle panel)")
        speed = float(s.speed)
        if not any(fc.data_path == SPEED_PATH for fc in self.fcurves) and _out_of_range(speed, "m/s", self.scale):
            shown = f"{speed * self.scale:.3g} m/s" if math.isfinite(speed) else f"{speed:g}"
            why = _range_text("m/s") if math.isfinite(speed) else "not a finite number"
            raise SceneError(f"'{self.obj.name}' Speed is {shown}, out of range ({why}): set it in the Vehicle panel")

    def parameters(self) -> dict:
        s = self.obj.vehicle_motion
        out: dict = {"type": self.core_type}
        for key in VEHICLE_KEYS[self.vtype]:
            value = getattr(s, key)
            if key == "inertia":
                value = [float(x) for x in value]
            elif key == "gravity":
                value = bool(value)
            else:
                value = float(value) * (self.scale if key in LENGTH_KEYS else 1.0)
            out[key] = value
        return out

    def check_parts(self) -> None:
        s = self.obj.vehicle_motion
        family = set(_descendants(self.obj))
        for role in REQUIRED_ROLES.get(self.vtype, ()):
            if getattr(s, role) is None:
                label = CHILD_ROLES[role][0]
                raise SceneError(f"'{self.obj.name}' has no {label} object: set it in Vehicle › Parts "
                                 "(the bake turns the wheels)")
        for role in CHILD_ROLES_BY_TYPE[self.vtype]:
            child = getattr(s, role)
            if child is None:
                continue
            if child not in family:
                raise SceneError(f"'{child.name}' ({CHILD_ROLES[role][0]} of '{self.obj.name}') is not parented "
                                 f"to '{self.obj.name}', so it would not follow the motion")
            if child.rotation_mode == "AXIS_ANGLE":
                raise SceneError(f"'{child.name}' uses the Axis Angle rotation mode: set it to Quaternion or "
                                 "an Euler order")

    def collision_spheres(self) -> np.ndarray:
        """Spheres (body frame, metres) along the body's length covering the bounding box of
        the vehicle's meshes (body and parts) at the current evaluation."""
        obj = self.obj
        depsgraph = bpy.context.evaluated_depsgraph_get()
        m = np.array(obj.evaluated_get(depsgraph).matrix_world)
        check_pose(obj, m, self.scene.frame_current, self.scale)
        r = _polar(m[:3, :3])
        parts = [ob for ob in [obj, *_descendants(obj)] if ob.type in MESH_TYPES]
        verts = [_world_vertices(ob, depsgraph) for ob in parts]
        verts = [v for v in verts if len(v)]
        radius = obj.vehicle_motion.collision_radius * self.scale
        if not verts:
            if radius > 0:
                return np.array([[0.0, 0.0, 0.0, radius]])
            return np.zeros((0, 4))
        verts = np.concatenate(verts)
        if not np.all(np.isfinite(verts)) or float(np.max(np.linalg.norm(verts, axis=1))) * self.scale > MAX_DISTANCE:
            raise SceneError(f"'{obj.name}' (its meshes and parts) reaches beyond {MAX_DISTANCE:g} m from the world "
                             f"origin at frame {self.scene.frame_current}, out of range ({_range_text('m')}): "
                             "fix its scale and location")
        body = (verts - m[:3, 3]) @ r * self.scale
        lo, hi = body.min(axis=0), body.max(axis=0)
        length = hi[0] - lo[0]
        cross = math.hypot(0.5 * (hi[1] - lo[1]), 0.5 * (hi[2] - lo[2]))
        n = max(1, math.ceil(length / max(cross, 1e-9) - 1e-9))
        spacing = length / n
        fitted = math.sqrt(cross ** 2 + (0.5 * spacing) ** 2)
        yc, zc = 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])
        rows = [[lo[0] + (i + 0.5) * spacing, yc, zc, radius if radius > 0 else fitted] for i in range(n)]
        return np.array(rows)

    # -- keys --------------------------------------------------------------------------------
    def keys(self) -> tuple[list[float], set[float], set[float]]:
        """(keyed frames, frames with a rotation key, frames with a speed key)."""
        transform = LOCATION_PATHS | ROTATION_PATHS | SCALE_PATHS
        frames = sorted(_key_frames(self.fcurves, transform | {SPEED_PATH}))
        name = self.obj.name
        if not frames:
            raise SceneError(f"'{name}' has no keyframes: key its location at the start frame "
                             f"{self.fm.frame_start} and at the goal")
        if len(frames) == 1:
            raise SceneError(f"'{name}' has a single keyframe (frame {_fmt_frame(frames[0])}): key its goal "
                             "pose too (at least a start and a goal keyframe)")
        fs, fe = self.fm.frame_start, self.fm.frame_end
        if frames[0] > fs + 1e-6:
            raise SceneError(f"'{name}' is first keyed at frame {_fmt_frame(frames[0])}, after the start frame "
                             f"{fs} (Scene › Vehicle Motion › Start): key its start pose at frame {fs}")
        outside = [f for f in frames if f < fs - 1e-6 or f > fe + 1e-6]
        if outside:
            self.warnings.append(f"keys of '{name}' at frames {', '.join(_fmt_frame(f) for f in outside)} are "
                                 f"outside frames {fs}–{fe} and ignored")
        inside = [f for f in frames if fs - 1e-6 <= f <= fe + 1e-6]
        return inside, _key_frames(self.fcurves, ROTATION_PATHS), _key_frames(self.fcurves, {SPEED_PATH})

    def vehicle_pose(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        m = self.pose.world(frame)
        check_pose(self.obj, m, frame, self.scale)
        return m[:3, 3].copy(), _polar(m[:3, :3])

    # -- constraint empties -------------------------------------------------------------------
    def empties(self) -> list[Constraint]:
        out: list[Constraint] = []
        fs, fe = self.fm.frame_start, self.fm.frame_end
        for ob in sorted(self.scene.objects, key=lambda o: o.name):
            s = ob.vehicle_motion
            kind = s.constraint_kind
            if kind == "NONE" or ob is self.obj:
                continue
            if s.constraint_vehicle is not None and s.constraint_vehicle != self.obj:
                continue
            if ob.type != "EMPTY":
                self.warnings.append(f"'{ob.name}' is a {ob.type.lower()}, not an empty: its "
                                     f"{KIND_LABELS[kind]} constraint is ignored")
                continue
            label = KIND_LABELS[kind]
            own = sorted(_key_frames([fc for fc in _fcurves(ob) if not fc.mute]))
            if s.constraint_timing == "FRAME":
                frames: list[float | None] = [float(s.constraint_frame)]
            elif s.constraint_timing == "SHOT":
                frames = [None]
            else:
                frames = list(own) if own else [None]
            if kind in TIMED_KINDS and None in frames:
                why = "has no keyframe" if s.constraint_timing == "AUTO" else "is set to the whole shot"
                raise SceneError(f"{label} '{ob.name}' {why}: key it at the frame the vehicle must be there, "
                                 "or set its When to a frame")
            if kind in ("KEEP_OUT", "SPEED_LIMIT") and frames != [None]:
                self.warnings.append(f"{label} '{ob.name}' holds over the whole shot (the solver has no "
                                     f"time windows); its frame is not used")
                frames = [frames[0]]
            check_keys(ob, [fc for fc in _fcurves(ob) if not fc.mute], self.scale)
            if kind == "SPEED_LIMIT" and _out_of_range(float(s.speed_limit), "m/s", self.scale):
                raise SceneError(f"speed limit '{ob.name}' is {float(s.speed_limit) * self.scale:.3g} m/s, out of "
                                 f"range ({_range_text('m/s')}): lower it (Constraint / Obstacle panel)")
            pose = _Pose(ob, self.guard)
            for frame in frames:
                if frame is not None and (frame < fs - 1e-6 or frame > fe + 1e-6):
                    self.warnings.append(f"{label} '{ob.name}' at frame {_fmt_frame(frame)} is outside frames "
                                         f"{fs}–{fe} and ignored")
                    continue
                m = pose.world(fs if frame is None else frame)
                check_pose(ob, m, frame, self.scale)
                size = ob.empty_display_size * float(np.max(np.linalg.norm(m[:3, :3], axis=0)))
                if size * self.scale > MAX_DISTANCE:
                    raise SceneError(f"{label} '{ob.name}' has a radius of {size * self.scale:.3g} m, out of range "
                                     f"({_range_text('m')}): lower its display size or scale")
                if kind == "KEEP_OUT" and size * self.scale < MIN_SIZE:
                    raise SceneError(f"{label} '{ob.name}' has no size (radius {size * self.scale:.3g} m; its "
                                     f"display size is {ob.empty_display_size:g}, its world scale "
                                     f"{_vector_text(np.linalg.norm(m[:3, :3], axis=0))}): give it a size")
                c = Constraint(ob.name, kind, None if kind in ("KEEP_OUT", "SPEED_LIMIT") else frame,
                               position=m[:3, 3].copy(), radius=size)
                c.forward = _polar(m[:3, :3])[:, 0]
                if kind == "LAND":
                    c.heading = _yaw(_polar(m[:3, :3]))
                    c.speed = 0.0
                elif kind == "STOP":
                    c.speed = 0.0
                elif kind == "SPEED_LIMIT":
                    c.speed_limit = float(s.speed_limit)
                out.append(c)
        return out

    # -- obstacles ----------------------------------------------------------------------------
    def obstacle_objects(self) -> list:
        family = {self.obj, *_descendants(self.obj)}
        found = {}
        for coll in [self.scene.collection, *self.scene.collection.children_recursive]:
            if _OBSTACLE_COLLECTION_NAME.match(coll.name):
                for ob in coll.all_objects:
                    found[ob.name] = ob
        for ob in self.scene.objects:
            if ob.vehicle_motion.is_obstacle:
                found[ob.name] = ob
        out = []
        for name in sorted(found):
            ob = found[name]
            if ob in family:
                self.warnings.append(f"'{ob.name}' is part of '{self.obj.name}' and not an obstacle to it")
                continue
            if ob.vehicle_motion.constraint_kind != "NONE":
                continue  # a constraint empty inside the collection: read as a constraint
            if ob.vehicle_motion.vehicle_type != "NONE":
                self.warnings.append(f"vehicle '{ob.name}' is not an obstacle (vehicles move); ignored")
                continue
            out.append(ob)
        return out

    def obstacles(self) -> list[ObstacleShape]:
        """One shape per obstacle object. The rule: an obstacle is its evaluated geometry in world
        space — the vertices ``evaluated_get(depsgraph).to_mesh()`` gives (modifiers, parents and
        the object's scale applied; a negative scale mirrors and is fine) — and the fitted sphere,
        box or capsule holds every one of them.

        * Objects with geometry are obstacles: meshes, text, curves (a curve without bevel or
          extrude is its wire: a line or flat obstacle along it), surfaces and metaballs (a
          metaball whose surface melts into its family's base, e.g. 'Blob.001' into 'Blob', is
          covered by the base's shape). Objects without geometry (camera, light, empty, armature,
          lattice, speaker, light probe) or with geometry to_mesh cannot read (hair curves, point
          clouds, volumes, grease pencil) are refused, naming the object and its type.
        * Flat geometry — a plane, a scale of 0 on one or two axes: a wall, a sheet, a pole —
          is an obstacle of zero thickness along those axes; its box or capsule is given a half
          thickness of ``MIN_SIZE`` = 1e-6 m (1 µm) there, so distances stay finite.
        * Geometry spanning less than ``MIN_SIZE`` in every direction (the diagonal of its
          bounding box: a point, a scale of 0 or 1e-30 on every axis) has no size and is refused,
          as is geometry with vertices that are not finite numbers or beyond ``MAX_DISTANCE``
          (1000 km) from the world origin, and a margin beyond ``MAX_DISTANCE``.
        """
        objects = self.obstacle_objects()
        if any(_is_animated(ob) for ob in objects):
            self.guard.set(self.fm.frame_start)
            for ob in objects:
                if _is_animated(ob):
                    self.warnings.append(f"obstacle '{ob.name}' is animated: its pose at frame "
                                         f"{self.fm.frame_start} is used for the whole shot")
        depsgraph = bpy.context.evaluated_depsgraph_get()
        shapes = []
        for ob in objects:
            self.check_obstacle_type(ob)
        for ob in objects:
            v = _world_vertices(ob, depsgraph)
            if len(v) == 0:
                if ob.type == "META" and self.melts_into_obstacle(ob, objects):
                    continue
                raise SceneError(f"obstacle '{ob.name}' ({_a(_type_label(ob))}) has no geometry (no vertices "
                                 "after modifiers): give it some, or remove it from the "
                                 f"{OBSTACLE_COLLECTION} collection")
            m = np.array(ob.evaluated_get(depsgraph).matrix_world)
            self.check_obstacle_size(ob, v, m)
            s = ob.vehicle_motion
            margin = float(s.obstacle_margin)
            if not margin * self.scale <= MAX_DISTANCE:
                raise SceneError(f"obstacle '{ob.name}' has a margin of {margin * self.scale:.3g} m, out of range "
                                 f"({_range_text('m')}): lower its Margin (Constraint / Obstacle panel)")
            shapes.append(fit_shape(ob.name, v, s.obstacle_shape, _polar(m[:3, :3]), margin,
                                    min_half=MIN_SIZE / self.scale))
        return shapes

    def check_obstacle_type(self, ob) -> None:
        if ob.type in MESH_TYPES:
            return
        what = f"obstacle '{ob.name}' is {_a(_type_label(ob))}"
        remove = f"remove it from the {OBSTACLE_COLLECTION} collection"
        if not any(_OBSTACLE_COLLECTION_NAME.match(c.name) for c in ob.users_collection):
            remove = "untick its Obstacle setting (Constraint / Obstacle panel)"  # flagged, not in the collection
        if ob.type == "EMPTY":
            if remove.startswith("untick"):  # the panel shows an empty's Constraint, not its Obstacle flag
                remove = "clear its Obstacle flag (vehicle_motion.is_obstacle)"
            raise SceneError(f"{what}, which has no geometry: set its Constraint to Keep Out to keep the vehicle "
                             f"out of a sphere (Constraint / Obstacle panel), or {remove}")
        if ob.type in NO_GEOMETRY_TYPES:
            raise SceneError(f"{what}, which has no geometry: {remove}")
        raise SceneError(f"{what}, whose geometry Vehicle Motion cannot read: convert it to a mesh "
                         f"(Object › Convert › Mesh), or {remove}")

    def melts_into_obstacle(self, ob, objects) -> bool:
        """Whether metaball ob (no vertices of its own) melts into the base of its family (the
        metaball of the same name without, or with the lowest, number) and that base is an
        obstacle too: its shape covers ob's surface. Refused when the base is not an obstacle."""
        def family(o):
            stem, dot, number = o.name.rpartition(".")
            return (stem, int(number)) if dot and number.isdigit() else (o.name, 0)
        stem = family(ob)[0]
        members = [o for o in self.scene.objects if o.type == "META" and family(o)[0] == stem]
        base = min(members, key=lambda o: family(o)[1])
        if base is ob:
            return False
        if base in objects:
            return True
        raise SceneError(f"obstacle '{ob.name}' is a metaball that melts into '{base.name}', which holds the "
                         f"surface: put '{base.name}' in the {OBSTACLE_COLLECTION} collection too")

    def check_obstacle_size(self, ob, v: np.ndarray, m: np.ndarray) -> None:
        """Refuse vertices that are not finite, reach beyond ``MAX_DISTANCE``, or span less than
        ``MIN_SIZE`` (no size); the message shows the scale behind it."""
        local = ob.parent is None and tuple(ob.delta_scale) == (1.0, 1.0, 1.0)
        scale = _vector_text(ob.scale if local else np.linalg.norm(m[:3, :3], axis=0))
        scale = f"its {'' if local else 'world '}scale is {scale}"
        if not np.all(np.isfinite(v)):
            raise SceneError(f"obstacle '{ob.name}' has vertices that are not finite numbers ({scale}): fix its "
                             f"scale and location{' or its parent' if ob.parent is not None else ''}")
        far = float(np.max(np.linalg.norm(v, axis=1))) * self.scale
        if far > MAX_DISTANCE:
            raise SceneError(f"obstacle '{ob.name}' reaches {far:.3g} m from the world origin, out of range "
                             f"({_range_text('m')}; {scale}): fix its scale or location")
        span = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0))) * self.scale
        if span < MIN_SIZE:
            raise SceneError(f"obstacle '{ob.name}' has no size (it spans {span:.3g} m; {scale}): give it a size "
                             f"along at least one axis, or remove it from the {OBSTACLE_COLLECTION} collection")

    # -- checks -------------------------------------------------------------------------------
    def sphere_centres(self, position: np.ndarray, r: np.ndarray, spheres: np.ndarray) -> np.ndarray:
        return position + (spheres[:, :3] / self.scale) @ r.T

    def check_pose_clear(self, what: str, position, r, spheres, obstacles) -> None:
        if not len(spheres):
            return
        centres = self.sphere_centres(np.asarray(position), r, spheres)
        radii = spheres[:, 3] / self.scale
        for ob in obstacles:
            clearance = float(np.min(ob.distance(centres) - radii))
            if clearance < ob.margin - 1e-9:
                inside = "inside" if clearance < 0 else "closer than its margin to"
                raise SceneError(f"{what} is {inside} {ob.label()} (clearance {clearance * self.scale:.3g} m, "
                                 f"margin {ob.margin * self.scale:.3g} m): move the key or the obstacle")

    def check_contradictions(self, points: list[Constraint], limit: float | None, start_speed: float,
                             goal_speed: float | None, obstacles) -> None:
        timed = sorted((c for c in points if c.frame is not None), key=lambda c: c.frame)
        for i, a in enumerate(timed):
            for b in timed[i + 1:]:
                if abs(a.frame - b.frame) > 1e-6:
                    break
                gap = float(np.linalg.norm(a.position - b.position))
                if gap > a.radius + b.radius + 1e-9:
                    raise SceneError(f"contradictory constraints at frame {_fmt_frame(a.frame)}: {a.describe()} and "
                                     f"{b.describe()} are {gap * self.scale:.3g} m apart")
                if a.heading is not None and b.heading is not None and \
                        abs(math.remainder(a.heading - b.heading, math.tau)) > 1e-3:
                    raise SceneError(f"contradictory constraints at frame {_fmt_frame(a.frame)}: {a.describe()} and "
                                     f"{b.describe()} ask for different headings")
        for c in timed:
            if c.kind == "KEY":
                continue
            for ob in obstacles:
                d = float(ob.distance(c.position[None])[0])
                if d < -c.radius:
                    raise SceneError(f"contradictory constraints: {c.describe()} lies inside {ob.label()}")
        if limit is None:
            return
        if abs(start_speed) > limit + 1e-9:
            raise SceneError(f"contradictory constraints: '{self.obj.name}' starts at "
                             f"{start_speed * self.scale:.3g} m/s but the speed limit is {limit * self.scale:.3g} m/s")
        if goal_speed is not None and abs(goal_speed) > limit + 1e-9:
            raise SceneError(f"contradictory constraints: '{self.obj.name}' is keyed to {goal_speed * self.scale:.3g} "
                             f"m/s at the goal but the speed limit is {limit * self.scale:.3g} m/s")
        for a, b in zip(timed, timed[1:]):
            dt = (b.frame - a.frame) / self.fm.fps
            if dt <= 0:
                continue
            need = (float(np.linalg.norm(b.position - a.position)) - a.radius - b.radius) / dt
            if need > limit + 1e-9:
                raise SceneError(f"contradictory constraints: from {a.describe()} to {b.describe()} needs at least "
                                 f"{need * self.scale:.3g} m/s, over the speed limit of {limit * self.scale:.3g} m/s")

    # -- the problem --------------------------------------------------------------------------
    def problem(self) -> Problem:
        obj, fm = self.obj, self.fm
        if self.vtype not in SOLVABLE:
            raise SceneError(f"'{obj.name}' is a {self.vtype.replace('_', ' ').lower()}: Solve plans vehicles "
                             "(car, snakeboard, helicopter, boat); use Simulate")
        self.check_parts()
        self.check_parameters()
        frames, rot_keys, speed_keys = self.keys()
        check_keys(obj, self.fcurves, self.scale)
        fs, fe = fm.frame_start, fm.frame_end

        start_pos, start_r = self.vehicle_pose(fs)
        if self.planar:
            fm.offset = (0.0, 0.0, float(start_pos[2]))
            tilt = math.degrees(math.acos(max(-1.0, min(1.0, start_r[2, 2]))))
            if tilt > 0.5:
                self.warnings.append(f"'{obj.name}' is tilted {tilt:.1f}° at frame {fs}; a "
                                     f"{self.vtype.lower()} moves flat, so only its heading is used")
        spheres = self.collision_spheres()
        obstacles = self.obstacles()
        empties = self.empties()
        keep_out = [ObstacleShape(c.name, "sphere", c.position, radius=c.radius, source="keep-out")
                    for c in empties if c.kind == "KEEP_OUT"]
        all_obstacles = obstacles + keep_out
        limits = [c.speed_limit for c in empties if c.kind == "SPEED_LIMIT"]
        limit = min(limits) if limits else None

        # the vehicle's own keys
        tol = self.settings.key_tolerance
        keys: list[Constraint] = []
        for f in frames:
            p, r = self.vehicle_pose(f)
            c = Constraint(obj.name, "KEY", f, position=p, radius=0.0 if f in (fs, fe) else tol, forward=r[:, 0])
            if f in rot_keys or f == fs:
                c.heading = _yaw(r)
                c.orientation = _quaternion(r)
            if f in speed_keys or f == fs:
                c.speed = _speed_at(obj, f)
            if self.planar and abs(p[2] - start_pos[2]) > tol:
                self.warnings.append(f"'{obj.name}' is keyed at height {p[2]:.3g} at frame {_fmt_frame(f)}; a "
                                     f"{self.vtype.lower()} drives at its start height {start_pos[2]:.3g}")
            self.check_pose_clear(f"'{obj.name}' at frame {_fmt_frame(f)}", p, r, spheres, all_obstacles)
            keys.append(c)
        start = keys[0]
        if abs(start.frame - fs) > 1e-6:  # keyed before Start: the pose there is the start
            p, r = self.vehicle_pose(fs)
            start = Constraint(obj.name, "KEY", float(fs), position=p, heading=_yaw(r), orientation=_quaternion(r),
                               speed=_speed_at(obj, fs), forward=r[:, 0])
            keys = [start] + [k for k in keys if k.frame > fs + 1e-6]
            self.check_pose_clear(f"'{obj.name}' at frame {fs}", p, r, spheres, all_obstacles)
        for k in keys[1:]:
            if k.speed is not None and k.frame < fe - 1e-6:
                self.warnings.append(f"the speed keyed on '{obj.name}' at frame {_fmt_frame(k.frame)} is not imposed "
                                     "(only at the start and the goal; use a Stop Here empty to stop)")
                k.speed = None
            if k.orientation is not None and not self.planar and k.frame < fe - 1e-6:
                self.warnings.append(f"only the heading of the rotation keyed on '{obj.name}' at frame "
                                     f"{_fmt_frame(k.frame)} is imposed")
        self._unwrap_headings(keys, empties)

        goal_key = keys[-1] if abs(keys[-1].frame - fe) < 1e-6 else None
        timed = [c for c in empties if c.kind in TIMED_KINDS]
        self.check_contradictions(keys + timed, limit, start.speed or 0.0,
                                  goal_key.speed if goal_key is not None else None, all_obstacles)
        for c in timed:  # constraints at the start frame must agree with the start
            if abs(c.frame - fs) < 1e-6 and c.speed == 0.0 and abs(start.speed or 0.0) > 1e-9:
                raise SceneError(f"contradictory constraints: {c.describe()} asks '{obj.name}' to be at rest at the "
                                 f"start, but it starts at {start.speed * self.scale:.3g} m/s")

        # stops and landings between start and goal split the shot
        cuts = sorted({c.frame for c in timed if c.kind in ("STOP", "LAND") and fs + 1e-6 < c.frame < fe - 1e-6})
        bounds = [fs, *cuts, fe]
        base = self.base_tables(spheres, all_obstacles, limit)
        segments = []
        for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
            segments.append(self.segment(i, int(round(a)), int(round(b)), base, start, keys, timed, goal_key))
        constraints = keys + empties
        return Problem(obj.name, self.vtype, self.core_type, fm, segments, constraints, all_obstacles, spheres,
                       self.warnings, float(self.settings.time_limit_s))

    def _unwrap_headings(self, keys: list[Constraint], empties: list[Constraint]) -> None:
        """Headings in time order, each within π of the one before (or the keyed Euler angle)."""
        items = sorted([c for c in keys + empties if c.heading is not None and c.frame is not None],
                       key=lambda c: c.frame)
        previous = None
        for c in items:
            keyed = self.pose.euler_heading(c.frame) if c.kind == "KEY" else None
            if keyed is not None and abs(math.remainder(keyed - c.heading, math.tau)) < 1e-6:
                c.heading = keyed
            elif previous is not None:
                c.heading = previous + math.remainder(c.heading - previous, math.tau)
            previous = c.heading

    def base_tables(self, spheres: np.ndarray, obstacles: list[ObstacleShape], limit: float | None) -> dict:
        s, fm = self.settings, self.fm
        vehicle = self.parameters()
        if len(spheres):
            vehicle["collision_spheres"] = [_floats(row) for row in spheres]
        else:
            vehicle["collision_radius"] = 0.0
        integrator = {"steps": 0}
        if s.integrator != "VARIATIONAL":
            raise SceneError(f"Solve needs the Variational integrator (Solve Settings › Integrator is "
                             f"{s.integrator.replace('_', ' ').title()})")
        if self.vtype in ("HELICOPTER", "BOAT"):
            integrator["method"] = "vi-cay"
        weights = {"effort": s.weight_effort, "path_length": s.weight_path_length, "hazard": s.weight_hazard,
                   "smoothness": s.weight_smoothness}
        if s.weight_duration > 0:
            self.warnings.append("the Duration weight is not used: the frame range fixes the duration")
        if not any(w > 0 for w in weights.values()):
            raise SceneError("every cost weight is zero (Solve Settings › Cost Weights): nothing to minimise")
        cost: dict = {k: float(v) for k, v in weights.items() if v > 0}
        cost["input_weights"] = self.input_weights()
        bounds: dict = {}
        if limit is not None:
            v = limit * self.scale
            bounds["speed"] = [-v, v] if self.planar else [0.0, v]
            if v <= 0:
                raise SceneError("a speed limit of zero leaves the vehicle no motion")
        backend = s.solver_backend.lower()
        if backend == "auto":
            import importlib.util
            backend = "ipopt" if importlib.util.find_spec("cyipopt") is not None else "scipy"
        solver = {"backend": backend, "max_iter": int(s.max_iter), "tol": float(s.tol),
                  "time_limit_s": float(s.time_limit_s)}
        return {"vehicle": vehicle, "integrator": integrator, "obstacles": [o.table(fm) for o in obstacles],
                "bounds": bounds, "cost": cost, "solver": solver}

    def input_weights(self) -> dict:
        """Effort weights 1/limit² per input: each control counts relative to its range."""
        s = self.obj.vehicle_motion
        limits = {
            "CAR": {"torque": s.max_torque, "steering_rate": s.max_steering_rate},
            "SNAKEBOARD": {"rotor_torque": s.max_rotor_torque, "steering_torque": s.max_steering_torque},
            "HELICOPTER": {"collective": s.max_collective, "yaw": s.max_yaw, "pitch_tilt": s.max_tilt,
                           "roll_tilt": s.max_tilt},
            "BOAT": {name: s.max_thrust for name in CONTROL_CHANNELS["BOAT"]},
        }[self.vtype]
        return {k: (1.0 / float(v) ** 2 if v > 0 else 1.0) for k, v in limits.items()}

    def state_table(self, c: Constraint, full: bool) -> dict:
        """A [start] (full) or [goal] table from a constraint, in solve coordinates."""
        fm = self.fm
        p = fm.to_solve(c.position)
        out: dict = {}
        if self.planar:
            out["position"] = _floats(p[:2])
            if c.heading is not None:
                out["heading"] = float(c.heading)
            if c.speed is not None:
                out["speed"] = float(c.speed) * self.scale
            return out
        out["position"] = _floats(p)
        if full or (c.orientation is not None and c.kind == "KEY"):
            out["orientation"] = list(c.orientation)
        elif c.heading is not None:
            out["heading"] = float(c.heading)
        if c.speed is not None:
            forward = c.forward if c.forward is not None else np.array([1.0, 0.0, 0.0])
            out["velocity"] = _floats(forward * float(c.speed) * self.scale)
            if c.speed == 0.0 and not full:
                out["angular_velocity"] = [0.0, 0.0, 0.0]
        return out

    def segment(self, index: int, a: int, b: int, base: dict, start: Constraint, keys: list[Constraint],
                timed: list[Constraint], goal_key: Constraint | None) -> Segment:
        fm = self.fm
        scenario = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in base.items()}
        scenario["vehicle"] = dict(base["vehicle"])
        scenario["integrator"] = dict(base["integrator"], steps=(b - a) * fm.steps_per_frame)
        scenario["time"] = {"duration": (b - a) / fm.fps}
        scenario["start"] = self.state_table(start, full=True) if index == 0 else {}
        # the goal: a stop or landing at b, else the vehicle's key at End, else free
        at_b = [c for c in timed if abs(c.frame - b) < 1e-6 and c.kind in ("STOP", "LAND")]
        goal: dict = {}
        if at_b:
            c = at_b[0]
            goal = self.state_table(c, full=False)
            if goal_key is not None and b == fm.frame_end and goal_key.heading is not None and c.heading is None:
                goal.update({k: v for k, v in self.state_table(goal_key, full=False).items()
                             if k in ("heading", "orientation")})
        elif b == fm.frame_end and goal_key is not None:
            goal = self.state_table(goal_key, full=False)
        scenario["goal"] = goal
        # waypoints: keys and pass-throughs strictly inside (a, b], except the goal itself
        waypoints, labels = [], []
        items = [k for k in keys if a + 1e-6 < k.frame <= b + 1e-6 and not (k is goal_key and not at_b)]
        items += [c for c in timed if c.kind == "PASS_THROUGH" and a + 1e-6 < c.frame <= b + 1e-6]
        for c in sorted(items, key=lambda c: (c.frame, c.name)):
            if c.kind == "KEY" and abs(c.frame - b) < 1e-6 and at_b:
                continue  # the stop/landing at b fixes the position already (checked to agree)
            p = fm.to_solve(c.position)
            wp = {"time": (c.frame - a) / fm.fps, "position": _floats(p[:2] if self.planar else p),
                  "radius": max(c.radius * self.scale, 1e-4)}
            if c.heading is not None and (c.kind == "KEY" or c.kind == "LAND"):
                wp["heading"] = float(c.heading)
            waypoints.append(wp)
            labels.append(c.describe())
        if waypoints:
            scenario["waypoints"] = waypoints
        if not scenario["obstacles"]:
            del scenario["obstacles"]
        if not scenario["bounds"]:
            del scenario["bounds"]
        return Segment(a, b, scenario, labels, continues=index > 0)

    # -- simulation ----------------------------------------------------------------------------
    def simulation(self) -> SimulationProblem:
        obj, fm, s = self.obj, self.fm, self.settings
        if self.vtype == "CAR":
            self.check_parts()
        self.check_parameters()
        check_keys(obj, self.fcurves, self.scale)
        start_pos, start_r = self.vehicle_pose(fm.frame_start)
        speed = _speed_at(obj, fm.frame_start) * self.scale
        if self.planar:
            fm.offset = (0.0, 0.0, float(start_pos[2]))
        p = fm.to_solve(start_pos)
        heading = self.pose.euler_heading(fm.frame_start)
        if heading is None:
            heading = _yaw(start_r)
        method = {"VARIATIONAL": None, "RK2": "rk2", "IMPLICIT_RK2": "rk2i", "RK4": "rk4",
                  "LIE_NEWMARK": "lie-newmark", "LIE_EULER": "lie-euler"}[s.integrator]
        integrator: dict = {"dt": fm.dt, "steps": fm.steps}
        if self.vtype == "CAR":
            initial = {"position": _floats(p[:2]), "heading": float(heading),
                       "wheel_rate": speed / (obj.vehicle_motion.wheel_radius * self.scale)}
        elif self.vtype == "SNAKEBOARD":
            initial = {"position": _floats(p[:2]), "heading": float(heading), "speed": speed}
        else:
            initial = {"position": _floats(p), "orientation": list(_quaternion(start_r)),
                       "linear_velocity": [speed, 0.0, 0.0]}
        if self.vtype in PLANAR:
            if method is not None:
                raise SceneError(f"a {self.vtype.lower()} has only the Variational integrator (Solve Settings › "
                                 "Integrator)")
        else:
            integrator["method"] = method or "vi-cay"
        vehicle = self.parameters()
        scenario = {"vehicle": vehicle, "integrator": integrator, "initial": initial}
        if CONTROL_CHANNELS[self.vtype]:  # a rigid body has no inputs (and no [controls] table)
            scenario["controls"] = self.controls()
        return SimulationProblem(obj.name, self.vtype, fm, scenario, self.warnings)

    def controls(self) -> dict:
        """Each control channel (a custom property on the vehicle, keyed or constant) sampled at the
        start of every step, checked against the vehicle's limits with the frame named."""
        obj, fm = self.obj, self.fm
        s = obj.vehicle_motion
        limits = {
            "torque": (-s.max_torque, s.max_torque), "steering_rate": (-s.max_steering_rate, s.max_steering_rate),
            "collective": (0.0, s.max_collective), "yaw": (-s.max_yaw, s.max_yaw),
            "pitch_tilt": (-s.max_tilt, s.max_tilt), "roll_tilt": (-s.max_tilt, s.max_tilt),
            "rotor_torque": (-s.max_rotor_torque, s.max_rotor_torque),
            "steering_torque": (-s.max_steering_torque, s.max_steering_torque),
            **{name: (-s.max_thrust, s.max_thrust) for name in CONTROL_CHANNELS["BOAT"]},
        }
        curves = {fc.data_path: fc for fc in self.fcurves}
        frames = fm.frame_start + np.arange(fm.steps) / fm.steps_per_frame
        out = {}
        missing = []
        for name in CONTROL_CHANNELS[self.vtype]:
            fc = curves.get(f'["{name}"]')
            lo, hi = limits[name]
            if fc is not None:
                for kp in sorted(fc.keyframe_points, key=lambda k: k.co[0]):
                    v = float(kp.co[1])
                    if math.isnan(v):
                        raise SceneError(f"'{obj.name}' control '{name}' is keyed to nan (not a number) at frame "
                                         f"{_fmt_frame(kp.co[0])}; its limits are [{lo:.6g}, {hi:.6g}]")
                    if math.isinf(v):
                        raise SceneError(f"'{obj.name}' control '{name}' is keyed to {v:g} at frame "
                                         f"{_fmt_frame(kp.co[0])}, outside its limits [{lo:.6g}, {hi:.6g}] (a key "
                                         "beyond ±3.4e38 is stored as inf)")
                values = np.array([fc.evaluate(float(f)) for f in frames])
            elif name in obj.keys():
                try:
                    values = np.full(len(frames), float(obj[name]))
                except (TypeError, ValueError):
                    raise SceneError(f"'{obj.name}' custom property '{name}' must be a number") from None
            else:
                missing.append(name)
                continue
            bad = np.flatnonzero(~((values >= lo - 1e-9) & (values <= hi + 1e-9)))  # nan too
            if bad.size:
                k = int(bad[0])
                raise SceneError(f"'{obj.name}' control '{name}' is {values[k]:.6g} at frame {_fmt_frame(frames[k])}, "
                                 f"outside its limits [{lo:.6g}, {hi:.6g}]")
            out[name] = {"values": _floats(values)}
        if missing and len(missing) == len(CONTROL_CHANNELS[self.vtype]):
            self.warnings.append(f"'{obj.name}' has none of the control channels {', '.join(missing)} "
                                 "(custom properties): every input is zero")
        elif missing:
            self.warnings.append(f"'{obj.name}' has no {', '.join(missing)} channel: zero")
        return out


# ----------------------------------------------------------------------------- entry points

def read_problem(scene, vehicle) -> Problem:
    """The solve problem of ``vehicle`` in ``scene``; raises SceneError (scene unchanged)."""
    with _FrameGuard(scene) as guard:
        return _Reader(scene, vehicle, guard).problem()


def read_simulation(scene, vehicle) -> SimulationProblem:
    """The forward simulation of ``vehicle`` driven by its keyed control channels."""
    with _FrameGuard(scene) as guard:
        return _Reader(scene, vehicle, guard).simulation()


def keyed_frames(obj) -> list[float]:
    """Sorted frames at which obj (its source action, unmuted F-curves) has keys."""
    return sorted(_key_frames([fc for fc in _fcurves(obj) if not fc.mute]))


def scene_constraints(scene, vehicle) -> list[tuple[str, str, str]]:
    """(object, kind, when) of every constraint on ``vehicle``, without evaluating anything
    (for the panel: cheap, never raises)."""
    out: list[tuple[str, str, str]] = []
    try:
        frames = sorted(_key_frames([fc for fc in _fcurves(vehicle) if not fc.mute]))
    except Exception:
        frames = []
    if frames:
        out.append((vehicle.name, "keys", ", ".join(_fmt_frame(f) for f in frames[:8])
                    + (" …" if len(frames) > 8 else "")))
    for ob in sorted(scene.objects, key=lambda o: o.name):
        s = ob.vehicle_motion
        if s.constraint_kind == "NONE" or ob is vehicle:
            continue
        if s.constraint_vehicle is not None and s.constraint_vehicle != vehicle:
            continue
        if s.constraint_timing == "FRAME":
            when = f"frame {s.constraint_frame}"
        elif s.constraint_timing == "SHOT" or s.constraint_kind in ("KEEP_OUT", "SPEED_LIMIT"):
            when = "whole shot"
        else:
            own = sorted(_key_frames(_fcurves(ob)))
            when = ("frame " + ", ".join(_fmt_frame(f) for f in own)) if own else "no keyframe"
        out.append((ob.name, KIND_LABELS[s.constraint_kind], when))
    count = 0
    for coll in [scene.collection, *scene.collection.children_recursive]:
        if _OBSTACLE_COLLECTION_NAME.match(coll.name):
            count += sum(1 for ob in coll.all_objects if ob.vehicle_motion.constraint_kind == "NONE")
    count += sum(1 for ob in scene.objects if ob.vehicle_motion.is_obstacle
                 and not any(_OBSTACLE_COLLECTION_NAME.match(c.name) for c in ob.users_collection))
    if count:
        out.append((f"{count} object{'s' if count != 1 else ''}", "obstacles", "whole shot"))
    return out


__all__ = ["SceneError", "FrameMap", "ObstacleShape", "Constraint", "Segment", "Problem", "SimulationProblem",
           "read_problem", "read_simulation", "scene_constraints", "keyed_frames", "fit_shape", "source_action",
           "CONTROL_CHANNELS", "OBSTACLE_COLLECTION"]
