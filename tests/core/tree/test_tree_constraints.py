"""Holonomic constraints (Johnson & Murphey 2009, §IV-D): h, Dh, D²h against finite differences and
geometry; bad constraints refused; closed chains integrated with the constraints exact at every step
(four-bar, the device of their Fig. 6, the scissor lift of §VI-C against its 1-DOF reference)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from core.errors import ScenarioError
from core.tree import examples as ex
from core.tree import rk4, variational
from core.tree.constraints import ConstraintSet, Distance, PointOnPlane, PointToPoint
from core.tree.frames import Frame, Tree
from core.tree.system import System

RNG = np.random.default_rng(7)
TREE = Tree([
    Frame("a", "world", "rz", variable="q1"),
    Frame("b", "a", "fixed", position=(0.3, 0.1, -0.5), orientation=(0.9, 0.1, 0.3, np.sqrt(1 - 0.81 - 0.01 - 0.09))),
    Frame("c", "b", "ry", variable="q2"),
    Frame("d", "c", "tx", variable="q3"),
    Frame("e", "d", "rx", variable="q4"),
    Frame("g", "a", "ty", variable="q5"),
    Frame("h", "g", "rz", variable="q6"),
    Frame("j", "h", "tz", variable="q7"),
])
Q = RNG.normal(size=TREE.n)
CONSTRAINTS = [
    Distance("e", "j", 1.3),
    PointOnPlane("c", "j", (0.2, -0.4, 1.0), 0.25),
    PointToPoint("e", "h", ((1.0, 0.0, 0.0), (0.3, 1.0, 0.0)), frame="c"),
    PointToPoint("world", "e"),
]


def _cs():
    return ConstraintSet(TREE, CONSTRAINTS)


def _fd(fun, x, eps=1e-6):
    return np.stack([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)], axis=-1)


def test_rows_per_constraint():
    cs = _cs()
    assert len(cs) == 1 + 1 + 2 + 3
    assert cs.entry.tolist() == [0, 1, 2, 2, 3, 3, 3]


def test_first_and_second_derivatives_against_finite_differences():
    cs = _cs()
    h = lambda q: cs.h(cs.kinematics(q))    # noqa: E731
    Dh = lambda q: cs.Dh(cs.kinematics(q))  # noqa: E731
    assert np.allclose(_fd(h, Q), Dh(Q), atol=1e-9)
    assert np.allclose(_fd(Dh, Q), cs.D2h(cs.kinematics(Q)), atol=1e-8)
    D2 = cs.D2h(cs.kinematics(Q))
    assert np.allclose(D2, np.swapaxes(D2, -1, -2))


def test_values_have_their_geometric_meaning():
    cs = _cs()
    k = TREE.at(Q)
    G = k.G
    p = lambda name: G[TREE.index[name], :3, 3]   # noqa: E731
    R = lambda name: G[TREE.index[name], :3, :3]  # noqa: E731
    h = cs.h(cs.kinematics(Q))
    dist = np.linalg.norm(p("e") - p("j"))
    assert np.isclose(h[0], (dist**2 - 1.3**2) / (2 * 1.3))
    n = np.array([0.2, -0.4, 1.0])
    n = R("c") @ (n / np.linalg.norm(n))
    assert np.isclose(h[1], n @ (p("j") - p("c")) - 0.25)
    d2 = np.array([0.3, 1.0, 0.0]) / np.linalg.norm([0.3, 1.0, 0.0])
    assert np.isclose(h[3], (R("c") @ d2) @ (p("e") - p("h")))
    assert np.allclose(h[4:], -p("e"))


BAD = [
    (Distance("e", "nowhere", 1.0), "[constraints #1] b", "unknown frame"),
    (Distance("e", "j", 0.0), "[constraints #1] length", "must be positive"),
    (Distance("e", "e", 1.0), "[constraints #1] b", "must differ"),
    (PointOnPlane("c", "j", (0.0, 0.0, 0.0)), "[constraints #1] normal", "zero vector"),
    (PointToPoint("e", "j", ((1, 0, 0), (2, 0, 0))), "[constraints #1] directions", "independent"),
    (PointToPoint("e", "j", frame="nowhere"), "[constraints #1] frame", "unknown frame"),
]


@pytest.mark.parametrize("c,where,fragment", BAD)
def test_bad_constraints_are_refused(c, where, fragment):
    with pytest.raises(ScenarioError) as info:
        ConstraintSet(TREE, [c])
    assert info.value.where == where and fragment in info.value.problem


def test_redundant_constraint_is_refused_naming_it():
    """A 3-D pin on a planar four-bar: the y row is identically zero."""
    m = ex.four_bar()
    s = m.system
    bad = System(s.tree, s.bodies, constraints=[PointToPoint("coupler.e", "rocker.e")])
    with pytest.raises(ScenarioError) as info:
        bad.check_solvable(m.q0)
    assert info.value.where == "[constraints #1]" and "redundant" in info.value.problem


def test_impossible_constraints_are_refused_at_start_up():
    m = ex.four_bar()
    s = m.system
    far = System(s.tree, s.bodies, constraints=[Distance("crank.e", "rocker.e", 50.0)])
    with pytest.raises(ScenarioError) as info:
        variational.simulate(far, m.q0, m.dq0, 0.01, 1)
    assert info.value.where == "[initial] q"


# -- closed chains: residual at every step ------------------------------------------------
def test_four_bar_constraints_exact_where_rk4_drifts():
    m = ex.four_bar()
    steps = 1000
    vi = variational.simulate(m.system, m.q0, m.dq0, 0.01, steps)
    assert not vi.blew_up
    assert vi.residual.max() <= 1e-10
    base = rk4.simulate(m.system, m.q0, m.dq0, 0.01, steps)
    # the index-reduced baseline drifts off the constraint manifold (no stabilisation)
    assert base.residual[-1] > 100 * vi.residual.max()
    assert base.residual[-1] > base.residual[steps // 10] > 0
    E = m.system.energy(m.system.kinematics(vi.q, vi.dq))
    n = len(E) // 5
    assert np.ptp(E) < 1e-5 * abs(E[0])                     # bounded
    assert abs(E[-n:].mean() - E[:n].mean()) < 0.2 * np.ptp(E)   # no drift


def test_fig6_device_constraints_exact():
    m = ex.fig6_device()
    assert m.system.m == 4 and m.system.tree.n == 7
    run = variational.simulate(m.system, m.q0, m.dq0, 0.01, 500)
    assert not run.blew_up and run.residual.max() <= 1e-10
    E = m.system.energy(m.system.kinematics(run.q, run.dq))
    assert np.ptp(E) < 1e-3 * abs(E[0])


def _up_crossings(t, x, level):
    s = x - level
    i = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
    return t[i] - s[i] * (t[i + 1] - t[i]) / (s[i + 1] - s[i])


def test_scissor_lift_matches_its_one_dof_reference():
    """§VI-C: 5 segments, h = 0.01, 10 s: constraints exact, period within 0.5 %."""
    m = ex.scissor_lift(segments=5)
    s = m.system
    assert (s.tree.n, s.m) == (11, 10)
    run = variational.simulate(s, m.q0, m.dq0, 0.01, 1000)
    assert not run.blew_up and run.residual.max() <= 1e-10
    M, dM, V, dV = ex.scissor_reference(m.info)
    ref = solve_ivp(lambda t, y: [y[1], (-0.5 * dM(y[0]) * y[1] ** 2 - dV(y[0])) / M(y[0])], (0, 10),
                    [m.info["theta0"], 0.0], method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
    theta = ex.scissor_theta(m, run.q)
    # the tree is the same system as the reference Lagrangian: equal energies along the run
    w = run.dq[:, s.tree.var_index["a1"]]
    E_tree = s.energy(s.kinematics(run.q, run.dq))
    assert np.allclose(E_tree, 0.5 * M(theta) * w**2 + V(theta), atol=1e-7 * np.abs(E_tree).max())
    t_fine = np.linspace(0, 10, 20001)
    c_ref = _up_crossings(t_fine, ref.sol(t_fine)[0], np.pi / 2)
    c_vi = _up_crossings(run.time, theta, np.pi / 2)
    assert len(c_ref) == len(c_vi) >= 4
    period_ref, period_vi = np.diff(c_ref).mean(), np.diff(c_vi).mean()
    assert abs(period_vi / period_ref - 1) < 0.005
    assert np.max(np.abs(theta - ref.sol(run.time)[0])) < 0.05
