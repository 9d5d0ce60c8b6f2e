"""Build the boat crane sample scene: a RIB with a slewing crane and a hook load, floating and
pushed slowly ahead by its thrusters; Simulate Parts (Articulated) moves boat, crane and hook
together, the boat heeling to port and then to starboard as the boom slews round (over 10°
each way with these values).

    python samples/build_boat_crane_scene.py out/boat_crane.blend [--fps 24] [--simulate]
    blender -b --python samples/build_boat_crane_scene.py -- out/boat_crane.blend

What it makes (Blender units = metres):

* ``Boat``: a hull mesh with its origin at the centre of mass, preset RIB Boat (the core's
  default 5 m × 2 m × 0.8 m hull floats it), at rest and level at ``FLOAT_Z``, the height where
  the hull displaces boat + crane + load (core ``Boat.float_height``); the control channels
  ``thruster_1`` and ``thruster_2`` as custom properties (``THRUST`` newtons each);
* ``Crane`` (a boom box, origin at its slewing bearing ``BEARING`` on the deck) with ``Crane
  Tip`` (an empty at the boom's end, ``BOOM`` in the crane's axes), and ``Hook`` (origin at the
  tip) with the ``Load`` (a box, origin at its lifting eye ``DROP`` below the hook);
* the parts of the boat (``vehicle_motion_parts``): the crane on a hinge about its Z (slewing,
  initial rate ``SLEW_RATE``) with the boom's mass at the tip, the hook on a hinge about its X
  (the load swings across the boom) with the load's mass; mode Articulated, CF4, gravity on;
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
from build_car_tunnel_scene import PACKAGE, _box, _camera, _empty, _mesh_object
import scene_kit

DURATION = 10.0
BEARING = (0.6, 0.0, 0.5)          # slewing bearing on the deck, from the centre of mass
BOOM = (2.0, 0.0, 1.0)             # boom tip in the crane's axes
DROP = 1.2                         # m from the hook to the load's eye
BOOM_MASS, LOAD_MASS = 80.0, 60.0  # kg
BOOM_INERTIA, LOAD_INERTIA = (25.0, 25.0, 25.0), (1.0, 1.0, 1.0)   # kg·m² about the ends
SLEW_RATE = 0.4                    # rad/s at the start
THRUST = 300.0                     # N per thruster


def float_height(total_mass: float) -> float:
    """Height of the centre of mass at which the core's default hull displaces ``total_mass``."""
    import importlib
    boat = importlib.import_module(f"{PACKAGE}.core.vehicles.boat")   # the extension's core (registered)
    return boat.Boat(mass=total_mass).float_height()


def build(fps: int = 24, *, steps_per_frame: int = 2) -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = scene_kit.new_scene("Boat Crane", fps, DURATION)
    root = scene.collection

    boat = _mesh_object("Boat", _box((-1.75, -1.0, -0.3), (3.25, 1.0, 0.5)), root)
    boat.vehicle_motion.preset = "RIB_BOAT"
    z = float_height(boat.vehicle_motion.mass + BOOM_MASS + LOAD_MASS)
    boat.location = (0.0, 0.0, z)
    boat["thruster_1"] = THRUST
    boat["thruster_2"] = THRUST
    crane = _mesh_object("Crane", _box((-0.1, -0.1, 0.0), (BOOM[0], 0.1, BOOM[2])), root,
                         location=BEARING, parent=boat)
    tip = _empty("Crane Tip", root, BOOM, "SPHERE", 0.15, parent=crane)
    hook = _empty("Hook", root, (0.0, 0.0, 0.0), "ARROWS", 0.3, parent=tip)
    load = _mesh_object("Load", _box((-0.3, -0.3, -0.5), (0.3, 0.3, 0.0)), root,
                        location=(0.0, 0.0, -DROP), parent=hook)

    settings = boat.vehicle_motion_parts
    settings.mode, settings.method, settings.gravity = "ARTICULATED", "CF4", True
    for obj, end, axis, mass, inertia, rate in ((crane, tip, "Z", BOOM_MASS, BOOM_INERTIA, SLEW_RATE),
                                                (hook, load, "X", LOAD_MASS, LOAD_INERTIA, 0.0)):
        part = settings.parts.add()
        part.object, part.end, part.joint, part.axis = obj, end, "HINGE", axis
        part.mass, part.inertia, part.rate = mass, inertia, rate

    water = _mesh_object("Water", _box((-20.0, -20.0, -0.01), (40.0, 20.0, 0.0)), root)
    water.hide_select = True
    _camera("Camera", root, scene, (6.0, -16.0, 6.0), (math.radians(75.0), 0.0, math.radians(15.0)))

    scene_kit.vehicle_settings(scene, boat, steps_per_frame=steps_per_frame)
    return {"vehicle": boat.name, "parts": [crane.name, hook.name], "load": load.name, "tip": tip.name,
            "frame_end": frame_end, "fps": fps, "float_z": z}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the boat crane sample scene", 24, simulate_help="also simulate and bake boat, crane and load",
                          summary=lambda n: f"{n['vehicle']} with {', '.join(n['parts'])} and {n['load']}")


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
