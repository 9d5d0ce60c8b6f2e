"""Scenes built in code for the Blender tests: a small keyed car, constraint empties, mesh objects
in collections (grounds, obstacles), and a tumbling helix trajectory to bake.

``add_object`` itself lives in samples/small_shots.py (the sample scenes use it too).
"""
from __future__ import annotations

import bpy
import numpy as np
from small_shots import add_object


def small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (25, (10.0, 0.0, 0.0), 0.0)), fps=8, wheels=True):
    """A 4 × 1.8 m box car with wheel children, keyed at (frame, location, heading)."""
    scene.render.fps, scene.render.fps_base = fps, 1.0
    car = add_object("Car")
    car.scale = (2.0, 0.9, 0.5)
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    if wheels:
        for role in ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right"):
            setattr(s, role, add_object(role, parent=car, kind="EMPTY"))
    for frame, location, heading in keys:
        car.location = location
        car.rotation_euler = (0.0, 0.0, heading)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = keys[0][0], keys[-1][0]  # the shot's range, as an animator sets it
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end = keys[0][0], keys[-1][0]
    vm.steps_per_frame = 1
    return car


def constraint_empty(scene, name, kind, location, size=1.0, frame=None, rotation=(0.0, 0.0, 0.0)):
    """An empty of constraint ``kind`` (a waypoint, a land target, …) at ``location``, keyed at ``frame``."""
    ob = add_object(name, kind="EMPTY")
    ob.empty_display_size = size
    ob.location = location
    ob.rotation_euler = rotation
    ob.vehicle_motion.constraint_kind = kind
    if frame is not None:
        ob.keyframe_insert("location", frame=frame)
    return ob


def collection(name: str, parent=None):
    """A new collection linked under ``parent`` (the scene's master collection by default)."""
    c = bpy.data.collections.new(name)
    (parent or bpy.context.scene.collection).children.link(c)
    return c


def mesh_object(name: str, vertices, faces, coll):
    """A mesh object from vertex and face arrays, linked into ``coll``."""
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(map(float, v)) for v in vertices], [], [tuple(int(i) for i in f) for f in faces])
    me.update()
    ob = bpy.data.objects.new(name, me)
    coll.objects.link(ob)
    return ob


def grid(n: int, size: float, height=None):
    """(n + 1)² vertices over a size × size square centred at the origin, n² quads; z = height(x, y)."""
    s = np.linspace(-0.5 * size, 0.5 * size, n + 1)
    X, Y = np.meshgrid(s, s, indexing="ij")
    Z = np.zeros_like(X) if height is None else height(X, Y)
    i = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    return np.stack([X.ravel(), Y.ravel(), Z.ravel()], 1), np.stack([i, i + n + 1, i + n + 2, i + 1], 1)


def ground_grade(grade: float, size: float = 200.0):
    """A Ground collection holding a size × size plane through the origin that rises ``grade`` along +x."""
    v, f = grid(4, size, lambda x, y: grade * x)
    return mesh_object("Road", v, f, collection("Ground"))


def axis_angle_quaternion(axis, angle) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotations by ``angle`` (any shape) about ``axis``."""
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    angle = np.asarray(angle, dtype=float)
    return np.concatenate([np.cos(angle / 2)[..., None], np.sin(angle / 2)[..., None] * axis], axis=-1)


def helix_trajectory(duration: float = 4.0, steps: int = 192, vehicle: str = "rigid_body", shape=None):
    """A helix with a tumbling orientation (two rotations about different axes, composed)."""
    from vehicle_motion.core.lie import quaternion
    from vehicle_motion.core.trajectory import Trajectory
    t = np.linspace(0.0, duration, steps + 1)
    position = np.stack([3.0 * np.cos(1.3 * t), 3.0 * np.sin(1.3 * t), 0.8 * t - 1.0], axis=-1)
    q = quaternion.multiply(axis_angle_quaternion([0.2, 0.3, 1.0], 1.7 * t),
                            axis_angle_quaternion([1.0, -0.4, 0.1], 2.9 * t))
    if len(q) > 1:
        q[1::2] *= -1.0  # sign flips between nodes: the baker must make them continuous
    n = len(t)
    return Trajectory(time=t, position=position, orientation=q, angular_velocity=np.zeros((n, 3)),
                      linear_velocity=np.zeros((n, 3)), shape=dict(shape or {}), vehicle=vehicle)
