"""Live Solve (addon.live): a solved vehicle re-solved, warm-started, when a key or an obstacle moves.

A small car in a centimetre scene (1 unit = 1 cm) drives 12 m in 4 s past a 1 m box it must swerve
around; Solve Trajectory stores it (not baked, so its keys are the ones it plays), then the tests move
the goal key or the box and re-solve through addon.live — headless (``live.resolve``) and through the
depsgraph handler and the timer (``live.tick``, called by hand: background mode runs no timers).
"""
from __future__ import annotations

import time

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from operator_runs import make_active  # noqa: E402
from small_shots import add_object  # noqa: E402

GOAL_FRAME = 33


def live():
    from vehicle_motion.addon import live as module
    return module


def _update() -> None:
    bpy.context.view_layer.update()   # fires depsgraph_update_post, as the UI does after an edit


def _key_goal(car, y_cm: float) -> None:
    """Key the car's goal (frame 33) at (1200, y) cm, as an artist does: go there, move it, insert a key (the UI
    updates the scene after the insert — a frame change takes the update without depsgraph_update_post)."""
    scene = bpy.context.scene
    frame = scene.frame_current
    scene.frame_set(GOAL_FRAME)
    car.location = (1200.0, y_cm, 0.0)
    car.keyframe_insert("location", frame=GOAL_FRAME)
    _update()
    scene.frame_set(frame)


@pytest.fixture
def solved(empty_scene):
    """(scene, car, box): the car solved and stored (not baked), Live Solve off."""
    scene = empty_scene
    scene.render.fps = 8
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 0.01
    car = add_object("Car")
    car.scale = (200.0, 90.0, 50.0)
    car.rotation_mode = "XYZ"
    car.vehicle_motion.preset = "HATCHBACK"
    car.vehicle_motion.car_geometry = "TYPED"   # a proxy: no wheel objects
    for frame, x in ((1, 0.0), (GOAL_FRAME, 1200.0)):
        car.location = (x, 0.0, 0.0)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, GOAL_FRAME
    vm = scene.vehicle_motion
    vm.steps_per_frame, vm.solver_backend = 1, "SCIPY"
    if "node_spacing" in vm.bl_rna.properties:   # steps per frame, whatever the default spacing: a fixed shape
        vm.node_spacing = "PER_FRAME"
    box = add_object("Box")
    box.scale, box.location = (100.0, 100.0, 100.0), (600.0, 80.0, 50.0)
    box.vehicle_motion.is_obstacle = True
    scene.frame_set(1)
    make_active(car)
    assert bpy.ops.vehicle_motion.solve_trajectory(bake_after_solve=False) == {"FINISHED"}, vm.last_report
    assert not car.vehicle_motion.is_baked
    return scene, car, box


def _points(car) -> np.ndarray:
    from vehicle_motion.addon import preview
    return np.array(preview.path_points(car))


def _cold_iterations(scene, car) -> int:
    from vehicle_motion.addon import scene_reader, solving
    outcome = solving.solve(scene_reader.read_problem(scene, car))
    assert outcome.converged and outcome.warm_start == "none"
    return outcome.iterations


def _stored_stats(car) -> dict:
    from vehicle_motion.addon import storage
    return storage.load(car).stats


# ----------------------------------------------------------------------------- warm re-solves

def test_moved_goal_key_resolves_warm(solved):
    scene, car, _ = solved
    before, actions = _points(car), {a.name for a in bpy.data.actions}
    _key_goal(car, 80.0)
    outcome = live().resolve(car, scene)
    assert outcome.converged and outcome.warm_start == "primal-dual"
    assert _stored_stats(car)["warm_start"] == "primal-dual"
    assert outcome.iterations < _cold_iterations(scene, car)
    after = _points(car)
    assert after[-1] == pytest.approx([1200.0, 80.0, 0.0], abs=0.5)   # the new goal, in centimetres
    assert np.max(np.abs(after - before)) > 40.0
    report = scene.vehicle_motion.last_report
    assert report.startswith("Live Solve: re-solved 'Car' in") and "warm start" in report and "; " not in report
    # stored, not baked: no new action, the car plays its own keys
    assert not car.vehicle_motion.is_baked and {a.name for a in bpy.data.actions} == actions
    assert outcome.gather_time_s > 0.0 and outcome.wall_time_s > 0.0


