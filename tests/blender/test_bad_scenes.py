"""Bad scenes: Solve Trajectory refuses with one line naming the object or frame (bpy.ops raises
RuntimeError with the operator's error report) and the scene is left as it was."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_car_tunnel_scene as sample  # noqa: E402
from operator_runs import refused  # noqa: E402
from scene_builders import constraint_empty, small_car  # noqa: E402
from small_shots import add_object, heli_shot  # noqa: E402


@pytest.fixture
def tunnel(addon):
    names = sample.build(8)
    return bpy.context.scene, bpy.data.objects[names["car"]]


@pytest.fixture
def car(empty_scene):
    return small_car(empty_scene)


def test_no_keyframes(car):
    car.animation_data_clear()
    refused(car, r"'Car' has no keyframes: key its location at the start and at the goal")


def test_single_keyframe(empty_scene):
    car = small_car(empty_scene, keys=((1, (0.0, 0.0, 0.0), 0.0),))
    empty_scene.vehicle_motion.frame_end = 25
    refused(car, r"'Car' has a single keyframe \(frame 1\): key its goal pose too")


def test_first_key_after_the_start_frame(car):
    vm = bpy.context.scene.vehicle_motion
    vm.use_frame_range, vm.frame_start = True, 0  # the add-on's own range starts before the first key
    refused(car, r"'Car' is first keyed at frame 1, after the start frame 0")


def test_vehicle_keyed_inside_an_obstacle(tunnel):
    scene, car = tunnel
    car.location = (14.0, -1.5, 0.0)  # the boulder's centre
    car.keyframe_insert("location", frame=43)
    refused(car, r"'Car' at frame 43 is inside obstacle 'Boulder' \(clearance -[0-9.]+ m, margin 0\.1 m\)")


def test_contradictory_constraints(tunnel):
    scene, car = tunnel
    constraint_empty(scene, "Far Stop", "STOP", (27.0, 20.0, 0.0), size=0.5, frame=43)
    refused(car, r"contradictory constraints at frame 43: stop 'Far Stop' \(frame 43\) and pass-through "
                 r"'Gate Slalom' \(frame 43\) are 17 m apart")
    bpy.data.objects.remove(bpy.data.objects["Far Stop"])
    bpy.data.objects["Speed Limit"].vehicle_motion.speed_limit = 2.0
    refused(car, r"contradictory constraints: '\w+' starts at 5 m/s but the speed limit is 2 m/s")
    bpy.data.objects["Speed Limit"].vehicle_motion.speed_limit = 8.0
    gate = bpy.data.objects["Gate Slalom"]
    gate.animation_data_clear()
    gate.keyframe_insert("location", frame=25)  # 27 m in 3 s
    refused(car, r"contradictory constraints: from key of 'Car' at frame 1 to pass-through 'Gate Slalom' "
                 r"\(frame 25\) needs at least 8\.56 m/s, over the speed limit of 8 m/s")


def test_zero_length_frame_range(car):
    vm = bpy.context.scene.vehicle_motion
    vm.use_frame_range = True
    vm.frame_end = vm.frame_start
    refused(car, r"the frame range is empty: Start 1, End 1 \(Vehicle Motion › Frame Range\)")


def test_keys_outside_the_scene_range(car):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 30, 60  # the car is keyed at 1 and 25 only
    refused(car, r"'Car': fewer than two keys inside the scene's frame range 30–60 \(keys at frames 1, 25\)")


def test_unsupported_rotation_mode(car):
    car.rotation_mode = "AXIS_ANGLE"
    refused(car, r"'Car' uses the Axis Angle rotation mode")


def test_wheel_not_parented(car):
    stray = bpy.data.objects.new("Stray Wheel", None)
    bpy.context.scene.collection.objects.link(stray)
    car.vehicle_motion.wheel_rear_left = stray
    refused(car, r"'Stray Wheel' \(Rear Left Wheel of 'Car'\) is not parented to 'Car'")


def test_rigid_body_is_simulated_not_solved(car):
    car.vehicle_motion.vehicle_type = "RIGID_BODY"
    refused(car, r"'Car' is a rigid body: Solve plans vehicles .*; use Simulate")


def test_not_a_vehicle_greys_out_solve(empty_scene, vm):
    cube = vm.add_object("Cube")
    vm.make_active(cube)
    assert not bpy.ops.vehicle_motion.solve_trajectory.poll()
    with pytest.raises(RuntimeError, match="'Cube' is not a vehicle: set its Vehicle type"):
        bpy.ops.vehicle_motion.solve_trajectory()
    with pytest.raises(RuntimeError, match="'Cube' is not a vehicle"):
        bpy.ops.vehicle_motion.simulate()


def test_solve_that_does_not_converge(tunnel):
    scene, car = tunnel
    scene.vehicle_motion.max_iter = 3
    refused(car, r"'Car' ran out of iterations \(Solve Settings › Max Iterations\) before it met every key.* "
                 r"\(did not converge: iteration limit; details in the console\); nothing stored or baked "
                 r"\(enable Bake Best Attempt to keep it\)")
    assert "did not converge" in scene.vehicle_motion.last_report
    # asked for: the best attempt is stored and baked, with a warning
    assert bpy.ops.vehicle_motion.solve_trajectory(bake_best_attempt=True) == {"FINISHED"}
    assert car.vehicle_motion.is_baked and car.vehicle_motion.has_trajectory
    from vehicle_motion.addon import storage
    assert not storage.load(car).stats["converged"]


# ----------------------------------------------------------------------------- one rule per kind of bad scene
# Obstacles (scene_obstacles.obstacles): an obstacle is its evaluated world geometry. Mirrored is
# fine, flat (a sheet, a bar) is a shape of zero thickness given a half thickness of 1 µm, a point is
# refused; objects without geometry are refused naming their type.

def reader():
    from vehicle_motion.addon import scene_reader
    return scene_reader


def into_obstacles(ob):
    """Move ob from wherever it was linked into the sample's Obstacles collection."""
    for coll in list(ob.users_collection):
        coll.objects.unlink(ob)
    bpy.data.collections["Obstacles"].objects.link(ob)
    return ob


