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
    scene.frame_start, scene.frame_end = 1, FRAME_END
    scene.vehicle_motion.steps_per_frame = SPF
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


# -- the vehicle's own forces on the free base: a helicopter's rotor, a boat's buoyancy -----------

CABLE_MASSES = (30.0, 150.0)


def cable_helicopter(vm, frame_end=25):
    """A light helicopter at 30 m with a two-link cable under its centre of mass: the upper link
    hinged about its X, the load's link about its Y (gravity on)."""
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, frame_end, SPF
    heli = vm.add_object("Heli")
    rotor = vm.add_object("Rotor", parent=heli, kind="EMPTY")
    heli.vehicle_motion.preset = "LIGHT_HELICOPTER"
    heli.vehicle_motion.main_rotor = rotor
    heli.location, heli.rotation_euler = (4.0, -1.0, 30.0), (0.0, 0.0, 0.4)
    upper = vm.add_object("Cable", parent=heli, kind="EMPTY")
    upper.location = (0.0, 0.0, -0.6)
    link = vm.add_object("Load Link", parent=upper, kind="EMPTY")
    link.location = (0.0, 0.0, -3.0)
    load = vm.add_object("Load", parent=link)
    load.location = (0.0, 0.0, -2.0)
    settings = heli.vehicle_motion_parts
    settings.mode, settings.method, settings.gravity = "ARTICULATED", "CF4", True
    for obj, end, axis, mass, inertia in ((upper, link, "X", CABLE_MASSES[0], (0.4, 0.4, 0.1)),
                                          (link, load, "Y", CABLE_MASSES[1], (2.0, 2.0, 1.0))):
        part = settings.parts.add()
        part.object, part.end, part.joint, part.axis = obj, end, "HINGE", axis
        part.mass, part.inertia = mass, inertia
    heli["collective"] = (heli.vehicle_motion.mass + sum(CABLE_MASSES)) * 9.81
    vm.make_active(heli)
    return heli, rotor, upper, link, load


def world_path(obj, frames) -> np.ndarray:
    from world_checks import world_positions
    return world_positions(bpy.context.scene, obj, frames)


def test_helicopter_with_a_cable_load_hovers_on_the_total_weight(empty_scene, vm):
    heli, rotor, upper, link, load = cable_helicopter(vm)
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    report = bpy.context.scene.vehicle_motion.last_report
    assert "helicopter: rotor from its control channels, gravity" in report
    assert "'Heli' has no yaw, pitch_tilt, roll_tilt channel: zero" in report
    frames = range(1, 26)
    assert world_path(heli, frames) == pytest.approx(np.tile([4.0, -1.0, 30.0], (25, 1)), abs=1e-5)
    assert world_path(load, frames) == pytest.approx(np.tile(world_path(load, [1])[0], (25, 1)), abs=1e-5)
    scene = bpy.context.scene
    scene.frame_set(13)            # the rotor spins as in a plain simulation: rotor_speed · 0.5 s
    angle = rotor.matrix_local.to_euler("XYZ").z
    assert math.remainder(angle - heli.vehicle_motion.rotor_speed * 0.5, math.tau) == pytest.approx(0.0, abs=1e-3)


def test_keyed_pitch_tilt_flies_it_forward_with_the_load_trailing(empty_scene, vm):
    """pitch_tilt keyed 0 → 0.06 rad (constant interpolation) at frame 7: the baked motion is core's
    run with those inputs, the helicopter goes forward and the load swings back."""
    from vehicle_motion.addon import action_compat, articulation
    from vehicle_motion.core.parts import articulated, base
    from vehicle_motion.core.vehicles.helicopter import Helicopter
    heli, rotor, upper, link, load = cable_helicopter(vm, frame_end=49)
    tilt, switch = 0.06, 7
    for frame, value in ((1, 0.0), (switch, tilt)):
        heli["pitch_tilt"] = value
        heli.keyframe_insert('["pitch_tilt"]', frame=frame)
    curve = action_compat.find_fcurve(action_compat.assigned(heli), '["pitch_tilt"]')
    for point in curve.keyframe_points:
        point.interpolation = "CONSTANT"
    steps = 48 * SPF
    step_frames = 1 + np.arange(steps) / SPF
    s = heli.vehicle_motion
    u = heli["collective"]
    expected_base = base.helicopter_base(
        Helicopter(mass=s.mass, inertia=tuple(s.inertia), max_collective=s.max_collective),
        {"collective": np.full(steps, u), "pitch_tilt": np.where(step_frames >= switch, tilt, 0.0)}, steps)
    reading = articulation.read_parts(bpy.context.scene, heli, 1)
    world = reading.rest_world[heli.name]
    ref = articulated.simulate_vehicle(reading.parts, expected_base, articulation.rotation_of(heli, world),
                                       world[:3, 3], (0, 0, 0), (0, 0, 0), 1.0 / (FPS * SPF), steps, "cf4").trajectory
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    frames = range(1, 50)
    path = world_path(heli, frames)
    assert path == pytest.approx(ref.position[::SPF], abs=1e-5)
    for obj, axis, name in ((upper, 0, "joint_1"), (link, 1, "joint_2")):
        for k, frame in enumerate(frames):
            bpy.context.scene.frame_set(frame)
            assert math.remainder(hinge_angle(obj, axis) - float(ref.shape[name][k * SPF]), math.tau) == \
                pytest.approx(0.0, abs=1e-6)
    forward = np.array([math.cos(0.4), math.sin(0.4), 0.0])          # the helicopter's heading
    assert (path[-1] - path[0]) @ forward > 0.3
    hook = world_path(upper, frames)                                  # where the cable hangs from
    trail = (world_path(load, frames) - hook) @ forward
    assert abs(trail[switch - 1]) < 1e-5 and trail[-1] < -0.3
    # simulating again reads the channels from the action the bake replaced: the same motion
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    assert world_path(heli, frames) == pytest.approx(ref.position[::SPF], abs=1e-5)


