"""Scene → problem: the first step of scene → problem → solve → trajectory → F-curves.

``read_problem(scene, vehicle)`` gathers what an artist set up into plain data and hands it to
``core.shot.plan``, which builds the ``solve`` scenarios (``read_simulation`` builds the
``simulate`` contract). It gathers:

* the vehicle's own keyframes (of the action it plays, or of the action it had before a bake):
  the frames, the world pose at each, whether a rotation or the speed (``vehicle_motion.speed``)
  is keyed there; the shot spans the first to the last key (``core.shot.frames.shot_range``; a
  Land / Dock empty's frame counts as a key, so a start key and a landing make a shot), or the
  add-on's own range when Own Frame Range is on;
* obstacles: the objects of a collection named ``Obstacles`` and objects flagged as
  obstacles, each a sphere, oriented box or capsule fitted to its evaluated geometry in world
  space (modifiers, scale, rotation, parents and off-centre origins included) — the rule is
  in :meth:`_Reader.obstacles`;
* constraint empties (``vehicle_motion.constraint_kind``): Pass Through (radius = display
  size × world scale), Stop Here (at the empty, zero velocity), Land / Dock Here (at the
  empty, heading along its X axis and, for a helicopter or boat, level as the empty: its
  pose; at rest), Keep Out (a sphere of the display size) and
  Speed Limit, at the frames the empty is keyed at, at a given frame, or over the shot;
* the vehicle's collision spheres and real geometry (:meth:`_Reader.vehicle_geometry`: its
  evaluated mesh vertices in the body frame, a rotor swept over a turn; a key touching an
  obstacle is measured with them, ``core.shot.contacts``), parameters (SI; dimensions in metres
  whatever the Unit Scale) and input limits;
* a boat's hull: its own evaluated mesh when it is closed (else the default hull, with a warning),
  centred on its volume centroid — the centre of mass the solve plans, the origin may be anywhere
  (the rule is in :meth:`_Reader.boat_hull`);
* a car's geometry from its wheel objects (:meth:`_Reader.measure_car`, the rule in
  ``core.shot.car_geometry``): the rear axle it drives (midway between the rear wheels, on the
  ground), its wheelbase and each wheel's radius — its origin may be anywhere: keys are moved
  to the rear axle and the bake puts the object back (``FrameMap.body_offset``); Geometry ›
  Typed Values uses Wheel Radius and Wheelbase instead.

Frames ↔ seconds and scene units ↔ metres are ``core.shot.frames.FrameMap`` (fps = render.fps /
render.fps_base; positions times ``unit_settings.scale_length``, relative to an offset: planar
vehicles drive on the plane of their start height).

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
from ..core.shot import car_geometry
from ..core.shot.frames import FrameMap, bake_frames, check_range, fmt_frame, same_frame, scene_fps, shot_range
from ..core.shot.geometry import (MIN_SIZE, ObstacleShape, fit_shape, fit_spheres, floats, polar, quaternion_of,
                                  rotor_disc, swept, yaw)
from ..core.shot.plan import (KIND_LABELS, MAX_STEPS, TIMED_KINDS, Constraint, KeyPose, Problem, Segment,
                              ShotError, ShotInput, ShotSettings, check_steps, plan)
from . import action_compat
from .properties import CHILD_ROLES, CHILD_ROLES_BY_TYPE, CORE_VEHICLE_NAMES

OBSTACLE_COLLECTION = "Obstacles"
_OBSTACLE_COLLECTION_NAME = re.compile(r"^Obstacles(\.\d+)?$")
PLANAR = frozenset({"CAR", "SNAKEBOARD"})
# The parts whose motion the bake writes besides the body's (steering knuckles are optional: the
# front wheels steer themselves without them); a vehicle without them is a proxy.
MOVING_PARTS = {"CAR": ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right"),
                "SNAKEBOARD": ("truck_front", "truck_rear"), "HELICOPTER": ("main_rotor", "tail_rotor")}
SOLVABLE = frozenset({"CAR", "SNAKEBOARD", "HELICOPTER", "BOAT"})
# The object types whose evaluated geometry Object.to_mesh() converts (bpy 4.5 and 5.0; every
# other type raises "Object does not have geometry data").
MESH_TYPES = frozenset({"MESH", "CURVE", "SURFACE", "FONT", "META"})
# Types with no geometry at all (the rest — hair curves, point clouds, volumes, grease pencil —
# have geometry that to_mesh cannot read: they convert to a mesh with Object › Convert).
NO_GEOMETRY_TYPES = frozenset({"EMPTY", "LIGHT", "CAMERA", "ARMATURE", "LATTICE", "SPEAKER", "LIGHT_PROBE"})
TYPE_LABELS = {"FONT": "text", "META": "metaball", "CURVES": "hair curves object", "POINTCLOUD": "point cloud",
               "GREASEPENCIL": "grease pencil object", "GPENCIL": "grease pencil object",
               "LIGHT_PROBE": "light probe"}
MAX_DISTANCE = 1e6   # m: positions within 1000 km of the world origin
WHEEL_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0),   # Wheel Axis → local vector
              "NEG_X": (-1.0, 0.0, 0.0), "NEG_Y": (0.0, -1.0, 0.0), "NEG_Z": (0.0, 0.0, -1.0)}
MAX_SPEED = 1e4      # m/s: speeds up to 10 km/s

LOCATION_PATHS = frozenset({"location", "delta_location"})
ROTATION_PATHS = frozenset({"rotation_euler", "rotation_quaternion", "rotation_axis_angle",
                            "delta_rotation_euler", "delta_rotation_quaternion"})
SCALE_PATHS = frozenset({"scale", "delta_scale"})
SPEED_PATH = "vehicle_motion.speed"

# [vehicle] keys of core's readers per vehicle type (SI units: lengths in metres, whatever the Unit Scale).
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
BOAT_THRUSTERS = 2  # the default hull's two transom thrusters (core.scenario.boat)
BOAT_HULL_FACES = 1000  # a boat mesh with more triangles floats on its convex hull of at most this many

# Control channels (custom properties keyed on the vehicle) for Simulate, and their limits.
CONTROL_CHANNELS: dict[str, tuple[str, ...]] = {
    "CAR": ("torque", "steering_rate"),
    "HELICOPTER": ("collective", "yaw", "pitch_tilt", "roll_tilt"),
    "BOAT": tuple(f"thruster_{i + 1}" for i in range(BOAT_THRUSTERS)),
    "SNAKEBOARD": ("rotor_torque", "steering_torque"),
    "RIGID_BODY": (),
}



class SceneError(ShotError):
    """The scene cannot become a problem; the message names the object or frame."""


# ----------------------------------------------------------------------------- plain results

@dataclass
class SimulationProblem:
    vehicle: str
    vehicle_type: str
    frame_map: FrameMap
    scenario: dict
    warnings: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- small helpers

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
                         f"({_range_text('m')}): move it{parent}")


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


def _metres(x: float) -> str:
    """A distance for a message: 3 significant digits, 0 below a micrometre (round-off)."""
    return f"{x:.3g}" if abs(x) >= 1e-6 else "0"


def _mesh_triangles(ob) -> tuple[np.ndarray, np.ndarray]:
    """Local vertices (N, 3) and triangles (M, 3) of an evaluated object's geometry: quads and n-gons split
    (``loop_triangles``); empty arrays without geometry."""
    mesh = ob.to_mesh()
    try:
        if mesh is None or not len(mesh.vertices):
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        mesh.calc_loop_triangles()
        tris = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        ob.to_mesh_clear()
    return co.reshape(-1, 3), tris.reshape(-1, 3).astype(np.int64)


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
        self.fcurves = [fc for fc in _fcurves(vehicle) if not fc.mute]
        self.pose = _Pose(vehicle, guard)
        self.fm: FrameMap | None = None

    # -- frames ------------------------------------------------------------------------------
    def fps(self) -> float:
        render = self.scene.render
        return scene_fps(render.fps, render.fps_base)

    def override(self) -> tuple[int, int] | None:
        s = self.settings
        return (s.frame_start, s.frame_end) if s.use_frame_range else None

    def frame_map(self, start: float, end: float, solve: bool = False) -> FrameMap:
        """Frames ↔ seconds of the range; Solve's nodes as Node Spacing says (core.shot.grid: Automatic is
        chosen by the planner), Simulate's always Steps per Frame."""
        s = self.settings
        spacing = s.node_spacing if solve else "PER_FRAME"
        fm = FrameMap(start, end, self.fps(), s.steps_per_frame, self.scale, spacing=spacing,
                      node_count=int(s.node_count))
        if spacing != "AUTOMATIC":
            check_steps(fm)
        return fm

    def solve_range(self, key_frames: list[float], landings: list[float] = ()) -> tuple[float, float]:
        """The vehicle's first to last key or landing (clipped to the scene's range), or the add-on's own range."""
        scene = self.scene
        try:
            start, end, warnings = shot_range(key_frames, (scene.frame_start, scene.frame_end), self.override(),
                                              goal_frames=landings)
        except ShotError:
            raise
        except VehicleMotionError as exc:
            raise SceneError(f"'{self.obj.name}': {exc}") from None
        self.warnings.extend(f"'{self.obj.name}': {w}" for w in warnings)
        return start, end

    def scene_range(self) -> tuple[float, float]:
        return simulation_range(self.scene)

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
                value = float(value)  # vehicle dimensions are metres, whatever the Unit Scale
            out[key] = value
        return out

    def check_parts(self) -> None:
        s = self.obj.vehicle_motion
        family = set(_descendants(self.obj))
        missing = [CHILD_ROLES[role][0] for role in MOVING_PARTS.get(self.vtype, ()) if getattr(s, role) is None]
        if missing:  # a proxy (layout before the model exists): the body moves, the parts it lacks do not
            self.warnings.append(f"'{self.obj.name}' has no {', '.join(missing)} object"
                                 f"{'s' if len(missing) > 1 else ''} (Vehicle › Parts): the bake moves its body only")
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
        """Spheres (body frame, metres) of the vehicle's meshes at the current evaluation (the rule is
        core.shot.geometry.fit_spheres): a row along the body covering the bounding box of the body and
        its parts, except a helicopter's main rotor, whose swept disc gets spheres that reach no lower
        than the body. Gathers the vehicle's real geometry too (:meth:`body_vertices`)."""
        spheres, self._vertices = self.vehicle_geometry()
        return spheres

    def body_vertices(self) -> np.ndarray | None:
        """The vehicle's evaluated mesh vertices in the body frame (metres; spinning rotors swept over a
        turn), for the clearance of keys touching an obstacle; None without meshes."""
        if not hasattr(self, "_vertices"):
            self.collision_spheres()
        return self._vertices

    def vehicle_geometry(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(collision spheres, real geometry): both in the body frame, metres, at the current evaluation."""
        obj = self.obj
        depsgraph = bpy.context.evaluated_depsgraph_get()
        m = np.array(obj.evaluated_get(depsgraph).matrix_world)
        check_pose(obj, m, self.scene.frame_current, self.scale)
        r = polar(m[:3, :3])
        s = obj.vehicle_motion
        rotors = {}  # role → (the rotor and its descendants, the spin axis in world)
        for role in ("main_rotor", "tail_rotor") if self.vtype == "HELICOPTER" else ():
            rotor = getattr(s, role)
            if rotor is not None:
                rm = np.array(rotor.evaluated_get(depsgraph).matrix_world)
                axis = rm[:3, :3] @ np.array(WHEEL_AXES[getattr(s, CHILD_ROLES[role][1])])
                rotors[role] = ({rotor, *_descendants(rotor)}, rm[:3, 3].copy(), axis)
        in_rotor = {ob: role for role, (family, _, _) in rotors.items() for ob in family}
        parts = [ob for ob in [obj, *_descendants(obj)] if ob.type in MESH_TYPES]
        groups: dict[str | None, list[np.ndarray]] = {}
        for ob in parts:
            v = _world_vertices(ob, depsgraph)
            if len(v):
                groups.setdefault(in_rotor.get(ob), []).append(v)
        everything = [v for vs in groups.values() for v in vs]
        if everything:
            verts = np.concatenate(everything)
            if not np.all(np.isfinite(verts)) or \
                    float(np.max(np.linalg.norm(verts, axis=1))) * self.scale > MAX_DISTANCE:
                raise SceneError(f"'{obj.name}' (its meshes and parts) reaches beyond {MAX_DISTANCE:g} m from the "
                                 f"world origin at frame {self.scene.frame_current}, out of range "
                                 f"({_range_text('m')}): fix its scale and location")

        def body_frame(v):
            return (np.asarray(v, dtype=float).reshape(-1, 3) - m[:3, 3]) @ r * self.scale

        body = body_frame(np.concatenate(groups[None])) if None in groups else np.zeros((0, 3))
        real = [body]
        disc = None
        for role, (_, origin, axis) in rotors.items():
            if role not in groups:
                continue
            points, o, a = body_frame(np.concatenate(groups[role])), body_frame(origin)[0], r.T @ axis
            sweep = swept(points, o, a)
            real.append(sweep)
            if role == "main_rotor":
                disc = rotor_disc(points, o, a)
            else:  # the tail rotor's disc is small and beside the tail: part of the body's row
                body = np.concatenate([body, sweep])
        radius = s.collision_radius * self.scale
        spheres = fit_spheres(body, radius, disc)
        vertices = np.concatenate(real)
        if len(vertices):  # the same point twice (shared by parts, swept) once: within 0.1 mm
            vertices = np.unique(np.round(vertices, 4), axis=0)
        return spheres, (vertices if len(vertices) else None)

    def measure_car(self) -> car_geometry.CarGeometry | None:
        """A car's rear axle (the body offset), wheelbase and wheel radii from its wheel objects'
        evaluated world geometry relative to its body (the rule is in core.shot.car_geometry); None for
        other vehicles. Wheels that are empties give their centres only (their radius is the typed one).

        The layout is read from the current evaluation, as the collision spheres are: the wheels sit
        rigidly on the body (they spin about their centres and steer about their knuckles), so every
        frame gives the same layout, and the scene is not moved to another frame (which would drop
        unkeyed edits)."""
        if self.vtype != "CAR":
            return None
        obj, s = self.obj, self.obj.vehicle_motion
        roles = [role for role in (*car_geometry.REAR, *car_geometry.FRONT) if getattr(s, role) is not None]
        frame = self.scene.frame_current
        depsgraph = bpy.context.evaluated_depsgraph_get()
        body = np.array(obj.evaluated_get(depsgraph).matrix_world)
        check_pose(obj, body, frame, self.scale)
        local = WHEEL_AXES[s.wheel_axis]
        wheels = {}
        for role in roles:
            ob = getattr(s, role)
            m = np.array(ob.evaluated_get(depsgraph).matrix_world)
            check_pose(ob, m, frame, self.scale)
            own = np.array(ob.scale) * np.array(ob.delta_scale)
            vertices = _world_vertices(ob, depsgraph) if ob.type in MESH_TYPES else None
            wheels[role] = car_geometry.WheelInput(ob.name, m[:3, 3].copy(),
                                                   car_geometry.spin_axis(m[:3, :3], own, local), vertices)
        try:
            geometry = car_geometry.measure(obj.name, body, wheels, scale=self.scale,
                                            typed_radius=float(s.wheel_radius), typed_wheelbase=float(s.wheelbase),
                                            use_typed=s.car_geometry == "TYPED")
        except car_geometry.CarGeometryError as exc:
            raise SceneError(str(exc)) from None
        self.warnings.extend(geometry.warnings)
        return geometry

    def boat_hull(self) -> tuple[dict, np.ndarray] | None:
        """A boat's hull from its own evaluated mesh: ([vehicle] hull keys, body offset), or None (the default
        hull, with a warning naming the object) for other vehicles, a proxy (no mesh) or a mesh that is not
        closed. The rule:

        * the body object's evaluated mesh at the current evaluation (modifiers, scale and a negative scale
          applied; its children — a rudder, an outboard — are not part of the hull), triangulated
          (``loop_triangles``: quads and n-gons split), in the body frame (the object's origin and rotation),
          metres; coincident vertices welded and each closed piece oriented outward (core.vehicles.hull.
          repair_mesh);
        * closed — every edge shared by exactly two faces — or the default hull: "'Boat' mesh is not closed
          (12 open edges): it floats on a default 5 × 2 × 0.8 m hull";
        * the centre of mass is its volume centroid (a uniform solid), so the origin may be anywhere: the hull
          goes to core relative to it, and the centroid from the origin (body frame, scene units) is the
          **body offset** the solve plans and the bake puts back (as a car's rear axle: keys moved by
          rotation × offset, the object baked at trajectory pose × offset⁻¹);
        * more than ``BOAT_HULL_FACES`` triangles (every solve step clips every one): its convex hull of at
          most that many, with a warning giving the volume kept;
        * a mesh that displaces less water than the Mass is refused: the boat would sink.
        """
        if self.vtype != "BOAT":
            return None
        from ..core.vehicles import hull as hulls
        from ..core.vehicles.boat import DEFAULT_BEAM, DEFAULT_HEIGHT, DEFAULT_LENGTH
        from ..core.vehicles.water import RHO_WATER
        obj = self.obj
        default = f"it floats on a default {DEFAULT_LENGTH:g} × {DEFAULT_BEAM:g} × {DEFAULT_HEIGHT:g} m hull"
        if obj.type not in MESH_TYPES:
            self.warnings.append(f"'{obj.name}' has no mesh ({_a(_type_label(obj))}, a proxy): {default}")
            return None
        depsgraph = bpy.context.evaluated_depsgraph_get()
        ob = obj.evaluated_get(depsgraph)
        m = np.array(ob.matrix_world)
        check_pose(obj, m, self.scene.frame_current, self.scale)
        co, tris = _mesh_triangles(ob)
        if not len(tris):
            self.warnings.append(f"'{obj.name}' mesh has no faces: {default}")
            return None
        if not np.all(np.isfinite(co)):
            raise SceneError(f"'{obj.name}' mesh has vertices that are not finite numbers: fix its scale")
        r = polar(m[:3, :3])
        body = (co @ m[:3, :3].T) @ r * self.scale          # the origin's body frame, metres
        fixed = hulls.repair_mesh(body, tris)
        if not fixed.closed:
            why = []
            if fixed.open_edges:
                why.append(f"{fixed.open_edges} open edge{'s' if fixed.open_edges != 1 else ''}")
            if fixed.nonmanifold_edges:
                why.append(f"{fixed.nonmanifold_edges} edge{'s' if fixed.nonmanifold_edges != 1 else ''} shared by "
                           "more than two faces or wound inconsistently")
            if not why:
                why.append("it encloses no volume")
            self.warnings.append(f"'{obj.name}' mesh is not closed ({', '.join(why)}): {default}")
            return None
        v, f = fixed.vertices, fixed.faces
        if len(f) > BOAT_HULL_FACES:
            v, f = hulls.convex_hull_mesh(v, BOAT_HULL_FACES)
            kept = hulls.mesh_volume(v, f)[0]
            self.warnings.append(f"'{obj.name}' mesh has {len(fixed.faces)} triangles: it floats on its convex hull "
                                 f"of {len(f)} (at most {BOAT_HULL_FACES}, for the solver's speed; "
                                 f"{kept:.3g} m³ against the mesh's {fixed.volume:.3g} m³)")
        volume, centroid = hulls.mesh_volume(v, f)
        mass = float(obj.vehicle_motion.mass)
        if RHO_WATER * volume <= mass:
            raise SceneError(f"'{obj.name}' sinks: its mesh displaces at most {RHO_WATER * volume:.4g} kg of "
                             f"water ({volume:.4g} m³) and its Mass is {mass:g} kg: lower the Mass or scale the "
                             "mesh up")
        keys = {"hull_vertices": [floats(row) for row in v - centroid],
                "hull_faces": [[int(i) for i in row] for row in f]}
        return keys, centroid / self.scale

    def measure_rotors(self) -> tuple[dict, np.ndarray] | None:
        """A helicopter's rotor hubs from its Main Rotor / Tail Rotor objects (Rotor Hubs: From the Parts):
        ({main_rotor_offset, tail_rotor_offset} of the rotors present, body offset of the centre of mass),
        or None — other vehicles, Rotor Hubs: Typed Values, no rotor objects — when the typed values hold
        and the origin is the centre of mass. The rule:

        * the centre of mass is the volume centroid of the body object's closed evaluated mesh (a uniform
          solid; core.vehicles.hull.repair_mesh), or its origin for a proxy (an empty) or an open mesh; its
          position from the origin (body frame, scene units) is the body offset the solve plans and the
          bake puts back (as a boat's, a car's rear axle);
        * a hub is its rotor object's evaluated origin, in the body frame (the body's origin and rotation),
          metres, from the centre of mass: main_rotor_offset is its height (body Z) — a hub off that
          vertical by more than a tenth of its height is warned about (the model puts it straight above) —
          and tail_rotor_offset the tail hub's distance behind (body −X); a main rotor not above, or a tail
          rotor not behind, the centre of mass (a placeholder, an origin off the hub) keeps its typed value,
          with a warning, and without any measured hub the origin stays the centre of mass;
        * read at the current evaluation, as the collision spheres are: the rotors sit rigidly on the body
          (they spin and tilt about their hubs), so every frame gives the same layout.
        """
        if self.vtype != "HELICOPTER":
            return None
        obj, s = self.obj, self.obj.vehicle_motion
        rotors = {role: getattr(s, role) for role in ("main_rotor", "tail_rotor") if getattr(s, role) is not None}
        if s.rotor_geometry == "TYPED" or not rotors:
            return None
        from ..core.vehicles import hull as hulls
        frame = self.scene.frame_current
        depsgraph = bpy.context.evaluated_depsgraph_get()
        ob = obj.evaluated_get(depsgraph)
        m = np.array(ob.matrix_world)
        check_pose(obj, m, frame, self.scale)
        r = polar(m[:3, :3])
        centre = np.zeros(3)
        if obj.type in MESH_TYPES:
            co, tris = _mesh_triangles(ob)
            if len(tris) and np.all(np.isfinite(co)):
                fixed = hulls.repair_mesh((co @ m[:3, :3].T) @ r * self.scale, tris)
                if fixed.closed:
                    centre = hulls.mesh_volume(fixed.vertices, fixed.faces)[1]
        out = {}
        for role, rotor in rotors.items():
            rm = np.array(rotor.evaluated_get(depsgraph).matrix_world)
            check_pose(rotor, rm, frame, self.scale)
            hub = (rm[:3, 3] - m[:3, 3]) @ r * self.scale - centre
            what = f"'{rotor.name}' ({CHILD_ROLES[role][0].lower()} of '{obj.name}')"
            if role == "main_rotor":
                height = float(hub[2])
                if height < 1e-3:  # a placeholder, or its origin is not at its hub
                    self.warnings.append(f"{what} has its origin {_metres(abs(height))} m "
                                         f"{'below' if height < -1e-6 else 'at the height of'} the centre of mass, not "
                                         f"above it: the typed Main Rotor Height ({s.main_rotor_offset:g} m) holds "
                                         "(put the rotor's origin at its hub)")
                    continue
                side = math.hypot(hub[0], hub[1])
                if side > 0.1 * height:
                    self.warnings.append(f"{what} has its hub {side:.3g} m off the vertical through the centre of "
                                         f"mass: the model puts it straight above, at {height:.3g} m")
                out["main_rotor_offset"] = height
            else:
                arm = float(-hub[0])
                if arm < 1e-3:
                    self.warnings.append(f"{what} has its origin {_metres(abs(arm))} m "
                                         f"{'ahead of' if arm < -1e-6 else 'level with'} the centre of mass, not "
                                         f"behind it: the typed Tail Rotor Arm ({s.tail_rotor_offset:g} m) holds (put "
                                         "the rotor's origin at its hub)")
                    continue
                out["tail_rotor_offset"] = arm
        if not out:
            return None
        return out, centre / self.scale

    # -- keys --------------------------------------------------------------------------------
    def key_frames(self, landings: list[float] = ()) -> list[float]:
        """Every frame at which the vehicle's transform or speed is keyed (a single one will do when a
        Land / Dock empty after it gives the goal: ``landings``)."""
        transform = LOCATION_PATHS | ROTATION_PATHS | SCALE_PATHS
        frames = sorted(_key_frames(self.fcurves, transform | {SPEED_PATH}))
        name = self.obj.name
        if not frames:
            raise SceneError(f"'{name}' has no keyframes: key its location at the start and at the goal")
        if len(frames) == 1 and not any(f > frames[0] + 1e-6 for f in landings):
            raise SceneError(f"'{name}' has a single keyframe (frame {fmt_frame(frames[0])}): key its goal "
                             "pose too (at least a start and a goal keyframe), or add a Land / Dock Here empty")
        return frames

    def landing_frames(self) -> list[float]:
        """The frames of the Land / Dock Here empties on this vehicle (keyed, or their When set to a frame):
        a landing is a goal pose, so its frame counts as a key for the shot's frame range."""
        out = set()
        for ob in self.scene.objects:
            s = ob.vehicle_motion
            if s.constraint_kind != "LAND" or ob is self.obj or ob.type != "EMPTY":
                continue
            if s.constraint_vehicle is not None and s.constraint_vehicle != self.obj:
                continue
            if s.constraint_timing == "FRAME":
                out.add(float(s.constraint_frame))
            elif s.constraint_timing != "SHOT":
                out.update(_key_frames([fc for fc in _fcurves(ob) if not fc.mute]))
        return sorted(out)

    def keys(self, frames: list[float]) -> list[KeyPose]:
        """The vehicle's pose at each keyed frame inside the range (and at its start frame)."""
        fs, fe = self.fm.frame_start, self.fm.frame_end
        name = self.obj.name
        if frames[0] > fs + 1e-6:
            raise SceneError(f"'{name}' is first keyed at frame {fmt_frame(frames[0])}, after the start frame "
                             f"{fmt_frame(fs)} (Vehicle Motion › Frame Range): key its start pose at frame "
                             f"{fmt_frame(fs)}")
        if self.settings.use_frame_range:
            outside = [f for f in frames if f < fs - 1e-6 or f > fe + 1e-6]
            if outside:
                self.warnings.append(f"keys of '{name}' at frames {', '.join(fmt_frame(f) for f in outside)} are "
                                     f"outside frames {fmt_frame(fs)}–{fmt_frame(fe)} and ignored")
        inside = [f for f in frames if fs - 1e-6 <= f <= fe + 1e-6]
        if not inside or not same_frame(inside[0], fs):
            inside = [fs] + inside  # keyed before Start: the pose there is the start
        rot_keys = _key_frames(self.fcurves, ROTATION_PATHS)
        speed_keys = _key_frames(self.fcurves, {SPEED_PATH})
        out = []
        for f in inside:
            p, r = self.vehicle_pose(f)
            first = f is inside[0]
            keyed_speed = any(same_frame(f, k) for k in speed_keys)
            out.append(KeyPose(f, p, r, rotation_keyed=any(same_frame(f, k) for k in rot_keys),
                               speed=_speed_at(self.obj, f) if (first or keyed_speed) else None,
                               euler_heading=self.pose.euler_heading(f)))
        return out

    def vehicle_pose(self, frame: float) -> tuple[np.ndarray, np.ndarray]:
        m = self.pose.world(frame)
        check_pose(self.obj, m, frame, self.scale)
        return m[:3, 3].copy(), polar(m[:3, :3])

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
                    self.warnings.append(f"{label} '{ob.name}' at frame {fmt_frame(frame)} is outside frames "
                                         f"{fmt_frame(fs)}–{fmt_frame(fe)} and ignored")
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
                c.forward = polar(m[:3, :3])[:, 0]
                if kind == "LAND":  # the vehicle's pose on landing: heading along X, level as the empty
                    c.heading = yaw(polar(m[:3, :3]))
                    c.orientation = tuple(quaternion_of(polar(m[:3, :3])))
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
                                         f"{fmt_frame(self.fm.frame_start)} is used for the whole shot")
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
            shapes.append(fit_shape(ob.name, v, s.obstacle_shape, polar(m[:3, :3]), margin,
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

    def check_all_keys(self) -> None:
        """The vehicle's keys and its parents' (they move it between its own keys) are sane numbers."""
        check_keys(self.obj, self.fcurves, self.scale)
        ob = self.obj.parent
        while ob is not None:
            check_keys(ob, [fc for fc in _fcurves(ob) if not fc.mute], self.scale)
            ob = ob.parent

    # -- the problem --------------------------------------------------------------------------
    def problem(self) -> Problem:
        """Gather the shot (keys, empties, obstacles, the vehicle) and plan it (core.shot)."""
        obj = self.obj
        if self.vtype not in SOLVABLE:
            raise SceneError(f"'{obj.name}' is a {self.vtype.replace('_', ' ').lower()}: Solve plans vehicles "
                             "(car, snakeboard, helicopter, boat); use Simulate")
        s = self.settings
        if s.integrator != "VARIATIONAL":
            raise SceneError(f"Solve needs the Variational integrator (Solve Settings › Integrator is "
                             f"{s.integrator.replace('_', ' ').title()})")
        self.check_parts()
        self.check_parameters()
        self.check_all_keys()
        landings = self.landing_frames()
        frames = self.key_frames(landings)
        self.fm = self.frame_map(*self.solve_range(frames, landings), solve=True)
        keys = self.keys(frames)
        shot = ShotInput(
            vehicle=obj.name, vehicle_type=self.vtype, core_type=self.core_type, frame_map=self.fm, keys=keys,
            empties=self.empties(), obstacles=self.obstacles(), spheres=self.collision_spheres(),
            parameters=self.parameters(), input_limits=self.input_limits(), settings=self.shot_settings(),
            warnings=self.warnings)
        shot.vertices = self.body_vertices()
        geometry = self.measure_car()
        if geometry is not None:  # the solve plans the rear axle: keys and spheres are moved to it (core.shot)
            shot.parameters.update(wheel_radius=geometry.wheel_radius, wheelbase=geometry.wheelbase)
            shot.body_offset, shot.wheels = geometry.body_offset, geometry.wheel_tables()
        centred = self.boat_hull() or self.measure_rotors()
        if centred is not None:  # a boat's own hull, a helicopter's rotor hubs: the solve plans the centre of mass
            shot.parameters.update(centred[0])
            shot.body_offset = centred[1]
        try:
            return plan(shot)
        except SceneError:
            raise
        except ShotError as exc:
            raise SceneError(str(exc)) from None

    def shot_settings(self) -> ShotSettings:
        s = self.settings
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

    def input_limits(self) -> dict:
        """|input| limits per input of a solvable vehicle (effort weights 1/limit²)."""
        s = self.obj.vehicle_motion
        return {
            "CAR": {"torque": s.max_torque, "steering_rate": s.max_steering_rate},
            "SNAKEBOARD": {"rotor_torque": s.max_rotor_torque, "steering_torque": s.max_steering_torque},
            "HELICOPTER": {"collective": s.max_collective, "yaw": s.max_yaw, "pitch_tilt": s.max_tilt,
                           "roll_tilt": s.max_tilt},
            "BOAT": {name: s.max_thrust for name in CONTROL_CHANNELS["BOAT"]},
        }[self.vtype]

    # -- simulation ----------------------------------------------------------------------------
    def simulation(self) -> SimulationProblem:
        self.fm = self.frame_map(*self.scene_range())
        obj, fm, s = self.obj, self.fm, self.settings
        self.check_parts()
        self.check_parameters()
        self.check_all_keys()
        start_pos, start_r = self.vehicle_pose(fm.frame_start)
        speed = _speed_at(obj, fm.frame_start) * self.scale
        geometry = self.measure_car()
        if geometry is not None:  # the car model moves its rear axle: start there, bake the object back
            start_pos = car_geometry.to_rear_axle(start_pos, start_r, geometry.body_offset)
            fm.body_offset = tuple(float(x) for x in geometry.body_offset)
            fm.wheels = geometry.wheel_tables()
        centred = self.boat_hull() or self.measure_rotors()
        if centred is not None:  # a boat's own hull, a helicopter's rotor hubs: start at the centre of mass
            start_pos = start_pos + start_r @ centred[1]
            fm.body_offset = tuple(float(x) for x in centred[1])
        if self.planar:
            fm.offset = (0.0, 0.0, float(start_pos[2]))
        p = fm.to_solve(start_pos)
        heading = self.pose.euler_heading(fm.frame_start)
        if heading is None:
            heading = yaw(start_r)
        method = {"VARIATIONAL": None, "RK2": "rk2", "IMPLICIT_RK2": "rk2i", "RK4": "rk4",
                  "LIE_NEWMARK": "lie-newmark", "LIE_EULER": "lie-euler"}[s.integrator]
        integrator: dict = {"dt": fm.dt, "steps": fm.steps}
        if self.vtype == "CAR":
            initial = {"position": floats(p[:2]), "heading": float(heading),
                       "wheel_rate": speed / geometry.wheel_radius}
        elif self.vtype == "SNAKEBOARD":
            initial = {"position": floats(p[:2]), "heading": float(heading), "speed": speed}
        else:
            initial = {"position": floats(p), "orientation": quaternion_of(start_r),
                       "linear_velocity": [speed, 0.0, 0.0]}
        if self.vtype in PLANAR:
            if method is not None:
                raise SceneError(f"a {self.vtype.lower()} has only the Variational integrator (Solve Settings › "
                                 "Integrator)")
        else:
            integrator["method"] = method or "vi-cay"
        vehicle = self.parameters()
        if geometry is not None:
            vehicle.update(wheel_radius=geometry.wheel_radius, wheelbase=geometry.wheelbase)
        if centred is not None:
            vehicle.update(centred[0])
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
                                         f"{fmt_frame(kp.co[0])}; its limits are [{lo:.6g}, {hi:.6g}]")
                    if math.isinf(v):
                        raise SceneError(f"'{obj.name}' control '{name}' is keyed to {v:g} at frame "
                                         f"{fmt_frame(kp.co[0])}, outside its limits [{lo:.6g}, {hi:.6g}] (a key "
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
                raise SceneError(f"'{obj.name}' control '{name}' is {values[k]:.6g} at frame {fmt_frame(frames[k])}, "
                                 f"outside its limits [{lo:.6g}, {hi:.6g}]")
            out[name] = {"values": floats(values)}
        if missing and len(missing) == len(CONTROL_CHANNELS[self.vtype]):
            self.warnings.append(f"'{obj.name}' has none of the control channels {', '.join(missing)} "
                                 "(custom properties): every input is zero")
        elif missing:
            self.warnings.append(f"'{obj.name}' has no {', '.join(missing)} channel: zero")
        return out


# ----------------------------------------------------------------------------- entry points

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
        out.append((vehicle.name, "keys", ", ".join(fmt_frame(f) for f in frames[:8])
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
            when = ("frame " + ", ".join(fmt_frame(f) for f in own)) if own else "no keyframe"
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
           "bake_frames", "simulation_range",
           "read_problem", "read_simulation", "scene_constraints", "keyed_frames", "fit_shape", "source_action",
           "CONTROL_CHANNELS", "OBSTACLE_COLLECTION"]
