"""Small keyed shots that solve in seconds: a box car with its wheel empties, a light helicopter, each saved
as a .blend. The Blender tests build their scenes from them, and the farm tests and
``benchmarks/farm_scaling.py`` bake the same shots (``build_car``, ``build_helicopter``).
"""

from __future__ import annotations

import pathlib

import bpy  # before bmesh: the bpy module provides it
import bmesh  # noqa: I001


def add_object(name: str, parent=None, kind: str = "MESH"):
    """A new object linked to the scene (a cube mesh, or an empty)."""
    data = None
    if kind == "MESH":
        mesh = bpy.data.meshes.new(name)
        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=1.0)
        bm.to_mesh(mesh)
        bm.free()
        data = mesh
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    if parent is not None:
        obj.parent = parent
    return obj


def keyed_car(scene, keys, *, name="Car", wheels=True, unit=1.0):
    """A 4 × 1.8 × 1 m box car (in metres × ``unit`` scene units), its four wheel empties unless ``wheels`` is
    False, keyed at (frame, (x, y) m, heading)."""
    car = add_object(name)
    car.scale = (2.0 * unit, 0.9 * unit, 0.5 * unit)
    car.rotation_mode = "XYZ"
    car.vehicle_motion.preset = "HATCHBACK"
    if wheels:
        for role in ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right"):
            setattr(car.vehicle_motion, role, add_object(role, parent=car, kind="EMPTY"))
    for frame, (x, y), heading in keys:
        car.location = (x * unit, y * unit, 0.0)
        car.rotation_euler = (0.0, 0.0, heading)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    return car


def heli_shot(scene):
    """A light helicopter keyed to fly 6 m along X at 5 m height in two seconds."""
    scene.render.fps = 8
    heli = add_object("Heli", kind="EMPTY")
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    heli.rotation_mode = "QUATERNION"
    for frame, x in ((1, 0.0), (17, 6.0)):
        heli.location = (x, 0.0, 5.0)
        heli.keyframe_insert("location", frame=frame)
        heli.keyframe_insert("rotation_quaternion", frame=frame)
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end, vm.steps_per_frame = 1, 17, 1
    return heli


def build_car(path: pathlib.Path, max_iter: int = 500) -> None:
    """A new file: the car driving 10 m ahead and 2 m aside in frames 1–25 at 8 fps, saved to ``path``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 8, 1.0
    keyed_car(scene, ((1, (0.0, 0.0), 0.0), (25, (10.0, 2.0), 0.0)))
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end, vm.solver_backend, vm.max_iter = 1, 25, "SCIPY", max_iter
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def build_helicopter(path: pathlib.Path) -> None:
    """A new file: the helicopter shot (:func:`heli_shot`) on the scipy backend, saved to ``path``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps_base = 1.0
    heli_shot(scene)  # 6 m along X at 5 m height, frames 1–17 at 8 fps
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
