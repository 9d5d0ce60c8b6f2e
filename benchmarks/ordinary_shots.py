"""Ordinary shots (issue 20's acceptance), built in code as an animator builds them, solved and baked
through the real operator (scipy), and measured on the BAKED scene only.

    timeout 900 .venv/bin/python benchmarks/ordinary_shots.py [--only 1,4,8]

Each shot is a fresh empty file. Solve and Bake run through ``bpy.ops.vehicle_motion.solve_trajectory()``
with the scipy backend (the one Blender users have); every figure is read back from the scene with
``scene.frame_set(frame, subframe=…)`` and ``matrix_world`` of the vehicle and its children, never from
the solver's own numbers or the stored trajectory:

* keys error: at each key's own frame, the distance (m) and the angle (°) between the baked object's pose
  and the pose it was keyed at (read from the scene before solving); the first and last key separately
  from the keys in between, which are held against Key Tolerance;
* slip: cars with wheels; the rear axle is the midpoint of the baked rear wheel centres, its velocity
  differenced between baked frames, against the body's forward axis (the mean heading of the two frames)
  whenever its speed is above 1 m/s; the largest angle, in degrees. A proxy (no wheels) is measured at its
  origin instead, marked so;
* spin: cars with mesh wheels; for each wheel, Σ |rotation about its axle (relative to its parent) between
  baked frames × its radius (measured from its mesh) − the distance its contact point (its centre on the
  ground) moved| / its path length, in %;
* clearance: the smallest signed distance over the baked frames between the evaluated mesh vertices of
  the vehicle and its mesh children and each obstacle's shape (core.shot.geometry.fit_shape on the
  obstacle's evaluated world vertices, its own Shape setting; a box is the exact box), m;
* solve → baked: the wall time of the operator call, s (for a refusal: the time to refuse);
* report: ``scene.vehicle_motion.last_report``, or the refusal's message.

Acceptance limits (out-of-limit figures are listed after the table): keys within Key Tolerance, slip ≤ 0.5°
above 1 m/s, spin ≤ 1 %, clearance ≥ −1 cm.

bpy 4.5 hangs at interpreter exit while an operator class is registered: the add-on is unregistered in a
``finally``. Run under ``timeout``.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field

import bpy
import bmesh  # after bpy: bpy makes it importable
import numpy as np

from build_car_tunnel_scene import _box as box, _cylinder as cylinder
from build_car_tunnel_scene import _mesh_object, addon_registered
from build_roof_landing_scene import PAD, box_obstacle, helicopter
from scene_kit import key_at_rest_pose, world_vertices

LIMIT_SLIP_DEG = 0.5
LIMIT_SPIN_PCT = 1.0
LIMIT_CLEARANCE_M = -0.01
SLIP_SPEED = 1.0      # m/s


# ----------------------------------------------------------------------------- building scenes

def new_file(fps: float = 24, fps_base: float = 1.0, frames=(1, 250), unit_scale: float = 1.0):
    """An empty file: one scene, metric, at ``fps / fps_base``, the given frame range and unit scale."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = int(fps), fps_base
    scene.frame_start, scene.frame_end = frames
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", unit_scale
    scene.vehicle_motion.solver_backend = "SCIPY"
    scene.frame_set(frames[0])
    return scene


def mesh_object(name: str, build, *, collection=None, location=(0.0, 0.0, 0.0), parent=None):
    """A mesh object built by ``build(bm)`` (the car-tunnel sample's builder), linked to the scene."""
    return _mesh_object(name, build, collection or bpy.context.scene.collection, location=location,
                        parent=parent)


def empty_object(name: str, *, location=(0.0, 0.0, 0.0), parent=None, display="PLAIN_AXES", size=1.0):
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    obj.empty_display_type, obj.empty_display_size = display, size
    obj.parent, obj.location = parent, location
    return obj


