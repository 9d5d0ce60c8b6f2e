"""Seeded mutation fuzzer for Blender scenes (issue 19): the README's "In Blender" contract under
bad scenes an artist can make.

Not a test module: plain functions that ``tests/blender/test_scene_fuzz.py`` parametrises over, and
a ``__main__`` that counts, per category, the cases whose contract held or broke::

    OPENBLAS_NUM_THREADS=1 timeout 3000 .venv/bin/python tests/blender/scene_fuzz.py --seed 1 --n 300
    .venv/bin/python tests/blender/scene_fuzz.py --seed 2026 --n 300 --show broken   # every broken case
    .venv/bin/python tests/blender/scene_fuzz.py --seed 2026 --n 300 --only 17       # one case, in full

The contract (README "In Blender"): bad input gets a clear one-line error naming the problem (an
object, a channel, a frame, a setting), never a traceback, never NaN in the baked output, and
nothing of the user's work lost or half-written. A scene that can be solved is solved and baked
with finite F-curves; a solve that fails reports in one line and changes nothing (unless Bake Best
Attempt, which stores and bakes the best attempt: finite too).

How cases are made: two small shots are built in code in an empty file, each cheap to solve (the
scipy backend, ``max_iter`` = SOLVE_MAX_ITER, ``time_limit_s`` = SOLVE_TIME_LIMIT_S, one step per
frame): ``car``, a 4 m box car with four wheel empties keyed from (0, 0) to (10, 0) m over frames
1–25 at 8 fps beside a roadside 'Barrier' in the Obstacles collection (``build_car``), and ``heli``,
a light helicopter (an empty with main and tail rotor empties) keyed from (0, 0, 5) to (6, 0, 5) m
over frames 1–17 at 8 fps beside a 'Tower' obstacle (``build_heli``). A case is one mutation of
one category (CATEGORIES) of one shot: ``Case.mutate(shot)`` edits a freshly built shot. Every
random choice is drawn when the case is made, so ``cases(seed, n)`` is deterministic (one
``random.Random(seed)``) and a prefix of ``cases(seed, m)`` for m > n; a mutation applied twice to
two fresh shots makes the same scene.

``check_case(case)`` builds the shot, applies the mutation, runs Solve (and, for some cases, with
Bake Best Attempt; and Simulate on another fresh copy) and returns the problems found (empty: the
contract held). The checks, per operator run:

* ``FINISHED``: the report (``last_report``) is one line without a traceback; the vehicle and every
  object baked by it have F-curves whose keys and handles are finite, and a finite ``matrix_world``
  at every frame their F-curves are keyed at (``frame_set``, sub-frames too); every object baked by
  it is its child (a part), not another object of the user's; the stored trajectory is finite; a
  solve that did not converge was only baked with Bake Best Attempt.
* ``RuntimeError`` (the operator's error report): one line, not empty, no "Traceback", not an
  "internal error" (a bug caught by the operator), naming one of ``must_name`` when the case says
  what it should name; the scene is unchanged (``snapshot``: poses, actions and every F-curve key,
  stored and bake state, the current frame).
* never any other exception, nothing printed to stderr that holds "Traceback" (the operators print
  a bug's traceback there), no call longer than SLOW_S, and the outcome the mutation decides where it
  does (``expect_solve``/``expect_simulate``): REFUSED for NaN keys, a camera in the Obstacles, End
  before Start, …; SOLVED for the base shot said in other words (modelled in other units, re-timed
  to another frame rate, another rotation mode, parts deleted: a proxy); None: either outcome.

RuntimeWarnings raised during a run are notes, not breaks (counted by ``summary``). The time per case
is ~0.15 s (300 cases in ~45 s on two shared cores), so a run of hundreds is cheap.
"""
from __future__ import annotations

import argparse
import contextlib
import faulthandler
import io
import math
import pathlib
import random
import re
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import bpy

# cheap base shots
SOLVE_MAX_ITER = 40
SOLVE_TIME_LIMIT_S = 2.0
FPS = 8
# guards
SLOW_S = 12.0                 # an operator call longer than this is reported ("slow")
CASE_HANG_S = 180.0           # __main__ only: dump every thread's stack and exit after this long

CATEGORIES = ("obstacle_scale", "obstacle_type", "key_values", "vehicle_settings", "constraint_empties", "units",
              "frame_rates", "frame_ranges", "parts", "rotation_modes", "drivers")
WEIGHTS = {"obstacle_scale": 3, "obstacle_type": 3, "key_values": 4, "vehicle_settings": 3,
           "constraint_empties": 3, "units": 2, "frame_rates": 2, "frame_ranges": 2, "parts": 2,
           "rotation_modes": 2, "drivers": 2}
SHOTS = ("car", "heli")
SIMULATE_FRACTION = 0.35      # of the cases whose mutation matters to Simulate
BEST_ATTEMPT_FRACTION = 0.15  # of the cases: Solve with Bake Best Attempt
VEHICLE = {"car": "Car", "heli": "Heli"}
OBSTACLE = {"car": "Barrier", "heli": "Tower"}
KEY_FRAMES = {"car": (1, 25), "heli": (1, 17)}


# ------------------------------------------------------------------------------------------------
# the shots
# ------------------------------------------------------------------------------------------------
@dataclass
class Shot:
    kind: str                          # "car" | "heli"
    scene: Any
    vehicle: Any
    obstacle: Any                      # 'Barrier' / 'Tower', in the Obstacles collection
    obstacles: Any                     # the Obstacles collection
    parts: dict[str, Any] = field(default_factory=dict)   # role → object

    @property
    def start(self) -> int:
        return KEY_FRAMES[self.kind][0]

    @property
    def goal(self) -> int:
        return KEY_FRAMES[self.kind][1]

    @property
    def middle(self) -> int:
        return (self.start + self.goal) // 2

    @property
    def height(self) -> float:
        return 0.0 if self.kind == "car" else 5.0

    def point(self, x: float, y: float, z: float = 0.0) -> tuple[float, float, float]:
        """A point at the shot's height (the road for the car, 5 m up for the helicopter)."""
        return (x, y, self.height + z)


def _cube(name: str, size: float = 1.0):
    import bmesh
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=size)
    bm.to_mesh(mesh)
    bm.free()
    return mesh


def add_object(name: str, data=None, parent=None, collection=None):
    ob = bpy.data.objects.new(name, data)
    (collection or bpy.context.scene.collection).objects.link(ob)
    if parent is not None:
        ob.parent = parent
    return ob


def _empty_file():
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.unit_settings.scale_length = 1.0
    vm = scene.vehicle_motion
    vm.solver_backend, vm.max_iter, vm.time_limit_s, vm.steps_per_frame = "SCIPY", SOLVE_MAX_ITER, \
        SOLVE_TIME_LIMIT_S, 1
    return scene


def _obstacles(scene, name: str, location, scale):
    coll = bpy.data.collections.new("Obstacles")
    scene.collection.children.link(coll)
    ob = add_object(name, _cube(name), collection=coll)
    ob.location, ob.scale = location, scale
    return coll, ob


def build_car() -> Shot:
    """A 4 × 1.8 × 1 m box car (Hatchback) with four wheel empties where a hatchback's wheels are,
    keyed (location and rotation) at (0, 0) m frame 1 and (10, 0) m frame 25, 8 fps, frames 1–25;
    a 4 × 1 × 1 m 'Barrier' beside the road. Custom properties torque and steering_rate for
    Simulate (unkeyed)."""
    scene = _empty_file()
    start, goal = KEY_FRAMES["car"]
    scene.frame_start, scene.frame_end = start, goal
    scene.vehicle_motion.frame_start, scene.vehicle_motion.frame_end = start, goal
    car = add_object("Car", _cube("Car"))
    car.scale = (4.0, 1.8, 1.0)
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    parts = {}
    for role, (x, y) in {"wheel_rear_left": (-1.2, 0.8), "wheel_rear_right": (-1.2, -0.8),
                         "wheel_front_left": (1.35, 0.8), "wheel_front_right": (1.35, -0.8)}.items():
        wheel = add_object(f"Wheel {role[6:].replace('_', ' ').title()}", parent=car)
        wheel.location = (x / 4.0, y / 1.8, -0.2)  # in the car's scaled space: metres (x, y, -0.2)
        setattr(s, role, wheel)
        parts[role] = wheel
    for frame, x in ((start, 0.0), (goal, 10.0)):
        car.location, car.rotation_euler = (x, 0.0, 0.0), (0.0, 0.0, 0.0)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    car["torque"], car["steering_rate"] = 300.0, 0.05
    coll, barrier = _obstacles(scene, "Barrier", (5.0, -4.0, 0.5), (4.0, 1.0, 1.0))
    scene.frame_set(start)
    return Shot("car", scene, car, barrier, coll, parts)