def test_moved_obstacle_resolves_warm(solved):
    scene, car, box = solved
    before = _points(car)
    box.location.y += 50.0   # half a metre away from the path: the swerve shrinks
    outcome = live().resolve(car, scene)
    assert outcome.converged and outcome.warm_start == "primal-dual"
    assert outcome.iterations < _cold_iterations(scene, car)
    after = _points(car)
    assert np.max(np.abs(after - before)) > 20.0
    assert abs(after[:, 1].min()) < abs(before[:, 1].min())


def test_another_shape_starts_cold(solved):
    scene, car, _ = solved
    vm = scene.vehicle_motion
    vm.steps_per_frame = 2   # twice the steps: the last solve does not fit
    from vehicle_motion.addon import scene_reader, solving
    old = live()._solutions["Car"].trajectories   # 32 steps: core refuses them, the segment solves cold
    outcome = solving.solve(scene_reader.read_problem(scene, car), initial=old)
    assert outcome.converged and not outcome.error and outcome.warm_start == "none"
    outcome = live().resolve(car, scene)
    assert outcome.converged and not outcome.error and outcome.warm_start == "none"
    assert "cold start" in vm.last_report
    again = live().resolve(car, scene)   # the cache now holds the 64-step solve
    assert again.warm_start == "primal-dual"
    from scene_builders import constraint_empty
    constraint_empty(scene, "Stop", "STOP", (400.0, -60.0, 0.0), size=5.0, frame=17)   # two segments now
    outcome = live().resolve(car, scene)
    assert not outcome.error and outcome.segments == 2 and outcome.warm_start == "none"


def test_refused_and_failed_live_solves_leave_the_stored_path(solved):
    scene, car, _ = solved
    vm = scene.vehicle_motion
    stored = car.vehicle_motion.trajectory_data
    car.vehicle_motion.max_torque = 0.0   # the reader refuses it
    outcome = live().resolve(car, scene)
    assert outcome.error and "Max Torque" in outcome.error
    assert vm.last_report.startswith("Live Solve: ") and "unchanged" in vm.last_report and "; " not in vm.last_report
    assert car.vehicle_motion.trajectory_data == stored
    car.vehicle_motion.max_torque = 2000.0
    vm.max_iter = 2
    _key_goal(car, 600.0)   # six metres sideways in two iterations: no
    outcome = live().resolve(car, scene)
    assert not outcome.converged and not outcome.error
    assert "did not re-solve" in vm.last_report and "unchanged" in vm.last_report and "; " not in vm.last_report
    assert car.vehicle_motion.trajectory_data == stored


# ----------------------------------------------------------------------------- the handler and the timer

def test_handler_marks_key_and_obstacle_moves_only(solved):
    scene, car, box = solved
    other = add_object("Lamp", kind="EMPTY")
    _key_goal(car, 30.0)
    _update()
    assert live().pending() == []   # Live Solve off: nothing is followed
    scene.vehicle_motion.live_solve = True
    _update()
    assert live().pending() == ["Car"]   # the key moved since the solve
    live().stop()
    live().resolve(car, scene)
    _update()
    assert live().pending() == []   # storing the re-solve is no change
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"} and car.vehicle_motion.is_baked
    _update()
    assert live().pending() == []   # nor is baking it: the keys are the same
    other.location.x += 300.0
    _update()
    scene.frame_set(20)
    _update()
    assert live().pending() == []   # an unrelated object, a frame change
    box.location.x += 30.0
    _update()
    assert live().pending() == ["Car"]
    box.location.x -= 30.0
    _update()
    assert live().pending() == []   # back where it was solved


