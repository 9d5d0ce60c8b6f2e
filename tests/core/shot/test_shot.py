"""core.shot: planning a shot from plain data, without Blender — the frame range from the keys,
frames ↔ time at any frame rate, the frames a bake keys, obstacle shapes fitted to vertices, keys and
constraints to solve scenarios, and solver messages in frames and object names."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import VehicleMotionError
from core.shot import (Constraint, FrameMap, KeyPose, ObstacleShape, ShotError, ShotInput, ShotSettings,
                       bake_frames, fit_shape, plan, scene_fps, shot_range)
from core.shot.plan import Segment


# -- frames -------------------------------------------------------------------------------------

def test_shot_range_is_the_keys_clipped_to_the_scene():
    assert shot_range([1.0, 40.0, 73.0], (1, 73)) == (1.0, 73.0, [])
    start, end, warnings = shot_range([1.0, 40.0, 97.0, 120.0], (1, 100))
    assert (start, end) == (1.0, 97.0)
    assert warnings == ["keys at frames 120 are outside the scene's frame range 1–100 and ignored"]
    assert shot_range([1.0, 60.5, 120.25], (1, 250))[:2] == (1.0, 120.25)


def test_shot_range_override_and_refusals():
    assert shot_range([1.0, 73.0], (1, 73), override=(5, 30)) == (5.0, 30.0, [])
    with pytest.raises(VehicleMotionError, match=r"the frame range is empty: Start 30, End 30"):
        shot_range([1.0, 73.0], (1, 73), override=(30, 30))
    with pytest.raises(VehicleMotionError, match=r"fewer than two keys inside the scene's frame range 30–60 "
                                                  r"\(keys at frames 1, 25\)"):
        shot_range([1.0, 25.0], (30, 60))


def test_frame_map_at_29_97_fps_and_sub_frames():
    fps = scene_fps(30, 1.001)
    assert fps == pytest.approx(30000 / 1001, rel=1e-15)
    fm = FrameMap(1.0, 120.25, fps, 2, scale=0.01, offset=(100.0, 0.0, 0.0))
    assert fm.steps == round(119.25 * 2) and fm.duration == pytest.approx(119.25 * 1.001 / 30)
    assert fm.dt * fm.steps == pytest.approx(fm.duration)
    assert fm.time(60.5) == pytest.approx(59.5 / fps) and fm.frame(fm.time(60.5)) == pytest.approx(60.5)
    assert fm.to_solve([300.0, 50.0, 0.0]) == pytest.approx([2.0, 0.5, 0.0])
    assert fm.to_world(fm.to_solve([300.0, 50.0, 7.0])) == pytest.approx([300.0, 50.0, 7.0])


def test_bake_frames_are_whole_frames_and_the_sub_frame_ends():
    assert bake_frames(1.0, 5.0).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert bake_frames(1.0, 4.25).tolist() == [1.0, 2.0, 3.0, 4.0, 4.25]
    assert bake_frames(0.5, 3.0).tolist() == [0.5, 1.0, 2.0, 3.0]
    assert bake_frames(2.0, 2.00001).tolist() == [2.0]  # the same frame within round-off
    assert bake_frames(1.0, 4.25, keyed=(1.0, 2.5, 4.25, 9.0)).tolist() == [1.0, 2.0, 2.5, 3.0, 4.0, 4.25]


# -- obstacles ---------------------------------------------------------------------------------------

def test_fit_shapes_to_point_sets():
    fit = fit_shape
    rng = np.random.default_rng(1)
    # points of an oriented box: the fit recovers it from the principal axes
    r = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    if np.linalg.det(r) < 0:
        r[:, 0] *= -1
    corners = np.array([[x, y, z] for x in (-3, 3) for y in (-1, 1) for z in (-0.5, 0.5)], dtype=float)
    box = fit("b", corners @ r.T + [1.0, 2.0, 3.0], "AUTO")
    assert box.kind == "box" and np.sort(box.half_extents) == pytest.approx([0.5, 1.0, 3.0])
    # a capsule's surface points → the capsule
    u = rng.normal(size=(4000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    pts = 0.5 * u
    pts[:, 2] += np.where(pts[:, 2] > 0, 2.0, -2.0)
    cap = fit("c", pts, "AUTO")
    assert cap.kind == "capsule" and cap.radius == pytest.approx(0.5, abs=0.02)
    assert abs(cap.a[2] - cap.b[2]) == pytest.approx(4.0, abs=0.05)
    sphere = fit("s", u * 2.0, "AUTO")
    assert sphere.kind == "sphere" and sphere.radius == pytest.approx(2.0, abs=0.01)
    # every fitted shape holds every point
    for shape in (box, cap, sphere, fit("x", pts, "BOX"), fit("y", pts, "SPHERE")):
        src = corners @ r.T + [1.0, 2.0, 3.0] if shape is box else (u * 2.0 if shape is sphere else pts)
        assert np.max(shape.distance(src)) <= 1e-9


def test_flat_points_give_a_thin_box_or_capsule():
    plane = np.array([[x, y, 0.0] for x in (-2.0, 2.0) for y in (-1.0, 1.0)])
    box = fit_shape("wall", plane, "BOX", min_half=1e-6)
    assert np.sort(box.half_extents) == pytest.approx([1e-6, 1.0, 2.0])
    assert np.isclose(np.linalg.det(box.rotation), 1.0)
    line = np.array([[0.0, 0.0, z] for z in (0.0, 1.0, 2.0)])
    pole = fit_shape("pole", line, "AUTO", min_half=1e-6)
    assert pole.kind == "capsule" and pole.radius == pytest.approx(1e-6)
    assert np.max(pole.distance(line)) <= 1e-9


# -- planning ----------------------------------------------------------------------------------------

def _settings(**kw) -> ShotSettings:
    return ShotSettings(key_tolerance=kw.get("tol", 0.05), weights={"effort": 1.0, "path_length": 0.0,
                                                                     "hazard": 0.0, "smoothness": 0.0},
                        solver={"backend": "scipy", "max_iter": 50, "tol": 1e-6, "time_limit_s": 10.0})


def _rot(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _car(keys, *, fps=8.0, scale=1.0, empties=(), obstacles=(), start=None, end=None, spf=1) -> ShotInput:
    """A car shot from (frame, (x, y), heading, rotation keyed) keys in scene units."""
    poses = [KeyPose(f, np.array([x, y, 0.0]), _rot(h), rotation_keyed=rk, speed=0.0 if i == 0 else None,
                     euler_heading=h) for i, (f, (x, y), h, rk) in enumerate(keys)]
    fm = FrameMap(start if start is not None else keys[0][0], end if end is not None else keys[-1][0], fps, spf,
                  scale)
    return ShotInput(vehicle="Car", vehicle_type="CAR", core_type="car", frame_map=fm, keys=poses,
                     empties=list(empties), obstacles=list(obstacles), spheres=np.array([[1.2, 0.0, 0.5, 1.0]]),
                     parameters={"type": "car", "mass": 1200.0, "wheel_radius": 0.3, "wheelbase": 2.55,
                                 "wheel_inertia": 1.8, "max_steering_angle": math.radians(35.0)},
                     input_limits={"torque": 2000.0, "steering_rate": 1.2}, settings=_settings())


def test_keys_become_start_exact_waypoints_and_goal():
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (60.5, (8.0, 1.0), 0.2, True), (120.25, (20.0, 3.0), 0.3, True)],
                fps=scene_fps(30, 1.001))
    problem = plan(shot)
    (segment,) = problem.segments
    sc = segment.scenario
    assert sc["start"] == {"position": [0.0, 0.0], "heading": 0.0, "speed": 0.0}
    assert sc["goal"]["position"] == [20.0, 3.0] and sc["goal"]["heading"] == pytest.approx(0.3)
    (wp,) = sc["waypoints"]
    assert wp["exact"] is True and wp["time"] == pytest.approx(59.5 * 1.001 / 30)
    assert wp["position"] == [8.0, 1.0] and wp["heading"] == pytest.approx(0.2)
    # half-way between two nodes (one a frame): imposed on the chord within the tolerance less the curve's
    # departure from it, which the bake follows (core.shot.grid.key_allowance)
    assert 0.025 <= wp["radius"] < 0.05
    assert sc["integrator"]["steps"] == round(119.25) and sc["time"]["duration"] == pytest.approx(119.25 * 1.001 / 30)
    assert segment.waypoint_labels == ["key of 'Car' at frame 60.5"]


def test_scene_units_become_metres_and_tolerance_follows():
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (800.0, 100.0), 0.0, False), (97.0, (2000.0, 0.0), 0.0, True)],
                scale=0.01)
    shot.settings.key_tolerance = 5.0  # 5 cm in a centimetre scene
    sc = plan(shot).scenario
    assert sc["waypoints"][0]["position"] == pytest.approx([8.0, 1.0]) and sc["waypoints"][0]["radius"] == 0.05
    assert sc["goal"]["position"] == pytest.approx([20.0, 0.0])


def test_a_stop_between_keys_splits_the_shot():
    stop = Constraint("Stop", "STOP", 25.0, position=np.array([6.0, 0.0, 0.0]), radius=0.05, speed=0.0,
                      forward=np.array([1.0, 0.0, 0.0]))
    problem = plan(_car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (12.0, 0.0), 0.0, True)], empties=[stop]))
    assert [(s.frame_start, s.frame_end) for s in problem.segments] == [(1.0, 25.0), (25.0, 49.0)]
    first, second = (s.scenario for s in problem.segments)
    assert first["goal"] == {"position": [6.0, 0.0], "speed": 0.0}
    assert second["start"] == {} and second["goal"]["position"] == [12.0, 0.0]


def test_contradictions_and_keys_inside_obstacles_are_named():
    boulder = ObstacleShape("Boulder", "sphere", np.array([6.0, 0.0, 0.0]), radius=1.0)
    with pytest.raises(ShotError, match=r"'Car' at frame 25 is inside obstacle 'Boulder' \(clearance"):
        plan(_car([(1.0, (0.0, 0.0), 0.0, True), (25.0, (6.0, 0.0), 0.0, False), (49.0, (12.0, 0.0), 0.0, True)],
                  obstacles=[boulder]))
    far = Constraint("Far Stop", "STOP", 25.0, position=np.array([6.0, 20.0, 0.0]), radius=0.5, speed=0.0)
    gate = Constraint("Gate", "PASS_THROUGH", 25.0, position=np.array([6.0, 3.0, 0.0]), radius=1.0)
    with pytest.raises(ShotError, match=r"contradictory constraints at frame 25: stop 'Far Stop' \(frame 25\) "
                                        r"and pass-through 'Gate' \(frame 25\) are 17 m apart"):
        plan(_car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (12.0, 0.0), 0.0, True)], empties=[far, gate]))


def test_too_few_steps_and_too_many():
    with pytest.raises(ShotError, match=r"frames 1–2 give 1 step"):
        plan(_car([(1.0, (0.0, 0.0), 0.0, True), (2.0, (0.1, 0.0), 0.0, True)]))
    with pytest.raises(ShotError, match=r"= 20100 steps; the most a solve takes is 20000"):
        plan(_car([(1.0, (0.0, 0.0), 0.0, True), (202.0, (10.0, 0.0), 0.0, True)], spf=100))


def test_messages_name_frames_objects_and_keys():
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (33.0, (8.0, 1.0), 0.0, False), (49.0, (12.0, 0.0), 0.0, True)],
                obstacles=[ObstacleShape("Boulder", "sphere", np.array([6.0, 6.0, 0.0]), radius=1.0)], spf=2)
    problem = plan(shot)
    text = problem.describe("largest violation 3 in obstacle #1 (sphere) (node 10); waypoint #1 missed (node 64)")
    assert text == "largest violation 3 in obstacle 'Boulder' (frame 6); key of 'Car' at frame 33 missed (frame 33)"
    assert isinstance(problem.segments[0], Segment)


# -- feasibility first ---------------------------------------------------------------------------------

def test_a_goal_too_far_for_the_torque_is_refused_with_the_frames_to_add():
    """20 m in 2 s from rest: a hatchback (2000 N·m at 0.3 m wheels, 1200 kg, 1.8 kg·m² wheels) reaches
    0.3 · 2000 / (1.8 + 0.09 · 1200) = 5.46 m/s², so at most 10.9 m; 17 frames more at 24 fps cover 20 m."""
    with pytest.raises(ShotError) as info:
        plan(_car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (20.0, 0.0), 0.0, False)], fps=24.0))
    assert str(info.value) == ("frames 1–49: 'Car' must cover 20 m in 2 s from rest (key of 'Car' at frame 49); "
                               "with its Max Torque of 2000 N·m it covers at most 10.9 m: add about 17 frames, "
                               "move the key, or raise Max Torque")
    plan(_car([(1.0, (0.0, 0.0), 0.0, True), (66.0, (20.0, 0.0), 0.0, False)], fps=24.0))  # 17 frames more: fine


def test_a_turn_too_tight_for_the_steering_is_refused_in_degrees():
    """A 90° turn keyed 1 s apart from 1 m/s: at most 1 + 5.46/2 = 3.73 m of travel, while a 90° turn at the
    tightest radius (2.55 / tan 35° = 3.64 m) is 5.72 m long: atan(2.55 · (π/2) / 3.73) = 47° of steering;
    1 + 2.73 T² = 5.72 at T = 1.28 s: 7 frames more."""
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (25.0, (2.0, 2.0), math.radians(90.0), True)], fps=24.0)
    shot.keys[0].speed = 1.0
    with pytest.raises(ShotError) as info:
        plan(shot)
    assert str(info.value) == ("frames 1–25: 'Car' must turn 90° within 1 s (key of 'Car' at frame 25); it can "
                               "travel at most 3.73 m in that time, which needs 47° of steering (limit 35°): add "
                               "about 7 frames, move the key, or raise Max Steering Angle")


def test_a_stop_needs_room_to_brake():
    stop = Constraint("Stop", "STOP", 25.0, position=np.array([10.0, 0.0, 0.0]), radius=0.05, speed=0.0)
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (14.0, 0.0), 0.0, True)], fps=24.0, empties=[stop])
    shot.keys[0].speed = 10.0  # from 10 m/s it cannot brake to rest within 1 s (5.46 m/s²)
    with pytest.raises(ShotError, match=r"frames 1–25: 'Car' must cover 9.95 m in 1 s at up to 10 m/s and stop "
                                        r"there \(stop 'Stop' \(frame 25\)\); with its Max Torque of 2000 N·m it "
                                        r"covers at most 2.73 m"):
        plan(shot)


def test_reach_bounds():
    from core.shot.feasibility import reach
    assert reach(0.0, 2.0, 3.0, False, None) == pytest.approx(9.0)
    assert reach(0.0, 2.0, 3.0, True, None) == pytest.approx(4.5)       # accelerate 1.5 s, brake 1.5 s
    assert reach(4.0, 2.0, 1.0, True, None) == pytest.approx(1.0)       # arrives at 2 m/s at most, brakes 1 m
    assert reach(3.0, 2.0, 3.0, False, 4.0) == pytest.approx(12.0)      # the speed limit caps it (18 m else)


# -- failures in the artist's terms ------------------------------------------------------------------

class _Motion:
    """The fields of a Trajectory that explain() reads."""

    def __init__(self, n: int, torque=None, steering=None, speed=None):
        self.controls = {"torque": np.zeros(n - 1) if torque is None else np.asarray(torque, dtype=float),
                         "steering_rate": np.zeros(n - 1)}
        self.shape = {"steering_angle": np.zeros(n) if steering is None else np.asarray(steering, dtype=float),
                      "wheel_angle": np.zeros(n)}
        v = np.zeros((n, 3))
        if speed is not None:
            v[:, 0] = speed
        self.linear_velocity = v


def test_explain_names_the_limits_at_work_around_the_failing_frames():
    from core.shot.explain import Failure, explain
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (49.0, (12.0, 0.0), 0.0, True)], fps=8.0)
    shot.parameters["max_torque"] = 2000.0
    problem = plan(shot)
    segment = problem.segments[0]
    n = segment.scenario["integrator"]["steps"] + 1
    torque = np.zeros(n - 1)
    torque[20:26] = 1999.0                      # at Max Torque around node 23 (frame 24)
    steering = np.zeros(n)
    steering[22] = -0.99 * math.radians(35.0)   # and at full lock once
    motion = _Motion(n, torque, steering)
    text = explain("Car", Failure("dynamics: momentum (eq. 10)", 23, 23, 0.4), segment, problem, motion,
                   "infeasible")
    assert text == ("'Car' cannot meet every key: in frames 18–30 it needs more than Max Torque (2000 N·m) and "
                    "Max Steering Angle (35°) allow: add frames, move the keys apart, or raise those limits")
    calm = explain("Car", Failure("dynamics: momentum (eq. 10)", 23, 23, 0.4), segment, problem, _Motion(n),
                   "stalled")
    assert calm == "'Car' cannot meet every key: its motion breaks down in frames 18–30: add frames or move the " \
                   "keys apart"


def test_explain_names_obstacles_and_keys_by_their_objects():
    from core.shot.explain import Failure, explain
    boulder = ObstacleShape("Boulder", "sphere", np.array([6.0, 6.0, 0.0]), radius=1.0)
    shot = _car([(1.0, (0.0, 0.0), 0.0, True), (25.0, (6.0, 1.0), 0.0, False), (49.0, (12.0, 0.0), 0.0, True)],
                obstacles=[boulder])
    problem = plan(shot)
    segment = problem.segments[0]
    n = segment.scenario["integrator"]["steps"] + 1
    text = explain("Car", Failure("clearance: obstacle #1 (sphere)", 40, 10, 0.3), segment, problem, _Motion(n),
                   "infeasible")
    assert text == "'Car' cannot meet every key: around frame 11 it cannot keep clear of obstacle 'Boulder': " \
                   "move the key or the obstacle, or add frames"
    text = explain("Car", Failure("waypoint #1", 0, 24, 0.09), segment, problem, _Motion(n), "time_limit")
    assert text == ("'Car' ran out of time (Solve Settings › Time Limit) before it met every key: it misses key of "
                    "'Car' at frame 25 in frames 19–31: add frames or move the key")


def test_the_solver_reports_where_it_fails_as_data():
    """NLP.worst_detail: the group, instance, label and node of the largest violation (the same row
    NLP.worst names), for the planner to turn into frames and objects."""
    from core.dmoc.constraints import assemble
    from core.dmoc.initial_guess import initial_guess
    from core.dmoc.scenario import read
    from core.scenario import loads
    from tests.core.dmoc.problems import CAR
    setup = read(loads(CAR.format(alpha=0.5)))
    nlp = assemble(setup.model, setup.spec)
    z = nlp.reduce(initial_guess(setup.model, setup.spec))
    detail = nlp.worst_detail(z)
    name, value = nlp.worst(z)
    assert name == f"{detail['group']} ({detail['label']})" and detail["value"] == value > 0
    assert detail["node"] == int(detail["label"].split()[1].rstrip(","))


def test_a_boat_held_at_rest_off_its_waterline_is_warned_about():
    from core.vehicles.boat import Boat
    z0 = Boat().float_height()  # the default 800 kg RIB on its default hull

    def shot(goal_z: float) -> ShotInput:
        keys = [KeyPose(1.0, np.array([0.0, 0.0, z0]), np.eye(3), rotation_keyed=True, speed=0.0),
                KeyPose(81.0, np.array([12.0, 0.0, goal_z]), np.eye(3), rotation_keyed=True, speed=0.0)]
        return ShotInput(vehicle="Boat", vehicle_type="BOAT", core_type="boat",
                         frame_map=FrameMap(1.0, 81.0, 8.0, 1), keys=keys, empties=[], obstacles=[],
                         spheres=np.array([[0.0, 0.0, 0.0, 1.5]]), parameters={"type": "boat", "mass": 800.0},
                         input_limits={"thruster_1": 1500.0, "thruster_2": 1500.0}, settings=_settings())

    assert not [w for w in plan(shot(z0)).warnings if "floats" in w]
    warnings = [w for w in plan(shot(z0 - 0.6)).warnings if "floats" in w]
    assert warnings == ["'Boat' is held at rest at frame 81 0.6 m below where it floats (key of 'Boat' at frame "
                        "81): it cannot stay there; key it 0.6 m higher"]
