"""core.shot.car_geometry: a car's rear axle, wheelbase, track and wheel radii from plain vertex arrays of its
wheels (no Blender), keys moved to the rear axle by the planner, and each wheel's spin along its own path
checked against a circle of known radius."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.shot import FrameMap, KeyPose, ShotInput, ShotSettings, plan
from core.shot.car_geometry import CarGeometryError, WheelInput, measure, spin_axis, to_rear_axle, wheel_spins

WHEELBASE, TRACK = 2.6, 1.5


def _rot(heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _pose(position, heading) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = _rot(heading), position
    return m


def _cylinder(radius: float, width: float, segments: int = 32, spin: float = 0.0) -> np.ndarray:
    """A wheel's vertices around its centre, axle along local Y, turned ``spin`` about it."""
    a = np.linspace(0.0, 2 * math.pi, segments, endpoint=False) + spin
    ring = np.stack([radius * np.cos(a), np.zeros_like(a), radius * np.sin(a)], axis=1)
    return np.concatenate([ring + [0.0, -0.5 * width, 0.0], ring + [0.0, 0.5 * width, 0.0]])


def _car(body: np.ndarray, origin_in_body=(0.0, 0.0, 0.0), radii=(0.34, 0.34, 0.36, 0.36), empties=(),
         wheelbase=WHEELBASE, track=TRACK) -> dict:
    """Four wheel inputs (world, through the body matrix) of a car whose object origin sits at ``origin_in_body``
    from its rear axle (on the ground), in the body frame; ``empties``: roles without vertices."""
    rear_axle = -np.asarray(origin_in_body, dtype=float)
    out = {}
    for (role, x, y), r in zip((("wheel_rear_left", 0.0, 0.5 * track), ("wheel_rear_right", 0.0, -0.5 * track),
                               ("wheel_front_left", wheelbase, 0.5 * track),
                               ("wheel_front_right", wheelbase, -0.5 * track)), radii):
        centre = rear_axle + [x, y, r]
        world_centre = body[:3, :3] @ centre + body[:3, 3]
        vertices = None if role in empties else (_cylinder(r, 0.22, spin=0.3) + centre) @ body[:3, :3].T + body[:3, 3]
        out[role] = WheelInput(role, world_centre, body[:3, :3] @ [0.0, 1.0, 0.0], vertices)
    return out


# -- measuring --------------------------------------------------------------------------------------

@pytest.mark.parametrize("origin", [(0.0, 0.0, 0.0), (1.3, 0.0, 0.7), (3.6, 0.1, 0.5)],
                         ids=["rear axle", "middle", "front bumper"])