def test_boat_crane_heels_as_the_arm_swings_out(empty_scene, vm):
    """A RIB with a slewing crane (hinge about the deck's Z): the boat floats and heels to port as
    the arm comes round to port; the bake is core's run of the boat model with the crane."""
    from vehicle_motion.addon import articulation
    from vehicle_motion.core.lie import quaternion
    from vehicle_motion.core.parts import articulated, base
    from vehicle_motion.core.vehicles.boat import Boat
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    s = scene.vehicle_motion
    s.frame_start, s.frame_end, s.steps_per_frame = 1, 97, 1
    boat = vm.add_object("Boat")
    boat.vehicle_motion.preset = "RIB_BOAT"
    boat.location = (0.0, 0.0, 0.084)
    arm = vm.add_object("Crane", parent=boat, kind="EMPTY")
    arm.location = (0.5, 0.0, 0.5)
    tip = vm.add_object("Crane Tip", parent=arm, kind="EMPTY")
    tip.location = (2.0, 0.0, 1.0)
    settings = boat.vehicle_motion_parts
    settings.mode, settings.method, settings.gravity = "ARTICULATED", "RK4", True
    part = settings.parts.add()
    part.object, part.end, part.joint, part.axis = arm, tip, "HINGE", "Z"
    part.mass, part.inertia, part.rate = 150.0, (5.0, 5.0, 5.0), 0.5
    vm.make_active(boat)
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    assert "boat: buoyancy, damping, wind, thrusters, gravity" in scene.vehicle_motion.last_report
    v = boat.vehicle_motion
    steps = 96
    model = base.boat_base(Boat(mass=v.mass, inertia=tuple(v.inertia), max_thrust=v.max_thrust), {}, steps)
    reading = articulation.read_parts(scene, boat, 1)
    ref = articulated.simulate_vehicle(reading.parts, model, np.eye(3), np.array([0.0, 0.0, 0.084]), (0, 0, 0),
                                       (0, 0, 0), 1.0 / FPS, steps, "rk4")
    rolls, slews = [], []
    for k, frame in enumerate(range(1, 98)):
        scene.frame_set(frame)
        m = np.array(boat.matrix_world)
        R = quaternion.to_matrix(ref.trajectory.orientation[k])
        assert m[:3, 3] == pytest.approx(ref.trajectory.position[k], abs=1e-5)
        assert np.max(np.abs(m[:3, :3] - R)) < 1e-5
        rolls.append(math.atan2(m[2, 1], m[2, 2]))
        slews.append(hinge_angle(arm, 2))
    rolls, slews = np.array(rolls), np.array(slews)
    assert abs(rolls[0]) < 1e-9
    out = np.flatnonzero(slews > 1.2)                    # the arm well out over the port side
    assert out.size and np.all(rolls[out] < -0.05) and rolls[out].min() < -0.2     # port side down
    assert np.all(np.abs(rolls[slews < 0.2]) < 0.03)     # hardly any heel while it points ahead


def test_a_car_is_refused_in_articulated_mode(empty_scene, vm):
    scene = bpy.context.scene
    scene.vehicle_motion.frame_start, scene.vehicle_motion.frame_end = 1, 25
    car = vm.add_object("Car")
    car.vehicle_motion.preset = "HATCHBACK"
    trailer = vm.add_object("Trailer", parent=car, kind="EMPTY")
    axle = vm.add_object("Axle", parent=trailer, kind="EMPTY")
    axle.location = (-3.0, 0.0, 0.0)
    settings = car.vehicle_motion_parts
    settings.mode = "ARTICULATED"
    part = settings.parts.add()
    part.object, part.joint, part.axis, part.inertia = trailer, "HINGE", "Z", (1.0, 1.0, 1.0)
    vm.make_active(car)
    with pytest.raises(RuntimeError, match=r"'Car' is a car, which has no free-base model for Articulated parts "
                                           r"\(a helicopter, a boat or a rigid body has\): use Secondary Motion"):
        bpy.ops.vehicle_motion.simulate_secondary()
    assert not car.vehicle_motion.is_baked and not trailer.vehicle_motion.is_baked


def test_boat_crane_sample_floats_heels_and_moves_ahead(empty_scene, vm):
    """samples/build_boat_crane_scene.py, simulated: the boat stays afloat near its loaded draft,
    heels to port and then to starboard as the boom slews round, and the thrusters push it."""
    import build_boat_crane_scene as sample
    names = sample.build(fps=12, steps_per_frame=2)
    boat = bpy.data.objects[names["vehicle"]]
    assert bpy.ops.vehicle_motion.simulate_secondary() == {"FINISHED"}
    scene = bpy.context.scene
    path = world_path(boat, range(1, names["frame_end"] + 1))
    assert np.max(np.abs(path[:, 2] - names["float_z"])) < 0.05
    assert path[-1, 0] - path[0, 0] > 1.0
    rolls = []
    for frame in range(1, names["frame_end"] + 1):
        scene.frame_set(frame)
        m = np.array(boat.matrix_world)
        rolls.append(math.atan2(m[2, 1], m[2, 2]))
    assert abs(rolls[0]) < 1e-9 and min(rolls) < -0.1 and max(rolls) > 0.1    # to port, then to starboard
