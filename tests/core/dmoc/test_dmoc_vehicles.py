"""`python -m core solve` for the helicopter, the snakeboard and the boat (paper §4.3, §5.2.2, §6).

Each solve converges; `python -m core simulate` with the returned controls reproduces the returned
trajectory to 1e-8 (momenta relative); obstacles are cleared by their margins and bounds respected.
The snakeboard's DMOC residuals vanish on the vehicle module's own integrator output (they are the
same scheme). Small problems: the sample-sized ones are measured in docs/benchmarks/dmoc.md.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.cli import run
from core.dmoc.models.snakeboard import SnakeboardModel
from core.dmoc.obstacles import box_distance, sphere_distance
from core.dmoc.solve import ipopt_available
from core.lie import quaternion
from core.vehicles import snakeboard as sblib

HELI = """
[vehicle]
type = "helicopter"
collision_spheres = [[0.0, 0.0, 0.0, 2.0], [-3.0, 0.0, 0.0, 1.0]]
[integrator]
method = "{method}"
steps = 24
[time]
duration = 8.0
[start]
position = [0.0, 0.0, 10.0]
velocity = [2.0, 0.0, 0.0]
[goal]
position = [30.0, 5.0, 12.0]
orientation = [0.9659258262890683, 0.0, 0.0, 0.25881904510252074]
velocity = [0.0, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 0.0]
[[obstacles]]
type = "sphere"
center = [15.0, 2.0, 10.0]
radius = 3.0
margin = 0.5
[[obstacles]]
type = "box"
center = [15.0, 0.0, -2.0]
half_extents = [40.0, 40.0, 2.0]
margin = 1.0
[bounds]
pitch_tilt = [-0.15, 0.15]
roll_tilt = [-0.15, 0.15]
[cost]
effort = 1.0
[cost.input_weights]
collective = 1e-6
yaw = 1e-4
pitch_tilt = 50.0
roll_tilt = 50.0
[solver]
backend = "{backend}"
"""


def _solve(tmp_path: Path, text: str, *extra: str):
    scen = tmp_path / "scenario.toml"
    scen.write_text(text)
    out = tmp_path / "out.json"
    code = run(["solve", str(scen), "--out", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else None


def _simulate(tmp_path: Path, header: str, d: dict) -> dict:
    n = len(next(iter(d["controls"].values())))
    dt = d["time"][1] - d["time"][0]
    lines = [header.format(dt=repr(dt), n=n)]
    for name, vals in d["controls"].items():
        lines += [f"[controls.{name}]", "values = [" + ", ".join(repr(float(v)) for v in vals) + "]"]
    scen = tmp_path / "resim.toml"
    scen.write_text("\n".join(lines) + "\n")
    out = tmp_path / "resim.json"
    assert run(["simulate", str(scen), "--out", str(out)]) == 0
    return json.loads(out.read_text())


def _same(sim: dict, d: dict, keys) -> None:
    for key in keys:
        a, b = np.asarray(sim[key], dtype=float), np.asarray(d[key], dtype=float)
        assert np.max(np.abs(a - b)) <= 1e-8 * max(1.0, np.max(np.abs(b))), key


HELI_SIM = """[vehicle]
type = "helicopter"
[integrator]
method = "{method}"
dt = {{dt}}
steps = {{n}}
[initial]
position = [0.0, 0.0, 10.0]
linear_velocity = [2.0, 0.0, 0.0]
"""


def _check_heli(tmp_path: Path, d: dict, method: str) -> None:
    assert d["stats"]["converged"] is True and d["stats"]["max_constraint_violation"] < 1e-8
    sim = _simulate(tmp_path, HELI_SIM.format(method=method), d)
    _same(sim, d, ("position", "orientation", "angular_velocity", "linear_velocity"))
    _same(sim["momentum"], d["momentum"], ("angular", "linear"))
    P = np.asarray(d["position"])
    R = quaternion.to_matrix(np.asarray(d["orientation"]))
    assert np.allclose(P[-1], [30.0, 5.0, 12.0], atol=1e-9)
    assert np.allclose(R[-1], quaternion.to_matrix(np.array([0.9659258262890683, 0.0, 0.0, 0.25881904510252074])),
                       atol=1e-9)
    assert np.allclose(d["linear_velocity"][-1], 0.0, atol=1e-8)
    for c, r in (([0.0, 0.0, 0.0], 2.0), ([-3.0, 0.0, 0.0], 1.0)):
        pts = P + R @ np.array(c)
        assert np.all(sphere_distance(pts, np.array([15.0, 2.0, 10.0]), 3.0)[0] - r >= 0.5 - 1e-8)
        assert np.all(box_distance(pts, np.array([15.0, 0.0, -2.0]), np.eye(3), np.array([40.0, 40.0, 2.0]))[0]
                      - r >= 1.0 - 1e-8)
    for name, lim in (("pitch_tilt", 0.15), ("roll_tilt", 0.15)):
        assert np.all(np.abs(d["controls"][name]) <= lim + 1e-9)
    assert np.all(np.asarray(d["controls"]["collective"]) >= -1e-9)


@pytest.mark.skipif(not ipopt_available(), reason="cyipopt not installed (scripts/install_ipopt.sh)")
@pytest.mark.parametrize("method", ["vi-cay", "vi-exp"])
def test_helicopter_ipopt(tmp_path, method):
    code, d = _solve(tmp_path, HELI.format(method=method, backend="ipopt"))
    assert code == 0, d["stats"]["message"]
    _check_heli(tmp_path, d, method)


def test_helicopter_scipy(tmp_path):
    code, d = _solve(tmp_path, HELI.format(method="vi-cay", backend="scipy"))
    assert code == 0, d["stats"]["message"]
    assert d["stats"]["backend"] == "scipy"
    _check_heli(tmp_path, d, "vi-cay")


@pytest.mark.parametrize("backend", ["scipy", "ipopt"])
def test_helicopter_infeasible_bounds_named(tmp_path, backend):
    """A collective bound that cannot hold the weight against a fixed goal at rest is found infeasible
    well within 30 s by either backend, naming a constraint group (the scipy interior point: its
    restoration lowers its barrier parameter and stops where the violation stops falling)."""
    if backend == "ipopt" and not ipopt_available():
        pytest.skip("cyipopt is not installed")
    text = HELI.format(method="vi-cay", backend=backend)
    text = text.replace("[bounds]", "[bounds]\ncollective = [0.0, 2000.0]")
    text = text.replace(f'backend = "{backend}"', f'backend = "{backend}"\ntime_limit_s = 25')
    code, d = _solve(tmp_path, text)
    assert code == 3 and d["stats"]["converged"] is False
    assert d["stats"]["status"] == "infeasible", d["stats"]["message"]
    assert d["stats"]["wall_time_s"] < 30
    assert "dynamics" in d["stats"]["message"] or "goal" in d["stats"]["message"]


SNAKE = """
[vehicle]
type = "snakeboard"
[integrator]
steps = 40
[time]
duration = 6.0
[start]
position = [0.0, 0.0]
[goal]
position = [2.0, 0.0]
speed = 0.8
heading = 0.0
[bounds]
wheel_angle = [-0.8, 0.8]
[cost]
effort = 1.0
[solver]
backend = "{backend}"
"""

SNAKE_SIM = """[vehicle]
type = "snakeboard"
[integrator]
dt = {dt}
steps = {n}
"""


def test_snakeboard_residuals_vanish_on_the_vehicle_integrator():
    board = sblib.Snakeboard.rider()
    model = SnakeboardModel(board, 30, 0.5)
    h = 0.1
    rng = np.random.default_rng(0)
    U = np.column_stack([rng.uniform(-20, 20, 30), rng.uniform(-0.3, 0.3, 30)])
    node = sblib.node_from_state(board, sblib.SnakeboardState(rotor_rate=0.5, wheel_angle=0.2).vector())
    nodes, ss = [node], []
    for k in range(30):
        r = sblib.step(board, node, U[k, 0], U[k, 1], h, 0.5)
        assert not r["stopped"]  # no wheel stop: the NLP imposes |φ| ≤ limit as a bound instead
        node = r["node"]
        nodes.append(node)
        ss.append(float(r["s"]))
    nodes = np.array(nodes)
    X = np.column_stack([nodes[:-1], nodes[1:], ss, U, np.full(30, h * 30)])
    assert np.max(np.abs(model.residual(X))) < 1e-9 * max(1.0, np.abs(nodes).max())


@pytest.mark.parametrize("backend", ["scipy", "ipopt"])
def test_snakeboard_gains_speed(tmp_path, backend):
    if backend == "ipopt" and not ipopt_available():
        pytest.skip("cyipopt not installed")
    # 30 steps: at 40 the scipy interior point stalls and trust-constr finishes (401 iterations, ~20× the time)
    code, d = _solve(tmp_path, SNAKE.format(backend=backend).replace("steps = 40", "steps = 30"))
    assert code == 0, d["stats"]["message"]
    sim = _simulate(tmp_path, SNAKE_SIM, d)
    _same(sim, d, ("position", "heading", "linear_velocity", "angular_velocity"))
    assert d["linear_velocity"][-1][0] == pytest.approx(0.8, abs=1e-8)
    assert np.allclose(d["position"][-1][:2], [2.0, 0.0], atol=1e-9)
    assert np.all(np.abs(d["shape"]["wheel_angle"]) <= 0.8 + 1e-9)
    assert np.ptp(d["controls"]["rotor_torque"]) > 1.0  # it twists: the gait is not trivial


def test_snakeboard_around_an_obstacle(tmp_path):
    """A cone on the straight line: the board's clearance Hessian (SE(2) body points) is exact and
    the gait goes round it."""
    text = SNAKE.format(backend="scipy").replace("[solver]", """[[obstacles]]
