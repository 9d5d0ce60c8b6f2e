"""Contacts are not collisions (core.shot.contacts, core.dmoc [[obstacles]] contact): a vehicle keyed at
rest on or against an obstacle is accepted when its real geometry (mesh vertices) is not deeper than
1 cm inside it, the solver's clearance floor for that obstacle is lowered around the contact and rises
back to the margin, the rotor disc does not reach below the body, a Land empty alone gives the goal,
and solved shots — a helicopter landing on a box top, a car parked nose-in against a wall — never take
the real geometry deeper than the tolerance into the obstacle."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.dmoc.constraints import assemble
from core.dmoc.obstacles import Contact, Obstacle
from core.dmoc.scenario import read
from core.errors import ScenarioError
from core.scenario import Table
from core.shot import Constraint, FrameMap, KeyPose, ObstacleShape, ShotError, ShotInput, ShotSettings, plan, shot_range
from core.shot import contacts
from core.shot.geometry import RotorDisc, fit_spheres, rotor_disc, swept

TOL = contacts.TOLERANCE


def box_points(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])], float)


def dense_box(lo, hi, n=5) -> np.ndarray:
    """Points on a box's surface (a mesh's vertices, denser than its corners)."""
    axes = [np.linspace(lo[i], hi[i], n) for i in range(3)]
    g = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    on = np.any(np.isclose(g, lo) | np.isclose(g, hi), axis=1)
    return g[on]


def rot(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# -- the floor and the scenario key ----------------------------------------------------------------

def test_the_floor_is_the_allowance_at_a_contact_and_rises_quadratically_to_the_margin():
    ob = Obstacle("sphere", center=np.zeros(3), radius=1.0, margin=0.2,
                  contacts=(Contact(2.0, -0.6, 1.0), Contact(5.0, -0.1, 2.0)))
    t = np.array([0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0])
    expect = np.minimum.reduce([np.full(len(t), 0.2),
                                -0.6 + 0.8 * np.minimum(1.0, np.abs(t - 2.0) / 1.0) ** 2,
                                -0.1 + 0.3 * np.minimum(1.0, np.abs(t - 5.0) / 2.0) ** 2])
    assert ob.floors(t) == pytest.approx(expect, abs=1e-15)
    assert ob.floors([2.0, 1.5, 5.0, 8.0]) == pytest.approx([-0.6, -0.4, -0.1, 0.2])
    assert Obstacle("sphere", center=np.zeros(3), radius=1.0, margin=0.3).floors([0.0, 1.0]) == pytest.approx([0.3, 0.3])


CAR = """
[vehicle]
type = "car"
mass = 1200.0
yaw_inertia = 1700.0
wheel_radius = 0.3
wheelbase = 2.55
wheel_inertia = 1.8
max_steering_angle = 0.6
max_steering_rate = 1.2
max_torque = 2000.0
collision_spheres = [[-1.5, 0.0, 0.0, 1.145], [-0.5, 0.0, 0.0, 1.145], [0.5, 0.0, 0.0, 1.145], [1.5, 0.0, 0.0, 1.145]]
[integrator]
steps = 48
[time]
duration = 6.0
[start]
position = [0.0, 0.0]
speed = 0.0
[goal]
position = [12.0, 0.0]
heading = 0.0
speed = 0.0
[[obstacles]]
type = "box"
center = [14.2, 0.0, 1.0]
half_extents = [0.2, 4.0, 1.0]
margin = 0.1
{contact}
[solver]
backend = "scipy"
max_iter = 300
"""


def _toml(text: str) -> Table:
    import tomllib
    return Table(tomllib.loads(text))


def test_the_contact_key_is_read_and_checked():
    setup = read(_toml(CAR.format(contact="contact = [{time = 6.0, allowance = -0.646, span = 1.5}]")))
    [ob] = setup.spec.obstacles
    assert ob.contacts == (Contact(6.0, -0.646, 1.5),)
    assert read(_toml(CAR.format(contact="contact = [{time = 0.0, allowance = 0.05}]"))).spec.obstacles[0].contacts \
        == (Contact(0.0, 0.05, 1.0),)   # span defaults to 1 s
    bad = {"contact = [{time = 6.5, allowance = -0.6}]": r"\[obstacles #1.contact #1\] time: must be at most 6",
           "contact = [{time = 6.0, allowance = 0.2}]": r"\[obstacles #1.contact #1\] allowance: must be at most 0.1",
           "contact = [{time = 6.0, allowance = -0.6, span = 0}]": r"span: must be positive",
           "contact = [{time = 6.0}]": r"\[obstacles #1.contact #1\] allowance: missing",
           "contact = [{time = 6.0, allowance = -0.6, depth = 1}]": r"contact #1\] depth: unknown key"}
    for text, pattern in bad.items():
        with pytest.raises(ScenarioError, match=pattern):
            read(_toml(CAR.format(contact=text)))
    free = CAR.replace("duration = 6.0", "min = 4.0\nmax = 8.0").replace("[cost]", "")
    with pytest.raises(ScenarioError, match=r"contact #1\] time: contacts need a fixed \[time\] duration"):
        read(_toml(free.format(contact="contact = [{time = 6.0, allowance = -0.6}]")))


def test_the_clearance_rows_take_the_floor_of_their_node():
    setup = read(_toml(CAR.format(contact="contact = [{time = 6.0, allowance = -0.646, span = 1.5}]")))
    nlp = assemble(setup.model, setup.spec)
    [group] = [g for g in nlp.constraints if g.name == "obstacle #1 (box)"]
    t = np.arange(49) * 6.0 / 48
    floors = setup.spec.obstacles[0].floors(t)
    assert group.lower[:, 0] == pytest.approx(np.repeat(floors, 4))
    assert floors[-1] == pytest.approx(-0.646) and floors[0] == pytest.approx(0.1) and np.all(np.diff(floors) <= 0)
    # without the contact the goal itself is infeasible (its spheres reach 0.645 m into the wall)
    _, result, _ = solve_scenario(_toml(CAR.format(contact="")))
    assert not result.converged and "obstacle #1 (box) (node 48" in result.message


# -- the spheres and the rotor disc -----------------------------------------------------------------

HELI_BODY = np.concatenate([dense_box((-1.5, -0.8, 0.0), (1.5, 0.8, 1.8)),      # cabin, skids at z = 0
                            dense_box((-5.0, -0.15, 0.9), (-1.5, 0.15, 1.3))])  # tail boom
ROTOR_AT = np.array([0.0, 0.0, 2.4])
BLADES = np.array([[4.0, 0.1, 2.4], [-4.0, -0.1, 2.4], [0.1, -4.0, 2.4], [-0.1, 4.0, 2.4]])


def test_the_rotor_disc_gets_spheres_that_do_not_reach_below_the_body():
    disc = rotor_disc(BLADES, ROTOR_AT, np.array([0.0, 0.0, 1.0]))
    assert disc.radius == pytest.approx(math.hypot(4.0, 0.1)) and disc.centre == pytest.approx(ROTOR_AT)
    spheres = fit_spheres(HELI_BODY, 0.0, disc)
    row, rotor = spheres[spheres[:, 2] < 2.0], spheres[spheres[:, 2] > 2.0]
    assert len(rotor) == 7 and rotor[:, 3] == pytest.approx(np.full(7, disc.radius / 2))   # 7 discs of R/2
    assert np.min(rotor[:, 2] - rotor[:, 3]) >= 0.0 - 1e-12     # not below the skids
    # the spheres hold the body and the whole swept disc
    rng = np.random.default_rng(3)
    r, th = disc.radius * np.sqrt(rng.random(4000)), rng.random(4000) * 2 * math.pi
    disc_pts = ROTOR_AT + np.stack([r * np.cos(th), r * np.sin(th), np.zeros_like(r)], axis=1)
    for pts in (HELI_BODY, disc_pts):
        depth = np.max(spheres[None, :, 3] - np.linalg.norm(pts[:, None] - spheres[None, :, :3], axis=2), axis=1)
        assert np.min(depth) >= -1e-9
    # a disc low over the body: spheres of the height above the skids, but no smaller than R/3
    low = fit_spheres(HELI_BODY, 0.0, RotorDisc(np.array([0.0, 0.0, 1.5]), np.array([0.0, 0.0, 1.0]), 4.0))
    assert np.min(low[len(row):, 2] - low[len(row):, 3]) >= -1e-12 and len(low) - len(row) == 19
    # the row alone is the old rule; with the rotor in the row, the spheres reach 1.96 m below the skids
    old = fit_spheres(np.concatenate([HELI_BODY, swept(BLADES, ROTOR_AT, np.array([0.0, 0.0, 1.0]))]))
    assert np.min(old[:, 2] - old[:, 3]) < -1.5 and fit_spheres(HELI_BODY) == pytest.approx(row)
    # a Collision Radius keeps its meaning, a vehicle without meshes its one sphere
    assert np.all(fit_spheres(HELI_BODY, 2.0)[:, 3] == 2.0) and fit_spheres(np.zeros((0, 3)), 1.5).tolist() == \
        [[0.0, 0.0, 0.0, 1.5]]


# -- planning: contacts and collisions ----------------------------------------------------------------

SETTINGS = ShotSettings(0.05, {"effort": 1.0, "path_length": 0.0, "hazard": 0.0, "smoothness": 0.0},
                        solver={"backend": "scipy", "max_iter": 500, "tol": 1e-6, "time_limit_s": 120.0})
HELI_PARAMS = {"type": "helicopter", "mass": 600.0, "inertia": [300.0, 850.0, 700.0], "main_rotor_offset": 1.2,
               "tail_rotor_offset": 4.5, "max_tilt": math.radians(10.0), "max_collective": 1.6 * 600 * 9.81,
               "max_yaw": 1000.0, "rotor_speed": 55.5}
HELI_LIMITS = {"collective": 1.6 * 600 * 9.81, "yaw": 1000.0, "pitch_tilt": math.radians(10.0),
               "roll_tilt": math.radians(10.0)}
ROOF = 10.0


def building(margin=0.1) -> ObstacleShape:
    return ObstacleShape("Building", "box", np.array([16.0, 0.0, ROOF / 2]), half_extents=np.array([5.0, 5.0, ROOF / 2]),
                         rotation=np.eye(3), margin=margin)


def heli_shot(goal_z=ROOF, *, vertices=True, landing=None, fe=41.0, keys=None) -> ShotInput:
    disc = rotor_disc(BLADES, ROTOR_AT, np.array([0.0, 0.0, 1.0]))
    spheres = fit_spheres(HELI_BODY, 0.0, disc)
    real = np.concatenate([HELI_BODY, swept(BLADES, ROTOR_AT, np.array([0.0, 0.0, 1.0]))])
    if keys is None:
        keys = [KeyPose(1.0, np.array([0.0, 0.0, 14.0]), np.eye(3), rotation_keyed=True, speed=0.0),
                KeyPose(fe, np.array([16.0, 0.0, goal_z]), np.eye(3), rotation_keyed=True, speed=0.0)]
    return ShotInput("Heli", "HELICOPTER", "helicopter", FrameMap(1.0, fe, 8.0, 1), keys,
                     [landing] if landing is not None else [], [building()], spheres, dict(HELI_PARAMS),
                     dict(HELI_LIMITS), SETTINGS, vertices=real if vertices else None)


def test_a_helicopter_standing_on_a_roof_is_a_contact():
    problem = plan(heli_shot())
    [c] = problem.contacts
    spheres = problem.spheres
    clearance = float(np.min(building().distance(np.array([16.0, 0.0, ROOF]) + spheres[:, :3]) - spheres[:, 3]))
    assert clearance == pytest.approx(-0.42, abs=0.01)          # the body's row reaches 0.42 m below the skids
    assert (c.obstacle, c.frame, c.clearance) == (0, 41.0, pytest.approx(0.0, abs=1e-12))
    assert c.allowance == pytest.approx(clearance - contacts.SLACK) and c.span == contacts.MIN_SPAN
    [table] = problem.scenario["obstacles"]
    assert table["contact"] == [{"time": 5.0, "allowance": pytest.approx(c.allowance), "span": 1.0}]
    assert table["margin"] == pytest.approx(0.1)


def test_a_real_collision_is_still_refused_naming_the_object_and_clearance():
    with pytest.raises(ShotError, match=r"^'Heli' at frame 41 is inside obstacle 'Building' \(clearance -0\.3 m, "
                                        r"margin 0\.1 m\): move the key or the obstacle$"):
        plan(heli_shot(ROOF - 0.3))
    # within the tolerance it touches
    assert plan(heli_shot(ROOF - 0.5 * TOL)).contacts[0].clearance == pytest.approx(-0.005)
    # without real geometry (a vehicle without meshes) the spheres decide, as before
    with pytest.raises(ShotError, match=r"inside obstacle 'Building' \(clearance -0\.42 m, margin 0\.1 m\)"):
        plan(heli_shot(vertices=False))


def test_a_land_empty_alone_is_the_goal_and_ends_the_shot():
    assert shot_range([1.0], (1, 250), goal_frames=[41.0]) == (1.0, 41.0, [])
    assert shot_range([1.0, 30.0], (1, 250), goal_frames=[41.0])[:2] == (1.0, 41.0)
    assert shot_range([1.0, 60.0], (1, 250), goal_frames=[41.0])[:2] == (1.0, 60.0)
    with pytest.raises(Exception, match="fewer than two keys"):
        shot_range([1.0], (1, 250), goal_frames=[1.0])
    q = (math.cos(0.15), 0.0, 0.0, math.sin(0.15))                # the pad's X axis 0.3 rad from world X
    pad = Constraint("Pad", "LAND", 41.0, position=np.array([16.0, 0.0, ROOF]), radius=0.5, heading=0.3,
                     orientation=q, speed=0.0)
    start = [KeyPose(1.0, np.array([0.0, 0.0, 14.0]), np.eye(3), rotation_keyed=True, speed=0.0)]
    problem = plan(heli_shot(landing=pad, keys=start))
    goal = problem.scenario["goal"]
    assert goal["position"] == pytest.approx([16.0, 0.0, ROOF]) and goal["orientation"] == pytest.approx(list(q))
    assert goal["velocity"] == [0.0, 0.0, 0.0] and goal["angular_velocity"] == [0.0, 0.0, 0.0]
    assert problem.scenario["time"]["duration"] == pytest.approx(5.0)
    assert [(c.frame, c.what) for c in problem.contacts] == [(41.0, "landing 'Pad' (frame 41)")]
    pad.position = np.array([16.0, 0.0, ROOF - 0.5])
    with pytest.raises(ShotError, match=r"^landing 'Pad' \(frame 41\) is inside obstacle 'Building' \(clearance -0\.5 m"):
        plan(heli_shot(landing=pad, keys=start))


# -- solved: the real geometry stays out ----------------------------------------------------------------

def _node_clearance(problem, trajectory) -> np.ndarray:
    """The real geometry's clearance to the touched obstacle at every node (metres)."""
    from core.lie import quaternion
    shape = problem.obstacles[problem.contacts[0].obstacle]
    R = quaternion.to_matrix(np.asarray(trajectory.orientation, dtype=float))
    return np.array([contacts.real_clearance(shape, problem.vertices, p, r, 1.0)
                     for p, r in zip(np.asarray(trajectory.position), R)])