def rot_z(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# A car as an animator builds it (tests/blender/test_car_geometry.py): a body box and four cylinder wheels
# as children (turned 90° about X: their axle sideways, Wheel Axis Z), the front ones on steering knuckles;
# the Hatchback preset; the object's origin anywhere. Metres, in rear-axle coordinates (x forward, z up).
WHEELBASE, TRACK, REAR_R, FRONT_R, WIDTH = 2.6, 1.5, 0.34, 0.36, 0.24
BODY = ((-0.9, -0.9, 0.3), (3.5, 0.9, 1.4))
ORIGINS = {"rear axle": (0.0, 0.0, 0.0), "bounding-box centre": (1.3, 0.0, 0.7), "front bumper": (3.5, 0.0, 0.5)}
WHEELS = {"wheel_rear_left": ((0.0, 0.5 * TRACK, REAR_R), REAR_R),
          "wheel_rear_right": ((0.0, -0.5 * TRACK, REAR_R), REAR_R),
          "wheel_front_left": ((WHEELBASE, 0.5 * TRACK, FRONT_R), FRONT_R),
          "wheel_front_right": ((WHEELBASE, -0.5 * TRACK, FRONT_R), FRONT_R)}


def build_car(name: str, keys, *, origin=ORIGINS["bounding-box centre"], unit: float = 1.0, front_r=FRONT_R):
    """The car, modelled at real size in scene units (``unit`` scene units a metre); keyed at
    (frame, rear axle (x, y) m, heading rad): the object's location is where its origin then is."""
    origin = np.asarray(origin, dtype=float)
    lo, hi = ((np.asarray(c) - origin) * unit for c in BODY)
    car = mesh_object(name, box(lo, hi))
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    s.wheel_axis = "Z"
    for role, (centre, radius) in WHEELS.items():
        if role.startswith("wheel_front"):
            radius = front_r
            centre = (centre[0], centre[1], front_r)
        place = (np.asarray(centre) - origin) * unit
        wheel = mesh_object(f"{name} {role[6:]}", cylinder(radius * unit, WIDTH * unit))
        wheel.rotation_mode = "XYZ"
        wheel.rotation_euler = (math.pi / 2, 0.0, 0.0)
        parent = car
        if role.startswith("wheel_front"):
            knuckle = empty_object(f"{name} knuckle {role[12:]}", parent=car, location=tuple(place))
            setattr(s, "knuckle" + role[5:], knuckle)
            parent, place = knuckle, np.zeros(3)
        wheel.parent, wheel.location = parent, tuple(place)
        setattr(s, role, wheel)
    for frame, (x, y), heading in keys:
        car.location = (np.array([x, y, 0.0]) + rot_z(heading) @ origin) * unit
        car.rotation_euler = (0.0, 0.0, heading)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    return car


# ----------------------------------------------------------------------------- measuring the baked scene

def go(scene, frame: float) -> None:
    whole = math.floor(frame + 1e-9)
    scene.frame_set(int(whole), subframe=float(frame - whole))


def world(obj) -> np.ndarray:
    return np.array(obj.matrix_world)


def unit_rotation(m: np.ndarray) -> np.ndarray:
    r = m[:3, :3]
    return r / np.linalg.norm(r, axis=0)


def rotation_angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between two rotations (‖A − B‖ = 2√2 sin(θ/2): exact for small angles, unlike acos)."""
    chord = float(np.linalg.norm(a - b)) / (2.0 * math.sqrt(2.0))
    return math.degrees(2.0 * math.asin(min(1.0, chord)))


def key_frames(obj) -> list[float]:
    """The frames the object is keyed at (its own transform channels)."""
    ad = obj.animation_data
    frames = set()
    if ad and ad.action:
        for fc in action_fcurves(ad.action):
            if fc.data_path in ("location", "rotation_euler", "rotation_quaternion"):
                frames.update(round(float(k.co[0]), 4) for k in fc.keyframe_points)
    return sorted(frames)


def action_fcurves(action):
    """F-curves of an action (bpy 4.4+ layered actions or the legacy list)."""
    out = []
    if getattr(action, "layers", None):
        for layer in action.layers:
            for strip in layer.strips:
                for bag in getattr(strip, "channelbags", []):
                    out.extend(bag.fcurves)
    if not out and hasattr(action, "fcurves"):
        out = list(action.fcurves)
    return out


def keyed_poses(scene, obj) -> list[tuple[float, np.ndarray]]:
    """(frame, world matrix) at each key, read from the scene before solving."""
    out = []
    for f in key_frames(obj):
        go(scene, f)
        out.append((f, world(obj)))
    return out


def shot_frames(start: float, end: float) -> list[float]:
    """The frames to measure: every whole frame in [start, end] and the two ends."""
    frames = {round(start, 6), round(end, 6)}
    frames.update(float(f) for f in range(math.ceil(start - 1e-4), math.floor(end + 1e-4) + 1))
    out = sorted(frames)
    return [f for i, f in enumerate(out) if i == 0 or f - out[i - 1] > 1e-4]


@dataclass
class Measures:
    ends_m: float | None = None
    ends_deg: float | None = None
    between_m: float | None = None
    between_deg: float | None = None
    tolerance_m: float | None = None
    slip_deg: float | None = None
    slip_where: str = ""
    spin_pct: dict = field(default_factory=dict)
    spin_note: str = ""
    clearance_m: float | None = None
    clearance_where: str = ""


def keys_error(scene, obj, keyed, scale: float, m: Measures) -> None:
    first, last = keyed[0][0], keyed[-1][0]
    ends, between = [(0.0, 0.0)], []
    for f, pose in keyed:
        go(scene, f)
        now = world(obj)
        d = float(np.linalg.norm(now[:3, 3] - pose[:3, 3])) * scale
        a = rotation_angle_deg(unit_rotation(now), unit_rotation(pose))
        (ends if f in (first, last) else between).append((d, a))
    m.ends_m, m.ends_deg = max(e[0] for e in ends), max(e[1] for e in ends)
    if between:
        m.between_m, m.between_deg = max(e[0] for e in between), max(e[1] for e in between)
    m.tolerance_m = float(scene.vehicle_motion.key_tolerance) * scale


def slip(scene, points: np.ndarray, headings: np.ndarray, frames, fps: float, scale: float) -> float | None:
    chord = np.diff(points[:, :2], axis=0) * scale
    dt = np.diff(np.asarray(frames)) / fps
    speed = np.linalg.norm(chord, axis=1) / dt
    mid = 0.5 * (headings[1:] + headings[:-1])
    angle = np.abs(np.remainder(np.arctan2(chord[:, 1], chord[:, 0]) - mid + math.pi, 2 * math.pi) - math.pi)
    fast = speed > SLIP_SPEED
    return math.degrees(float(np.max(angle[fast]))) if np.any(fast) else None


AXES = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1), "NEG_X": (-1, 0, 0), "NEG_Y": (0, -1, 0), "NEG_Z": (0, 0, -1)}


def wheel_radius(wheel, axis_local: np.ndarray) -> float:
    """Largest distance of the wheel's evaluated world vertices from its spin axis (scene units)."""
    v = world_vertices([wheel])
    mw = world(wheel)
    a = mw[:3, :3] @ axis_local
    a /= np.linalg.norm(a)
    rel = v - mw[:3, 3]
    return float(np.max(np.linalg.norm(rel - np.outer(rel @ a, a), axis=1)))


def measure_car(scene, car, frames, fps: float, scale: float, m: Measures) -> None:
    s = car.vehicle_motion
    roles = ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right")
    wheels = {r: getattr(s, r) for r in roles if getattr(s, r) is not None}
    axis_local = np.array(AXES[s.wheel_axis], dtype=float)
    rear = [wheels.get("wheel_rear_left"), wheels.get("wheel_rear_right")]
    mesh_wheels = {r: w for r, w in wheels.items() if w.type == "MESH"}
    radius = {}
    if mesh_wheels:
        go(scene, frames[0])
        radius = {r: wheel_radius(w, axis_local) for r, w in mesh_wheels.items()}
    axle, headings, centres, spins, axles = [], [], {r: [] for r in mesh_wheels}, {r: [] for r in mesh_wheels}, \
        {r: [] for r in mesh_wheels}
    for f in frames:
        go(scene, f)
        body = world(car)
        headings.append(math.atan2(body[1, 0], body[0, 0]))
        if all(w is not None for w in rear):
            axle.append(0.5 * (world(rear[0])[:3, 3] + world(rear[1])[:3, 3]))
        else:
            axle.append(body[:3, 3].copy())
        for r, w in mesh_wheels.items():
            ww = world(w)
            parent = world(w.parent) if w.parent is not None else np.eye(4)
            spins[r].append(unit_rotation(parent).T @ unit_rotation(ww))    # the wheel relative to its parent
            centres[r].append(ww[:3, 3].copy())
            a = ww[:3, :3] @ axis_local
            axles[r].append(a / np.linalg.norm(a))
    m.slip_deg = slip(scene, np.array(axle), np.unwrap(headings), frames, fps, scale)
    m.slip_where = "" if all(w is not None for w in rear) else "origin, no wheels"
    u = np.cross(axis_local, [1.0, 0.0, 0.0] if abs(axis_local[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    aliased = False
    for r in mesh_wheels:
        c = np.array(centres[r])[:, :2] * scale
        rolled_total, error_total, path = 0.0, 0.0, 0.0
        for i in range(len(frames) - 1):
            step = spins[r][i].T @ spins[r][i + 1]          # the turn between frames, in the wheel's frame
            v = step @ u
            turn = math.atan2(float(axis_local @ np.cross(u, v)), float(u @ v))   # about its axle, wrapped to ±π
            move = c[i + 1] - c[i]
            d = float(np.linalg.norm(move))
            if d > 1e-9:
                forward_axle = np.cross([0.0, 0.0, 1.0], [move[0] / d, move[1] / d, 0.0])  # a forward roll's axis
                sign = 1.0 if float(forward_axle @ axles[r][i]) >= 0.0 else -1.0
            else:
                sign = 1.0
            rolled = sign * turn * radius[r] * scale
            aliased |= d / (radius[r] * scale) > math.pi
            error_total += abs(rolled - d)
            rolled_total += rolled
            path += d
        m.spin_pct[r] = 100.0 * error_total / path if path > 0 else float("nan")
    if aliased:
        m.spin_note = "a wheel turns more than half a turn between frames: its spin is ambiguous"


def measure_clearance(scene, vehicle, obstacles, frames, scale: float, m: Measures) -> None:
    from vehicle_motion.core.shot.geometry import fit_shape, polar
    if not obstacles:
        return
    meshes = [ob for ob in [vehicle, *vehicle.children_recursive] if ob.type == "MESH"]
    go(scene, frames[0])
    shapes = []
    for ob in obstacles:
        v = world_vertices([ob])
        shape = fit_shape(ob.name, v, ob.vehicle_motion.obstacle_shape, frame_hint=polar(world(ob)[:3, :3]))
        shapes.append(shape)
    worst = (math.inf, None, None)
    for f in frames:
        go(scene, f)
        v = world_vertices(meshes)
        for shape in shapes:
            d = float(np.min(shape.distance(v))) * scale
            if d < worst[0]:
                worst = (d, f, shape.name)
    m.clearance_m = worst[0]
    m.clearance_where = f"'{worst[2]}' ({shapes[[s.name for s in shapes].index(worst[2])].kind}) at frame " \
                        f"{worst[1]:g}"


# ----------------------------------------------------------------------------- one shot

@dataclass
class Row:
    number: str
    shot: str
    measures: Measures | None = None
    seconds: float | None = None
    report: str = ""
    refused: bool = False
    failed: str = ""           # the operator refused or failed unexpectedly, or the benchmark broke
    notes: list = field(default_factory=list)


def run(number: str, shot: str, scene, vehicle, *, obstacles=(), expect_refusal=False, is_car=False) -> Row:
    """Solve and bake ``vehicle`` with the operator, then measure the baked scene."""
    row = Row(number, shot)
    scale = float(scene.unit_settings.scale_length)
    fps = scene.render.fps / scene.render.fps_base
    keyed = keyed_poses(scene, vehicle)
    view_layer = bpy.context.view_layer
    for ob in view_layer.objects:
        ob.select_set(False)
    vehicle.select_set(True)
    view_layer.objects.active = vehicle
    scene.frame_set(scene.frame_start)
    started = time.perf_counter()
    try:
        result = bpy.ops.vehicle_motion.solve_trajectory()
        row.seconds = time.perf_counter() - started
        row.report = scene.vehicle_motion.last_report
    except RuntimeError as error:
        row.seconds = time.perf_counter() - started
        message = str(error).strip()
        row.report = message[len("Error: "):] if message.startswith("Error: ") else message
        row.refused = True
        if not expect_refusal:
            row.failed = "refused"
        return row
    if expect_refusal:
        row.failed = "solved, but a refusal was expected"
    if result != {"FINISHED"}:
        row.failed = f"operator returned {sorted(result)}"
        return row
    m = row.measures = Measures()
    keys_error(scene, vehicle, keyed, scale, m)
    frames = shot_frames(keyed[0][0], keyed[-1][0])
    if is_car:
        measure_car(scene, vehicle, frames, fps, scale, m)
    measure_clearance(scene, vehicle, list(obstacles), frames, scale, m)
    return row


def guarded(number: str, shot: str, build):
    """Build and run a shot; a benchmark error becomes the row's failure."""
    try:
        return build()
    except Exception as error:  # noqa: BLE001 - the row says what broke
        traceback.print_exc()
        return Row(number, shot, failed=f"benchmark error: {type(error).__name__}: {error}")


# ----------------------------------------------------------------------------- the shots

def shot_keys_range():
    """1. Keyed at frames 1 and 73 in a 1–73 scene, the add-on's own range left at 1–250."""
    scene = new_file(24, frames=(1, 73))
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (73, (12.0, 0.0), 0.0)])
    row = run("1", "car keyed 1 & 73, scene 1–73, add-on range 1–250 (defaults)", scene, car, is_car=True)
    vm = scene.vehicle_motion
    row.notes.append(f"add-on range {vm.frame_start}–{vm.frame_end}, Own Frame Range "
                     f"{'on' if vm.use_frame_range else 'off'}")
    return row


def shot_units(number: str, unit_scale: float, label: str):
    """2/3. The same car modelled at real size in centimetres / millimetres, presets as they are."""
    scene = new_file(24, frames=(1, 73), unit_scale=unit_scale)
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (73, (12.0, 2.0), 0.0)], unit=1.0 / unit_scale)
    return run(number, f"car in a {label} scene (unit scale {unit_scale:g}), mesh wheels", scene, car, is_car=True)