def build_heli() -> Shot:
    """A light helicopter (an empty, quaternion rotation) with main and tail rotor empties at its
    hubs, keyed (location and rotation) at (0, 0, 5) m frame 1 and (6, 0, 5) m frame 17, 8 fps,
    frames 1–17; a 2 × 2 × 6 m 'Tower' beside the path. Custom property collective (hover) for
    Simulate."""
    scene = _empty_file()
    start, goal = KEY_FRAMES["heli"]
    scene.frame_start, scene.frame_end = start, goal
    scene.vehicle_motion.frame_start, scene.vehicle_motion.frame_end = start, goal
    heli = add_object("Heli")
    s = heli.vehicle_motion
    s.preset = "LIGHT_HELICOPTER"
    heli.rotation_mode = "QUATERNION"
    parts = {}
    for role, location in {"main_rotor": (0.0, 0.0, 1.2), "tail_rotor": (-4.5, 0.0, 0.5)}.items():
        rotor = add_object(role.replace("_", " ").title(), parent=heli)
        rotor.location = location
        setattr(s, role, rotor)
        parts[role] = rotor
    for frame, x in ((start, 0.0), (goal, 6.0)):
        heli.location = (x, 0.0, 5.0)
        heli.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        heli.keyframe_insert("location", frame=frame)
        heli.keyframe_insert("rotation_quaternion", frame=frame)
    heli["collective"] = float(s.mass) * 9.81
    coll, tower = _obstacles(scene, "Tower", (3.0, -6.0, 3.0), (2.0, 2.0, 6.0))
    scene.frame_set(start)
    return Shot("heli", scene, heli, tower, coll, parts)


BUILDERS = {"car": build_car, "heli": build_heli}


def fresh(kind: str) -> Shot:
    return BUILDERS[kind]()


# ------------------------------------------------------------------------------------------------
# the scene before and after: what must not change when an operator refuses
# ------------------------------------------------------------------------------------------------
def _numbers(values) -> list[str]:
    """Numbers as text, so that a nan the bad scene holds compares equal to itself."""
    return [repr(float(x)) for x in np.round(np.asarray(values, dtype=float), 9).reshape(-1)]


def _action_keys(action) -> list:
    from vehicle_motion.addon import action_compat
    out = []
    for fc in action_compat.all_fcurves(action):
        co = [tuple(_numbers([*kp.co, *kp.handle_left, *kp.handle_right])) for kp in fc.keyframe_points]
        out.append((fc.data_path, fc.array_index, fc.mute, tuple(co)))
    return sorted(out)


def snapshot() -> dict:
    """Everything a solve could change: poses, actions and their keys, stored and bake state, the frame
    (tests/blender/test_bad_scenes.py's snapshot, with every F-curve key and the scene's settings)."""
    scene = bpy.context.scene
    objects = {}
    for ob in bpy.data.objects:
        s = ob.vehicle_motion
        anim = ob.animation_data
        objects[ob.name] = (_numbers(ob.matrix_world), _numbers(ob.location), _numbers(ob.rotation_euler),
                            _numbers(ob.rotation_quaternion), _numbers(ob.scale), ob.rotation_mode,
                            anim.action.name if anim and anim.action else None,
                            s.has_trajectory, s.trajectory_data, s.is_baked,
                            s.original_action.name if s.original_action else None,
                            ob.parent.name if ob.parent else None)
    return {"frame": (scene.frame_current, scene.frame_subframe),
            "range": (scene.frame_start, scene.frame_end, scene.render.fps, scene.render.fps_base),
            "objects": objects,
            "actions": {a.name: _action_keys(a) for a in bpy.data.actions}}


def _difference(before: dict, after: dict) -> str:
    """What changed between two snapshots, briefly."""
    if before["frame"] != after["frame"]:
        return f"the current frame moved from {before['frame']} to {after['frame']}"
    if before["range"] != after["range"]:
        return f"the scene's range/rate changed from {before['range']} to {after['range']}"
    if before["actions"].keys() != after["actions"].keys():
        return (f"actions {sorted(before['actions'])} became {sorted(after['actions'])}")
    for name, keys in before["actions"].items():
        if keys != after["actions"][name]:
            return f"the keys of action '{name}' changed"
    if before["objects"].keys() != after["objects"].keys():
        return f"objects {sorted(before['objects'])} became {sorted(after['objects'])}"
    fields = ("matrix_world", "location", "rotation_euler", "rotation_quaternion", "scale", "rotation_mode",
              "action", "has_trajectory", "trajectory_data", "is_baked", "original_action", "parent")
    for name, a in before["objects"].items():
        b = after["objects"][name]
        for what, x, y in zip(fields, a, b):
            if x != y:
                return f"'{name}' {what} changed from {str(x)[:80]} to {str(y)[:80]}"
    return "something changed"


# ------------------------------------------------------------------------------------------------
# mutation helpers (run on a fresh shot)
# ------------------------------------------------------------------------------------------------
def _fcurves(ob) -> list:
    from vehicle_motion.addon import action_compat
    ref = action_compat.assigned(ob)
    return [] if ref is None else action_compat.fcurves(ref)


def _key(ob, path: str, index: int, frame: float, value: float) -> None:
    """Key one channel of ob at frame to value, as an artist does (set, then Insert Keyframe)."""
    if path.startswith("["):
        ob[path[2:-2]] = value
    elif path.startswith("vehicle_motion."):
        setattr(ob.vehicle_motion, path.split(".", 1)[1], value)
    else:
        getattr(ob, path)[index] = value
    if path.startswith("[") or path.startswith("vehicle_motion."):
        ob.keyframe_insert(path, frame=frame)
    else:
        ob.keyframe_insert(path, index=index, frame=frame)


def _into_obstacles(shot: Shot, ob):
    for coll in list(ob.users_collection):
        coll.objects.unlink(ob)
    shot.obstacles.objects.link(ob)
    return ob


def _constraint(shot: Shot, name: str, kind: str, location, size: float = 1.0, frame: float | None = None):
    ob = add_object(name)
    ob.empty_display_size = size
    ob.location = location
    ob.vehicle_motion.constraint_kind = kind
    if frame is not None:
        ob.keyframe_insert("location", frame=frame)
    return ob


def _retime(shot: Shot, factor: float) -> None:
    """Move every key of the vehicle (and the scene's and the add-on's frame range) so that frame f
    becomes 1 + (f - 1) · factor: the same motion in seconds at factor times the frame rate."""
    def move(f):
        return 1.0 + (f - 1.0) * factor
    for fc in _fcurves(shot.vehicle):
        for kp in reversed(list(fc.keyframe_points)):  # from the last: keys never overtake each other
            kp.co[0], kp.handle_left[0], kp.handle_right[0] = move(kp.co[0]), move(kp.handle_left[0]), \
                move(kp.handle_right[0])
        fc.update()
    scene = shot.scene
    end = max(1, round(move(scene.frame_end)))
    scene.frame_end = end
    scene.vehicle_motion.frame_end = end


def _rescale(shot: Shot, k: float) -> None:
    """The whole shot modelled k times larger in scene units: positions, keys, sizes, and the settings in
    scene units (obstacle margins, Key Tolerance); the vehicle's settings are metres whatever the unit."""
    shot.scene.vehicle_motion.key_tolerance *= k
    for ob in bpy.data.objects:
        ob.vehicle_motion.obstacle_margin *= k
        if ob.parent is None:
            ob.location = tuple(k * x for x in ob.location)
            ob.scale = tuple(k * x for x in ob.scale)
            if ob.type == "EMPTY":
                ob.empty_display_size *= k
        for fc in _fcurves(ob):
            if fc.data_path == "location":
                for kp in fc.keyframe_points:
                    kp.co[1] *= k
                    kp.handle_left[1] *= k
                    kp.handle_right[1] *= k
                fc.update()


def _fmt(v: float) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return f"{v:g}"


def _vec(v) -> str:
    return "(" + ", ".join(_fmt(x) for x in v) + ")"


def _pick(rng: random.Random, items):
    items = list(items)
    return items[rng.randrange(len(items))]


class _Skip(Exception):
    """This mutation does not apply to this shot; the generator draws again."""


@dataclass
class _Draft:
    description: str
    mutate: Callable[[Shot], None]
    expect_solve: str | None = None       # REFUSED, SOLVED, or None: either outcome
    expect_simulate: str | None = None
    must_name: tuple[str, ...] = ()       # a refusal expected by the case names one of these
    simulate: bool = True                 # whether the mutation matters to Simulate
    reason: str = ""


REFUSED = "refused"   # the operator must refuse (RuntimeError, one line, scene unchanged)
SOLVED = "solved"     # the operator must finish: the base shot in other words (units, rate, rotation mode, …)