def test_a_helicopter_lands_on_a_box_top_without_entering_it():
    problem = plan(heli_shot())
    trajectory, result, _ = solve_scenario(Table(problem.scenario))
    assert result.converged, result.message
    world = problem.frame_map.trajectory_to_world(trajectory)
    assert np.asarray(world.position)[-1] == pytest.approx([16.0, 0.0, ROOF], abs=1e-6)
    clearance = _node_clearance(problem, world)
    assert clearance[-1] == pytest.approx(0.0, abs=1e-6) and np.min(clearance) >= -TOL
    depth, frame, label = contacts.deepest(problem, world)
    assert depth >= -TOL and label == "obstacle 'Building'" and contacts.check_motion(problem, world) == []
    # the collision spheres keep the margin once the floor is back at it
    spheres, shape = problem.spheres, building()
    t = np.asarray(world.time)
    from core.lie import quaternion
    rot_m = quaternion.to_matrix(np.asarray(world.orientation, dtype=float))
    far = t <= t[-1] - problem.contacts[0].span - 1e-9
    for p, r in zip(np.asarray(world.position)[far], rot_m[far]):
        assert np.min(shape.distance(p + spheres[:, :3] @ r.T) - spheres[:, 3]) >= 0.1 - 1e-6


def test_a_car_parks_nose_in_against_a_wall_without_entering_it():
    body = dense_box((-2.0, -0.9, -0.5), (2.0, 0.9, 0.5))
    wall = ObstacleShape("Wall", "box", np.array([14.2, 0.0, 1.0]), half_extents=np.array([0.2, 4.0, 1.0]),
                         rotation=np.eye(3), margin=0.1)
    keys = [KeyPose(1.0, np.zeros(3), rot(0.0), True, 0.0, 0.0),
            KeyPose(49.0, np.array([12.0, 0.0, 0.0]), rot(0.0), True, 0.0, 0.0)]   # at rest, the bumper on the wall
    params = {"type": "car", "mass": 1200.0, "yaw_inertia": 1700.0, "wheel_radius": 0.3, "wheelbase": 2.55,
              "wheel_inertia": 1.8, "max_steering_angle": math.radians(35.0), "max_steering_rate": 1.2,
              "max_torque": 2000.0}
    shot = ShotInput("Car", "CAR", "car", FrameMap(1.0, 49.0, 8.0, 1), keys, [], [wall], fit_spheres(body), params,
                     {"torque": 2000.0, "steering_rate": 1.2}, SETTINGS, vertices=body)
    problem = plan(shot)
    [c] = problem.contacts
    assert c.allowance == pytest.approx(-0.646, abs=1e-3)         # the end sphere reaches 0.645 m past the bumper
    assert c.span == pytest.approx(math.sqrt(8 * (0.1 - c.allowance) / (0.3 * 2000 / (1.8 + 0.09 * 1200))))
    trajectory, result, _ = solve_scenario(Table(problem.scenario))
    assert result.converged, result.message
    world = problem.frame_map.trajectory_to_world(trajectory)
    clearance = _node_clearance(problem, world)
    assert clearance[-1] == pytest.approx(0.0, abs=1e-6) and np.min(clearance) >= -TOL
    assert contacts.deepest(problem, world)[0] >= -TOL
