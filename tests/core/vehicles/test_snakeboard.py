"""The snakeboard (main paper §5.2.2): derivation checks, discrete scheme, acceptance, scenario.

Independent references used here (none share code with the module under test beyond
the parameter dataclass):
* the full Lagrange–d'Alembert equations in q = (ψ, φ, θ, x, y) with multipliers,
  𝕄 q̈ = τ + Wᵀλ, W q̇ = 0, written out below from the paper's constraints and 𝕄;
* central finite differences; ``core.lie.se2`` (cay, dcay_inv, from_pose) for the general
  form of eqs. (16)–(17); solve_ivp DOP853 at rtol = atol = 1e-12.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from tests.core.cli_contract import run_simulate
from core.errors import ScenarioError
from core.lie import se2
from core.vehicles import snakeboard as sb

ROOT = Path(__file__).resolve().parents[3]
EPS = np.finfo(float).eps
BOARD = sb.Snakeboard.rider()


# ---------------------------------------------------------------------------------------------
# Full Lagrange–d'Alembert with multipliers (the second, independent derivation)
# ---------------------------------------------------------------------------------------------

def mass_matrix(b: sb.Snakeboard) -> np.ndarray:
    I, J, m, l = b.rotor_inertia, b.wheel_inertia, b.mass, b.half_wheelbase
    return np.array([[I, 0, I, 0, 0], [0, 2 * J, 0, 0, 0], [I, 0, m * l * l, 0, 0],
                     [0, 0, 0, m, 0], [0, 0, 0, 0, m]], dtype=float)


def constraint_matrix(b: sb.Snakeboard, q: np.ndarray) -> np.ndarray:
    """W(q) in (ψ, φ, θ, x, y): the paper's two constraints as rows."""
    _, phi, th, _, _ = q
    l = b.half_wheelbase
    return np.array([[0, 0, -l * np.cos(phi), -np.sin(th + phi), np.cos(th + phi)],
                     [0, 0, l * np.cos(phi), -np.sin(th - phi), np.cos(th - phi)]])


