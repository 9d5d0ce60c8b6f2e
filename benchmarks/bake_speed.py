"""Bake speed: 10,000 frames × 10 channels, against keyframe_insert measured in the same run.

    .venv/bin/python benchmarks/bake_speed.py [--frames 10000] [--baseline-frames 500]

The 10 channels: a car body's location (3) and quaternion (4) and a wheel's Euler rotation
(3, from the trajectory's wheel_angle). The baseline keys the same poses frame by frame with
``keyframe_insert`` on a subset of frames and is scaled to the full length. Target: ≤ 0.2 s.
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time

import bpy
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def import_package():
    spec = importlib.util.spec_from_file_location(
        "vehicle_motion", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["vehicle_motion"] = module
    spec.loader.exec_module(module)
    return module


def trajectory(frames: int, fps: float):
    from vehicle_motion.core.trajectory import Trajectory
    t = np.arange(frames) / fps
    position = np.stack([20 * np.cos(0.1 * t), 20 * np.sin(0.1 * t), 0.01 * t], axis=-1)
    half = 0.5 * (0.1 * t + 0.3 * np.sin(t))
    axis = np.array([0.1, 0.2, 1.0]) / np.linalg.norm([0.1, 0.2, 1.0])
    orientation = np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=-1)
    zeros = np.zeros((frames, 3))
    return Trajectory(time=t, position=position, orientation=orientation, angular_velocity=zeros,
                      linear_velocity=zeros, shape={"wheel_angle": 7.0 * t}, vehicle="car")


def car():
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    body = bpy.data.objects.new("Car", None)
    wheel = bpy.data.objects.new("Wheel", None)
    for ob in (body, wheel):
        scene.collection.objects.link(ob)
    wheel.parent = body
    body.rotation_mode, wheel.rotation_mode = "QUATERNION", "XYZ"
    body.vehicle_motion.vehicle_type = "CAR"
    body.vehicle_motion.wheel_rear_left = wheel
    return scene, body, wheel


def time_bake(traj, fps: float, repeats: int) -> float:
    from vehicle_motion.addon import baking
    best = float("inf")
    for _ in range(repeats):
        scene, body, _ = car()
        start = time.perf_counter()
        result = baking.bake(body, traj, frame_start=1, fps=fps, scene=scene)
        best = min(best, time.perf_counter() - start)
        assert result.fcurves == 10, result.fcurves
    return best


def time_keyframe_insert(traj, frames: int) -> float:
    """Key the same 10 channels frame by frame, the way a script without foreach_set would."""
    scene, body, wheel = car()
    position, orientation = traj.position, traj.orientation
    wheel_angle = traj.shape["wheel_angle"]
    start = time.perf_counter()
    for f in range(frames):
        body.location = position[f]
        body.rotation_quaternion = orientation[f]
        wheel.rotation_euler = (0.0, float(wheel_angle[f]), 0.0)
        body.keyframe_insert("location", frame=f + 1)
        body.keyframe_insert("rotation_quaternion", frame=f + 1)
        wheel.keyframe_insert("rotation_euler", frame=f + 1)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--baseline-frames", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    package = import_package()
    package.register()
    try:
        fps = 24.0
        traj = trajectory(args.frames, fps)
        bake_s = time_bake(traj, fps, args.repeats)
        subset = min(args.baseline_frames, args.frames)
        baseline_s = time_keyframe_insert(traj, subset) * args.frames / subset
        print(f"Blender {bpy.app.version_string}")
        print(f"bake: {args.frames} frames x 10 channels in {bake_s:.3f} s "
              f"(target <= 0.2 s: {'met' if bake_s <= 0.2 else 'NOT met'})")
        print(f"keyframe_insert baseline: {subset} frames measured, {baseline_s:.2f} s scaled to "
              f"{args.frames} frames")
        print(f"ratio: bake is {baseline_s / bake_s:.0f}x faster than keyframe_insert")
    finally:
        package.unregister()  # bpy 4.5 hangs at exit while an operator class is registered
    return 0


if __name__ == "__main__":
    sys.exit(main())
