"""The Magnus update with constant angular acceleration and the normalised third-order quaternion
exponential of the article *Numerical Integration for Rotational Dynamics* (accuracy measured), and
the ``magnus`` integrator (order fitted)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from core.integrators import METHODS, integrate
from core.integrators.common import HolonomicSystem, RigidState
from core.integrators.euler_poincare import reference
from core.integrators.lie_rk import rigid_body_problem, run
from core.integrators.magnus import (magnus, magnus_quaternion, magnus_rotation, magnus_step_function,
                                     magnus_twist, magnus_vector, quaternion_exp)
from core.lie import quaternion, se3, so3

ROOT = Path(__file__).resolve().parents[3]
W0 = np.array([0.8, -0.5, 1.1])
ALPHA = np.array([1.5, 0.7, -1.2])
HS = (0.8, 0.4, 0.2, 0.1)


def exact_spatial(h: float) -> np.ndarray:
    """Ṙ = ω̂(t) R, ω(t) = ω + α t, R(0) = I, by DOP853 at the tightest tolerance."""
    f = lambda t, y: (so3.hat(W0 + ALPHA * t) @ y.reshape(3, 3)).ravel()  # noqa: E731
    sol = solve_ivp(f, (0, h), np.eye(3).ravel(), method="DOP853", rtol=2.3e-14, atol=1e-15)
    return sol.y[:, -1].reshape(3, 3)


def slope(hs, errs) -> float:
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0])


@pytest.fixture(scope="module")
def exact_rotations():
    return {h: exact_spatial(h) for h in HS}


def test_magnus_terms_local_orders(exact_rotations):
    """Ω₁ alone: local error O(h³); Ω₁ + Ω₂: O(h⁵); + Ω₃: still O(h⁵) (smaller); adding the h⁵
    term the article omits, (1/720) α₁ × (α₁ × (α₁ × α₂)), gives O(h⁷)."""
    def err(h, omega):
        return float(np.linalg.norm(so3.log(exact_rotations[h].T @ so3.exp(omega))))

    e1 = [err(h, 0.5 * (2 * W0 + ALPHA * h) * h) for h in HS]
    e2 = [err(h, magnus_vector(W0, W0 + ALPHA * h, h)) for h in HS]
    e3 = [err(h, magnus_vector(W0, W0 + ALPHA * h, h, third_term=True)) for h in HS]
    full = []
    for h in HS:
        a1, a2 = h * (W0 + 0.5 * h * ALPHA), h * h * ALPHA
        full.append(err(h, magnus_vector(W0, W0 + ALPHA * h, h, True)
                        + np.cross(a1, np.cross(a1, np.cross(a1, a2))) / 720.0))
    assert abs(slope(HS, e1) - 3) < 0.2
    assert abs(slope(HS, e2) - 5) < 0.2
    assert abs(slope(HS, e3) - 5) < 0.2
    assert abs(slope(HS[:3], full[:3]) - 7) < 0.3
    ratio = np.array(e3) / np.array(e2)
    assert np.all((ratio > 0.2) & (ratio < 0.5))     # Ω₃ helps by a factor ≈ 3 here, no more


def test_magnus_vector_formula_terms():
    h = 0.3
    w1 = W0 + ALPHA * h
    np.testing.assert_allclose(magnus_vector(W0, w1, h) - 0.5 * (W0 + w1) * h,
                               np.cross(ALPHA, W0) * h ** 3 / 12, atol=1e-15)     # = (ω′ × ω) h²/12
    np.testing.assert_allclose(magnus_vector(W0, w1, h, True) - magnus_vector(W0, w1, h),
                               np.cross(ALPHA, np.cross(ALPHA, W0)) * h ** 5 / 240, atol=1e-15)
    # batched
    out = magnus_vector(np.stack([W0, -W0]), np.stack([w1, -w1]), h)
    np.testing.assert_allclose(out[1], magnus_vector(-W0, -w1, h), atol=1e-15)


def test_body_form_is_the_spatial_update_in_frame_k():
    R = so3.exp(np.array([0.4, -1.1, 0.3]))
    wb0, wb1, h = np.array([0.3, 1.0, -0.4]), np.array([0.5, 0.6, -0.1]), 0.25
    body = magnus_twist(np.r_[wb0, 0, 0, 0], np.r_[wb1, 0, 0, 0], h)[:3]
    # R exp(Ω_b) = exp(R Ω_b) R, and R Ω_b is the spatial Ω with the commutator sign reversed
    np.testing.assert_allclose(R @ so3.exp(body), so3.exp(R @ body) @ R, atol=1e-14)
    np.testing.assert_allclose(body, -magnus_vector(-wb0, -wb1, h), atol=1e-15)


def test_se3_body_form_local_order_five():
    xi0 = np.array([0.7, -0.4, 0.9, 1.0, -0.5, 0.3])
    beta = np.array([1.2, 0.5, -0.8, -0.6, 0.9, 0.4])
    errs = []
    for h in HS:
        f = lambda t, y: (y.reshape(4, 4) @ se3.hat(xi0 + beta * t)).ravel()  # noqa: E731
        sol = solve_ivp(f, (0, h), np.eye(4).ravel(), method="DOP853", rtol=2.3e-14, atol=1e-15)
        g = sol.y[:, -1].reshape(4, 4)
        approx = se3.exp(magnus_twist(xi0, xi0 + beta * h, h))
        errs.append(float(np.linalg.norm(se3.log(np.linalg.inv(g) @ approx))))
    assert abs(slope(HS, errs) - 5) < 0.25


def test_quaternion_exponential_exact_and_magnus_quaternion():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3)) * np.logspace(-10, 0.4, 20)[:, None]
    q = quaternion_exp(X)
    for Xi, qi in zip(X, q):
        np.testing.assert_allclose(quaternion.to_matrix(qi), expm(so3.hat(2 * Xi)), atol=1e-14)
    q0 = quaternion.from_matrix(so3.exp(np.array([0.3, 0.2, -0.5])))
    w1 = W0 + 0.2 * ALPHA
    for third in (False, True):
        np.testing.assert_allclose(quaternion.to_matrix(magnus_quaternion(q0, W0, w1, 0.2, third)),
                                   magnus_rotation(quaternion.to_matrix(q0), W0, w1, 0.2, third), atol=1e-14)


ANGLE_ERRORS = {0.1: 2.08e-8, np.pi / 4: 6.12e-4, np.pi / 2: 1.87e-2}   # rad, as documented


def test_normalised_third_order_exponential_accuracy():
    """Unit norm and exact axis by construction; the angle error is φ⁵/480 to leading order and the
    values quoted in the docs; relative error below 1 % up to 86°, not at 90°."""
    rng = np.random.default_rng(1)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    phis = np.array([1e-3, 1e-2, 0.1, 0.5, np.pi / 4, 1.3, 1.5, np.pi / 2, 2.0])
    q = quaternion_exp(0.5 * phis[:, None] * axis, "normalised3")
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    np.testing.assert_allclose(q[:, 1:] / np.linalg.norm(q[:, 1:], axis=-1, keepdims=True),
                               np.broadcast_to(axis, (len(phis), 3)), atol=1e-14)
    exact = quaternion_exp(0.5 * phis[:, None] * axis)
    # angle of the rotation between the two
    d = quaternion.multiply(q, exact * np.array([1, -1, -1, -1]))
    err = 2 * np.arctan2(np.linalg.norm(d[:, 1:], axis=-1), np.abs(d[:, 0]))
    measured = dict(zip(phis, err))
    for phi, value in ANGLE_ERRORS.items():
        assert measured[phi] == pytest.approx(value, rel=0.01)
    assert measured[1e-2] == pytest.approx(1e-2 ** 5 / 480, rel=1e-3)
    assert measured[0.1] == pytest.approx(0.1 ** 5 / 480, rel=1e-2)
    rel = err / phis
    assert rel[phis == 1.5][0] < 0.01 < rel[phis == np.pi / 2][0]


def tumbling_body():
    system = HolonomicSystem(inertia=np.array([3.0, 2.0, 1.0, 2.0, 2.0, 2.0]))
    init = RigidState(R=so3.exp(np.array([0.3, -0.2, 0.5])), x=np.zeros(3), omega=np.array([0.4, 2.0, 0.3]),
                      v=np.array([1.0, 0.5, -0.3]))
    return system, init


def final_error(traj, ref) -> float:
    R, Rr = traj.rotation_matrices[-1], ref.rotation_matrices[-1]
    return float(np.linalg.norm(so3.log(Rr.T @ R)) + np.linalg.norm(traj.position[-1] - ref.position[-1])
                 + np.linalg.norm(traj.angular_velocity[-1] - ref.angular_velocity[-1])
                 + np.linalg.norm(traj.linear_velocity[-1] - ref.linear_velocity[-1]))


@pytest.mark.parametrize("third_term, exponential", [(False, "exact"), (True, "exact"), (False, "normalised3")])
def test_magnus_integrator_is_second_order(third_term, exponential):
    system, init = tumbling_body()
    T = 2.0
    ref = reference(system, init, T, 1)
    counts = (20, 40, 80)
    errs = [final_error(magnus(system, init, T / n, n, third_term=third_term, exponential=exponential), ref)
            for n in counts]
    assert abs(-slope(counts, errs) - 2) < 0.15


def test_magnus_integrator_with_constant_angular_acceleration_is_fourth_order():
    """Isotropic J and a constant body torque: ω(t) is exactly linear, Heun is exact on it, and
    the Magnus update's O(h⁵) local error is all that is left."""
    system = HolonomicSystem(inertia=np.array([2.0, 2.0, 2.0, 1.0, 1.0, 1.0]))
    init = RigidState(R=np.eye(3), x=np.zeros(3), omega=np.array([1.0, -0.5, 2.0]), v=np.zeros(3))
    torque = np.array([0.6, 1.0, -0.4, 0.0, 0.0, 0.0])
    T = 2.0
    ref = reference(system, init, T, 1, wrench=torque[None, :])
    counts = (8, 16, 32)
    errs = [final_error(integrate(system, init, T / n, n, "magnus", np.broadcast_to(torque, (n, 6))), ref)
            for n in counts]
    assert abs(-slope(counts, errs) - 4) < 0.25


