"""Helicopter (paper §4.3.1): control matrix F(γ), gravity, acceptance manoeuvres, scenario reader."""
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
from core.vehicles.helicopter import INPUTS, PRESETS, Helicopter, control_matrix
from tests.core.cli_contract import assert_refused, simulate_text

HELI = PRESETS["light helicopter"]
MG = HELI.mass * GRAVITY
ROOT = Path(__file__).resolve().parents[3]


def _rest(R=None, x=(0.0, 0.0, 10.0)) -> RigidState:
    return RigidState(R=np.eye(3) if R is None else np.asarray(R, float), x=np.asarray(x, float), omega=np.zeros(3), v=np.zeros(3))


def _inputs(steps: int, **values: float) -> dict[str, np.ndarray]:
    return {name: np.full(steps, float(values.get(name, 0.0))) for name in INPUTS}


# -------------------------------------------------------------------------------------------
# the model, without the integrator
# -------------------------------------------------------------------------------------------
def test_control_matrix_is_tilted_rotor_and_tail_rotor_lever_arms():
    """F(γ)u = (c_t × n u_c + c_r × (0, −u_ψ, 0), n u_c + (0, −u_ψ, 0)), n = R_y(γ_p) R_x(γ_r) e_z."""
    rng = np.random.default_rng(1)
    d_t, d_r = 1.3, 4.4
    gp, gr = rng.uniform(-1.2, 1.2, 50), rng.uniform(-1.2, 1.2, 50)
    u = rng.normal(size=(50, 2)) * [5000.0, 400.0]
    F = control_matrix(gp, gr, d_t, d_r)
    assert F.shape == (50, 6, 2)
    for i in range(50):
        n = so3.exp([0.0, gp[i], 0.0]) @ so3.exp([gr[i], 0.0, 0.0]) @ [0.0, 0.0, 1.0]
        tail = np.array([0.0, -u[i, 1], 0.0])
        torque = np.cross([0.0, 0.0, d_t], n * u[i, 0]) + np.cross([-d_r, 0.0, 0.0], tail)
        force = n * u[i, 0] + tail
        np.testing.assert_allclose(F[i] @ u[i], np.concatenate([torque, force]), atol=1e-9)


def test_control_matrix_entries_at_known_tilts():
    F = control_matrix(0.0, 0.0, 1.2, 4.5)
    expected = np.zeros((6, 2))
    expected[2, 1], expected[4, 1], expected[5, 0] = 4.5, -1.0, 1.0
    np.testing.assert_array_equal(F, expected)
    F = control_matrix(math.pi / 6, 0.0, 2.0, 4.5)          # pitch only: sin = ½
    np.testing.assert_allclose(F[:, 0], [0.0, 1.0, 0.0, 0.5, 0.0, math.sqrt(3) / 2], atol=1e-15)
    F = control_matrix(0.0, math.pi / 6, 2.0, 4.5)          # roll only
    np.testing.assert_allclose(F[:, 0], [1.0, 0.0, 0.0, 0.0, -0.5, math.sqrt(3) / 2], atol=1e-15)


def test_gravity_wrench_is_world_weight_in_body_frame():
    R = so3.exp(np.random.default_rng(2).normal(size=(7, 3)))
    g = HELI.gravity(R)
    np.testing.assert_array_equal(g[:, :3], 0.0)
    np.testing.assert_allclose(g[:, 3:], np.einsum("kji,j->ki", R, [0.0, 0.0, -MG]), atol=1e-10)


def test_hover_wrench_cancels_exactly():
    system = HELI.system(_inputs(3, collective=MG), 3)
    for R in (np.eye(3), so3.exp([0.0, 0.0, 0.7])):
        np.testing.assert_allclose(system.wrench(1, R, np.zeros(3), np.zeros(6)), 0.0, atol=1e-12)
    np.testing.assert_array_equal(system.inertia, [*HELI.inertia, HELI.mass, HELI.mass, HELI.mass])


