"""Articulated chain with a free base (Park & Chung 2005, §V): the recursive forward dynamics against
an independent Lagrangian formulation, conservation laws, the integrators' orders on the chain,
Park & Chung's drift tables (VI–VIII) in kind, SE(3) preservation and batching.

The independent formulation builds nothing from ``core.vehicles.chain`` except the parameters:
body poses by products of ``scipy.linalg.expm`` of 4×4 twists, body Jacobians by central
differences of those poses, the kinetic energy from centre-of-mass velocities
(T = Σ ½ m|v_c|² + ½ ωᵀJω), M(q) as its Hessian, and the Boltzmann–Hamel equations

    d/dt(∂T/∂V) − ad_Vᵀ ∂T/∂V = Q_V,    d/dt(∂T/∂q̇) − ∂T/∂q = Q_q

with ∂M/∂q by central differences and generalised forces from the power of every input.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from core.errors import ScenarioError
from core.integrators.common import GRAVITY
from core.integrators.euler_poincare import velocity_rate
from core.integrators.families import ORDERS
from core.integrators.lie_rk import run, tableau_step
from core.integrators.magnus import magnus_step_function
from core.lie import se3, so3
from core.vehicles.chain import CHAIN_METHODS, Chain, ChainState, Joint

LIE_METHODS = ("cg2", "cg3", "cg4", "cf2", "cf3", "cf4", "mk2", "mk3", "mk4")


def three_spheres(gravity: bool = False) -> Chain:
    """The benchmark geometry: three touching spheres (10 kg, r = 1 m) in a row, axes z then y."""
    J = [4.0, 4.0, 4.0]
    return Chain(10.0, J, [Joint(0, [1, 0, 0], [0, 0, 1], 10.0, J, [1, 0, 0]),
                           Joint(1, [2, 0, 0], [0, 1, 0], 10.0, J, [1, 0, 0])], gravity)


def random_tree(rng: np.random.Generator, gravity: bool = True) -> Chain:
    """Four joints as a tree (joints 2 and 3 both on body 1), random geometry and inertias."""
    parents = [0, 1, 1, 2]
    joints = []
    for p in parents:
        joints.append(Joint(p, rng.normal(size=3), rng.normal(size=3), rng.uniform(0.5, 3.0),
                            rng.uniform(0.2, 2.0, 3), rng.normal(size=3) * 0.7))
    return Chain(rng.uniform(1, 5), rng.uniform(0.5, 3.0, 3), joints, gravity)


def random_state(rng: np.random.Generator, n: int):
    R = so3.exp(rng.normal(size=3))
    x = rng.normal(size=3)
    y = np.concatenate([rng.normal(size=6), rng.normal(size=n), rng.normal(size=n)])
    return R, x, y


# --- the independent Lagrangian formulation ---------------------------------------------------------

def _twist_matrix(xi):
    return se3.hat(np.asarray(xi, dtype=float))


def poses(chain: Chain, g0: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
    """4×4 world pose of every body frame: g_i = g_p expm([[0, r], [0, 0]]) expm(q_i [[â, 0], [0, 0]])."""
    out = [g0]
    for i, j in enumerate(chain.joints):
        shift = expm(_twist_matrix(np.r_[0, 0, 0, j.position]))
        turn = expm(_twist_matrix(np.r_[np.asarray(j.axis) * q[i], 0, 0, 0]))
        out.append(out[j.parent] @ shift @ turn)
    return out


def ancestors(chain: Chain, i: int) -> list[int]:
    """Joints on the path from the base to body i (body i's own joint included)."""
    out = []
    while i > 0:
        out.append(i)
        i = chain.joints[i - 1].parent
    return out


def jacobians(chain: Chain, g0: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
    """Body Jacobians J_i (6 × (6+N)), V_i = J_i u with u = (V, q̇): product-of-exponentials form,
    base columns Ad_{g_i⁻¹ g_0}, joint j's column Ad_{g_i⁻¹ g_j} (a_j, 0) for j on the path to i."""
    n = chain.n_joints
    gs = poses(chain, g0, q)
    Js = []
    for i, g in enumerate(gs):
        J = np.zeros((6, 6 + n))
        gi_inv = np.linalg.inv(g)
        J[:, :6] = se3.Ad(gi_inv @ gs[0])
        for j in ancestors(chain, i):
            J[:, 6 + j - 1] = se3.Ad(gi_inv @ gs[j]) @ np.r_[chain.joints[j - 1].axis, 0, 0, 0]
        Js.append(J)
    return Js


def jacobians_fd(chain: Chain, g0: np.ndarray, q: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """The same Jacobians by central differences of the poses (checks :func:`jacobians`)."""
    n = chain.n_joints
    base = poses(chain, g0, q)
    Js = [np.zeros((6, 6 + n)) for _ in base]
    for col in range(6 + n):
        if col < 6:
            e = np.zeros(6)
            e[col] = eps
            plus = poses(chain, g0 @ expm(_twist_matrix(e)), q)
            minus = poses(chain, g0 @ expm(_twist_matrix(-e)), q)
        else:
            dq = np.zeros(n)
            dq[col - 6] = eps
            plus, minus = poses(chain, g0, q + dq), poses(chain, g0, q - dq)
        for i, g in enumerate(base):
            Js[i][:, col] = se3.vee(np.linalg.inv(g) @ (plus[i] - minus[i]) / (2 * eps))
    return Js


def body_parameters(chain: Chain):
    masses = [chain.base_mass] + [j.mass for j in chain.joints]
    inertias = [np.diag(chain.base_inertia)] + [np.diag(j.inertia) for j in chain.joints]
    coms = [np.zeros(3)] + [np.asarray(j.offset, dtype=float) for j in chain.joints]
    return masses, inertias, coms


def com_maps(chain: Chain, Js):
    """A_i u = centre-of-mass velocity (body frame) = v + ω × c, B_i u = ω."""
    _, _, coms = body_parameters(chain)
    A = [np.hstack([-so3.hat(c), np.eye(3)]) @ J for J, c in zip(Js, coms)]
    B = [J[:3] for J in Js]
    return A, B


def mass_matrix(chain: Chain, g0: np.ndarray, q: np.ndarray) -> np.ndarray:
    masses, inertias, _ = body_parameters(chain)
    A, B = com_maps(chain, jacobians(chain, g0, q))
    return sum(m * a.T @ a + b.T @ I @ b for m, I, a, b in zip(masses, inertias, A, B))


def lagrangian_accelerations(chain: Chain, R, x, y, tau=None, wrench=None) -> np.ndarray:
    n = chain.n_joints
    g0 = se3.make(R, x)
    q = y[6:6 + n]
    u = np.concatenate([y[:6], y[6 + n:]])
    M = mass_matrix(chain, g0, q)
    eps = 1e-5
    dM = [(mass_matrix(chain, g0, q + eps * e) - mass_matrix(chain, g0, q - eps * e)) / (2 * eps)
          for e in np.eye(n)]
    Mdot = sum(d * qd for d, qd in zip(dM, u[6:]))
    p = M @ u
    rhs = -Mdot @ u
    rhs[:6] += se3.ad(u[:6]).T @ p[:6]
    rhs[6:] += np.array([0.5 * u @ d @ u for d in dM])
    # generalised forces from the power of each input (COM wrenches, gravity, joint torques)
    masses, _, _ = body_parameters(chain)
    Js = jacobians(chain, g0, q)
    A, B = com_maps(chain, Js)
    Rs = [g[:3, :3] for g in poses(chain, g0, q)]
    for i in range(chain.n_bodies):
        force = np.zeros(3)
        torque = np.zeros(3)
        if chain.gravity:
            force = force + Rs[i].T @ np.array([0.0, 0.0, -GRAVITY * masses[i]])
        if wrench is not None:
            torque = torque + wrench[i, :3]
            force = force + wrench[i, 3:]
        rhs += A[i].T @ force + B[i].T @ torque
    if tau is not None:
        rhs[6:] += tau
    udot = np.linalg.solve(M, rhs)
    return np.concatenate([udot[:6], y[6 + n:], udot[6:]])


# --- tests -----------------------------------------------------------------------------------------

def test_reference_jacobians_match_finite_differences():
    rng = np.random.default_rng(4)
    chain = random_tree(rng)
    R, x, y = random_state(rng, chain.n_joints)
    g0 = se3.make(R, x)
    q = y[6:6 + chain.n_joints]
    for a, b in zip(jacobians(chain, g0, q), jacobians_fd(chain, g0, q)):
        np.testing.assert_allclose(a, b, atol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_articulated_body_algorithm_matches_lagrangian(seed):
    rng = np.random.default_rng(seed)
    chain = random_tree(rng, gravity=True)
    R, x, y = random_state(rng, chain.n_joints)
    tau = rng.normal(size=chain.n_joints)
    wrench = rng.normal(size=(chain.n_bodies, 6))
    aba = chain.forward_dynamics(R, x, y, tau, wrench)
    lag = lagrangian_accelerations(chain, R, x, y, tau, wrench)
    assert np.max(np.abs(aba - lag)) <= 1e-8 * (1 + np.max(np.abs(lag)))


def test_mass_matrix_energy_and_momentum_match_independent_kinetics():
    rng = np.random.default_rng(7)
    chain = random_tree(rng, gravity=False)
    R, x, y = random_state(rng, chain.n_joints)
    n = chain.n_joints
    u = np.concatenate([y[:6], y[6 + n:]])
    M = mass_matrix(chain, se3.make(R, x), y[6:6 + n])
    assert chain.energy(R, x, y) == pytest.approx(0.5 * u @ M @ u, rel=1e-8)
    # spatial momentum: Σ of each body's (R μ_ω + x × R μ_v, R μ_v) from COM quantities
    masses, inertias, coms = body_parameters(chain)
    g_all = poses(chain, se3.make(R, x), y[6:6 + n])
    Js = jacobians(chain, se3.make(R, x), y[6:6 + n])
    L = np.zeros(3)
    P = np.zeros(3)
    for m, I, c, g, J in zip(masses, inertias, coms, g_all, Js):
        V = J @ u
        Rb, xb = g[:3, :3], g[:3, 3]
        vc = Rb @ (V[3:] + np.cross(V[:3], c))
        xc = xb + Rb @ c
        P += m * vc
        L += np.cross(xc, m * vc) + Rb @ I @ V[:3]
    L_chain, P_chain = chain.momentum(R, x, y)
    np.testing.assert_allclose(P_chain, P, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(L_chain, L, rtol=1e-8, atol=1e-8)


def test_chain_without_joints_is_the_rigid_body():
    chain = Chain(2.0, [3.0, 2.0, 1.0])
    xi = np.array([0.3, -1.0, 0.5, 1.0, 0.2, -0.4])
    f = np.array([[0.1, 0.2, -0.3, 1.0, -2.0, 0.5]])
    out = chain.forward_dynamics(np.eye(3), np.zeros(3), xi, None, f)
    np.testing.assert_allclose(out, velocity_rate(np.array([3, 2, 1, 2, 2, 2.0]), xi, f[0]), atol=1e-14)


def test_batched_dynamics_equal_single_calls():
    rng = np.random.default_rng(3)
    chain = random_tree(rng, gravity=True)
    states = [random_state(rng, chain.n_joints) for _ in range(3)]
    R = np.stack([s[0] for s in states])
    x = np.stack([s[1] for s in states])
    y = np.stack([s[2] for s in states])
    tau = rng.normal(size=(3, chain.n_joints))
    batched = chain.forward_dynamics(R, x, y, tau)
    for b in range(3):
        np.testing.assert_allclose(batched[b], chain.forward_dynamics(R[b], x[b], y[b], tau[b]), atol=1e-13)


def test_free_chain_conserves_energy_and_momentum_under_the_reference():
    rng = np.random.default_rng(11)
    chain = random_tree(rng, gravity=False)
    n = chain.n_joints
    init = ChainState(R=so3.exp(rng.normal(size=3)), x=rng.normal(size=3), omega=rng.normal(size=3) * 0.5,
                      v=rng.normal(size=3) * 0.5, q=rng.normal(size=n), qd=rng.normal(size=n))
    ref = chain.reference(init, 0.5, 4)
    E, L, P = ref.series["energy"], ref.momentum_angular, ref.momentum_linear
    assert np.max(np.abs(E - E[0])) <= 1e-9 * abs(E[0])
    assert np.max(np.abs(L - L[0])) <= 1e-9 * (1 + np.abs(L[0]).max())
    assert np.max(np.abs(P - P[0])) <= 1e-9 * (1 + np.abs(P[0]).max())


def test_chain_under_gravity_conserves_energy_and_falls():
    chain = three_spheres(gravity=True)
    init = ChainState(R=so3.exp(np.array([0.2, 0.1, -0.3])), x=np.zeros(3), omega=np.array([0.1, 0.2, 0.0]),
                      v=np.zeros(3), q=np.array([0.3, -0.2]), qd=np.array([0.4, 0.4]))
    ref = chain.reference(init, 0.25, 4)
    E = ref.series["energy"]
    assert np.max(np.abs(E - E[0])) <= 1e-9 * abs(E).max()
    # total linear momentum: dP/dt = total weight
    expected = ref.momentum_linear[0] + np.outer(ref.time, [0.0, 0.0, -30.0 * GRAVITY])
    np.testing.assert_allclose(ref.momentum_linear, expected, atol=1e-8)
    # fourth-order methods follow it at h = 0.01
    for method in ("cf4", "rk4"):
        traj = chain.simulate(init, 0.01, 100, method)
        assert abs(traj.series["energy"][-1] - E[-1]) < 1e-7
        np.testing.assert_allclose(traj.momentum_linear[-1], ref.momentum_linear[-1], atol=1e-7)


def _order_errors(chain: Chain, init: ChainState, T: float, counts, method, torques_value, ref):
    errs = []
    for n in counts:
        tau = np.broadcast_to(torques_value, (n, chain.n_joints))
        traj = chain.simulate(init, T / n, n, method, torques=tau)
        R = traj.rotation_matrices[-1]
        Rr = ref.rotation_matrices[-1]
        e = (np.linalg.norm(so3.log(Rr.T @ R)) + np.linalg.norm(traj.position[-1] - ref.position[-1])
             + np.linalg.norm(traj.angular_velocity[-1] - ref.angular_velocity[-1])
             + np.linalg.norm(traj.linear_velocity[-1] - ref.linear_velocity[-1])
             + sum(abs(traj.shape[k][-1] - ref.shape[k][-1]) for k in traj.shape))
        errs.append(e)
    return np.array(errs)


@pytest.fixture(scope="module")
def order_setup():
    chain = three_spheres(gravity=True)
    init = ChainState(R=so3.exp(np.array([0.3, -0.2, 0.4])), x=np.zeros(3), omega=np.array([0.3, -0.5, 0.8]),
                      v=np.array([0.5, 0.2, -0.1]), q=np.array([0.2, -0.3]), qd=np.array([1.0, -0.8]))
    T = 1.0
    tau = np.array([2.0, -1.0])
    # the reference holds the same constant torque over every step: one step of length T
    ref = chain.reference(init, T, 1, torques=tau[None, :])
    return chain, init, T, tau, ref


@pytest.mark.parametrize("method", LIE_METHODS + ("magnus", "rk4"))
def test_fitted_order_on_the_chain(order_setup, method):
    """Against DOP853 at rtol = atol = 1e-12, gravity on (stage poses matter) and joint torques."""
    chain, init, T, tau, ref = order_setup
    counts = (8, 16, 32)
    errs = _order_errors(chain, init, T, counts, method, tau, ref)
    slope = -np.polyfit(np.log(counts), np.log(errs), 1)[0]
    expected = 4 if method == "rk4" else ORDERS[method]
    assert abs(slope - expected) < 0.3, (method, errs, slope)


@pytest.mark.parametrize("method", LIE_METHODS + ("magnus",))
def test_chain_poses_stay_on_se3(method):
    chain = three_spheres()
    init = ChainState(R=np.eye(3), x=np.zeros(3), omega=np.array([1.0, 2.0, -1.5]), v=np.array([0.3, 0.1, 0.2]),
                      q=np.zeros(2), qd=np.array([3.0, -2.0]))
    traj = chain.simulate(init, 0.05, 10, method)
    for link in traj.series["links"].values():
        q = link["orientation"]
        assert np.max(np.abs(np.linalg.norm(q, axis=-1) - 1)) < 1e-12
    # on the integrator's own matrices (a fast spin, 120 steps), not after a quaternion round trip
    step = magnus_step_function(True) if method == "magnus" else tableau_step(method)
    res = run(chain.problem(None, None), step, init.R, init.x, init.y(2), 0.05, 120, ())
    assert np.max(np.abs(np.swapaxes(res.R, -1, -2) @ res.R - np.eye(3))) < 1e-12
    assert np.max(np.abs(np.linalg.det(res.R) - 1)) < 1e-12


# --- Park & Chung's Tables VI–VIII in kind ---------------------------------------------------------

PARK_CHUNG_DRIFT = {   # Tables VI (kinetic energy), VII (linear momentum), VIII (angular momentum); h = 1, 0.1, 0.01
    "energy": {"cg2": (3.4673e-2, 1.1679e-3, 1.2151e-5), "cg3": (3.9707e-2, 4.2896e-5, 4.3020e-8),
               "cg4": (1.5120e-3, 2.0035e-7, 2.0421e-11), "cf2": (3.4673e-2, 1.1679e-3, 1.2151e-5),
               "cf3": (5.3524e-2, 5.0535e-5, 5.0334e-8), "cf4": (3.6308e-3, 3.2133e-7, 3.1989e-11),
               "mk2": (3.4673e-2, 1.1679e-3, 1.2151e-5), "mk3": (5.3524e-2, 5.0535e-5, 5.0334e-8),
               "mk4": (3.6308e-3, 3.2133e-7, 3.1996e-11)},
    "linear": {"cg2": (5.5613e-1, 5.2947e-3, 5.2633e-5), "cg3": (5.6523e-2, 4.7138e-5, 4.6619e-8),
               "cg4": (8.4583e-3, 8.2850e-7, 8.3399e-11), "cf2": (5.5613e-1, 5.2947e-3, 5.2633e-5),
               "cf3": (5.1921e-2, 5.2437e-5, 5.2982e-8), "cf4": (1.5953e-2, 1.5814e-6, 1.5782e-10),
               "mk2": (5.5613e-1, 5.3178e-3, 5.2893e-5), "mk3": (5.2334e-2, 5.3244e-5, 5.3800e-8),
               "mk4": (1.5910e-2, 1.5903e-6, 1.5877e-10)},
    "angular": {"cg2": (8.3715e-1, 8.1705e-3, 8.3278e-5), "cg3": (2.0265e-1, 1.9643e-4, 1.9513e-7),
                "cg4": (2.3172e-2, 2.6873e-6, 2.8057e-10), "cf2": (8.3715e-1, 8.1705e-3, 8.3278e-5),
                "cf3": (2.8075e-1, 2.8154e-4, 2.8084e-7), "cf4": (3.6510e-2, 3.6710e-6, 3.6619e-10),
                "mk2": (8.3715e-1, 8.1218e-3, 8.2721e-5), "mk3": (2.7813e-1, 2.8401e-4, 2.8359e-7),
                "mk4": (3.9118e-2, 3.8141e-6, 3.8025e-10)},
}
H = (1.0, 0.1, 0.01)


def drifts(method: str, h: float) -> dict[str, float]:
    chain = three_spheres()
    init = ChainState(R=np.eye(3), x=np.zeros(3), omega=np.zeros(3), v=np.zeros(3), q=np.zeros(2),
                      qd=np.array([0.4, 0.4]))
    n = int(round(1.0 / h))
    traj = chain.simulate(init, h, n, method)
    return {"energy": abs(traj.series["energy"][-1] - traj.series["energy"][0]),
            "linear": float(np.linalg.norm(traj.momentum_linear[-1] - traj.momentum_linear[0])),
            "angular": float(np.linalg.norm(traj.momentum_angular[-1] - traj.momentum_angular[0]))}


@pytest.fixture(scope="module")
def drift_table():
    return {m: [drifts(m, h) for h in H] for m in LIE_METHODS}


@pytest.mark.parametrize("method", LIE_METHODS)
def test_drifts_fall_by_ten_to_the_order_per_decade(drift_table, method):
    p = ORDERS[method]
    for key in ("energy", "linear", "angular"):
        ratio = drift_table[method][1][key] / drift_table[method][2][key]
        assert 10 ** (p - 0.3) < ratio < 10 ** (p + 0.3), (method, key, ratio)


@pytest.mark.parametrize("method", LIE_METHODS)
def test_drifts_have_the_magnitude_of_park_chungs_tables(drift_table, method):
    """Within a factor of 10 of Park & Chung's Tables VI–VIII at h = 1, 0.1, 0.01 (geometry:
    docs/benchmarks/park_chung.md)."""
    for k, h in enumerate(H):
        for key in ("energy", "linear", "angular"):
            ours, theirs = drift_table[method][k][key], PARK_CHUNG_DRIFT[key][method][k]
            assert 0.1 < ours / theirs < 10.0, (method, h, key, ours, theirs)


def test_drift_structure_is_park_chungs(drift_table):
    """As in Park & Chung: CG2 ≡ CF2 (same method); the energy depends only on the Rⁿ tableau, so
    CF3 = MK3 and CF4 = MK4 in energy, and MK2 = CG2 in energy."""
    for k in range(len(H)):
        assert drift_table["cg2"][k] == drift_table["cf2"][k]
        for a, b in (("cf3", "mk3"), ("cf4", "mk4"), ("cg2", "mk2")):
            assert drift_table[a][k]["energy"] == pytest.approx(drift_table[b][k]["energy"], rel=1e-6, abs=1e-13)


def test_chain_batch_equals_single_runs():
    chain = three_spheres(gravity=True)
    rng = np.random.default_rng(5)
    qd = rng.normal(size=(3, 2))
    omega = rng.normal(size=(3, 3))
    batch = ChainState(R=np.eye(3), x=np.zeros(3), omega=omega, v=np.zeros(3), q=np.zeros(2), qd=qd)
    traj = chain.simulate(batch, 0.05, 20, "mk4")
    for b in range(3):
        one = chain.simulate(ChainState(np.eye(3), np.zeros(3), omega[b], np.zeros(3), np.zeros(2), qd[b]),
                             0.05, 20, "mk4")
        np.testing.assert_allclose(traj.position[:, b], one.position, atol=1e-13)
        np.testing.assert_allclose(traj.shape["joint_2"][:, b], one.shape["joint_2"], atol=1e-13)


def test_methods_and_stats():
    assert set(CHAIN_METHODS) == set(LIE_METHODS) | {"magnus", "rk4"}
    chain = three_spheres()
    init = ChainState(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(2), np.array([0.4, 0.4]))
    counts = {m: chain.simulate(init, 0.1, 3, m).stats["exp_evaluations_per_step"] for m in CHAIN_METHODS}
    assert counts == {"magnus": 1, "cg2": 3, "cg3": 6, "cg4": 15, "cf2": 3, "cf3": 3, "cf4": 5,
                      "mk2": 2, "mk3": 3, "mk4": 4, "rk4": 0}
    assert Chain(10.0, [4, 4, 4], three_spheres().joints, True).simulate(
        init, 0.1, 3, "magnus").stats["exp_evaluations_per_step"] == 2    # pose-dependent predictor
    with pytest.raises(ScenarioError, match=r"\[integrator\] method"):
        chain.simulate(init, 0.1, 3, "vi-cay")


@pytest.mark.parametrize("joints, where", [
    ([Joint(0, [1, 0, 0], [0, 0, 1], 1.0, [1, 1, 1]), Joint(3, [1, 0, 0], [0, 0, 1], 1.0, [1, 1, 1])],
     r"\[\[joints\]\] #2 parent"),
    ([Joint(1, [1, 0, 0], [0, 0, 1], 1.0, [1, 1, 1])], r"\[\[joints\]\] #1 parent"),
    ([Joint(0, [1, 0, 0], [0, 0, 0], 1.0, [1, 1, 1])], r"\[\[joints\]\] #1 axis"),
    ([Joint(0, [1, 0, 0], [0, 0, 1], 0.0, [1, 1, 1])], r"\[\[joints\]\] #1 mass"),
    ([Joint(0, [1, 0, 0], [0, 0, 1], 1.0, [1, -1, 1])], r"\[\[joints\]\] #1 inertia\[1\]"),
    ([Joint(0, [1, 0], [0, 0, 1], 1.0, [1, 1, 1])], r"\[\[joints\]\] #1 position"),
    ([Joint(0, [1, 0, 0], [0, 0, 1], 1.0, [1, 1, 1], [0, 0])], r"\[\[joints\]\] #1 offset"),
])
def test_bad_chains_are_refused_naming_the_entry(joints, where):
    with pytest.raises(ScenarioError, match=where):
        Chain(1.0, [1, 1, 1], joints)


def test_bad_base_is_refused():
    with pytest.raises(ScenarioError, match=r"\[vehicle\] base_mass"):
        Chain(-1.0, [1, 1, 1])
    with pytest.raises(ScenarioError, match=r"\[vehicle\] base_inertia"):
        Chain(1.0, [1, 1])
