"""Build the car-tunnel sample scene: a hatchback that must weave past a boulder and two
posts, pass a slalom gate, drive through a roofed tunnel in a long wall and reach its goal.

    python samples/build_car_tunnel_scene.py out/car_tunnel_setup.blend [--fps 24]
    blender -b --python samples/build_car_tunnel_scene.py -- out/car_tunnel_setup.blend

What it makes (Blender units = metres):

* ``Car``: body mesh with its origin at the rear axle on the ground (+X forward), four
  wheels (radius 0.30 m) and two steering knuckles as children, preset Hatchback, keyed at
  frame 1 (origin, heading 0, speed 5 m/s) and at the goal frame (60, 8), heading 0, 5 m/s);
* an ``Obstacles`` collection: two walls and a roof (boxes, the walls scaled cubes) forming
  a 7 m wide tunnel, a boulder (a sphere mesh with an off-centre origin, rotated and
  scaled), two posts (capsule meshes, one parented to a scaled, rotated rig), a crate
  (a box rotated 30°);
* pass-through empties ``Gate Slalom`` (between the posts) and ``Gate Tunnel``, each keyed
  at its frame, and a ``Speed Limit`` empty (8 m/s over the whole shot);
* 12 s of motion: frames 1 … 1 + 12·fps.

Importable: ``build(fps=24)`` returns the names; ``addon_registered()`` is a context
manager that imports and registers the extension from this checkout when it is not
already enabled (and unregisters it on exit).
"""
from __future__ import annotations

import contextlib
import importlib.util
import math
import pathlib
import sys

import bpy  # before bmesh: the bpy module provides it
import bmesh  # noqa: I001
import mathutils

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = "vehicle_motion"

DURATION = 12.0
START = (0.0, 0.0)
GOAL = (60.0, 8.0)
SPEED = 5.0
GATES = {"Gate Slalom": ((27.0, 3.0, 0.0), 5.25, 1.5), "Gate Tunnel": ((42.0, 8.0, 0.0), 8.25, 1.5)}
SPEED_LIMIT = 8.0
WHEEL_RADIUS, WHEEL_WIDTH, TRACK, WHEELBASE = 0.30, 0.22, 0.80, 2.55


@contextlib.contextmanager
def addon_registered():
    """The extension registered for the duration (imported from this checkout if needed)."""
    if "vehicle_motion" in bpy.types.Object.bl_rna.properties:
        yield sys.modules.get(PACKAGE)
        return
    module = sys.modules.get(PACKAGE)
    if module is None:
        spec = importlib.util.spec_from_file_location(PACKAGE, ROOT / "__init__.py",
                                                      submodule_search_locations=[str(ROOT)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    module.register()
    try:
        yield module
    finally:
        module.unregister()  # bpy 4.5 hangs at exit with an operator class still registered


def package_name() -> str:
    """Module name of the registered Vehicle Motion package (installed extension or checkout)."""
    return bpy.types.VEHICLE_MOTION_OT_solve_trajectory.__module__.rsplit(".operators", 1)[0]


def _mesh_object(name: str, build, collection, *, location=(0.0, 0.0, 0.0), parent=None):
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    try:
        build(bm)
        bm.to_mesh(mesh)
    finally:
        bm.free()
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    obj.parent = parent
    obj.location = location
    return obj


def _box(lo, hi):
    def build(bm):
        geom = bmesh.ops.create_cube(bm, size=1.0)
        for v in geom["verts"]:
            v.co.x = lo[0] if v.co.x < 0 else hi[0]
            v.co.y = lo[1] if v.co.y < 0 else hi[1]
            v.co.z = lo[2] if v.co.z < 0 else hi[2]
    return build


def _boxes(*pairs):
    def build(bm):
        for lo, hi in pairs:
            _box(lo, hi)(bm)
    return build


def _cylinder(radius: float, depth: float):
    """Add › Mesh › Cylinder: around its origin, along its local Z."""
    def build(bm):
        bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=radius, radius2=radius, depth=depth)
    return build


def _disc(radius: float, axis: str = "Z"):
    """A flat disc (a rotor's swept disc) normal to its local ``axis`` (Z or Y)."""
    def build(bm):
        bmesh.ops.create_circle(bm, cap_ends=True, radius=radius, segments=32)
        if axis == "Y":
            for v in bm.verts:
                v.co.y, v.co.z = v.co.z, v.co.y
    return build


def _cube(bm):
    bmesh.ops.create_cube(bm, size=1.0)


def _uv_sphere(radius, offset=(0.0, 0.0, 0.0)):
    def build(bm):
        bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=radius)
        for v in bm.verts:
            v.co.x += offset[0]
            v.co.y += offset[1]
            v.co.z += offset[2]
    return build


