"""Build the helicopter sling sample scene: a light helicopter hovers, flies forward and stops
with a crate on a two-link cable under it; Simulate Parts swings the load (secondary motion).

    python samples/build_helicopter_sling_scene.py out/helicopter_sling.blend [--fps 24] [--simulate]
    blender -b --python samples/build_helicopter_sling_scene.py -- out/helicopter_sling.blend

What it makes (Blender units = metres):

* ``Helicopter``: a cabin mesh with its origin at the centre of mass, preset Light Helicopter,
  keyed every frame (location and rotation): hovering at ``HOVER`` until ``T_GO``, then
  accelerating forward along +X and braking to a hover ``DISTANCE`` further on, nose down
  while it speeds up and nose up while it brakes (smooth, as a pilot flies it);
* ``Cable Upper`` (a thin box along its −Z, origin at the hook ``HOOK`` under the cabin) and
  ``Cable Lower`` (origin at the upper link's end), each ``LINK`` long, and the ``Load`` (a
  crate, origin at its lifting eye at the lower link's end): the chain Helicopter → Cable
  Upper → Cable Lower → Load by parenting;
* the parts of the helicopter (``vehicle_motion_parts``): the two cable links on swing joints
  (two axes across the link), the upper with the cable's own mass at its end, the lower with
  the load's ``LOAD_MASS``, both with a little damping; mode Secondary Motion, gravity on;
* frames 1 … 1 + DURATION·fps, two steps a frame.

Importable: ``build(fps=24)`` returns the names (see ``build_car_tunnel_scene`` for
``addon_registered``).
"""
from __future__ import annotations

import math
import pathlib
import sys

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_car_tunnel_scene import _box, _camera, _empty, _mesh_object
import scene_kit

DURATION = 12.0
HOVER = (0.0, 0.0, 25.0)
T_GO, T_STOP = 1.0, 9.0             # s: accelerate and brake between these
DISTANCE = 20.0                     # m flown along +X
MAX_PITCH = math.radians(8.0)       # nose down while accelerating
HOOK = (0.0, 0.0, -1.0)             # under the centre of mass
LINK = 4.0                          # m per cable link
CABLE_MASS, LOAD_MASS = 15.0, 400.0  # kg
CABLE_DAMPING, LOAD_DAMPING = 20.0, 100.0  # N·m·s/rad at the upper and lower joints


def flight(t):
    """Position along X (smoothstep: zero speed and acceleration at both ends) and pitch
    (proportional to the acceleration, nose down forward) at times t (s)."""
    import numpy as np
    t = np.asarray(t, dtype=float)
    u = np.clip((t - T_GO) / (T_STOP - T_GO), 0.0, 1.0)
    x = DISTANCE * (10 * u**3 - 15 * u**4 + 6 * u**5)
    acc = DISTANCE * (60 * u - 180 * u**2 + 120 * u**3) / (T_STOP - T_GO) ** 2
    peak = DISTANCE * 10.0 / math.sqrt(3.0) / (T_STOP - T_GO) ** 2   # max of the acceleration
    return x, MAX_PITCH * acc / peak


def build(fps: int = 24, *, steps_per_frame: int = 2) -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = scene_kit.new_scene("Helicopter Sling", fps, DURATION)
    root = scene.collection

    heli = _mesh_object("Helicopter", _box((-1.8, -0.9, -0.8), (2.2, 0.9, 1.0)), root)
    heli.rotation_mode = "XYZ"
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    _mesh_object("Tail Boom", _box((-6.0, -0.15, 0.2), (-1.8, 0.15, 0.6)), root, parent=heli)
    upper = _mesh_object("Cable Upper", _box((-0.03, -0.03, -LINK), (0.03, 0.03, 0.0)), root,
                         location=HOOK, parent=heli)
    lower = _mesh_object("Cable Lower", _box((-0.03, -0.03, -LINK), (0.03, 0.03, 0.0)), root,
                         location=(0.0, 0.0, -LINK), parent=upper)
    load = _mesh_object("Load", _box((-0.8, -0.6, -1.2), (0.8, 0.6, 0.0)), root,
                        location=(0.0, 0.0, -LINK), parent=lower)

    x, pitch = flight([(f - 1) / fps for f in range(1, frame_end + 1)])
    for f in range(1, frame_end + 1):
        heli.location = (HOVER[0] + float(x[f - 1]), HOVER[1], HOVER[2])
        heli.rotation_euler = (0.0, float(pitch[f - 1]), 0.0)
        heli.keyframe_insert("location", frame=f)
        heli.keyframe_insert("rotation_euler", frame=f)

    settings = heli.vehicle_motion_parts
    settings.mode, settings.gravity = "SECONDARY", True
    for obj, end, mass, damping in ((upper, lower, CABLE_MASS, CABLE_DAMPING), (lower, load, LOAD_MASS, LOAD_DAMPING)):
        part = settings.parts.add()
        part.object, part.end, part.joint = obj, end, "SWING"
        part.mass, part.damping = mass, damping

    ground = _mesh_object("Ground", _box((-20.0, -20.0, -0.05), (60.0, 20.0, 0.0)), root)
    ground.hide_select = True
    _camera("Side Camera", root, scene, (15.0, -45.0, 18.0), (math.radians(85.0), 0.0, 0.0))
    _empty("Start Mark", root, (HOVER[0], HOVER[1], 0.0), "CIRCLE", 2.0)

    scene_kit.vehicle_settings(scene, heli, steps_per_frame=steps_per_frame)
    return {"vehicle": heli.name, "links": [upper.name, lower.name], "load": load.name, "frame_end": frame_end,
            "fps": fps, "hook": HOOK, "link": LINK}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the helicopter sling sample scene", 24,
                          simulate_help="also simulate and bake the cable and load",
                          summary=lambda n: f"{n['vehicle']} with {', '.join(n['links'])} and {n['load']}")


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
