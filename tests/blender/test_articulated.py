"""Articulated parts on a free-base vehicle in real bpy: the vehicle and its hinged parts as one
chain (seed 004), integrated by the Lie group families and baked (base pose + joint rotations)."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

FPS, SPF, FRAME_END = 24, 2, 49
ARM_AT, TIP, HOOK_END = (1.0, 0.0, 0.5), (0.0, 0.0, 3.0), (0.0, 0.0, -1.0)


def crane_boat(vm, method="CF4", rate=1.2):
    """A floating crane: a rigid-body base, an arm hinged about its local Y with a hook hinged
    about the arm's local X, no gravity (torque-free)."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, FRAME_END, SPF
    boat = vm.add_object("Boat")
    boat.vehicle_motion.vehicle_type = "RIGID_BODY"
    boat.vehicle_motion.mass, boat.vehicle_motion.inertia = 800.0, (300.0, 1000.0, 1200.0)
    boat.vehicle_motion.speed = 2.0
    boat.location, boat.rotation_euler = (3.0, -2.0, 0.5), (0.0, 0.0, 0.3)
    arm = vm.add_object("Arm", parent=boat, kind="EMPTY")
    arm.location = ARM_AT
    tip = vm.add_object("Arm Tip", parent=arm, kind="EMPTY")
    tip.location = TIP
    hook = vm.add_object("Hook", parent=tip, kind="EMPTY")
    hook.rotation_mode = "QUATERNION"
    weight = vm.add_object("Weight", parent=hook)
    weight.location = HOOK_END
    settings = boat.vehicle_motion_parts
    settings.mode, settings.method, settings.gravity = "ARTICULATED", method, False
    for obj, end, axis, mass, r in ((arm, tip, "Y", 120.0, rate), (hook, weight, "X", 40.0, -0.7)):
        part = settings.parts.add()
        part.object, part.end, part.joint, part.axis = obj, end, "HINGE", axis
        part.mass, part.inertia, part.rate = mass, (0.5, 0.5, 0.5), r
    vm.make_active(boat)
    return boat, arm, hook, weight


def expected(boat, method):
    """The same system straight through core (rest geometry read by the add-on)."""
    from vehicle_motion.addon import articulation
    from vehicle_motion.core.parts import articulated
    scene = bpy.context.scene
    reading = articulation.read_parts(scene, boat, 1)
    world = reading.rest_world[boat.name]
    s = boat.vehicle_motion
    return articulated.simulate(reading.parts, s.mass, tuple(s.inertia), articulation.rotation_of(boat, world),
                                world[:3, 3], (0.0, 0.0, 0.0), (s.speed, 0.0, 0.0), 1.0 / (FPS * SPF),
                                (FRAME_END - 1) * SPF, method=method, gravity=False)


def hinge_angle(obj, axis_index: int) -> float:
    """The angle obj is turned by about its local axis from its stored rest rotation."""
    from vehicle_motion.core.lie import quaternion
    s = obj.vehicle_motion
    rest = np.array(s.rest_rotation_quaternion) if obj.rotation_mode == "QUATERNION" else \
        np.array(__import__("mathutils").Euler(s.rest_rotation_euler, obj.rotation_mode).to_quaternion())
    now = np.array(obj.rotation_quaternion.normalized()) if obj.rotation_mode == "QUATERNION" else \
        np.array(obj.rotation_euler.to_quaternion())
    rel = quaternion.multiply(rest * np.array([1.0, -1.0, -1.0, -1.0]), now)
    return 2.0 * math.atan2(rel[1 + axis_index], rel[0])


