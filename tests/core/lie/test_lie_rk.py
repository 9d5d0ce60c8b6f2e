"""The Lie group RK methods of Park & Chung 2005 (CG, CF, MK; Tables I–III): tableaux, exponential
counts, single steps against their formulas written out with scipy's expm, fitted orders on the rigid body
against DOP853, SE(3) preservation, batching, blow-ups, and the vehicles that get the methods
through ``integrate``."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.linalg import expm

from core.integrators import METHODS, integrate
from core.integrators.common import GRAVITY, HolonomicSystem, RigidState
from core.integrators.euler_poincare import reference, velocity_rate
from core.integrators.families import FAMILIES, ORDERS
from core.integrators.lie_rk import (CG4_PARK_CHUNG_FRACTIONS, TABLEAUX, Counter, lie_rk_step,
                                     rigid_body_problem, run, tableau_step)
from core.lie import quaternion, se3, so3
from core.scenario import loads
from core.simulation import simulate
from tests.core.lie.references import series_dexp_inv

LIE_METHODS = ("cg2", "cg3", "cg4", "cf2", "cf3", "cf4", "mk2", "mk3", "mk4")
PARK_CHUNG_EXP_COUNTS = {"cg2": 3, "cf2": 3, "mk2": 2, "cg3": 6, "cf3": 3, "mk3": 3, "cg4": 15, "cf4": 5, "mk4": 4}
PARK_CHUNG_DEXPINV_COUNTS = {"cg2": 0, "cf2": 0, "mk2": 1, "cg3": 0, "cf3": 0, "mk3": 2, "cg4": 0, "cf4": 0, "mk4": 3}


# --- tableaux ----------------------------------------------------------------------------------------

def classical_conditions(a, b, c, order):
    """Residuals of the rooted-tree order conditions of an explicit RK tableau up to ``order``."""
    a, b, c = np.array(a), np.array(b), np.array(c)
    res = [b.sum() - 1]
    if order >= 2:
        res.append(b @ c - 1 / 2)
    if order >= 3:
        res += [b @ c ** 2 - 1 / 3, b @ a @ c - 1 / 6]
    if order >= 4:
        res += [b @ c ** 3 - 1 / 4, (b * c) @ a @ c - 1 / 8, b @ a @ c ** 2 - 1 / 12, b @ a @ a @ c - 1 / 24]
    return np.array(res)


@pytest.mark.parametrize("name", LIE_METHODS)
def test_reduced_tableau_satisfies_classical_conditions(name):
    tab = TABLEAUX[name]
    assert np.max(np.abs(classical_conditions(tab.a, tab.b, tab.c, tab.order))) < 2e-15
    np.testing.assert_allclose(tab.c, np.sum(tab.a, axis=1), atol=1e-15)
    assert np.max(np.abs(classical_conditions(tab.a, tab.b, tab.c, tab.order + 1))) > 1e-3 or tab.order == 4


def test_cg4_digits_are_the_park_chung_table_ib():
    tab = TABLEAUX["cg4"]
    frac = lambda s: float(Fraction(s))  # noqa: E731
    for i, row in enumerate(CG4_PARK_CHUNG_FRACTIONS["a"]):
        for j, v in enumerate(row):
            assert abs(tab.a[i][j] - frac(v)) < 1e-6
    for j, v in enumerate(CG4_PARK_CHUNG_FRACTIONS["b"]):
        assert abs(tab.b[j] - frac(v)) < 1e-6
    for j, v in enumerate(CG4_PARK_CHUNG_FRACTIONS["c"]):
        assert abs(tab.c[j] - frac(v)) < 1e-6
    assert tab.c[4] == pytest.approx(0.8768903263420429, abs=2e-16)
    # Park & Chung's rounded coefficients violate the fourth-order conditions at the 1e-7 level
    a = np.zeros((5, 5))
    for i, row in enumerate(CG4_PARK_CHUNG_FRACTIONS["a"]):
        a[i, :len(row)] = [frac(v) for v in row]
    b = np.array([frac(v) for v in CG4_PARK_CHUNG_FRACTIONS["b"]])
    assert np.max(np.abs(classical_conditions(a, b, a.sum(axis=1), 4))) > 1e-9


def test_cf_tableaux_reduce_to_table_iii():
    """Park & Chung eqs. (39c–d): summing the exponential rows gives RK3 (Table III(a)) and RK4 (III(b))."""
    np.testing.assert_array_equal(TABLEAUX["cf3"].a, TABLEAUX["mk3"].a)
    np.testing.assert_array_equal(TABLEAUX["cf3"].b, TABLEAUX["mk3"].b)
    np.testing.assert_array_equal(TABLEAUX["cf4"].a, TABLEAUX["mk4"].a)
    np.testing.assert_array_equal(TABLEAUX["cf4"].b, TABLEAUX["mk4"].b)
    np.testing.assert_array_equal(TABLEAUX["mk4"].b, [1 / 6, 1 / 3, 1 / 3, 1 / 6])


def test_exponential_counts_are_park_chungs():
    for name in LIE_METHODS:
        assert TABLEAUX[name].exp_evaluations_per_step == PARK_CHUNG_EXP_COUNTS[name], name
        assert TABLEAUX[name].dexp_inv_evaluations_per_step == PARK_CHUNG_DEXPINV_COUNTS[name], name
    assert TABLEAUX["cf4"].exp_evaluations_per_step < TABLEAUX["cg4"].exp_evaluations_per_step
    system, init = tumbling_body()
    for name in LIE_METHODS:
        stats = integrate(system, init, 0.05, 7, name).stats
        assert stats["exp_evaluations_per_step"] == PARK_CHUNG_EXP_COUNTS[name], name
        assert stats["dexp_inv_evaluations_per_step"] == PARK_CHUNG_DEXPINV_COUNTS[name], name
        assert stats["rate_evaluations_per_step"] == TABLEAUX[name].stages


# --- single steps against Park & Chung's formulas, written out independently ----------------------------

def tumbling_body():
    system = HolonomicSystem(inertia=np.array([3.0, 2.0, 1.0, 2.0, 2.0, 2.0]))
    init = RigidState(R=so3.exp(np.array([0.3, -0.2, 0.5])), x=np.array([0.1, 0.2, -0.3]),
                      omega=np.array([0.4, 2.0, 0.3]), v=np.array([1.0, 0.5, -0.3]))
    return system, init


def _one_step(name, h):
    system, init = tumbling_body()
    g = se3.make(init.R, init.x)
    rates = lambda R, x, y: velocity_rate(system.inertia, y)  # noqa: E731
    R1, x1, y1 = lie_rk_step(TABLEAUX[name], init.R, init.x, init.xi, h, rates, Counter())
    return system, g, init.xi, se3.make(R1, x1), y1


def _rk4_velocities(system, xi, h):
    F = lambda v: velocity_rate(system.inertia, v)  # noqa: E731
    K1 = F(xi)
    V2 = xi + h / 2 * K1
    K2 = F(V2)
    V3 = xi + h / 2 * K2
    K3 = F(V3)
    V4 = xi + h * K3
    K4 = F(V4)
    return (xi, V2, V3, V4), xi + h / 6 * (K1 + 2 * K2 + 2 * K3 + K4)


E = lambda xi: expm(se3.hat(xi))  # noqa: E731


def test_cf4_step_is_park_chungs_formula():
    """Park & Chung §III-C (left-trivialised): g⁽⁴⁾ = g⁽²⁾ exp(−h/2 V₁ + h V₃),
    g_{k+1} = g_k exp(h/4 V₁ + h/6 V₂ + h/6 V₃ − h/12 V₄) exp(−h/12 V₁ + h/6 V₂ + h/6 V₃ + h/4 V₄)."""
    h = 0.3
    system, g, xi, g1, y1 = _one_step("cf4", h)
    (V1, V2, V3, V4), v_new = _rk4_velocities(system, xi, h)
    expected = (g @ E(h / 4 * V1 + h / 6 * V2 + h / 6 * V3 - h / 12 * V4)
                @ E(-h / 12 * V1 + h / 6 * V2 + h / 6 * V3 + h / 4 * V4))
    np.testing.assert_allclose(g1, expected, atol=1e-13)
    np.testing.assert_allclose(y1, v_new, atol=1e-13)


def test_cf3_step_is_park_chungs_formula():
    """g_{k+1} = g⁽²⁾ exp(−h/12 V₁ + 3h/4 V₃), g⁽²⁾ = g_k exp(h/3 V₁), velocities by RK3 (Table III(a))."""
    h = 0.3
    system, g, xi, g1, y1 = _one_step("cf3", h)
    F = lambda v: velocity_rate(system.inertia, v)  # noqa: E731
    V1 = xi
    V2 = xi + h / 3 * F(V1)
    V3 = xi + 2 * h / 3 * F(V2)
    np.testing.assert_allclose(g1, g @ E(h / 3 * V1) @ E(-h / 12 * V1 + 3 * h / 4 * V3), atol=1e-13)
    np.testing.assert_allclose(y1, xi + h * (F(V1) / 4 + 3 * F(V3) / 4), atol=1e-13)


def test_cg3_step_is_park_chungs_formula():
    """g_{k+1} = g_k exp(h b₁ V₁) exp(h b₂ V₂) exp(h b₃ V₃) (eq. 37a), Table I(a)."""
    h = 0.3
    system, g, xi, g1, _ = _one_step("cg3", h)
    F = lambda v: velocity_rate(system.inertia, v)  # noqa: E731
    V1 = xi
    V2 = xi + 3 * h / 4 * F(V1)
    V3 = xi + h * (119 / 216 * F(V1) + 17 / 108 * F(V2))
    expected = g @ E(13 / 51 * h * V1) @ E(-2 / 3 * h * V2) @ E(24 / 17 * h * V3)
    np.testing.assert_allclose(g1, expected, atol=1e-13)


def test_mk4_step_is_park_chungs_formula_with_a_series_dexp_inv():
    """Eqs. (42a–h) with dexp⁻¹ as a 90-term Bernoulli series of ad (references.py), expm for exp."""
    h = 0.3
    system, g, xi, g1, y1 = _one_step("mk4", h)
    (V1, V2, V3, V4), v_new = _rk4_velocities(system, xi, h)
    dinv = lambda theta, V: series_dexp_inv(se3.ad(-theta)) @ V  # noqa: E731
    F1 = V1
    F2 = dinv(h / 2 * F1, V2)
    F3 = dinv(h / 2 * F2, V3)
    F4 = dinv(h * F3, V4)
    expected = g @ E(h / 6 * (F1 + 2 * F2 + 2 * F3 + F4))
    np.testing.assert_allclose(g1, expected, atol=1e-13)
    np.testing.assert_allclose(y1, v_new, atol=1e-13)


def test_cg2_and_cf2_are_the_same_method():
    # the same tableau (a, b and exponential rows) through the same step code: bit for bit
    for h in (0.1, 0.7):
        _, _, _, ga, ya = _one_step("cg2", h)
        _, _, _, gb, yb = _one_step("cf2", h)
        np.testing.assert_array_equal(ga, gb)
        np.testing.assert_array_equal(ya, yb)


# --- orders on the rigid body --------------------------------------------------------------------------

def final_error(traj, ref) -> float:
    R, Rr = traj.rotation_matrices[-1], ref.rotation_matrices[-1]
    return float(np.linalg.norm(so3.log(Rr.T @ R)) + np.linalg.norm(traj.position[-1] - ref.position[-1])
                 + np.linalg.norm(traj.angular_velocity[-1] - ref.angular_velocity[-1])
                 + np.linalg.norm(traj.linear_velocity[-1] - ref.linear_velocity[-1]))


@pytest.fixture(scope="module")
def rigid_reference():
    system, init = tumbling_body()
    wrench = np.array([0.3, -0.2, 0.1, 0.5, 0.0, -1.0])     # a constant body wrench, held every step
    T = 2.0
    return system, init, wrench, T, reference(system, init, T, 1, wrench=wrench[None, :])


@pytest.mark.parametrize("method", LIE_METHODS)
def test_fitted_order_on_the_rigid_body(rigid_reference, method):
    system, init, wrench, T, ref = rigid_reference
    counts = (12, 24, 48)
    errs = [final_error(integrate(system, init, T / n, n, method, np.broadcast_to(wrench, (n, 6))), ref)
            for n in counts]
    fitted = -np.polyfit(np.log(counts), np.log(errs), 1)[0]
    assert abs(fitted - ORDERS[method]) < 0.25, (method, errs, fitted)


@pytest.mark.parametrize("method", LIE_METHODS)
def test_poses_stay_on_se3(method):
    system, init = tumbling_body()
    fast = RigidState(R=init.R, x=init.x, omega=np.array([3.0, 8.0, -2.0]), v=init.v)
    res = run(rigid_body_problem(system.inertia, None, ()), tableau_step(method), fast.R, fast.x, fast.xi,
              0.05, 300, ())
    R = res.R
    assert np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3))) < 1e-12
    assert np.max(np.abs(np.linalg.det(R) - 1)) < 1e-12


@pytest.mark.parametrize("method", LIE_METHODS + ("magnus",))
def test_falling_body_follows_the_parabola(method):
    """A non-rotating body under gravity (held wrench, constant here): every method of order ≥ 2
    integrates the quadratic exactly."""
    system = HolonomicSystem(inertia=np.array([1.0, 2.0, 3.0, 4.0, 4.0, 4.0]),
                             wrench=lambda k, R, x, xi: np.concatenate(
                                 [np.zeros(R.shape[:-2] + (3,)), -GRAVITY * 4.0 * R[..., 2, :]], axis=-1))
    init = RigidState(R=np.eye(3), x=np.array([0.0, 0.0, 10.0]), omega=np.zeros(3), v=np.array([2.0, 0.0, 3.0]))
    traj = integrate(system, init, 0.1, 20, method)
    t = traj.time
    expected = np.stack([2 * t, 0 * t, 10 + 3 * t - 0.5 * GRAVITY * t ** 2], axis=-1)
    np.testing.assert_allclose(traj.position, expected, atol=1e-12)


def test_batch_equals_single_runs():
    system, init = tumbling_body()
    omega = np.array([[0.4, 2.0, 0.3], [1.0, -1.0, 0.5], [0.0, 0.1, 3.0]])
    batch = RigidState(R=init.R, x=init.x, omega=omega, v=np.broadcast_to(init.v, (3, 3)))
    for method in ("cg3", "cf4", "mk4"):
        traj = integrate(system, batch, 0.05, 20, method)
        for b in range(3):
            one = integrate(system, RigidState(init.R, init.x, omega[b], init.v), 0.05, 20, method)
            np.testing.assert_allclose(traj.position[:, b], one.position, atol=1e-13)
            np.testing.assert_allclose(traj.orientation[:, b], one.orientation, atol=1e-13)


def test_blow_up_is_stopped_without_nan():
    system = HolonomicSystem(inertia=np.array([1.0, 5.0, 20.0, 1.0, 1.0, 1.0]))
    wild = RigidState(R=np.eye(3), x=np.zeros(3), omega=np.array([50.0, 80.0, 30.0]), v=np.zeros(3))
    calm = RigidState(R=np.eye(3), x=np.zeros(3), omega=np.array([0.1, 0.2, 0.1]), v=np.zeros(3))
    traj = integrate(system, wild, 0.5, 40, "cg4")
    assert traj.stats["blew_up"] and len(traj.time) < 41
    assert np.all(np.isfinite(traj.position)) and np.all(np.isfinite(traj.orientation))
    both = RigidState(R=np.eye(3), x=np.zeros(3), omega=np.stack([wild.omega, calm.omega]), v=np.zeros((2, 3)))
    traj = integrate(system, both, 0.5, 40, "cg4")
    assert traj.stats["blew_up_per_body"] == [True, False]
    assert len(traj.time) == 41 and np.all(np.isfinite(traj.orientation))


def test_registered_in_the_dispatcher():
    assert set(FAMILIES) == set(LIE_METHODS) | {"magnus"}
    assert all(name in METHODS for name in FAMILIES)
    system, init = tumbling_body()
    with pytest.raises(ValueError, match="cf4"):
        integrate(system, init, 0.1, 2, "cf5")


HELICOPTER = """
[vehicle]
type = "helicopter"
[integrator]
method = "{method}"
dt = 0.02
steps = 40
[initial]
position = [0.0, 0.0, 20.0]
[controls.collective]
offset = 5886.0
[controls.pitch_tilt]
offset = 0.01
"""

BOAT = """
[vehicle]
type = "boat"
[integrator]
method = "{method}"
dt = 0.05
steps = 6
[initial]
position = [0.0, 0.0, 0.084]
[controls.thruster_1]
offset = 500.0
[controls.thruster_2]
offset = 500.0
"""


def test_helicopter_and_boat_take_the_families():
    heli = {m: simulate(loads(HELICOPTER.format(method=m))) for m in ("cf4", "mk4", "rk4")}
    assert heli["cf4"].stats["exp_evaluations_per_step"] == 5
    np.testing.assert_allclose(heli["cf4"].position, heli["rk4"].position, atol=1e-6)
    np.testing.assert_allclose(heli["mk4"].position, heli["rk4"].position, atol=1e-6)
    boat = {m: simulate(loads(BOAT.format(method=m))) for m in ("cg3", "rk4")}
    assert boat["cg3"].stats["exp_evaluations_per_step"] == 6
    np.testing.assert_allclose(boat["cg3"].position, boat["rk4"].position, atol=1e-4)
    assert quaternion.to_matrix(heli["cf4"].orientation).shape[-2:] == (3, 3)
