"""Acceptance: Solve Trajectory on the car tunnel sample, checked on the BAKED F-curves in world space.

The sample is built at 8 fps (96 steps, 12 s) and solved once for the module; each test
reopens the solved file. Everything is measured on the evaluated scene (frame_set +
matrix_world), never on the solver's own numbers.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_car_tunnel_scene as sample  # noqa: E402
from operator_runs import hold_at_iteration, stored  # noqa: E402
from world_checks import min_clearance, solve_frames  # noqa: E402

FPS = 8
FIGURES: dict[str, float] = {}  # measured figures, printed at the end of the module


@pytest.fixture(scope="module")
def files(addon, tmp_path_factory):
    """(setup .blend, solved .blend, seconds the solve took)."""
    folder = tmp_path_factory.mktemp("solve")
    names = sample.build(FPS)
    bpy.context.scene.vehicle_motion.node_spacing = "PER_FRAME"  # a node on every frame (96 steps)
    setup = folder / "setup.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(setup))
    started = time.perf_counter()
    # INVOKE_DEFAULT: in background mode invoke runs the synchronous path
    result = bpy.ops.vehicle_motion.solve_trajectory("INVOKE_DEFAULT")
    FIGURES["solve_seconds"] = time.perf_counter() - started
    assert result == {"FINISHED"}, bpy.context.scene.vehicle_motion.last_report
    solved = folder / "solved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(solved))
    yield setup, solved, names
    if FIGURES:
        print("\nmeasured:", ", ".join(f"{k} = {v:.6g}" for k, v in sorted(FIGURES.items())))


def open_file(path) -> tuple:
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    return scene, bpy.data.objects["Car"]


# ----------------------------------------------------------------------------- the solve

def test_solve_reports_stores_and_bakes(files):
    _, solved, _ = files
    scene, car = open_file(solved)
    report = scene.vehicle_motion.last_report
    assert report.startswith("Solved 'Car': cost ")
    for part in ("max constraint violation", "iterations", "s (scipy)", "baked frames 1–97"):
        assert part in report
    s = car.vehicle_motion
    assert s.has_trajectory and s.is_baked and s.original_action is not None
    trajectory = stored(car)
    assert trajectory.stats["converged"] and trajectory.stats["max_constraint_violation"] < 1e-6
    assert len(trajectory.time) == 97 and trajectory.time[-1] == pytest.approx(12.0)
    assert trajectory.stats["frame_start"] == 1 and trajectory.stats["fps"] == FPS


def test_baked_world_poses_match_the_solved_trajectory(files):
    from vehicle_motion.core.lie import quaternion
    _, solved, _ = files
    scene, car = open_file(solved)
    trajectory = stored(car)
    worst_p = worst_r = 0.0
    for k, f in enumerate(solve_frames(scene)):
        scene.frame_set(f)
        m = np.array(car.matrix_world)
        r = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)
        worst_p = max(worst_p, float(np.max(np.abs(m[:3, 3] - trajectory.position[k]))))
        worst_r = max(worst_r, float(np.max(np.abs(r - quaternion.to_matrix(trajectory.orientation[k])))))
    FIGURES["pose_error_position"], FIGURES["pose_error_rotation"] = worst_p, worst_r
    assert worst_p < 1e-5 and worst_r < 1e-5


def _spin(parent, child) -> float:
    """Angle of child's rotation about its local Y axis, relative to parent (world matrices)."""
    local = parent.matrix_world.to_3x3().normalized().inverted() @ child.matrix_world.to_3x3().normalized()
    return math.atan2(local[0][2], local[0][0])


