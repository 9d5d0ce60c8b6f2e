"""Build the helicopter sample scene: a light helicopter lifts off a hover, flies between two
walls and lands on a mark, level and at rest.

    python samples/build_helicopter_scene.py out/helicopter_setup.blend [--fps 8]
    blender -b --python samples/build_helicopter_scene.py -- out/helicopter_setup.blend

What it makes (Blender units = metres):

* ``Helicopter``: a cabin and tail boom mesh (+X forward) with its origin near its centre of
  mass — the volume centroid of the closed mesh, 0.021 m ahead of and 0.064 m above the origin,
  which the solve plans and the bake puts back at the origin — preset Light Helicopter, rotation
  mode Quaternion, keyed at frame 1 (hovering at rest at ``START``) and at the last frame over the
  mark; its parts are a ``Main Rotor`` (two crossed blades, spinning about its local Z, tilting
  with the cyclic) and a ``Tail Rotor`` (spinning about its local Y), children of the body, whose
  origins are the hubs: 1.136 m above and 4.521 m behind the centre of mass (Rotor Hubs: From the
  Parts);
* an ``Obstacles`` collection: ``Wall North`` and ``Wall South`` (scaled cubes) leaving a
  gap the helicopter must fly through, and a ``Mast`` (a capsule mesh) beside the path;
* a ``Landing Mark`` empty (Land / Dock Here, keyed at the last frame, its X axis the
  landing heading) and a helipad mesh under it (scenery, not an obstacle);
* ``DURATION`` seconds of motion: frames 1 … 1 + DURATION·fps, one step per frame.

Importable: ``build(fps=8)`` returns the names (``build_car_tunnel_scene.addon_registered``
registers the extension from this checkout for a script).
"""
from __future__ import annotations

import pathlib
import sys

import bpy

# `blender -b --python` does not put the script's folder on sys.path (python does): the sibling samples.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scene_kit
from build_car_tunnel_scene import _box, _boxes, _capsule, _cube, _empty, _mesh_object
from scene_kit import key_at_rest_pose, new_scene, solve_settings

DURATION = 6.0
START = (0.0, 0.0, 6.0)          # hovering, at rest
MARK = (12.0, 0.0, 1.0)          # the origin on the mark (skids 0.8 m below, the pad under them)
ROTOR_RADIUS, TAIL_ROTOR_RADIUS = 2.5, 0.5
MAIN_ROTOR_AT, TAIL_ROTOR_AT = (0.0, 0.0, 1.2), (-4.5, 0.3, 0.4)
WALLS = {"Wall North": ((6.0, 10.5, 4.0), (2.0, 8.0, 8.0)), "Wall South": ((6.0, -10.5, 4.0), (2.0, 8.0, 8.0))}
MAST = ((9.0, -5.5, 4.0), 0.3, 3.5)   # centre, radius, half length (vertical)


def _blades(radius: float, width: float, axis: str):
    """Two crossed blades through the origin in the plane normal to ``axis`` (Z: main, Y: tail)."""
    r, w = radius, 0.5 * width
    if axis == "Z":
        return _boxes(((-r, -w, -0.03), (r, w, 0.03)), ((-w, -r, -0.03), (w, r, 0.03)))
    return _boxes(((-r, -0.03, -w), (r, 0.03, w)), ((-w, -0.03, -r), (w, 0.03, r)))


def build(fps: int = 8, *, steps_per_frame: int = 1, time_limit_s: float = 120.0, max_iter: int = 500,
          backend: str = "SCIPY") -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    scene, frame_end = new_scene("Helicopter Landing", fps, DURATION)
    root = scene.collection

    # ---- the helicopter
    vehicles = bpy.data.collections.new("Vehicle")
    root.children.link(vehicles)
    heli = _mesh_object("Helicopter", _boxes(((-1.2, -0.7, -0.8), (1.6, 0.7, 0.9)),      # cabin and skids
                                             ((-4.6, -0.15, 0.1), (-1.2, 0.15, 0.5))),   # tail boom
                        vehicles)
    heli.rotation_mode = "QUATERNION"
    s = heli.vehicle_motion
    s.preset = "LIGHT_HELICOPTER"
    rotor = _mesh_object("Main Rotor", _blades(ROTOR_RADIUS, 0.25, "Z"), vehicles, location=MAIN_ROTOR_AT,
                         parent=heli)
    tail = _mesh_object("Tail Rotor", _blades(TAIL_ROTOR_RADIUS, 0.1, "Y"), vehicles, location=TAIL_ROTOR_AT,
                        parent=heli)
    s.main_rotor, s.tail_rotor = rotor, tail
    s.rotor_axis, s.tail_rotor_axis = "Z", "Y"
    for frame, location in ((1, START), (frame_end, MARK)):
        key_at_rest_pose(heli, frame, location)

    # ---- obstacles
    obstacles = bpy.data.collections.new("Obstacles")
    root.children.link(obstacles)
    for name, (center, size) in WALLS.items():
        wall = _mesh_object(name, _cube, obstacles, location=center)
        wall.scale = size
    centre, radius, half = MAST
    _mesh_object("Mast", _capsule(radius, half), obstacles, location=centre)

    # ---- the landing mark (and a pad under it: scenery)
    constraints = bpy.data.collections.new("Constraints")
    root.children.link(constraints)
    mark = _empty("Landing Mark", constraints, MARK, "SINGLE_ARROW", 1.0)
    mark.vehicle_motion.constraint_kind = "LAND"
    mark.keyframe_insert("location", frame=frame_end)
    _mesh_object("Helipad", _box((-3.0, -3.0, -0.05), (3.0, 3.0, 0.0)), root,
                 location=(MARK[0], MARK[1], MARK[2] - 0.8)).hide_select = True

    # ---- solve settings
    solve_settings(scene, heli, steps_per_frame=steps_per_frame, backend=backend, max_iter=max_iter,
                   time_limit_s=time_limit_s)
    return {"vehicle": heli.name, "parts": {"main_rotor": rotor.name, "tail_rotor": tail.name},
            "frame_end": frame_end, "mark": mark.name, "obstacles": sorted(o.name for o in obstacles.objects),
            "fps": fps}


def main(argv: list[str]) -> int:
    return scene_kit.main(build, argv, "Build the helicopter landing sample scene", 8)


if __name__ == "__main__":
    sys.exit(main(scene_kit.script_args()))
