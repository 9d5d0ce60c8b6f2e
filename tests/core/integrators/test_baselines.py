"""The continuous Euler–Poincaré equations (paper eq. 8), the DOP853 reference, and the
baseline integrators of §3.3 (RK2, implicit RK2, RK4, Lie–Newmark, Lie–Euler)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from core.integrators.baselines import (BASELINES, XI_LIMIT, implicit_midpoint_velocity,
                                        lie_newmark_transport)
from core.integrators.common import HolonomicSystem, RigidState
from core.integrators.euler_poincare import (coadjoint_term, momentum, quaternion_rate,
                                             reference, rotate_by_quaternion, velocity_rate,
                                             velocity_rate_jacobian)
from core.lie import quaternion, se3, so3

RNG = np.random.default_rng(20090803)

# A tumbling asymmetric body with linear velocity and a constant body wrench.
INERTIA = np.array([1.0, 2.0, 3.5, 2.5, 2.5, 2.5])
INITIAL = RigidState(R=so3.exp(np.array([0.3, -0.7, 0.4])), x=np.array([0.1, 0.2, -0.3]),
                     omega=np.array([1.0, 0.3, -0.6]), v=np.array([0.3, -0.2, 0.5]))
WRENCH = np.array([0.1, -0.2, 0.05, 0.3, 0.1, -0.2])
T_ORDER = 4.0


def constant_wrench(k, R, x, xi):
    return WRENCH


def geodesic(R1: np.ndarray, R2: np.ndarray) -> np.ndarray:
    return np.linalg.norm(so3.log(np.swapaxes(R1, -1, -2) @ R2), axis=-1)


def final_errors(tr, ref) -> np.ndarray:
    """(position, orientation, body velocity) error at the final node."""
    return np.array([
        np.linalg.norm(tr.position[-1] - ref.position[-1]),
        geodesic(quaternion.to_matrix(ref.orientation[-1]), quaternion.to_matrix(tr.orientation[-1])),
        np.linalg.norm(np.concatenate([tr.angular_velocity[-1] - ref.angular_velocity[-1],
                                       tr.linear_velocity[-1] - ref.linear_velocity[-1]])),
    ])


# --- eq. (8) and its pieces ------------------------------------------------------------------

def test_coadjoint_term_matches_ad_matrix():
    for _ in range(5):
        I = RNG.uniform(0.5, 5.0, 6)
        xi = RNG.normal(size=6)
        expected = se3.ad(xi).T @ (I * xi)
        assert np.allclose(coadjoint_term(I, xi), expected, atol=1e-14)
    # and the component form J ω × ω + M v × v, M v × ω of equations.md
    w, v = xi[:3], xi[3:]
    comp = np.concatenate([np.cross(I[:3] * w, w) + np.cross(I[3:] * v, v), np.cross(I[3:] * v, w)])
    assert np.allclose(coadjoint_term(I, xi), comp, atol=1e-14)


def test_velocity_rate_jacobian_finite_differences():
    I = RNG.uniform(0.5, 5.0, (4, 6))
    xi = RNG.normal(size=(4, 6))
    f = RNG.normal(size=(4, 6))
    D = velocity_rate_jacobian(I, xi)
    eps = 1e-6
    for j in range(6):
        e = np.zeros(6)
        e[j] = eps
        fd = (velocity_rate(I, xi + e, f) - velocity_rate(I, xi - e, f)) / (2 * eps)
        assert np.allclose(D[..., :, j], fd, atol=1e-8)


def test_quaternion_rate_matches_rotation_kinematics():
    q = quaternion.normalize(RNG.normal(size=4))
    w = RNG.normal(size=3)
    eps = 1e-6
    dR_fd = (quaternion.to_matrix(q + eps * quaternion_rate(q, w))
             - quaternion.to_matrix(q - eps * quaternion_rate(q, w))) / (2 * eps)
    assert np.allclose(dR_fd, quaternion.to_matrix(q) @ so3.hat(w), atol=1e-8)


def test_rotate_by_quaternion_matches_matrix():
    q = quaternion.normalize(RNG.normal(size=(5, 4)))
    v = RNG.normal(size=(5, 3))
    expected = np.einsum("...ij,...j->...i", quaternion.to_matrix(q), v)
    assert np.allclose(rotate_by_quaternion(q, v), expected, atol=1e-14)
    assert np.allclose(rotate_by_quaternion(q[0], v[0]), expected[0], atol=1e-14)


def test_momentum_is_coadjoint_of_inverse_pose():
    I = RNG.uniform(0.5, 5.0, 6)
    R, x, xi = so3.exp(RNG.normal(size=3)), RNG.normal(size=3), RNG.normal(size=6)
    L, P = momentum(R, x, xi[:3], xi[3:], I)
    spatial = se3.Ad(se3.inverse(se3.make(R, x))).T @ (I * xi)
    assert np.allclose(np.concatenate([L, P]), spatial, atol=1e-13)


# --- the reference solver against closed forms ------------------------------------------------

def test_reference_torque_free_symmetric_top():
    """J = diag(A, A, C), M = m I: ω⊥ turns at λ = (A − C) ω₃ / A about body z,
    R(t) = R₀ exp(t (ω₀ − λ e₃)^) exp(t λ ê₃), x(t) = x₀ + t R₀ v₀, v(t) = R(t)ᵀ R₀ v₀."""
    A, C, m = 2.0, 3.5, 1.7
    I = np.array([A, A, C, m, m, m])
    w0, v0 = np.array([0.8, -0.4, 1.3]), np.array([0.5, 0.2, -0.4])
    R0, x0 = so3.exp(np.array([0.2, 0.5, -0.1])), np.array([1.0, -2.0, 0.5])
    dt, steps = 0.5, 40
    ref = reference(HolonomicSystem(I), RigidState(R0, x0, w0, v0), dt, steps)
    lam = (A - C) * w0[2] / A
    e3 = np.array([0.0, 0.0, 1.0])
    for k in (1, 17, steps):
        t = k * dt
        R = R0 @ expm(t * so3.hat(w0 - lam * e3)) @ expm(t * lam * so3.hat(e3))
        assert geodesic(R, quaternion.to_matrix(ref.orientation[k])) < 1e-10
        assert np.allclose(ref.angular_velocity[k], so3.exp(-lam * t * e3) @ w0, atol=1e-10)
        assert np.allclose(ref.position[k], x0 + t * R0 @ v0, atol=1e-10)
        assert np.allclose(ref.linear_velocity[k], R.T @ R0 @ v0, atol=1e-10)
    assert np.allclose(ref.momentum_angular, ref.momentum_angular[0], atol=1e-9)


def test_reference_holds_switching_force_per_step():
    """ω = 0, body force F on even steps and 0 on odd ones: piecewise-quadratic translation."""
    m, dt, steps = 2.0, 0.3, 7
    F = np.array([1.0, -0.5, 2.0])
    R0, x0, v0 = so3.exp(np.array([0.4, 0.1, -0.3])), np.zeros(3), np.array([0.2, 0.0, -0.1])
    system = HolonomicSystem(np.array([1.0, 1.0, 1.0, m, m, m]))
    wrench = lambda k, R, x, xi: np.concatenate([np.zeros(3), F if k % 2 == 0 else np.zeros(3)])  # noqa: E731
    ref = reference(system, RigidState(R0, x0, np.zeros(3), v0), dt, steps, wrench=wrench)
    x, v = x0.copy(), v0.copy()
    for k in range(steps):
        a = F / m if k % 2 == 0 else np.zeros(3)
        x = x + R0 @ (v * dt + 0.5 * a * dt**2)
        v = v + a * dt
        assert np.allclose(ref.position[k + 1], x, atol=1e-11)
        assert np.allclose(ref.linear_velocity[k + 1], v, atol=1e-11)


# --- the baselines --------------------------------------------------------------------------

ORDER_CASES = {
    # method: (step counts over T_ORDER, expected order)
    "rk2": ((40, 80, 160), 2.0),
    "rk2i": ((40, 80, 160), 2.0),
    "rk4": ((20, 40, 80), 4.0),
    "lie-newmark": ((100, 200, 400), 2.0),
    "lie-euler": ((100, 200, 400), 1.0),
}


@pytest.fixture(scope="module")
def order_reference():
    # the wrench is constant, so one reference step over [0, T] integrates the same ODE
    return reference(HolonomicSystem(INERTIA), INITIAL, T_ORDER, 1, wrench=constant_wrench)


@pytest.mark.parametrize("method", sorted(ORDER_CASES))
def test_fitted_order_against_reference(method, order_reference):
    counts, expected = ORDER_CASES[method]
    errs = []
    for n in counts:
        tr = BASELINES[method](HolonomicSystem(INERTIA), INITIAL, T_ORDER / n, n, constant_wrench)
        assert len(tr) == n + 1 and not tr.stats["blew_up"]
        errs.append(final_errors(tr, order_reference))
    errs = np.array(errs)
    h = T_ORDER / np.array(counts)
    for j, label in enumerate(("position", "orientation", "velocity")):
        slope = np.polyfit(np.log(h), np.log(errs[:, j]), 1)[0]
        assert abs(slope - expected) < 0.25, (method, label, slope, errs[:, j])


def test_reference_integrates_the_state_dependent_wrench():
    """Body-frame gravity Rᵀ(0, 0, −mg) re-evaluated on the reference's own state: the centre of
    mass follows x₀ + t R₀v₀ − ½ g t² ẑ exactly, and the attitude ignores gravity (no torque)."""
    m, T, n = INERTIA[3], 3.0, 6
    fall = reference(HolonomicSystem(INERTIA), INITIAL, T / n, n, wrench=make_gravity(m))
    free = reference(HolonomicSystem(INERTIA), INITIAL, T / n, n)
    t = fall.time[:, None]
    expected = INITIAL.x + t * (INITIAL.R @ INITIAL.v) - 0.5 * 9.81 * t**2 * np.array([0.0, 0.0, 1.0])
    assert np.max(np.abs(fall.position - expected)) < 1e-9
    assert np.max(geodesic(quaternion.to_matrix(fall.orientation), quaternion.to_matrix(free.orientation))) < 1e-9


@pytest.mark.parametrize("method", sorted(ORDER_CASES))
def test_orders_with_a_state_dependent_wrench(method):
    """A tumbling body under body-frame gravity (depends on the attitude at every instant): each
    method evaluates f(k, R, x, ξ) at its own stage states and keeps its order against the
    reference (rk4 ≈ 4, rk2 ≈ 2, …). Holding f(k, R_k, x_k, ξ_k) over the step made rk4 first order."""
    gravity = make_gravity(INERTIA[3])
    ref = reference(HolonomicSystem(INERTIA), INITIAL, T_ORDER, 1, wrench=gravity)
    counts, expected = ORDER_CASES[method]
    errs = []
    for n in counts:
        tr = BASELINES[method](HolonomicSystem(INERTIA), INITIAL, T_ORDER / n, n, gravity)
        assert not tr.stats["blew_up"]
        errs.append(final_errors(tr, ref))
    errs = np.array(errs)
    h = T_ORDER / np.array(counts)
    for j, label in enumerate(("position", "orientation", "velocity")):
        slope = np.polyfit(np.log(h), np.log(errs[:, j]), 1)[0]
        print(f"\n{method} {label}: errors {errs[:, j]}, order {slope:.2f}")
        assert abs(slope - expected) < 0.25, (method, label, slope, errs[:, j])


def test_holding_the_node_wrench_makes_rk4_first_order():
    """The contrast: the same gravity frozen at its first evaluation in each step (node k, what
    the baselines did before) drags rk4 down to first order against the same reference."""
    gravity = make_gravity(INERTIA[3])
    held: dict = {}

    def node_gravity(k, R, x, xi):
        if k not in held:
            held[k] = gravity(k, R, x, xi)
        return held[k]

    ref = reference(HolonomicSystem(INERTIA), INITIAL, T_ORDER, 1, wrench=gravity)
    counts = (20, 40, 80)
    errs = []
    for n in counts:
        held.clear()
        tr = BASELINES["rk4"](HolonomicSystem(INERTIA), INITIAL, T_ORDER / n, n, node_gravity)
        errs.append(final_errors(tr, ref)[0])
    slope = np.polyfit(np.log(T_ORDER / np.array(counts)), np.log(errs), 1)[0]
    assert abs(slope - 1.0) < 0.25, (slope, errs)


def test_lie_newmark_conserves_spatial_momentum():
    system = HolonomicSystem(INERTIA)
    tr = BASELINES["lie-newmark"](system, INITIAL, 0.2, 600, None)
    scale = np.linalg.norm(tr.momentum_angular[0])
    assert np.max(np.abs(tr.momentum_angular - tr.momentum_angular[0])) < 1e-12 * 100 * scale
    assert np.max(np.abs(tr.momentum_linear - tr.momentum_linear[0])) < 1e-12 * 100
    # while RK4 at the same step does drift (the test can tell a drifting method apart)
    rk = BASELINES["rk4"](system, INITIAL, 0.2, 600, None)
    assert np.max(np.abs(rk.momentum_angular - rk.momentum_angular[0])) > 1e-8 * scale


def test_lie_newmark_transport_keeps_spatial_momentum():
    """Ad*_{g'⁻¹} Ad_{Δ}ᵀ μ = Ad*_{g⁻¹} μ for g' = g Δ, with Ad from core.lie.se3."""
    for _ in range(5):
        g = se3.exp(RNG.normal(size=6))
        delta = se3.exp(RNG.normal(size=6))
        mu = RNG.normal(size=6)
        moved = lie_newmark_transport(se3.rotation(delta), se3.translation(delta), mu)
        assert np.allclose(moved, se3.Ad(delta).T @ mu, atol=1e-13)
        before = se3.Ad(se3.inverse(g)).T @ mu
        after = se3.Ad(se3.inverse(g @ delta)).T @ moved
        assert np.allclose(before, after, atol=1e-12)


@pytest.mark.parametrize("scale", [1e-9, 0.1, 0.2, 0.3, 2.0, 3.0])
def test_float_se3_increment_matches_se3_exp(scale):
    """The float kernel of the Lie methods (series branch below |θ| = 0.25, closed form above)."""
    from core.integrators.baselines import _se3_increment_s

    d = RNG.normal(size=3)
    theta = np.concatenate([scale * d / np.linalg.norm(d), RNG.normal(size=3)])
    E, t = _se3_increment_s(list(theta))
    g = se3.exp(theta)
    assert np.allclose(np.reshape(E, (3, 3)), se3.rotation(g), atol=1e-15)
    assert np.allclose(t, se3.translation(g), atol=1e-14)


def test_implicit_midpoint_solves_its_equation():
    I = RNG.uniform(0.5, 5.0, (3, 6))
    xi = RNG.normal(size=(3, 6))
    f = RNG.normal(size=(3, 6))
    h = 0.3
    xm, iters, ok = implicit_midpoint_velocity(I, xi, f, h)
    assert ok.all() and (iters >= 1).all()
    assert np.allclose(xm, xi + 0.5 * h * velocity_rate(I, xm, f), atol=1e-12)


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_quaternions_stay_unit(method):
    tr = BASELINES[method](HolonomicSystem(INERTIA), INITIAL, 0.05, 200, constant_wrench)
    assert np.allclose(np.linalg.norm(tr.orientation, axis=-1), 1.0, atol=1e-13)
    R = quaternion.to_matrix(tr.orientation)
    assert np.allclose(R @ np.swapaxes(R, -1, -2), np.eye(3), atol=1e-12)


def _batch_inputs():
    inertia = np.stack([INERTIA, np.array([3.0, 1.0, 2.0, 1.0, 1.0, 1.0]),
                        np.array([2.0, 4.0, 1.5, 6.0, 6.0, 6.0])])
    R = so3.exp(RNG.normal(size=(3, 3)))
    x = RNG.normal(size=(3, 3))
    w = RNG.normal(size=(3, 3))
    v = RNG.normal(size=(3, 3))
    return inertia, R, x, w, v


def make_gravity(mass: np.ndarray):
    """Body-frame gravity Rᵀ(0, 0, −9.81 m), a wrench that depends on the pose."""
    def gravity(k, R, x, xi):
        F = np.einsum("...ji,...j->...i", R, np.array([0.0, 0.0, -9.81])) * np.asarray(mass)[..., None]
        return np.concatenate([np.zeros_like(F), F], axis=-1)
    return gravity


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_batched_equals_loop_of_singles(method):
    inertia, R, x, w, v = _batch_inputs()
    batched = BASELINES[method](HolonomicSystem(inertia), RigidState(R, x, w, v), 0.05, 30,
                                make_gravity(inertia[:, 3]))
    assert batched.position.shape == (31, 3, 3) and batched.orientation.shape == (31, 3, 4)
    for b in range(3):
        single = BASELINES[method](HolonomicSystem(inertia[b]), RigidState(R[b], x[b], w[b], v[b]),
                                   0.05, 30, make_gravity(inertia[b, 3]))
        for field in ("position", "orientation", "angular_velocity", "linear_velocity",
                      "momentum_angular", "momentum_linear"):
            assert np.allclose(getattr(batched, field)[:, b], getattr(single, field), atol=1e-11), field


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_scalar_path_equals_numpy_path(method):
    """One body runs on Python floats by default; fast=False forces the numpy path."""
    inertia, R, x, w, v = _batch_inputs()
    wrench = make_gravity(inertia[1, 3])
    args = (HolonomicSystem(inertia[1]), RigidState(R[1], x[1], w[1], v[1]), 0.07, 40, wrench)
    fast = BASELINES[method](*args)
    slow = BASELINES[method](*args, fast=False)
    assert fast.stats["path"] == "scalar" and slow.stats["path"] == "batch"
    # different arithmetic: a residual at the Newton tolerance may take one more iteration in a step or two
    assert fast.stats["newton_iterations_mean"] == pytest.approx(slow.stats["newton_iterations_mean"], abs=0.05)
    for field in ("position", "orientation", "angular_velocity", "linear_velocity",
                  "momentum_angular", "momentum_linear"):
        assert np.allclose(getattr(fast, field), getattr(slow, field), atol=1e-11), field


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_scalar_path_with_anisotropic_translational_inertia(method):
    """A diagonal M ≠ m I₃ (Mv × v ≠ 0 in eq. (8)): the general kernels, against the numpy path
    and against the reference (both run the same ODE)."""
    inertia = np.array([1.0, 2.0, 3.5, 1.5, 2.5, 4.0])
    args = (HolonomicSystem(inertia), INITIAL, 0.05, 40, constant_wrench)
    fast, slow = BASELINES[method](*args), BASELINES[method](*args, fast=False)
    assert np.allclose(fast.position, slow.position, atol=1e-11)
    assert np.allclose(fast.angular_velocity, slow.angular_velocity, atol=1e-11)
    assert np.allclose(fast.linear_velocity, slow.linear_velocity, atol=1e-11)
    ref = reference(HolonomicSystem(inertia), INITIAL, 2.0, 1, wrench=constant_wrench)
    tol = 0.05 if method == "lie-euler" else 2e-3
    assert np.allclose(fast.linear_velocity[-1], ref.linear_velocity[-1], atol=tol)
    assert np.allclose(fast.angular_velocity[-1], ref.angular_velocity[-1], atol=tol)


BLOWUP_INITIAL = RigidState(R=np.eye(3), x=np.zeros(3), omega=np.array([6.0, 4.0, -5.0]),
                            v=np.array([1.0, 2.0, 0.0]))
BLOWUP_INERTIA = np.array([1.0, 4.0, 9.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("method", ["rk2", "rk4", "lie-euler"])
def test_blow_up_gives_finite_truncated_output(method, fast):
    tr = BASELINES[method](HolonomicSystem(BLOWUP_INERTIA), BLOWUP_INITIAL, 1.0, 200, None, fast=fast)
    assert tr.stats["blew_up"] is True
    assert len(tr) == tr.stats["last_good_node"] + 1 < 201
    for field in ("time", "position", "orientation", "angular_velocity", "linear_velocity",
                  "momentum_angular", "momentum_linear"):
        assert np.all(np.isfinite(getattr(tr, field)))
    xi = np.concatenate([tr.angular_velocity, tr.linear_velocity], axis=-1)
    assert np.all(np.linalg.norm(xi, axis=-1) <= XI_LIMIT)
    tr.to_json()  # refuses NaN/inf, so this also proves none reached the output


@pytest.mark.parametrize("method", sorted(BASELINES))
def test_batched_blow_up_freezes_only_the_failing_body(method):
    inertia = np.stack([BLOWUP_INERTIA, INERTIA])
    initial = RigidState(R=np.stack([np.eye(3), INITIAL.R]), x=np.stack([np.zeros(3), INITIAL.x]),
                         omega=np.stack([BLOWUP_INITIAL.omega, INITIAL.omega]),
                         v=np.stack([BLOWUP_INITIAL.v, INITIAL.v]))
    # the tame body is run at a step where every method is stable for it
    batched = BASELINES[method](HolonomicSystem(inertia), initial, 0.4, 20, None)
    single = BASELINES[method](HolonomicSystem(INERTIA), INITIAL, 0.4, 20, None)
    assert not single.stats["blew_up"]
    assert len(batched) == 21 and batched.stats["blew_up_per_body"][1] is False
    if method in ("rk2", "rk4", "lie-euler"):
        assert batched.stats["blew_up_per_body"][0] is True
    assert np.allclose(batched.position[:, 1], single.position, atol=1e-11)
    assert np.all(np.isfinite(batched.position)) and np.all(np.isfinite(batched.angular_velocity))
    if batched.stats["blew_up_per_body"][0]:
        last = batched.stats["last_good_node"][0]
        assert batched.stats["blew_up"] is True
        assert np.all(batched.position[last:, 0] == batched.position[last, 0])


@pytest.mark.parametrize("fast", [True, False])
def test_rk2i_newton_failure_counts_as_blow_up(monkeypatch, fast):
    from core.integrators import baselines

    monkeypatch.setattr(baselines, "NEWTON_MAX_ITER", 1)  # one iteration never meets the tolerance
    tr = BASELINES["rk2i"](HolonomicSystem(INERTIA), INITIAL, 0.05, 10, None, fast=fast)
    assert tr.stats["blew_up"] is True and len(tr) == 1
    assert np.all(np.isfinite(tr.position))


def test_rk2i_reports_newton_iterations():
    tr = BASELINES["rk2i"](HolonomicSystem(INERTIA), INITIAL, 0.05, 20, constant_wrench)
    assert 1.0 <= tr.stats["newton_iterations_mean"] <= 4.0
    assert BASELINES["rk4"](HolonomicSystem(INERTIA), INITIAL, 0.05, 5, None).stats["newton_iterations_mean"] == 0.0