def roadside_cube(name: str, scale, location=(6.0, -6.0, 1.0), rotation=(0.2, 0.1, 0.6)):
    """A 1 m cube beside the road, tilted and turned, at a scale an artist might end up with."""
    ob = into_obstacles(add_object(name))
    ob.location, ob.rotation_euler, ob.scale = location, rotation, scale
    return ob


def evaluated_world_vertices(ob) -> np.ndarray:
    """The obstacle's evaluated geometry in world space, read independently of the reader."""
    bpy.context.view_layer.update()
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    try:
        co = np.array([tuple(v.co) for v in mesh.vertices], dtype=float)
    finally:
        ev.to_mesh_clear()
    m = np.array(ev.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def fitted(scene, car, name: str, vertices: np.ndarray):
    """The shape read for obstacle ``name``: it holds every vertex, and core reads its table and
    gives finite distances, gradients and curvatures around it (no zero size divides anything)."""
    from vehicle_motion.core.dmoc.scenario import read_obstacles
    from vehicle_motion.core.scenario import Table
    problem = reader().read_problem(scene, car)
    shape = next(o for o in problem.obstacles if o.name == name)
    assert np.max(shape.distance(vertices)) <= 1e-9
    min_half = reader().MIN_SIZE
    if shape.kind == "box":
        r = shape.rotation
        assert r.T @ r == pytest.approx(np.eye(3), abs=1e-9) and np.linalg.det(r) == pytest.approx(1.0)
        assert np.min(shape.half_extents) >= min_half
    else:
        assert shape.radius >= min_half
    fm = problem.frame_map
    [core] = read_obstacles(Table({"obstacles": [shape.table(fm)]}))
    centre = fm.to_solve(shape.center)
    probes = centre + np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1], [2.0, 1.0, 0.5], [0.0, 0.0, 5.0]])
    d, g, h = core.distance_hessian(probes)
    assert np.all(np.isfinite(d)) and np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    return shape


ACCEPTED_SCALES = {
    "sheet (0, 1, 1)": (0.0, 1.0, 1.0),
    "bar (1, 0, 0)": (1.0, 0.0, 0.0),
    "mirrored (-1, 1, 1)": (-1.0, 1.0, 1.0),
    "mirrored twice (-2, -1, 1)": (-2.0, -1.0, 1.0),
    "paper thin (1, 1, 1e-30)": (1.0, 1.0, 1e-30),
}


