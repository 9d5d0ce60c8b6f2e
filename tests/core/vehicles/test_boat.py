"""Boat (paper §4.3.2): thrusters, buoyancy (vs Archimedes by pressure integration), hydrodynamics,
wind, acceptance manoeuvres (float, self-righting, downwind drift, straight line), scenario reader.

Acceptance timings are measured with the default boat (800 kg, 5 m hull) and h = 0.02 s.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core import cli
from core.errors import ScenarioError
from core.integrators.common import GRAVITY, RigidState
from core.lie import so3
from core.vehicles import hull as H
from core.vehicles.boat import Boat, box_inertia, damping_matrix, default_thrusters, thrust_matrix
from core.vehicles.water import RHO_AIR, RHO_WATER, Wind, current_field, plane_surface, projected_area, swell
from tests.core.cli_contract import assert_refused, simulate_text

ROOT = Path(__file__).resolve().parents[3]
BOAT = Boat()
Z_EQ, PITCH_EQ = BOAT.equilibrium()
DT = 0.04


def Ry(t: float) -> np.ndarray:
    return so3.exp([0.0, t, 0.0])


def roll_angle(R: np.ndarray) -> np.ndarray:
    return np.arctan2(R[..., 2, 1], R[..., 2, 2])


def heading(R: np.ndarray) -> np.ndarray:
    return np.arctan2(R[..., 1, 0], R[..., 0, 0])


def at_rest(R=None, x=None, v=(0.0, 0.0, 0.0)) -> RigidState:
    R = Ry(PITCH_EQ) if R is None else R
    x = np.array([0.0, 0.0, Z_EQ]) if x is None else np.asarray(x, float)
    return RigidState(R=R, x=x, omega=np.zeros(3), v=np.asarray(v, float))


# -------------------------------------------------------------------------------------------
# forces, without the integrator
# -------------------------------------------------------------------------------------------
def test_thrust_matrix_columns():
    th = [(np.array([-2.0, 0.5, -0.1]), np.array([1.0, 0.0, 0.0])),
          (np.array([1.0, -0.3, 0.2]), np.array([0.0, 0.6, 0.8]))]
    F = thrust_matrix(th)
    assert F.shape == (6, 2)
    for i, (c, d) in enumerate(th):
        np.testing.assert_allclose(F[:, i], np.concatenate([np.cross(c, d), d]), atol=1e-15)
    # default pair: mirror images, pure surge + opposite yaw moments
    F = thrust_matrix(default_thrusters())
    np.testing.assert_allclose(F[:, 0] + F[:, 1], [0.0, -2 * 0.2 * 0.8, 0.0, 2.0, 0.0, 0.0], atol=1e-15)
    assert F[2, 0] == -F[2, 1] != 0.0


def test_buoyancy_equals_integrated_hydrostatic_pressure():
    """Eq. (15) vs Archimedes: −∫ p n dA over the wetted hull with p = ρ g (−z), about the centre of mass."""
    hull = H.subdivide(BOAT.hull, 2)
    boat = Boat(hull=hull)
    R = so3.exp([0.25, -0.1, 0.6])
    x = np.array([0.4, -0.2, 0.05])
    cut = H.clip(hull, R, x)
    r = cut.submerged_position.reshape(-1, 3)
    n = cut.submerged_normal.reshape(-1, 3)
    dA = cut.submerged_area.reshape(-1)
    p = RHO_WATER * GRAVITY * -(r @ R.T + x)[:, 2]                    # linear: exact at the centroid
    f_body = -(p * dA)[:, None] * n
    wrench = boat.buoyancy(R, x, cut.volume, cut.centroid)
    weight = R.T @ [0.0, 0.0, -GRAVITY * boat.mass]
    np.testing.assert_allclose(wrench[3:], f_body.sum(axis=0) + weight, rtol=1e-10, atol=1e-8)
    torque = np.cross(r, f_body).sum(axis=0)                          # centroid rule: O(patch²) error
    np.testing.assert_allclose(wrench[:3], torque, rtol=0, atol=2e-3 * np.abs(torque).max())


def test_buoyancy_of_an_upright_box():
    box = H.box_hull((4.0, 2.0, 1.0))
    boat = Boat(mass=2000.0, hull=box, thrusters=default_thrusters(4.0, 2.0, 1.0))
    x = np.array([0.0, 0.0, 0.1])                                      # 0.4 m deep: 3.2 m³
    cut = H.clip(box, np.eye(3), x)
    w = boat.buoyancy(np.eye(3), x, cut.volume, cut.centroid)
    np.testing.assert_allclose(w, [0, 0, 0, 0, 0, GRAVITY * (3200.0 - 2000.0)], atol=1e-9)
    assert boat.float_height() == pytest.approx(0.5 - 2000.0 / (1000.0 * 8.0), rel=1e-12)


def test_hydrodynamics_translation_rotation_current_pressure():
    rng = np.random.default_rng(4)
    E = np.array([[300.0, 20.0, 0.0], [20.0, 900.0, 5.0], [0.0, 5.0, 1200.0]])
    eta = lambda X: np.stack([0.3 * X[..., 1], 0.1 + 0 * X[..., 0], 0.05 * X[..., 0]], axis=-1)  # noqa: E731
    boat = Boat(damping=[300.0, 900.0, 1200.0, 5.0, 0.0, 20.0], current=eta, pressure=700.0)
    np.testing.assert_array_equal(boat.damping, E)
    R = so3.exp([0.1, 0.05, 0.8])
    x = np.array([1.0, 2.0, 0.06])
    xi = rng.normal(size=6)
    cut = H.clip(boat.hull, R, x)
    r = cut.submerged_position.reshape(-1, 3)
    n = cut.submerged_normal.reshape(-1, 3)
    dA = cut.submerged_area.reshape(-1)
    got = boat.hydrodynamics(R, x, xi, r, n, dA)
    # loop reference, straight from the formula
    total = np.zeros(6)
    for ri, ni, ai in zip(r, n, dA):
        rdot = xi[3:] + np.cross(xi[:3], ri)
        f = -E @ (rdot - R.T @ eta(x + R @ ri)) - 700.0 * ni
        total += np.concatenate([np.cross(ri, f), f]) * ai
    np.testing.assert_allclose(got, total / dA.sum(), rtol=1e-12, atol=1e-9)
    # pure translation in still water: force −E v, torque −r̄ × E v
    still = Boat(damping=[300.0, 900.0, 1200.0, 5.0, 0.0, 20.0])
    v = np.array([1.5, -0.2, 0.1])
    w = still.hydrodynamics(R, x, np.concatenate([np.zeros(3), v]), r, n, dA)
    rbar = (r * dA[:, None]).sum(0) / dA.sum()
    np.testing.assert_allclose(w[3:], -E @ v, rtol=1e-12)
    np.testing.assert_allclose(w[:3], -np.cross(rbar, E @ v), rtol=1e-10, atol=1e-10)
    # drifting with a uniform current: no drag
    u = np.array([0.4, -0.3, 0.0])
    drift = Boat(current=u)
    w = drift.hydrodynamics(R, x, np.concatenate([np.zeros(3), R.T @ u]), r, n, dA)
    np.testing.assert_allclose(w, 0.0, atol=1e-12)
    # nothing wet: nothing
    assert np.all(boat.hydrodynamics(R, x, xi, r, n, 0 * dA) == 0)


def test_wind_on_a_box_above_water():
    """Beam wind on a box floating 0.4 m deep: A_p = L (H − d), at mid-height of the topsides."""
    L, B, Hh, d = 4.0, 2.0, 1.0, 0.4
    box = H.box_hull((L, B, Hh))
    w = np.array([0.0, 7.0, 0.0])
    boat = Boat(mass=1000.0 * L * B * d, hull=box, thrusters=default_thrusters(L, B, Hh), wind=Wind(w, drag=1.1))
    x = np.array([0.0, 0.0, Hh / 2 - d])
    parts = boat.external_wrench(np.eye(3), x, np.zeros(6), parts=True)
    area = L * (Hh - d)
    F = 0.5 * RHO_AIR * 1.1 * area * 49.0
    np.testing.assert_allclose(parts["wind"][3:], [0.0, F, 0.0], rtol=1e-12)
    centre = np.array([0.0, -B / 2, (Hh / 2 - (Hh - d) / 2)])            # windward side, mid-topsides
    np.testing.assert_allclose(parts["wind"][:3], np.cross(centre, [0.0, F, 0.0]), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(parts["buoyancy"], 0.0, atol=1e-8)        # floating at its draft
    # moving with the wind: no wind force
    moving = boat.external_wrench(np.eye(3), x, np.concatenate([np.zeros(3), w]), parts=True)
    np.testing.assert_allclose(moving["wind"], 0.0, atol=1e-12)


def test_equilibrium_floats_its_weight():
    assert float(BOAT.displaced_mass(Ry(PITCH_EQ), np.array([0.0, 0.0, Z_EQ]))) == pytest.approx(BOAT.mass, rel=1e-9)
    assert float(BOAT.displaced_mass(np.eye(3), np.array([0.0, 0.0, BOAT.float_height()]))) == pytest.approx(BOAT.mass, rel=1e-12)
    assert abs(PITCH_EQ) < math.radians(1.0)                           # the default hull floats nearly level
    w = BOAT.external_wrench(Ry(PITCH_EQ), np.array([0.0, 0.0, Z_EQ]), np.zeros(6))
    np.testing.assert_allclose(w, 0.0, atol=1e-6 * BOAT.mass * GRAVITY)


def test_inertia_damping_and_parameter_checks():
    assert Boat().inertia == pytest.approx(box_inertia(800.0, 5.0, 2.0, 0.8))
    np.testing.assert_array_equal(damping_matrix([1.0, 2.0, 3.0]), np.diag([1.0, 2.0, 3.0]))
    for bad, text in [([1.0, -2.0, 3.0], "positive definite"), ([1.0, 1.0, 1.0, 5.0, 0.0, 0.0], "positive definite"),
                      ([1.0, 2.0], r"3 \(diagonal\) or 6")]:
        with pytest.raises(ScenarioError, match=text):
            damping_matrix(bad)
    with pytest.raises(ScenarioError, match="sinks"):
        Boat(mass=1e5)
    with pytest.raises(ScenarioError, match=r"thrusters\[1\]"):
        Boat(thrusters=[(np.zeros(3), np.array([1.0, 0, 0])), (np.zeros(3), np.zeros(3))])
    with pytest.raises(ScenarioError) as err:
        BOAT.check_controls({"thruster_1": np.full(3, 2000.0)}, 3)
    assert err.value.where == "[controls.thruster_1]"
    with pytest.raises(ScenarioError, match="unknown input"):
        BOAT.check_controls({"thruster_3": np.zeros(3)}, 3)


def test_projected_area_of_a_cube_is_the_l1_norm_of_the_direction():
    """A unit cube seen along unit e casts a shadow of area |e_x| + |e_y| + |e_z|."""
    cube = H.box_hull(divisions=2)
    rng = np.random.default_rng(5)
    for e in rng.normal(size=(10, 3)):
        e /= np.linalg.norm(e)
        area, weights = projected_area(cube.face_normal, cube.face_area, e)
        assert area == pytest.approx(np.abs(e).sum(), rel=1e-13)
        assert weights.shape == (len(cube.faces),) and weights.min() >= 0


def test_water_fields_are_checked():
    eta = current_field([0.1, 0.2, 0.0])
    np.testing.assert_array_equal(eta(np.zeros((4, 2, 3))), np.broadcast_to([0.1, 0.2, 0.0], (4, 2, 3)))
    np.testing.assert_array_equal(current_field(None)(np.ones((5, 3))), 0.0)
    with pytest.raises(ScenarioError, match="3 finite numbers"):
        current_field([1.0, 2.0])
    with pytest.raises(ScenarioError, match="one velocity"):
        current_field(lambda X: np.zeros(2))(np.zeros((5, 3)))
    with pytest.raises(ScenarioError, match="NaN"):
        current_field(lambda X: np.full(np.shape(X), np.nan))(np.zeros((5, 3)))
    with pytest.raises(ScenarioError, match="wind"):
        Wind([1.0, 2.0])
    s = swell(0.5, 4.0, direction=math.pi / 2)
    assert s(np.array(3.0), np.array(1.0)) == pytest.approx(0.5)          # a crest a quarter wave along +y
    assert plane_surface(0.2, (0.1, -0.3))(np.array(1.0), np.array(2.0)) == pytest.approx(0.2 + 0.1 - 0.6)


def test_raised_water_level_lifts_the_equilibrium():
    raised = Boat(surface=plane_surface(0.3))
    z, pitch = raised.equilibrium()
    assert z == pytest.approx(Z_EQ + 0.3, abs=1e-9) and pitch == pytest.approx(PITCH_EQ, abs=1e-9)


# -------------------------------------------------------------------------------------------
# acceptance manoeuvres
# -------------------------------------------------------------------------------------------
def test_settles_at_the_floating_draft():
    """Dropped 5 cm above its equilibrium: after 12 s Π_s = m to 1e-3 and the pose is the root-found one."""
    n = round(12.0 / DT)
    traj = BOAT.simulate(at_rest(R=np.eye(3), x=[0.0, 0.0, Z_EQ + 0.05]), {}, DT, n)
    R_end, x_end = traj.rotation_matrices[-1], traj.position[-1]
    mass_error = float(BOAT.displaced_mass(R_end, x_end)) / BOAT.mass - 1.0
    assert abs(mass_error) < 1e-3, mass_error
    assert x_end[2] == pytest.approx(Z_EQ, abs=1e-4)
    pitch = math.atan2(-R_end[2, 0], R_end[2, 2])
    assert pitch == pytest.approx(PITCH_EQ, abs=1e-3)
    assert abs(x_end[1]) < 1e-12 and abs(roll_angle(R_end)) < 1e-12       # symmetric: no roll, no sway


def test_rights_itself_after_a_20_degree_roll():
    n = round(6.0 / DT)
    R0 = so3.exp([math.radians(20.0), 0.0, 0.0]) @ Ry(PITCH_EQ)
    traj = BOAT.simulate(at_rest(R=R0), {}, DT, n)
    roll = np.degrees(roll_angle(traj.rotation_matrices))
    assert roll[0] == pytest.approx(20.0, abs=0.2)
    assert roll.min() < 0                                                   # swings back through upright
    settled = np.flatnonzero(np.abs(roll) > 2.0)[-1] + 1                    # last time above 2°
    assert traj.time[settled] < 3.0, traj.time[settled]
    assert np.abs(roll[-round(1.0 / DT):]).max() < 0.5


def test_drifts_downwind_with_thrusters_off():
    wind = np.array([-3.0, 8.0, 0.0])
    boat = Boat(wind=Wind(wind))
    n = round(10.0 / DT)
    traj = boat.simulate(at_rest(), {}, DT, n)
    d = traj.position[-1] - traj.position[0]
    along = d @ wind / np.linalg.norm(wind)
    assert along > 0.2, d
    assert np.all(np.diff(traj.position[:, :2] @ wind[:2]) >= -1e-9)      # never upwind


def test_holds_a_straight_line_under_equal_thrust():
    n = round(10.0 / DT)
    u = np.full(n, 600.0)
    traj = BOAT.simulate(at_rest(), {"thruster_1": u, "thruster_2": u}, DT, n)
    run = traj.position[-1, 0] - traj.position[0, 0]
    assert run > 10.0
    assert np.abs(traj.position[:, 1]).max() < 1e-6 * run
    assert np.abs(heading(traj.rotation_matrices)).max() < 1e-6
    assert np.abs(roll_angle(traj.rotation_matrices)).max() < 1e-6


def test_differential_thrust_turns_toward_the_weaker_side():
    n = round(3.0 / DT)
    traj = BOAT.simulate(at_rest(), {"thruster_1": np.full(n, 800.0), "thruster_2": np.full(n, 200.0)}, DT, n)
    assert traj.angular_velocity[-1, 2] > 0.01        # starboard pushes harder: the bow swings to port (+z)
    assert traj.vehicle == "boat" and traj.shape == {}
    assert set(traj.controls) == {"thruster_1", "thruster_2"} and len(traj.controls["thruster_1"]) == n


def test_carried_by_a_current():
    boat = Boat(current=[0.5, -0.2, 0.0])
    traj = boat.simulate(at_rest(), {}, DT, round(16.0 / DT))
    world_v = traj.rotation_matrices[-1] @ traj.linear_velocity[-1]
    np.testing.assert_allclose(world_v, [0.5, -0.2, 0.0], atol=5e-3)


# -------------------------------------------------------------------------------------------
# scenario files through the command line
# -------------------------------------------------------------------------------------------
BASE = """
[vehicle]
type = "boat"
{vehicle}
[integrator]
dt = 0.02
steps = 10
{integrator}
[initial]
position = [0.0, 0.0, 0.084]
{controls}
"""


def _run(tmp_path: Path, vehicle: str = "", integrator: str = "", controls: str = ""):
    return simulate_text(tmp_path, BASE.format(vehicle=vehicle, integrator=integrator, controls=controls))


def test_scenario_with_every_key(tmp_path):
    code, out = _run(tmp_path, vehicle="""mass = 700.0
