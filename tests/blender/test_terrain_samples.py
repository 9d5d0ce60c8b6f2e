"""The ground samples built, solved and baked as the README shows them (samples/build_car_hill_scene.py, a scene
in centimetres; samples/build_car_banked_scene.py), measured on the baked F-curves against the Ground mesh:
wheels on the ground, the body pitching with the ramp and rolling with the bank, each wheel's spin the length
of its own 3D contact path."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import build_car_banked_scene as banked  # noqa: E402
import build_car_hill_scene as hill  # noqa: E402
from terrain_kit import GroundProbe, path_length, read_baked, solve, terrain_under, wheel_contacts  # noqa: E402


def _solved(sample, tmp_path_factory, name: str) -> dict:
    """Build the sample, solve and bake it, draw its picture (where matplotlib is installed); the baked ride and
    what it stands on (metres)."""
    names = sample.build(24)
    scene = bpy.context.scene
    car = bpy.data.objects[names["car"]]
    report = solve(scene, car)
    png = None
    if importlib.util.find_spec("matplotlib") is not None:
        png = tmp_path_factory.mktemp(name) / f"{name}.png"
        sample.draw(scene, car, png, report)
    ride = read_baked(scene, car)
    probe = GroundProbe(bpy.data.collections["Ground"].all_objects, float(scene.unit_settings.scale_length))
    slope, bank = terrain_under(probe, ride)
    contacts = {role: wheel_contacts(probe, ride.wheels[role], ride.radius[role]) for role in ride.wheels}
    heave = ride.body[:, 2, 3] - probe.heights(ride.body[:, :2, 3])   # the rear axle point above the ground
    return {"ride": ride, "slope": slope, "bank": bank, "heave": heave, "contacts": contacts, "report": report,
            "png": png, "unit": scene.unit_settings.scale_length}


@pytest.fixture(scope="module")
def hill_ride(addon, tmp_path_factory):
    return _solved(hill, tmp_path_factory, "car_hill")


@pytest.fixture(scope="module")
def banked_ride(addon, tmp_path_factory):
    return _solved(banked, tmp_path_factory, "car_banked")


@pytest.fixture(params=["hill", "banked"])
def solved(request):
    return request.getfixturevalue(f"{request.param}_ride")


def test_the_hill_scene_is_in_centimetres_and_both_bake(hill_ride, banked_ride):
    assert hill_ride["unit"] == pytest.approx(0.01) and banked_ride["unit"] == 1.0
    for solved in (hill_ride, banked_ride):
        assert "baked frames" in solved["report"]


def test_both_pictures_are_drawn(hill_ride, banked_ride):
    if hill_ride["png"] is None:
        pytest.skip("matplotlib is not installed in this environment")
    for solved in (hill_ride, banked_ride):
        assert solved["png"].stat().st_size > 20_000


def test_every_wheel_touches_the_ground_at_every_frame(solved):
    """The rim's point towards the ground is within 1 cm of the Ground mesh (neither above nor inside it)."""
    for role, (_, gaps) in solved["contacts"].items():
        assert len(gaps) == len(solved["ride"].frames)
        assert np.max(np.abs(gaps)) < 0.01, f"{role} is {100 * np.max(np.abs(gaps)):.2f} cm off the ground"


def test_each_wheel_spins_the_length_of_its_3d_contact_path(solved):
    """spin × radius against the length of the contact's 3D path, each wheel (the front ones off-track the rear
    ones in the turn): within 0.2 %, where the hub's planar path is 0.6–0.9 % off (the ramp and the hill are
    longer in 3D; on the bank each contact runs a tilted disc's radius sideways of its hub)."""
    ride = solved["ride"]
    for role, (contacts, _) in solved["contacts"].items():
        rolled = ride.spin[role][-1] * ride.radius[role]
        assert rolled == pytest.approx(path_length(contacts), rel=0.002), role
        hub = ride.wheels[role][:, :3, 3] * [1.0, 1.0, 0.0]
        assert abs(rolled / path_length(hub) - 1.0) > 0.005, role


def test_on_the_ramp_the_body_pitches_with_the_slope(hill_ride):
    ride = hill_ride["ride"]
    x = ride.body[:, 0, 3]
    steady = (x > hill.STEADY[0]) & (x < hill.STEADY[1])
    assert np.count_nonzero(steady) >= 15          # 0.8 s of the shot
    slope = np.degrees(hill_ride["slope"][steady])
    assert np.allclose(slope, np.degrees(np.arctan(hill.GRADE)), atol=0.2)   # the ramp's even grade, measured
    assert np.max(np.abs(np.degrees(ride.pitch()[steady]) - slope)) < 2.0
    assert 0.03 < np.max(np.abs(hill_ride["heave"])) < 0.3    # the body rides up and down on its springs


def test_in_the_banked_turn_the_body_rolls_with_the_bank(banked_ride):
    ride = banked_ride["ride"]
    steady = ride.time >= banked.STEADY_FROM
    bank = np.degrees(banked_ride["bank"][steady])
    assert np.allclose(bank, -np.degrees(banked.BANK), atol=0.5)    # left side (the inside) down
    assert np.max(np.abs(np.degrees(ride.roll()[steady]) - bank)) < 2.0
    radius = np.hypot(ride.body[:, 0, 3], ride.body[:, 1, 3])
    assert np.all(np.abs(radius - banked.RADIUS) < 0.5)            # round the ring, between its edges
