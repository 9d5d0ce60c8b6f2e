"""Acceptance on the helicopter, boat and snakeboard sample scenes: Solve Trajectory then Bake,
checked on the BAKED F-curves in world space (frame_set + matrix_world), never on the
solver's own numbers alone; the worker's per-iteration progress; undo.

Each sample is built, solved (``solve_trajectory()``) and baked (``bake()``) once for the
module (a module-scoped fixture parametrized by vehicle); each test reopens the solved file.
"""
from __future__ import annotations

import math
import re
import time
import types

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytest.importorskip("scipy.spatial")

import build_boat_scene  # noqa: E402
import build_helicopter_scene  # noqa: E402
import build_snakeboard_scene  # noqa: E402
from operator_runs import hold_at_iteration, refused  # noqa: E402
from world_checks import min_clearance  # noqa: E402

SAMPLES = {"helicopter": build_helicopter_scene, "boat": build_boat_scene, "snakeboard": build_snakeboard_scene}
FIGURES: dict[str, float] = {}  # measured figures, printed at the end of the module


def build(kind: str) -> dict:
    names = SAMPLES[kind].build()
    bpy.context.scene.vehicle_motion.node_spacing = "PER_FRAME"  # nodes on frames: node(scene, frame)
    return names


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def solved(request, addon, tmp_path_factory):
    kind = request.param
    folder = tmp_path_factory.mktemp(kind)
    names = build(kind)
    setup = folder / "setup.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(setup))
    wall, cpu = time.perf_counter(), time.process_time()
    result = bpy.ops.vehicle_motion.solve_trajectory()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    scene = bpy.context.scene
    report = scene.vehicle_motion.last_report
    assert result == {"FINISHED"}, report
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"}, scene.vehicle_motion.last_report
    bake_report = scene.vehicle_motion.last_report
    stats = stored(bpy.data.objects[names["vehicle"]]).stats
    FIGURES.update({f"{kind}_solve_wall_s": wall, f"{kind}_solve_cpu_s": cpu,
                    f"{kind}_iterations": stats["iterations"], f"{kind}_max_violation": stats["max_constraint_violation"]})
    path = folder / "solved.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    yield types.SimpleNamespace(kind=kind, names=names, setup=setup, path=path, report=report, bake_report=bake_report)
    if kind == sorted(SAMPLES)[-1] and FIGURES:
        print(f"\nmeasured (bpy {bpy.app.version_string}):",
              ", ".join(f"{k} = {v:.6g}" for k, v in sorted(FIGURES.items())))


def open_solved(solved) -> tuple:
    bpy.ops.wm.open_mainfile(filepath=str(solved.path))
    return bpy.context.scene, bpy.data.objects[solved.names["vehicle"]]


def stored(obj):
    from vehicle_motion.addon import storage
    return storage.load(obj)


def frames(scene):
    vm = scene.vehicle_motion
    return range(vm.frame_start, vm.frame_end + 1)


def node(scene, frame: int) -> int:
    vm = scene.vehicle_motion
    return (frame - vm.frame_start) * vm.steps_per_frame


def rotation(axis: str, angle) -> np.ndarray:
    """(n, 3, 3) rotations about a coordinate axis."""
    a = np.atleast_1d(np.asarray(angle, dtype=float))
    c, s = np.cos(a), np.sin(a)
    i, j = {"X": (1, 2), "Y": (2, 0), "Z": (0, 1)}[axis]
    r = np.tile(np.eye(3), (len(a), 1, 1))
    r[:, i, i], r[:, i, j], r[:, j, i], r[:, j, j] = c, -s, s, c
    return r


def local_rotation(parent, child) -> np.ndarray:
    """The child's rotation in its parent's frame, from the evaluated world matrices."""
    local = np.array(parent.matrix_world.to_3x3().normalized().inverted() @ child.matrix_world.to_3x3().normalized())
    return local / np.linalg.norm(local, axis=0)


