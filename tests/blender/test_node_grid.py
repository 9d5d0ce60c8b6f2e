"""Node Spacing in real bpy: a 12 s shot at 24 fps is solved on far fewer nodes than frames and still
baked at every frame, keys met at their own frames (sub-frames, centimetre scenes, the timeline's frame
range); Per Frame keeps the node count Steps per Frame gave; Node Count is the count; bad settings are
one line naming the setting. Measured on the baked scene (frame_set + matrix_world)."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from operator_runs import solve_active as solve, stored  # noqa: E402
from small_shots import keyed_car  # noqa: E402

TWELVE_SECONDS = [(1, (0.0, 0.0), 0.0), (97, (20.0, 2.0), 0.2), (193, (40.0, 4.0), 0.0), (289, (60.0, 8.0), 0.0)]


def at(scene, obj, frame: float) -> np.ndarray:
    whole = math.floor(frame)
    scene.frame_set(whole, subframe=frame - whole)
    return np.array(obj.matrix_world)


def keyed_frames(obj) -> np.ndarray:
    from vehicle_motion.addon import action_compat
    fc = next(fc for fc in action_compat.fcurves(action_compat.assigned(obj)) if fc.data_path == "location")
    co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
    fc.keyframe_points.foreach_get("co", co)
    return co[0::2].astype(float)


@pytest.mark.parametrize("unit", [1.0, 100.0])
def test_a_twelve_second_shot_bakes_every_frame_from_a_coarser_grid(empty_scene, unit):
    """12 s at 24 fps, keys every 4 s: Automatic takes a node every few frames, not two a frame; every frame
    1–289 is keyed, the keys are met at their frames, the motion between them is smooth (no corner at a
    node: the frame-to-frame velocity changes little) and the car rolls without slipping."""
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 289
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 1.0 / unit
    car = keyed_car(scene, TWELVE_SECONDS, unit=unit)
    assert scene.vehicle_motion.node_spacing == "AUTOMATIC"
    report = solve(scene, car)
    trajectory = stored(car)
    nodes = len(trajectory.time)
    assert 12 < nodes <= 289 // 2                                 # fewer than one a frame (Per Frame: 577)
    step = float(np.max(np.diff(trajectory.time)))
    assert f"baked frames 1–289 from {nodes} nodes {step:.3g} s apart (Automatic)" in report
    assert car.vehicle_motion.node_grid.startswith(f"{nodes} nodes, {step:.3g} s apart")
    assert trajectory.stats["node_spacing"] == "AUTOMATIC" and trajectory.stats["nodes"] == nodes
    assert np.array_equal(keyed_frames(car), np.arange(1.0, 290.0))
    tolerance = scene.vehicle_motion.key_tolerance / unit
    for frame, (x, y), _ in TWELVE_SECONDS:
        pose = at(scene, car, frame)
        miss = float(np.linalg.norm(pose[:2, 3] / unit - [x, y]))
        assert miss <= (1e-4 if frame in (1, 289) else tolerance + 1e-4), frame
    origins = np.array([at(scene, car, f)[:3, 3] / unit for f in range(1, 290)])
    velocity = np.diff(origins, axis=0) * 24
    jerk = np.linalg.norm(np.diff(velocity, axis=0), axis=1) * 24       # m/s² between consecutive frames
    assert np.max(jerk) < 15.0
    headings = np.array([math.atan2(at(scene, car, f)[1, 0], at(scene, car, f)[0, 0]) for f in range(1, 290)])
    rear = origins[:, :2]       # the box car's origin is its rear axle (no wheel meshes)
    chord = np.diff(rear, axis=0)
    fast = np.linalg.norm(chord, axis=1) * 24 > 1.0
    mid = 0.5 * (headings[1:] + headings[:-1])
    slip = np.abs(np.remainder(np.arctan2(chord[:, 1], chord[:, 0]) - mid + math.pi, 2 * math.pi) - math.pi)
    assert math.degrees(float(np.max(slip[fast]))) < 0.5


def test_keys_on_sub_frames_are_met_on_a_coarse_grid(empty_scene):
    """29.97 fps, keys at 1, 60.5 and 120.25 and a timeline range 1–130: the goal exactly at 120.25, the key at
    60.5 within Key Tolerance at 60.5 itself (a key between nodes: imposed on the chord, with the bake's
    departure from it taken off its radius)."""
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 30, 1.001
    scene.frame_start, scene.frame_end = 1, 130
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (60.5, (7.0, 0.6), 0.15), (120.25, (20.0, 3.0), 0.2)])
    report = solve(scene, car)
    assert "baked frames 1–120.25 from " in report
    trajectory = stored(car)
    assert len(trajectory.time) < 119.25 * 2 + 1
    assert at(scene, car, 120.25)[:2, 3] == pytest.approx([20.0, 3.0], abs=1e-4)
    miss = float(np.linalg.norm(at(scene, car, 60.5)[:2, 3] - [7.0, 0.6]))
    assert miss <= scene.vehicle_motion.key_tolerance + 1e-4
    assert 60.5 in keyed_frames(car).tolist()


def test_per_frame_keeps_the_node_count_steps_per_frame_gave(empty_scene):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0)])
    vm = scene.vehicle_motion
    vm.node_spacing, vm.steps_per_frame = "PER_FRAME", 3
    report = solve(scene, car)
    trajectory = stored(car)
    assert len(trajectory.time) == 48 * 3 + 1 and trajectory.stats["node_spacing"] == "PER_FRAME"
    assert "from 145 nodes 0.0139 s apart (Per Frame)" in report
    for k in range(0, len(trajectory.time), 3):     # a node on every frame: baked exactly there
        assert at(scene, car, 1 + k // 3)[:3, 3] == pytest.approx(trajectory.position[k], abs=1e-4)


def test_node_count_is_the_count(empty_scene):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 97
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (97, (16.0, 0.0), 0.0)])
    vm = scene.vehicle_motion
    vm.node_spacing, vm.node_count = "COUNT", 25
    report = solve(scene, car)
    trajectory = stored(car)
    assert len(trajectory.time) == 25 and np.diff(trajectory.time) == pytest.approx(np.full(24, 4.0 / 24))
    assert "from 25 nodes 0.167 s apart (Node Count)" in report
    assert np.array_equal(keyed_frames(car), np.arange(1.0, 98.0))


@pytest.mark.parametrize("count, message", [
    (20002, "Solve Settings › Node Count is 20002: a solve takes from 3 to 20001 nodes"),
    (4, "frames 121–145 (between stops) get 1 step at Node Count 4"),
])
def test_bad_node_counts_are_one_line_naming_the_setting(empty_scene, count, message):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 145
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (145, (16.0, 0.0), 0.0)])
    if count == 4:   # a stop a second before the end: its segment is shorter than a step (48 frames)
        from small_shots import add_object
        stop = add_object("Stop", kind="EMPTY")
        stop.location = (14.0, 0.0, 0.0)
        stop.vehicle_motion.constraint_kind = "STOP"
        stop.vehicle_motion.constraint_timing = "FRAME"
        stop.vehicle_motion.constraint_frame = 121
    vm = scene.vehicle_motion
    vm.node_spacing, vm.node_count = "COUNT", count
    before = car.animation_data.action
    bpy.context.view_layer.objects.active = car
    with pytest.raises(RuntimeError) as info:
        bpy.ops.vehicle_motion.solve_trajectory()
    text = str(info.value).strip()
    assert message in text and "Node Count" in text and "\n" not in text
    assert car.animation_data.action == before and not car.vehicle_motion.is_baked


def test_node_spacing_refuses_an_unknown_choice(empty_scene):
    with pytest.raises(TypeError, match=r'enum "EVERY_OTHER_FRAME" not found in \(\'AUTOMATIC\', \'PER_FRAME\', '
                                        r"'COUNT'\)"):
        empty_scene.vehicle_motion.node_spacing = "EVERY_OTHER_FRAME"
    assert empty_scene.vehicle_motion.node_spacing == "AUTOMATIC"


def test_the_panel_shows_the_grid(empty_scene):
    """What the Solve Settings panel lists: the count it will take (Per Frame over the own range, Node
    Count) and the grid the active vehicle was solved on."""
    from vehicle_motion.panels.vehicle_panel import _node_lines
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0)])
    vm = scene.vehicle_motion
    vm.node_spacing, vm.use_frame_range, vm.frame_start, vm.frame_end, vm.steps_per_frame = \
        "PER_FRAME", True, 1, 49, 2
    context = type("Context", (), {"active_object": car})()
    assert _node_lines(context, vm) == ["97 nodes over frames 1–49"]
    vm.use_frame_range = False
    vm.node_spacing = "AUTOMATIC"
    solve(scene, car)
    lines = _node_lines(context, vm)
    assert lines == [f"Solved on {car.vehicle_motion.node_grid}"] and "nodes" in lines[0]
    vm.node_spacing, vm.node_count = "COUNT", 61
    assert _node_lines(context, vm)[0] == "61 nodes over the shot"


def test_solve_refines_an_automatic_grid_whose_motion_cuts_into_an_obstacle(addon):
    """Solve (addon.solving.solve) on an Automatic grid eight times too coarse for a post beside the way: the
    motion between nodes comes into the post's margin, so it is solved again on twice the nodes, warm, and
    the warning names the cut; the finer motion keeps out of the margin by more than the coarse one."""
    import math as m
    from vehicle_motion.addon import solving
    from vehicle_motion.core.shot import grid
    from vehicle_motion.core.shot.frames import FrameMap
    from vehicle_motion.core.shot.geometry import ObstacleShape
    from vehicle_motion.core.shot.plan import KeyPose, ShotInput, ShotSettings, plan, refined_problem

    def rot(h):
        return np.array([[m.cos(h), -m.sin(h), 0.0], [m.sin(h), m.cos(h), 0.0], [0.0, 0.0, 1.0]])

    keys = [(1.0, (0.0, 0.0), 0.0), (97.0, (40.0, 0.0), 0.0)]
    poses = [KeyPose(f, np.array([x, y, 0.0]), rot(h), rotation_keyed=True, speed=0.0 if i == 0 else None,
                     euler_heading=h) for i, (f, (x, y), h) in enumerate(keys)]
    post = ObstacleShape("Post", "sphere", np.array([20.0, 1.5, 0.5]), radius=1.0, margin=0.2)
    shot = ShotInput(vehicle="Car", vehicle_type="CAR", core_type="car",
                     frame_map=FrameMap(1.0, 97.0, 24.0, 2, 1.0, spacing="AUTOMATIC"), keys=poses,
                     empties=[], obstacles=[post], spheres=np.array([[1.2, 0.0, 0.5, 1.0]]),
                     parameters={"type": "car", "mass": 1200.0, "wheel_radius": 0.3, "wheelbase": 2.55,
                                 "wheel_inertia": 1.8, "yaw_inertia": 1700.0, "max_steering_angle": m.radians(35.0),
                                 "max_steering_rate": 1.2, "max_torque": 4000.0},
                     input_limits={"torque": 4000.0, "steering_rate": 1.2},
                     settings=ShotSettings(key_tolerance=0.05, weights={"effort": 1.0},
                                           solver={"backend": "scipy", "max_iter": 300, "tol": 1e-6,
                                                   "time_limit_s": 60.0}))
    coarse = refined_problem(plan(shot), 0.125)      # an Automatic grid 8× coarser than the rule's
    first = solving.solve_segments(coarse)
    assert first.converged, first.message
    cut = grid.cut_in(coarse, first.trajectory)
    assert cut is not None and cut.too_deep           # the case refinement is for
    out = solving.solve(coarse)
    assert out.converged, out.message
    steps = [s.scenario["integrator"]["steps"] for s in coarse.segments]
    assert len(out.trajectory.time) - 1 == 2 * sum(steps)
    assert any("solved again on twice the nodes" in w and "'Post'" in w for w in out.warnings), out.warnings
    finer_cut = grid.cut_in(refined_problem(coarse, 2), out.trajectory)
    assert finer_cut.depth < cut.depth
