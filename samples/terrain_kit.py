"""What the ground samples (``build_car_hill_scene``, ``build_car_banked_scene``) share: the tunnel sample's
hatchback built in any unit, a Ground mesh displaced in Python, and the baked ride read back from Blender.

The read-back is what the pictures draw and the tests check: every frame is evaluated (``frame_set``,
``matrix_world``) and measured against the Ground mesh itself (a BVH tree of its evaluated faces), in metres
whatever the scene's Unit Scale.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from dataclasses import dataclass
from typing import Callable

import bpy  # before bmesh: the bpy module provides it
import bmesh  # noqa: I001
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

from build_car_tunnel_scene import TRACK, WHEEL_RADIUS, WHEELBASE, _boxes, _empty, _mesh_object, _wheel, addon_registered

ROOT = pathlib.Path(__file__).resolve().parents[1]

WHEELS = ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right")
BODY = (((-0.80, -0.85, 0.25), (3.40, 0.85, 1.00)), ((0.20, -0.75, 1.00), (2.10, 0.75, 1.45)))  # m


def _scaled(build, unit: float):
    """A bmesh builder in metres, its vertices scaled to ``unit`` scene units a metre."""
    def scaled(bm):
        build(bm)
        bmesh.ops.scale(bm, vec=(unit, unit, unit), verts=bm.verts)
    return scaled


def build_car(collection, unit: float, name: str = "Car"):
    """The tunnel sample's hatchback modelled in scene units (``unit`` a metre): a body box with its origin at
    the rear axle on the ground (+X forward), two rear wheels and two steering knuckles holding the front
    wheels as children, wheel radius 0.30 m; preset Hatchback, geometry From the Wheels."""
    car = _mesh_object(name, _scaled(_boxes(*BODY), unit), collection)
    car.rotation_mode = "XYZ"
    settings = car.vehicle_motion
    settings.preset = "HATCHBACK"
    wheel = _scaled(_wheel, unit)
    for side, y in (("L", TRACK), ("R", -TRACK)):
        rear = _mesh_object(f"Wheel R{side}", wheel, collection, location=(0.0, y * unit, WHEEL_RADIUS * unit),
                            parent=car)
        knuckle = _empty(f"Knuckle F{side}", collection, (WHEELBASE * unit, y * unit, WHEEL_RADIUS * unit),
                         "ARROWS", 0.25 * unit, parent=car)
        front = _mesh_object(f"Wheel F{side}", wheel, collection, parent=knuckle)
        which = "left" if side == "L" else "right"
        setattr(settings, f"wheel_rear_{which}", rear)
        setattr(settings, f"knuckle_front_{which}", knuckle)
        setattr(settings, f"wheel_front_{which}", front)
    return car


def key_car(car, frame: float, location, heading: float, speed: float | None = None) -> None:
    """Key the car's location and heading at ``frame`` (and its speed, scene units per second, when given)."""
    car.location = location
    car.rotation_euler = (0.0, 0.0, heading)
    car.keyframe_insert("location", frame=frame)
    car.keyframe_insert("rotation_euler", frame=frame)
    if speed is not None:
        car.vehicle_motion.speed = speed
        car.keyframe_insert("vehicle_motion.speed", frame=frame)


def ground_collection(scene):
    """A new collection named ``Ground`` in the scene: what the solve and the bake read as the terrain."""
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    return ground