TURN_KEYS = ((1, (0.0, 0.0), 0.0), (31, (10.0, 1.5), math.radians(20.0)), (61, (17.0, 8.0), math.radians(75.0)))


def shot_origin(number: str, label: str):
    """4. The origin at the rear axle, the bounding-box centre, the front bumper; keys with a turn."""
    scene = new_file(12, frames=(1, 61))
    scene.vehicle_motion.steps_per_frame = 1
    car = build_car("Car", TURN_KEYS, origin=ORIGINS[label])
    return run(number, f"origin at the {label}, keys with a turn (12 fps)", scene, car, is_car=True)


def shot_proxy():
    """5. A bare cube set to Car: no wheels."""
    scene = new_file(24, frames=(1, 49))
    mesh = bpy.data.meshes.new("Proxy")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=2.0)
    bm.to_mesh(mesh)
    bm.free()
    proxy = bpy.data.objects.new("Proxy", mesh)
    scene.collection.objects.link(proxy)
    proxy.scale = (2.0, 0.9, 0.7)
    proxy.rotation_mode = "XYZ"
    proxy.vehicle_motion.vehicle_type = "CAR"
    for frame, (x, y) in ((1, (0.0, 0.0)), (49, (8.0, 1.0))):
        proxy.location = (x, y, 0.7)
        proxy.rotation_euler = (0.0, 0.0, 0.0)
        proxy.keyframe_insert("location", frame=frame)
        proxy.keyframe_insert("rotation_euler", frame=frame)
    return run("5", "proxy: a bare cube set to Car, no wheels", scene, proxy, is_car=True)


