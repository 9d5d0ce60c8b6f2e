"""Build the boat sample scene: a RIB starts at rest and docks, at rest, at a berth 3 m ahead
alongside a pier, past a mooring buoy, under a speed limit.

    python samples/build_boat_scene.py out/boat_setup.blend [--fps 10]
    blender -b --python samples/build_boat_scene.py -- out/boat_setup.blend

Small on purpose (3 s, 30 steps at 10 fps): the boat's hull wrench is clipped against the
water at every step, and the scipy backend (the one inside Blender) solves this in seconds.
The step must stay at most 0.1 s (``core/dmoc/models/boat.py``: the hull's heave is stiff),
so keep fps × steps per frame ≥ 10.

What it makes (Blender units = metres; the water is the plane z = 0):

* ``Boat``: a closed 5 m × 2 m × 0.8 m box mesh — the hull it floats on (the add-on floats a
  boat on its own closed mesh) — with its origin at its centre, the centre of mass (+X forward),
  preset RIB Boat (800 kg: a draft of 0.08 m), floating level at rest (its centre of mass
  ``float_height`` above the water), keyed at frame 1 and at the last frame at the berth;
* an ``Obstacles`` collection: the ``Pier`` (a box) north of the berth and a ``Buoy``
  (a sphere mesh);
* a ``Berth`` empty (Land / Dock Here at the last frame: at rest, heading along its X axis)
  and a ``Speed Limit`` empty (2 m/s over the whole shot); a water plane (scenery).

Importable: ``build(fps=10)`` returns the names.
"""
from __future__ import annotations

import importlib
import pathlib
import sys

import bpy

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scene_kit
from build_car_tunnel_scene import _box, _empty, _mesh_object, _uv_sphere, package_name
from scene_kit import key_at_rest_pose, new_scene, solve_settings

DURATION = 3.0
START = (0.0, 0.0)
BERTH = (3.0, 0.0)         # straight ahead: two stern thrusters cannot push it sideways in 3 s
SPEED_LIMIT = 2.0
LENGTH, BEAM, HEIGHT = 5.0, 2.0, 0.8      # the boat's box hull (the size of core's default hull)
PIER = ((3.0, 2.2, 0.3), (3.0, 0.6, 0.5))  # centre, half extents: 0.6 m off the hull at the berth
BUOY = ((1.5, -2.2, 0.0), 0.5)            # centre, radius


def float_height() -> float:
    """Height of the centre of mass of the preset boat floating level at rest on its box hull."""
    boat = importlib.import_module(package_name() + ".core.vehicles.boat")
    hull = importlib.import_module(package_name() + ".core.vehicles.hull")
    return float(boat.Boat(hull=hull.box_hull((LENGTH, BEAM, HEIGHT))).float_height())


def _hull(bm) -> None:
    """The boat's hull: a closed box centred on the origin (its volume centroid, the centre of mass)."""
    _box((-0.5 * LENGTH, -0.5 * BEAM, -0.5 * HEIGHT), (0.5 * LENGTH, 0.5 * BEAM, 0.5 * HEIGHT))(bm)


def build(fps: int = 10, *, steps_per_frame: int = 1, time_limit_s: float = 60.0, max_iter: int = 500,
          backend: str = "SCIPY") -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    if fps * steps_per_frame < 10:
        raise ValueError("the boat needs a step of at most 0.1 s: fps × steps per frame ≥ 10")
    scene, frame_end = new_scene("Boat Docking", fps, DURATION)
    root = scene.collection
    z = float_height()

    # ---- the boat
    vehicles = bpy.data.collections.new("Vehicle")
    root.children.link(vehicles)
    boat = _mesh_object("Boat", _hull, vehicles)
    boat.rotation_mode = "XYZ"
    boat.vehicle_motion.preset = "RIB_BOAT"
    for frame, (x, y) in ((1, START), (frame_end, BERTH)):
        key_at_rest_pose(boat, frame, (x, y, z))

    # ---- obstacles
    obstacles = bpy.data.collections.new("Obstacles")
    root.children.link(obstacles)
    (cx, cy, cz), (hx, hy, hz) = PIER
    _mesh_object("Pier", _box((-hx, -hy, -hz), (hx, hy, hz)), obstacles, location=(cx, cy, cz))
    centre, radius = BUOY
    _mesh_object("Buoy", _uv_sphere(radius), obstacles, location=centre)

    # ---- constraints
    constraints = bpy.data.collections.new("Constraints")
    root.children.link(constraints)
    berth = _empty("Berth", constraints, (BERTH[0], BERTH[1], z), "SINGLE_ARROW", 1.0)
    berth.vehicle_motion.constraint_kind = "LAND"
    berth.keyframe_insert("location", frame=frame_end)
    limit = _empty("Speed Limit", constraints, (0.0, -4.0, 0.0), "CIRCLE", 1.0)
    limit.vehicle_motion.constraint_kind = "SPEED_LIMIT"
    limit.vehicle_motion.speed_limit = SPEED_LIMIT
    _mesh_object("Water", _box((-10.0, -10.0, -0.01), (15.0, 10.0, 0.0)), root).hide_select = True

    # ---- solve settings (the boat's wrench is piecewise smooth: 1e-5 is its attainable tolerance)
    solve_settings(scene, boat, steps_per_frame=steps_per_frame, backend=backend, max_iter=max_iter,
                   time_limit_s=time_limit_s)
    scene.vehicle_motion.tol = 1e-5
    return {"vehicle": boat.name, "parts": {}, "frame_end": frame_end, "berth": berth.name,
            "float_height": z, "speed_limit": SPEED_LIMIT,
            "obstacles": sorted(o.name for o in obstacles.objects), "fps": fps}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the boat docking sample scene", 10)


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