# -- obstacle scale ---------------------------------------------------------------------------------
def _m_obstacle_scale(rng: random.Random, kind: str) -> _Draft:
    name = OBSTACLE[kind]
    value = _pick(rng, [0.0, 1e-30, -1.0, -2.5, 1e30, math.nan, 1e40, 1e-7, -1e-30])
    axes = _pick(rng, ["x", "y", "z", "xyz", "xy"])
    how = _pick(rng, ["own", "own", "own", "parent", "keyed"])

    def scaled(scale):
        return tuple(value if "xyz"[i] in axes else s for i, s in enumerate(scale))

    def mutate(shot: Shot):
        ob = shot.obstacle
        if how == "own":
            ob.scale = scaled(ob.scale)
        elif how == "parent":  # the obstacle parented to a scaled empty: its world scale
            rig = add_object(f"{name} Rig")
            rig.scale = scaled((1.0, 1.0, 1.0))
            ob.parent = rig
        else:  # keyed at the shot's start frame (an animated obstacle is read there)
            ob.keyframe_insert("scale", frame=shot.goal)
            ob.scale = scaled(ob.scale)
            ob.keyframe_insert("scale", frame=shot.start)

    huge = not abs(value) <= 1e6  # nan too; 1e40 is stored as 3.4e38
    vanishes = axes == "xyz" and abs(value) < 1e-6
    refused = huge or vanishes
    where = {"own": "", "parent": " (its parent's)", "keyed": " (keyed at the start)"}[how]
    return _Draft(f"{name} scale {axes} = {_fmt(value)}{where}", mutate, REFUSED if refused else None,
                  must_name=(name,) if refused else (), simulate=False,
                  reason="no size, out of range or not finite" if refused else "")


# -- obstacle type ----------------------------------------------------------------------------------
def _text(name):
    data = bpy.data.curves.new(name, "FONT")
    data.body, data.size, data.extrude = "SLOW", 1.5, 0.1
    return bpy.data.objects.new(name, data)


def _curve(name, bevel=0.0, points=((0.0, 0.0, 0.0), (3.0, 1.0, 0.5), (6.0, 0.0, 1.0))):
    data = bpy.data.curves.new(name, "CURVE")
    data.dimensions, data.bevel_depth = "3D", bevel
    spline = data.splines.new("BEZIER")
    spline.bezier_points.add(len(points) - 1)
    for p, co in zip(spline.bezier_points, points):
        p.co, p.handle_left_type, p.handle_right_type = co, "AUTO", "AUTO"
    return bpy.data.objects.new(name, data)


def _metaball(name, radius=1.5):
    data = bpy.data.metaballs.new(name)
    data.elements.new().radius = radius
    return bpy.data.objects.new(name, data)


def _empty_mesh(name):
    return bpy.data.objects.new(name, bpy.data.meshes.new(name))


def _one_vertex(name):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(0.0, 0.0, 0.0)], [], [])
    return bpy.data.objects.new(name, mesh)


OBSTACLE_TYPES = {
    # label: (object name, maker, refused)
    "text": ("Sign", _text, False),
    "curve without bevel": ("Tow Rope", lambda n: _curve(n), False),
    "curve with bevel": ("Rail", lambda n: _curve(n, bevel=0.2), False),
    "a point curve": ("Kink", lambda n: _curve(n, points=((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))), True),
    "metaball": ("Blob", _metaball, False),
    "camera": ("Chase Cam", lambda n: bpy.data.objects.new(n, bpy.data.cameras.new(n)), True),
    "light": ("Lamp", lambda n: bpy.data.objects.new(n, bpy.data.lights.new(n, "POINT")), True),
    "empty": ("Marker", lambda n: bpy.data.objects.new(n, None), True),
    "armature": ("Rig", lambda n: bpy.data.objects.new(n, bpy.data.armatures.new(n)), True),
    "lattice": ("Cage", lambda n: bpy.data.objects.new(n, bpy.data.lattices.new(n)), True),
    "point cloud": ("Gravel", lambda n: bpy.data.objects.new(n, bpy.data.pointclouds.new(n)), True),
    "mesh without vertices": ("Ghost", _empty_mesh, True),
    "mesh of one vertex": ("Speck", _one_vertex, True),
}


def _m_obstacle_type(rng: random.Random, kind: str) -> _Draft:
    label = _pick(rng, list(OBSTACLE_TYPES))
    name, make, refused = OBSTACLE_TYPES[label]
    how = _pick(rng, ["collection", "collection", "collection", "flagged"])
    place = _pick(rng, ["beside", "on the path", "far"])

    def mutate(shot: Shot):
        ob = make(name)
        if how == "collection":
            shot.obstacles.objects.link(ob)
        else:
            shot.scene.collection.objects.link(ob)
            ob.vehicle_motion.is_obstacle = True
        x = 5.0 if shot.kind == "car" else 3.0  # halfway
        ob.location = {"beside": shot.point(x, -6.0), "on the path": shot.point(x, 0.0),
                       "far": shot.point(x, 5e5)}[place]

    where = "in Obstacles" if how == "collection" else "flagged Obstacle"
    expect = REFUSED if refused else (SOLVED if place != "on the path" else None)
    return _Draft(f"{label} '{name}' {where}, {place}", mutate, expect,
                  must_name=(name,) if refused else (), simulate=False)


# -- key values -------------------------------------------------------------------------------------
KEY_VALUES = [1e30, -1e30, 3.4e38, math.nan, 1e40, -1e40, 1e7]


def _m_key_values(rng: random.Random, kind: str) -> _Draft:
    start, goal = KEY_FRAMES[kind]
    middle = (start + goal) // 2
    what = _pick(rng, ["location", "location", "rotation", "rotation", "speed", "control", "scale", "delta",
                       "parent", "sub-frame", "outside", "single", "none", "negative frame", "duplicate", "stacked"])
    vehicle = VEHICLE[kind]
    if what == "parent":  # the vehicle parented to an empty 'Rig' keyed at 0 at the start (and the goal)
        value = _pick(rng, KEY_VALUES + [0.0])
        frame = _pick(rng, [middle, goal, middle + 0.5])
        index = rng.randrange(3)

        def mutate(shot: Shot):
            rig = add_object("Rig")
            shot.vehicle.parent = rig
            for f in {shot.start, shot.goal} - {frame}:
                rig.keyframe_insert("location", index=index, frame=f)
            _key(rig, "location", index, frame, value)
            rig.location = (0.0, 0.0, 0.0)

        # at the goal, a key of the vehicle: its pose there is out of range; between keys either outcome
        bad = not abs(value) <= 1e6 and frame == goal
        where = "at the goal" if frame == goal else "between the keys"
        return _Draft(f"{vehicle}'s parent 'Rig' location[{index}] = {_fmt(value)} at frame {frame:g} ({where})",
                      mutate, REFUSED if bad else None, None, must_name=(vehicle, "Rig"))
    if what in ("location", "rotation", "speed", "control", "scale", "delta"):
        value = _pick(rng, KEY_VALUES + ([0.0, -1.0] if what == "scale" else []))
        frame = _pick(rng, [start, middle, goal, middle + 0.5])
        if what == "scale":
            path, index = "scale", rng.randrange(3)
        elif what == "delta":
            path = _pick(rng, ["delta_location", "delta_rotation_euler" if kind == "car" else
                               "delta_rotation_quaternion"])
            index = rng.randrange(3)
        elif what == "location":
            path, index = "location", rng.randrange(3)
        elif what == "rotation":
            path = "rotation_euler" if kind == "car" else "rotation_quaternion"
            index = rng.randrange(3 if kind == "car" else 4)
        elif what == "speed":
            path, index = "vehicle_motion.speed", 0
        else:
            path, index = ('["torque"]' if kind == "car" else '["collective"]'), 0

        def mutate(shot: Shot):
            _key(shot.vehicle, path, index, frame, value)

        # a key holds a 32-bit float: 1e40 is stored as the largest one, 3.4e38 (nan stays nan)
        stored = value if math.isnan(value) or abs(value) < 3.4e38 else math.copysign(3.4e38, value)
        control = path.startswith("[")
        limit = {"location": 1e6, "delta_location": 1e6, "vehicle_motion.speed": 1e4, '["torque"]': 2000.0,
                 '["collective"]': 1.6 * 600.0 * 9.81}.get(path, math.inf)
        bad = not abs(stored) <= limit  # nan too
        # Solve ignores control channels; Simulate checks every transform key too (not only the start's)
        expect_solve = REFUSED if bad and not control else None
        expect_sim = REFUSED if bad else None
        channel = path if index == 0 and path != "location" else f"{path}[{index}]"
        return _Draft(f"{vehicle} {channel} = {_fmt(value)} at frame {frame:g}", mutate, expect_solve, expect_sim,
                      must_name=(vehicle,), simulate=True)
    if what == "sub-frame":
        frame = _pick(rng, [middle + 0.5, goal - 0.25, start + 0.125, goal + 0.5])

        def mutate(shot: Shot):
            ob = shot.vehicle
            ob.location = shot.point(0.55 * (10.0 if kind == "car" else 6.0), 0.3)
            ob.keyframe_insert("location", frame=frame)
        return _Draft(f"{vehicle} location keyed at sub-frame {frame:g}", mutate)
    if what == "outside":
        frame = _pick(rng, [goal + 15, start - 10, goal + 200])

        def mutate(shot: Shot):
            ob = shot.vehicle
            ob.location = shot.point(-5.0 if frame < start else 20.0, 2.0)
            ob.keyframe_insert("location", frame=frame)
        # clipped with a warning: the base shot (a key before the start changes the start pose, though)
        expect = SOLVED if frame > goal else None
        return _Draft(f"{vehicle} location keyed at frame {frame:g}, outside the scene range", mutate, expect)
    if what == "single":
        keep = _pick(rng, ["start", "goal"])

        def mutate(shot: Shot):
            frame = shot.goal if keep == "start" else shot.start
            for fc in _fcurves(shot.vehicle):
                for kp in list(fc.keyframe_points):
                    if abs(kp.co[0] - frame) < 1e-6:
                        fc.keyframe_points.remove(kp)
        return _Draft(f"{vehicle} keyed at the {keep} only (a single key)", mutate, REFUSED, None,
                      must_name=(vehicle,))
    if what == "none":
        def mutate(shot: Shot):
            shot.vehicle.animation_data_clear()
        return _Draft(f"{vehicle} has no keys", mutate, REFUSED, None, must_name=(vehicle,))
    if what == "negative frame":
        def mutate(shot: Shot):
            ob = shot.vehicle
            for fc in _fcurves(ob):
                for kp in fc.keyframe_points:
                    if abs(kp.co[0] - shot.start) < 1e-6:
                        kp.co[0] -= 30.0
                        kp.handle_left[0] -= 30.0
                        kp.handle_right[0] -= 30.0
                fc.update()
        return _Draft(f"{vehicle}'s start key moved to frame {start - 30}", mutate)
    if what == "duplicate":  # a second key a hair after the middle, far from the first
        def mutate(shot: Shot):
            ob = shot.vehicle
            ob.location = shot.point(4.0, 0.0)
            ob.keyframe_insert("location", frame=middle)
            ob.location = shot.point(4.0, 40.0)
            ob.keyframe_insert("location", frame=middle + 0.001)
        return _Draft(f"{vehicle} keyed 40 m apart at frames {middle} and {middle + 0.001:g}", mutate)
    # stacked: every key on the same frame (the goal key dragged onto the start)
    def mutate(shot: Shot):
        ob = shot.vehicle
        for fc in _fcurves(ob):
            for kp in fc.keyframe_points:
                if abs(kp.co[0] - shot.goal) < 1e-6:
                    kp.co[0] = shot.start + 0.0001
                    kp.handle_left[0] = kp.handle_right[0] = shot.start + 0.0001
            fc.update()
    return _Draft(f"{vehicle}'s goal key dragged to frame {start + 0.0001:g}", mutate)