def expected_parts(kind: str, shape: dict) -> dict[str, np.ndarray]:
    """Role → the (nodes, 3, 3) rotation its child must show relative to the body (rest and delta
    rotations are identity in the samples): rotor spin about Z after the cyclic tilt (pitch about
    Y, roll about X), tail rotor spin about Y; snakeboard trucks ±wheel angle and the rider's twist
    (rotor angle) about Z."""
    if kind == "helicopter":
        tilt = rotation("Y", shape["pitch_tilt"]) @ rotation("X", shape["roll_tilt"])
        return {"main_rotor": tilt @ rotation("Z", shape["rotor_angle"]),
                "tail_rotor": rotation("Y", shape["tail_rotor_angle"])}
    if kind == "snakeboard":
        return {"truck_front": rotation("Z", shape["wheel_angle"]),
                "truck_rear": rotation("Z", -np.asarray(shape["wheel_angle"])),
                "rider": rotation("Z", shape["rotor_angle"])}
    return {}


# ----------------------------------------------------------------------------- the solve and the bake

def test_solve_converges_stores_and_bakes(solved):
    scene, obj = open_solved(solved)
    assert solved.report.startswith(f"Solved '{obj.name}': cost "), solved.report
    assert "s (scipy)" in solved.report and "baked frames 1–" in solved.report
    assert solved.bake_report.startswith(f"Baked frames 1–{solved.names['frame_end']} onto {obj.name}")
    s = obj.vehicle_motion
    assert s.has_trajectory and s.is_baked and s.original_action is not None
    assert obj.animation_data.action == s.baked_action != s.original_action
    trajectory = stored(obj)
    assert trajectory.stats["converged"] and trajectory.stats["max_constraint_violation"] < 1e-6
    assert len(trajectory.time) == node(scene, scene.vehicle_motion.frame_end) + 1
    assert trajectory.vehicle == solved.kind


def test_baked_world_poses_match_the_solved_trajectory(solved, vm):
    scene, obj = open_solved(solved)
    from vehicle_motion.core.lie import quaternion
    trajectory = stored(obj)
    offset = np.asarray(trajectory.stats.get("body_offset", (0.0, 0.0, 0.0)), dtype=float)  # the centre of mass
    worst_p = worst_r = 0.0
    for f in frames(scene):
        scene.frame_set(f)
        k = node(scene, f)
        origin = trajectory.position[k] - quaternion.to_matrix(np.asarray(trajectory.orientation[k])) @ offset
        p, r = vm.pose_error(obj, origin, trajectory.orientation[k])
        worst_p, worst_r = max(worst_p, p), max(worst_r, r)
    FIGURES[f"{solved.kind}_pose_error_position"], FIGURES[f"{solved.kind}_pose_error_rotation"] = worst_p, worst_r
    assert worst_p < 1e-5 and worst_r < 1e-5


def test_parts_are_baked(solved):
    scene, obj = open_solved(solved)
    trajectory = stored(obj)
    expected = expected_parts(solved.kind, trajectory.shape)
    if not expected:
        assert solved.kind == "boat" and not trajectory.shape
        pytest.skip("core's boat has no moving parts (its trajectory has no shape channels)")
    assert set(expected) == set(solved.names["parts"])
    s = obj.vehicle_motion
    worst = 0.0
    turned = {role: [] for role in expected}
    for f in frames(scene):
        scene.frame_set(f)
        k = node(scene, f)
        for role, rotations in expected.items():
            local = local_rotation(obj, getattr(s, role))
            worst = max(worst, float(np.max(np.abs(local - rotations[k]))))
            turned[role].append(local)
    for role in expected:
        child = getattr(s, role)
        assert child.vehicle_motion.is_baked and child.animation_data.action is not None, role
        angles = [math.acos(max(-1.0, min(1.0, (np.trace(a.T @ b) - 1) / 2)))
                  for a, b in zip(turned[role], turned[role][1:])]
        assert max(angles) > 0.01, f"{role} does not move"
    FIGURES[f"{solved.kind}_part_rotation_error"] = worst
    assert worst < 1e-5