def _capsule(radius, half_length):
    """A vertical capsule: hemispheres at z = ±half_length joined by a cylinder."""
    def build(bm):
        bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius)
        for v in bm.verts:
            if v.co.z > 1e-9:
                v.co.z += half_length
            elif v.co.z < -1e-9:
                v.co.z -= half_length
    return build


def _wheel(bm):
    """A wheel around its centre, axle along local Y, with a tread block (to see it roll) inside its radius:
    the solve measures the radius from the wheel's vertices (their largest distance from the axle)."""
    geom = bmesh.ops.create_cone(bm, cap_ends=True, segments=24, radius1=WHEEL_RADIUS, radius2=WHEEL_RADIUS,
                                 depth=WHEEL_WIDTH)
    bmesh.ops.rotate(bm, verts=geom["verts"], cent=(0, 0, 0),
                     matrix=mathutils.Matrix.Rotation(math.pi / 2, 3, "X"))
    top = math.sqrt(WHEEL_RADIUS ** 2 - 0.05 ** 2)  # the block's outer corners on the tyre's circle
    _box((-0.05, -0.5 * WHEEL_WIDTH - 0.01, WHEEL_RADIUS - 0.06), (0.05, 0.5 * WHEEL_WIDTH + 0.01, top))(bm)


def _empty(name, collection, location, display="PLAIN_AXES", size=1.0, parent=None):
    obj = bpy.data.objects.new(name, None)
    obj.empty_display_type = display
    obj.empty_display_size = size
    collection.objects.link(obj)
    obj.parent = parent
    obj.location = location
    return obj


def _camera(name: str, collection, scene, location, rotation=(0.0, 0.0, 0.0), ortho_scale: float | None = None):
    """The scene's camera: orthographic at ``ortho_scale`` when given (looking down −Z unrotated)."""
    data = bpy.data.cameras.new(name)
    if ortho_scale is not None:
        data.type, data.ortho_scale = "ORTHO", ortho_scale
    cam = bpy.data.objects.new(name, data)
    collection.objects.link(cam)
    cam.location, cam.rotation_euler = location, rotation
    scene.camera = cam
    return cam