def test_magnus_integrator_counts_and_group():
    system, init = tumbling_body()
    traj = integrate(system, init, 0.1, 30, "magnus")
    assert "magnus" in METHODS
    assert traj.stats["exp_evaluations_per_step"] == 1.0
    assert traj.stats["method"] == "magnus"
    res = run(rigid_body_problem(system.inertia, None, ()), magnus_step_function(True), init.R, init.x,
              init.xi, 0.2, 500, ())
    assert np.max(np.abs(np.swapaxes(res.R, -1, -2) @ res.R - np.eye(3))) < 1e-12
    res = run(rigid_body_problem(system.inertia, None, ()), magnus_step_function(True, exponential="normalised3"),
              init.R, init.x, init.xi, 0.2, 500, ())
    assert np.max(np.abs(np.swapaxes(res.R, -1, -2) @ res.R - np.eye(3))) < 1e-12
    with pytest.raises(ValueError, match="normalised3"):
        magnus_step_function(True, exponential="taylor")


def test_magnus_from_the_command_line(tmp_path):
    scenario = tmp_path / "spin.toml"
    scenario.write_text("""
[vehicle]
type = "rigid_body"
mass = 2.0
inertia = [3.0, 2.0, 1.0]
gravity = true

[integrator]
method = "magnus"
dt = 0.01
steps = 50

[initial]
angular_velocity = [0.4, 2.0, 0.3]
linear_velocity = [1.0, 0.0, 5.0]
""")
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(scenario), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["stats"]["method"] == "magnus"
    assert data["stats"]["exp_evaluations_per_step"] == 1.0
    # a thrown body under gravity: the centre of mass follows the parabola exactly
    t = np.asarray(data["time"])
    z = np.asarray(data["position"])[:, 2]
    np.testing.assert_allclose(z, 5.0 * t - 0.5 * 9.81 * t ** 2, atol=1e-2)
