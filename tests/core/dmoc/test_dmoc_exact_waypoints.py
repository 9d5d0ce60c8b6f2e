"""Waypoints imposed at their own time between nodes (``exact = true``): derivatives against
differences, sparsity, and solves that pass the point at that time."""
from __future__ import annotations

import re

import numpy as np
import pytest

from core.dmoc import solve_scenario
from core.dmoc.constraints import assemble, waypoint_bracket, waypoint_chord_group
from core.dmoc.initial_guess import initial_guess
from core.dmoc.scenario import read
from core.scenario import loads
from tests.core.dmoc.problems import CAR, HELICOPTER, TURNED, dense_jacobian


def _fixed(text: str, duration: float, waypoints: str) -> str:
    text = re.sub(r"\[time\]\nmin = [\d.]+\nmax = [\d.]+\n", f"[time]\nduration = {duration}\n", text)
    text = re.sub(r"duration = [\d.]+\n(?=path_length)", "", text)  # no duration cost with a fixed duration
    return text + waypoints


CAR_WP = _fixed(CAR.format(alpha=0.5), 4.0, """
[[waypoints]]
time = 1.3
position = [5.0, 1.0]
radius = 0.2
exact = true
[[waypoints]]
time = 2.0
position = [8.0, 1.5]
radius = 0.3
exact = true
""")
HELI_WP = _fixed(HELICOPTER.format(method="vi-cay", q0=TURNED), 6.0, """
[[waypoints]]
time = 2.7
position = [15.0, -2.0, 12.0]
radius = 0.4
exact = true
""")


@pytest.mark.parametrize("text", [CAR_WP, HELI_WP], ids=["car", "helicopter"])
def test_exact_waypoint_derivatives_match_differences(text):
    setup = read(loads(text))
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    rng = np.random.default_rng(5)
    z = np.clip(z0 + rng.normal(scale=0.05, size=z0.shape) * np.maximum(1.0, np.abs(z0)), nlp.lb, nlp.ub)
    if setup.model.se3:
        rho = nlp.freepos[setup.model.rho.ravel()]
        z[rho[rho >= 0]] = rng.normal(scale=1.0, size=int(np.sum(rho >= 0)))
    rows = [g for g in nlp.constraints if g.name.startswith("waypoint")]
    assert len(rows) == (2 if "car" in text else 1)
    J = nlp.jacobian(z).toarray()
    Jd = dense_jacobian(lambda x: nlp.constraint_values(x), z)
    scale = np.maximum(1.0, np.abs(Jd).max(axis=1, keepdims=True))
    assert np.max(np.abs(J - Jd) / scale) < 2e-6
    lam = rng.normal(size=nlp.m)

    def grad_lagrangian(x):
        nlp._cache = None
        return 0.7 * nlp.gradient(x) + nlp.jacobian(x).T @ lam

    H = nlp.hessian(z, lam, 0.7).toarray()
    Hd = dense_jacobian(grad_lagrangian, z)
    Hd = 0.5 * (Hd + Hd.T)
    hs = max(1.0, np.abs(Hd).max())
    assert np.max(np.abs(H - Hd)) < 1e-5 * hs
    declared = set(zip(nlp.hess_pattern.rows.tolist(), nlp.hess_pattern.cols.tolist()))
    assert set(zip(*np.nonzero(np.abs(np.tril(Hd)) > 1e-6 * hs))) <= declared


def test_bracket_of_a_time():
    setup = read(loads(CAR_WP))
    model = setup.model  # N = 7 over 4 s: h = 4/7
    assert waypoint_bracket(model, 2.0, 4.0) == (3, pytest.approx(0.5))
    assert waypoint_bracket(model, 4.0 * 3 / 7, 4.0) == (3, 0.0)           # on a node
    assert waypoint_bracket(model, 4.0 * 3 / 7 - 1e-12, 4.0) == (3, 0.0)   # within round-off of it
    assert waypoint_bracket(model, 4.0, 4.0) == (7, 0.0)
    assert waypoint_bracket(model, 0.01, 4.0) == (1, 0.0)                 # before the first node: node 1


def test_an_exact_waypoint_on_a_node_is_the_nearest_node_constraint():
    on_node = CAR_WP.replace("time = 1.3\n", f"time = {4.0 * 3 / 7!r}\n")
    setup = read(loads(on_node))
    groups = [g for g in assemble(setup.model, setup.spec).constraints if g.name.startswith("waypoint")]
    assert [g.labels for g in groups] == [["node 3"], ["node 3.5"]]
    assert groups[0].idx.shape[1] == setup.model.pose_dim and groups[1].idx.shape[1] == 2 * setup.model.pose_dim


