"""What the vehicle sample builders (helicopter, boat, snakeboard, and the parts scenes) share: a fresh scene, the
Scene › Vehicle Motion solve settings, and the command line that builds and saves a .blend.
The mesh and empty helpers are those of ``build_car_tunnel_scene``."""
from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Callable

import bpy
import numpy as np

from build_car_tunnel_scene import addon_registered


def world_vertices(objects) -> np.ndarray:
    """World-space vertices (N, 3) of the objects' evaluated geometry (modifiers, parents, scale)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    out = []
    for ob in objects:
        ev = ob.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
        m = np.array(ev.matrix_world)
        out.append(co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])
    return np.concatenate(out) if out else np.zeros((0, 3))


def new_scene(name: str, fps: int, duration: float):
    """Replace the current file's contents with one empty scene of ``duration`` seconds at ``fps``
    (frames 1 … 1 + duration·fps, metres); (scene, last frame)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.name = name
    scene.render.fps, scene.render.fps_base = int(fps), 1.0
    frame_end = 1 + int(round(duration * fps))
    scene.frame_start, scene.frame_end = 1, frame_end
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 1.0
    return scene, frame_end


def vehicle_settings(scene, vehicle, *, steps_per_frame: int) -> None:
    """The whole scene range at ``steps_per_frame``; ``vehicle`` selected and active at the first frame."""
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end = scene.frame_start, scene.frame_end
    vm.steps_per_frame = steps_per_frame
    scene.frame_set(scene.frame_start)
    bpy.context.view_layer.objects.active = vehicle
    vehicle.select_set(True)


def solve_settings(scene, vehicle, *, steps_per_frame: int, backend: str, max_iter: int,
                   time_limit_s: float) -> None:
    """Solve the whole scene range with these settings (:func:`vehicle_settings`)."""
    vm = scene.vehicle_motion
    vm.solver_backend = backend
    vm.max_iter = max_iter
    vm.time_limit_s = time_limit_s
    vehicle_settings(scene, vehicle, steps_per_frame=steps_per_frame)


def key_at_rest_pose(obj, frame: int, location, speed: float = 0.0) -> None:
    """Key ``obj`` at ``frame``: ``location``, no rotation (in its rotation mode, heading +X) and
    ``vehicle_motion.speed``."""
    obj.location = location
    if obj.rotation_mode == "QUATERNION":
        obj.rotation_quaternion, path = (1.0, 0.0, 0.0, 0.0), "rotation_quaternion"
    else:
        obj.rotation_euler, path = (0.0, 0.0, 0.0), "rotation_euler"
    obj.vehicle_motion.speed = speed
    for data_path in ("location", path, "vehicle_motion.speed"):
        obj.keyframe_insert(data_path, frame=frame)


def main(build: Callable[..., dict], argv: list[str], description: str, fps: int, *,
         summary: Callable[[dict], str] | None = None, simulate_help: str | None = None) -> int:
    """``python samples/build_X_scene.py out.blend [--fps N] [--simulate]``: build with the extension
    registered (and, with ``simulate_help``, offer ``--simulate``: Simulate Parts and bake), save.
    ``summary(names)`` says what was built (default: the vehicle and its obstacle count)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("output", help=".blend file to write")
    parser.add_argument("--fps", type=int, default=fps)
    if simulate_help:
        parser.add_argument("--simulate", action="store_true", help=simulate_help)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.output).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with addon_registered():
        names = build(args.fps)
        if getattr(args, "simulate", False):
            print(bpy.ops.vehicle_motion.simulate_secondary(), bpy.context.scene.vehicle_motion.last_report)
        bpy.ops.wm.save_as_mainfile(filepath=str(out))
    what = summary(names) if summary else f"{names['vehicle']} with {len(names['obstacles'])} obstacles"
    print(f"built {out}: {what}, frames 1–{names['frame_end']}")
    return 0


def script_args() -> list[str]:
    """The script's arguments under ``blender -b --python X -- args`` or ``python X args``."""
    return sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