def test_wheel_spin_matches_distance_over_radius(files):
    """Each wheel turns by the distance its own contact point (its centre on the ground) moves / its radius
    (measured from the wheel: 0.30 m): left and right rear wheels differ in turns, their mean is the rear
    axle centre's distance / radius; front wheels roll along their steered heading (within 1 % of their own
    path). Measured on the evaluated world matrices, modulo a turn: at 8 fps a wheel turns up to 3.3 rad
    between frames."""
    _, solved, _ = files
    scene, car = open_file(solved)
    s = car.vehicle_motion
    radius = sample.WHEEL_RADIUS
    parents = {"wheel_rear_left": car, "wheel_rear_right": car, "wheel_front_left": s.knuckle_front_left,
               "wheel_front_right": s.knuckle_front_right}
    axle, centres, psi = [], {role: [] for role in parents}, {role: [] for role in parents}
    for f in solve_frames(scene):
        scene.frame_set(f)
        axle.append(np.array(car.matrix_world)[:3, 3].copy())  # the sample's origin is its rear axle
        for role, parent in parents.items():
            wheel = getattr(s, role)
            centres[role].append(np.array(wheel.matrix_world)[:3, 3].copy())
            psi[role].append(_spin(parent, wheel))

    def path(points):
        return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(np.array(points)[:, :2], axis=0), axis=1))])

    def wrapped(a):
        return np.remainder(a + np.pi, 2 * np.pi) - np.pi

    spins = {}
    for role in parents:
        expected = path(centres[role]) / radius
        miss = wrapped(np.array(psi[role]) - psi[role][0] - expected)
        spins[role] = expected + miss  # the baked spin, whole turns counted as expected
        FIGURES[f"wheel_spin_error_{role}_rad"] = float(np.max(np.abs(miss)))
        FIGURES[f"wheel_spin_total_{role}_rad"] = float(expected[-1])
        assert expected[-1] > 150.0  # ~60 m / 0.3 m
        assert np.max(np.abs(miss)) < (1e-3 if "rear" in role else 1e-2) * expected[-1], role
    mean = 0.5 * (spins["wheel_rear_left"] + spins["wheel_rear_right"])
    expected = path(axle) / radius
    assert np.max(np.abs(mean - expected)) < 1e-3 * expected[-1]
    assert np.max(np.abs(spins["wheel_rear_left"] - spins["wheel_rear_right"])) > 0.1  # a differential in turns


def test_baked_car_never_enters_an_obstacle(files):
    _, solved, names = files
    scene, car = open_file(solved)
    worst = min_clearance(scene, car, names["obstacles"])
    FIGURES["min_obstacle_clearance_m"] = worst[0]
    assert worst[0] > 0.0, worst


def test_passes_every_pass_through_empty(files):
    _, solved, names = files
    scene, car = open_file(solved)
    assert set(names["gates"]) == {"Gate Slalom", "Gate Tunnel"}
    for name, frame in names["gates"].items():
        gate = bpy.data.objects[name]
        scene.frame_set(int(frame))
        d = (car.matrix_world.translation - gate.matrix_world.translation).length
        radius = gate.empty_display_size * max(gate.matrix_world.to_scale())
        FIGURES[f"gate_distance_{name.split()[-1].lower()}"] = d
        assert d <= radius + 1e-4, (name, d, radius)


def test_steering_limit_at_every_frame(files):
    _, solved, _ = files
    scene, car = open_file(solved)
    s = car.vehicle_motion
    worst = 0.0
    for f in solve_frames(scene):
        scene.frame_set(f)
        for knuckle in (s.knuckle_front_left, s.knuckle_front_right):
            body = car.matrix_world.to_3x3().normalized()
            local = body.inverted() @ knuckle.matrix_world.to_3x3().normalized()
            worst = max(worst, abs(math.atan2(local[1][0], local[0][0])))
    FIGURES["max_steering_deg"] = math.degrees(worst)
    FIGURES["steering_limit_deg"] = math.degrees(s.max_steering_angle)
    assert 0.05 < worst <= s.max_steering_angle + 1e-6


def test_bake_after_reopen_reproduces_the_solve(files):
    _, solved, _ = files
    scene, car = open_file(solved)
    baked = []
    for f in solve_frames(scene):
        scene.frame_set(f)
        baked.append(np.array(car.matrix_world))
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.clear_bake() == {"FINISHED"}
    assert not car.vehicle_motion.is_baked and car.vehicle_motion.has_trajectory
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"}
    for k, f in enumerate(solve_frames(scene)):
        scene.frame_set(f)
        assert np.array(car.matrix_world) == pytest.approx(baked[k], abs=1e-6)


def _key_poses(scene, car):
    poses = {}
    for f in (1, 43, 97):
        scene.frame_set(f)
        poses[f] = np.array(car.matrix_world)
    return poses


def test_clear_bake_restores_the_scene(files):
    """Clear Bake gives back the artist's action and poses (undo itself is tested, headless, in
    test_solve_vehicles.py: it needs an initial undo_push and operators called with undo)."""
    setup, solved, _ = files
    scene, car = open_file(setup)
    before = _key_poses(scene, car)
    action = car.animation_data.action.name
    assert "UNDO" in bpy.types.VEHICLE_MOTION_OT_solve_trajectory.bl_options
    scene, car = open_file(solved)
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.clear_bake() == {"FINISHED"}
    assert car.animation_data.action.name == action
    after = _key_poses(scene, car)
    for f in before:
        assert after[f] == pytest.approx(before[f], abs=1e-6)
    for role in ("wheel_rear_left", "knuckle_front_left"):
        child = getattr(car.vehicle_motion, role)
        assert not child.vehicle_motion.is_baked and tuple(child.rotation_euler) == pytest.approx((0, 0, 0))


