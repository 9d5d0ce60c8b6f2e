"""Build the car-and-trailer sample scene: a hatchback tows a trailer along a straight, through a
left quarter turn and along a straight again; Simulate Parts makes the trailer follow
(secondary motion on a damped hitch, its wheels gripping sideways).

    python samples/build_car_trailer_scene.py out/car_trailer.blend [--fps 24] [--simulate]
    blender -b --python samples/build_car_trailer_scene.py -- out/car_trailer.blend

What it makes (Blender units = metres):

* ``Car``: a body mesh with its origin at the rear axle on the ground (+X forward), preset
  Hatchback, keyed every frame (location and heading) along the path of :func:`path`:
  ``STRAIGHT`` metres along +X, a left quarter circle of radius ``RADIUS`` about ``CENTRE``,
  then along +Y, at a steady ``SPEED``;
* ``Trailer``: a box on a drawbar, child of the car, its origin at the hitch ball ``HITCH``
  (car frame); ``Trailer Axle``: an empty child of the trailer at its axle, ``AXLE`` behind
  the hitch, and two wheels on it (scenery);
* the car's parts (``vehicle_motion_parts``): the trailer on a hinge about its local Z (the
  vertical) with ``MASS`` at the axle, yaw inertia ``YAW_INERTIA`` about it, hitch damping
  ``DAMPING`` and wheel grip ``GRIP``; mode Secondary Motion;
* frames 1 … 1 + DURATION·fps, two steps a frame.

Importable: ``build(fps=24)`` returns the names; :func:`path` the car's pose at times t.
"""
from __future__ import annotations

import math
import pathlib
import sys

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_car_tunnel_scene import _box, _boxes, _camera, _empty, _mesh_object
import scene_kit

DURATION = 9.0
SPEED = 6.0                        # m/s
STRAIGHT = 12.0                    # m before the turn
RADIUS = 12.0                      # m, the car's rear axle on the turn
CENTRE = (STRAIGHT, RADIUS)        # of the turn
HITCH = (-1.0, 0.0, 0.45)          # in the car's frame
AXLE = 3.2                         # m behind the hitch
MASS, YAW_INERTIA = 600.0, 450.0   # kg, kg·m² about the axle
DAMPING, GRIP = 100.0, 30000.0     # N·m·s/rad at the hitch, N·s/m sideways at the axle


def path(t):
    """(x, y, heading) of the car's rear axle at times t (s): straight, quarter turn, straight."""
    import numpy as np
    s = SPEED * np.asarray(t, dtype=float)
    arc = 0.5 * math.pi * RADIUS
    phi = np.clip((s - STRAIGHT) / RADIUS, 0.0, 0.5 * math.pi)
    x = np.where(s < STRAIGHT, s, CENTRE[0] + RADIUS * np.sin(phi))
    y = np.where(s < STRAIGHT, 0.0, CENTRE[1] - RADIUS * np.cos(phi))
    after = s > STRAIGHT + arc
    y = np.where(after, CENTRE[1] + (s - STRAIGHT - arc), y)
    return x, y, phi


def build(fps: int = 24, *, steps_per_frame: int = 2) -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = scene_kit.new_scene("Car Trailer", fps, DURATION)
    root = scene.collection

    car = _mesh_object("Car", _boxes(((-0.80, -0.85, 0.25), (3.40, 0.85, 1.00)),
                                     ((0.20, -0.75, 1.00), (2.10, 0.75, 1.45))), root)
    car.rotation_mode = "XYZ"
    car.vehicle_motion.preset = "HATCHBACK"
    trailer = _mesh_object("Trailer", _boxes(((-AXLE - 1.3, -0.9, 0.05), (-1.2, 0.9, 0.9)),
                                             ((-1.2, -0.05, -0.05), (0.0, 0.05, 0.05))), root,
                           location=HITCH, parent=car)
    axle = _empty("Trailer Axle", root, (-AXLE, 0.0, -0.15), "ARROWS", 0.5, parent=trailer)
    for side, y in (("Left", 1.0), ("Right", -1.0)):
        _mesh_object(f"Trailer Wheel {side}", _box((-0.3, -0.1, -0.3), (0.3, 0.1, 0.3)), root,
                     location=(0.0, y, 0.0), parent=axle)

    x, y, heading = path([(f - 1) / fps for f in range(1, frame_end + 1)])
    for f in range(1, frame_end + 1):
        car.location = (float(x[f - 1]), float(y[f - 1]), 0.0)
        car.rotation_euler = (0.0, 0.0, float(heading[f - 1]))
        car.keyframe_insert("location", frame=f)
        car.keyframe_insert("rotation_euler", frame=f)

    settings = car.vehicle_motion_parts
    settings.mode, settings.gravity = "SECONDARY", True
    part = settings.parts.add()
    part.object, part.end, part.joint, part.axis = trailer, axle, "HINGE", "Z"
    part.mass, part.inertia, part.damping, part.grip = MASS, (0.0, 0.0, YAW_INERTIA), DAMPING, GRIP

    ground = _mesh_object("Ground", _box((-10.0, -10.0, -0.05), (40.0, 45.0, 0.0)), root)
    ground.hide_select = True
    _camera("Top Camera", root, scene, (15.0, 15.0, 60.0), ortho_scale=50.0)

    scene_kit.vehicle_settings(scene, car, steps_per_frame=steps_per_frame)
    return {"vehicle": car.name, "trailer": trailer.name, "axle": axle.name, "frame_end": frame_end, "fps": fps}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the car-and-trailer sample scene", 24, simulate_help="also simulate and bake the trailer",
                          summary=lambda n: f"{n['vehicle']} towing {n['trailer']}")


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
