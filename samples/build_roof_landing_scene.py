"""A light helicopter landing on a roof (a contact, not a collision): a cabin and tail-boom mesh with
its origin at the skids, a 4 m main rotor disc on a 2.4 m mast and a tail rotor disc as children, keyed
hovering at rest at frame 1 and (``land_key``) standing at rest on a 10 m box building's roof at the
last frame; 8 fps, one step a frame.

    python samples/build_roof_landing_scene.py out.blend [--fps N]
    blender -b --python samples/build_roof_landing_scene.py -- out.blend

``helicopter`` and ``box_obstacle`` are also the builders of the contact tests and of
``benchmarks/ordinary_shots.py``.
"""
from __future__ import annotations

import pathlib
import sys

import bpy
import numpy as np

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scene_kit
from build_car_tunnel_scene import _box, _boxes, _disc, _mesh_object

ROOF = 10.0                      # m, the building's height
PAD = (16.0, 0.0, ROOF)          # where the skids rest on the roof
HOVER = (0.0, 0.0, 14.0)         # the start, hovering at rest


def mesh_obstacle(scene, name: str, build, location=(0.0, 0.0, 0.0)):
    """A mesh obstacle built by ``build(bm)`` at ``location``, in the Obstacles collection (made if missing)."""
    coll = bpy.data.collections.get("Obstacles")
    if coll is None:
        coll = bpy.data.collections.new("Obstacles")
        scene.collection.children.link(coll)
    return _mesh_object(name, build, coll, location=tuple(location))


def box_obstacle(scene, name: str, lo, hi):
    """An axis-aligned box obstacle from ``lo`` to ``hi`` (world, scene units), in the Obstacles collection."""
    centre = 0.5 * (np.array(lo, dtype=float) + np.array(hi, dtype=float))
    half = 0.5 * (np.array(hi, dtype=float) - np.array(lo, dtype=float))
    return mesh_obstacle(scene, name, _box(tuple(-half), tuple(half)), centre)


def helicopter(scene, *, frame_end: int = 41, land_key: bool = True):
    """(helicopter, building): the helicopter keyed at HOVER at frame 1 and, with ``land_key``, at PAD at
    ``frame_end``, at rest (its speed keyed 0); the building under the pad."""
    heli = _mesh_object("Heli", _boxes(((-1.5, -0.8, 0.0), (1.5, 0.8, 1.8)), ((-5.0, -0.15, 0.9), (-1.5, 0.15, 1.3))),
                        scene.collection)
    heli.rotation_mode = "QUATERNION"
    s = heli.vehicle_motion
    s.preset = "LIGHT_HELICOPTER"
    rotor = _mesh_object("Main Rotor", _disc(4.0), scene.collection, location=(0.0, 0.0, 2.4), parent=heli)
    tail = _mesh_object("Tail Rotor", _disc(0.6, "Y"), scene.collection, location=(-5.0, 0.3, 1.2), parent=heli)
    s.main_rotor, s.tail_rotor = rotor, tail
    s.rotor_axis, s.tail_rotor_axis = "Z", "Y"
    for frame, location in [(1, HOVER)] + ([(frame_end, PAD)] if land_key else []):
        scene_kit.key_at_rest_pose(heli, frame, location)
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.max_iter, vm.time_limit_s = 1, 500, 120.0
    building = box_obstacle(scene, "Building", (11.0, -5.0, 0.0), (21.0, 5.0, ROOF))
    return heli, building


def build(fps: int = 8, *, frame_end: int = 41) -> dict:
    scene, _ = scene_kit.new_scene("Roof Landing", fps, (frame_end - 1) / fps)
    heli, building = helicopter(scene, frame_end=frame_end)
    bpy.context.view_layer.objects.active = heli
    return {"vehicle": heli.name, "obstacles": [building.name], "frame_end": frame_end}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the roof landing sample scene", 8)


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
