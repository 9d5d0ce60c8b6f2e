"""The general nonholonomic integrator, eqs. (16)–(17): C maps, conservation, constraints, order.

Test systems (no shared code with the integrator for the references):

* a planar body with an internal rotor, unconstrained (A = 0, e = the full basis, s = 1):
  spatial momentum and rotor momentum are conserved by the continuous flow, and must be conserved
  to round-off by the discrete one for the consistent (τ, C) pairings;
* the same body on a Chaplygin-sled knife edge at body point (a, 0) (b = 2, s = 1): the lateral
  velocity of the contact point vanishes, ξ³ + a ξ¹ = 0, checked at every step; the order of
  convergence is measured against a tight solve_ivp solution of the Lagrange–d'Alembert equations;
* a free rigid body on SE(3) (s = 0, b = 6): momentum conservation with the se3 maps plugged in.

The car specialisation is tested in test_car.py.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.integrators import nonholonomic as nh
from core.lie import se2, se3

J_BODY, MASS, I_ROTOR, SLED_A = 2.0, 3.0, 0.5, 0.4


def _rotor_lagrangian() -> nh.QuadraticLagrangian:
    # ℓ = ½(J ω² + m |v|²) + ½ I_r (u + ω)² in [ξ; u] = (ω, v¹, v², u)
    M = np.diag([J_BODY + I_ROTOR, MASS, MASS, I_ROTOR])
    M[0, 3] = M[3, 0] = I_ROTOR
    return nh.QuadraticLagrangian(M, n=3)


def _sled_E() -> np.ndarray:
    return np.array([[1.0, 0.0], [0.0, 1.0], [-SLED_A, 0.0]])


def _free_rotor(group: nh.GroupMaps, force=None) -> nh.NonholonomicSystem:
    return nh.NonholonomicSystem(group=group, shape_dim=1, lagrangian=_rotor_lagrangian(),
                                 momentum_directions=lambda r: np.broadcast_to(np.eye(3), np.shape(r)[:-1] + (3, 3)),
                                 external_force=force)


def _sled(group: nh.GroupMaps) -> nh.NonholonomicSystem:
    E = _sled_E()
    return nh.NonholonomicSystem(group=group, shape_dim=1, lagrangian=_rotor_lagrangian(),
                                 momentum_directions=lambda r: np.broadcast_to(E, np.shape(r)[:-1] + E.shape))


# --------------------------------------------------------------------------------------------
# C maps
# --------------------------------------------------------------------------------------------
def _dexp_fd(v: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Right-trivialised dexp_v by central differences of se2.exp: δ ↦ vee((D exp(v)·δ) exp(v)⁻¹)."""
    ginv = np.linalg.inv(se2.exp(v))
    cols = []
    for j in range(3):
        d = np.zeros(3)
        d[j] = eps
        D = (se2.exp(v + d) - se2.exp(v - d)) / (2 * eps)
        cols.append(se2.vee(D @ ginv))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("w", [0.0, 1e-9, 1e-3, 0.1, 0.2499, 0.25, 0.26, 1.0, 2.5, 3.1])
def test_se2_dexp_inv_is_the_inverse_of_dexp(w):
    v = np.array([w, 0.7, -1.3])
    assert np.allclose(se2.dexp_inv(v) @ _dexp_fd(v), np.eye(3), atol=1e-8)
    # and it differs from the truncated series by O(|v|^4) only
    small = v * 1e-2
    assert np.allclose(se2.dexp_inv(small), se2.dexp_inv_series(small), atol=1e-9)


@pytest.mark.parametrize("group", [nh.SE2_EXP, nh.SE2_CAY, nh.SE3_EXP, nh.SE3_CAY], ids=lambda g: g.name)
def test_discrete_noether_identity_holds_for_every_offered_pairing(group):
    # C(−ξ)ᵀ = Ad*_{τ(ξ)} C(ξ)ᵀ  ⟺  C(−ξ) = C(ξ) Ad_{τ(ξ)}
    rng = np.random.default_rng(3)
    xi = rng.normal(size=(20, group.dim))
    lhs = group.C(-xi)
    rhs = group.C(xi) @ group.Ad(group.tau(xi))
    assert np.max(np.abs(lhs - rhs)) < 1e-13


def test_the_trapezoidal_pairing_is_not_momentum_consistent():
    # I − ½ ad with τ = exp fails the identity: it is offered for the car, where b = 0 and no momentum is conserved.
    xi = np.array([0.8, 0.3, -0.5])
    g = nh.SE2_EXP_LN
    assert np.max(np.abs(g.C(-xi) - g.C(xi) @ g.Ad(g.tau(xi)))) > 1e-3