def constraint_matrix_dot(b: sb.Snakeboard, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    _, phi, th, _, _ = q
    _, phid, thd, _, _ = qd
    l = b.half_wheelbase
    a, c = thd + phid, thd - phid
    return np.array([[0, 0, l * np.sin(phi) * phid, -np.cos(th + phi) * a, -np.sin(th + phi) * a],
                     [0, 0, -l * np.sin(phi) * phid, -np.cos(th - phi) * c, -np.sin(th - phi) * c]])


def lda_rhs(b: sb.Snakeboard, z: np.ndarray, tau_psi: float, tau_phi: float) -> np.ndarray:
    q, qd = z[:5], z[5:]
    M, W = mass_matrix(b), constraint_matrix(b, q)
    K = np.zeros((7, 7))
    K[:5, :5], K[:5, 5:], K[5:, :5] = M, -W.T, W
    rhs = np.concatenate([[tau_psi, tau_phi, 0, 0, 0], -constraint_matrix_dot(b, q, qd) @ qd])
    return np.concatenate([qd, np.linalg.solve(K, rhs)[:5]])


def lda_solve(b, z0, fpsi, fphi, dt, dense=False):
    z = np.array(z0, dtype=float)
    out, sols = [z], []
    for k in range(len(fpsi)):
        sol = solve_ivp(lambda t, y: lda_rhs(b, y, fpsi[k], fphi[k]), (0, dt), z, method="DOP853",
                        rtol=1e-12, atol=1e-12, dense_output=dense)
        assert sol.success
        z = sol.y[:, -1]
        out.append(z)
        sols.append(sol)
    return np.array(out), sols


def lda_from_state(b, s):
    """Reduced state (θ, x, y, ψ, φ, ψ̇, φ̇, p) → (q, q̇) of the full system."""
    th, x, y, psi, phi, psid, phid, p = s
    xi = sb.body_velocity(b, phi, psid, p)
    q = [psi, phi, th, x, y]
    qd = [psid, phid, xi[0], np.cos(th) * xi[1] - np.sin(th) * xi[2], np.sin(th) * xi[1] + np.cos(th) * xi[2]]
    return np.array(q + qd)


def body_from_lda(z):
    th, thd, xd, yd = z[2], z[7], z[8], z[9]
    return np.array([thd, np.cos(th) * xd + np.sin(th) * yd, -np.sin(th) * xd + np.cos(th) * yd])


def random_state(rng, b=BOARD, wheel=0.6):
    return np.array([rng.uniform(-3, 3), rng.normal(), rng.normal(), rng.uniform(-3, 3),
                     rng.uniform(-wheel, wheel), rng.normal(), 0.3 * rng.normal(), 20 * rng.normal()])


# ---------------------------------------------------------------------------------------------
# The derivation: e₁, connection, momentum, reduced equations
# ---------------------------------------------------------------------------------------------

def test_e1_spans_the_constraint_distribution_and_rotates_about_the_icr():
    rng = np.random.default_rng(1)
    phi = rng.uniform(-1.4, 1.4, size=50)
    e = sb.e1(BOARD, phi)
    l = BOARD.half_wheelbase
    brief = 2 * l * np.cos(phi)[:, None] ** 2 * np.stack([np.tan(phi) / l, -np.ones(50), np.zeros(50)], -1)
    np.testing.assert_allclose(e, brief, rtol=0, atol=1e-15)
    W = sb.constraint_forms(BOARD, phi)
    assert np.max(np.abs(np.einsum("kij,kj->ki", W, e))) < 1e-15
    # the two forms are independent: the allowed body velocities are exactly span e₁
    assert np.all(np.linalg.matrix_rank(W) == 2)
    # body-frame forms agree with the paper's spatial forms at a random heading
    th = rng.uniform(-3, 3, size=50)
    xi = rng.normal(size=(50, 3))
    qd_xy = np.stack([np.cos(th) * xi[:, 1] - np.sin(th) * xi[:, 2], np.sin(th) * xi[:, 1] + np.cos(th) * xi[:, 2]], -1)
    for k in range(50):
        q = np.array([0.0, phi[k], th[k], 0.0, 0.0])
        spatial = constraint_matrix(BOARD, q) @ np.array([0, 0, xi[k, 0], *qd_xy[k]])
        np.testing.assert_allclose(W[k] @ xi[k], spatial, atol=1e-14)
    # the body point c = (0, −l/tan φ) is at rest under e₁: v + ω × c = 0
    c_y = -l / np.tan(phi)
    np.testing.assert_allclose(e[:, 1] - e[:, 0] * c_y, 0, atol=1e-14)
    np.testing.assert_allclose(e[:, 2], 0, atol=0)


def test_connection_is_horizontal_and_reconstructs_body_velocity():
    rng = np.random.default_rng(2)
    phi, psid, p = rng.uniform(-1.3, 1.3, 40), rng.normal(size=40), 10 * rng.normal(size=40)
    A = sb.connection(BOARD, phi)
    horizontal = -A[..., 0]  # ξ of the horizontal lift of u = (1, 0)
    # in the constraint distribution ...
    assert np.max(np.abs(np.einsum("kij,kj->ki", sb.constraint_forms(BOARD, phi), horizontal))) < 1e-15
    # ... and kinetic-metric orthogonal to the symmetry direction: p(u, −A u) = 0
    np.testing.assert_allclose(sb.nonholonomic_momentum(BOARD, phi, np.ones(40), horizontal), 0, atol=1e-14)
    np.testing.assert_allclose(A[..., 1], 0, atol=0)  # steering moves no body velocity
    xi = sb.body_velocity(BOARD, phi, psid, p)
    np.testing.assert_allclose(sb.nonholonomic_momentum(BOARD, phi, psid, xi), p, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(xi, sb.locked_velocity(BOARD, phi, p) - A[..., 0] * psid[:, None], rtol=0, atol=1e-15)
    # Ω is p e₁ / (4 m l² cos²φ)
    m, l = BOARD.mass, BOARD.half_wheelbase
    np.testing.assert_allclose(sb.locked_velocity(BOARD, phi, p),
                               p[:, None] * sb.e1(BOARD, phi) / (4 * m * l * l * np.cos(phi)[:, None] ** 2),
                               rtol=1e-13, atol=1e-14)
    # rotor rate back from (p, π_ψ)
    pi = BOARD.rotor_inertia * (psid + xi[:, 0])
    np.testing.assert_allclose(sb.rotor_rate_from_momenta(BOARD, phi, p, pi), psid, rtol=1e-12, atol=1e-12)


def test_momentum_is_angular_momentum_about_the_icr_times_sin_2phi():
    rng = np.random.default_rng(3)
    phi, psid, p = rng.uniform(0.05, 1.3, 20), rng.normal(size=20), rng.normal(size=20)
    xi = sb.body_velocity(BOARD, phi, psid, p)
    mu = sb.body_momentum(BOARD, psid, xi)
    c_y = -BOARD.half_wheelbase / np.tan(phi)
    L_icr = mu[:, 0] + c_y * mu[:, 1]  # μ_ω − (c × P) with c = (0, c_y)
    np.testing.assert_allclose(p, np.sin(2 * phi) * L_icr, rtol=1e-12, atol=1e-14)


def test_reduced_lagrangian_gradient_by_finite_differences():
    """μ = ∂ℓ/∂ξ and ∂ℓ/∂u_ψ = I(u_ψ + ω), from ℓ = ½ q̇ᵀ𝕄q̇ at θ = 0 by central differences."""
    rng = np.random.default_rng(4)
    M = mass_matrix(BOARD)
    ell = lambda u, xi: 0.5 * np.array([u[0], u[1], *xi]) @ M @ np.array([u[0], u[1], *xi])  # noqa: E731
    for _ in range(5):
        u, xi = rng.normal(size=2), rng.normal(size=3)
        h = 1.0  # ℓ is quadratic: central differences are exact for any h, up to round-off
        g = np.array([(ell(u, xi + h * e) - ell(u, xi - h * e)) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(sb.body_momentum(BOARD, u[0], xi), g, rtol=1e-10, atol=1e-11)
        gu = (ell(u + [h, 0], xi) - ell(u - [h, 0], xi)) / (2 * h)
        np.testing.assert_allclose(BOARD.rotor_inertia * (u[0] + xi[0]), gu, rtol=1e-10, atol=1e-11)
        np.testing.assert_allclose(sb.kinetic_energy(BOARD, u[0], u[1], xi), ell(u, xi), rtol=1e-14)


def test_momentum_equation_by_finite_differences_along_the_full_lda_solution():
    """ṗ = 2 I cos²φ φ̇ ψ̇ − tan φ φ̇ p, with p = ⟨μ, e₁⟩ differentiated numerically along q(t)."""
    rng = np.random.default_rng(5)
    s0 = random_state(rng)
    z0 = lda_from_state(BOARD, s0)
    _, sols = lda_solve(BOARD, z0, [7.0], [0.04], 0.5, dense=True)
    sol = sols[0]

    def p_of(t):
        z = sol.sol(t)
        return float(sb.nonholonomic_momentum(BOARD, z[1], z[5], body_from_lda(z)))

    for t in (0.1, 0.25, 0.4):
        h = 1e-4
        fd = (p_of(t + h) - p_of(t - h)) / (2 * h)
        z = sol.sol(t)
        phi, psid, phid = z[1], z[5], z[6]
        pdot = 2 * BOARD.rotor_inertia * np.cos(phi) ** 2 * phid * psid - np.tan(phi) * phid * p_of(t)
        assert abs(fd - pdot) < 1e-6 * (1 + abs(pdot)), (fd, pdot)


def test_reduced_equations_match_lagrange_dalembert_with_multipliers():
    rng = np.random.default_rng(6)
    h, N = 0.05, 30
    for _ in range(2):
        s0 = random_state(rng)
        fpsi, fphi = 10 * rng.normal(size=N), 0.05 * rng.normal(size=N)
        red = sb.reference(BOARD, s0, fpsi, fphi, h)
        full, _ = lda_solve(BOARD, lda_from_state(BOARD, s0), fpsi, fphi, h)
        # pose and shape
        np.testing.assert_allclose(red[:, [3, 4, 0, 1, 2]], full[:, :5], atol=1e-9)
        # rates and the momentum
        np.testing.assert_allclose(red[:, 5:7], full[:, 5:7], atol=1e-9)
        p_full = [sb.nonholonomic_momentum(BOARD, z[1], z[5], body_from_lda(z)) for z in full]
        np.testing.assert_allclose(red[:, 7], p_full, atol=1e-8)
        # the full solution keeps its constraints (it only enforces their derivative)
        assert max(np.max(np.abs(constraint_matrix(BOARD, z[:5]) @ z[5:])) for z in full) < 1e-9


def test_reduced_rhs_power_balance():
    """dE/dt = τ_ψ ψ̇ + τ_φ φ̇ (constraint forces do no work), E by central differences along the rhs."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        s = random_state(rng)
        tp, tf = rng.normal(size=2) * [5, 0.1]

        def energy(st):
            xi = sb.body_velocity(BOARD, st[4], st[5], st[7])
            return float(sb.kinetic_energy(BOARD, st[5], st[6], xi))

        f = sb.reduced_rhs(BOARD, s, tp, tf)
        h = 1e-6
        fd = (energy(s + h * f) - energy(s - h * f)) / (2 * h)
        assert abs(fd - (tp * s[5] + tf * s[6])) < 1e-6 * (1 + abs(fd))


# ---------------------------------------------------------------------------------------------
# The discrete scheme against the general form of eqs. (16)–(17)
# ---------------------------------------------------------------------------------------------

def test_step_satisfies_the_general_discrete_equations():
    """Each step solves e₁(φ_k)ᵀ[dcay⁻¹(hξ_k)ᵀμ_k − P_k] = 0 with the generic se2.dcay_inv, updates the
    pose by g_k cay(hξ_k), the shape momenta per eq. (16), and hands on P_{k+1} = e₁(φ_{k+1})ᵀdcay⁻¹(−hξ_k)ᵀμ_k."""
    rng = np.random.default_rng(8)
    b = BOARD
    for alpha in (0.0, 0.5, 0.3, 1.0):
        node = sb.node_from_state(b, random_state(rng))
        h, fp, ff = 0.07, 6.0 * rng.normal(), 0.1 * rng.normal()
        r = sb.step(b, node, fp, ff, h, alpha)
        nxt, xi, upsi, uphi = r["node"], r["xi"], r["rotor_rate"], r["wheel_rate"]
        assert r["converged"]
        th, x, y, psi, phi, P, pi_psi, pi_phi = node
        phia = phi + alpha * h * uphi
        # discrete constraint: ξ_k in the distribution at r_{k+α}
        assert np.max(np.abs(sb.constraint_forms(b, phia) @ xi)) < 1e-13 * (1 + np.abs(xi).max())
        mu = sb.body_momentum(b, upsi, xi)
        lhs = sb.e1(b, phi) @ (se2.dcay_inv(h * xi).T @ mu)
        assert abs(lhs - P) < 1e-12 * (1 + abs(P))
        P_next = sb.e1(b, nxt[4]) @ (se2.dcay_inv(-h * xi).T @ mu)
        assert abs(P_next - nxt[5]) < 1e-12 * (1 + abs(P_next))
        np.testing.assert_allclose(sb.discrete_momentum_terms(b, phi, phia, r["s"], pi_psi + h * (1 - alpha) * fp, h),
                                   lhs, rtol=1e-13, atol=1e-13)
        # pose: g_{k+1} = g_k cay(h ξ_k)
        g = se2.from_pose([th, x, y]) @ se2.cay(h * xi)
        np.testing.assert_allclose(se2.from_pose(nxt[:3]), g, atol=1e-14)
        # shape: r_{k+1} = r_k + h u_k, the momenta per eq. (16) with the discrete Legendre transforms
        np.testing.assert_allclose(nxt[3:5], [psi + h * upsi, phi + h * uphi], atol=1e-15)
        np.testing.assert_allclose(b.rotor_inertia * (upsi + xi[0]), pi_psi + h * (1 - alpha) * fp, rtol=1e-13)
        np.testing.assert_allclose(2 * b.wheel_inertia * uphi, pi_phi + h * (1 - alpha) * ff, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(nxt[6:], [pi_psi + h * fp, pi_phi + h * ff], rtol=1e-13, atol=1e-15)


def test_scalar_path_matches_batched_path():
    rng = np.random.default_rng(9)
    N, h = 150, 0.02
    states = np.array([random_state(rng) for _ in range(4)])
    fpsi, fphi = 8 * rng.normal(size=(N, 4)), 0.05 * rng.normal(size=(N, 4))
    batched, its = sb.integrate(BOARD, states, fpsi, fphi, h, 0.4)
    assert its.shape == (N, 4)
    for j in range(4):
        st = sb.SnakeboardState(*states[j])
        tr = sb.simulate(BOARD, st, {"rotor_torque": fpsi[:, j], "steering_torque": fphi[:, j]}, h, alpha=0.4)
        got = np.column_stack([tr.heading, tr.position[:, 0], tr.position[:, 1], tr.shape["rotor_angle"],
                               tr.shape["wheel_angle"], tr.series["rotor_rate"], tr.series["wheel_rate"],
                               tr.series["nonholonomic_momentum"]])
        np.testing.assert_allclose(got, batched[:, j], rtol=1e-11, atol=1e-11)


def test_agrees_with_the_general_nonholonomic_integrator():
    """Cross-check against core.integrators.nonholonomic (eqs. 16–17 for any system, Newton with a
    finite-difference Jacobian), given the snakeboard's ℓ, A(r) and e₁ — written by another module."""
    nh = pytest.importorskip("core.integrators.nonholonomic")
    b = BOARD
    m, l, I, J = b.mass, b.half_wheelbase, b.rotor_inertia, b.wheel_inertia
    M = np.array([[m * l * l, 0, 0, I, 0], [0, m, 0, 0, 0], [0, 0, m, 0, 0], [I, 0, 0, I, 0], [0, 0, 0, 0, 2 * J]])
    system = nh.NonholonomicSystem(group=nh.SE2_CAY, shape_dim=2, lagrangian=nh.QuadraticLagrangian(M, 3),
                                   connection=lambda r: sb.connection(b, r[..., 1]),
                                   momentum_directions=lambda r: sb.e1(b, r[..., 1])[..., None])
    s0 = np.array([0.3, 0.5, -0.2, 0.1, 0.3, 1.0, 0.2, -20.0])
    N, h = 100, 0.01
    t = np.arange(N) * h
    fpsi, fphi = 30 * np.cos(2 * np.pi * t), 0.05 * np.sin(2 * np.pi * t + 0.3)
    c0 = np.array([s0[7] / (4 * m * l * l * np.cos(s0[4]) ** 2)])  # ξ(0) = c0 e₁ − A u
    for alpha in (0.5, 0.3):
        start = nh.initial_state(system, se2.from_pose(s0[:3]), s0[3:5], s0[5:7], c0)
        res = nh.integrate(system, start, h, N, alpha, force=np.stack([fpsi, fphi], -1), u0=s0[5:7], c0=c0)
        tr = sb.simulate(b, sb.SnakeboardState(*s0), {"rotor_torque": fpsi, "steering_torque": fphi}, h, alpha=alpha)
        pose = se2.to_pose(res.g)
        np.testing.assert_allclose(pose[:, 1:], tr.position[:, :2], atol=1e-12)
        np.testing.assert_allclose(np.unwrap(pose[:, 0]), tr.heading, atol=1e-12)
        np.testing.assert_allclose(res.r, np.column_stack([tr.shape["rotor_angle"], tr.shape["wheel_angle"]]),
                                   atol=1e-12)
        P = np.einsum("ki,ki->k", sb.e1(b, res.r[:, 1]), res.nu)
        np.testing.assert_allclose(P, tr.series["nonholonomic_momentum"], atol=1e-11)


# ---------------------------------------------------------------------------------------------
# Acceptance
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rotor_rate", [0.0, 1.5])
def test_locked_wheels_conserve_icr_momentum_and_trace_a_circle(rotor_rate):
    b, phi0, h, N = BOARD, 0.4, 0.01, 20_000
    st = sb.SnakeboardState.with_speed(b, 2.0, heading=0.7, x=1.0, y=-2.0, rotor_angle=0.2,
                                       wheel_angle=phi0, rotor_rate=rotor_rate)
    tr = sb.simulate(b, st, {}, h, steps=N)
    assert not tr.stats["blew_up"]
    phi = tr.shape["wheel_angle"]
    assert np.all(phi == phi0)
    # nonholonomic momentum and the angular momentum about the ICR (rider's torso included)
    p = tr.series["nonholonomic_momentum"]
    assert np.max(np.abs(p - p[0])) <= 50 * EPS * abs(p[0])
    xi = np.column_stack([tr.angular_velocity[:, 2], tr.linear_velocity[:, :2]])
    mu = sb.body_momentum(b, tr.series["rotor_rate"], xi)
    L = mu[:, 0] - b.half_wheelbase / np.tan(phi0) * mu[:, 1]
    assert np.max(np.abs(L - L[0])) <= 50 * EPS * np.max(np.abs(mu))
    # rotor spins at a constant rate, energy constant
    assert np.ptp(tr.series["rotor_rate"]) <= 50 * EPS * (1 + abs(rotor_rate))
    assert np.ptp(tr.series["energy"]) <= 100 * EPS * tr.series["energy"][0]
    # the circle: centre x0 + R(θ0)(0, −l/tan φ), radius l/tan φ
    R = b.half_wheelbase / np.tan(phi0)
    th = tr.heading
    centres = tr.position[:, :2] + R * np.column_stack([np.sin(th), -np.cos(th)])
    c0 = np.array([1.0, -2.0]) + R * np.array([np.sin(0.7), -np.cos(0.7)])
    drift = N * EPS * (1 + np.max(np.abs(tr.position)))  # accumulated round-off of N pose updates
    assert np.max(np.abs(centres - c0)) < drift
    radius = np.linalg.norm(tr.position[:, :2] - c0, axis=1)
    assert np.max(np.abs(radius - R)) < drift
    # it really goes round (many laps), by the same angle every step, which matches ω to O(h²)
    assert abs(th[-1] - th[0]) > 4 * np.pi
    dth = np.diff(th)
    assert np.ptp(dth) < 1e-13
    w = tr.angular_velocity[0, 2]
    assert abs(dth[0] / h - w) < (h * w) ** 2 * abs(w) / 2


def test_discrete_constraint_holds_to_round_off_over_1e5_steps():
    """ξ_k = cay⁻¹(g_k⁻¹ g_{k+1})/h, rebuilt from the output poses, lies in the constraint
    distribution at φ_{k+α} = φ_k + α(φ_{k+1} − φ_k)."""
    b, h, N, alpha = BOARD, 0.01, 100_000, 0.5
    t = np.arange(N) * h
    controls = {"rotor_torque": 6 * np.sin(2 * np.pi * 0.37 * t) + 4 * np.sin(2 * np.pi * 1.3 * t + 1),
                "steering_torque": 0.08 * np.sin(2 * np.pi * 0.53 * t) + 0.05 * np.sin(2 * np.pi * 1.7 * t)}
    st = sb.SnakeboardState.with_speed(b, 1.0, wheel_angle=0.2)
    tr = sb.simulate(b, st, controls, h, alpha=alpha)
    assert not tr.stats["blew_up"] and tr.stats["steps_done"] == N
    assert tr.stats["newton_iterations_mean"] <= 3
    assert tr.stats["wall_time_s"] < 10
    g = se2.from_pose(np.column_stack([tr.heading, tr.position[:, :2]]))
    rel = np.linalg.inv(g[:-1]) @ g[1:]
    xi = se2.cay_inv(rel) / h
    phi = tr.shape["wheel_angle"]
    phia = phi[:-1] + alpha * (phi[1:] - phi[:-1])
    res = np.einsum("kij,kj->ki", sb.constraint_forms(b, phia), xi)
    # round-off of position differences: ε |x| / h per step
    scale = EPS * (1 + np.max(np.abs(tr.position))) / h
    assert np.max(np.abs(res)) < 50 * scale, (np.max(np.abs(res)), scale)
    assert np.max(np.abs(tr.position)) > 1.0  # it did move


def test_convergence_order_two_against_the_continuous_reference():
    b = BOARD
    s0 = np.array([0.3, 0.5, -0.2, 0.1, 0.3, 1.0, 0.2, -20.0])
    T, errs = 2.0, []
    for N in (50, 100, 200, 400):
        h = T / N
        t = np.arange(N) * h
        fpsi, fphi = 30 * np.cos(2 * np.pi * t), 0.05 * np.sin(2 * np.pi * t + 0.3)
        ref = sb.reference(b, s0, fpsi, fphi, h)
        tr = sb.simulate(b, sb.SnakeboardState(*s0), {"rotor_torque": fpsi, "steering_torque": fphi}, h)
        got = np.column_stack([tr.heading, tr.position[:, :2], tr.shape["rotor_angle"], tr.series["nonholonomic_momentum"]])
        errs.append(np.max(np.abs(got - ref[:, [0, 1, 2, 3, 7]]), axis=0))
    errs = np.array(errs)
    orders = np.log2(errs[:-1] / errs[1:])
    assert np.all(orders > 1.9) and np.all(orders < 2.2), orders
    assert errs[-1].max() < 1e-4


def test_first_order_off_the_midpoint():
    """α = 0 and α = 1 are first order (documented); the wheel angle is exact for α = ½ only."""
    b = BOARD
    s0 = np.array([0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.2, -20.0])
    for alpha in (0.0, 1.0):
        errs = []
        for N in (100, 200):
            h = 2.0 / N
            t = np.arange(N) * h
            fpsi, fphi = 30 * np.cos(2 * np.pi * t), 0.05 * np.sin(2 * np.pi * t)
            ref = sb.reference(b, s0, fpsi, fphi, h)
            X, _ = sb.integrate(b, s0, fpsi, fphi, h, alpha)
            errs.append(np.max(np.abs(X[:, :3] - ref[:, :3])))
        assert 0.8 < math.log2(errs[0] / errs[1]) < 1.3


def gait_controls(b, steps, h, wheel_amp=0.5, rotor_amp=-20.0, freq=1.0):
    t = (np.arange(steps) + 0.5) * h
    w = 2 * np.pi * freq
    return {"rotor_torque": rotor_amp * np.cos(w * t),
            "steering_torque": 2 * b.wheel_inertia * wheel_amp * w * w * np.cos(w * t)}


def test_gait_drives_the_board_forward_from_rest():
    b, h, N = BOARD, 0.01, 1000
    st = sb.SnakeboardState(wheel_angle=-0.5, rotor_angle=0.49)  # everything at rest
    tr = sb.simulate(b, st, gait_controls(b, N, h), h)
    assert not tr.stats["blew_up"] and tr.stats["wheel_stops"] == 0
    assert np.max(np.abs(tr.shape["wheel_angle"])) <= 0.5 + 1e-9
    forward = tr.position[-1, 0]  # initial heading is +x
    assert forward > 8.0, forward
    assert abs(tr.position[-1, 1]) < 0.1 * forward
    v = tr.linear_velocity[:, 0]
    first, last = np.mean(v[:100]), np.mean(v[-100:])  # mean speed over the first and last cycle
    assert last > 2.0 and last > 5 * first
    # speed grows cycle after cycle
    cycles = v[: N].reshape(10, 100).mean(axis=1)
    assert np.all(np.diff(cycles) > 0)
    # the opposite rotor phase drives backward
    back = sb.simulate(b, st, gait_controls(b, N, h, rotor_amp=20.0), h)
    assert back.position[-1, 0] < -8.0
    # with the wheels straight and still, twisting alone goes nowhere
    still = sb.simulate(b, sb.SnakeboardState(), {"rotor_torque": gait_controls(b, N, h)["rotor_torque"]}, h)
    assert np.max(np.abs(still.position)) < 1e-12


def test_wheel_stop_holds_the_limit():
    b, h, N = BOARD, 0.01, 300
    tr = sb.simulate(b, sb.SnakeboardState.with_speed(b, 1.0), {"steering_torque": np.full(N, 1.0)}, h)
    phi = tr.shape["wheel_angle"]
    assert np.max(phi) == b.max_wheel_angle and np.min(phi) >= 0
    assert tr.stats["wheel_stops"] > 100
    # once stopped, the board moves on the circle of the limit angle (momentum constant)
    stop = int(np.argmax(phi == b.max_wheel_angle)) + 2
    p = tr.series["nonholonomic_momentum"][stop:]
    assert np.ptp(p) < 1e-12 * (1 + abs(p[0]))


def test_blow_up_is_reported_and_truncated():
    """A wheel swing of 1.67 rad in one step (α = 1) makes e₁(φ_k) ⊥ the step's momentum
    direction: the momentum equation loses its s-dependence, Newton fails, the run stops."""
    b, h, phi0 = BOARD, 0.01, 1.0
    m, l, I = b.mass, b.half_wheelbase, b.rotor_inertia
    from scipy.optimize import brentq
    slope = lambda pa: (np.sin(2 * phi0) * (m * l * l - I) * np.sin(2 * pa)  # noqa: E731
                        + 4 * m * l * l * np.cos(phi0) ** 2 * np.cos(pa) ** 2)
    bad = brentq(slope, -b.max_wheel_angle, 0.0)
    tr = sb.simulate(b, sb.SnakeboardState(wheel_angle=phi0, wheel_rate=(bad - phi0) / h, momentum=5.0), {}, h,
                     steps=10, alpha=1.0)
    assert tr.stats["blew_up"] and tr.stats["steps_done"] == 0
    assert len(tr.time) == 1 and tr.controls["rotor_torque"].shape == (0,)
    json.loads(tr.to_json())


def test_trajectory_fields():
    b, h, N = BOARD, 0.02, 40
    tr = sb.simulate(b, sb.SnakeboardState(wheel_angle=-0.5), gait_controls(b, N, h), h)
    n = N + 1
    assert tr.vehicle == "snakeboard"
    assert tr.position.shape == (n, 3) and np.all(tr.position[:, 2] == 0)
    assert tr.orientation.shape == (n, 4)
    np.testing.assert_allclose(np.linalg.norm(tr.orientation, axis=1), 1, atol=1e-15)
    R = tr.rotation_matrices
    np.testing.assert_allclose(np.arctan2(R[:, 1, 0], R[:, 0, 0]), np.arctan2(np.sin(tr.heading), np.cos(tr.heading)),
                               atol=1e-14)
    assert tr.angular_velocity.shape == (n, 3) and np.all(tr.angular_velocity[:, :2] == 0)
    assert tr.linear_velocity.shape == (n, 3) and np.all(tr.linear_velocity[:, 2] == 0)
    assert set(tr.shape) == {"rotor_angle", "wheel_angle"} and all(v.shape == (n,) for v in tr.shape.values())
    assert set(tr.controls) == {"rotor_torque", "steering_torque"} and all(v.shape == (N,) for v in tr.controls.values())
    for key in ("wall_time_s", "newton_iterations_mean", "blew_up"):
        assert key in tr.stats
    assert tr.heading.shape == (n,)
    json.loads(tr.to_json())


def test_parameter_validation_names_the_key():
    with pytest.raises(ScenarioError, match=r"\[vehicle\] rotor_inertia"):
        sb.Snakeboard(mass=10.0, half_wheelbase=0.3, rotor_inertia=0.9)  # m l² = 0.9
    with pytest.raises(ScenarioError, match=r"\[vehicle\] max_wheel_angle"):
        sb.Snakeboard(max_wheel_angle=math.pi / 2)
    with pytest.raises(ScenarioError, match=r"\[vehicle\] mass"):
        sb.Snakeboard(mass=-1.0)
    with pytest.raises(ScenarioError, match=r"\[vehicle\] wheel_inertia"):
        sb.Snakeboard(wheel_inertia=float("nan"))
    with pytest.raises(ScenarioError, match=r"\[initial\] wheel_angle"):
        sb.simulate(BOARD, sb.SnakeboardState(wheel_angle=1.2), {}, 0.01, steps=3)


# ---------------------------------------------------------------------------------------------
# Scenario / command line
# ---------------------------------------------------------------------------------------------

_run = run_simulate


SAMPLE = (ROOT / "samples" / "snakeboard_twist.toml").read_text()


def test_sample_drives_forward_through_the_cli(tmp_path, capsys):
    code, err, out = _run(tmp_path, SAMPLE, capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    assert d["vehicle"] == "snakeboard"
    assert np.shape(d["position"]) == (1001, 3)
    assert d["position"][-1][0] > 8.0
    assert max(abs(a) for a in d["shape"]["wheel_angle"]) <= 0.5 + 1e-6
    assert d["stats"]["blew_up"] is False and d["stats"]["wheel_stops"] == 0


def test_scenario_reader_matches_direct_call(tmp_path, capsys):
    text = """
[vehicle]
type = "snakeboard"
mass = 40.0
half_wheelbase = 0.25
rotor_inertia = 0.8
wheel_inertia = 0.04
[integrator]
dt = 0.02
steps = 20
alpha = 0.3
[initial]
position = [1.0, 2.0]
heading = 0.5
wheel_angle = 0.2
rotor_rate = 0.3
wheel_rate = -0.1
momentum = -5.0
[controls.rotor_torque]
values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
"""
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    b = sb.Snakeboard(mass=40.0, half_wheelbase=0.25, rotor_inertia=0.8, wheel_inertia=0.04)
    st = sb.SnakeboardState(heading=0.5, x=1.0, y=2.0, wheel_angle=0.2, rotor_rate=0.3, wheel_rate=-0.1, momentum=-5.0)
    tr = sb.simulate(b, st, {"rotor_torque": np.tile(np.arange(1.0, 11.0), 2)}, 0.02, 20, alpha=0.3)
    np.testing.assert_allclose(d["position"], tr.position, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(d["nonholonomic_momentum"], tr.series["nonholonomic_momentum"])
    # speed instead of momentum
    code, err, out = _run(tmp_path, text.replace("momentum = -5.0", "speed = 1.5"), capsys)
    assert code == 0, err
    assert abs(json.loads(out.read_text())["linear_velocity"][0][0] - 1.5) < 1e-14


BAD = [
    ("mass = 60.0", "mass = -60.0", "[vehicle] mass"),
    ("mass = 60.0", 'mass = "heavy"', "[vehicle] mass"),
    ("half_wheelbase = 0.3", "half_wheelbase = 0.0", "[vehicle] half_wheelbase"),
    ("rotor_inertia = 1.0", "rotor_inertia = 6.0", "[vehicle] rotor_inertia"),
    ("wheel_inertia = 0.05", "wheel_inertia = -0.05", "[vehicle] wheel_inertia"),
    ("max_wheel_angle = 1.0472", "max_wheel_angle = 1.6", "[vehicle] max_wheel_angle"),
    ("max_rotor_torque = 80.0", "max_rotor_torque = 10.0", "[controls.rotor_torque]"),
    ("max_steering_torque = 20.0", "max_steering_torque = 1.0", "[controls.steering_torque]"),
    ("max_rotor_torque = 80.0", "max_rotor_torque = 0.0", "[vehicle] max_rotor_torque"),
    ('type = "snakeboard"', 'type = "snakeboard"\nwheel_base = 1.0', "[vehicle] wheel_base"),
    ("dt = 0.01", "dt = 0.0", "[integrator] dt"),
    ("steps = 1000", "steps = 10.5", "[integrator] steps"),
    ("alpha = 0.5", "alpha = 1.5", "[integrator] alpha"),
    ("alpha = 0.5", 'alpha = 0.5\nmethod = "rk4"', "[integrator] method"),
    ("position = [0.0, 0.0]", "position = [0.0, 0.0, 0.0]", "[initial] position"),
    ("heading = 0.0", "heading = nan", "[initial] heading"),
    ("wheel_angle = -0.5", "wheel_angle = -1.2", "[initial] wheel_angle"),
    ("speed = 0.0", "speed = 0.0\nmomentum = 1.0", "[initial] momentum"),
    ("speed = 0.0", "sped = 0.0", "[initial] sped"),
    ("[controls.rotor_torque]", "[controls.rotor_force]", "[controls.rotor_force]"),
    ("frequency = [1.0]\nphase = [1.6022122533307945]\n\n[controls.steering_torque]",
     "frequency = [1.0, 2.0]\nphase = [1.6022122533307945]\n\n[controls.steering_torque]",
     "[controls.rotor_torque] amplitude"),
    ("[integrator]", "[integrater]\n[integrator]", "[integrater]"),
]


@pytest.mark.parametrize("old,new,key", BAD, ids=[b[2] + ":" + b[1].split("\n")[-1][:20] for b in BAD])
def test_bad_input_exits_2_naming_the_key(tmp_path, capsys, old, new, key):
    assert old in SAMPLE, old
    code, err, out = _run(tmp_path, SAMPLE.replace(old, new, 1), capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert key in lines[0], lines[0]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "scenario.toml"]


def test_missing_integrator_table(tmp_path, capsys):
    text = SAMPLE.split("[integrator]")[0] + "[initial]" + SAMPLE.split("[initial]")[1]
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 2 and "[integrator]" in err and not out.exists()