# -- vehicle settings -------------------------------------------------------------------------------
CAR_SETTINGS = ("max_torque", "max_steering_rate", "max_steering_angle", "mass", "wheel_radius", "wheelbase",
                "wheel_inertia", "yaw_inertia", "speed")
HELI_SETTINGS = ("max_tilt", "max_collective", "max_yaw", "mass", "inertia", "main_rotor_offset",
                 "tail_rotor_offset", "rotor_speed", "tail_rotor_ratio", "speed")
# the settings the scene reader reads and checks (the scenario parameters of the vehicle specs)
READ_SETTINGS = {"car": ("mass", "wheel_inertia", "yaw_inertia", "wheel_radius", "wheelbase", "max_steering_angle",
                         "max_steering_rate", "max_torque"),
                 "heli": ("mass", "inertia", "main_rotor_offset", "tail_rotor_offset", "max_tilt", "max_collective",
                          "max_yaw", "rotor_speed")}
SETTING_VALUES = [0.0, -1.0, -1e30, 1e-9, 1e30, 1e40, math.nan, 1e6]


def _m_vehicle_settings(rng: random.Random, kind: str) -> _Draft:
    vehicle = VEHICLE[kind]
    what = _pick(rng, ["value"] * 5 + ["preset keyed", "preset of another vehicle", "vehicle type", "geometry"])
    if what == "value":
        key = _pick(rng, CAR_SETTINGS if kind == "car" else HELI_SETTINGS)
        value = _pick(rng, SETTING_VALUES)
        axis = rng.randrange(3) if key == "inertia" else None

        def mutate(shot: Shot):
            s = shot.vehicle.vehicle_motion
            if key == "inertia":
                v = list(s.inertia)
                v[axis] = value
                s.inertia = v
            else:
                setattr(s, key, value)

        # the settings' min clamps 0 and negatives (Max …: min 0, which core refuses; others a small positive),
        # 1e40 is stored as 3.4e38, nan is kept: the reader refuses a nan among the settings it reads
        expect = None
        if key in READ_SETTINGS[kind] and math.isnan(value):
            expect = REFUSED
        if key.startswith("max_") and value <= 0:
            expect = REFUSED
        if key == "speed" and not abs(value) <= 1e4:
            expect = REFUSED
        label = key if axis is None else f"{key}[{axis}]"
        return _Draft(f"{vehicle} {label} = {_fmt(value)}", mutate, expect, expect, must_name=(vehicle,))
    if what == "preset keyed":
        other = _pick(rng, ["PICKUP_TRUCK"] if kind == "car" else ["LIGHT_HELICOPTER"])
        keys = ("mass", "max_torque", "wheel_radius", "wheelbase") if kind == "car" else \
            ("mass", "max_collective", "max_tilt")
        tweak = _pick(rng, [0.5, 2.0, 10.0])

        def mutate(shot: Shot):
            from vehicle_motion.addon.properties import PRESETS
            ob, s = shot.vehicle, shot.vehicle.vehicle_motion
            for k in keys:
                ob.keyframe_insert(f"vehicle_motion.{k}", frame=shot.start)
            for k in keys:
                v = PRESETS[other][k]
                setattr(s, k, v * (tweak if kind == "heli" else 1.0))
                ob.keyframe_insert(f"vehicle_motion.{k}", frame=shot.middle)
        scale = "" if kind == "car" else f" × {tweak:g}"
        middle = (KEY_FRAMES[kind][0] + KEY_FRAMES[kind][1]) // 2
        return _Draft(f"{vehicle} settings keyed: its preset at the start, {other.lower()}{scale} from frame "
                      f"{middle}", mutate)
    if what == "preset of another vehicle":
        other = _pick(rng, ["LIGHT_HELICOPTER", "RIB_BOAT", "SNAKEBOARD"] if kind == "car" else
                      ["HATCHBACK", "RIB_BOAT", "SNAKEBOARD"])

        def mutate(shot: Shot):
            shot.vehicle.vehicle_motion.preset = other
        return _Draft(f"{vehicle} preset set to {other.lower()}", mutate)
    if what == "vehicle type":
        other = _pick(rng, ["RIGID_BODY", "NONE", "BOAT", "SNAKEBOARD", "HELICOPTER" if kind == "car" else "CAR"])

        def mutate(shot: Shot):
            shot.vehicle.vehicle_motion.vehicle_type = other
        refused = other in ("RIGID_BODY", "NONE")
        return _Draft(f"{vehicle} vehicle type set to {other.lower()}", mutate, REFUSED if refused else None,
                      REFUSED if other == "NONE" else None, must_name=(vehicle,))
    # geometry: typed vs from parts with absurd typed values
    value = _pick(rng, [1e-3, 1e3, 1e30])

    def mutate(shot: Shot):
        s = shot.vehicle.vehicle_motion
        if shot.kind == "car":
            s.car_geometry = "TYPED"
            s.wheel_radius, s.wheelbase = value, value
        else:
            s.rotor_geometry = "TYPED"
            s.main_rotor_offset, s.tail_rotor_offset = value, value
    typed = "wheel radius and wheelbase" if kind == "car" else "rotor height and arm"
    return _Draft(f"{vehicle} typed {typed} = {_fmt(value)}", mutate)


