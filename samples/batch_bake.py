"""Headless batch: open a .blend, solve and bake every vehicle object, save, exit.

    blender -b shot.blend --python-exit-code 1 --python samples/batch_bake.py [-- --out baked.blend]
    python samples/batch_bake.py shot.blend [--out baked.blend]        # through the bpy module

Every object whose Vehicle type is set is solved (Scene › Vehicle Motion settings, its
keys, the constraint empties and the obstacles) and baked, in name order. When all of them
succeed the file is saved (over itself, or to --out) and the exit status is 0; otherwise
nothing is saved, one line per failure goes to stderr naming the file and the vehicle, and
the exit status is 1. A vehicle with Solve unavailable for its type (a rigid body) is
skipped with a note. Uses the installed Vehicle Motion extension when it is enabled, else
the one in this checkout (registered for the run and unregistered before exit).
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys

import bpy

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_car_tunnel_scene import addon_registered, package_name  # noqa: E402


def bake_all(scene) -> tuple[list[str], list[str]]:
    """Solve and bake every vehicle of ``scene``: (report lines, failure lines)."""
    package = package_name()
    scene_reader = importlib.import_module(package + ".addon.scene_reader")
    solving = importlib.import_module(package + ".addon.solving")
    errors = importlib.import_module(package + ".core.errors")
    vehicles = sorted((ob for ob in scene.objects if ob.vehicle_motion.vehicle_type != "NONE"),
                      key=lambda ob: ob.name)
    lines, failures = [], []
    if not vehicles:
        failures.append("no vehicle objects (set an object's Vehicle type)")
    for obj in vehicles:
        if obj.vehicle_motion.vehicle_type not in scene_reader.SOLVABLE:
            lines.append(f"'{obj.name}': skipped (Solve does not plan a "
                         f"{obj.vehicle_motion.vehicle_type.lower().replace('_', ' ')})")
            continue
        try:
            problem = scene_reader.read_problem(scene, obj)
            outcome = solving.solve(problem)
            level, message = solving.apply_outcome(obj, outcome, scene)
        except errors.VehicleMotionError as exc:
            failures.append(str(exc) if f"'{obj.name}'" in str(exc) else f"'{obj.name}': {exc}")
            continue
        if level == "ERROR":
            failures.append(message)
        else:
            lines.append(message)
    return lines, failures


def run(blend: str | None, out: str | None) -> int:
    with addon_registered():
        if blend:
            bpy.ops.wm.open_mainfile(filepath=str(pathlib.Path(blend).resolve()))
        name = bpy.data.filepath or "(unsaved file)"
        lines, failures = bake_all(bpy.context.scene)
        for line in lines:
            print(line)
        if failures:
            for failure in failures:
                print(f"batch_bake: {pathlib.Path(name).name}: {failure}", file=sys.stderr)
            return 1
        target = str(pathlib.Path(out).resolve()) if out else bpy.data.filepath
        if not target:
            print("batch_bake: the file has never been saved: give --out", file=sys.stderr)
            return 1
        bpy.ops.wm.save_as_mainfile(filepath=target)
        print(f"batch_bake: saved {target}")
    return 0


def main() -> int:
    in_blender = not sys.argv[0].endswith("batch_bake.py")  # blender -b file --python batch_bake.py
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else ([] if in_blender else sys.argv[1:])
    parser = argparse.ArgumentParser(prog="batch_bake", description="Solve and bake every vehicle of a .blend")
    if not in_blender:
        parser.add_argument("blend", help=".blend file to open")
    parser.add_argument("--out", help="save here instead of over the opened file")
    args = parser.parse_args(argv)
    return run(getattr(args, "blend", None), args.out)


if __name__ == "__main__":
    sys.exit(main())