def test_light_helicopter_preset_is_plausible():
    assert 500 <= HELI.mass <= 700
    assert 1.0 <= HELI.main_rotor_offset <= 1.5
    assert HELI.tail_rotor_offset == pytest.approx(4.5)
    assert HELI.max_collective > MG                            # can climb
    roll, pitch, yaw = HELI.inertia
    assert roll < yaw < pitch                                  # long tail boom: pitch/yaw ≫ roll


@pytest.mark.parametrize("controls, where, problem", [
    ({"collective": np.full(5, -1.0)}, "[controls.collective]", "outside the limit"),
    ({"collective": np.full(5, 1e6)}, "[controls.collective]", "outside the limit"),
    ({"pitch_tilt": np.full(5, 0.5)}, "[controls.pitch_tilt]", "outside the limit"),
    ({"roll_tilt": np.full(5, -0.5)}, "[controls.roll_tilt]", "outside the limit"),
    ({"yaw": np.full(5, 2000.0)}, "[controls.yaw]", "outside the limit"),
    ({"yaw": np.zeros(4)}, "[controls.yaw]", "one value per step"),
    ({"yaw": np.full(5, np.nan)}, "[controls.yaw]", "NaN"),
    ({"throttle": np.zeros(5)}, "[controls.throttle]", "unknown input"),
])
def test_bad_controls_are_refused(controls, where, problem):
    with pytest.raises(ScenarioError) as err:
        HELI.check_controls(controls, 5)
    assert err.value.where == where and problem in err.value.problem


@pytest.mark.parametrize("kwargs, key", [({"mass": 0.0}, "mass"), ({"inertia": (1.0, -1.0, 1.0)}, "inertia"),
                                         ({"max_tilt": 2.0}, "max_tilt"), ({"main_rotor_offset": -1.0}, "main_rotor_offset")])
def test_bad_parameters_are_refused(kwargs, key):
    with pytest.raises(ScenarioError) as err:
        Helicopter(**kwargs)
    assert err.value.where == f"[vehicle] {key}"


# -------------------------------------------------------------------------------------------
# acceptance manoeuvres (need the integrator)
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("yaw", [0.0, 1.1])
def test_hovers_in_place_for_1000_steps(yaw):
    R0 = so3.exp([0.0, 0.0, yaw])
    x0 = np.array([3.0, -2.0, 25.0])
    traj = HELI.simulate(_rest(R0, x0), _inputs(1000, collective=MG), 0.01, 1000)
    drift = np.abs(traj.position - x0).max()
    turn = np.abs(traj.rotation_matrices - R0).max()
    assert drift < 1e-9 and turn < 1e-9, (drift, turn)
    assert np.abs(traj.linear_velocity).max() < 1e-9


def test_forward_pitch_tilt_accelerates_forward_and_pitches_nose_down():
    gp, u, h, n = 0.02, MG, 0.01, 60
    traj = HELI.simulate(_rest(), _inputs(n, collective=u, pitch_tilt=gp), h, n)
    # initial rates from F(γ): a_x = u sin γ_p / m, α₂ = d_t u sin γ_p / J₂
    a_x, alpha = u * math.sin(gp) / HELI.mass, HELI.main_rotor_offset * u * math.sin(gp) / HELI.inertia[1]
    t = traj.time
    assert traj.linear_velocity[5, 0] / t[5] == pytest.approx(a_x, rel=0.02)
    assert traj.angular_velocity[5, 1] / t[5] == pytest.approx(alpha, rel=0.02)
    assert np.all(np.diff(traj.position[:, 0]) >= 0) and traj.position[-1, 0] > 0.5 * a_x * t[-1] ** 2 * 0.9
    assert np.abs(traj.position[:, 1]).max() < 1e-12                     # no sideways motion
    body_x = traj.rotation_matrices[-1][:, 0]
    assert body_x[2] < 0                                                   # nose down