# -- constraint empties -----------------------------------------------------------------------------
def _m_constraint_empties(rng: random.Random, kind: str) -> _Draft:
    start, goal = KEY_FRAMES[kind]
    middle = (start + goal) // 2
    length = 10.0 if kind == "car" else 6.0
    what = _pick(rng, ["pass zero size", "pass no frame", "pass outside range", "stop in obstacle", "two stops",
                       "speed limit", "keep-out", "land", "stop at start", "nan scale", "not an empty",
                       "pass sub-frame", "pass far"])
    if what == "pass zero size":
        size = _pick(rng, [0.0, 1e-9])

        def mutate(shot):
            _constraint(shot, "Gate", "PASS_THROUGH", shot.point(0.5 * length, 0.5), size=size, frame=middle)
        return _Draft(f"pass-through 'Gate' of display size {_fmt(size)} at frame {middle}", mutate, simulate=False)
    if what == "pass no frame":
        timing = _pick(rng, ["AUTO", "SHOT"])

        def mutate(shot):
            gate = _constraint(shot, "Gate", "PASS_THROUGH", shot.point(0.5 * length, 0.5))
            gate.vehicle_motion.constraint_timing = timing
        return _Draft(f"pass-through 'Gate' without a frame (When {timing.lower()})", mutate, REFUSED,
                      must_name=("Gate",), simulate=False)
    if what == "pass outside range":
        frame = _pick(rng, [goal + 40, start - 20, 0])

        def mutate(shot):
            gate = _constraint(shot, "Gate", "PASS_THROUGH", shot.point(0.5 * length, 0.5))
            gate.vehicle_motion.constraint_timing = "FRAME"
            gate.vehicle_motion.constraint_frame = frame
        return _Draft(f"pass-through 'Gate' at frame {frame}, outside the shot", mutate, simulate=False)
    if what == "stop in obstacle":
        on_path = rng.random() < 0.5

        def mutate(shot):
            if on_path:  # a 2 m rock on the path, the stop (0.5 m) at its centre: wholly inside
                rock = add_object("Rock", _cube("Rock", size=2.0), collection=shot.obstacles)
                rock.location = shot.point(0.4 * length, 0.0, 1.0 if shot.kind == "car" else 0.0)
                _constraint(shot, "Stop", "STOP", tuple(rock.location), size=0.5, frame=middle)
            else:
                _constraint(shot, "Stop", "STOP", tuple(shot.obstacle.location), size=0.5, frame=middle)
        where = "a rock 'Rock' on the path" if on_path else "the obstacle beside the path"
        return _Draft(f"stop 'Stop' at frame {middle} inside {where}", mutate, REFUSED if on_path else None,
                      must_name=("Stop", "Rock"), simulate=False)
    if what == "two stops":
        apart = _pick(rng, [20.0, 1e3, 0.0])

        def mutate(shot):
            _constraint(shot, "Stop A", "STOP", shot.point(0.4 * length, 0.0), size=0.5, frame=middle)
            _constraint(shot, "Stop B", "STOP", shot.point(0.4 * length, apart), size=0.5, frame=middle)
        return _Draft(f"stops 'Stop A' and 'Stop B' {apart:g} m apart at frame {middle}", mutate,
                      REFUSED if apart > 1.0 else None, must_name=("Stop A", "Stop B"), simulate=False)
    if what == "speed limit":
        limit = _pick(rng, [0.0, 1e-6, 0.5, 1e6, 1e40])

        def mutate(shot):
            ob = _constraint(shot, "Speed Limit", "SPEED_LIMIT", shot.point(0.0, 3.0))
            ob.vehicle_motion.speed_limit = limit
        stored = 3.4e38 if limit > 3.4e38 else limit
        return _Draft(f"speed limit of {_fmt(limit)} m/s", mutate, REFUSED if stored > 1e4 else None,
                      must_name=("Speed Limit",), simulate=False)
    if what == "keep-out":
        size, where = _pick(rng, [0.0, 1.0, 1e7]), _pick(rng, ["on the path", "around the start", "beside"])

        def mutate(shot):
            at = {"on the path": shot.point(0.5 * length, 0.0), "around the start": shot.point(0.0, 0.0),
                  "beside": shot.point(0.5 * length, 4.0)}[where]
            _constraint(shot, "Rock Zone", "KEEP_OUT", at, size=size)
        # the display size is clamped to [1e-4, 1000]: neither size is refused for itself
        return _Draft(f"keep-out 'Rock Zone' of display size {size:g} {where}", mutate, simulate=False)
    if what == "land":
        frame = _pick(rng, [goal, middle, goal + 8])

        def mutate(shot):
            _constraint(shot, "Pad", "LAND", shot.point(length, 0.0, -shot.height), size=1.0, frame=frame)
        return _Draft(f"land / dock 'Pad' at frame {frame} on the ground", mutate, simulate=False)
    if what == "stop at start":
        def mutate(shot):
            _constraint(shot, "Stop", "STOP", shot.point(0.0, 0.0), size=0.5, frame=start)
        return _Draft(f"stop 'Stop' at the start frame {start}", mutate, simulate=False)
    if what == "nan scale":
        kind_ = _pick(rng, ["PASS_THROUGH", "STOP", "KEEP_OUT"])
        value = _pick(rng, [math.nan, 1e30, 0.0])

        def mutate(shot):
            ob = _constraint(shot, "Gate", kind_, shot.point(0.5 * length, 0.3), size=1.0,
                             frame=None if kind_ == "KEEP_OUT" else middle)
            ob.scale = (value, value, value)
        refused = math.isnan(value) or value > 1e6 or (kind_ == "KEEP_OUT" and value == 0.0)
        return _Draft(f"{kind_.lower().replace('_', '-')} 'Gate' of scale {_fmt(value)}", mutate,
                      REFUSED if refused else None, must_name=("Gate",), simulate=False)
    if what == "not an empty":
        def mutate(shot):
            ob = add_object("Gate Mesh", _cube("Gate Mesh"))
            ob.location = shot.point(0.5 * length, 0.3)
            ob.vehicle_motion.constraint_kind = "PASS_THROUGH"
            ob.keyframe_insert("location", frame=middle)
        return _Draft("pass-through on a mesh 'Gate Mesh'", mutate, simulate=False)
    if what == "pass sub-frame":
        frame = _pick(rng, [middle + 0.5, goal - 0.25])

        def mutate(shot):
            _constraint(shot, "Gate", "PASS_THROUGH", shot.point(0.6 * length, 0.4), size=1.0, frame=frame)
        return _Draft(f"pass-through 'Gate' keyed at sub-frame {frame:g}", mutate, simulate=False)
    # pass far: a gate out of reach at its frame
    distance = _pick(rng, [200.0, 2e6])

    def mutate(shot):
        _constraint(shot, "Gate", "PASS_THROUGH", shot.point(0.5 * length, distance), size=1.0, frame=middle)
    return _Draft(f"pass-through 'Gate' {distance:g} m off the path at frame {middle}", mutate, REFUSED,
                  must_name=("Gate",), simulate=False)


# -- units ------------------------------------------------------------------------------------------
def _m_units(rng: random.Random, kind: str) -> _Draft:
    unit = _pick(rng, [0.01, 0.001, 1000.0, 1e-5, 0.0])
    modelled = _pick(rng, [True, False]) and unit > 0

    def mutate(shot: Shot):
        shot.scene.unit_settings.scale_length = unit
        if modelled:
            _rescale(shot, 1.0 / unit)
    how = "the shot modelled to match" if modelled else "the shot left as it is"
    return _Draft(f"unit scale {unit:g}, {how}", mutate, SOLVED if modelled else None,
                  SOLVED if modelled else None, reason="the base shot in other units" if modelled else "")


# -- frame rates ------------------------------------------------------------------------------------
def _m_frame_rates(rng: random.Random, kind: str) -> _Draft:
    if rng.random() < 0.2:
        steps = _pick(rng, [2, 7, 1000])

        def mutate(shot: Shot):
            shot.scene.vehicle_motion.steps_per_frame = steps
            shot.scene.vehicle_motion.node_spacing = "PER_FRAME"
        # 24 frames × 1000 = 24,000 steps, more than a solve takes (20,000): refused naming the steps
        return _Draft(f"Steps per Frame {steps}", mutate, REFUSED if steps == 1000 and kind == "car" else None,
                      must_name=("Steps per Frame", "steps"))
    fps, base = _pick(rng, [(24, 1.001), (30, 1.001), (1, 1.0), (240, 1.0), (8, 1.001), (60, 1.001), (8, 0.001),
                            (8, 1000.0)])
    retime = _pick(rng, [True, False]) and fps / base <= 120

    def mutate(shot: Shot):
        render = shot.scene.render
        old = render.fps / render.fps_base
        render.fps, render.fps_base = fps, base
        if retime:
            _retime(shot, (render.fps / render.fps_base) / old)
    how = "keys re-timed to keep their seconds" if retime else "keys left on their frames"
    same = retime and 4.0 <= fps / base <= 32.0  # the base shot (8 fps) at 0.5–4 times its steps
    return _Draft(f"{fps} fps, fps_base {base:g}, {how}", mutate, SOLVED if same else None,
                  SOLVED if same else None, reason="the base shot at another frame rate" if same else "")