def displaced_grid(name: str, collection, segments: tuple[int, int],
                   place: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    """Add › Mesh › Grid subdivided into ``segments`` faces, each vertex moved to ``place(u, v)`` (scene units,
    (N, 3)) from its grid coordinates u, v ∈ [0, 1]; coincident vertices (a grid closed into a ring) merged."""
    def build(bm):
        bmesh.ops.create_grid(bm, x_segments=segments[0], y_segments=segments[1], size=1.0)
        uv = np.array([(v.co.x, v.co.y) for v in bm.verts])
        uv = (uv - uv.min(axis=0)) / np.ptp(uv, axis=0)
        placed = place(uv[:, 0], uv[:, 1])
        for v, co in zip(bm.verts, placed):
            v.co = co
        bmesh.ops.remove_doubles(bm, verts=bm.verts, dist=1e-6 * float(np.ptp(placed[:, :2])))
    ground = _mesh_object(name, build, collection)
    ground.hide_select = True
    return ground


class GroundProbe:
    """The scene's Ground meshes in world metres: the height and the upward normal under points (vertical rays
    against a BVH tree of their evaluated faces)."""

    def __init__(self, objects, metres_per_unit: float):
        depsgraph = bpy.context.evaluated_depsgraph_get()
        vertices, faces = [], []
        for ob in objects:
            ev = ob.evaluated_get(depsgraph)
            mesh = ev.to_mesh()
            mesh.calc_loop_triangles()
            m = np.array(ev.matrix_world)
            co = np.array([v.co for v in mesh.vertices])
            base = len(vertices)
            vertices += [tuple(p) for p in (co @ m[:3, :3].T + m[:3, 3]) * metres_per_unit]
            faces += [tuple(base + i for i in t.vertices) for t in mesh.loop_triangles]
            ev.to_mesh_clear()
        self.top = max(p[2] for p in vertices) + 1.0
        self.tree = BVHTree.FromPolygons(vertices, faces)

    def at(self, x: float, y: float) -> tuple[float, np.ndarray]:
        """(height, upward unit normal) of the ground under (x, y) m; ValueError off the ground."""
        hit, normal, _, _ = self.tree.ray_cast(Vector((x, y, self.top)), Vector((0.0, 0.0, -1.0)))
        if hit is None:
            raise ValueError(f"no ground under ({x:.3f}, {y:.3f}) m")
        n = np.array(normal)
        return hit.z, n if n[2] > 0 else -n

    def heights(self, xy: np.ndarray) -> np.ndarray:
        """Ground heights (m) under the points ``xy`` (..., 2)."""
        xy = np.asarray(xy, dtype=float)
        flat = [self.at(x, y)[0] for x, y in xy.reshape(-1, 2)]
        return np.array(flat).reshape(xy.shape[:-1])


@dataclass
class BakedRide:
    """The baked motion read back at every frame, metres: ``body`` (F, 4, 4) the car's world matrix (origin:
    the rear axle on the ground); per wheel role ``wheels`` (F, 4, 4) world matrices, ``spin`` (F,) rad (the
    wheel's rotation about its axle against its parent, unwrapped, from 0) and ``radius`` (m)."""

    frames: np.ndarray
    time: np.ndarray
    body: np.ndarray
    wheels: dict[str, np.ndarray]
    spin: dict[str, np.ndarray]
    radius: dict[str, float]

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The body's forward, left and up unit axes in the world, (F, 3) each."""
        m = self.body[:, :3, :3]
        return tuple(m[:, :, j] / np.linalg.norm(m[:, :, j], axis=1, keepdims=True) for j in range(3))

    def pitch(self) -> np.ndarray:
        """The body's nose-up pitch (rad) against the horizontal."""
        forward = self.axes()[0]
        return np.arctan2(forward[:, 2], np.hypot(forward[:, 0], forward[:, 1]))

    def roll(self) -> np.ndarray:
        """The body's left-side-up roll (rad): the rise of its left axis."""
        return np.arcsin(np.clip(self.axes()[1][:, 2], -1.0, 1.0))


def read_baked(scene, car) -> BakedRide:
    """The car's baked motion over the scene's frame range (``frame_set`` + ``matrix_world``), in metres."""
    metres = float(scene.unit_settings.scale_length)
    parts = {role: getattr(car.vehicle_motion, role) for role in WHEELS}
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    body, wheels, basis = [], {r: [] for r in parts}, {r: [] for r in parts}
    for f in frames:
        scene.frame_set(int(f))
        body.append(np.array(car.matrix_world))
        for role, ob in parts.items():
            wheels[role].append(np.array(ob.matrix_world))
            basis[role].append(np.array(ob.matrix_basis))
    scene.frame_set(scene.frame_start)

    def metric(m):
        m = np.array(m)
        m[:, :3, 3] *= metres
        return m

    spin, radius = {}, {}
    for role, ob in parts.items():
        b = np.array(basis[role])
        angle = np.unwrap(np.arctan2(b[:, 0, 2], b[:, 0, 0]))   # R_y(ψ): the spin about the wheel's Y axle
        spin[role] = angle - angle[0]
        co = np.array([v.co for v in ob.data.vertices]) * np.array(ob.matrix_world.to_scale())
        radius[role] = float(np.max(np.hypot(co[:, 0], co[:, 2]))) * metres
    fps = scene.render.fps / scene.render.fps_base
    return BakedRide(frames=frames, time=(frames - frames[0]) / fps, body=metric(body),
                     wheels={r: metric(w) for r, w in wheels.items()}, spin=spin, radius=radius)


def wheel_contacts(probe: GroundProbe, wheel: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Where a wheel's disc (world matrices (F, 4, 4) m, axle its Y axis) comes closest to the ground: its rim
    point towards the ground (the ground's normal projected on the disc, iterated to the normal there), (F, 3),
    and that point's height above the ground (m; negative: inside it), (F,)."""
    contacts, gaps = [], []
    for m in wheel:
        hub, axle = m[:3, 3], m[:3, 1] / np.linalg.norm(m[:3, 1])
        _, n = probe.at(hub[0], hub[1])
        for _ in range(4):
            down = n - (n @ axle) * axle
            point = hub - radius * down / np.linalg.norm(down)
            height, n = probe.at(point[0], point[1])
        contacts.append(point)
        gaps.append(point[2] - height)
    return np.array(contacts), np.array(gaps)


def path_length(points: np.ndarray) -> float:
    """Length (m) of the polyline through ``points`` (F, 3)."""
    return float(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)))


def terrain_under(probe: GroundProbe, ride: BakedRide) -> tuple[np.ndarray, np.ndarray]:
    """The ground's nose-up slope along the car's heading over its wheelbase (rear axle point to front axle
    point) and its left-side-up bank across the track at mid-wheelbase, (F,) rad each."""
    forward, left, _ = ride.axes()
    heading = forward[:, :2] / np.linalg.norm(forward[:, :2], axis=1, keepdims=True)
    side = np.stack([-heading[:, 1], heading[:, 0]], axis=1)
    rear = ride.body[:, :2, 3]
    front = rear + WHEELBASE * heading
    mid = rear + 0.5 * WHEELBASE * heading
    h = probe.heights(np.stack([rear, front, mid + TRACK * side, mid - TRACK * side], axis=1))
    return np.arctan2(h[:, 1] - h[:, 0], WHEELBASE), np.arctan2(h[:, 2] - h[:, 3], 2.0 * TRACK)


def solve(scene, car) -> str:
    """Solve and bake the car (``vehicle_motion.solve_trajectory`` on it, active); the report. RuntimeError
    when the solve fails."""
    bpy.context.view_layer.objects.active = car
    car.select_set(True)
    result = bpy.ops.vehicle_motion.solve_trajectory()
    report = scene.vehicle_motion.last_report
    if result != {"FINISHED"}:
        raise RuntimeError(f"the solve failed: {report or 'see the messages above'}")
    return report


def add_sun(scene) -> None:
    """A sun, for looking at the scene."""
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    scene.collection.objects.link(sun)
    sun.rotation_euler = (0.6, 0.2, 0.4)


def run_sample(picture: str, build: Callable[[int], dict], draw: Callable, argv: list[str], description: str) -> int:
    """``python samples/build_<picture>_scene.py [out.blend] [--fps N] [--png PATH]``: build the scene with the
    extension registered, solve and bake its car, save the .blend when one is named, and draw the picture
    (default ``docs/images/<picture>.png``) with ``draw(scene, car, png, report)``, which returns its figures.
    Exit status 0, or 1 with one line when the solve fails."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("output", nargs="?", help=".blend file to write (none: not saved)")
    parser.add_argument("--fps", type=int, default=24)
    parser.add_argument("--png", default=str(ROOT / "docs" / "images" / f"{picture}.png"))
    args = parser.parse_args(argv)
    with addon_registered():
        names = build(args.fps)
        scene = bpy.context.scene
        car = bpy.data.objects[names["car"]]
        try:
            report = solve(scene, car)
        except RuntimeError as exc:
            print(f"{picture}: {exc}", file=sys.stderr)
            return 1
        print(report)
        if args.output:
            out = pathlib.Path(args.output).resolve()
            out.parent.mkdir(parents=True, exist_ok=True)
            bpy.context.preferences.filepaths.save_version = 0   # no .blend1 backup next to it
            bpy.ops.wm.save_as_mainfile(filepath=str(out))
            print(f"{picture}: wrote {out}")
        png = pathlib.Path(args.png).resolve()
        png.parent.mkdir(parents=True, exist_ok=True)
        figures = draw(scene, car, png, report)
        print(f"{picture}: wrote {png}; {figures}")
    return 0


__all__ = ["WHEELS", "build_car", "key_car", "ground_collection", "displaced_grid", "GroundProbe", "BakedRide",
           "read_baked", "wheel_contacts", "path_length", "terrain_under", "solve", "add_sun", "run_sample"]