@pytest.mark.parametrize("scale", list(ACCEPTED_SCALES.values()), ids=list(ACCEPTED_SCALES))
def test_flat_or_mirrored_obstacle_is_fitted(tunnel, scale):
    scene, car = tunnel
    barrier = roadside_cube("Barrier", scale)
    shape = fitted(scene, car, "Barrier", evaluated_world_vertices(barrier))
    expected = np.sort(np.maximum(0.5 * np.abs(scale), reader().MIN_SIZE))
    if shape.kind == "box":  # tight, along the object's own axes (mirrored or not)
        assert np.sort(shape.half_extents) == pytest.approx(expected, rel=1e-6, abs=1e-12)
        overlap = np.abs(shape.rotation.T @ np.array(barrier.rotation_euler.to_matrix()))
        assert overlap == pytest.approx(np.round(overlap), abs=1e-6)  # each box axis is one of the object's
    else:  # the bar: a capsule of radius 1 µm along it
        assert shape.kind == "capsule" and np.linalg.norm(shape.b - shape.a) == pytest.approx(1.0, rel=1e-6)


def test_a_plane_mesh_is_a_wall(tunnel):
    import bmesh
    scene, car = tunnel
    mesh = bpy.data.meshes.new("Billboard")
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=4, y_segments=2, size=3.0)
    bm.to_mesh(mesh)
    bm.free()
    board = bpy.data.objects.new("Billboard", mesh)
    bpy.data.collections["Obstacles"].objects.link(board)
    board.location, board.rotation_euler = (8.0, -8.0, 3.0), (math.radians(90.0), 0.0, math.radians(20.0))
    shape = fitted(scene, car, "Billboard", evaluated_world_vertices(board))
    assert shape.kind == "box" and np.sort(shape.half_extents) == pytest.approx([1e-6, 3.0, 3.0], abs=1e-6)
    assert np.min(shape.half_extents) == 1e-6


def test_solve_drives_past_a_fence_and_a_pole_of_zero_thickness(empty_scene):
    """Flat obstacles are solved without NaN: a fence (a cube scaled to zero depth) along the road
    and a pole (scaled to zero width and depth) the car has to steer around."""
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (25, (16.0, 0.0, 0.0), 0.0)))
    coll = bpy.data.collections.new("Obstacles")
    scene.collection.children.link(coll)
    for name, location, scale in (("Fence", (8.0, -2.5, 0.5), (12.0, 0.0, 1.0)),
                                  ("Pole", (8.0, 0.6, 1.0), (0.0, 0.0, 2.0))):
        ob = add_object(name)
        scene.collection.objects.unlink(ob)
        coll.objects.link(ob)
        ob.location, ob.scale = location, scale
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}, scene.vehicle_motion.last_report
    from vehicle_motion.addon import storage
    trajectory = storage.load(car)
    assert trajectory.stats["converged"] and np.all(np.isfinite(trajectory.position))
    problem = reader().read_problem(scene, car)
    spheres = problem.spheres
    for k in range(len(trajectory.time)):
        x, y, z = trajectory.position[k]
        c, s = math.cos(trajectory.heading[k]), math.sin(trajectory.heading[k])
        centres = np.array([[x + c * px - s * py, y + s * px + c * py, z + pz] for px, py, pz, _ in spheres])
        for shape in problem.obstacles:
            assert np.min(shape.distance(centres) - spheres[:, 3]) > 0.0
    assert np.min(trajectory.position[:, 1]) < -0.05  # it steered off the straight line, around the pole


REFUSED_SCALES = {
    "zero (0, 0, 0)": ((0.0, 0.0, 0.0), r"obstacle 'Barrier' has no size \(it spans 0 m; its scale is \(0, 0, 0\)\): "
                                        r"give it a size along at least one axis, or remove it from the Obstacles"),
    "dust (1e-30, 1e-30, 1e-30)": ((1e-30,) * 3, r"obstacle 'Barrier' has no size \(it spans 0 m; its scale is "
                                                 r"\(1e-30, 1e-30, 1e-30\)\)"),
    "absurd (1e300, 1e300, 1e300)": ((1e300,) * 3, r"obstacle 'Barrier' reaches [0-9.]+e\+38 m from the world origin, "
                                                   r"out of range \(Vehicle Motion works within 1000 km of the world "
                                                   r"origin; its scale is \(3\.40282e\+38, "),
    "not a number (nan, 1, 1)": ((math.nan, 1.0, 1.0), r"obstacle 'Barrier' has vertices that are not finite numbers "
                                                       r"\(its scale is \(nan, 1, 1\)\)"),
}