type = "sphere"
center = [1.0, 0.0, 0.0]
radius = 0.15
margin = 0.05
[solver]""").replace('[vehicle]\ntype = "snakeboard"', '[vehicle]\ntype = "snakeboard"\ncollision_radius = 0.3')
    code, d = _solve(tmp_path, text)
    assert code == 0, d["stats"]["message"]
    p = np.asarray(d["position"])[:, :2]
    assert np.min(np.linalg.norm(p - [1.0, 0.0], axis=1)) >= 0.15 + 0.05 + 0.3 - 1e-7
    assert np.allclose(p[-1], [2.0, 0.0], atol=1e-9)


BOAT = """
[vehicle]
type = "boat"
wind = [-3.0, 0.0, 0.0]
collision_spheres = [[1.2, 0.0, 0.1, 1.1], [-1.2, 0.0, 0.1, 1.1]]
[integrator]
steps = 12
[time]
duration = 1.2
[start]
position = [0.0, 0.0, 0.08403097495099042]
velocity = [1.0, 0.0, 0.0]
[goal]
position = [1.3, 0.0]
heading = 0.0
[[obstacles]]
type = "sphere"
center = [1.0, 3.0, 0.0]
radius = 0.5
margin = 0.2
[cost]
effort = 1e-6
[solver]
backend = "ipopt"
"""

BOAT_SIM = """[vehicle]
type = "boat"
wind = [-3.0, 0.0, 0.0]
[integrator]
dt = {dt}
steps = {n}
[initial]
position = [0.0, 0.0, 0.08403097495099042]
linear_velocity = [1.0, 0.0, 0.0]
"""


@pytest.mark.skipif(not ipopt_available(), reason="cyipopt not installed (scripts/install_ipopt.sh)")
def test_boat_short_manoeuvre(tmp_path):
    code, d = _solve(tmp_path, BOAT)
    assert code == 0, d["stats"]["message"]
    sim = _simulate(tmp_path, BOAT_SIM, d)
    _same(sim, d, ("position", "orientation", "angular_velocity", "linear_velocity"))
    assert np.allclose(d["position"][-1][:2], [1.3, 0.0], atol=1e-9)
    assert np.all(np.abs(np.asarray(list(d["controls"].values()))) <= 1500.0 + 1e-9)