def test_roll_tilt_accelerates_to_the_right_and_rolls_right():
    traj = HELI.simulate(_rest(), _inputs(40, collective=MG, roll_tilt=0.03), 0.01, 40)
    assert traj.linear_velocity[-1, 1] < 0 and traj.angular_velocity[-1, 0] > 0
    assert traj.rotation_matrices[-1][2, 1] > 0          # body y (left) rises: right side down


@pytest.mark.parametrize("u_psi", [300.0, -300.0])
def test_tail_rotor_yaws_with_the_right_sign(u_psi):
    h, n = 0.01, 50
    traj = HELI.simulate(_rest(), _inputs(n, collective=MG, yaw=u_psi), h, n)
    wz = traj.angular_velocity[:, 2]
    assert np.all(np.diff(wz) * np.sign(u_psi) > 0)                         # grows in magnitude
    assert wz[10] / traj.time[10] == pytest.approx(HELI.tail_rotor_offset * u_psi / HELI.inertia[2], rel=0.02)


def test_trajectory_carries_shape_and_controls():
    n, h = 30, 0.02
    c = _inputs(n, collective=MG)
    c["pitch_tilt"] = np.linspace(0.0, 0.05, n)
    traj = HELI.simulate(_rest(), c, h, n)
    assert traj.vehicle == "helicopter"
    assert set(traj.shape) == {"pitch_tilt", "roll_tilt", "rotor_angle", "tail_rotor_angle"}
    assert all(len(v) == n + 1 for v in traj.shape.values())
    np.testing.assert_allclose(traj.shape["rotor_angle"], HELI.rotor_speed * h * np.arange(n + 1))
    np.testing.assert_allclose(traj.shape["tail_rotor_angle"], HELI.tail_rotor_ratio * traj.shape["rotor_angle"])
    np.testing.assert_array_equal(traj.shape["pitch_tilt"][:n], c["pitch_tilt"])
    assert set(traj.controls) == set(INPUTS) and all(len(v) == n for v in traj.controls.values())
    json.loads(traj.to_json())


@pytest.mark.parametrize("method,bound", [("vi-cay-ln", 4e-4), ("vi-cay", 3e-4)])
def test_second_order_against_a_continuous_reference(method, bound):
    """Smooth inputs u(t): the VI holds u(t_k + h/2) over step k; DOP853 integrates eq. (8) with u(t)
    itself (gravity and F(γ(t)) u(t) re-evaluated continuously). The gap falls 4× per halving of h."""
    from scipy.integrate import solve_ivp

    from core.integrators.euler_poincare import state_rate
    from core.lie import quaternion

    def inputs(t):
        return (MG * 1.02 + 0 * t, 150.0 * np.cos(2 * math.pi * 0.4 * t),
                0.03 * np.sin(2 * math.pi * 0.5 * t), 0.02 * np.sin(2 * math.pi * 0.7 * t + 0.3))

    def rhs(t, y):
        q, x, xi = y[:4], y[4:7], y[7:]
        uc, uy, gp, gr = inputs(t)
        f = HELI.control_matrix(gp, gr) @ [uc, uy] + HELI.gravity(quaternion.to_matrix(q / np.linalg.norm(q)))
        return np.concatenate(state_rate(HELI.inertia6, q, x, xi, f, q_normalized=False))

    start = RigidState(R=so3.exp([0.05, -0.02, 0.3]), x=np.array([0.0, 0.0, 5.0]),
                       omega=np.array([0.02, -0.01, 0.05]), v=np.array([1.0, 0.2, 0.0]))
    T = 2.0
    y0 = np.concatenate([quaternion.from_matrix(start.R), start.x, start.xi])
    errs = []
    for n in (50, 100):
        h = T / n
        uc, uy, gp, gr = inputs(h * np.arange(n) + h / 2)
        vi = HELI.simulate(start, dict(collective=uc, yaw=uy, pitch_tilt=gp, roll_tilt=gr), h, n, method=method)
        ref = solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=h * np.arange(n + 1))
        errs.append(max(np.abs(vi.position - ref.y[4:7].T).max(),
                        np.abs(vi.orientation - ref.y[:4].T).max()))
    assert errs[1] < bound, errs
    assert errs[0] / errs[1] > 3.5, errs


