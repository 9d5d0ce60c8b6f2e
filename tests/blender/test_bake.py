"""Baking trajectories into F-curves, checked by evaluating the scene at every frame."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
mathutils = pytest.importorskip("mathutils")

FPS = 24
TOL = 1e-5


def _bake(obj, trajectory, **kwargs):
    from vehicle_motion.addon import baking
    kwargs.setdefault("frame_start", 1)
    kwargs.setdefault("fps", FPS)
    return baking.bake(obj, trajectory, **kwargs)


def _worst_node_error(vm, obj, trajectory, frame_start=1, stride=2) -> float:
    """Largest pose error over the nodes that fall on frames (every ``stride``-th node)."""
    scene = bpy.context.scene
    worst = 0.0
    for k in range(0, len(trajectory.time), stride):
        scene.frame_set(frame_start + k // stride)
        worst = max(worst, *vm.pose_error(obj, trajectory.position[k], trajectory.orientation[k]))
    return worst


def _keys(fcurve) -> np.ndarray:
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co.reshape(-1, 2)


def _baked_fcurves(obj) -> dict:
    from vehicle_motion.addon import action_compat
    ref = action_compat.assigned(obj)
    return {(fc.data_path, fc.array_index): fc for fc in action_compat.fcurves(ref)}


def _snapshot() -> tuple:
    scene = bpy.context.scene
    objects = {}
    for ob in bpy.data.objects:
        anim = ob.animation_data
        s = ob.vehicle_motion
        objects[ob.name] = (anim.action.name if anim and anim.action else None, tuple(ob.location),
                            tuple(ob.rotation_quaternion), tuple(ob.rotation_euler), ob.rotation_mode,
                            s.is_baked, s.baked_action, s.original_action)
    return (sorted(a.name for a in bpy.data.actions), objects, scene.vehicle_motion.last_report,
            scene.frame_current)


# ----------------------------------------------------------------------------- the body

@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "ZXY"])
def test_bake_matches_trajectory_at_every_frame(empty_scene, vm, mode):
    obj = vm.add_object("Body")
    obj.rotation_mode = mode
    traj = vm.helix_trajectory(duration=4.0, steps=192)  # two steps a frame at 24 fps
    result = _bake(obj, traj)
    assert (result.frame_start, result.frame_end) == (1, 97)
    assert result.objects == ["Body"]

    curves = _baked_fcurves(obj)
    rotation = ("rotation_quaternion", 4) if mode == "QUATERNION" else ("rotation_euler", 3)
    assert set(curves) == {("location", j) for j in range(3)} | {(rotation[0], j) for j in range(rotation[1])}
    for fc in curves.values():
        assert len(fc.keyframe_points) == 97
        assert {kp.interpolation for kp in fc.keyframe_points} == {"LINEAR"}
        assert np.array_equal(_keys(fc)[:, 0], np.arange(1, 98))
    values = np.stack([_keys(curves[rotation[0], j])[:, 1] for j in range(rotation[1])], axis=-1)
    if mode == "QUATERNION":  # sign continuity although the trajectory flips signs every node
        assert np.all(np.sum(values[1:] * values[:-1], axis=-1) > 0)
    else:  # Euler angles continuous frame to frame
        assert np.max(np.abs(np.diff(values, axis=0))) < 0.5

    assert _worst_node_error(vm, obj, traj) < TOL


def test_bake_resamples_between_nodes(empty_scene, vm):
    """Nodes every 0.07 s, frames every 1/24 s: between nodes the bake is the C¹ Lie group curve of
    core.shot.resample (its stored velocities are zeros here: it takes the nodes' differences), which
    follows the helix far closer than chords and slerp do."""
    from vehicle_motion.core.shot import resample
    obj = vm.add_object("Body")
    obj.rotation_mode = "QUATERNION"
    traj = vm.helix_trajectory(duration=3.5, steps=50)
    result = _bake(obj, traj, frame_start=10)
    assert (result.frame_start, result.frame_end) == (10, 10 + 84)
    times = np.arange(85) / FPS
    curve = resample.sample(traj, times)
    exact = vm.helix_trajectory(duration=84 / FPS, steps=84)  # the helix itself at every frame
    t = traj.time
    worst_curve = worst_chord = 0.0
    for k, time in enumerate(times):
        empty_scene.frame_set(10 + k)
        assert max(vm.pose_error(obj, curve.position[k], curve.orientation[k])) < TOL, k
        i = min(int(np.searchsorted(t, time, side="right")) - 1, len(t) - 2)
        u = (time - t[i]) / (t[i + 1] - t[i])
        chord = (1 - u) * traj.position[i] + u * traj.position[i + 1]
        worst_curve = max(worst_curve, float(np.max(np.abs(curve.position[k] - exact.position[k]))))
        worst_chord = max(worst_chord, float(np.max(np.abs(chord - exact.position[k]))))
    assert worst_curve < 1e-3 and worst_chord > 4 * worst_curve


def test_bake_at_given_frame_times(empty_scene, vm):
    """Explicit trajectory times per frame (here: half-speed slow motion from t = 0.5 s)."""
    obj = vm.add_object("Body")
    traj = vm.helix_trajectory(duration=2.0, steps=96)
    times = 0.5 + np.arange(49) / 48.0  # nodes every 1/48 s: every node of [0.5, 1.5] s
    result = _bake(obj, traj, frame_start=3, times=times)
    assert (result.frame_start, result.frame_end) == (3, 51)
    for k in range(49):
        empty_scene.frame_set(3 + k)
        assert max(vm.pose_error(obj, traj.position[24 + k], traj.orientation[24 + k])) < TOL, k


def test_bake_with_delta_transforms(empty_scene, vm):
    for mode in ("QUATERNION", "YZX"):
        obj = vm.add_object(f"Body {mode}")
        obj.rotation_mode = mode
        obj.delta_location = (0.5, -1.0, 2.0)
        obj.delta_rotation_euler = (0.3, -0.2, 0.9)
        obj.delta_rotation_quaternion = mathutils.Euler((0.4, 0.1, -0.6)).to_quaternion()
        obj.scale = (1.5, 0.5, 2.0)
        traj = vm.helix_trajectory(duration=2.0, steps=96)
        _bake(obj, traj)
        assert _worst_node_error(vm, obj, traj) < TOL, mode
        m = np.array(obj.matrix_world)[:3, :3]
        assert np.linalg.norm(m, axis=0) == pytest.approx([1.5, 0.5, 2.0], rel=1e-5)


@pytest.mark.parametrize("keep_transform", [True, False])
def test_bake_parented_object(empty_scene, vm, keep_transform):
    parent = vm.add_object("Parent", kind="EMPTY")
    parent.location = (1.0, 2.0, -3.0)
    parent.rotation_euler = (0.3, -0.5, 0.8)
    parent.scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    child = vm.add_object("Child", parent=parent)
    child.rotation_mode = "XYZ"
    if keep_transform:
        child.matrix_parent_inverse = parent.matrix_world.inverted()
    bpy.context.view_layer.update()
    world_scale = np.linalg.norm(np.array(child.matrix_world)[:3, :3], axis=0)
    traj = vm.helix_trajectory(duration=2.0, steps=96)
    _bake(child, traj)
    assert _worst_node_error(vm, child, traj) < TOL
    assert np.linalg.norm(np.array(child.matrix_world)[:3, :3], axis=0) == pytest.approx(world_scale, rel=1e-5)


def test_bake_under_animated_parent(empty_scene, vm):
    parent = vm.add_object("Carrier", kind="EMPTY")
    for frame, angle, x in ((1, 0.0, 0.0), (49, 2.0, 5.0)):
        parent.rotation_euler = (0.0, 0.0, angle)
        parent.location = (x, 0.0, 0.0)
        parent.keyframe_insert("rotation_euler", frame=frame)
        parent.keyframe_insert("location", frame=frame)
    child = vm.add_object("Passenger", parent=parent)
    child.rotation_mode = "QUATERNION"
    traj = vm.helix_trajectory(duration=2.0, steps=96)
    empty_scene.frame_set(7)
    _bake(child, traj)
    assert empty_scene.frame_current == 7
    assert _worst_node_error(vm, child, traj) < TOL


# ----------------------------------------------------------------------------- children

def _rotation(axis: str, angle: float) -> np.ndarray:
    return np.array(mathutils.Matrix.Rotation(angle, 3, axis))


def _local_rotation(obj) -> np.ndarray:
    m = np.array(obj.matrix_basis)[:3, :3]
    return m / np.linalg.norm(m, axis=0)


def test_car_wheels_and_knuckles(empty_scene, vm):
    body = vm.add_object("Car")
    body.rotation_mode = "QUATERNION"
    s = body.vehicle_motion
    s.vehicle_type = "CAR"
    wheel = vm.add_object("Wheel RL", parent=body)
    wheel.rotation_mode = "XYZ"
    wheel.rotation_euler = (0.0, 0.0, 0.3)  # a rest rotation the spin composes with
    knuckle = vm.add_object("Knuckle FL", parent=body)
    knuckle.rotation_mode = "QUATERNION"
    front = vm.add_object("Wheel FL", parent=knuckle)
    front.rotation_mode = "ZXY"
    s.wheel_rear_left, s.knuckle_front_left, s.wheel_front_left = wheel, knuckle, front

    t = np.linspace(0.0, 2.0, 97)
    psi = 6.0 * t + 1.5 * t**2           # cumulative rolling angle, many turns
    phi = np.full_like(t, 0.25)          # steady steering: front wheels roll psi / cos(phi)
    traj = vm.helix_trajectory(duration=2.0, steps=96, vehicle="car",
                               shape={"wheel_angle": psi, "steering_angle": phi})
    result = _bake(body, traj)
    assert sorted(result.objects) == ["Car", "Knuckle FL", "Wheel FL", "Wheel RL"]
    for k in range(0, 97, 2):
        empty_scene.frame_set(1 + k // 2)
        expected_rear = _rotation("Z", 0.3) @ _rotation("Y", psi[k])
        assert np.max(np.abs(_local_rotation(wheel) - expected_rear)) < TOL, k
        assert np.max(np.abs(_local_rotation(knuckle) - _rotation("Z", 0.25))) < TOL, k
        expected_front = _rotation("Y", psi[0] + (psi[k] - psi[0]) / math.cos(0.25))
        assert np.max(np.abs(_local_rotation(front) - expected_front)) < 2 * TOL, k
        assert max(vm.pose_error(body, traj.position[k], traj.orientation[k])) < TOL
    assert wheel.vehicle_motion.baked_by == body


def test_helicopter_rotor_spin_and_tilt(empty_scene, vm):
    body = vm.add_object("Heli")
    s = body.vehicle_motion
    s.vehicle_type = "HELICOPTER"
    rotor = vm.add_object("Rotor", parent=body)
    rotor.rotation_mode = "QUATERNION"
    tail = vm.add_object("Tail", parent=body)
    tail.rotation_mode = "XYZ"
    s.main_rotor, s.tail_rotor, s.tail_rotor_axis = rotor, tail, "NEG_Y"
    t = np.linspace(0.0, 1.0, 49)
    shape = {"pitch_tilt": 0.15 * np.sin(3 * t), "roll_tilt": -0.1 * t,
             "rotor_angle": 55.5 * t, "tail_rotor_angle": 6.4 * 55.5 * t}
    traj = vm.helix_trajectory(duration=1.0, steps=48, vehicle="helicopter", shape=shape)
    _bake(body, traj)
    for k in range(0, 49, 2):
        empty_scene.frame_set(1 + k // 2)
        expected = (_rotation("Y", shape["pitch_tilt"][k]) @ _rotation("X", shape["roll_tilt"][k])
                    @ _rotation("Z", shape["rotor_angle"][k]))
        assert np.max(np.abs(_local_rotation(rotor) - expected)) < 1e-4, k  # 55 rad in float32
        expected_tail = _rotation("Y", -shape["tail_rotor_angle"][k])
        assert np.max(np.abs(_local_rotation(tail) - expected_tail)) < 1e-3, k  # 355 rad in float32


def test_snakeboard_trucks_turn_opposite(empty_scene, vm):
    body = vm.add_object("Board")
    s = body.vehicle_motion
    s.vehicle_type = "SNAKEBOARD"
    front, rear, rider = (vm.add_object(n, parent=body) for n in ("Front", "Rear", "Rider"))
    s.truck_front, s.truck_rear, s.rider = front, rear, rider
    t = np.linspace(0.0, 1.0, 49)
    shape = {"wheel_angle": 0.5 * np.sin(2 * t), "rotor_angle": 0.8 * np.sin(3 * t)}
    traj = vm.helix_trajectory(duration=1.0, steps=48, vehicle="snakeboard", shape=shape)
    _bake(body, traj)
    for k in range(0, 49, 2):
        empty_scene.frame_set(1 + k // 2)
        phi = shape["wheel_angle"][k]
        assert np.max(np.abs(_local_rotation(front) - _rotation("Z", phi))) < TOL
        assert np.max(np.abs(_local_rotation(rear) - _rotation("Z", -phi))) < TOL
        assert np.max(np.abs(_local_rotation(rider) - _rotation("Z", shape["rotor_angle"][k]))) < TOL


# ----------------------------------------------------------------------------- clear, storage

def _car_with_original_action(vm):
    body = vm.add_object("Car")
    body.vehicle_motion.vehicle_type = "CAR"
    body.location = (0.0, 0.0, 0.0)
    body.keyframe_insert("location", frame=1)
    body.location = (10.0, 0.0, 0.0)
    body.keyframe_insert("location", frame=21)
    original = body.animation_data.action
    original.name = "Artist Drive"
    wheel = vm.add_object("Wheel", parent=body)
    wheel.rotation_euler = (0.1, 0.2, 0.3)
    body.vehicle_motion.wheel_rear_left = wheel
    return body, wheel, original


def test_clear_bake_restores_original_action(empty_scene, vm):
    from vehicle_motion.addon import action_compat
    body, wheel, original = _car_with_original_action(vm)
    slot_before = action_compat.slot_identifier(action_compat.assigned(body))
    empty_scene.frame_set(11)
    traj = vm.helix_trajectory(duration=2.0, steps=96, vehicle="car",
                               shape={"wheel_angle": np.linspace(0, 20, 97)})
    _bake(body, traj)
    _bake(body, traj)  # baking again replaces the bake, keeps the original
    assert body.animation_data.action.name != "Artist Drive"
    assert wheel.animation_data.action is not None
    baked = {a.name for a in bpy.data.actions} - {"Artist Drive"}
    assert len(baked) == 2 and "Artist Drive" in bpy.data.actions

    vm.make_active(body)
    assert bpy.ops.vehicle_motion.clear_bake() == {"FINISHED"}
    assert body.animation_data.action == original
    assert action_compat.slot_identifier(action_compat.assigned(body)) == slot_before
    assert [a.name for a in bpy.data.actions] == ["Artist Drive"]
    assert wheel.animation_data is None or wheel.animation_data.action is None
    assert tuple(wheel.rotation_euler) == pytest.approx((0.1, 0.2, 0.3))
    assert not body.vehicle_motion.is_baked and not wheel.vehicle_motion.is_baked
    empty_scene.frame_set(16)  # the artist's curve drives the car again
    artist = action_compat.find_fcurve(action_compat.assigned(body), "location", 0)
    assert body.location.x == pytest.approx(artist.evaluate(16), abs=1e-5)
    assert 5.0 < body.location.x < 10.0
    assert not bpy.ops.vehicle_motion.clear_bake.poll()


def test_stored_trajectory_survives_save_and_reopen(empty_scene, vm, tmp_path):
    from vehicle_motion.addon import storage
    body, wheel, original = _car_with_original_action(vm)
    traj = vm.helix_trajectory(duration=2.0, steps=96, vehicle="car",
                               shape={"wheel_angle": np.linspace(0, 20, 97)})
    storage.store(body, traj)
    empty_scene.vehicle_motion.frame_start = 5
    path = str(tmp_path / "stored.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)

    body = bpy.data.objects["Car"]
    assert body.vehicle_motion.has_trajectory
    assert body.vehicle_motion.trajectory_summary.startswith("car, 97 nodes")
    loaded = storage.load(body)
    assert np.array_equal(loaded.position, traj.position)
    assert np.array_equal(loaded.shape["wheel_angle"], traj.shape["wheel_angle"])
    vm.make_active(body)
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"}
    assert "Baked frames 5–53" in bpy.context.scene.vehicle_motion.last_report
    assert _worst_node_error(vm, body, traj, frame_start=5) < TOL

    # the artist's action has no user but the bake's reference: it must survive a save too
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    body = bpy.data.objects["Car"]
    vm.make_active(body)
    assert bpy.ops.vehicle_motion.clear_bake() == {"FINISHED"}
    assert body.animation_data.action.name == "Artist Drive"


def test_storage_round_trip_is_exact(empty_scene, vm):
    from vehicle_motion.addon import storage
    from vehicle_motion.core.errors import VehicleMotionError
    traj = vm.helix_trajectory(duration=1.0, steps=10, shape={"wheel_angle": np.arange(11) * 0.1})
    obj = vm.add_object("Body")
    assert not storage.has(obj)
    storage.store(obj, traj)
    assert storage.has(obj) and obj.vehicle_motion.has_trajectory
    assert storage.load(obj).to_json() == traj.to_json()
    storage.clear(obj)
    assert not obj.vehicle_motion.has_trajectory and obj.vehicle_motion.trajectory_summary == ""
    with pytest.raises(VehicleMotionError, match="no stored trajectory"):
        storage.load(obj)


def test_action_compat_round_trip(empty_scene, vm):
    from vehicle_motion.addon import action_compat as ac
    obj = vm.add_object("Thing")
    ref = ac.new_action("Thing Motion", obj)
    assert (ref.slot is not None) == ac.has_slots() == (bpy.app.version >= (4, 4, 0))
    fc = ac.ensure_fcurve(ref, "location", 2, group="Object Transforms")
    assert ac.ensure_fcurve(ref, "location", 2) == fc
    assert fc.group is not None and fc.group.name == "Object Transforms"
    assert ac.find_fcurve(ref, "location", 2) == fc and ac.find_fcurve(ref, "location", 0) is None
    fc.keyframe_points.insert(1, 0.0)
    fc.keyframe_points.insert(11, 5.0)
    ac.assign(obj, ref)
    assigned = ac.assigned(obj)
    assert assigned.action == ref.action and ac.slot_identifier(assigned) == ac.slot_identifier(ref)
    assert [(f.data_path, f.array_index) for f in ac.fcurves(assigned)] == [("location", 2)]
    assert ac.all_fcurves(ref.action) == ac.fcurves(assigned)
    empty_scene.frame_set(11)
    assert obj.location.z == pytest.approx(5.0)
    if ac.has_slots():
        assert ac.find_slot(ref.action, ref.slot.identifier) == ref.slot
    ac.assign(obj, None)
    assert ac.assigned(obj) is None
    ac.remove_action(ref.action)
    assert "Thing Motion" not in bpy.data.actions


# ----------------------------------------------------------------------------- bad input

def test_bake_without_stored_trajectory_changes_nothing(empty_scene, vm):
    body = vm.add_object("Body")
    vm.make_active(body)
    before = _snapshot()
    with pytest.raises(RuntimeError, match="'Body' has no stored trajectory"):
        bpy.ops.vehicle_motion.bake()
    assert _snapshot() == before


def test_bake_refuses_axis_angle_and_changes_nothing(empty_scene, vm):
    from vehicle_motion.addon import storage
    body, wheel, _ = _car_with_original_action(vm)
    traj = vm.helix_trajectory(duration=1.0, steps=48, vehicle="car",
                               shape={"wheel_angle": np.linspace(0, 5, 49)})
    storage.store(body, traj)
    vm.make_active(body)
    for culprit in (body, wheel):  # the body itself, or one of its children
        culprit.rotation_mode = "AXIS_ANGLE"
        before = _snapshot()
        with pytest.raises(RuntimeError, match=f"cannot bake '{culprit.name}'.*Axis Angle"):
            bpy.ops.vehicle_motion.bake()
        assert _snapshot() == before
        culprit.rotation_mode = "XYZ"
    assert bpy.ops.vehicle_motion.bake() == {"FINISHED"}


def test_bake_refuses_damaged_storage(empty_scene, vm):
    from vehicle_motion.addon import storage
    body = vm.add_object("Body")
    body.vehicle_motion.trajectory_data = storage.FORMAT_TAG + "not base64 at all!"
    vm.make_active(body)
    before = _snapshot()
    with pytest.raises(RuntimeError, match="stored trajectory is damaged"):
        bpy.ops.vehicle_motion.bake()
    assert _snapshot() == before


def test_bake_refuses_non_finite_trajectory(empty_scene, vm):
    from vehicle_motion.core.errors import VehicleMotionError
    body = vm.add_object("Body")
    traj = vm.helix_trajectory(duration=1.0, steps=24)
    traj.position[5, 1] = np.nan
    before = _snapshot()
    with pytest.raises(VehicleMotionError, match="position has NaN"):
        _bake(body, traj)
    assert _snapshot() == before


def test_poll_messages(empty_scene, vm):
    assert not bpy.ops.vehicle_motion.bake.poll()
    with pytest.raises(RuntimeError, match="Select the vehicle object"):
        bpy.ops.vehicle_motion.bake()
    body = vm.add_object("Body")
    vm.make_active(body)
    assert bpy.ops.vehicle_motion.bake.poll()
    with pytest.raises(RuntimeError, match="'Body' has no baked motion"):
        bpy.ops.vehicle_motion.clear_bake()
