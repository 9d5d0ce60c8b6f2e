"""addon.scene_reader: scene → scenario tables, frame/time mapping, obstacle fitting (real bpy)."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_car_tunnel_scene as sample  # noqa: E402
from scene_builders import constraint_empty, small_car  # noqa: E402
from small_shots import add_object  # noqa: E402


class approx:
    """Like pytest.approx, for nested dicts and lists of numbers."""

    def __init__(self, expected, abs=1e-6):
        self.expected, self.tol = expected, abs

    def _eq(self, a, b) -> bool:
        if isinstance(b, dict):
            return isinstance(a, dict) and a.keys() == b.keys() and all(self._eq(a[k], b[k]) for k in b)
        if isinstance(b, (list, tuple)):
            return isinstance(a, (list, tuple)) and len(a) == len(b) and all(self._eq(x, y) for x, y in zip(a, b))
        if isinstance(b, str):
            return a == b
        return abs(float(a) - float(b)) <= self.tol + 1e-9 * abs(float(b))

    def __eq__(self, actual) -> bool:
        return self._eq(actual, self.expected)

    def __repr__(self) -> str:
        return f"approx({self.expected!r})"


@pytest.fixture
def tunnel(addon):
    """The car tunnel sample at 8 fps (96 steps: Node Spacing Per Frame, one step a frame)."""
    names = sample.build(8)
    bpy.context.scene.vehicle_motion.node_spacing = "PER_FRAME"
    return bpy.context.scene, bpy.data.objects[names["car"]], names


def reader():
    from vehicle_motion.addon import scene_reader
    return scene_reader


# ----------------------------------------------------------------------------- the sample

def test_sample_scene_problem(tunnel):
    scene, car, names = tunnel
    p = reader().read_problem(scene, car)
    fm = p.frame_map
    assert (fm.frame_start, fm.frame_end, fm.fps, fm.steps, fm.duration) == (1, 97, 8.0, 96, 12.0)
    assert fm.dt == pytest.approx(1 / 8) and len(p.segments) == 1 and p.warnings == []
    sc = p.scenario
    assert sc["vehicle"]["type"] == "car" and sc["vehicle"]["wheelbase"] == pytest.approx(2.55)
    assert sc["integrator"] == {"steps": 96} and sc["time"] == {"duration": 12.0}
    assert sc["start"] == approx({"position": [0.0, 0.0], "heading": 0.0, "speed": 5.0})
    assert sc["goal"] == approx({"position": [60.0, 8.0], "heading": 0.0, "speed": 5.0}, abs=1e-6)
    assert [w["time"] for w in sc["waypoints"]] == [5.25, 8.25]
    assert [w["radius"] for w in sc["waypoints"]] == pytest.approx([1.5, 1.5])
    assert sc["bounds"] == {"speed": [-8.0, 8.0]}
    assert sc["cost"]["input_weights"]["torque"] == pytest.approx(1 / 2000.0**2)
    # obstacles fitted to the evaluated meshes in world space
    shapes = {o.name: o for o in p.obstacles}
    assert sorted(shapes) == names["obstacles"]
    wall = shapes["Wall Left"]  # a unit cube with object scale (12, 44.5, 3)
    assert wall.kind == "box"
    assert np.sort(wall.half_extents) == pytest.approx(np.sort([6.0, 22.25, 1.5]), abs=1e-5)
    assert wall.center == pytest.approx([42.0, 33.75, 1.5], abs=1e-5)
    boulder = shapes["Boulder"]  # sphere mesh off its origin, rotated and scaled
    assert boulder.kind == "sphere" and boulder.radius == pytest.approx(2.5, abs=1e-4)
    assert boulder.center == pytest.approx([14.0, -1.5, 0.0], abs=1e-4)
    post = shapes["Post B"]  # capsule mesh parented to a rotated rig scaled 2×
    assert post.kind == "capsule" and post.radius == pytest.approx(0.8, abs=1e-4)
    assert sorted([post.a[2], post.b[2]]) == pytest.approx([0.0, 2.4], abs=1e-4)
    assert post.a[:2] == pytest.approx([30.0, 0.0], abs=1e-4)
    crate = shapes["Crate"]  # a box turned 30° about z
    assert crate.kind == "box" and np.sort(crate.half_extents) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    axis = crate.rotation[:, int(np.argmax(np.abs(crate.rotation[2])))]
    assert abs(axis[2]) == pytest.approx(1.0)
    yaw = math.degrees(math.atan2(crate.rotation[1, 0], crate.rotation[0, 0])) % 90.0
    assert yaw == pytest.approx(30.0, abs=1e-3)
    box = next(o for o in sc["obstacles"] if o["type"] == "box" and o["center"][0] == pytest.approx(54.0))
    assert np.linalg.norm(box["orientation"]) == pytest.approx(1.0, abs=1e-12)
    # the collision spheres cover the car's meshes (body and wheels)
    spheres = np.array(sc["vehicle"]["collision_spheres"])
    assert spheres[0, 0] - spheres[0, 3] <= -0.8 and spheres[-1, 0] + spheres[-1, 3] >= 3.4
    depsgraph = bpy.context.evaluated_depsgraph_get()
    for ob in [car, *car.children_recursive]:
        if ob.type != "MESH":
            continue
        me = ob.evaluated_get(depsgraph).to_mesh()
        pts = np.array([ob.matrix_world @ v.co for v in me.vertices])
        ob.evaluated_get(depsgraph).to_mesh_clear()
        d = np.linalg.norm(pts[:, None, :] - spheres[None, :, :3], axis=2) - spheres[None, :, 3]
        assert np.all(d.min(axis=1) <= 1e-9), ob.name
    # labels in core messages become object names and frames
    msg = p.describe("waypoint #2 violated at node 40; obstacle #3 (capsule) at node 7, collision sphere 1")
    assert msg == ("pass-through 'Gate Tunnel' (frame 67) violated at frame 41; obstacle 'Post A' at frame 8, "
                   "collision sphere 1")
    assert bpy.context.scene.frame_current == 1


def test_frame_map_units(tunnel):
    scene, car, _ = tunnel
    metres = reader().read_problem(scene, car).spheres
    # centimetre scene: 1 unit = 0.01 m
    scene.unit_settings.scale_length = 0.01
    p = reader().read_problem(scene, car)
    sc = p.scenario
    # the wheels' geometry is measured in the scene: 0.3 units are 3 mm here; typed dimensions are metres at any scale
    assert sc["vehicle"]["wheel_radius"] == pytest.approx(0.003) and sc["vehicle"]["wheelbase"] == pytest.approx(0.0255)
    car.vehicle_motion.car_geometry = "TYPED"
    typed = reader().read_problem(scene, car).scenario["vehicle"]
    assert typed["wheel_radius"] == pytest.approx(0.30) and typed["wheelbase"] == pytest.approx(2.55)
    assert sc["start"]["speed"] == pytest.approx(0.05)
    assert sc["goal"]["position"] == pytest.approx([0.6, 0.08])
    assert sc["waypoints"][0]["radius"] == pytest.approx(0.015)
    assert sc["bounds"]["speed"] == pytest.approx([-0.08, 0.08])
    assert np.array(sc["vehicle"]["collision_spheres"]) == pytest.approx(0.01 * metres)
    fm = p.frame_map
    assert fm.to_world(fm.to_solve([1.0, 2.0, 3.0])) == pytest.approx([1.0, 2.0, 3.0])
    assert fm.to_solve([100.0, 0.0, 0.0]) == pytest.approx([1.0, 0.0, 0.0], rel=1e-6, abs=1e-9)  # z: the rear axle's plane


def test_fps_base_and_keys_outside_range(empty_scene):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (31, (2.0, 0.0, 0.0), 0.0), (61, (6.0, 0.0, 0.0), 0.0)))
    scene.render.fps, scene.render.fps_base = 30000, 1001.0
    vm = scene.vehicle_motion
    vm.use_frame_range = True  # the add-on's own range overrides the keys'
    vm.frame_end, vm.steps_per_frame, vm.node_spacing = 41, 3, "PER_FRAME"
    p = reader().read_problem(scene, car)
    fm = p.frame_map
    assert fm.fps == pytest.approx(30000 / 1001) and fm.steps == 120
    assert fm.duration == pytest.approx(40 * 1001 / 30000)
    assert p.scenario["time"]["duration"] == pytest.approx(fm.duration)
    assert any("keys of 'Car' at frames 61 are outside frames 1–41" in w for w in p.warnings)
    assert "goal" not in p.scenario or p.scenario["goal"] == {}
    assert p.scenario["waypoints"][0]["time"] == pytest.approx(30 * 1001 / 30000)


def test_time_mapping(empty_scene):
    fm = reader().FrameMap(10, 34, 24.0, 4)
    assert fm.steps == 96 and fm.dt == pytest.approx(1 / 96) and fm.duration == pytest.approx(1.0)
    assert fm.time(22) == pytest.approx(0.5) and fm.frame(0.5) == pytest.approx(22)


# ----------------------------------------------------------------------------- constraints

def test_constraint_empties(empty_scene):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (41, (20.0, 0.0, 0.0), 0.0)))
    car.vehicle_motion.max_torque = 8000.0  # stop-and-go every 1.25 s: 4× a hatchback's torque makes it feasible
    constraint_empty(scene, "Gate", "PASS_THROUGH", (5.0, 1.0, 0.0), size=0.75, frame=11)
    stop = constraint_empty(scene, "Stop", "STOP", (10.0, 0.0, 0.0), size=0.2, frame=21)
    stop.scale = (2.0, 2.0, 2.0)
    constraint_empty(scene, "Dock", "LAND", (15.0, 2.0, 0.0), frame=31, rotation=(0.0, 0.0, math.radians(30)))
    constraint_empty(scene, "Rock", "KEEP_OUT", (12.0, 6.0, 0.0), size=1.5)
    slow = constraint_empty(scene, "Slow", "SPEED_LIMIT", (0.0, 0.0, 0.0))
    slow.vehicle_motion.speed_limit = 6.0
    fast = constraint_empty(scene, "Fast", "SPEED_LIMIT", (0.0, 0.0, 0.0))
    fast.vehicle_motion.speed_limit = 9.0
    fixed = constraint_empty(scene, "At Frame", "PASS_THROUGH", (18.0, 0.0, 0.0), size=1.0)
    fixed.vehicle_motion.constraint_timing = "FRAME"
    fixed.vehicle_motion.constraint_frame = 37
    p = reader().read_problem(scene, car)
    # stop at 21 and landing at 31 split the shot in three segments
    assert [(s.frame_start, s.frame_end) for s in p.segments] == [(1, 21), (21, 31), (31, 41)]
    s1, s2, s3 = (s.scenario for s in p.segments)
    assert s1["integrator"]["steps"] == 20 and s1["time"]["duration"] == pytest.approx(2.5)
    assert s1["goal"] == approx({"position": [10.0, 0.0], "speed": 0.0})
    assert s1["waypoints"] == [approx({"time": 1.25, "position": [5.0, 1.0], "radius": 0.75, "exact": True})]
    assert p.segments[0].waypoint_labels == ["pass-through 'Gate' (frame 11)"]
    assert s2["start"] == {} and p.segments[1].continues
    assert s2["goal"]["position"] == pytest.approx([15.0, 2.0])
    assert s2["goal"]["heading"] == pytest.approx(math.radians(30)) and s2["goal"]["speed"] == 0.0
    assert s3["goal"] == approx({"position": [20.0, 0.0], "heading": 0.0})
    assert s3["waypoints"][0]["time"] == pytest.approx(0.75) and s3["waypoints"][0]["radius"] == 1.0
    keep = [o for o in s1["obstacles"]]
    assert keep == [approx({"type": "sphere", "margin": 0.0, "center": [12.0, 6.0, 0.0], "radius": 1.5})]
    assert s1["bounds"] == {"speed": [-6.0, 6.0]}
    stop_c = next(c for c in p.constraints if c.name == "Stop")
    assert stop_c.radius == pytest.approx(0.4)  # display size × world scale
    # the panel's list (cheap, no evaluation)
    listed = reader().scene_constraints(scene, car)
    assert ("Gate", "pass-through", "frame 11") in listed and ("Slow", "speed limit", "whole shot") in listed
    assert ("At Frame", "pass-through", "frame 37") in listed


def test_constraint_for_another_vehicle_is_ignored(empty_scene):
    scene = empty_scene
    car = small_car(scene)
    other = bpy.data.objects.new("Other", None)
    scene.collection.objects.link(other)
    other.vehicle_motion.vehicle_type = "HELICOPTER"
    gate = constraint_empty(scene, "Gate", "PASS_THROUGH", (5.0, 30.0, 0.0), frame=10)
    gate.vehicle_motion.constraint_vehicle = other
    p = reader().read_problem(scene, car)
    assert "waypoints" not in p.scenario


def test_warnings_name_unsupported_objects(empty_scene):
    scene = empty_scene
    car = small_car(scene)
    cube = add_object("Cube Gate")
    cube.vehicle_motion.constraint_kind = "PASS_THROUGH"
    keep = constraint_empty(scene, "Keyed Keep Out", "KEEP_OUT", (5.0, 8.0, 0.0), frame=12)
    keep.empty_display_size = 1.0
    p = reader().read_problem(scene, car)
    assert any("'Cube Gate' is a mesh, not an empty" in w for w in p.warnings)
    assert any("keep-out 'Keyed Keep Out' holds over the whole shot" in w for w in p.warnings)


def test_pass_through_without_frame_is_an_error(empty_scene):
    scene = empty_scene
    car = small_car(scene)
    constraint_empty(scene, "Loose Gate", "PASS_THROUGH", (5.0, 0.0, 0.0))
    with pytest.raises(reader().SceneError, match="pass-through 'Loose Gate' has no keyframe"):
        reader().read_problem(scene, car)


# ----------------------------------------------------------------------------- keys

def test_keys_give_start_goal_and_pass_through_poses(empty_scene):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (13, (6.0, 2.0, 0.0), 0.5),
                                 (25, (10.0, 4.0, 0.0), 2 * math.pi)))
    car.vehicle_motion.speed = 3.0
    car.keyframe_insert("vehicle_motion.speed", frame=1)
    car.vehicle_motion.speed = 1.0
    car.keyframe_insert("vehicle_motion.speed", frame=25)
    scene.vehicle_motion.key_tolerance = 0.2
    p = reader().read_problem(scene, car)
    sc = p.scenario
    assert sc["start"] == approx({"position": [0.0, 0.0], "heading": 0.0, "speed": 3.0})
    # the keyed Euler angle keeps the whole turn: 0 → 2π is a loop
    assert sc["goal"] == approx({"position": [10.0, 4.0], "heading": 2 * math.pi, "speed": 1.0})
    assert sc["waypoints"] == [approx({"time": 1.5, "position": [6.0, 2.0], "radius": 0.2, "exact": True, "heading": 0.5})]
    assert p.segments[0].waypoint_labels == ["key of 'Car' at frame 13"]


def test_heading_without_euler_is_unwrapped(empty_scene):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), math.radians(170)), (25, (-10.0, 0.0, 0.0), math.radians(190))))
    car.rotation_mode = "QUATERNION"
    for frame, heading in ((1, math.radians(170)), (25, math.radians(190))):
        car.rotation_quaternion = (math.cos(heading / 2), 0.0, 0.0, math.sin(heading / 2))
        car.keyframe_insert("rotation_quaternion", frame=frame)
    p = reader().read_problem(scene, car)
    assert p.scenario["start"]["heading"] == pytest.approx(math.radians(170))
    assert p.scenario["goal"]["heading"] == pytest.approx(math.radians(190))  # not −170°


def test_baked_vehicle_is_read_from_its_original_keys(tunnel, vm):
    scene, car, _ = tunnel
    before = reader().read_problem(scene, car).scenario
    from vehicle_motion.addon import baking
    baking.bake(car, vm.helix_trajectory(duration=12.0, steps=96, vehicle="car"), frame_start=1, fps=8.0)
    assert car.vehicle_motion.is_baked
    scene.frame_set(40)
    after = reader().read_problem(scene, car).scenario
    assert after["start"] == approx(before["start"]) and after["goal"] == approx(before["goal"])
    assert after["waypoints"] == approx(before["waypoints"])
    assert scene.frame_current == 40


def test_parented_vehicle_under_animated_parent(empty_scene):
    scene = empty_scene
    rig = add_object("Rig", kind="EMPTY")
    rig.location = (0.0, 0.0, 0.0)
    rig.keyframe_insert("location", frame=1)
    rig.location = (0.0, 5.0, 0.0)
    rig.keyframe_insert("location", frame=25)
    car = small_car(scene)
    car.parent = rig
    p = reader().read_problem(scene, car)
    assert p.scenario["start"]["position"] == pytest.approx([0.0, 0.0])
    assert p.scenario["goal"]["position"] == pytest.approx([10.0, 5.0])
    assert scene.frame_current == 1


# ----------------------------------------------------------------------------- fitting

def test_obstacle_fit_uses_evaluated_mesh(empty_scene):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, -10.0, 0.0), 0.0), (25, (10.0, -10.0, 0.0), 0.0)))
    coll = bpy.data.collections.new("Obstacles")
    scene.collection.children.link(coll)
    wall = add_object("Arrayed")
    scene.collection.objects.unlink(wall)
    coll.objects.link(wall)
    mod = wall.modifiers.new("Array", "ARRAY")
    mod.count, mod.relative_offset_displace = 4, (1.0, 0.0, 0.0)
    wall.location = (0.0, 5.0, 0.0)
    p = reader().read_problem(scene, car)
    shape = p.obstacles[0]
    assert shape.kind == "box" and np.sort(shape.half_extents) == pytest.approx([0.5, 0.5, 2.0])
    assert shape.center == pytest.approx([1.5, 5.0, 0.0])
    wall.vehicle_motion.obstacle_shape = "SPHERE"
    assert reader().read_problem(scene, car).obstacles[0].kind == "sphere"


# ----------------------------------------------------------------------------- simulation

def test_simulation_samples_keyed_controls_per_step(empty_scene):
    scene = empty_scene
    car = small_car(scene)
    scene.vehicle_motion.steps_per_frame = 2
    car["torque"] = 0.0
    car.keyframe_insert('["torque"]', frame=1)
    car["torque"] = 400.0
    car.keyframe_insert('["torque"]', frame=25)
    car["steering_rate"] = 0.1
    sim = reader().read_simulation(scene, car)
    sc = sim.scenario
    assert sc["integrator"] == {"dt": pytest.approx(1 / 16), "steps": 48}
    torque = np.array(sc["controls"]["torque"]["values"])
    assert len(torque) == 48 and torque[0] == pytest.approx(0.0) and torque[-1] < 400.0
    from vehicle_motion.addon import action_compat
    fc = next(fc for fc in action_compat.fcurves(action_compat.assigned(car)) if fc.data_path == '["torque"]')
    assert torque[5] == pytest.approx(fc.evaluate(1 + 5 / 2))
    assert sc["controls"]["steering_rate"] == {"values": [pytest.approx(0.1)] * 48}
    assert sc["initial"] == approx({"position": [0.0, 0.0], "heading": 0.0, "wheel_rate": 0.0})


# ----------------------------------------------------------------------------- scene setup operators

def test_add_constraint_and_obstacle_operators(empty_scene, vm):
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (41, (20.0, 0.0, 0.0), 0.0)))
    vm.make_active(car)
    scene.frame_set(21)
    scene.cursor.location = (10.0, 1.0, 0.0)
    assert bpy.ops.vehicle_motion.add_constraint(kind="PASS_THROUGH", size=1.25) == {"FINISHED"}
    gate = bpy.context.active_object
    assert gate.type == "EMPTY" and gate.vehicle_motion.constraint_kind == "PASS_THROUGH"
    assert gate.vehicle_motion.constraint_vehicle == car and reader().keyed_frames(gate) == [21.0]
    scene.cursor.location = (5.0, 6.0, 0.0)
    assert bpy.ops.vehicle_motion.add_constraint(kind="SPEED_LIMIT", speed_limit=7.0) == {"FINISHED"}
    assert bpy.ops.vehicle_motion.add_obstacle(shape="CAPSULE", size=1.0) == {"FINISHED"}
    capsule = bpy.context.active_object
    assert capsule.name in bpy.data.collections["Obstacles"].objects
    scene.cursor.location = (15.0, 8.0, 0.0)
    vm.make_active(vm.add_object("Rock"))
    bpy.context.active_object.location = (15.0, -6.0, 0.0)
    assert bpy.ops.vehicle_motion.add_obstacle(shape="SELECTED") == {"FINISHED"}
    assert "Rock" in bpy.data.collections["Obstacles"].objects
    vm.make_active(car)
    with pytest.raises(RuntimeError, match="Select the mesh objects to make obstacles"):
        bpy.ops.vehicle_motion.add_obstacle(shape="SELECTED")  # only the vehicle is selected
    scene.frame_set(1)
    p = reader().read_problem(scene, car)
    sc = p.scenario
    assert sc["waypoints"] == [approx({"time": 2.5, "position": [10.0, 1.0], "radius": 1.25, "exact": True})]
    assert sc["bounds"] == {"speed": [-7.0, 7.0]}
    shapes = {o.name: o for o in p.obstacles}
    assert shapes[capsule.name].kind == "capsule" and shapes[capsule.name].radius == pytest.approx(0.5)
    assert shapes[capsule.name].center == pytest.approx([5.0, 6.0, 0.0])
    assert shapes["Rock"].kind == "box" and shapes["Rock"].center == pytest.approx([15.0, -6.0, 0.0])
