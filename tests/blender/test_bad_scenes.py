"""Bad scenes: Solve Trajectory refuses with one line naming the object or frame (bpy.ops raises
RuntimeError with the operator's error report) and the scene is left as it was."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
import build_car_tunnel_scene as sample  # noqa: E402


def snapshot() -> dict:
    """Everything a solve could change: poses, actions, stored and bake state, the frame."""
    scene = bpy.context.scene
    objects = {}
    for ob in bpy.data.objects:
        s = ob.vehicle_motion
        anim = ob.animation_data
        objects[ob.name] = (np.round(np.array(ob.matrix_world), 9).tolist(), tuple(ob.location),
                            tuple(ob.rotation_euler), anim.action.name if anim and anim.action else None,
                            s.has_trajectory, s.trajectory_data, s.is_baked)
    return {"frame": (scene.frame_current, scene.frame_subframe), "objects": objects,
            "actions": sorted(a.name for a in bpy.data.actions)}


def refused(vehicle, pattern: str, **props) -> None:
    """Solve refuses with a message matching ``pattern``; nothing in the scene changes."""
    view_layer = bpy.context.view_layer
    view_layer.objects.active = vehicle
    view_layer.update()  # the evaluated scene is what must not change (evaluation applies the keys)
    before = snapshot()
    with pytest.raises(RuntimeError, match=pattern) as info:
        bpy.ops.vehicle_motion.solve_trajectory(**props)
    assert "\n" not in str(info.value).strip(), "one line"
    assert snapshot() == before


@pytest.fixture
def tunnel(addon):
    names = sample.build(8)
    return bpy.context.scene, bpy.data.objects[names["car"]]


@pytest.fixture
def car(empty_scene):
    from test_scene_reader import small_car
    return small_car(empty_scene)


def test_no_keyframes(car):
    car.animation_data_clear()
    refused(car, r"'Car' has no keyframes: key its location at the start frame 1")


def test_single_keyframe(empty_scene):
    from test_scene_reader import small_car
    car = small_car(empty_scene, keys=((1, (0.0, 0.0, 0.0), 0.0),))
    empty_scene.vehicle_motion.frame_end = 25
    refused(car, r"'Car' has a single keyframe \(frame 1\): key its goal pose too")


def test_first_key_after_the_start_frame(car):
    bpy.context.scene.vehicle_motion.frame_start = 0
    refused(car, r"'Car' is first keyed at frame 1, after the start frame 0")


def test_vehicle_keyed_inside_an_obstacle(tunnel):
    scene, car = tunnel
    car.location = (14.0, -1.5, 0.0)  # the boulder's centre
    car.keyframe_insert("location", frame=43)
    refused(car, r"'Car' at frame 43 is inside obstacle 'Boulder' \(clearance -[0-9.]+ m, margin 0\.1 m\)")


def test_contradictory_constraints(tunnel):
    from test_scene_reader import constraint_empty
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
    vm.frame_end = vm.frame_start
    refused(car, r"the frame range is empty: Start 1, End 1 \(Scene › Vehicle Motion\)")


def test_non_mesh_obstacle(tunnel):
    scene, car = tunnel
    lamp = bpy.data.objects.new("Lamp", bpy.data.lights.new("Lamp", "POINT"))
    bpy.data.collections["Obstacles"].objects.link(lamp)
    refused(car, r"obstacle 'Lamp' is a light, not a mesh: remove it from the Obstacles collection")


def test_unsupported_rotation_mode(car):
    car.rotation_mode = "AXIS_ANGLE"
    refused(car, r"'Car' uses the Axis Angle rotation mode")


def test_missing_wheel_objects(car):
    car.vehicle_motion.wheel_front_left = None
    refused(car, r"'Car' has no Front Left Wheel object: set it in Vehicle › Parts")


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
    refused(car, r"'Car' did not converge \(iteration_limit: iteration limit of 3 reached.*\); cost .*"
                 r"nothing stored or baked \(enable Bake Best Attempt to keep it\)")
    assert "did not converge" in scene.vehicle_motion.last_report
    # asked for: the best attempt is stored and baked, with a warning
    assert bpy.ops.vehicle_motion.solve_trajectory(bake_best_attempt=True) == {"FINISHED"}
    assert car.vehicle_motion.is_baked and car.vehicle_motion.has_trajectory
    from vehicle_motion.addon import storage
    assert not storage.load(car).stats["converged"]
