"""Simulate (joystick mode): keyed control channels drive the integrator; results checked in world space."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from world_checks import world_positions  # noqa: E402

FPS = 8


def setup_scene(scene, frame_end=17, spf=2):
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    vm = scene.vehicle_motion
    vm.frame_start, vm.frame_end, vm.steps_per_frame = 1, frame_end, spf


def key(obj, name, frame, value):
    obj[name] = value
    obj.keyframe_insert(f'["{name}"]', frame=frame)


def test_car_follows_its_keyed_controls(empty_scene, vm):
    from scene_builders import small_car
    from vehicle_motion.addon import action_compat
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.simulation import simulate
    scene = empty_scene
    car = small_car(scene, keys=((1, (2.0, 1.0, 0.0), 0.3), (17, (2.0, 1.0, 0.0), 0.3)))
    setup_scene(scene)
    car.vehicle_motion.speed = 4.0
    key(car, "torque", 1, 0.0)
    key(car, "torque", 17, 800.0)
    key(car, "steering_rate", 1, 0.4)
    key(car, "steering_rate", 9, -0.4)
    vm.make_active(car)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    assert car.vehicle_motion.is_baked and car.vehicle_motion.has_trajectory
    assert scene.vehicle_motion.last_report.startswith("Simulated 'Car': 32 steps of 0.0625 s from frame 1")
    # the same run straight through core, with the channels sampled by hand at every step
    curves = {fc.data_path: fc for fc in action_compat.fcurves(action_compat.ActionRef(
        car.vehicle_motion.original_action, action_compat.find_slot(car.vehicle_motion.original_action,
                                                                    car.vehicle_motion.original_slot)))}
    steps = [1 + k / 2 for k in range(32)]
    s = car.vehicle_motion
    expected = simulate(Table({
        "vehicle": {"type": "car", "preset": "hatchback", "wheel_inertia": s.wheel_inertia,
                    "wheel_radius": s.wheel_radius, "wheelbase": s.wheelbase,
                    "max_steering_angle": s.max_steering_angle, "max_steering_rate": s.max_steering_rate},
        "integrator": {"dt": 1 / 16, "steps": 32},
        "initial": {"position": [2.0, 1.0], "heading": 0.3, "wheel_rate": 4.0 / s.wheel_radius},
        "controls": {name: {"values": [curves[f'["{name}"]'].evaluate(f) for f in steps]}
                     for name in ("torque", "steering_rate")},
    }))
    baked = world_positions(scene, car, range(1, 18))
    assert baked == pytest.approx(expected.position[::2], abs=1e-5)
    assert baked[-1][0] - baked[0][0] > 5.0  # it drove off
    scene.frame_set(17)
    heading = math.atan2(car.matrix_world[1][0], car.matrix_world[0][0])
    assert heading == pytest.approx(float(expected.heading[-1]), abs=1e-5)


def test_helicopter_hovers_on_its_weight(empty_scene, vm):
    scene = empty_scene
    setup_scene(scene)
    heli = vm.add_object("Heli")
    rotor = vm.add_object("Rotor", parent=heli, kind="EMPTY")
    s = heli.vehicle_motion
    s.preset = "LIGHT_HELICOPTER"
    s.main_rotor = rotor
    heli.rotation_mode = "QUATERNION"
    heli.location = (0.0, 0.0, 20.0)
    heli.keyframe_insert("location", frame=1)
    heli["collective"] = s.mass * 9.81
    vm.make_active(heli)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    positions = world_positions(scene, heli, range(1, 18))
    assert positions == pytest.approx(np.tile([0.0, 0.0, 20.0], (17, 1)), abs=1e-6)
    scene.frame_set(9)
    angle = rotor.matrix_local.to_euler("XYZ").z
    assert math.remainder(angle - s.rotor_speed * 1.0, math.tau) == pytest.approx(0.0, abs=1e-3)
    assert "yaw, pitch_tilt, roll_tilt channel: zero" in scene.vehicle_motion.last_report


def test_boat_thrusters_push_it_forward(empty_scene, vm):
    scene = empty_scene
    setup_scene(scene, frame_end=25, spf=4)
    boat = vm.add_object("Boat", kind="EMPTY")  # a proxy: the default hull (a mesh would be the hull: test_boat_hull)
    boat.vehicle_motion.preset = "RIB_BOAT"
    boat.location = (0.0, 0.0, 0.084)
    boat.keyframe_insert("location", frame=1)
    boat["thruster_1"] = 800.0
    boat["thruster_2"] = 800.0
    vm.make_active(boat)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    positions = world_positions(scene, boat, (1, 13, 25))
    assert positions[2][0] > positions[1][0] > positions[0][0] + 0.1
    assert abs(positions[2][1]) < 1e-3  # equal thrusters: straight ahead


def test_snakeboard_and_rigid_body_run(empty_scene, vm):
    scene = empty_scene
    setup_scene(scene)
    board = vm.add_object("Board")
    board.vehicle_motion.preset = "SNAKEBOARD"
    board.keyframe_insert("location", frame=1)
    for frame, value in ((1, 0.0), (5, 30.0), (9, -30.0), (13, 30.0), (17, 0.0)):
        key(board, "rotor_torque", frame, value)
        key(board, "steering_torque", frame, value / 6.0)
    vm.make_active(board)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    assert board.vehicle_motion.is_baked
    box = vm.add_object("Box")
    box.vehicle_motion.vehicle_type = "RIGID_BODY"
    box.location = (0.0, 0.0, 10.0)
    box.keyframe_insert("location", frame=1)
    vm.make_active(box)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    scene.frame_set(17)
    assert box.matrix_world.translation.z == pytest.approx(10.0 - 0.5 * 9.81 * 2.0**2, abs=1e-6)
    assert "none of the control channels" not in scene.vehicle_motion.last_report  # a rigid body has none


def test_control_over_its_limit_names_the_frame(empty_scene, vm):
    from scene_builders import small_car
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (17, (0.0, 0.0, 0.0), 0.0)))
    setup_scene(scene)
    key(car, "torque", 1, 0.0)
    key(car, "torque", 17, 4000.0)  # max_torque 2000 is passed half way
    vm.make_active(car)
    actions = {a.name for a in bpy.data.actions}
    with pytest.raises(RuntimeError, match=r"'Car' control 'torque' is 2[0-9.]+ at frame 9\.5, outside its "
                                           r"limits \[-2000, 2000\]"):
        bpy.ops.vehicle_motion.simulate()
    assert not car.vehicle_motion.is_baked and not car.vehicle_motion.has_trajectory
    assert {a.name for a in bpy.data.actions} == actions


def test_no_channels_coasts_with_a_warning(empty_scene, vm):
    from scene_builders import small_car
    scene = empty_scene
    car = small_car(scene, keys=((1, (0.0, 0.0, 0.0), 0.0), (17, (0.0, 0.0, 0.0), 0.0)))
    setup_scene(scene)
    car.vehicle_motion.speed = 3.0
    vm.make_active(car)
    assert bpy.ops.vehicle_motion.simulate() == {"FINISHED"}
    assert "has none of the control channels torque, steering_rate" in scene.vehicle_motion.last_report
    scene.frame_set(17)
    assert car.matrix_world.translation.x == pytest.approx(6.0, abs=1e-4)  # 3 m/s for 2 s, no friction