def test_timer_resolves_after_changes_and_live_off_bakes(solved, monkeypatch):
    scene, car, _ = solved
    vm = scene.vehicle_motion
    monkeypatch.setattr(live(), "DEBOUNCE_S", 0.0)
    monkeypatch.setattr(live(), "MAIN_THREAD_S", 60.0)   # the first solve in a session is slow: stay on this thread
    vm.live_solve = True
    assert "Live Solve follows 'Car'" in vm.last_report
    _key_goal(car, 50.0)
    _update()
    assert live().tick() is None   # a quick warm solve (< MAIN_THREAD_S): done on this thread
    assert live().pending() == [] and vm.last_report.startswith("Live Solve: re-solved 'Car'")
    assert _points(car)[-1] == pytest.approx([1200.0, 50.0, 0.0], abs=0.5)
    vm.live_solve = False
    assert car.vehicle_motion.is_baked and vm.last_report.startswith("Live Solve off: baked 'Car'")
    scene.frame_set(GOAL_FRAME)
    assert np.array(car.matrix_world.translation) == pytest.approx([1200.0, 50.0, 0.0], abs=0.5)


def test_worker_resolve_and_a_change_while_it_runs(solved, monkeypatch):
    from vehicle_motion.addon import solving
    scene, car, _ = solved
    monkeypatch.setattr(live(), "DEBOUNCE_S", 0.0)
    monkeypatch.setattr(live(), "MAIN_THREAD_S", 0.0)   # every solve goes to the worker
    scene.vehicle_motion.live_solve = True
    _key_goal(car, 40.0)
    _update()
    assert live().tick() == live().POLL_S and solving.running("Car")
    assert "in the background" in scene.vehicle_motion.last_report
    _key_goal(car, 90.0)   # while it solves: another re-solve after it
    _update()
    assert live().pending() == ["Car"]
    deadline = time.perf_counter() + 60.0
    wait = live().POLL_S
    while wait is not None and time.perf_counter() < deadline:
        time.sleep(wait)
        wait = live().tick()
    assert wait is None and not solving.running()
    assert _points(car)[-1] == pytest.approx([1200.0, 90.0, 0.0], abs=0.5)
    assert _stored_stats(car)["warm_start"] == "primal-dual"
    scene.vehicle_motion.live_solve = False


# ----------------------------------------------------------------------------- bad input

def test_vehicle_deleted_while_pending(solved, monkeypatch):
    scene, car, _ = solved
    monkeypatch.setattr(live(), "DEBOUNCE_S", 0.0)
    scene.vehicle_motion.live_solve = True
    _key_goal(car, 50.0)
    _update()
    assert live().pending() == ["Car"]
    bpy.data.objects.remove(car)
    assert live().tick() is None
    assert scene.vehicle_motion.last_report == ("Live Solve: 'Car' was deleted or renamed before its re-solve, "
                                                "nothing solved")
    outcome = live().resolve(car, scene)   # a reference to the deleted object
    assert outcome.error and scene.vehicle_motion.last_report.startswith("Live Solve: the vehicle was deleted")


def test_live_on_without_a_solved_vehicle(empty_scene, monkeypatch):
    from scene_builders import small_car
    scene = empty_scene
    monkeypatch.setattr(live(), "DEBOUNCE_S", 0.0)
    car = small_car(scene)
    scene.vehicle_motion.live_solve = True
    assert scene.vehicle_motion.last_report.startswith("Live Solve is on, but no vehicle in 'Scene' has a "
                                                       "solved trajectory yet")
    car.location.x += 1.0
    car.keyframe_insert("location", frame=25)
    _update()
    assert live().pending() == [] and live().tick() is None
    scene.vehicle_motion.live_solve = False


def test_file_load_clears_the_cache(solved):
    scene, car, _ = solved
    assert "Car" in live()._solutions
    bpy.ops.wm.read_homefile(use_empty=True)
    assert live()._solutions == {} and live().pending() == []
