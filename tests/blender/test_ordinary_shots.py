"""Ordinary shots, built the way an animator builds them, solved and baked in real bpy: the frame
range comes from the keys, presets are real size in centimetre and millimetre scenes, a bare proxy
solves, keys on sub-frames at 29.97 fps are met at their own time, and drivers on baked channels
are reported. Everything is measured on the baked scene (frame_set + matrix_world)."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from operator_runs import solve_active as solve, stored  # noqa: E402
from small_shots import keyed_car  # noqa: E402


def world_at(scene, obj, frame: float) -> np.ndarray:
    whole = math.floor(frame)
    scene.frame_set(whole, subframe=frame - whole)
    return np.array(obj.matrix_world.translation)


def test_the_solve_spans_the_keys_not_the_add_on_range(empty_scene):
    """A car keyed at frames 1 and 73 in a 1–73 scene, the add-on's own range left at 1–250."""
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 73
    assert scene.vehicle_motion.frame_end == 250 and not scene.vehicle_motion.use_frame_range
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (73, (12.0, 0.0), 0.0)])
    report = solve(scene, car)
    assert "baked frames 1–73" in report
    trajectory = stored(car)
    assert trajectory.time[-1] == pytest.approx(72 / 24)
    assert world_at(scene, car, 73) == pytest.approx([12.0, 0.0, 0.0], abs=1e-4)  # the goal is the goal
    assert world_at(scene, car, 120) == pytest.approx([12.0, 0.0, 0.0], abs=1e-4)  # then it holds its pose


def test_keys_outside_the_scene_range_are_clipped_with_a_warning(empty_scene):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0), (97, (30.0, 0.0), 0.0)])
    report = solve(scene, car)
    assert "keys at frames 97 are outside the scene's frame range 1–49 and ignored" in report
    assert "baked frames 1–49" in report
    assert world_at(scene, car, 49) == pytest.approx([8.0, 0.0, 0.0], abs=1e-4)


def test_own_frame_range_overrides_the_keys(empty_scene):
    scene = empty_scene
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (25, (2.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0)])
    vm = scene.vehicle_motion
    vm.use_frame_range, vm.frame_start, vm.frame_end = True, 1, 25
    report = solve(scene, car)
    assert "baked frames 1–25" in report and "outside frames 1–25" in report


@pytest.mark.parametrize("unit_scale", [1.0, 0.01, 0.001], ids=["metres", "centimetres", "millimetres"])
def test_presets_are_real_size_at_any_unit_scale(empty_scene, unit_scale):
    """The same 12 m shot modelled in metres, centimetres and millimetres, the Hatchback preset left as
    it is: the solve sees a 0.30 m wheel and a 2.55 m wheelbase, and bakes the same motion in metres."""
    from vehicle_motion.addon import scene_reader
    scene = empty_scene
    scene.unit_settings.scale_length = unit_scale
    unit = 1.0 / unit_scale
    scene.frame_start, scene.frame_end = 1, 73
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (73, (12.0, 2.0), 0.0)], unit=unit)
    problem = scene_reader.read_problem(scene, car)
    vehicle = problem.scenario["vehicle"]
    assert vehicle["wheel_radius"] == pytest.approx(0.30) and vehicle["wheelbase"] == pytest.approx(2.55)
    assert problem.scenario["goal"]["position"] == pytest.approx([12.0, 2.0], abs=1e-6)
    solve(scene, car)
    trajectory = stored(car)
    spin = np.asarray(trajectory.shape["wheel_angle"])
    path = float(np.sum(np.linalg.norm(np.diff(np.asarray(trajectory.position)[:, :2], axis=0), axis=1))) / unit
    assert abs(spin[-1] - spin[0]) * 0.30 == pytest.approx(path, rel=0.02)  # a real wheel rolls the path
    middle = world_at(scene, car, 37) / unit
    FIGURES.setdefault("middle", {})[unit_scale] = middle
    if len(FIGURES["middle"]) == 3:
        a, b, c = (FIGURES["middle"][s] for s in (1.0, 0.01, 0.001))
        assert np.allclose(a, b, atol=1e-3) and np.allclose(a, c, atol=1e-3)


FIGURES: dict = {}


def test_a_proxy_without_wheels_solves_and_bakes_its_body(empty_scene):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    proxy = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (8.0, 1.0), 0.0)], name="Proxy", wheels=False)
    report = solve(scene, proxy)
    assert "'Proxy' has no Rear Left Wheel, Rear Right Wheel, Front Left Wheel, Front Right Wheel objects " \
           "(Vehicle › Parts): the bake moves its body only" in report
    assert world_at(scene, proxy, 49) == pytest.approx([8.0, 1.0, 0.0], abs=1e-4)
    assert proxy.vehicle_motion.is_baked


def test_sub_frame_keys_at_29_97_fps_are_met_at_their_own_time(empty_scene):
    """Keys at frames 1, 60.5 (in between) and 120.25 (the goal) at 30000/1001 fps: the goal exactly, the
    middle key within Key Tolerance at frame 60.5 itself."""
    scene = empty_scene
    scene.render.fps, scene.render.fps_base = 30, 1.001
    scene.frame_start, scene.frame_end = 1, 130
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (60.5, (7.0, 0.6), 0.15), (120.25, (20.0, 3.0), 0.2)])
    tolerance = scene.vehicle_motion.key_tolerance
    report = solve(scene, car)
    assert "baked frames 1–120.25" in report
    assert world_at(scene, car, 120.25) == pytest.approx([20.0, 3.0, 0.0], abs=1e-4)
    miss = float(np.linalg.norm(world_at(scene, car, 60.5)[:2] - [7.0, 0.6]))
    assert miss <= tolerance + 1e-4
    trajectory = stored(car)
    assert trajectory.time[-1] == pytest.approx(119.25 * 1.001 / 30)