def test_rear_axle_wheelbase_track_and_radii_from_the_wheels(origin):
    body = _pose([5.0, -2.0, 0.4], 0.7)
    g = measure("Car", body, _car(body, origin), scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert g.body_offset == pytest.approx(-np.asarray(origin), abs=1e-12)
    assert g.wheelbase == pytest.approx(WHEELBASE) and g.track == pytest.approx(TRACK)
    assert g.wheel_radius == pytest.approx(0.34)  # the rear (driven) wheels'
    assert g.wheels["wheel_front_left"].radius == pytest.approx(0.36)
    assert g.wheels["wheel_rear_right"].centre == pytest.approx([0.0, -0.75, 0.34])
    assert g.wheels["wheel_front_left"].steered and not g.wheels["wheel_rear_left"].steered
    assert g.measured == ("rear_axle", "wheel_radius", "wheelbase") and g.warnings == []
    # the rear axle point of the body at any pose: key × offset
    assert to_rear_axle(body[:3, 3], body[:3, :3], g.body_offset) == \
        pytest.approx(body[:3, 3] - body[:3, :3] @ np.asarray(origin))


def test_scene_units_give_metres_and_the_typed_values_override():
    body = _pose([0.0, 0.0, 0.0], 0.0)
    wheels = {k: WheelInput(w.name, w.origin * 100, w.axis, w.vertices * 100) for k, w in _car(body).items()}
    g = measure("Car", body, wheels, scale=0.01, typed_radius=0.3, typed_wheelbase=2.55)   # a centimetre scene
    assert g.wheelbase == pytest.approx(WHEELBASE) and g.wheel_radius == pytest.approx(0.34)
    assert g.wheels["wheel_rear_left"].radius == pytest.approx(34.0)     # scene units, for the bake
    typed = measure("Car", body, wheels, scale=0.01, typed_radius=0.3, typed_wheelbase=2.55, use_typed=True)
    assert (typed.wheelbase, typed.wheel_radius) == (2.55, 0.3)
    assert typed.wheels["wheel_front_left"].radius == pytest.approx(30.0)
    assert typed.body_offset == pytest.approx([0.0, 0.0, 34.0 - 30.0])  # centre height less the typed radius


def test_empties_give_centres_and_the_typed_radius():
    body = _pose([0.0, 0.0, 0.0], 0.0)
    g = measure("Car", body, _car(body, empties=("wheel_rear_left", "wheel_rear_right", "wheel_front_left",
                                                  "wheel_front_right"), radii=(0.3,) * 4),
                scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert g.wheelbase == pytest.approx(WHEELBASE) and g.wheel_radius == 0.3 and g.warnings == []
    assert g.body_offset == pytest.approx([0.0, 0.0, 0.0]) and "wheel_radius" not in g.measured
    # placeholders all at the origin: no layout; the origin is the rear axle, the typed values hold, with a warning
    at_origin = {role: WheelInput(role, np.zeros(3), np.array([0.0, 1.0, 0.0]),
                                  _cylinder(0.32, 0.2) if role == "wheel_rear_left" else None) for role in g.wheels}
    g = measure("Car", body, at_origin, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert (g.wheelbase, g.wheel_radius) == (2.55, 0.3) and np.all(g.body_offset == 0) and g.measured == ()
    assert g.warnings == ["the wheels of 'Car' are all at one place along the car (Vehicle › Parts): its origin is "
                          "taken as the rear axle, with the typed Wheelbase 2.55 m and Wheel Radius 0.3 m"]
    assert {w.radius for w in g.wheels.values()} == {0.3}
    # no rear wheels: the origin is the rear axle and the typed values hold
    g = measure("Car", body, {}, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert np.all(g.body_offset == 0) and (g.wheelbase, g.wheel_radius) == (2.55, 0.3)


def test_warnings_for_unequal_misaligned_and_wobbling_wheels_and_a_car_built_backwards():
    body = _pose([0.0, 0.0, 0.0], 0.0)
    wheels = _car(body, radii=(0.34, 0.36, 0.36, 0.36))
    g = measure("Car", body, wheels, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert g.wheel_radius == pytest.approx(0.35)
    assert "the rear wheels of 'Car' have different radii (0.34 m, 0.36 m): each spins by its own" in g.warnings
    assert "the rear wheels of 'Car' are 0.02 m apart in height: its rear axle is taken midway between them" \
        in g.warnings
    # a front wheel 5 cm behind the other; a Wheel Axis along the wheel's rolling direction
    w = wheels["wheel_front_left"]
    wheels["wheel_front_left"] = WheelInput(w.name, w.origin - [0.05, 0, 0], np.array([1.0, 0.0, 0.0]),
                                            w.vertices - [0.05, 0, 0])
    g = measure("Car", body, wheels, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert any("are 0.05 m apart along the car" in m for m in g.warnings)
    assert any(m.startswith("'wheel_front_left' (front left wheel of 'Car') spins about an axis 90° from the car's "
                            "sideways Y axis: check its Wheel Axis") and "not measured" in m for m in g.warnings)
    assert g.wheels["wheel_front_left"].radius == 0.3 and not g.wheels["wheel_front_left"].measured
    # an origin off the wheel's centre: it wobbles
    w = wheels["wheel_rear_left"]
    wheels["wheel_rear_left"] = WheelInput(w.name, w.origin + [0.0, 0.0, 0.05], w.axis, w.vertices)
    g = measure("Car", body, wheels, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert any("'wheel_rear_left' has its origin 0.05 off the centre of its geometry" in m for m in g.warnings)
    # front wheels behind the rear ones: the body's +X points backwards
    with pytest.raises(CarGeometryError, match=r"the front wheels of 'Car' are 2.6 m behind its rear wheels"):
        measure("Car", _pose([0, 0, 0], 0.0), _car(_pose([0, 0, 0], math.pi)), scale=1.0, typed_radius=0.3,
                typed_wheelbase=2.55)


def test_spin_axis_of_rotated_scaled_and_mirrored_wheels():
    r = _rot(0.4)
    assert spin_axis(r * [2.0, 3.0, 4.0], (2.0, 3.0, 4.0), (0, 1, 0)) == pytest.approx(r[:, 1])
    # a wheel mirrored by a scale of −1 on Y turns the same way as the unmirrored one
    assert spin_axis(r * [1.0, -1.0, 1.0], (1.0, -1.0, 1.0), (0, 1, 0)) == pytest.approx(r[:, 1])
    # … but under a mirroring parent a rotation turns the other way: the axis is reversed
    mirror = np.diag([1.0, -1.0, 1.0])
    assert spin_axis(mirror @ r, (1.0, 1.0, 1.0), (0, 0, 1)) == pytest.approx(-(mirror @ r)[:, 2])
    # a wheel turned 180° about Z (its Y axis to the car's right) rolls backwards unless its spin is reversed
    body = _pose([0, 0, 0], 0.0)
    wheels = _car(body)
    w = wheels["wheel_rear_right"]
    wheels["wheel_rear_right"] = WheelInput(w.name, w.origin, -w.axis, w.vertices)
    g = measure("Car", body, wheels, scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    assert g.wheels["wheel_rear_right"].spin_sign == -1.0 and g.wheels["wheel_rear_left"].spin_sign == 1.0
    assert g.warnings == []


# -- spin along each wheel's own path ---------------------------------------------------------------

def test_each_wheel_spins_by_its_own_arc_on_a_circle():
    """The rear axle on a circle of radius R (left turn), steering at the bicycle angle atan(L/R): each
    rear wheel rolls its own circle (R ∓ t/2), each front wheel the speed of its contact point along the
    steered heading, ω·√(L² + (R ∓ t/2)²)·cos(δ − φ) with δ its own Ackermann angle."""
    big_r, n, turns = 7.0, 400, 1.25
    theta = np.linspace(0.0, 2 * math.pi * turns, n + 1)
    position = np.stack([big_r * np.sin(theta), big_r * (1 - np.cos(theta)), np.zeros_like(theta)], axis=1)
    phi = np.full_like(theta, math.atan(WHEELBASE / big_r))
    body = _pose([0, 0, 0], 0.0)
    g = measure("Car", body, _car(body), scale=1.0, typed_radius=0.3, typed_wheelbase=2.55)
    spins = wheel_spins(position, theta, phi, g.wheel_tables())
    total = theta[-1]
    for role, y in (("wheel_rear_left", 0.75), ("wheel_rear_right", -0.75)):
        assert spins[role][-1] == pytest.approx((big_r - y) * total / 0.34, rel=1e-9)
    for role, y in (("wheel_front_left", 0.75), ("wheel_front_right", -0.75)):
        own = math.atan2(WHEELBASE, big_r - y)
        expected = math.hypot(WHEELBASE, big_r - y) * math.cos(own - phi[0]) * total / 0.36
        assert spins[role][-1] == pytest.approx(expected, rel=1e-9)
    assert spins["wheel_rear_right"][-1] > spins["wheel_rear_left"][-1]       # the outer wheel turns more
    # reversing: every wheel turns back; a step of 45° still gives the arc, not the chord
    back = wheel_spins(position[::-1], theta[::-1], phi, g.wheel_tables())
    assert back["wheel_rear_left"][-1] == pytest.approx(-spins["wheel_rear_left"][-1], rel=1e-9)
    coarse = wheel_spins(position[::40], theta[::40], phi[::40], g.wheel_tables())
    assert coarse["wheel_rear_left"][-1] == pytest.approx(spins["wheel_rear_left"][-1], rel=1e-9)


def test_straight_line_spin_is_distance_over_radius_and_the_sign_follows_the_axis():
    x = np.linspace(0.0, 10.0, 11)
    position = np.stack([x, np.zeros_like(x)], axis=1)
    wheels = {"wheel_rear_left": {"centre": [0.0, 0.7, 0.3], "radius": 0.3, "spin_sign": 1.0},
              "wheel_rear_right": {"centre": [0.0, -0.7, 0.3], "radius": 0.3, "spin_sign": -1.0}}
    spins = wheel_spins(position, np.zeros_like(x), None, wheels)
    assert spins["wheel_rear_left"] == pytest.approx(x / 0.3)
    assert spins["wheel_rear_right"] == pytest.approx(-x / 0.3)


# -- the planner moves keys to the rear axle ------------------------------------------------------------

def test_keys_and_spheres_move_to_the_rear_axle():
    """A car keyed by its front bumper (the rear axle 3.6 m behind the origin): the solve starts and ends at
    the rear axle, the collision spheres are relative to it, and the frame map carries the offset."""
    offset = np.array([-3.6, 0.0, -0.2])
    keys = [KeyPose(1.0, np.array([3.6, 0.0, 0.2]), _rot(0.0), rotation_keyed=True, speed=0.0, euler_heading=0.0),
            KeyPose(97.0, np.array([20.0, 5.0, 0.2]), _rot(math.pi / 2), rotation_keyed=True,
                    euler_heading=math.pi / 2)]
    fm = FrameMap(1.0, 97.0, 8.0, 1, 1.0)
    settings = ShotSettings(key_tolerance=0.05, weights={"effort": 1.0})
    shot = ShotInput(vehicle="Car", vehicle_type="CAR", core_type="car", frame_map=fm, keys=keys, empties=[],
                     obstacles=[], spheres=np.array([[-1.0, 0.0, 0.7, 1.2]]),
                     parameters={"type": "car", "mass": 1200.0, "wheel_radius": 0.34, "wheelbase": 2.6,
                                 "wheel_inertia": 1.8, "max_steering_angle": math.radians(35.0)},
                     input_limits={"torque": 2000.0, "steering_rate": 1.2}, settings=settings,
                     body_offset=offset, wheels={"wheel_rear_left": {"centre": [0, 0.75, 0.34], "radius": 0.34}})
    problem = plan(shot)
    sc = problem.scenario
    assert sc["start"]["position"] == pytest.approx([0.0, 0.0])
    assert sc["goal"]["position"] == pytest.approx([20.0, 5.0 - 3.6])
    assert sc["vehicle"]["collision_spheres"] == [pytest.approx([2.6, 0.0, 0.9, 1.2])]
    assert fm.offset == pytest.approx((0.0, 0.0, 0.0)) and fm.body_offset == pytest.approx(tuple(offset))
    assert shot.keys[0].position == pytest.approx([3.6, 0.0, 0.2])   # the artist's data is not changed
    from core.trajectory import Trajectory
    n = 3
    t = Trajectory(time=np.arange(n, dtype=float), position=np.zeros((n, 3)),
                   orientation=np.tile([1.0, 0, 0, 0], (n, 1)), angular_velocity=np.zeros((n, 3)),
                   linear_velocity=np.zeros((n, 3)), vehicle="car")
    stats = fm.trajectory_to_world(t).stats
    assert stats["body_offset"] == pytest.approx(list(offset)) and stats["wheels"]["wheel_rear_left"]["radius"] == 0.34