# --------------------------------------------------------------------------------------------
# Unconstrained body with a rotor: conservation to round-off.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("group", [nh.SE2_EXP, nh.SE2_CAY], ids=lambda g: g.name)
@pytest.mark.parametrize("alpha", [0.5, 0.0, 1.0])
def test_spatial_and_rotor_momentum_are_conserved(group, alpha):
    system = _free_rotor(group)
    g0 = se2.from_pose(np.array([0.3, 1.0, -2.0]))
    u0 = np.array([4.0])
    c0 = np.array([1.5, 2.0, -0.7])                      # ξ(0) = c0 (e = identity)
    state = nh.initial_state(system, g0, np.zeros(1), u0, c0)
    res = nh.integrate(system, state, 0.1, 200, alpha, u0=u0, c0=c0)
    assert res.converged
    P = nh.spatial_momentum(group, res.g, res.nu)
    scale = np.max(np.abs(P[0]))
    assert np.max(np.abs(P - P[0])) < 1e-12 * scale * 10
    assert np.max(np.abs(res.pi - res.pi[0])) < 1e-12 * abs(res.pi[0, 0])
    assert res.iterations.max() <= 6
    # the pose stays a rigid motion
    R = res.g[:, :2, :2]
    assert np.max(np.abs(R @ np.swapaxes(R, -1, -2) - np.eye(2))) < 1e-13


def test_external_force_enters_the_momentum_balance_exactly():
    # Discrete momentum balance: Ad*_{g_{k+1}⁻¹} ν_{k+1} − Ad*_{g_k⁻¹} ν_k = h Ad*_{g_{k+1}⁻¹} f_ext(g_{k+1}, ξ_k)
    def force(g, xi):
        return np.stack([-0.3 * xi[..., 0], 0.5 + 0 * xi[..., 0], -0.2 * xi[..., 2]], axis=-1)

    group = nh.SE2_CAY
    system = _free_rotor(group, force)
    h = 0.05
    g0 = se2.from_pose(np.array([0.0, 0.0, 0.0]))
    state = nh.initial_state(system, g0, np.zeros(1), np.array([1.0]), np.array([1.0, 0.5, 0.2]), dt=h)
    res = nh.integrate(system, state, h, 100, 0.5, u0=np.array([1.0]), c0=np.array([1.0, 0.5, 0.2]))
    P = nh.spatial_momentum(group, res.g, res.nu)
    impulse = h * nh.spatial_momentum(group, res.g[1:], force(res.g[1:], res.xi))
    assert np.max(np.abs(np.diff(P, axis=0) - impulse)) < 1e-12
    assert np.max(np.abs(impulse)) > 1e-3