# ----------------------------------------------------------------------------- limits, goal, obstacles

def _within(values, lo: float, hi: float, what: str) -> None:
    values = np.asarray(values, dtype=float)
    tol = 1e-6 * max(1.0, abs(lo), abs(hi))
    assert np.all(values >= lo - tol) and np.all(values <= hi + tol), \
        f"{what}: [{values.min():.6g}, {values.max():.6g}] outside [{lo:.6g}, {hi:.6g}]"


def test_limits_hold_at_every_frame(solved):
    scene, obj = open_solved(solved)
    s = obj.vehicle_motion
    trajectory = stored(obj)
    controls = {k: np.asarray(v, dtype=float) for k, v in trajectory.controls.items()}
    kind = solved.kind
    if kind == "helicopter":
        _within(controls["collective"], 0.0, s.max_collective, "collective")
        _within(controls["yaw"], -s.max_yaw, s.max_yaw, "yaw")
        pitch, roll = [], []
        for f in frames(scene):  # the cyclic tilt as the baked main rotor shows it
            scene.frame_set(f)
            axis = local_rotation(obj, s.main_rotor)[:, 2]
            pitch.append(math.atan2(axis[0], axis[2]))
            roll.append(-math.asin(axis[1]))
        _within(pitch, -s.max_tilt, s.max_tilt, "rotor pitch tilt (baked)")
        _within(roll, -s.max_tilt, s.max_tilt, "rotor roll tilt (baked)")
        FIGURES["helicopter_max_tilt_deg"] = math.degrees(max(np.max(np.abs(pitch)), np.max(np.abs(roll))))
    elif kind == "boat":
        for name, values in controls.items():
            _within(values, -s.max_thrust, s.max_thrust, name)
        limit = solved.names["speed_limit"]
        speed = np.linalg.norm(trajectory.linear_velocity, axis=1)
        _within(speed, 0.0, limit, "speed at the nodes")
        baked = []
        for f in frames(scene):
            scene.frame_set(f)
            baked.append(np.array(obj.matrix_world.translation))
        mean_speed = np.linalg.norm(np.diff(baked, axis=0), axis=1) * scene.render.fps
        _within(mean_speed, 0.0, limit, "speed between frames (baked)")
        FIGURES["boat_max_speed"] = float(np.max(mean_speed))
    else:
        _within(controls["rotor_torque"], -s.max_rotor_torque, s.max_rotor_torque, "rotor torque")
        _within(controls["steering_torque"], -s.max_steering_torque, s.max_steering_torque, "steering torque")
        phi = []
        for f in frames(scene):  # the wheel angle as the baked front truck shows it
            scene.frame_set(f)
            r = local_rotation(obj, s.truck_front)
            phi.append(math.atan2(r[1, 0], r[0, 0]))
        _within(phi, -s.max_wheel_angle, s.max_wheel_angle, "wheel angle (baked)")
        FIGURES["snakeboard_max_wheel_angle_deg"] = math.degrees(float(np.max(np.abs(phi))))


