"""DMOC machinery (core.dmoc.problem, costs, constraints): derivatives and declared sparsity.

For every vehicle model with all constraint and cost groups switched on (free duration,
obstacles of every type, waypoints, speed limits, goal velocity, every cost term), at random
points: the analytic constraint Jacobian and cost gradient equal dense central differences
over all free variables (test-only reference), the declared Jacobian pattern equals the
computed one exactly (a structural zero gives an exactly zero difference), and the sparse
Lagrangian Hessian equals central differences of the Lagrangian gradient, inside its declared
pattern.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.dmoc.problem import NLP, Group, Layout, fd_hessian, fd_jacobian
from tests.core.dmoc.problems import SCENARIOS, dense_jacobian, perturbed_problem


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_jacobian_and_gradient_match_differences(name):
    nlp, z = perturbed_problem(name)
    J = nlp.jacobian(z).toarray()
    Jd = dense_jacobian(lambda x: nlp.constraint_values(x), z)
    scale = np.maximum(1.0, np.abs(Jd).max(axis=1, keepdims=True))
    assert np.max(np.abs(J - Jd) / scale) < 2e-6
    g = nlp.gradient(z)
    gd = dense_jacobian(lambda x: nlp.objective(x), z)[0]
    assert np.max(np.abs(g - gd)) < 2e-6 * max(1.0, np.abs(gd).max())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_declared_sparsity_equals_computed(name):
    nlp, z = perturbed_problem(name, seed=1, large=True)  # a generic point: no accidental zeros
    Jd = dense_jacobian(lambda x: nlp.constraint_values(x), z)
    # a structural zero differences to 0, or to rounding noise where it is a product that cancels
    # exactly in real arithmetic (m v × h v; the boat's translation-invariant wrench): keep what is above
    # 1e-8 of the row
    rowmax = np.maximum(1.0, np.abs(Jd).max(axis=1, keepdims=True))
    computed = set(zip(*np.nonzero(np.abs(Jd) > 1e-8 * rowmax)))
    declared = set(zip(nlp.jac_pattern.rows.tolist(), nlp.jac_pattern.cols.tolist()))
    assert computed == declared
    assert nlp.jac_pattern.nnz < 0.2 * nlp.m * nlp.n  # block-banded, not dense


# The boat's Hessian leaves out the second derivatives of its hull wrench by design
# (core/dmoc/models/boat.py); everything else is compared exactly.
@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - {"boat"}))
def test_hessian_matches_differences_of_lagrangian_gradient(name):
    nlp, z = perturbed_problem(name, seed=2)
    rng = np.random.default_rng(3)
    lam = rng.normal(size=nlp.m)
    sigma = 0.7

    def grad_lagrangian(x):
        nlp._cache = None
        return sigma * nlp.gradient(x) + nlp.jacobian(x).T @ lam

    H = nlp.hessian(z, lam, sigma).toarray()
    Hd = dense_jacobian(grad_lagrangian, z)
    Hd = 0.5 * (Hd + Hd.T)
    scale = max(1.0, np.abs(Hd).max())
    assert np.max(np.abs(H - Hd)) < 1e-5 * scale
    # the declared pattern holds every computed nonzero (lower triangle)
    declared = set(zip(nlp.hess_pattern.rows.tolist(), nlp.hess_pattern.cols.tolist()))
    big = np.abs(np.tril(Hd)) > 1e-6 * scale
    assert set(zip(*np.nonzero(big))) <= declared


def test_group_fd_helpers_match_analytic():
    """fd_jacobian / fd_hessian (the coloured differences) on f(x) = (x0² x1, sin(x1) x2)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(5, 3))

    def fun(X):
        return np.stack([X[:, 0] ** 2 * X[:, 1], np.sin(X[:, 1]) * X[:, 2]], axis=1)

    def jac(X, *p):
        J = np.zeros((X.shape[0], 2, 3))
        J[:, 0, 0] = 2 * X[:, 0] * X[:, 1]
        J[:, 0, 1] = X[:, 0] ** 2
        J[:, 1, 1] = np.cos(X[:, 1]) * X[:, 2]
        J[:, 1, 2] = np.sin(X[:, 1])
        return J

    assert np.allclose(fd_jacobian(fun, X, (), 3), jac(X), atol=1e-8)
    lam = rng.normal(size=(5, 2))
    H = np.zeros((5, 3, 3))
    H[:, 0, 0] = 2 * X[:, 1] * lam[:, 0]
    H[:, 0, 1] = H[:, 1, 0] = 2 * X[:, 0] * lam[:, 0]
    H[:, 1, 1] = -np.sin(X[:, 1]) * X[:, 2] * lam[:, 1]
    H[:, 1, 2] = H[:, 2, 1] = np.cos(X[:, 1]) * lam[:, 1]
    assert np.allclose(fd_hessian(jac, X, (), lam), H, atol=1e-7)


