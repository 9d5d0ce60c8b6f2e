"""The Lagrangian's derivatives (eqs. 23–35), the discrete Lagrangian's slot derivatives and the
Newton Jacobian (eqs. 20–22, 44–46) against finite differences; convergence order against an
independent reference; energy and momentum behaviour; forces; kinematic drives; blow-ups."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.tree import examples as ex
from core.tree import rk4, variational
from core.tree.constraints import Distance, PointToPoint
from core.tree.frames import Frame, Tree
from core.tree.prescribed import Prescribed
from core.tree.system import Body, Damper, Force, Spring, System, Wrench
from core.tree.variational import _Step

RNG = np.random.default_rng(11)


def _tree() -> Tree:
    return Tree([
        Frame("a", "world", "rz", variable="q1"),
        Frame("b", "a", "fixed", position=(0.3, 0.1, -0.5), orientation=(0.9, 0.1, 0.3, np.sqrt(0.09))),
        Frame("c", "b", "ry", variable="q2"),
        Frame("d", "c", "tx", variable="q3"),
        Frame("e", "d", "rx", variable="q4"),
        Frame("f", "e", "tz", value=0.7),
        Frame("g", "a", "ty", variable="q5"),
        Frame("h", "g", "rz", variable="q6"),
        Frame("i", "h", "ry", value=0.4),
        Frame("j", "i", "tz", variable="q7"),
    ])


def _system(backend: str = "closed", constraints=(), kinematic: bool = False) -> System:
    tree = _tree()
    bodies = [Body("c", 1.0, (0.1, 0.2, 0.3)), Body("f", 2.0, (0.3, 0.1, 0.2)),
              Body("h", 0.5, (0.05, 0.05, 0.1)), Body("j", 1.5, (0.2, 0.2, 0.2))]
    return System(tree, bodies, gravity=(0.3, -0.2, -9.81),
                  springs=[Spring("f", "j", 3.0, 0.5), Spring("world", "e", 2.0, 0.2)],
                  dampers=[Damper("q2", 0.3), Damper("q5", 0.1)], forces=[Force("q1", lambda t: 0.7 * np.cos(t))],
                  wrenches=[Wrench("e", [0.1, 0.2, -0.3, 1.0, 0.5, -0.2]), Wrench("j", lambda t: np.array([0.3, 0, t, 0, 0, 1]))],
                  constraints=constraints, backend=backend)


SYS = _system()
N = SYS.tree.n
Q, DQ = RNG.normal(size=N), RNG.normal(size=N)
EYE = np.eye(N)


def _fd(fun, x, eps=1e-6):
    return np.stack([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)], axis=-1)


def _L(q, dq):
    k = SYS.kinematics(q, dq)
    return SYS.kinetic_energy(k) - SYS.potential(k)[0]


# -- the Lagrangian (eqs. 11, 23–27), potentials (30–35), forces (§IV-E) ---------------------
def test_lagrangian_derivatives_against_finite_differences():
    lt = SYS.lagrangian(SYS.kinematics(Q, DQ), 2)
    first = lambda q, dq: SYS.lagrangian(SYS.kinematics(q, dq), 1)   # noqa: E731
    assert np.allclose(_fd(lambda q: np.atleast_1d(_L(q, DQ)), Q)[0], lt.L_q, atol=1e-7)
    assert np.allclose(_fd(lambda v: np.atleast_1d(_L(Q, v)), DQ)[0], lt.L_dq, atol=1e-7)
    assert np.allclose(_fd(lambda q: first(q, DQ).L_q, Q), lt.L_qq, atol=1e-7)
    assert np.allclose(_fd(lambda v: first(Q, v).L_q, DQ), lt.L_qdq, atol=1e-7)
    assert np.allclose(_fd(lambda v: first(Q, v).L_dq, DQ), lt.M, atol=1e-7)
    assert np.allclose(lt.L_qq, lt.L_qq.T) and np.allclose(lt.M, lt.M.T)
    assert np.all(np.linalg.eigvalsh(lt.M) > 0)


@pytest.mark.parametrize("backend", ["recursive", "recursive-nocache"])
def test_backends_agree(backend):
    other = _system(backend)
    a, b = SYS.lagrangian(SYS.kinematics(Q, DQ), 2), other.lagrangian(other.kinematics(Q, DQ), 2)
    for name in ("L_q", "L_dq", "L_qq", "L_qdq", "M"):
        assert np.allclose(getattr(a, name), getattr(b, name), atol=1e-12), name
    for x, y in zip(SYS.force(SYS.kinematics(Q, DQ), 0.4, True), other.force(other.kinematics(Q, DQ), 0.4, True)):
        assert np.allclose(x, y, atol=1e-12)


def test_potential_derivatives_gravity_and_springs():
    V = lambda q: SYS.potential(SYS.kinematics(q), 2)   # noqa: E731
    _, V_q, V_qq = V(Q)
    assert np.allclose(_fd(lambda q: np.atleast_1d(V(q)[0]), Q)[0], V_q, atol=1e-7)
    assert np.allclose(_fd(lambda q: V(q)[1], Q), V_qq, atol=1e-7)
    # eq. (30) and the spring energy, by hand
    k = SYS.kinematics(Q)
    G = k.G
    p = lambda n: G[SYS.tree.index[n], :3, 3]   # noqa: E731
    g = np.array([0.3, -0.2, -9.81])
    Vg = -sum(m * g @ p(n) for n, m in (("c", 1.0), ("f", 2.0), ("h", 0.5), ("j", 1.5)))
    Vs = 0.5 * 3.0 * (np.linalg.norm(p("f") - p("j")) - 0.5) ** 2 + 0.5 * 2.0 * (np.linalg.norm(p("e")) - 0.2) ** 2
    assert np.isclose(V(Q)[0], Vg + Vs)


def test_force_derivatives_and_wrench_mapping():
    t = 0.8
    f, f_q, f_dq = SYS.force(SYS.kinematics(Q, DQ), t, True)
    F = lambda q, dq: SYS.force(SYS.kinematics(q, dq), t)[0]   # noqa: E731
    assert np.allclose(_fd(lambda q: F(q, DQ), Q), f_q, atol=1e-8)
    assert np.allclose(_fd(lambda v: F(Q, v), DQ), f_dq, atol=1e-8)
    # f_c = J_bᵀ F (§IV-E1): the power of the wrench equals f_c · q̇
    k = SYS.kinematics(Q, DQ)
    v = k.v
    rows = {n: list(SYS.body_frames).index(SYS.tree.index[n]) for n in ("e", "j")}
    power = (np.array([0.1, 0.2, -0.3, 1.0, 0.5, -0.2]) @ v[rows["e"]] + np.array([0.3, 0, t, 0, 0, 1]) @ v[rows["j"]]
             + 0.7 * np.cos(t) * DQ[0] - 0.3 * DQ[1] ** 2 - 0.1 * DQ[4] ** 2)
    assert np.isclose(f @ DQ, power)


# -- the discrete Lagrangian (eqs. 19–22) and the Newton Jacobian (eqs. 44–46) -----------------
@pytest.mark.parametrize("alpha", [0.5, 0.3, 1.0])
def test_slot_derivatives_of_the_discrete_lagrangian(alpha):
    h = 0.05
    qk, qn = Q, Q + h * DQ + 0.01 * RNG.normal(size=N)
    st = _Step(SYS, h, alpha)

    def Ld(a, b):
        return h * _L((1 - alpha) * a + alpha * b, (b - a) / h)

    def D1(a, b):
        return st.D1(st.midpoint(a, b, 0.0, 1)[0], None)

    assert np.allclose(_fd(lambda a: np.atleast_1d(Ld(a, qn)), qk)[0], D1(qk, qn), atol=1e-7)
    assert np.allclose(_fd(lambda b: np.atleast_1d(Ld(qk, b)), qn)[0], st.D2(st.midpoint(qk, qn, 0, 1)[0], None), atol=1e-7)
    lt, f, fq, fdq = st.midpoint(qk, qn, 0.2, 2)
    D1f = lambda b: st.D1(*st.midpoint(qk, b, 0.2, 1)[:2])   # noqa: E731   D1 L_d + f_d⁻
    assert np.allclose(_fd(D1f, qn), st.D2D1(lt, fq, fdq), atol=1e-6)


def test_newton_jacobian_with_constraints_and_kinematic_variables():
    """The full residual (45) of a step, (q_{k+1}, λ) ↦ (p_k + D₁L_d + f⁻ − Dh(q_k)ᵀλ, h(q_{k+1})),
    has the analytic Jacobian (46) — with one variable kinematic."""
    tree = _tree()
    frames = [Frame(f.name, f.parent, f.transform, f.variable, f.value, f.position, f.orientation,
                    kinematic=f.variable == "q5") for f in tree.frames]
    base = _system()
    s = System(Tree(frames), base.bodies, base.gravity, base.springs, [Damper("q2", 0.3)], [], base.wrenches,
               [Distance("f", "j", 1.1), PointToPoint("world", "e", ((0.0, 0.0, 1.0),))],
               drives={"q5": Prescribed.function(np.sin, np.cos, lambda t: -np.sin(t))})
    d, h, alpha = s.dyn, 0.03, 0.5
    st = _Step(s, h, alpha)
    qk = Q
    pk = RNG.normal(size=d.size)
    Dh_k = s.constraints.Dh(s.constraint_kinematics(qk))[:, d]

    def F(x):
        qn = qk + h * DQ
        qn[d] = x[: d.size]
        lam = x[d.size:]
        lt, f, _, _ = st.midpoint(qk, qn, 0.1, 1)
        return np.concatenate([pk + st.D1(lt, f) - Dh_k.T @ lam, s.constraints.h(s.constraint_kinematics(qn))])

    x0 = np.concatenate([(qk + h * DQ)[d], RNG.normal(size=s.m)])
    qn = qk + h * DQ
    lt, f, fq, fdq = st.midpoint(qk, qn, 0.1, 2)
    J = np.zeros((x0.size, x0.size))
    J[: d.size, : d.size] = st.D2D1(lt, fq, fdq)
    J[: d.size, d.size:] = -Dh_k.T
    J[d.size:, : d.size] = s.constraints.Dh(s.constraint_kinematics(qn))[:, d]
    assert np.allclose(_fd(F, x0), J, atol=1e-6)


# -- accuracy --------------------------------------------------------------------------------
def _double_pendulum_reference(info, y0, T):
    """Independent equations of a double pendulum (absolute angles from the vertical)."""
    l1, l2, m1, m2, g = info["l1"], info["l2"], info["m1"], info["m2"], 9.81

    def rhs(_, y):
        a, b, da, db = y
        t1, t2, w1, w2 = a, a + b, da, da + db
        c, sn = np.cos(t1 - t2), np.sin(t1 - t2)
        M = np.array([[(m1 + m2) * l1**2, m2 * l1 * l2 * c], [m2 * l1 * l2 * c, m2 * l2**2]])
        f = np.array([-m2 * l1 * l2 * sn * w2**2 - (m1 + m2) * g * l1 * np.sin(t1),
                      m2 * l1 * l2 * sn * w1**2 - m2 * g * l2 * np.sin(t2)])
        acc = np.linalg.solve(M, f)
        return [da, db, acc[0], acc[1] - acc[0]]

    return solve_ivp(rhs, (0, T), y0, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]


def _order(alpha, composition="none", hs=(0.04, 0.02, 0.01, 0.005)):
    m = ex.double_pendulum()
    T = 2.0
    ref = _double_pendulum_reference(m.info, np.r_[m.q0, m.dq0], T)
    hs = np.array(hs)
    err = [np.abs(variational.simulate(m.system, m.q0, m.dq0, h, int(round(T / h)), alpha=alpha,
                                       composition=composition).q[-1] - ref[:2]).max()
           for h in hs]
    return np.polyfit(np.log(hs), np.log(err), 1)[0], err


def test_second_order_convergence_on_the_double_pendulum():
    slope, err = _order(0.5)
    assert 1.9 < slope < 2.1, (slope, err)
    assert err[-1] < 2e-4


def test_triple_jump_composition_is_fourth_order_on_the_double_pendulum():
    slope, err = _order(0.5, "triple_jump", hs=(0.04, 0.02, 0.01))
    assert 3.7 < slope < 4.3, (slope, err)
    assert err[-1] < 5e-6  # the midpoint VI: 2e-4 at h = 0.005


def test_triple_jump_keeps_constraints_and_energy_on_the_scissor_lift():
    """Every sub-node satisfies the pins (no projection); the energy stays in a band with no
    drift, like the midpoint VI's; the phase error over 10 s is far below the midpoint VI's."""
    m = ex.scissor_lift(segments=3)
    h, steps = 0.01, 1000
    mid = variational.simulate(m.system, m.q0, m.dq0, h, steps)
    tj = variational.simulate(m.system, m.q0, m.dq0, h, steps, composition="triple_jump")
    assert not tj.blew_up and tj.method == "variational-triple_jump"
    assert tj.residual.max() < 1e-10
    s = m.system
    E = s.energy(s.kinematics(tj.q, tj.dq))
    band = np.ptp(E)
    assert band < 0.2 * np.ptp(s.energy(s.kinematics(mid.q, mid.dq)))
    n = steps // 10
    assert abs(E[-n:].mean() - E[:n].mean()) < 0.1 * band + 1e-9
    # the reference: the one-degree-of-freedom Lagrangian of the same lift (scissor_reference; tj's
    # error against it falls 16× per halving of h), integrated tightly; θ at every node
    M, dM, V, dV = ex.scissor_reference(m.info)
    ref = solve_ivp(lambda t, y: [y[1], (-0.5 * dM(y[0]) * y[1] ** 2 - dV(y[0])) / M(y[0])], (0, h * steps),
                    [m.info["theta0"], 0.0], method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
    theta = ref.sol(tj.time)[0]
    err_tj = np.abs(ex.scissor_theta(m, tj.q) - theta).max()
    err_mid = np.abs(ex.scissor_theta(m, mid.q) - theta).max()
    assert err_tj < 0.05 * err_mid, (err_tj, err_mid)


def test_composition_needs_the_symmetric_step():
    m = ex.double_pendulum()
    with pytest.raises(ValueError, match="alpha = 0.5"):
        variational.simulate(m.system, m.q0, m.dq0, 0.01, 10, alpha=0.3, composition="triple_jump")
    with pytest.raises(ValueError, match="composition"):
        variational.simulate(m.system, m.q0, m.dq0, 0.01, 10, composition="yoshida8")


def test_alpha_other_than_half_is_first_order():
    slope, _ = _order(0.25)
    assert 0.7 < slope < 1.3


def test_constant_torque_and_equivalent_body_wrench():
    """A pendulum driven by a constant generalised torque τ; the same torque as a body wrench
    about the joint frame's y axis gives the same motion."""
    l, tau = 0.9, 1.5
    frames = [Frame("j", "world", "ry", variable="th"), Frame("bob", "j", "tz", value=-l)]
    as_force = System(Tree(frames), [Body("bob", 1.0)], forces=[Force("th", tau)])
    as_wrench = System(Tree(frames), [Body("bob", 1.0)], wrenches=[Wrench("j", [0, tau, 0, 0, 0, 0])])
    T, h = 2.0, 0.01
    a = variational.simulate(as_force, np.array([0.3]), np.array([0.0]), h, int(T / h))
    b = variational.simulate(as_wrench, np.array([0.3]), np.array([0.0]), h, int(T / h))
    assert np.allclose(a.q, b.q, atol=1e-12)
    ref = solve_ivp(lambda t, y: [y[1], (tau - 9.81 * l * np.sin(y[0])) / l**2], (0, T), [0.3, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
    assert abs(a.q[-1, 0] - ref[0]) < 5e-4 and abs(a.dq[-1, 0] - ref[1]) < 5e-3


def test_kinematic_cart_drives_the_pendulum():
    """Cart x(t) = A sin ωt prescribed; θ̈ = (cos θ ẍ − g sin θ)/l by hand; both integrators."""
    l, A, w, T = 0.8, 0.3, 2.5, 3.0
    frames = [Frame("cart", "world", "tx", variable="x", kinematic=True), Frame("pivot", "cart", "ry", variable="th"),
              Frame("bob", "pivot", "tz", value=-l)]
    drive = Prescribed.function(lambda t: A * np.sin(w * t), lambda t: A * w * np.cos(w * t),
                                lambda t: -A * w * w * np.sin(w * t))
    s = System(Tree(frames), [Body("bob", 1.0)], drives={"x": drive})
    ref = solve_ivp(lambda t, y: [y[1], (np.cos(y[0]) * -A * w * w * np.sin(w * t) - 9.81 * np.sin(y[0])) / l],
                    (0, T), [0.4, -0.2], method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    errs = []
    for h in (0.02, 0.01):
        run = variational.simulate(s, np.array([5.0, 0.4]), np.array([9.0, -0.2]), h, int(round(T / h)))
        assert np.allclose(run.q[:, 0], A * np.sin(w * run.time))      # the drive wins over [initial]
        assert np.allclose(run.dq[:, 0], A * w * np.cos(w * run.time))
        errs.append(abs(run.q[-1, 1] - ref[0]))
    assert errs[1] < 2e-3 and 3.5 < errs[0] / errs[1] < 4.5
    base = rk4.simulate(s, np.array([0.0, 0.4]), np.array([0.0, -0.2]), 0.01, 300)
    assert abs(base.q[-1, 1] - ref[0]) < 1e-6


# -- conservation ----------------------------------------------------------------------------
def test_energy_bounded_without_drift_where_rk4_drifts():
    """Double pendulum, h = 0.05, 100 s: the VI's energy oscillates in a band with no trend; RK4
    on the same equations and step loses energy steadily."""
    m = ex.double_pendulum()
    s, steps = m.system, 2000
    vi = variational.simulate(s, m.q0, m.dq0, 0.05, steps)
    base = rk4.simulate(s, m.q0, m.dq0, 0.05, steps)
    E_vi = s.energy(s.kinematics(vi.q, vi.dq))
    E_rk = s.energy(s.kinematics(base.q, base.dq))
    n = steps // 10
    drift_vi = E_vi[-n:].mean() - E_vi[:n].mean()
    drift_rk = E_rk[-n:].mean() - E_rk[:n].mean()
    assert np.ptp(E_vi) < 0.01 * abs(E_vi[0])
    assert abs(drift_vi) < 0.2 * np.ptp(E_vi)
    assert drift_rk < -5 * abs(drift_vi)


def test_discrete_momentum_of_a_symmetry_is_conserved_exactly():
    """A body on a vertical rz axis with a spherical pendulum below it, gravity along −z: L is
    invariant under q_rz ↦ q_rz + c, so the discrete momentum p_rz is conserved (discrete Noether)."""
    frames = [Frame("spin", "world", "rz", variable="psi"), Frame("arm", "spin", "fixed", position=(0.4, 0.0, 0.0)),
              Frame("swing", "arm", "rx", variable="phi"), Frame("swing2", "swing", "ry", variable="chi"),
              Frame("bob", "swing2", "tz", value=-0.7)]
    s = System(Tree(frames), [Body("arm", 2.0, (0.1, 0.2, 0.3)), Body("bob", 1.0, (0.01, 0.02, 0.03))])
    run = variational.simulate(s, np.array([0.0, 0.5, 0.2]), np.array([2.0, 0.0, 1.0]), 0.02, 1000)
    p_psi = run.momentum[:, 0]
    assert np.ptp(p_psi) < 1e-10 * abs(p_psi[0])
    cont = s.lagrangian(s.kinematics(run.q, run.dq)).L_dq[:, 0]   # continuous momentum at the nodes
    assert np.allclose(cont, p_psi, rtol=1e-9)


def test_damping_dissipates_the_work_of_the_damper():
    frames = [Frame("j", "world", "ry", variable="th"), Frame("bob", "j", "tz", value=-1.0)]
    c = 0.4
    s = System(Tree(frames), [Body("bob", 1.0)], dampers=[Damper("th", c)])
    run = variational.simulate(s, np.array([1.0]), np.array([0.0]), 0.005, 1000)
    E = s.energy(s.kinematics(run.q, run.dq))
    w = run.dq[:, 0]
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] ** 2 + w[:-1] ** 2) * 0.005)]) * c
    assert dissipated[-1] > 1.0                      # a large part of the 4.5 J swing energy
    assert np.allclose(E - E[0], -dissipated, atol=2e-3 * dissipated[-1])


# -- failures --------------------------------------------------------------------------------
def test_newton_failure_ends_the_run_with_the_nodes_so_far():
    m = ex.double_pendulum()
    run = variational.simulate(m.system, m.q0, m.dq0, 0.01, 50, max_iter=1)
    assert run.blew_up and "Newton" in run.message
    assert run.q.shape == (1, 2) and run.dq.shape == (1, 2) and run.iterations.size == 0