def shot_subframes():
    """6. Keys at 1, 60.5 and 120.25 at 29.97 fps."""
    scene = new_file(30, 1.001, frames=(1, 130))
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (60.5, (7.0, 0.6), 0.15), (120.25, (20.0, 3.0), 0.2)])
    return run("6", "fractional keys 1, 60.5, 120.25 at 29.97 fps", scene, car, is_car=True)


def shot_spin():
    """7. Per-wheel spin in a quarter turn (mesh wheels 0.34 m rear, 0.36 m front)."""
    scene = new_file(12, frames=(1, 49))
    scene.vehicle_motion.steps_per_frame = 1
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (49, (10.0, 10.0), math.radians(90.0))],
                    origin=ORIGINS["rear axle"])
    return run("7", "per-wheel spin, a quarter turn (wheels 0.34 m rear, 0.36 m front)", scene, car, is_car=True)


def shot_helicopter():
    """8. A helicopter landing on a roof, keyed standing on it at the end."""
    scene = new_file(8, frames=(1, 41))
    heli, building = helicopter(scene, frame_end=41, land_key=True)
    return run("8", "helicopter lands on a roof (keyed on the roof at 41, 8 fps)", scene, heli, obstacles=[building])


def shot_helicopter_land_empty():
    """8b. The same landing given by a Land empty on the roof (frame 41) instead of a key."""
    scene = new_file(8, frames=(1, 250))
    heli, building = helicopter(scene, frame_end=41, land_key=False)
    pad = empty_object("Pad", location=PAD, size=0.5)
    pad.rotation_euler = (0.0, 0.0, math.radians(20.0))
    pad.vehicle_motion.constraint_kind = "LAND"
    pad.vehicle_motion.constraint_timing = "FRAME"
    pad.vehicle_motion.constraint_frame = 41
    row = run("8b", "helicopter lands on a roof at a Land empty (frame 41, heading 20°)", scene, heli,
              obstacles=[building])
    if row.measures is not None:    # the landing is the goal: measure the pad's pose at frame 41
        m = row.measures
        go(scene, 41)
        now, target = world(heli), world(pad)
        m.ends_m = max(m.ends_m or 0.0, float(np.linalg.norm(now[:3, 3] - target[:3, 3])))
        m.ends_deg = max(m.ends_deg or 0.0, rotation_angle_deg(unit_rotation(now), unit_rotation(target)))
        frames = shot_frames(1, 41)
        m.clearance_m = None
        measure_clearance(scene, heli, [building], frames, 1.0, m)
        row.notes.append("keys error includes the Land empty's pose at frame 41; clearance over frames 1–41")
    return row