inertia = [300.0, 1500.0, 1700.0]
hull_length = 4.5
hull_beam = 1.9
hull_height = 0.8
thrusters = [[-1.6, -0.4, -0.15, 1.0, 0.0, 0.0], [-1.6, 0.4, -0.15, 1.0, 0.0, 0.0], [1.5, 0.0, -0.2, 0.0, 1.0, 0.0]]
max_thrust = 900.0
damping = [300.0, 2000.0, 3000.0, 0.0, 0.0, 10.0]
wind = [0.0, 5.0, 0.0]
current = [0.1, 0.0, 0.0]""",
        controls="[controls.thruster_3]\noffset = 100.0\n[controls.thruster_1]\nvalues = [900.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]")
    assert code == 0
    d = json.loads(out.read_text())
    assert d["vehicle"] == "boat" and set(d["controls"]) == {"thruster_1", "thruster_2", "thruster_3"}
    assert d["controls"]["thruster_1"][0] == 900.0 and d["controls"]["thruster_3"] == [100.0] * 10


@pytest.mark.parametrize("kw, key", [
    (dict(vehicle="mass = 0.0"), "[vehicle] mass"),
    (dict(vehicle="mass = 50000.0"), "[vehicle] mass"),
    (dict(vehicle="inertia = [1.0, 2.0, 3.0, 4.0]"), "[vehicle] inertia"),
    (dict(vehicle="hull_length = -5.0"), "[vehicle] hull_length"),
    (dict(vehicle="hull_beam = 0.0"), "[vehicle] hull_beam"),
    (dict(vehicle="hull_height = \"tall\""), "[vehicle] hull_height"),
    (dict(vehicle="thrusters = [[0.0, 0.0, 0.0, 1.0, 0.0]]"), "[vehicle] thrusters[0]"),
    (dict(vehicle="thrusters = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]"), "[vehicle] thrusters[0]"),
    (dict(vehicle="thrusters = []"), "[vehicle] thrusters"),
    (dict(vehicle="max_thrust = -1.0"), "[vehicle] max_thrust"),
    (dict(vehicle="damping = [1.0, 2.0]"), "[vehicle] damping"),
    (dict(vehicle="damping = [1.0, -2.0, 3.0]"), "[vehicle] damping"),
    (dict(vehicle="wind = [1.0, 2.0]"), "[vehicle] wind"),
    (dict(vehicle="current = [1.0, inf, 0.0]"), "[vehicle] current[1]"),
    (dict(vehicle="rudder = 1.0"), "[vehicle] rudder"),
    (dict(controls="[controls.thruster_1]\noffset = 5000.0"), "[controls.thruster_1]"),
    (dict(controls="[controls.thruster_3]\noffset = 1.0"), "[controls.thruster_3]"),
    (dict(controls="[controls.thruster_2]\nvalues = [1.0]"), "[controls.thruster_2] values"),
    (dict(integrator="method = \"euler\""), "[integrator] method"),
    (dict(integrator="method = 3"), "[integrator] method"),
])
def test_bad_scenarios_exit_2_naming_the_key(tmp_path, capsys, kw, key):
    code, out = _run(tmp_path, **kw)
    assert_refused(code, capsys.readouterr().err, out, key)


def test_sample_runs(tmp_path):
    out = tmp_path / "b.json"
    assert cli.run(["simulate", str(ROOT / "samples" / "boat_wind.toml"), "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    pos = np.array(d["position"])
    t = np.array(d["time"])
    drift_end = np.searchsorted(t, 10.0)
    assert pos[drift_end, 1] - pos[0, 1] > 0.1                    # wind along +y pushes it downwind
    assert pos[-1, 0] - pos[drift_end, 0] > 10.0                  # then the thrusters drive it ahead