# -- frame ranges -----------------------------------------------------------------------------------
def _m_frame_ranges(rng: random.Random, kind: str) -> _Draft:
    start, goal = KEY_FRAMES[kind]
    vehicle = VEHICLE[kind]
    what = _pick(rng, ["scene excludes keys", "scene cuts goal", "scene starts late", "own end before start",
                       "own empty", "own start before keys", "own beyond keys", "own inside keys",
                       "scene starts negative"])
    if what == "scene starts negative":
        def mutate(shot):
            shot.scene.frame_start = -10
        return _Draft(f"scene range -10–{goal}, the keys inside", mutate, SOLVED, None)
    if what == "scene excludes keys":
        a, b = goal + 10, goal + 40

        def mutate(shot):
            shot.scene.frame_start, shot.scene.frame_end = a, b
        return _Draft(f"scene range {a}–{b}, after every key", mutate, REFUSED, None, must_name=(vehicle,))
    if what == "scene cuts goal":
        b = (start + goal) // 2

        def mutate(shot):
            shot.scene.frame_end = b
        return _Draft(f"scene range {start}–{b}, before the goal key", mutate, REFUSED, None,
                      must_name=(vehicle,))
    if what == "scene starts late":
        a = start + 4

        def mutate(shot):
            shot.scene.frame_start = a
        return _Draft(f"scene range {a}–{goal}, after the start key", mutate)
    if what == "own end before start":
        a, b = _pick(rng, [(goal, start), (start + 5, start + 2), (20, 0)])

        def mutate(shot):
            vm = shot.scene.vehicle_motion
            vm.use_frame_range, vm.frame_start, vm.frame_end = True, a, b
        return _Draft(f"Own Frame Range {a}–{b} (End before Start)", mutate, REFUSED, REFUSED,
                      must_name=("Frame Range",))
    if what == "own empty":
        def mutate(shot):
            vm = shot.scene.vehicle_motion
            vm.use_frame_range, vm.frame_start, vm.frame_end = True, start, start
        return _Draft(f"Own Frame Range {start}–{start} (empty)", mutate, REFUSED, REFUSED,
                      must_name=("Frame Range",))
    if what == "own start before keys":
        def mutate(shot):
            vm = shot.scene.vehicle_motion
            vm.use_frame_range, vm.frame_start, vm.frame_end = True, 0, goal
        return _Draft(f"Own Frame Range 0–{goal}, before the first key", mutate, REFUSED, None,
                      must_name=(vehicle,))
    if what == "own beyond keys":
        b = goal + _pick(rng, [8, 400])

        def mutate(shot):
            vm = shot.scene.vehicle_motion
            vm.use_frame_range, vm.frame_start, vm.frame_end = True, start, b
        return _Draft(f"Own Frame Range {start}–{b}, beyond the goal key", mutate)
    b = (start + goal) // 2

    def mutate(shot):
        vm = shot.scene.vehicle_motion
        vm.use_frame_range, vm.frame_start, vm.frame_end = True, start, b
    return _Draft(f"Own Frame Range {start}–{b}, inside the keys", mutate)


# -- parts ------------------------------------------------------------------------------------------
def _m_parts(rng: random.Random, kind: str) -> _Draft:
    roles = ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right") if kind == "car" \
        else ("main_rotor", "tail_rotor")
    role = _pick(rng, roles)
    what = _pick(rng, ["not parented", "deleted", "all deleted", "obstacle as part", "far away", "scaled 0",
                       "mesh part", "grandchild", "unparented keep", "two roles"])
    label = role.replace("_", " ")
    if what == "two roles":
        other = _pick(rng, [r for r in roles if r != role])

        def mutate(shot):
            setattr(shot.vehicle.vehicle_motion, other, shot.parts[role])
        return _Draft(f"{label} also plays the {other.replace('_', ' ')}", mutate)
    if what == "not parented":
        def mutate(shot):
            stray = add_object("Stray Part")
            stray.location = shot.point(0.0, 0.0)
            setattr(shot.vehicle.vehicle_motion, role, stray)
        return _Draft(f"{label}: a new empty 'Stray Part', not parented", mutate, REFUSED,
                      REFUSED if kind == "car" else None, must_name=("Stray Part",))
    if what == "unparented keep":  # the part's parent cleared (it stays where it is)
        def mutate(shot):
            part = shot.parts[role]
            m = part.matrix_world.copy()
            part.parent = None
            part.matrix_world = m
        name = {"wheel_rear_left": "Wheel Rear Left", "wheel_rear_right": "Wheel Rear Right",
                "wheel_front_left": "Wheel Front Left", "wheel_front_right": "Wheel Front Right",
                "main_rotor": "Main Rotor", "tail_rotor": "Tail Rotor"}[role]
        return _Draft(f"{label} unparented (Clear Parent, Keep Transform)", mutate, REFUSED,
                      REFUSED if kind == "car" else None, must_name=(name,))
    if what == "deleted":
        def mutate(shot):
            bpy.data.objects.remove(shot.parts[role])
        return _Draft(f"{label} deleted (a partial proxy)", mutate, SOLVED, SOLVED)
    if what == "all deleted":
        def mutate(shot):
            for ob in shot.parts.values():
                bpy.data.objects.remove(ob)
        return _Draft("every part deleted (a proxy)", mutate, SOLVED, SOLVED)
    if what == "obstacle as part":
        def mutate(shot):
            setattr(shot.vehicle.vehicle_motion, role, shot.obstacle)
        return _Draft(f"{label}: the obstacle '{OBSTACLE[kind]}'", mutate, REFUSED,
                      REFUSED if kind == "car" else None, must_name=(OBSTACLE[kind],))
    if what == "far away":
        distance = _pick(rng, [1e7, 50.0])

        def mutate(shot):
            shot.parts[role].location = (distance, 0.0, 0.0)
        return _Draft(f"{label} moved {distance:g} units along the body's x", mutate,
                      REFUSED if distance > 1e6 else None,
                      REFUSED if distance > 1e6 and kind == "car" else None)
    if what == "scaled 0":
        def mutate(shot):
            shot.parts[role].scale = (0.0, 0.0, 0.0)
        return _Draft(f"{label} scaled to 0", mutate)
    if what == "mesh part":
        radius = _pick(rng, [0.3, 0.0, 1e-30])

        def mutate(shot):
            old = shot.parts[role]
            ob = add_object(f"{old.name} Mesh", _cube(f"{old.name} Mesh", size=max(radius, 1e-30) * 2.0),
                            parent=shot.vehicle)
            ob.location = old.location
            setattr(shot.vehicle.vehicle_motion, role, ob)
            bpy.data.objects.remove(old)
        return _Draft(f"{label} a mesh cube of half size {radius:g}", mutate)
    # grandchild: the part parented to another part (still a descendant)
    def mutate(shot):
        other = next(ob for r, ob in shot.parts.items() if r != role)
        part = shot.parts[role]
        m = part.matrix_world.copy()
        part.parent = other
        part.matrix_world = m
    return _Draft(f"{label} parented to another part", mutate)


# -- rotation modes ---------------------------------------------------------------------------------
def _m_rotation_modes(rng: random.Random, kind: str) -> _Draft:
    vehicle = VEHICLE[kind]
    what = _pick(rng, ["vehicle", "vehicle", "part", "keyed both"])
    if what == "vehicle":
        mode = _pick(rng, ["AXIS_ANGLE", "QUATERNION", "ZYX", "YXZ", "XYZ"])
        if (kind == "car" and mode == "XYZ") or (kind == "heli" and mode == "QUATERNION"):
            mode = "AXIS_ANGLE"

        def mutate(shot):
            shot.vehicle.rotation_mode = mode
        # another Euler order or quaternion: the keys of the old mode no longer apply, the rotation stays
        # the identity: the base shot
        expect = REFUSED if mode == "AXIS_ANGLE" else SOLVED
        return _Draft(f"{vehicle} rotation mode {mode}", mutate, expect, expect, must_name=(vehicle,))
    if what == "part":
        role = _pick(rng, ["wheel_front_left", "wheel_rear_right"] if kind == "car" else ["main_rotor", "tail_rotor"])
        mode = _pick(rng, ["AXIS_ANGLE", "QUATERNION"])

        def mutate(shot):
            shot.parts[role].rotation_mode = mode
        refused = mode == "AXIS_ANGLE"
        return _Draft(f"{role.replace('_', ' ')} rotation mode {mode}", mutate, REFUSED if refused else None,
                      REFUSED if refused and kind == "car" else None)
    # keyed both: rotation keys in the other mode too, disagreeing
    mode = "QUATERNION" if kind == "car" else "XYZ"

    def mutate(shot):
        ob = shot.vehicle
        if mode == "QUATERNION":
            ob.rotation_quaternion = (0.7071, 0.0, 0.0, 0.7071)
            ob.keyframe_insert("rotation_quaternion", frame=shot.goal)
        else:
            ob.rotation_euler = (0.0, 0.0, 1.5)
            ob.keyframe_insert("rotation_euler", frame=shot.goal)
        ob.rotation_mode = mode
    return _Draft(f"{vehicle} rotation mode {mode}, keyed in both modes (disagreeing)", mutate)