@pytest.mark.parametrize("exact", [True, False])
def test_solved_car_passes_the_point_at_its_own_time(exact):
    """A car at 10 nodes over 5 s, a waypoint at t = 1.75 s (node 3.5) with a 2 cm radius: the exact one
    is passed at 1.75 s (position interpolated between nodes), the nearest-node one at node 4 (2.0 s)."""
    text = f"""
[vehicle]
type = "car"
preset = "hatchback"
collision_radius = 0.0
[integrator]
steps = 10
[time]
duration = 5.0
[start]
position = [0.0, 0.0]
speed = 4.0
[goal]
position = [20.0, 4.0]
[[waypoints]]
time = 1.75
position = [7.0, 1.0]
radius = 0.02
exact = {str(exact).lower()}
[solver]
backend = "scipy"
"""
    traj, result, _ = solve_scenario(loads(text))
    assert result.converged, result.message
    t = np.asarray(traj.time)
    p = np.asarray(traj.position)[:, :2]
    at = np.array([np.interp(1.75, t, p[:, 0]), np.interp(1.75, t, p[:, 1])])
    node4 = p[4]
    target = np.array([7.0, 1.0])
    if exact:
        assert np.linalg.norm(at - target) <= 0.02 + 1e-6
        assert np.linalg.norm(node4 - target) > 0.1  # the car is elsewhere at the nearest node
    else:
        assert np.linalg.norm(node4 - target) <= 0.02 + 1e-6
        assert np.linalg.norm(at - target) > 0.1


@pytest.mark.parametrize("text", [CAR_WP, HELI_WP], ids=["car", "helicopter"])
def test_exact_waypoint_group_alone_against_differences(text):
    """The group's own Jacobian and Hessian at random poses, to a tolerance of the differences' error."""
    setup = read(loads(text))
    model = setup.model
    wp = setup.spec.waypoints[0]
    k, s = waypoint_bracket(model, wp.time, float(model.base[model.T]))
    assert 0.0 < s < 1.0
    g = waypoint_chord_group(model, wp, k, s)
    rng = np.random.default_rng(9)
    X = rng.normal(scale=2.0, size=(1, g.idx.shape[1]))
    params = g.params
    J = g.jac(X, *params)[:, 0, :]
    Jd = dense_jacobian(lambda x: g.fun(x[None], *params)[0], X[0])
    assert np.max(np.abs(J[0] - Jd)) < 1e-7 * max(1.0, np.abs(Jd).max())
    lam = np.array([[1.3]])
    H = g.hess(X, lam, *params)[0]
    Hd = dense_jacobian(lambda x: 1.3 * g.jac(x[None], *params)[0, 0], X[0])
    assert np.max(np.abs(H - 0.5 * (Hd + Hd.T))) < 1e-6 * max(1.0, np.abs(Hd).max())


@pytest.mark.parametrize("text", [CAR_WP, HELI_WP], ids=["car", "helicopter"])
@pytest.mark.parametrize("between", [True, False], ids=["chord", "node"])
def test_a_waypoint_of_a_body_point_against_differences(text, between):
    """``point``: a body point other than the reference (a car's origin 1.3 m ahead of its rear axle):
    its rotation enters, so the Hessian's curvature term is exercised."""
    from dataclasses import replace

    from core.dmoc.constraints import waypoint_group
    setup = read(loads(text))
    model = setup.model
    wp = replace(setup.spec.waypoints[0], point=np.array([1.3, -0.4, 0.7]))
    k, s = waypoint_bracket(model, wp.time, float(model.base[model.T]))
    g = waypoint_chord_group(model, wp, k, s) if between else waypoint_group(model, wp, k)
    assert g.mask.all(), "a point off the rotation axis moves with every pose coordinate"
    X = np.random.default_rng(13).normal(scale=2.0, size=(1, g.idx.shape[1]))
    J = g.jac(X, *g.params)[:, 0, :]
    Jd = dense_jacobian(lambda x: g.fun(x[None], *g.params)[0], X[0])
    assert np.max(np.abs(J[0] - Jd)) < 1e-7 * max(1.0, np.abs(Jd).max())
    H = g.hess(X, np.array([[0.8]]), *g.params)[0]
    Hd = dense_jacobian(lambda x: 0.8 * g.jac(x[None], *g.params)[0, 0], X[0])
    assert np.max(np.abs(H - 0.5 * (Hd + Hd.T))) < 1e-6 * max(1.0, np.abs(Hd).max())