def test_fixed_variables_are_removed_and_duplicates_summed():
    """A toy NLP: y = (a, b, c) with b fixed; the group uses a twice across instances."""
    lay = Layout()
    idx = lay.add("y", 3)
    base = np.array([0.0, 2.0, 0.0])
    fixed = np.array([False, True, False])
    g = Group("g", np.array([[idx[0], idx[1]], [idx[0], idx[2]]]),
              lambda X: (X[:, 0] * X[:, 1])[:, None], np.ones((1, 2), dtype=bool),
              jac=lambda X: np.stack([X[:, 1], X[:, 0]], axis=1)[:, None, :])
    cost = Group("c", np.array([[idx[0]], [idx[0]]]), lambda X: X ** 2, np.ones((1, 1), dtype=bool),
                 jac=lambda X: (2 * X)[:, None, :])
    nlp = NLP(lay, base, fixed, np.full(3, -np.inf), np.full(3, np.inf), [g], [cost])
    assert nlp.n == 2
    z = np.array([3.0, 5.0])  # a = 3, c = 5
    assert np.allclose(nlp.constraint_values(z), [6.0, 15.0])
    assert np.allclose(nlp.jacobian(z).toarray(), [[2.0, 0.0], [5.0, 3.0]])
    assert nlp.objective(z) == pytest.approx(18.0)
    assert np.allclose(nlp.gradient(z), [12.0, 0.0])
    H = nlp.hessian(z, np.array([1.0, 2.0]), 1.0).toarray()
    assert np.allclose(H, [[4.0, 2.0], [2.0, 0.0]], atol=1e-7)


def _unstacked(nlp: NLP) -> NLP:
    """The same NLP with no group stacked (every elementwise group evaluated on its own)."""
    groups = [dataclasses.replace(g, elementwise=False) if g.elementwise else g for g in nlp.constraints]
    return NLP(nlp.layout, nlp.base, nlp.fixed, nlp.meta["lower_full"], nlp.meta["upper_full"], groups, nlp.costs,
               meta=nlp.meta)


def _same(a, b) -> bool:
    """Bit for bit: for the same values through the same arithmetic (run-to-run determinism)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _round_off(a, b, rel: float = 1e-13) -> None:
    """a = b to round-off (entrywise, atol relative to the largest |b|): different code paths (one stacked
    call against the groups one by one) may round differently on other CPUs (SIMD width, FMA)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rel, atol=rel * float(np.max(np.abs(b), initial=0.0)))


def test_stacked_elementwise_groups_match_separate_evaluation():
    """The car's goal speed and speed bounds share their elementwise functions: the NLP evaluates them in
    one call, with the values, Jacobian and Hessian of the groups one by one to round-off, a group whose
    multipliers are all zero included."""
    nlp, z = perturbed_problem("car", seed=5)
    plain = _unstacked(nlp)
    stacked = [b for b in nlp._blocks if len(b.groups) > 1 and b.batch is None]
    assert [[g.name for g in b.groups] for b in stacked] == [["goal: speed", "bounds: speed"]]
    assert len(plain._blocks) == len(nlp._blocks) + 1
    rng = np.random.default_rng(6)
    b = stacked[0]
    for zero_rows in (slice(0, 0), slice(b.r0, b.r0 + 1), slice(b.r0 + 1, b.r1), slice(b.r0, b.r1)):
        lam = rng.normal(size=nlp.m)
        lam[zero_rows] = 0.0
        _round_off(nlp.constraint_values(z), plain.constraint_values(z))
        _round_off(nlp.jacobian_values(z), plain.jacobian_values(z))
        _round_off(nlp.hessian_values(z, lam, 0.3), plain.hessian_values(z, lam, 0.3))


def test_the_evaluation_before_the_last_is_remembered():
    """IPOPT returns to its iterate after a rejected trial point: that point is not evaluated again."""
    nlp, z = perturbed_problem("car", seed=7)
    first = nlp.derivatives(z)
    trial = nlp.evaluate(z + 1e-3)
    count = nlp.evaluations
    assert nlp.derivatives(z.copy()) is first and nlp.evaluations == count
    assert nlp.evaluate(z + 1e-3) is trial and nlp.evaluations == count
    nlp.evaluate(z + 2e-3)  # a third point forgets the oldest
    assert nlp.evaluate(z) is not first and nlp.evaluations == count + 2


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_jacobian_gathered_in_place_equals_the_pattern_reduction(name):
    nlp, z = perturbed_problem(name, seed=8)
    assert nlp._jac_plan is not None
    direct = nlp.jacobian_values(z).copy()
    nlp._jac_plan, nlp._cache, nlp._previous = None, None, None
    assert _same(direct, nlp.jacobian_values(z))


def test_repeated_entries_of_one_instance_are_summed():
    """A variable twice in one instance (two Jacobian entries on one (row, column)): summed, in place too."""
    lay = Layout()
    idx = lay.add("y", 3)
    g = Group("g", np.array([[idx[0], idx[0]], [idx[1], idx[2]]]), lambda X: (X[:, 0] * X[:, 1])[:, None],
              np.ones((1, 2), dtype=bool), jac=lambda X: np.stack([X[:, 1], X[:, 0]], axis=1)[:, None, :])
    h = Group("h", np.array([[idx[2]]]), lambda X: -X, np.ones((1, 1), dtype=bool),
              jac=lambda X: -np.ones((X.shape[0], 1, 1)), linear=True)
    nlp = NLP(lay, np.zeros(3), np.zeros(3, dtype=bool), np.full(3, -np.inf), np.full(3, np.inf), [g, h], [])
    z = np.array([3.0, 5.0, 7.0])
    assert nlp._jac_plan is not None and nlp._jac_plan[0].src is None  # the bincount range
    assert np.array_equal(nlp.jacobian(z).toarray(), [[6.0, 0.0, 0.0], [0.0, 7.0, 5.0], [0.0, 0.0, -1.0]])
    direct = nlp.jacobian_values(z).copy()
    nlp._jac_plan, nlp._cache, nlp._previous = None, None, None
    assert _same(direct, nlp.jacobian_values(z))