@pytest.mark.parametrize("scale, pattern", list(REFUSED_SCALES.values()), ids=list(REFUSED_SCALES))
def test_obstacle_without_size_or_out_of_range_is_refused(tunnel, scale, pattern):
    scene, car = tunnel
    roadside_cube("Barrier", scale)
    refused(car, pattern)


def test_obstacle_far_away_is_refused(tunnel):
    scene, car = tunnel
    roadside_cube("Barrier", (1.0, 1.0, 1.0), location=(2.0e6, 0.0, 0.0))
    refused(car, r"obstacle 'Barrier' reaches 2e\+06 m from the world origin, out of range")


def _text():
    ob = bpy.data.objects.new("Sign", bpy.data.curves.new("Sign", "FONT"))
    ob.data.body, ob.data.size, ob.data.extrude = "SLOW", 1.5, 0.1
    ob.rotation_euler = (math.radians(90.0), 0.0, 0.0)
    return ob


def _curve(name, bevel=0.0):
    data = bpy.data.curves.new(name, "CURVE")
    data.dimensions, data.bevel_depth = "3D", bevel
    spline = data.splines.new("BEZIER")
    spline.bezier_points.add(2)
    for p, co in zip(spline.bezier_points, ((0.0, 0.0, 0.0), (3.0, 1.0, 0.5), (6.0, 0.0, 1.0))):
        p.co, p.handle_left_type, p.handle_right_type = co, "AUTO", "AUTO"
    return bpy.data.objects.new(name, data)


def _metaball(name, radius=1.5):
    data = bpy.data.metaballs.new(name)
    data.elements.new().radius = radius
    return bpy.data.objects.new(name, data)


def _surface():
    bpy.ops.surface.primitive_nurbs_surface_sphere_add(radius=1.5)
    ob = bpy.context.active_object
    ob.name = "Dome"
    return ob


GEOMETRY = {
    "text": ("Sign", _text),
    "curve without bevel (its wire)": ("Tow Rope", lambda: _curve("Tow Rope")),
    "curve with bevel": ("Rail", lambda: _curve("Rail", bevel=0.2)),
    "metaball": ("Blob", lambda: _metaball("Blob")),
    "surface": ("Dome", _surface),
}


@pytest.mark.parametrize("name, make", list(GEOMETRY.values()), ids=list(GEOMETRY))
def test_objects_with_geometry_are_obstacles(tunnel, name, make):
    scene, car = tunnel
    ob = into_obstacles(make())
    ob.location = (6.0, -8.0, 0.5)
    vertices = evaluated_world_vertices(ob)
    assert len(vertices) > 1
    fitted(scene, car, name, vertices)


def test_metaballs_melted_into_one_are_one_obstacle(tunnel):
    scene, car = tunnel
    blob = into_obstacles(_metaball("Blob"))
    blob.location = (6.0, -8.0, 0.5)
    drop = into_obstacles(_metaball("Blob.001", radius=1.0))  # where a duplicate (Shift D) of Blob goes
    drop.location = (8.0, -8.0, 0.5)  # melts into Blob's surface: Blob's geometry holds both
    shape = fitted(scene, car, "Blob", evaluated_world_vertices(blob))
    assert shape.distance(np.array([[8.0, -8.0, 0.5]]))[0] < -0.5
    assert [o.name for o in reader().read_problem(scene, car).obstacles].count("Blob.001") == 0
    # the small one alone: its surface is drawn by Blob, which is not an obstacle
    bpy.data.collections["Obstacles"].objects.unlink(blob)
    scene.collection.objects.link(blob)
    refused(car, r"obstacle 'Blob\.001' is a metaball that melts into 'Blob', which holds the surface: put 'Blob' in "
                 r"the Obstacles collection too")


NO_GEOMETRY = {
    "camera": (lambda: bpy.data.objects.new("Chase Cam", bpy.data.cameras.new("Chase Cam")),
               r"obstacle 'Chase Cam' is a camera, which has no geometry: remove it from the Obstacles collection$"),
    "light": (lambda: bpy.data.objects.new("Lamp", bpy.data.lights.new("Lamp", "POINT")),
              r"obstacle 'Lamp' is a light, which has no geometry: remove it from the Obstacles collection$"),
    "empty": (lambda: bpy.data.objects.new("Marker", None),
              r"obstacle 'Marker' is an empty, which has no geometry: set its Constraint to Keep Out to keep the "
              r"vehicle out of a sphere \(Constraint / Obstacle panel\), or remove it from the Obstacles collection$"),
    "point cloud": (lambda: bpy.data.objects.new("Gravel", bpy.data.pointclouds.new("Gravel")),
                    r"obstacle 'Gravel' is a point cloud, whose geometry Vehicle Motion cannot read: convert it to a "
                    r"mesh \(Object › Convert › Mesh\), or remove it from the Obstacles collection$"),
}