@pytest.mark.parametrize("method", ["cf4", "cg2", "mk4", "rk4"])
def test_baked_joints_and_base_follow_the_chain(empty_scene, vm, method):
    boat, arm, hook, weight = crane_boat(vm, method.upper())
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    report = bpy.context.scene.vehicle_motion.last_report
    assert report.startswith(f"Articulated motion of 'Boat': 2 parts, 96 steps of 0.02083 s ({method},")
    assert boat.vehicle_motion.is_baked and arm.vehicle_motion.baked_by == boat
    ref = expected(boat, method)
    traj = ref.trajectory
    scene = bpy.context.scene
    worst_angle = worst_pos = worst_rot = 0.0
    for k, frame in enumerate(range(1, FRAME_END + 1)):
        scene.frame_set(frame)
        node = k * SPF
        for obj, axis, series in ((arm, 1, traj.shape["joint_1"]), (hook, 0, traj.shape["joint_2"])):
            diff = math.remainder(hinge_angle(obj, axis) - float(series[node]), math.tau)
            worst_angle = max(worst_angle, abs(diff))
        m = np.array(boat.matrix_world)
        worst_pos = max(worst_pos, float(np.max(np.abs(m[:3, 3] - traj.position[node]))))
        from vehicle_motion.core.lie import quaternion
        worst_rot = max(worst_rot, float(np.max(np.abs(m[:3, :3] - quaternion.to_matrix(traj.orientation[node])))))
    assert worst_angle < 1e-6 and worst_pos < 1e-5 and worst_rot < 1e-6
    # the arm turned well away from rest, so the check means something
    assert abs(float(traj.shape["joint_1"][-1])) > 1.0
    # torque-free: energy and momentum as core's integrator keeps them
    E = np.asarray(traj.series["energy"])
    L = np.asarray(traj.momentum_angular)
    P = np.asarray(traj.momentum_linear)
    order = int(method[-1])
    tol = {2: 1e-3, 4: 1e-6}[order]
    assert np.max(np.abs(E - E[0])) / E[0] < tol
    assert np.max(np.abs(L - L[0])) / np.linalg.norm(L[0]) < tol
    assert np.max(np.abs(P - P[0])) / np.linalg.norm(P[0]) < tol


def test_centre_of_mass_of_the_baked_scene_moves_in_a_straight_line(empty_scene, vm):
    boat, arm, hook, weight = crane_boat(vm)
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    scene = bpy.context.scene
    tip = bpy.data.objects["Arm Tip"]
    masses = np.array([800.0, 120.0, 40.0])
    com = []
    for frame in range(1, FRAME_END + 1):
        scene.frame_set(frame)
        points = np.array([boat.matrix_world.translation, tip.matrix_world.translation,
                           weight.matrix_world.translation])
        com.append(masses @ points / masses.sum())
    com = np.array(com)
    t = np.arange(len(com)) / FPS
    A = np.stack([np.ones_like(t), t], axis=1)
    fit, *_ = np.linalg.lstsq(A, com, rcond=None)
    assert np.max(np.abs(A @ fit - com)) < 2e-5     # float32 world matrices, 5–8 m from the origin
    assert np.linalg.norm(fit[1]) > 1.0              # it does move (forward Speed 2 m/s shared with the parts)


def test_swing_joint_is_refused_in_articulated_mode(empty_scene, vm):
    boat, arm, hook, weight = crane_boat(vm)
    boat.vehicle_motion_parts.parts[1].joint = "SWING"
    actions = {a.name for a in bpy.data.actions}
    with pytest.raises(RuntimeError, match=r"'Boat': part 'Hook': an articulated \(free-base\) part turns on a "
                                           r"hinge; swing joints need Secondary Motion"):
        bpy.ops.vehicle_motion.simulate_secondary()
    assert {a.name for a in bpy.data.actions} == actions and not boat.vehicle_motion.is_baked


def test_zero_inertia_is_refused_in_articulated_mode(empty_scene, vm):
    boat, arm, hook, weight = crane_boat(vm)
    boat.vehicle_motion_parts.parts[0].inertia = (0.0, 0.0, 0.0)
    with pytest.raises(RuntimeError, match=r"'Boat': part 'Arm': .*needs .*inertia"):
        bpy.ops.vehicle_motion.simulate_secondary()
    assert not boat.vehicle_motion.is_baked and not arm.vehicle_motion.is_baked
