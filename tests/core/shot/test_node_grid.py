"""The node grid and the motion between nodes (docs/equations.md): core.shot.grid picks the node
count from the vehicle, the keys, the obstacles and the speed; core.shot.resample is the C¹ Lie group
Hermite curve the bake evaluates at every frame; a baked motion cutting into an obstacle between nodes
asks for a finer grid, warm-started from the coarse solution."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline, PchipInterpolator

from core.lie import quaternion, se3, so3
from core.shot import FrameMap, KeyPose, ObstacleShape, ShotError, ShotInput, ShotSettings, plan
from core.shot import grid, resample
from core.shot.plan import MAX_STEPS, Constraint
from core.trajectory import Trajectory

RNG = np.random.default_rng(7)


def _random_nodes(n=7):
    t = np.cumsum(np.r_[0.0, RNG.uniform(0.1, 0.4, n - 1)])
    R = so3.exp(RNG.normal(scale=0.7, size=(n, 3)))
    x = RNG.normal(size=(n, 3))
    V = RNG.normal(size=(n, 6))
    return t, R, x, V


def _twist_between(R0, x0, R1, x1) -> np.ndarray:
    return se3.log(se3.inverse(se3.make(R0, x0)) @ se3.make(R1, x1))


# -- the interpolant ------------------------------------------------------------------------------------

def test_hermite_curve_reproduces_the_nodes_and_their_velocities():
    t, R, x, V = _random_nodes()
    Rs, xs, p, vel = resample.se3_hermite(t, R, x, V, t, velocity=True)
    assert np.abs(Rs - R).max() < 1e-12 and np.abs(xs - x).max() < 1e-12
    assert np.abs(vel - V).max() < 1e-9


def test_hermite_curve_is_c1_at_the_nodes():
    """The one-sided body velocities at an interior node tend to the same value (the node's) as the
    difference step shrinks: first order in the step, so ten times smaller per decade."""
    t, R, x, V = _random_nodes()
    for k in range(1, len(t) - 1):
        gaps, errors = [], []
        for eps in (1e-3, 1e-4, 1e-5):
            Rs, xs, _ = resample.se3_hermite(t, R, x, V, np.array([t[k] - eps, t[k], t[k] + eps]))
            before = _twist_between(Rs[0], xs[0], Rs[1], xs[1]) / eps
            after = _twist_between(Rs[1], xs[1], Rs[2], xs[2]) / eps
            gaps.append(float(np.linalg.norm(after - before)))
            errors.append(max(float(np.linalg.norm(after - V[k])), float(np.linalg.norm(before - V[k]))))
        assert gaps[2] < 0.2 * gaps[1] < 0.04 * gaps[0] and gaps[2] < 1e-2
        assert errors[2] < 0.2 * errors[1] < 0.04 * errors[0] and errors[2] < 1e-2


def test_hermite_curve_velocity_matches_its_derivative_between_nodes():
    t, R, x, V = _random_nodes()
    times = np.array([0.3 * t[1] + 0.7 * t[2], 0.5 * (t[3] + t[4])])
    eps = 1e-6
    R0, x0, _, vel = resample.se3_hermite(t, R, x, V, times, velocity=True)
    R1, x1, _ = resample.se3_hermite(t, R, x, V, times + eps)
    for j in range(len(times)):
        assert _twist_between(R0[j], x0[j], R1[j], x1[j]) / eps == pytest.approx(vel[j], abs=1e-4)


def test_constant_body_velocity_gives_the_exponential_curve():
    t = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    W = np.array([0.4, -1.1, 2.3, 3.0, -0.5, 0.8])
    g = np.stack([se3.make(so3.exp([0.1, 0.2, 0.3]), [1.0, 2.0, 3.0]) @ se3.exp(s * W) for s in t])
    times = np.linspace(0.0, 1.0, 41)
    Rs, xs, _ = resample.se3_hermite(t, g[:, :3, :3], g[:, :3, 3], np.tile(W, (5, 1)), times)
    exact = np.stack([g[0] @ se3.exp(s * W) for s in times])
    assert np.abs(Rs - exact[:, :3, :3]).max() < 1e-12 and np.abs(xs - exact[:, :3, 3]).max() < 1e-12


def test_translation_only_is_scipys_cubic_hermite_spline():
    t, _, x, V = _random_nodes()
    R = np.tile(np.eye(3), (len(t), 1, 1))
    times = np.linspace(t[0], t[-1], 97)
    _, xs, _ = resample.se3_hermite(t, R, x, np.c_[np.zeros((len(t), 3)), V[:, 3:]], times)
    assert np.abs(xs - CubicHermiteSpline(t, x, V[:, 3:])(times)).max() < 1e-12
    assert np.abs(resample.cubic_hermite(t, x, V[:, 3:], times) - CubicHermiteSpline(t, x, V[:, 3:])(times)).max() \
        < 1e-12


def test_scalar_channels_are_scipys_pchip_and_never_overshoot():
    t = np.array([0.0, 0.1, 0.3, 0.35, 0.7, 1.0, 1.2])
    steering = np.array([0.0, 0.3, 0.55, 0.55, 0.1, -0.55, -0.2])       # held at its limit ±0.55 in places
    times = np.linspace(0.0, 1.2, 301)
    values = resample.pchip(t, steering, times)
    assert np.abs(values - PchipInterpolator(t, steering)(times)).max() < 1e-12
    assert values.max() <= 0.55 + 1e-12 and values.min() >= -0.55 - 1e-12
    spin = np.cumsum([0.0, 2.0, 0.0, 3.0, 5.0, 0.5, 4.0])               # a wheel that stops and goes on
    assert np.all(np.diff(resample.pchip(t, spin, times)) >= -1e-12)


def test_stored_velocities_are_used_when_they_describe_the_nodes_else_the_differences():
    t = np.linspace(0.0, 2.0, 21)
    W = np.array([0.0, 0.0, 0.8, 3.0, 0.0, 0.0])                         # a car on a circle, 3 m/s
    g = np.stack([se3.exp(s * W) for s in t])
    R, x = g[:, :3, :3], g[:, :3, 3]
    good = resample.node_tangents(t, R, x, np.tile(W[:3], (21, 1)), np.tile(W[3:], (21, 1)))
    assert np.abs(good - W).max() == 0.0                                  # its own, untouched
    zeros = resample.node_tangents(t, R, x, np.zeros((21, 3)), np.zeros((21, 3)))
    assert np.abs(zeros - W).max() < 1e-9                                 # the nodes' differences


def test_sampled_heading_is_continuous_over_many_turns():
    t = np.linspace(0.0, 10.0, 41)
    W = np.array([0.0, 0.0, 2.0, 4.0, 0.0, 0.0])                         # 20 rad: three turns and more
    g = np.stack([se3.exp(s * W) for s in t])
    n = len(t)
    traj = Trajectory(time=t, position=g[:, :3, 3], orientation=quaternion.from_matrix(g[:, :3, :3]),
                      angular_velocity=np.tile(W[:3], (n, 1)), linear_velocity=np.tile(W[3:], (n, 1)),
                      heading=2.0 * t, shape={"steering_angle": np.full(n, 0.3)}, vehicle="car")
    times = np.linspace(0.0, 10.0, 241)
    smp = resample.sample(traj, times)
    assert smp.heading == pytest.approx(2.0 * times, abs=1e-9)
    assert smp.position == pytest.approx(np.stack([se3.exp(s * W)[:3, 3] for s in times]), abs=1e-9)
    assert smp.shape["steering_angle"] == pytest.approx(np.full(241, 0.3))


def _slalom_car(h: float, seconds: float = 6.0) -> Trajectory:
    """A hatchback simulated by its discrete model at step h, steering to and fro while it speeds up."""
    from core.scenario import Table
    from core.scenario.car import read_car
    from core.vehicles.car import CarInitial, simulate
    car = read_car(Table({"preset": "hatchback"}, "vehicle"))
    steps = int(round(seconds / h))
    t = np.arange(steps) * h
    controls = {"torque": np.full(steps, 600.0), "steering_rate": 0.9 * np.cos(1.7 * t)}
    return simulate(car, CarInitial(wheel_rate=3.0 / car.wheel_radius), controls, h, steps)


def test_a_car_rolls_between_nodes_without_slipping():
    """The car's rear axle takes the rolling curve: through every node with its heading, yaw rate and speed,
    and its velocity along its heading between them (the SE(3) curve would slip by tenths of a degree)."""
    traj = _slalom_car(0.25)
    assert resample.rolls(traj)
    times = np.linspace(0.0, traj.time[-1], 6 * 24 + 1)
    smp = resample.sample(traj, times)
    v = smp.linear_velocity
    slip = np.degrees(np.abs(np.arctan2(v[:, 1], v[:, 0])))
    assert np.max(slip[np.abs(v[:, 0]) > 1.0]) < 0.02
    at_nodes = resample.sample(traj, traj.time)
    assert at_nodes.position == pytest.approx(traj.position, abs=1e-9)
    assert at_nodes.heading == pytest.approx(traj.heading, abs=1e-12)
    assert at_nodes.linear_velocity[:, 0] == pytest.approx(traj.linear_velocity[:, 0], abs=1e-9)
    assert at_nodes.angular_velocity[:, 2] == pytest.approx(traj.angular_velocity[:, 2], abs=1e-9)
    R = quaternion.to_matrix(traj.orientation)
    V = resample.node_tangents(traj.time, R, traj.position, traj.angular_velocity, traj.linear_velocity)
    _, _, _, lie = resample.se3_hermite(traj.time, R, traj.position, V, times, velocity=True)
    fast = np.abs(lie[:, 3]) > 1.0
    assert np.max(np.degrees(np.abs(np.arctan2(lie[fast, 4], lie[fast, 3])))) > 0.05


def test_the_rolling_curve_is_c1_and_exact_on_a_circle():
    traj = _slalom_car(0.25)
    for k in (5, 11, 17):
        eps = 1e-6
        smp = resample.sample(traj, np.array([traj.time[k] - eps, traj.time[k], traj.time[k] + eps]))
        before, after = (smp.position[1] - smp.position[0]) / eps, (smp.position[2] - smp.position[1]) / eps
        assert np.linalg.norm(after - before) < 1e-4
        assert (smp.heading[2] - smp.heading[1]) / eps == pytest.approx((smp.heading[1] - smp.heading[0]) / eps,
                                                                         abs=1e-4)
    t = np.linspace(0.0, 3.0, 7)
    theta, pos, vel, rate = resample.rolling_curve(t, 0.7 * t, np.stack([4 / 0.7 * np.sin(0.7 * t),
                                                                      4 / 0.7 * (1 - np.cos(0.7 * t)),
                                                                      np.zeros(7)], axis=1),
                                                   np.full(7, 0.7), np.full(7, 4.0), np.linspace(0, 3, 61))
    s = np.linspace(0, 3, 61)
    assert pos[:, :2] == pytest.approx(np.stack([4 / 0.7 * np.sin(0.7 * s), 4 / 0.7 * (1 - np.cos(0.7 * s))], 1),
                                       abs=1e-12)
    assert theta == pytest.approx(0.7 * s, abs=1e-12) and rate == pytest.approx(np.full(61, 0.7), abs=1e-12)


# -- the grid rule ----------------------------------------------------------------------------------------

def _point(frame, fps, position, radius=0.0, between=False, at_rest=False):
    return grid.TimedPoint(frame, (frame - 1) / fps, np.asarray(position, dtype=float), radius, between, at_rest)


def test_a_long_shot_without_obstacles_takes_the_vehicles_step_on_its_key_frames():
    """12 s at 24 fps: the car's 0.2 s bound is 4.8 frames; 4 frames put both keys on nodes: 72 steps, not 288."""
    points = [_point(1, 24, [0, 0]), _point(289, 24, [60, 8])]
    chosen = grid.automatic("CAR", 288, 24.0, points, [], 1.0, 5.0, offsets=[288])
    assert chosen.frames_per_step == 4 and chosen.steps(288) == 72 and "car" in chosen.reason
    boat = grid.automatic("BOAT", 288, 24.0, points, [], 1.0, 5.0, offsets=[288])
    assert boat.frames_per_step == 2 and boat.steps(288) == 144 and boat.frames_per_step / 24 <= 0.1


def test_obstacles_and_speed_shrink_the_step_so_the_chord_stays_out():
    """speed × h ≤ √(8ρε): the chord between two nodes outside a corner of radius ρ cuts in by at most ε."""
    points = [_point(1, 24, [0, 0], at_rest=True), _point(289, 24, [60, 0])]
    post = grid.Obstacle("Post", margin=0.2, radius=0.5)
    chosen = grid.automatic("CAR", 288, 24.0, points, [post], 1.0, 5.0, offsets=[288])
    v = grid.peak_speed(points)
    assert v == pytest.approx(2 * 60 / 12)
    h = chosen.frames_per_step / 24
    rho, eps = 1.0 + 0.2 + 0.5, 0.1
    assert v * h <= math.sqrt(8 * rho * eps) + 1e-9 and chosen.reason.startswith("Post at up to 10 m/s")
    assert (v * h) ** 2 / (8 * rho) <= eps + 1e-9
    limited = grid.automatic("CAR", 288, 24.0, points, [post], 1.0, 5.0, limit=3.0, offsets=[288])
    assert limited.frames_per_step > chosen.frames_per_step                  # a speed limit: a coarser grid


def test_keys_between_nodes_cap_the_step_and_loosen_only_by_the_allowance():
    """Keys at frames that no coarse step puts on a node: h ≤ √(4r/a), the curve then leaves the chord by at
    most r/2; keys on nodes keep their whole radius."""
    fps, r, a = 24.0, 0.05, 8.0
    points = [_point(1, fps, [0, 0]), _point(50, fps, [8, 1], r, True), _point(97, fps, [16, 0])]
    chosen = grid.automatic("CAR", 96, fps, points, [], 1.0, a, offsets=[49, 96])
    h = chosen.frames_per_step / fps
    assert h <= math.sqrt(4 * r / a) + 1e-12 and "keys between nodes" in chosen.reason
    assert a * h * h / 8 <= r / 2 + 1e-12
    assert grid.key_allowance(r, a, h, 0.5) == pytest.approx(r - a * h * h / 8)
    assert grid.key_allowance(r, a, h, 0.0) == r
    aligned = grid.automatic("CAR", 96, fps, [_point(1, fps, [0, 0]), _point(49, fps, [8, 1], r, True),
                                               _point(97, fps, [16, 0])], [], 1.0, a, offsets=[48, 96])
    assert aligned.frames_per_step == 4 and "every key on a node" in aligned.reason


def test_a_bound_below_a_frame_gives_whole_fractions_of_a_frame():
    points = [_point(1, 24, [0, 0]), _point(25, 24, [40, 0])]               # 40 m/s peak past a thin wall
    wall = grid.Obstacle("Wall", margin=0.0)
    chosen = grid.automatic("CAR", 24, 24.0, points, [wall], 0.3, 5.0, offsets=[24])
    assert chosen.frames_per_step < 1 and (1 / chosen.frames_per_step) == round(1 / chosen.frames_per_step)


# -- the planner ---------------------------------------------------------------------------------------------

def _rot(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _car(keys, *, fps=24.0, spacing="AUTOMATIC", node_count=0, spf=2, obstacles=(), empties=(), scale=1.0):
    poses = [KeyPose(f, np.array([x, y, 0.0]) / scale, _rot(h), rotation_keyed=True, speed=0.0 if i == 0 else None,
                     euler_heading=h) for i, (f, (x, y), h) in enumerate(keys)]
    fm = FrameMap(keys[0][0], keys[-1][0], fps, spf, scale, spacing=spacing, node_count=node_count)
    settings = ShotSettings(key_tolerance=0.05 / scale, weights={"effort": 1.0},
                            solver={"backend": "scipy", "max_iter": 200, "tol": 1e-6, "time_limit_s": 60.0})
    return ShotInput(vehicle="Car", vehicle_type="CAR", core_type="car", frame_map=fm, keys=poses,
                     empties=list(empties), obstacles=list(obstacles), spheres=np.array([[1.2, 0.0, 0.5, 1.0]]),
                     parameters={"type": "car", "mass": 1200.0, "wheel_radius": 0.3, "wheelbase": 2.55,
                                 "wheel_inertia": 1.8, "yaw_inertia": 1700.0, "max_steering_angle": math.radians(35.0),
                                 "max_steering_rate": 1.2, "max_torque": 2000.0},
                     input_limits={"torque": 2000.0, "steering_rate": 1.2}, settings=settings)


TWELVE_SECONDS = [(1.0, (0.0, 0.0), 0.0), (145.0, (30.0, 4.0), 0.2), (289.0, (60.0, 8.0), 0.0)]


def test_automatic_spacing_plans_a_twelve_second_shot_on_far_fewer_nodes_than_frames():
    problem = plan(_car(TWELVE_SECONDS))
    (segment,) = problem.segments
    fm = problem.frame_map
    assert segment.scenario["integrator"]["steps"] == fm.steps == 72 and fm.frames_per_step == 4
    (wp,) = segment.scenario["waypoints"]
    assert wp["radius"] == pytest.approx(0.05)             # on a node: the whole Key Tolerance
    assert grid.describe(fm) == "73 nodes, 0.167 s apart"


def test_per_frame_spacing_is_todays_node_count_and_node_count_is_the_count():
    assert plan(_car(TWELVE_SECONDS, spacing="PER_FRAME")).segments[0].scenario["integrator"]["steps"] == 576
    assert plan(_car(TWELVE_SECONDS, spacing="PER_FRAME", spf=1)).frame_map.steps == 288
    counted = plan(_car(TWELVE_SECONDS, spacing="COUNT", node_count=121))
    assert counted.segments[0].scenario["integrator"]["steps"] == 120
    assert counted.frame_map.dt == pytest.approx(0.1)


def test_stops_split_the_shot_on_the_same_step():
    stop = Constraint("Stop", "STOP", 145.0, position=np.array([30.0, 4.0, 0.0]), radius=0.1, speed=0.0)
    problem = plan(_car(TWELVE_SECONDS, empties=[stop]))
    assert [s.scenario["integrator"]["steps"] for s in problem.segments] == [36, 36]


@pytest.mark.parametrize("count, message", [
    (2, r"Solve Settings › Node Count is 2: a solve takes from 3 to 20001 nodes"),
    (MAX_STEPS + 2, r"Solve Settings › Node Count is 20002: a solve takes from 3 to 20001 nodes"),
])
def test_bad_node_counts_are_one_line_naming_the_setting(count, message):
    with pytest.raises(ShotError, match=message) as info:
        plan(_car(TWELVE_SECONDS, spacing="COUNT", node_count=count))
    assert "\n" not in str(info.value)


def test_node_count_too_small_for_a_segment_between_stops_names_the_setting():
    stop = Constraint("Stop", "STOP", 229.0, position=np.array([48.0, 6.4, 0.0]), radius=0.1, speed=0.0)
    with pytest.raises(ShotError, match=r"frames 229–289 \(between stops\) get 1 step at Node Count 4 .* raise "
                                        r"Solve Settings › Node Count"):
        plan(_car(TWELVE_SECONDS, spacing="COUNT", node_count=4, empties=[stop]))


def test_an_automatic_grid_beyond_the_solver_names_node_spacing():
    keys = [(1.0, (0.0, 0.0), 0.0), (1_000_001.0, (60.0, 8.0), 0.0)]
    with pytest.raises(ShotError, match=r"frames 1–1000001 need \d+ steps of [\d.]+ s \(Solve Settings › Node "
                                        r"Spacing Automatic: the car's dynamics"):
        plan(_car(keys))


def test_centimetre_scenes_get_the_same_grid():
    metres = plan(_car(TWELVE_SECONDS)).frame_map
    centimetres = plan(_car(TWELVE_SECONDS, scale=0.01)).frame_map
    assert (metres.steps, metres.frames_per_step) == (centimetres.steps, centimetres.frames_per_step)


# -- after the solve: the baked motion against the obstacles ---------------------------------------------------

def _straight(problem, y: float) -> Trajectory:
    """A trajectory along y = const at 5 m/s on the problem's nodes (world = solve: scale 1, offset 0)."""
    fm = problem.frame_map
    t = np.linspace(0.0, fm.duration, fm.steps + 1)
    n = len(t)
    x = np.stack([5.0 * t, np.full(n, y), np.zeros(n)], axis=1)
    return Trajectory(time=t, position=x, orientation=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
                      angular_velocity=np.zeros((n, 3)), linear_velocity=np.tile([5.0, 0.0, 0.0], (n, 1)),
                      heading=np.zeros(n), vehicle="car")


def test_a_motion_cutting_into_a_margin_between_nodes_asks_for_a_finer_grid():
    """Nodes 2.5 m apart on a straight line past a post: at the nodes the collision sphere (1 m, 1.2 m up the
    body) clears the post (1 m) by its margin 0.2 m, half-way between them it is 0.1 m inside it."""
    post = ObstacleShape("Post", "sphere", np.array([12.45, 1.9, 0.5]), radius=1.0, margin=0.2)
    problem = plan(_car([(1.0, (0.0, 0.0), 0.0), (97.0, (20.0, 0.0), 0.0)], spacing="COUNT", node_count=9,
                        obstacles=[post]))
    clear = grid.cut_in(problem, _straight(problem, -1.0))
    assert clear is not None and not clear.too_deep
    passing = _straight(problem, 0.0)
    node_clearance = np.linalg.norm(passing.position[:, :2] + [1.2, 0.0] - post.center[:2], axis=1) - 2.0
    assert node_clearance.min() >= 0.2 - 1e-9                           # every node keeps the margin
    cut = grid.cut_in(problem, passing)
    assert cut.too_deep and cut.depth == pytest.approx(0.3, abs=2e-3) and cut.frame == pytest.approx(55.0)
    assert cut.describe().startswith("between nodes the motion comes 30 cm into the margin of obstacle 'Post' at "
                                     "frame 55")
    finer, why = grid.refine(problem, passing)
    assert why.too_deep
    assert finer.frame_map.steps == 2 * problem.frame_map.steps
    assert finer.segments[0].scenario["integrator"]["steps"] == 16 and "refined 2×" in finer.frame_map.grid_reason
    assert grid.refine(problem, _straight(problem, -1.0)) is None


def test_a_finer_grid_is_warm_started_from_the_coarse_solution():
    from core.dmoc import solve_scenario
    from core.scenario import Table
    crate = ObstacleShape("Crate", "box", np.array([10.0, 1.5, 0.75]), half_extents=np.array([1.0, 1.0, 0.75]),
                          rotation=np.eye(3), margin=0.1)
    keys = [(1.0, (0.0, 0.0), 0.0), (97.0, (20.0, 0.0), 0.0)]
    problem = plan(_car(keys, spacing="COUNT", node_count=9, obstacles=[crate]))
    coarse, result, _ = solve_scenario(Table(problem.scenario))
    assert result.converged
    finer = plan(_car(keys, spacing="COUNT", node_count=33, obstacles=[crate]))
    start = grid.resample_trajectory(coarse, 32)
    assert len(start.time) == 33 and len(start.controls["torque"]) == 32
    assert start.position[::4] == pytest.approx(coarse.position, abs=1e-9)
    assert start.controls["torque"][::4] == pytest.approx(coarse.controls["torque"])
    warm, warm_result, _ = solve_scenario(Table(finer.scenario), initial=start)
    assert warm_result.converged and len(warm.time) == 33