@pytest.mark.parametrize("make, pattern", list(NO_GEOMETRY.values()), ids=list(NO_GEOMETRY))
def test_objects_without_geometry_are_refused(tunnel, make, pattern):
    scene, car = tunnel
    ob = make()
    bpy.data.collections["Obstacles"].objects.link(ob)
    ob.location = (6.0, -8.0, 0.5)
    refused(car, pattern)


def test_objects_flagged_as_obstacles_without_geometry_name_the_flag(tunnel):
    scene, car = tunnel
    cam = bpy.data.objects.new("Chase Cam", bpy.data.cameras.new("Chase Cam"))
    scene.collection.objects.link(cam)
    cam.vehicle_motion.is_obstacle = True
    refused(car, r"obstacle 'Chase Cam' is a camera, which has no geometry: untick its Obstacle setting "
                 r"\(Constraint / Obstacle panel\)$")
    bpy.data.objects.remove(cam)
    marker = bpy.data.objects.new("Marker", None)
    scene.collection.objects.link(marker)
    marker.vehicle_motion.is_obstacle = True
    refused(car, r"obstacle 'Marker' is an empty, which has no geometry: set its Constraint to Keep Out to keep the "
                 r"vehicle out of a sphere \(Constraint / Obstacle panel\), or clear its Obstacle flag "
                 r"\(vehicle_motion\.is_obstacle\)$")


def test_a_constraint_empty_in_obstacles_stays_a_constraint(tunnel):
    scene, car = tunnel
    rock = into_obstacles(constraint_empty(scene, "Rock Zone", "KEEP_OUT", (8.0, -8.0, 0.0), size=1.5))
    problem = reader().read_problem(scene, car)
    [keep_out] = [o for o in problem.obstacles if o.name == rock.name]
    assert keep_out.source == "keep-out" and keep_out.radius == pytest.approx(1.5)


# Numbers (scene_reader module docstring): positions within 1000 km of the world origin, speeds up to
# 10 km/s, finite transform keys, controls within their limits, limits positive; refused before solving.

def test_key_beyond_1000_km_is_refused_before_solving(tunnel):
    scene, car = tunnel
    car.location = (1e30, 5.0, 0.0)
    car.keyframe_insert("location", frame=43)
    refused(car, r"'Car' is keyed at x = 1e\+30 m at frame 43, out of range \(Vehicle Motion works within 1000 km "
                 r"of the world origin\): fix that key$")
    car.location = (1e40, 5.0, 0.0)  # more than a 32-bit float holds: Blender stores its largest
    car.keyframe_insert("location", frame=43)
    refused(car, r"'Car' is keyed at x = 3\.4e\+38 m at frame 43, out of range")


def test_key_that_is_not_a_number_is_refused(tunnel):
    scene, car = tunnel
    car.rotation_euler = (0.0, 0.0, math.nan)
    car.keyframe_insert("rotation_euler", index=2, frame=43)
    refused(car, r"'Car' is keyed at rotation Z = nan at frame 43, out of range \(not a finite number\): fix that key")


def test_speed_key_beyond_10_km_per_s_is_refused(tunnel):
    scene, car = tunnel
    car.vehicle_motion.speed = 2e4
    car.keyframe_insert("vehicle_motion.speed", frame=97)
    refused(car, r"'Car' is keyed at speed = 2e\+04 m/s at frame 97, out of range \(Vehicle Motion handles speeds "
                 r"up to 10 km/s\): fix that key")


def test_unkeyed_speed_beyond_10_km_per_s_is_refused(car):
    car.vehicle_motion.speed = 1e5
    refused(car, r"'Car' Speed is 1e\+05 m/s, out of range \(Vehicle Motion handles speeds up to 10 km/s\): set it "
                 r"in the Vehicle panel")
    refused(car, r"'Car' Speed is 1e\+05 m/s, out of range", operator="simulate")