# -------------------------------------------------------------------------------------------
# scenario files through the command line
# -------------------------------------------------------------------------------------------
BASE = """
[vehicle]
type = "helicopter"
{vehicle}
[integrator]
dt = 0.01
steps = 20
{integrator}
[initial]
position = [0.0, 0.0, 5.0]
[controls.collective]
offset = 5886.0
{controls}
"""


def _run(tmp_path: Path, vehicle: str = "", integrator: str = "", controls: str = "", extra: str = ""):
    return simulate_text(tmp_path, BASE.format(vehicle=vehicle, integrator=integrator, controls=controls) + extra)


def test_scenario_runs_and_hovers(tmp_path):
    code, out = _run(tmp_path, vehicle="mass = 600.0\nmain_rotor_offset = 1.2\ntail_rotor_offset = 4.5\n"
                                       "inertia = [300.0, 850.0, 700.0]\nmax_tilt = 0.2\nmax_collective = 9000.0\n"
                                       "max_yaw = 800.0\nrotor_speed = 50.0")
    assert code == 0
    d = json.loads(out.read_text())
    assert d["vehicle"] == "helicopter" and len(d["time"]) == 21
    np.testing.assert_allclose(d["position"], [[0.0, 0.0, 5.0]] * 21, atol=1e-10)
    np.testing.assert_allclose(d["shape"]["rotor_angle"], 50.0 * 0.01 * np.arange(21))


@pytest.mark.parametrize("kw, key", [
    (dict(vehicle="mass = -1.0"), "[vehicle] mass"),
    (dict(vehicle="mass = \"heavy\""), "[vehicle] mass"),
    (dict(vehicle="inertia = [1.0, 2.0]"), "[vehicle] inertia"),
    (dict(vehicle="inertia = [1.0, 2.0, 0.0]"), "[vehicle] inertia[2]"),
    (dict(vehicle="main_rotor_offset = 0.0"), "[vehicle] main_rotor_offset"),
    (dict(vehicle="tail_rotor_offset = -4.5"), "[vehicle] tail_rotor_offset"),
    (dict(vehicle="max_tilt = 2.0"), "[vehicle] max_tilt"),
    (dict(vehicle="max_yaw = -1.0"), "[vehicle] max_yaw"),
    (dict(vehicle="rotor_speed = nan"), "[vehicle] rotor_speed"),
    (dict(vehicle="blades = 2"), "[vehicle] blades"),
    (dict(vehicle="max_collective = 5000.0"), "[controls.collective]"),
    (dict(controls="[controls.pitch_tilt]\noffset = 0.3"), "[controls.pitch_tilt]"),
    (dict(controls="[controls.roll_tilt]\nvalues = [0.0, 0.1]"), "[controls.roll_tilt] values"),
    (dict(controls="[controls.throttle]\noffset = 1.0"), "[controls.throttle]"),
    (dict(controls="[controls.yaw]\noffset = 1.0\nslope = 2.0"), "[controls.yaw] slope"),
    (dict(integrator="method = \"magic\""), "[integrator] method"),
    (dict(integrator="substeps = 2"), "[integrator] substeps"),
    (dict(extra="\n[extra]\nx = 1"), "[extra]"),
])
def test_bad_scenarios_exit_2_naming_the_key(tmp_path, capsys, kw, key):
    code, out = _run(tmp_path, **kw)
    assert_refused(code, capsys.readouterr().err, out, key)


def test_sample_runs(tmp_path):
    out = tmp_path / "h.json"
    assert cli.run(["simulate", str(ROOT / "samples" / "helicopter_hover.toml"), "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    pos = np.array(d["position"])
    # hover first (no drift), then the forward tilt moves it forward
    assert np.abs(pos[:100] - pos[0]).max() < 1e-9
    assert pos[-1, 0] - pos[0, 0] > 1.0