# --------------------------------------------------------------------------------------------
# Chaplygin sled with a rotor: constraint at every step, order against the continuous solution.
# --------------------------------------------------------------------------------------------
def _sled_reference(c0, u0, torque, T, n_out):
    """Lagrange–d'Alembert: Eᵀ(μ̇ − ad_ξᵀ μ) = 0, d/dt ∂ℓ/∂u = f, ξ = E c; μ = M_ξξ ξ + M_ξu u."""
    M = np.diag([J_BODY + I_ROTOR, MASS, MASS, I_ROTOR])
    M[0, 3] = M[3, 0] = I_ROTOR
    E = _sled_E()
    Mxx, Mxu, Muu = M[:3, :3], M[:3, 3:], M[3:, 3:]
    lhs = np.block([[E.T @ Mxx @ E, E.T @ Mxu], [Mxu.T @ E, Muu]])

    def f(t, y):
        th, c, u = y[0], y[3:5], y[6:7]
        xi = E @ c
        mu = Mxx @ xi + Mxu @ u
        adT = se2.ad(xi).T @ mu
        acc = np.linalg.solve(lhs, np.concatenate([E.T @ adT, [torque]]))
        ct, st = np.cos(th), np.sin(th)
        return np.concatenate([[xi[0], ct * xi[1] - st * xi[2], st * xi[1] + ct * xi[2]], acc[:2], u, acc[2:]])

    y0 = np.concatenate([[0.2, 0.0, 0.0], c0, [0.0], u0])
    t = np.linspace(0, T, n_out + 1)
    sol = solve_ivp(f, (0, T), y0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    return sol.y.T


def _sled_run(group, alpha, steps, T, c0, u0, torque):
    system = _sled(group)
    g0 = se2.from_pose(np.array([0.2, 0.0, 0.0]))
    state = nh.initial_state(system, g0, np.zeros(1), u0, c0)
    F = np.full((steps, 1), torque)
    return nh.integrate(system, state, T / steps, steps, alpha, force=F, u0=u0, c0=c0)


def test_sled_constraint_holds_at_every_step():
    res = _sled_run(nh.SE2_EXP, 0.5, 300, 6.0, np.array([1.2, 1.0]), np.array([3.0]), 0.4)
    assert res.converged
    steps = np.linalg.inv(res.g[:-1]) @ res.g[1:]
    d = se2.log(steps)                                   # h ξ_k, τ = exp
    lateral = d[:, 2] + SLED_A * d[:, 0]                  # contact point moves along the blade only
    assert np.max(np.abs(lateral)) < 1e-14
    assert np.max(np.abs(d[:, 0])) > 1e-2


@pytest.mark.parametrize("group,alpha,order", [(nh.SE2_EXP, 0.5, 2.0), (nh.SE2_CAY, 0.5, 2.0),
                                               (nh.SE2_EXP, 1.0, 1.0)], ids=["exp-half", "cay-half", "exp-one"])
def test_sled_converges_with_the_expected_order(group, alpha, order):
    T, c0, u0, torque = 4.0, np.array([1.2, 1.0]), np.array([3.0]), 0.4
    ref = _sled_reference(c0, u0, torque, T, 1)[-1]
    errs = []
    Ns = [40, 80, 160]
    for N in Ns:
        res = _sled_run(group, alpha, N, T, c0, u0, torque)
        pose = se2.to_pose(res.g[-1])
        e_th = abs(np.angle(np.exp(1j * (pose[0] - ref[0]))))
        errs.append(np.hypot(pose[1] - ref[1], pose[2] - ref[2]) + e_th + abs(res.r[-1, 0] - ref[5]))
    fitted = -np.polyfit(np.log(Ns), np.log(errs), 1)[0]
    assert abs(fitted - order) < 0.15, (errs, fitted)


# --------------------------------------------------------------------------------------------
# SE(3) plugs in.
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("group", [nh.SE3_EXP, nh.SE3_CAY], ids=lambda g: g.name)
def test_free_rigid_body_on_se3_conserves_spatial_momentum(group):
    inertia = np.diag([1.0, 2.0, 3.0, 5.0, 5.0, 5.0])
    system = nh.NonholonomicSystem(group=group, shape_dim=0, lagrangian=nh.QuadraticLagrangian(inertia, n=6),
                                   momentum_directions=lambda r: np.broadcast_to(np.eye(6), np.shape(r)[:-1] + (6, 6)))
    xi0 = np.array([0.2, 3.0, 0.3, 1.0, -0.5, 0.2])
    g0 = se3.make(np.eye(3), np.array([0.0, 1.0, 2.0]))
    state = nh.initial_state(system, g0, np.zeros(0), np.zeros(0), xi0)
    res = nh.integrate(system, state, 0.05, 200, 0.5, c0=xi0)
    P = nh.spatial_momentum(group, res.g, res.nu)
    assert np.max(np.abs(P - P[0])) < 1e-11 * np.max(np.abs(P[0]))
    # energy ½ ξᵀ𝕀ξ stays bounded near its initial value (no drift)
    energy = 0.5 * np.einsum("ki,ij,kj->k", res.xi, inertia, res.xi)
    assert np.max(np.abs(energy / energy[0] - 1)) < 0.05


def test_batched_steps_equal_single_steps():
    system = _sled(nh.SE2_EXP)
    rng = np.random.default_rng(7)
    g0 = se2.from_pose(rng.normal(size=(4, 3)))
    c0 = rng.normal(size=(4, 2))
    u0 = rng.normal(size=(4, 1))
    batched = nh.integrate(system, nh.initial_state(system, g0, np.zeros((4, 1)), u0, c0), 0.1, 20, 0.5,
                           force=np.full((20, 4, 1), 0.3), u0=u0, c0=c0)
    for i in range(4):
        single = nh.integrate(system, nh.initial_state(system, g0[i], np.zeros(1), u0[i], c0[i]), 0.1, 20, 0.5,
                              force=np.full((20, 1), 0.3), u0=u0[i], c0=c0[i])
        assert np.allclose(single.g, batched.g[:, i], atol=1e-12, rtol=0)
        assert np.allclose(single.u, batched.u[:, i], atol=1e-12, rtol=0)
