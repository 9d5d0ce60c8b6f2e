"""Build the snakeboard sample scene: a rider starts at rest and gains speed by twisting the
torso and steering the trucks — nothing prescribes the gait — past a traffic cone.

    python samples/build_snakeboard_scene.py out/snakeboard_setup.blend [--fps 8]
    blender -b --python samples/build_snakeboard_scene.py -- out/snakeboard_setup.blend

What it makes (Blender units = metres):

* ``Snakeboard``: a deck mesh with its origin at its centre on the ground (+X forward),
  preset Snakeboard, keyed at frame 1 (at rest, heading 0) and at the last frame
  (``GOAL`` ahead, heading 0, ``GOAL_SPEED`` keyed on ``vehicle_motion.speed``); its parts,
  children of the deck: ``Truck Front`` and ``Truck Rear`` (foot plates with two wheels
  each, turning about their local Z by ±the wheel angle) and the ``Rider`` (a torso
  turning about its local Z by the rotor angle);
* an ``Obstacles`` collection with a ``Cone`` (a capsule mesh) beside the path;
* ``DURATION`` seconds: frames 1 … 1 + DURATION·fps, one step per frame.

Importable: ``build(fps=8)`` returns the names.
"""
from __future__ import annotations

import pathlib
import sys

import bpy

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scene_kit
from build_car_tunnel_scene import _box, _boxes, _capsule, _mesh_object
from scene_kit import key_at_rest_pose, new_scene, solve_settings

DURATION = 5.0
GOAL = (2.0, 0.0)
GOAL_SPEED = 0.8
HALF_WHEELBASE = 0.3            # the preset's (the trucks sit at ±half_wheelbase)
CONE = ((1.0, 1.5, 0.3), 0.15, 0.15)   # centre, radius, half length (vertical)


def _truck(bm) -> None:
    """A foot plate with a wheel at each end (axle along local Y)."""
    _boxes(((-0.08, -0.12, 0.06), (0.08, 0.12, 0.09)),
           ((-0.03, -0.14, 0.0), (0.03, -0.10, 0.06)), ((-0.03, 0.10, 0.0), (0.03, 0.14, 0.06)))(bm)


def build(fps: int = 8, *, steps_per_frame: int = 1, time_limit_s: float = 120.0, max_iter: int = 500,
          backend: str = "SCIPY", cone: bool = True) -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = new_scene("Snakeboard Gait", fps, DURATION)
    root = scene.collection

    # ---- the board, its trucks and the rider
    vehicles = bpy.data.collections.new("Vehicle")
    root.children.link(vehicles)
    board = _mesh_object("Snakeboard", _box((-0.45, -0.08, 0.09), (0.45, 0.08, 0.11)), vehicles)
    board.rotation_mode = "XYZ"
    s = board.vehicle_motion
    s.preset = "SNAKEBOARD"
    front = _mesh_object("Truck Front", _truck, vehicles, location=(HALF_WHEELBASE, 0.0, 0.0), parent=board)
    rear = _mesh_object("Truck Rear", _truck, vehicles, location=(-HALF_WHEELBASE, 0.0, 0.0), parent=board)
    rider = _mesh_object("Rider", _boxes(((-0.12, -0.22, 0.9), (0.12, 0.22, 1.5)),      # torso and shoulders
                                         ((-0.1, -0.1, 0.11), (0.1, 0.1, 0.9))),        # legs
                         vehicles, parent=board)
    s.truck_front, s.truck_rear, s.rider = front, rear, rider
    s.steering_axis, s.rider_axis = "Z", "Z"
    for frame, (x, y), speed in ((1, (0.0, 0.0), 0.0), (frame_end, GOAL, GOAL_SPEED)):
        key_at_rest_pose(board, frame, (x, y, 0.0), speed)

    # ---- obstacles
    obstacles = bpy.data.collections.new("Obstacles")
    root.children.link(obstacles)
    if cone:
        centre, radius, half = CONE
        _mesh_object("Cone", _capsule(radius, half), obstacles, location=centre)
    _mesh_object("Ground", _box((-2.0, -3.0, -0.05), (5.0, 3.0, 0.0)), root).hide_select = True

    # ---- solve settings
    solve_settings(scene, board, steps_per_frame=steps_per_frame, backend=backend, max_iter=max_iter,
                   time_limit_s=time_limit_s)
    return {"vehicle": board.name, "parts": {"truck_front": front.name, "truck_rear": rear.name,
                                             "rider": rider.name},
            "frame_end": frame_end, "goal_speed": GOAL_SPEED,
            "obstacles": sorted(o.name for o in obstacles.objects), "fps": fps}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the snakeboard sample scene", 8)


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