def test_vehicle_parented_1000_km_away_is_refused(car):
    rig = bpy.data.objects.new("Convoy", None)
    bpy.context.scene.collection.objects.link(rig)
    rig.location = (0.0, 5e6, 0.0)
    car.parent = rig
    refused(car, r"'Car' is 5e\+06 m from the world origin at frame 1, out of range \(Vehicle Motion works within "
                 r"1000 km of the world origin\): move it or its parent 'Convoy'")


def test_constraint_empty_keyed_1000_km_away_is_refused(tunnel):
    scene, car = tunnel
    gate = bpy.data.objects["Gate Slalom"]
    gate.location = (27.0, 3e6, 0.0)
    gate.keyframe_insert("location", frame=43)
    refused(car, r"'Gate Slalom' is keyed at y = 3e\+06 m at frame 43, out of range")


def test_speed_limit_beyond_10_km_per_s_is_refused(tunnel):
    scene, car = tunnel
    bpy.data.objects["Speed Limit"].vehicle_motion.speed_limit = 1e5
    refused(car, r"speed limit 'Speed Limit' is 1e\+05 m/s, out of range \(Vehicle Motion handles speeds up to "
                 r"10 km/s\): lower it")


def test_keep_out_of_no_size_is_refused(tunnel):
    scene, car = tunnel
    zone = constraint_empty(scene, "Rock Zone", "KEEP_OUT", (8.0, -8.0, 0.0), size=1.5)
    zone.scale = (0.0, 0.0, 0.0)
    refused(car, r"keep-out 'Rock Zone' has no size \(radius 0 m; its display size is 1\.5, its world scale "
                 r"\(0, 0, 0\)\): give it a size")


def test_control_keyed_beyond_what_a_key_holds(empty_scene):
    heli = heli_shot(empty_scene)
    heli["collective"] = heli.vehicle_motion.mass * 9.81
    heli.keyframe_insert('["collective"]', frame=1)
    heli["collective"] = 1e300  # a 32-bit key holds at most 3.4e38: stored as inf
    heli.keyframe_insert('["collective"]', frame=12)
    refused(heli, r"'Heli' control 'collective' is keyed to inf at frame 12, outside its limits \[0, 9417\.6\] "
                  r"\(a key beyond ±3\.4e38 is stored as inf\)$", operator="simulate")


def _vehicle(scene, kind):
    if kind == "CAR":
        return small_car(scene)
    if kind == "HELICOPTER":
        return heli_shot(scene)
    ob = add_object({"BOAT": "Boat", "SNAKEBOARD": "Board"}[kind])
    ob.vehicle_motion.preset = {"BOAT": "RIB_BOAT", "SNAKEBOARD": "SNAKEBOARD"}[kind]
    ob.rotation_mode = "XYZ"
    for frame, x in ((1, 0.0), (17, 6.0)):
        ob.location = (x, 0.0, 0.0)
        ob.keyframe_insert("location", frame=frame)
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end, vm.steps_per_frame = 1, 17, 1
    return ob


LIMITS = [("CAR", "max_torque", "Max Torque"), ("CAR", "max_steering_rate", "Max Steering Rate"),
          ("CAR", "max_steering_angle", "Max Steering Angle"), ("HELICOPTER", "max_tilt", "Max Tilt"),
          ("HELICOPTER", "max_yaw", "Max Yaw Force"), ("BOAT", "max_thrust", "Max Thrust"),
          ("SNAKEBOARD", "max_wheel_angle", "Max Wheel Angle"), ("SNAKEBOARD", "max_rotor_torque", "Max Rotor Torque"),
          ("SNAKEBOARD", "max_steering_torque", "Max Steering Torque")]


@pytest.mark.parametrize("kind, key, label", LIMITS, ids=[f"{k.lower()} {key}" for k, key, _ in LIMITS])
def test_limit_of_zero_is_refused(empty_scene, kind, key, label):
    vehicle = _vehicle(empty_scene, kind)
    s = vehicle.vehicle_motion
    setattr(s, key, -1.0)
    assert getattr(s, key) == 0.0  # the setting's min clamps a negative value to 0, which core refuses
    pattern = rf"'{vehicle.name}' {label} is 0: it must be positive \(set it in the Vehicle panel\)$"
    refused(vehicle, pattern)
    refused(vehicle, pattern, operator="simulate")