def test_a_driver_on_a_baked_channel_is_reported(empty_scene):
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (8.0, 0.0), 0.0)])
    driver = car.driver_add("location", 1).driver
    driver.expression = "0.0"
    report = solve(scene, car)
    assert "a driver on 'Car' Y Location overrides the baked motion: mute or remove it" in report


def test_an_impossible_timing_is_refused_before_solving_in_the_artists_words(empty_scene, monkeypatch):
    """20 m in 2 s from rest is more than a hatchback's torque allows: refused naming the frames, the
    distance, the limit and what to change; the solver never runs and nothing in the scene changes."""
    from vehicle_motion.core import dmoc
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 49
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (49, (20.0, 0.0), 0.0)])
    monkeypatch.setattr(dmoc, "solve_scenario", lambda *a, **k: pytest.fail("solved an impossible shot"))
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = car
    action = car.animation_data.action
    with pytest.raises(RuntimeError) as info:
        bpy.ops.vehicle_motion.solve_trajectory()
    message = str(info.value).strip()
    assert "\n" not in message
    assert message.endswith("frames 1–49: 'Car' must cover 20 m in 2 s from rest (key of 'Car' at frame 49); "
                            "with its Max Torque of 2000 N·m it covers at most 10.9 m: add about 17 frames, "
                            "move the key, or raise Max Torque")
    assert car.animation_data.action == action and not car.vehicle_motion.is_baked


def test_a_failed_solve_names_frames_and_the_limits_that_bind(empty_scene, capsys):
    """A slalom at 10 m/s with gates 7.6 m apart every 0.75 s: possible by distance (the check before
    solving passes) but not by steering: the report names the frames and the settings, never the
    solver's constraint labels (those go to the console)."""
    scene = empty_scene
    scene.frame_start, scene.frame_end = 1, 55
    car = keyed_car(scene, [(1, (0.0, 0.0), 0.0), (19, (7.0, 3.0), 0.0), (37, (14.0, -3.0), 0.0),
                            (55, (21.0, 3.0), 0.0)])
    for frame in (19, 37, 55):  # only the positions are keyed in between
        car.keyframe_delete("rotation_euler", frame=frame)
    car.vehicle_motion.speed = 10.0
    scene.vehicle_motion.solver_backend = "SCIPY"
    scene.vehicle_motion.max_iter = 200
    bpy.context.view_layer.objects.active = car
    with pytest.raises(RuntimeError) as info:
        bpy.ops.vehicle_motion.solve_trajectory()
    message = str(info.value)
    assert "'Car' ran out of iterations (Solve Settings › Max Iterations) before it met every key: in frames " \
           in message
    assert "Max Steering Rate (1.2 1/s)" in message and "add frames, move the keys apart, or raise" in message
    for internal in ("dynamics", "eq.", "momentum", "node", "step", "violation"):
        assert internal not in message
    assert "dynamics" in capsys.readouterr().out  # the solver's account is on the console
    assert not car.vehicle_motion.is_baked


@pytest.mark.parametrize("unit_scale", [1.0, 0.01, 0.001], ids=["metres", "centimetres", "millimetres"])
@pytest.mark.parametrize("kind", ["helicopter", "boat"])
def test_helicopter_and_boat_presets_are_real_size_at_any_unit_scale(empty_scene, kind, unit_scale):
    """A light helicopter flying 6 m and a RIB boat (default hull) going 6 m, proxies (empties) keyed in a
    metre, centimetre and millimetre scene, presets left as they are: the solve sees the same metres,
    and the baked goal is met in scene units."""
    from small_shots import add_object
    from vehicle_motion.addon import scene_reader
    from vehicle_motion.core.vehicles.boat import Boat
    scene = empty_scene
    scene.render.fps = 8
    scene.unit_settings.scale_length = unit_scale
    unit = 1.0 / unit_scale
    vehicle = add_object(kind.title(), kind="EMPTY")
    vehicle.vehicle_motion.preset = "LIGHT_HELICOPTER" if kind == "helicopter" else "RIB_BOAT"
    vehicle.rotation_mode = "QUATERNION"
    z = 5.0 if kind == "helicopter" else Boat().float_height()
    end = 17 if kind == "helicopter" else 41
    scene.frame_start, scene.frame_end = 1, end
    for frame, x in ((1, 0.0), (end, 6.0)):
        vehicle.location = (x * unit, 0.0, z * unit)
        vehicle.keyframe_insert("location", frame=frame)
        vehicle.keyframe_insert("rotation_quaternion", frame=frame)
    problem = scene_reader.read_problem(scene, vehicle)
    sc = problem.scenario
    assert sc["goal"]["position"] == pytest.approx([6.0, 0.0, z], abs=1e-4)
    if kind == "helicopter":
        assert sc["vehicle"]["mass"] == pytest.approx(600.0) and sc["vehicle"]["main_rotor_offset"] == pytest.approx(1.2)
    else:
        assert sc["vehicle"]["mass"] == pytest.approx(800.0) and "hull_vertices" not in sc["vehicle"]
    solve(scene, vehicle)
    assert world_at(scene, vehicle, end) / unit == pytest.approx([6.0, 0.0, z], abs=1e-4)
