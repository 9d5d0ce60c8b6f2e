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

The solving and baking are the package's batch entry (``addon/batch.py``: ``bake_vehicles``);
this sample keeps its all-or-nothing contract (save in place, exit 1). For many shots, a
report per vehicle and a new file beside the input, run the entry itself:
``python addon/batch.py shot.blend`` (exit 0 / 3 / 2).
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys

import bpy

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_car_tunnel_scene import addon_registered, package_name


def bake_all(scene) -> tuple[list[str], list[str]]:
    """Solve and bake every vehicle of ``scene``: (report lines, failure lines)."""
    batch = importlib.import_module(package_name() + ".addon.batch")
    entries, notes = batch.bake_vehicles(scene)
    lines = [e["message"] for e in entries if e["status"] == "baked"] + notes
    failures = [e["message"] for e in entries if e["status"] != "baked"]
    if not entries and not notes:
        failures.append("no vehicle objects (set an object's Vehicle type)")
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
