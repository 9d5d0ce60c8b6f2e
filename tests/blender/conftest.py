"""Blender tests: a real bpy session with the extension imported as the package
``vehicle_motion`` from the repository root and registered once for the session.

bpy 4.5 hangs at interpreter exit while a Python Operator class is still registered, so
the add-on is unregistered when the session ends (fixture finalizer, with an atexit
fallback for sessions that die before finalizers run).
"""
from __future__ import annotations

import atexit
import importlib.util
import pathlib
import sys
import types

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = "vehicle_motion"


def import_package():
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    return module


def _unregister_quietly(module) -> None:
    try:
        module.unregister()
    except Exception:  # already unregistered
        pass


@pytest.fixture(scope="session", autouse=True)
def addon():
    module = import_package()
    module.register()
    atexit.register(_unregister_quietly, module)
    yield module
    module.unregister()


@pytest.fixture
def empty_scene(addon):
    """An empty file: one scene at 24 fps, frames 1–250, nothing else."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_set(1)
    return scene


def hold_at_iteration(job, k: int):
    """Make the solve worker of ``job`` (not yet started) wait at its solver iteration ``k`` until the
    test cancels it (at most 20 s): the cancel then lands in a solve still running, however fast it
    is. Returns the event set when iteration ``k`` is reached."""
    import threading
    import time

    reached = threading.Event()
    report = job._iteration

    def held(i: int, violation: float) -> None:
        report(i, violation)
        if i >= k:
            reached.set()
            t0 = time.perf_counter()
            while not job._cancel.is_set() and time.perf_counter() - t0 < 20.0:
                time.sleep(0.005)

    job._iteration = held
    return reached


def add_object(name: str, parent=None, kind: str = "MESH"):
    """A new object linked to the scene (a cube mesh, or an empty)."""
    data = None
    if kind == "MESH":
        import bmesh
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


def solve_active(scene, obj) -> str:
    """Solve Trajectory on ``obj`` with the scipy backend; the report (asserting the operator finished)."""
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = obj
    result = bpy.ops.vehicle_motion.solve_trajectory()
    report = scene.vehicle_motion.last_report
    assert result == {"FINISHED"}, report
    return report


def stored(obj):
    """The trajectory stored with ``obj``."""
    from vehicle_motion.addon import storage
    return storage.load(obj)


def make_active(obj) -> None:
    view_layer = bpy.context.view_layer
    for other in view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj


def axis_angle_quaternion(axis, angle) -> np.ndarray:
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


def pose_error(obj, position, quat) -> tuple[float, float]:
    """(translation error, rotation-matrix error) of obj.matrix_world against a pose."""
    from vehicle_motion.core.lie import quaternion
    m = np.array(obj.matrix_world)
    r = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)
    return (float(np.max(np.abs(m[:3, 3] - position))),
            float(np.max(np.abs(r - quaternion.to_matrix(quat)))))


@pytest.fixture(scope="session")
def vm(addon):
    """The helpers above and the imported package, for the tests."""
    return types.SimpleNamespace(
        package=addon, add_object=add_object, make_active=make_active,
        helix_trajectory=helix_trajectory, pose_error=pose_error,
        axis_angle_quaternion=axis_angle_quaternion)