def test_solve_can_only_store(files):
    setup, _, _ = files
    scene, car = open_file(setup)
    actions = {a.name for a in bpy.data.actions}
    scene.vehicle_motion.max_iter = 400
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.solve_trajectory(bake_after_solve=False) == {"FINISHED"}
    assert car.vehicle_motion.has_trajectory and not car.vehicle_motion.is_baked
    assert {a.name for a in bpy.data.actions} == actions
    assert "stored (not baked)" in scene.vehicle_motion.last_report
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"} and car.vehicle_motion.is_baked


def test_worker_reports_progress_and_cancels(files):
    from vehicle_motion.addon import scene_reader, solving
    setup, _, _ = files
    scene, car = open_file(setup)
    problem = scene_reader.read_problem(scene, car)
    job = solving.SolveJob(problem)
    # the real solve takes ~0.2 s: a fixed sleep could let it finish before the cancel arrives
    reached = hold_at_iteration(job, 3)
    job.start()
    try:
        assert solving.running("Car")
        assert reached.wait(20.0), "the solve never reached its third iteration"
        fraction, text = job.progress()
        assert 0.0 < fraction < 1.0 and text.startswith("Solving 'Car'") and "Esc to cancel" in text
        job.cancel(wait=20.0)
        assert job.done and job.outcome.cancelled
        assert "cancelled" in job.outcome.summary()
    finally:
        job.finish()
    assert not solving.running() and not car.vehicle_motion.has_trajectory and not car.vehicle_motion.is_baked


# ----------------------------------------------------------------------------- small scenes

def test_stop_here_splits_the_shot_and_comes_to_rest(empty_scene):
    from scene_builders import constraint_empty, small_car
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (33, (8.0, 0.0, 0.0), 0.0)))
    constraint_empty(scene, "Stop", "STOP", (4.0, 0.0, 0.0), size=0.05, frame=17)
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = car
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
    assert "2 segments" in scene.vehicle_motion.last_report
    trajectory = stored(car)
    assert len(trajectory.time) == 33 and np.all(np.diff(trajectory.time) > 0)
    assert abs(trajectory.linear_velocity[16, 0]) < 1e-6
    positions = []
    for f in (16, 17, 18):
        scene.frame_set(f)
        positions.append(np.array(car.matrix_world.translation))
    assert positions[1] == pytest.approx([4.0, 0.0, 0.0], abs=0.05 + 1e-6)
    # at rest at frame 17: the neighbouring frames are much closer than at cruising speed
    assert np.linalg.norm(positions[2] - positions[1]) < 0.05
    scene.frame_set(33)
    assert np.array(car.matrix_world.translation) == pytest.approx([8.0, 0.0, 0.0], abs=1e-5)


def test_helicopter_solve(empty_scene):
    from small_shots import heli_shot
    scene = empty_scene
    heli = heli_shot(scene)   # 6 m along X at 5 m height, frames 1–17 at 8 fps, one step a frame
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = heli
    assert bpy.ops.vehicle_motion.solve_trajectory() == {"FINISHED"}
    scene.frame_set(17)
    assert np.array(heli.matrix_world.translation) == pytest.approx([6.0, 0.0, 5.0], abs=1e-5)
    assert np.array(heli.matrix_world.to_3x3()) == pytest.approx(np.eye(3), abs=1e-5)


def test_preview_path_is_the_stored_trajectory(files):
    """The viewport preview draws the stored path as the bake places it: through every node and, between
    them, the bake's curve at every frame; in background mode it registers no draw handler."""
    from vehicle_motion.addon import preview
    from vehicle_motion.core.shot.resample import sample
    _, solved, _ = files
    scene, car = open_file(solved)
    assert preview._handle is None  # bpy.app.background: nothing is drawn
    points = preview.path_points(car)
    traj = stored(car)
    t = np.asarray(traj.time)
    times = np.union1d(t, np.arange(t[0], t[-1], 1.0 / traj.stats["fps"]))
    assert points.shape == (len(times), 3) and len(times) >= len(t)
    assert points[np.searchsorted(times, t)] == pytest.approx(traj.position, abs=1e-5)
    assert points == pytest.approx(sample(traj, times).position, abs=1e-5)
    assert preview.path_points(car) is points  # decoded once per stored version
    assert preview.path_points(car.vehicle_motion.wheel_rear_left) is None