def test_goal_is_reached(solved):
    scene, obj = open_solved(solved)
    trajectory = stored(obj)
    end = scene.vehicle_motion.frame_end
    bpy.context.view_layer.update()
    scene.frame_set(end)
    position = np.array(obj.matrix_world.translation)
    heading = math.atan2(obj.matrix_world[1][0], obj.matrix_world[0][0])
    if solved.kind in ("helicopter", "boat"):  # landed / docked: on the empty, along its X axis, at rest
        mark = bpy.data.objects[solved.names.get("mark") or solved.names["berth"]]
        assert position == pytest.approx(np.array(mark.matrix_world.translation), abs=1e-5)
        assert heading == pytest.approx(math.atan2(mark.matrix_world[1][0], mark.matrix_world[0][0]), abs=1e-5)
        assert np.max(np.abs(trajectory.linear_velocity[-1])) < 1e-6
        assert np.max(np.abs(trajectory.angular_velocity[-1])) < 1e-6
    else:  # from rest to the keyed goal and speed
        module = build_snakeboard_scene
        assert position == pytest.approx([*module.GOAL, 0.0], abs=1e-5)
        assert heading == pytest.approx(0.0, abs=1e-5)
        assert abs(trajectory.linear_velocity[0][0]) < 1e-9
        assert trajectory.linear_velocity[-1][0] == pytest.approx(module.GOAL_SPEED, abs=1e-6)
        FIGURES["snakeboard_rotor_travel_rad"] = float(np.ptp(trajectory.shape["rotor_angle"]))


def test_baked_vehicle_never_enters_an_obstacle(solved):
    scene, obj = open_solved(solved)
    assert solved.names["obstacles"]
    worst = min_clearance(scene, obj, solved.names["obstacles"])
    FIGURES[f"{solved.kind}_min_obstacle_clearance_m"] = worst[0]
    assert worst[0] > 0.0, worst


# ----------------------------------------------------------------------------- progress and undo

def test_worker_reports_iterations_and_constraint_violation(addon):
    """The worker's status line names solver iteration k of the limit and the constraint violation,
    as core's solve_scenario callback reports them; at the end they are the outcome's."""
    from vehicle_motion.addon import scene_reader, solving
    names = build_helicopter_scene.build(max_iter=400)
    scene = bpy.context.scene
    problem = scene_reader.read_problem(scene, bpy.data.objects[names["vehicle"]])
    job = solving.SolveJob(problem).start()
    seen = []
    try:
        while not job.done:
            seen.append((job.iteration, *job.progress()))
            time.sleep(0.05)
        job.thread.join()
    finally:
        job.finish()
    outcome = job.outcome
    assert outcome.converged, outcome.summary()
    line = re.compile(r"Solving 'Helicopter': iteration (\d+) of 400(, constraint violation \S+)?, \d+ s "
                      r"\(limit 120 s\) — Esc to cancel")
    for k, _, text in seen:
        match = line.fullmatch(text)
        assert match and int(match.group(1)) == k, text
        # no violation before the solver's first report (its starting point, iteration 0); then always
        assert match.group(2) is not None or k == 0, text
    assert any(m.group(2) for m in (line.fullmatch(t) for _, _, t in seen)), seen
    iterations = [k for k, _, _ in seen]
    assert iterations == sorted(iterations)
    fractions = [f for _, f, _ in seen]
    assert all(0.0 <= f < 1.0 for f in fractions)
    assert job.iteration == outcome.iterations > 0
    assert job.violation == pytest.approx(outcome.max_violation, rel=1e-12, abs=1e-300)
    _, text = job.progress()
    assert f"iteration {outcome.iterations} of 400, constraint violation {outcome.max_violation:.1e}" in text
    FIGURES["progress_updates_seen"] = len(set(iterations))


def test_worker_cancels_while_solving(addon):
    from vehicle_motion.addon import scene_reader, solving
    names = build_boat_scene.build(steps_per_frame=4)
    scene = bpy.context.scene
    boat = bpy.data.objects[names["vehicle"]]
    problem = scene_reader.read_problem(scene, boat)
    job = solving.SolveJob(problem)
    reached = hold_at_iteration(job, 2)  # a fixed sleep let the ~1 s solve finish first on a fast machine
    job.start()
    try:
        assert reached.wait(30.0), "the solve never reached its second iteration"
        assert solving.running("Boat") and not job.done
        fraction, text = job.progress()
        assert 0.0 < fraction < 1.0 and text.startswith("Solving 'Boat': iteration ")
        started = time.perf_counter()
        job.cancel(wait=30.0)
        FIGURES["cancel_latency_s"] = time.perf_counter() - started
        assert job.done and job.outcome.cancelled, job.outcome
        assert "cancelled" in job.outcome.summary()
    finally:
        job.finish()
    assert not solving.running()
    assert not boat.vehicle_motion.has_trajectory and not boat.vehicle_motion.is_baked