# -- drivers ----------------------------------------------------------------------------------------
def _m_drivers(rng: random.Random, kind: str) -> _Draft:
    vehicle = VEHICLE[kind]
    other = rng.random()
    if other < 0.15:  # a driver reading the vehicle's own location: a dependency cycle
        index = rng.randrange(3)

        def mutate(shot):
            driver = shot.vehicle.driver_add("location", index).driver
            driver.type = "SCRIPTED"
            var = driver.variables.new()
            var.name, var.type = "me", "TRANSFORMS"
            var.targets[0].id = shot.vehicle
            var.targets[0].transform_type = "LOC_X" if index else "LOC_Y"
            driver.expression = "me + 1"
        return _Draft(f"driver on {vehicle} location[{index}] reading its own location (a cycle)", mutate)
    if other < 0.3:  # a driver on a part's channel the bake writes
        role = "wheel_front_left" if kind == "car" else "main_rotor"

        def mutate(shot):
            part = shot.parts[role]
            driver = part.driver_add("rotation_euler", 1 if kind == "car" else 2).driver
            driver.type = "SCRIPTED"
            driver.expression = "frame * 0.1"
        return _Draft(f"driver on {role.replace('_', ' ')} rotation: frame * 0.1", mutate)
    if other < 0.45:  # an object constraint overriding the baked motion
        what = _pick(rng, ["COPY_LOCATION", "LIMIT_LOCATION", "CHILD_OF", "TRACK_TO"])

        def mutate(shot):
            c = shot.vehicle.constraints.new(what)
            if what == "LIMIT_LOCATION":
                c.use_min_x, c.min_x = True, 2.0
            elif hasattr(c, "target"):
                c.target = shot.obstacle
        return _Draft(f"{what.lower()} constraint on {vehicle} (target the obstacle)", mutate)
    index = rng.randrange(3)
    expression = _pick(rng, ["0.0", "frame * 0.4", "1e30", "var", "nope(", "1/0", "var * 1e38"])
    target = _pick(rng, ["location", "location", "rotation"])

    def mutate(shot):
        ob = shot.vehicle
        if target == "location":
            fc = ob.driver_add("location", index)
        else:
            path = "rotation_euler" if shot.kind == "car" else "rotation_quaternion"
            fc = ob.driver_add(path, index)
        driver = fc.driver
        driver.type = "SCRIPTED"
        if "var" in expression:
            var = driver.variables.new()
            var.name, var.type = "var", "SINGLE_PROP"
            var.targets[0].id = shot.obstacle
            var.targets[0].data_path = "location[0]"
        driver.expression = expression
    channel = "location" if target == "location" else ("rotation_euler" if kind == "car" else "rotation_quaternion")
    return _Draft(f"driver on {vehicle} {channel}[{index}]: {expression}", mutate)


MUTATORS: dict[str, Callable[[random.Random, str], _Draft]] = {
    "obstacle_scale": _m_obstacle_scale, "obstacle_type": _m_obstacle_type, "key_values": _m_key_values,
    "vehicle_settings": _m_vehicle_settings, "constraint_empties": _m_constraint_empties, "units": _m_units,
    "frame_rates": _m_frame_rates, "frame_ranges": _m_frame_ranges, "parts": _m_parts,
    "rotation_modes": _m_rotation_modes, "drivers": _m_drivers,
}


# ------------------------------------------------------------------------------------------------
# cases
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    index: int
    category: str
    shot: str                          # "car" | "heli"
    description: str                   # the mutation, e.g. "Barrier scale x = nan"
    mutate: Callable[[Shot], None] = field(compare=False)
    simulate: bool = False             # also run Simulate (on a fresh copy)
    best_attempt: bool = False         # Solve with Bake Best Attempt
    expect_solve: str | None = None    # "refused": Solve must refuse; None: either outcome is right
    expect_simulate: str | None = None
    must_name: tuple[str, ...] = ()    # an expected refusal names one of these
    reason: str = ""

    @property
    def id(self) -> str:
        text = self.description + (" +best" if self.best_attempt else "") + (" +sim" if self.simulate else "")
        slug = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", text.replace(" = ", "=")).strip("_")[:70]
        return f"{self.index:03d}-{self.category}-{self.shot}-{slug}"

    def key(self) -> tuple:
        return (self.index, self.category, self.shot, self.description, self.simulate, self.best_attempt,
                self.expect_solve, self.expect_simulate, self.must_name)


def cases(seed: int, n: int, categories: tuple[str, ...] | None = None) -> list[Case]:
    """n cases, the same for the same seed (and a prefix of a longer run's)."""
    rng = random.Random(seed)
    weights = {k: w for k, w in WEIGHTS.items() if categories is None or k in categories}
    out: list[Case] = []
    while len(out) < n:
        category = rng.choices(list(weights), weights=list(weights.values()))[0]
        shot = _pick(rng, SHOTS)
        try:
            d = MUTATORS[category](rng, shot)
        except _Skip:
            continue
        simulate = d.simulate and rng.random() < SIMULATE_FRACTION
        best = rng.random() < BEST_ATTEMPT_FRACTION
        out.append(Case(index=len(out), category=category, shot=shot, description=d.description, mutate=d.mutate,
                        simulate=simulate, best_attempt=best, expect_solve=d.expect_solve,
                        expect_simulate=d.expect_simulate, must_name=d.must_name, reason=d.reason))
    return out


# ------------------------------------------------------------------------------------------------
# the checker
# ------------------------------------------------------------------------------------------------
@dataclass
class Run:
    operator: str                      # "solve" | "solve+best" | "simulate"
    outcome: str = ""                  # "finished" | "refused" | "cancelled" | "raised"
    message: str = ""                  # the report line or the error
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # RuntimeWarnings and the like: not contract breaks


@dataclass
class Outcome:
    case: Case
    runs: list[Run] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"{r.operator}: {p}" for r in self.runs for p in r.problems]

    @property
    def notes(self) -> list[str]:
        return [f"{r.operator}: {p}" for r in self.runs for p in r.notes]

    def text(self) -> str:
        lines = [f"{'BROKEN' if self.problems else 'held  '} {self.case.id}"]
        for r in self.runs:
            lines.append(f"    {r.operator}: {r.outcome} in {r.seconds:.2f} s: {r.message[:400]}")
            lines += [f"        PROBLEM {p}" for p in r.problems]
            lines += [f"        note {p}" for p in r.notes]
        return "\n".join(lines)


def _descendants(ob) -> list:
    out, stack = [], list(ob.children)
    while stack:
        child = stack.pop()
        out.append(child)
        stack.extend(child.children)
    return out


def _baked_objects(vehicle) -> list:
    return [vehicle] + [ob for ob in bpy.data.objects
                        if ob is not vehicle and ob.vehicle_motion.is_baked and ob.vehicle_motion.baked_by == vehicle]


def check_baked(scene, vehicle) -> list[str]:
    """Problems of a finished solve/simulate: F-curve keys and handles finite, matrix_world finite at
    every keyed frame of the vehicle and every object baked by it, the stored trajectory finite."""
    from vehicle_motion.addon import action_compat, storage
    problems = []
    objects = _baked_objects(vehicle)
    family = set(_descendants(vehicle))
    for ob in objects[1:]:
        if ob not in family:
            problems.append(f"the bake animated '{ob.name}', which is not part of '{vehicle.name}' (not its child)")
    frames: set[float] = set()
    for ob in objects:
        anim = ob.animation_data
        if anim is None or anim.action is None:
            continue
        for fc in action_compat.all_fcurves(anim.action):
            for kp in fc.keyframe_points:
                values = [*kp.co, *kp.handle_left, *kp.handle_right]
                if not all(math.isfinite(v) for v in values):
                    problems.append(f"'{ob.name}' baked F-curve {fc.data_path}[{fc.array_index}] has a key that is "
                                    f"not finite at frame {kp.co[0]:g}: {values}")
                    break
                frames.add(round(float(kp.co[0]), 6))
    if vehicle.vehicle_motion.is_baked and not frames:
        problems.append(f"'{vehicle.name}' is marked baked but has no baked keys")
    current = (scene.frame_current, scene.frame_subframe)
    bad = {}
    try:
        for f in sorted(frames):
            whole = math.floor(f)
            scene.frame_set(int(whole), subframe=float(f - whole))
            for ob in objects:
                if ob.name not in bad and not np.all(np.isfinite(np.array(ob.matrix_world))):
                    bad[ob.name] = f
    finally:
        scene.frame_set(current[0], subframe=current[1])
    problems += [f"'{name}' matrix_world is not finite at baked frame {f:g}" for name, f in bad.items()]
    if vehicle.vehicle_motion.has_trajectory:
        try:
            t = storage.load(vehicle)
        except Exception as exc:  # noqa: BLE001 - a stored trajectory that does not load is a problem
            problems.append(f"the stored trajectory does not load: {type(exc).__name__}: {exc}")
        else:
            for name in ("time", "position", "orientation"):
                a = np.asarray(getattr(t, name), dtype=float)
                if not np.all(np.isfinite(a)):
                    problems.append(f"the stored trajectory's {name} is not finite")
    return problems