def keyed_box_boat(keys):
    """A 5 × 2 × 0.8 m closed box boat (preset RIB Boat), keyed at rest, level, at (frame, x, y) m with its
    centre at its waterline height (the box displaces its mass)."""
    boat = mesh_object("Boat", box((-2.5, -1.0, -0.4), (2.5, 1.0, 0.4)))
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    draft = boat.vehicle_motion.mass / (1000.0 * 5.0 * 2.0)
    z = 0.4 - draft                                             # its centre: 0.4 m above its bottom
    for frame, x, y in keys:
        key_at_rest_pose(boat, frame, (x, y, z))
    return boat


def shot_boat():
    """9. A 5 × 2 × 0.8 m closed box boat floating level docks at rest, bow against a box pier."""
    scene = new_file(10, frames=(1, 51))
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.max_iter, vm.time_limit_s, vm.tol = 1, 500, 120.0, 1e-5
    boat = keyed_box_boat([(1, -2.0, 0.0), (51, 2.0, 0.0)])   # at the berth the bow (2.5 m ahead) is on the pier
    pier = box_obstacle(scene, "Pier", (4.5, -4.0, -0.6), (6.5, 4.0, 0.8))
    return run("9", "boat docks at rest against a box pier (10 fps)", scene, boat, obstacles=[pier])