def _snapshot(vehicle: str, parts: list[str]) -> dict:
    scene = bpy.context.scene
    obj = bpy.data.objects[vehicle]
    poses = {}
    for f in (1, 13, 25, scene.vehicle_motion.frame_end):
        scene.frame_set(f)
        poses[f] = np.array(obj.matrix_world)
    return {"action": obj.animation_data.action.name, "poses": poses,
            "stored": obj.vehicle_motion.has_trajectory, "baked": obj.vehicle_motion.is_baked,
            "actions": sorted(a.name for a in bpy.data.actions),
            "parts": {p: bpy.data.objects[p].animation_data is not None and
                      bpy.data.objects[p].animation_data.action is not None for p in parts}}


def test_undo_restores_the_scene(addon):
    """Undo works with the bpy module in background mode: the file has a window, and an operator
    called with ``undo=True`` (bpy.ops.x.y('EXEC_DEFAULT', True)) pushes its undo step like a button
    press does. Solve (which bakes) and Bake are one step each; two undos give back the scene."""
    names = build_helicopter_scene.build()
    vehicle, parts = names["vehicle"], list(names["parts"].values())
    assert len(bpy.context.window_manager.windows) >= 1
    before = _snapshot(vehicle, parts)
    assert bpy.ops.ed.undo_push(message="sample scene") == {"FINISHED"}
    assert bpy.ops.vehicle_motion.solve_trajectory("EXEC_DEFAULT", True) == {"FINISHED"}
    solved = _snapshot(vehicle, parts)
    assert bpy.ops.vehicle_motion.bake("EXEC_DEFAULT", True) == {"FINISHED"}
    assert solved["stored"] and solved["baked"] and solved["action"] != before["action"]
    assert all(solved["parts"].values())
    assert np.max(np.abs(solved["poses"][13] - before["poses"][13])) > 0.01  # the motion changed

    assert bpy.ops.ed.undo() == {"FINISHED"}  # the Bake
    assert _snapshot(vehicle, parts)["action"] == solved["action"]
    assert bpy.ops.ed.undo() == {"FINISHED"}  # the Solve
    after = _snapshot(vehicle, parts)
    assert after["action"] == before["action"] and after["actions"] == before["actions"]
    assert not after["stored"] and not after["baked"] and after["parts"] == before["parts"]
    for f, pose in before["poses"].items():
        assert after["poses"][f] == pytest.approx(pose, abs=1e-9), f
    assert bpy.ops.ed.redo() == {"FINISHED"}  # and redo brings the solve back
    assert _snapshot(vehicle, parts)["stored"]


def test_a_failure_inside_core_is_one_line_and_changes_nothing(addon, monkeypatch):
    """A bug in core (here: the optimiser raising NotImplementedError) is reported in one line naming
    the vehicle, from the operator and from solving.solve (which batch_bake uses), and nothing changes."""
    from vehicle_motion.addon import scene_reader, solving
    import vehicle_motion.core.dmoc as dmoc

    def broken(*args, **kwargs):
        raise NotImplementedError()

    monkeypatch.setattr(dmoc, "solve_scenario", broken)
    names = build_helicopter_scene.build()
    heli = bpy.data.objects[names["vehicle"]]
    refused(heli, r"^Error: 'Helicopter': the optimiser failed \(internal error NotImplementedError\); "
                  r"nothing changed$")
    outcome = solving.solve(scene_reader.read_problem(bpy.context.scene, heli))
    assert outcome.trajectory is None and not outcome.converged
    assert outcome.summary() == "'Helicopter': the optimiser failed (internal error NotImplementedError); nothing changed"