def run_operator(shot: Shot, operator: str, expect: str | None = None, must_name: tuple[str, ...] = (),
                 **props) -> Run:
    """Run vehicle_motion.<operator> on the shot's vehicle and judge it against the contract."""
    scene, vehicle = shot.scene, shot.vehicle
    label = "solve+best" if props.get("bake_best_attempt") else ("solve" if operator == "solve_trajectory"
                                                                 else operator)
    run = Run(label)
    view_layer = bpy.context.view_layer
    for ob in view_layer.objects:
        ob.select_set(False)
    if vehicle.name in view_layer.objects:
        vehicle.select_set(True)
    view_layer.objects.active = vehicle
    view_layer.update()  # the evaluated scene is what must not change (evaluation applies the keys)
    before = snapshot()
    scene.vehicle_motion.last_report = ""
    err = io.StringIO()
    result, exc = None, None
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            result = getattr(bpy.ops.vehicle_motion, operator)(**props)
        except RuntimeError as e:
            exc = e
        except Exception as e:  # noqa: BLE001 - anything else escaping bpy.ops is a broken contract
            exc = e
            traceback.print_exc(file=err)
    run.seconds = time.perf_counter() - t0
    console = err.getvalue()
    if "Traceback" in console:
        tail = [line for line in console.strip().splitlines() if line.strip()][-1:]
        run.problems.append(f"traceback on the console ({tail[0].strip()[:200] if tail else ''})")
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            run.notes.append(f"RuntimeWarning at {pathlib.Path(w.filename).name}:{w.lineno}: {w.message}")
    if run.seconds > SLOW_S:
        run.problems.append(f"slow: {run.seconds:.1f} s (time limit {scene.vehicle_motion.time_limit_s:g} s)")
    if exc is not None and not isinstance(exc, RuntimeError):
        run.outcome, run.message = "raised", f"{type(exc).__name__}: {exc}"
        run.problems.append(f"raised {type(exc).__name__} (not an error report): {str(exc)[:300]}")
        return run
    if exc is not None:
        run.outcome = "refused"
        message = str(exc).strip()
        run.message = message
        if not message or message in ("Error:", "Error"):
            run.problems.append("an empty error")
        if "\n" in message:
            run.problems.append(f"the error is {message.count(chr(10)) + 1} lines")
        if "Traceback" in message:
            run.problems.append("the error holds a traceback")
        if "internal error" in message:
            run.problems.append(f"internal error: {message[:300]}")
        if re.search(r"\bnan\b|\binf\b", message) and "keyed" not in message and "scale" not in message:
            run.notes.append("the error mentions nan/inf")
        after = snapshot()
        if after != before:
            run.problems.append(f"refused but the scene changed: {_difference(before, after)}")
        if expect == REFUSED and must_name and not any(n in message for n in must_name):
            run.problems.append(f"the error names none of {list(must_name)}")
        if expect == SOLVED:
            run.problems.append(f"expected it solved (the base shot in other words), but it was refused: "
                                f"{message[:300]}")
        return run
    run.message = scene.vehicle_motion.last_report
    if result == {"FINISHED"}:
        run.outcome = "finished"
        report = run.message
        if "\n" in report.strip():
            run.problems.append("the report is more than one line")
        if "Traceback" in report or "internal error" in report:
            run.problems.append(f"the report holds a traceback or an internal error: {report[:300]}")
        if expect == REFUSED:
            run.problems.append("expected a refusal, but it finished")
        run.problems += check_baked(scene, vehicle)
        if operator == "solve_trajectory" and not props.get("bake_best_attempt"):
            from vehicle_motion.addon import storage
            if vehicle.vehicle_motion.has_trajectory and not storage.load(vehicle).stats.get("converged", True):
                run.problems.append("a solve that did not converge was stored without Bake Best Attempt")
        return run
    run.outcome = "cancelled"
    after = snapshot()
    run.problems.append(f"returned {sorted(result) if result else result} without an error report")
    if after != before:
        run.problems.append(f"cancelled but the scene changed: {_difference(before, after)}")
    return run


def prepare(case: Case) -> Shot:
    """A fresh shot with the case's mutation applied, evaluated at its current frame."""
    shot = fresh(case.shot)
    case.mutate(shot)
    scene = shot.scene
    scene.frame_set(scene.frame_current)
    return shot


def check_case(case: Case) -> Outcome:
    """Run the case: Solve (with Bake Best Attempt when the case says so), and Simulate on a fresh copy."""
    out = Outcome(case)
    try:
        shot = prepare(case)
    except Exception as exc:  # noqa: BLE001 - the fuzzer's own mutation failed: say so, as a problem
        r = Run("mutate", "raised", f"{type(exc).__name__}: {exc}")
        r.problems.append(f"the mutation itself failed: {type(exc).__name__}: {exc}")
        out.runs.append(r)
        return out
    out.runs.append(run_operator(shot, "solve_trajectory", case.expect_solve, case.must_name,
                                 bake_best_attempt=case.best_attempt))
    if case.simulate:
        shot = prepare(case)
        out.runs.append(run_operator(shot, "simulate", case.expect_simulate, case.must_name))
    return out


def problem_kind(problem: str) -> str:
    """A problem without its specifics, to group the same break over many cases."""
    text = re.sub(r"'[^']*'", "'…'", problem)
    text = re.sub(r"-?\d[\d.e+-]*", "N", text)
    return text[:120]


# ------------------------------------------------------------------------------------------------
# counts per category
# ------------------------------------------------------------------------------------------------
def summary(seed: int, n: int, categories: tuple[str, ...] | None = None, show: str = "none",
            only: set[int] | None = None, stream=None) -> tuple[Counter, Counter]:
    """Run cases(seed, n) and print held/broken counts per category (the add-on must be registered);
    returns (held, broken) counters by category."""
    stream = stream or sys.stdout
    all_cases = cases(seed, n, categories)
    if only:
        all_cases = [c for c in all_cases if c.index in only]
    held: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    kinds: dict[str, list[str]] = defaultdict(list)
    examples: dict[str, str] = {}
    outcomes: Counter[str] = Counter()
    notes = 0
    t0 = time.perf_counter()
    for c in all_cases:
        if hasattr(faulthandler, "dump_traceback_later"):
            faulthandler.dump_traceback_later(CASE_HANG_S, exit=True)
        res = check_case(c)
        if hasattr(faulthandler, "cancel_dump_traceback_later"):
            faulthandler.cancel_dump_traceback_later()
        (broken if res.problems else held)[c.category] += 1
        notes += bool(res.notes)
        for r in res.runs:
            outcomes[f"{r.operator} {r.outcome}"] += 1
        for p in res.problems:
            k = problem_kind(p)
            kinds[k].append(c.id)
            examples.setdefault(k, f"{c.id}: {p}")
        if show == "all" or (show == "broken" and res.problems) or only:
            print(res.text(), file=stream, flush=True)
    print(f"\n{len(all_cases)} cases, seed {seed}, {time.perf_counter() - t0:.1f} s", file=stream)
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())), file=stream)
    print(f"{'category':20s} {'held':>5s} {'broken':>7s}", file=stream)
    for cat in CATEGORIES:
        if held[cat] or broken[cat]:
            print(f"{cat:20s} {held[cat]:5d} {broken[cat]:7d}", file=stream)
    print(f"{'total':20s} {sum(held.values()):5d} {sum(broken.values()):7d}"
          f"   ({notes} cases with notes: RuntimeWarnings)", file=stream)
    if kinds:
        print("\nproblems by kind (cases; an example):", file=stream)
        for k, ids in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(ids):4d}  {k}\n        e.g. {examples[k][:400]}", file=stream)
            print("        cases: " + ", ".join(i.split("-")[0] for i in ids), file=stream)
    stream.flush()
    return held, broken


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--category", action="append", choices=CATEGORIES, help="only these categories")
    ap.add_argument("--only", type=int, action="append", help="run only the case with this index (repeatable)")
    ap.add_argument("--show", choices=("none", "broken", "all"), default="none", help="print cases as they run")
    ap.add_argument("--list", action="store_true", help="print the cases' ids, do not run them")
    args = ap.parse_args(argv)
    if args.list:
        for c in cases(args.seed, args.n, tuple(args.category) if args.category else None):
            print(c.id, f"[solve: {c.expect_solve or 'either'}; simulate: "
                        f"{(c.expect_simulate or 'either') if c.simulate else '-'}]")
        return 0
    faulthandler.enable()
    from addon_session import import_package  # the repository as the package vehicle_motion
    module = import_package()
    module.register()
    try:
        _, broken = summary(args.seed, args.n, tuple(args.category) if args.category else None, args.show,
                            set(args.only) if args.only else None)
    finally:
        module.unregister()  # bpy 4.5 hangs at exit while an Operator class is registered
    return 1 if sum(broken.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