def shot_impossible():
    """10. 20 m in 2 s from rest: refused before solving."""
    scene = new_file(24, frames=(1, 49))
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (49, (20.0, 0.0), 0.0)])
    action = car.animation_data.action
    row = run("10", "impossible timing: 20 m in 2 s from rest", scene, car, expect_refusal=True, is_car=True)
    if row.refused and (car.animation_data.action != action or car.vehicle_motion.is_baked):
        row.failed = "refused, but the scene changed"
    return row


def shot_driver():
    """11. A driver on location Y."""
    scene = new_file(24, frames=(1, 49))
    car = build_car("Car", [(1, (0.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0)])
    driver = car.driver_add("location", 1).driver
    driver.expression = "0.0"
    row = run("11", "driver on a baked channel (Y Location)", scene, car, is_car=True)
    if row.report and "driver" not in row.report:
        row.failed = "the report does not name the driver"
    return row


SHOTS = [
    ("1", shot_keys_range),
    ("2", lambda: shot_units("2", 0.01, "centimetre")),
    ("3", lambda: shot_units("3", 0.001, "millimetre")),
    ("4a", lambda: shot_origin("4a", "rear axle")),
    ("4b", lambda: shot_origin("4b", "bounding-box centre")),
    ("4c", lambda: shot_origin("4c", "front bumper")),
    ("5", shot_proxy),
    ("6", shot_subframes),
    ("7", shot_spin),
    ("8", shot_helicopter),
    ("8b", shot_helicopter_land_empty),
    ("9", shot_boat),
    ("10", shot_impossible),
    ("11", shot_driver),
]


# ----------------------------------------------------------------------------- the table

def fmt(x, digits=3, unit="") -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x != 0 and abs(x) < 10 ** -digits:
        return f"{x:.1e}{unit}"
    return f"{x:.{digits}f}{unit}"


def cells(row: Row) -> list[str]:
    m = row.measures
    if m is None:
        keys = slip_cell = spin = clear = "—"
    else:
        keys = f"ends {fmt(m.ends_m, 5)} m, {fmt(m.ends_deg, 3)}°"
        if m.between_m is not None:
            keys += f"; between {fmt(m.between_m, 5)} m, {fmt(m.between_deg, 3)}° (tol {fmt(m.tolerance_m, 4)} m)"
        slip_cell = fmt(m.slip_deg, 3, "°") + (f" ({m.slip_where})" if m.slip_where and m.slip_deg is not None
                                              else "")
        short = {"wheel_rear_left": "RL", "wheel_rear_right": "RR", "wheel_front_left": "FL",
                 "wheel_front_right": "FR"}
        spin = " · ".join(f"{short[r]} {fmt(v, 3)} %" for r, v in m.spin_pct.items()) or "—"
        if m.spin_note:
            spin += f" ({m.spin_note})"
        clear = "—" if m.clearance_m is None else f"{fmt(m.clearance_m, 4)} m ({m.clearance_where})"
    report = row.report.replace("\n", " ").replace("|", "\\|")
    if row.failed:
        report = f"**FAILED: {row.failed}** — {report}"
    if row.notes:
        report += " [" + "; ".join(row.notes) + "]"
    seconds = "—" if row.seconds is None else f"{row.seconds:.{2 if row.seconds >= 0.1 else 3}f}" + (" (refusal)" if row.refused else "")
    return [row.number, row.shot, keys, slip_cell, spin, clear, seconds, report]


def findings(rows: list[Row], expected_refusals=("10",)) -> list[str]:
    out = []
    for row in rows:
        if row.failed:
            out.append(f"{row.number}: {row.failed}: {row.report}")
        m = row.measures
        if m is None:
            continue
        tol = (m.tolerance_m or 0.0) + 1e-6
        if m.ends_m is not None and m.ends_m > tol:
            out.append(f"{row.number}: first/last key missed by {m.ends_m:.4g} m (> Key Tolerance {m.tolerance_m:g} m)")
        if m.between_m is not None and m.between_m > tol:
            out.append(f"{row.number}: a key in between missed by {m.between_m:.4g} m "
                       f"(> Key Tolerance {m.tolerance_m:g} m)")
        if m.slip_deg is not None and m.slip_deg > LIMIT_SLIP_DEG:
            out.append(f"{row.number}: sideways slip {m.slip_deg:.3g}° > {LIMIT_SLIP_DEG}°"
                       + (f" ({m.slip_where})" if m.slip_where else ""))
        for r, v in m.spin_pct.items():
            if not v <= LIMIT_SPIN_PCT:
                out.append(f"{row.number}: {r} spin error {v:.3g} % > {LIMIT_SPIN_PCT} %")
        if m.clearance_m is not None and m.clearance_m < LIMIT_CLEARANCE_M:
            out.append(f"{row.number}: clearance {m.clearance_m:.4g} m < {LIMIT_CLEARANCE_M} m ({m.clearance_where})")
    return out


def cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated shot numbers (e.g. 1,4a,8)")
    args = parser.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    rows = []
    with addon_registered():  # unregistered after: bpy 4.5 hangs at exit while an operator class is registered
        for number, build in SHOTS:
            if only and number not in only and number.rstrip("abc") not in only:
                continue
            print(f"shot {number} …", file=sys.stderr, flush=True)
            rows.append(guarded(number, number, build))
    print()
    print(f"Blender (bpy) {bpy.app.version_string}; CPU: {cpu_model()} ({__import__('os').cpu_count()} cores); "
          f"Python {platform.python_version()}")
    print()
    header = ["#", "shot", "keys error", "max rear-axle slip (>1 m/s)", "spin error per wheel", "clearance",
              "solve→baked (s)", "report"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(cells(row)) + " |")
    print()
    found = findings(rows)
    print("Out of the acceptance limits or failed:" if found else "Every figure within the acceptance limits.")
    for line in found:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