def build(fps: int = 24, *, steps_per_frame: int = 1, time_limit_s: float = 300.0, max_iter: int = 1000,
          backend: str = "SCIPY") -> dict:
    """Replace the current file's contents with the sample scene; the names of its parts."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.name = "Car Tunnel"
    scene.render.fps, scene.render.fps_base = int(fps), 1.0
    frame_end = 1 + int(round(DURATION * fps))
    scene.frame_start, scene.frame_end = 1, frame_end
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 1.0
    root = scene.collection

    # ---- the car
    vehicles = bpy.data.collections.new("Vehicle")
    root.children.link(vehicles)
    car = _mesh_object("Car", _boxes(((-0.80, -0.85, 0.25), (3.40, 0.85, 1.00)),
                                     ((0.20, -0.75, 1.00), (2.10, 0.75, 1.45))), vehicles)
    car.rotation_mode = "XYZ"
    s = car.vehicle_motion
    s.preset = "HATCHBACK"
    parts = {}
    for side, y in (("left", TRACK), ("right", -TRACK)):
        parts[f"wheel_rear_{side}"] = _mesh_object("Wheel RL" if side == "left" else "Wheel RR", _wheel, vehicles,
                                                   location=(0.0, y, WHEEL_RADIUS), parent=car)
        knuckle = _empty(f"Knuckle F{side[0].upper()}", vehicles, (WHEELBASE, y, WHEEL_RADIUS), "ARROWS", 0.25,
                         parent=car)
        parts[f"knuckle_front_{side}"] = knuckle
        parts[f"wheel_front_{side}"] = _mesh_object(f"Wheel F{side[0].upper()}", _wheel, vehicles, parent=knuckle)
    for role, obj in parts.items():
        setattr(s, role, obj)
    for frame, (x, y) in ((1, START), (frame_end, GOAL)):
        car.location = (x, y, 0.0)
        car.rotation_euler = (0.0, 0.0, 0.0)
        s.speed = SPEED
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
        car.keyframe_insert("vehicle_motion.speed", frame=frame)

    # ---- obstacles
    obstacles = bpy.data.collections.new("Obstacles")
    root.children.link(obstacles)
    walls = {"Wall Left": ((42.0, 33.75, 1.5), (12.0, 44.5, 3.0)),
             "Wall Right": ((42.0, -17.75, 1.5), (12.0, 44.5, 3.0))}
    for name, (center, size) in walls.items():
        wall = _mesh_object(name, _cube, obstacles, location=center)
        wall.scale = size  # a unit cube scaled: the fit must use the object's scale
    _mesh_object("Tunnel Roof", _box((-6.0, -4.0, -0.3), (6.0, 4.0, 0.3)), obstacles, location=(42.0, 8.0, 3.3))
    boulder = _mesh_object("Boulder", _uv_sphere(1.0, offset=(0.4, -0.2, 0.0)), obstacles)
    boulder.scale = (2.5, 2.5, 2.5)
    boulder.rotation_euler = (0.3, 0.2, 1.1)
    # put the sphere's centre (off the origin by the mesh offset) at (14, −1.5, 0)
    boulder.location = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    centre = boulder.matrix_world @ mathutils.Vector((0.4, -0.2, 0.0))
    boulder.location = (14.0 - centre.x, -1.5 - centre.y, 0.0 - centre.z)
    _mesh_object("Post A", _capsule(0.8, 1.2), obstacles, location=(24.0, 6.0, 1.2))
    rig = _empty("Post Rig", root, (30.0, 0.0, 0.0), "CUBE", 0.5)  # only a parent, not an obstacle
    rig.scale = (2.0, 2.0, 2.0)
    rig.rotation_euler = (0.0, 0.0, 0.7)
    _mesh_object("Post B", _capsule(0.4, 0.6), obstacles, location=(0.0, 0.0, 0.6), parent=rig)
    crate = _mesh_object("Crate", _box((-1.0, -1.0, 0.0), (1.0, 1.0, 2.0)), obstacles, location=(54.0, 2.5, 0.0))
    crate.rotation_euler = (0.0, 0.0, math.radians(30.0))

    # ---- constraints
    constraints = bpy.data.collections.new("Constraints")
    root.children.link(constraints)
    gates = {}
    for name, (location, time, radius) in GATES.items():
        gate = _empty(name, constraints, location, "SPHERE", radius)
        gate.vehicle_motion.constraint_kind = "PASS_THROUGH"
        gate.keyframe_insert("location", frame=1 + time * fps)
        gates[name] = 1 + time * fps
    limit = _empty("Speed Limit", constraints, (0.0, -4.0, 0.0), "CIRCLE", 2.0)
    limit.vehicle_motion.constraint_kind = "SPEED_LIMIT"
    limit.vehicle_motion.speed_limit = SPEED_LIMIT

    # ---- ground, camera, light (for looking at it; not obstacles)
    ground = _mesh_object("Ground", _box((-10.0, -30.0, -0.05), (75.0, 40.0, 0.0)), root)
    ground.hide_select = True
    _camera("Top Camera", root, scene, (32.0, 6.0, 80.0), ortho_scale=90.0)
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    root.objects.link(sun)
    sun.rotation_euler = (0.6, 0.2, 0.4)

    # ---- solve settings
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end = 1, frame_end
    vm.steps_per_frame = steps_per_frame
    vm.solver_backend = backend
    vm.max_iter = max_iter
    vm.time_limit_s = time_limit_s
    scene.frame_set(1)
    bpy.context.view_layer.objects.active = car
    car.select_set(True)
    return {"car": car.name, "parts": {k: v.name for k, v in parts.items()}, "frame_end": frame_end,
            "gates": gates, "obstacles": sorted(o.name for o in obstacles.objects), "fps": fps}


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Build the car tunnel sample scene")
    parser.add_argument("output", help=".blend file to write")
    parser.add_argument("--fps", type=int, default=24)
    args = parser.parse_args(argv)
    out = pathlib.Path(args.output).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with addon_registered():
        names = build(args.fps)
        bpy.ops.wm.save_as_mainfile(filepath=str(out))
    print(f"built {out}: {names['car']} with {len(names['obstacles'])} obstacles, frames 1–{names['frame_end']}")
    return 0


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    sys.exit(main(args))
