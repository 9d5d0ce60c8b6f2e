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

from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.problem import NLP, Group, Layout, fd_hessian, fd_jacobian
from core.dmoc.scenario import read
from core.scenario import loads

CAR = """
[vehicle]
type = "car"
preset = "hatchback"
collision_spheres = [[0.0, 0.0, 0.5, 1.0], [2.0, 0.3, 0.5, 0.8]]
[integrator]
steps = 7
alpha = {alpha}
[time]
min = 3.0
max = 6.0
[start]
position = [0.0, 0.0]
heading = 0.2
speed = 3.0
steering_angle = 0.1
[goal]
position = [15.0, 3.0]
speed = 2.0
[[obstacles]]
type = "sphere"
center = [6.0, 3.0, 0.0]
radius = 1.0
margin = 0.1
[[obstacles]]
type = "box"
center = [9.0, -2.0, 0.5]
half_extents = [1.0, 0.7, 0.5]
orientation = [0.9238795325112867, 0.0, 0.0, 0.3826834323650898]
margin = 0.2
[[obstacles]]
type = "capsule"
a = [4.0, -3.0, 0.0]
b = [5.0, -2.5, 1.0]
radius = 0.5
[bounds]
speed = [-1.0, 10.0]
steering_angle = [-0.5, 0.5]
[cost]
effort = 1.0
duration = 2.0
path_length = 0.3
hazard = 0.5
smoothness = 0.1
[cost.input_weights]
torque = 1e-5
"""

HELICOPTER = """
[vehicle]
type = "helicopter"
collision_spheres = [[0.0, 0.0, 0.0, 2.0], [-3.0, 0.5, 0.2, 1.0]]
[integrator]
method = "{method}"
steps = 6
[time]
min = 4.0
max = 9.0
[start]
position = [0.0, 0.0, 10.0]
orientation = {q0}
angular_velocity = [0.1, -0.2, 0.3]
velocity = [2.0, 0.5, -0.3]
[goal]
position = [40.0, 5.0, 12.0]
heading = 0.3
velocity = [0.5, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 0.1]
[[obstacles]]
type = "sphere"
center = [15.0, 6.0, 10.0]
radius = 3.0
margin = 0.5
[[obstacles]]
type = "box"
center = [25.0, -5.0, 8.0]
half_extents = [3.0, 2.0, 8.0]
orientation = [0.8, 0.36, 0.0, 0.48]
[[obstacles]]
type = "capsule"
a = [30.0, 5.0, 0.0]
b = [32.0, 6.0, 20.0]
radius = 1.0
[bounds]
speed = [0.0, 25.0]
pitch_tilt = [-0.15, 0.15]
[cost]
effort = 1.0
duration = 10.0
path_length = 0.3
hazard = 0.5
smoothness = 0.1
[cost.input_weights]
collective = 1e-6
yaw = 1e-4
pitch_tilt = 100.0
roll_tilt = 100.0
"""
BOAT = """
[vehicle]
type = "boat"
wind = [1.0, -5.0, 0.0]
current = [0.3, 0.2, 0.0]
collision_spheres = [[1.0, 0.0, 0.0, 1.2], [-1.0, 0.3, 0.0, 1.2]]
[integrator]
steps = 4
[time]
min = 6.0
max = 10.0
[start]
position = [0.0, 0.0, 0.084]
velocity = [0.5, 0.1, 0.0]
[goal]
position = [5.0, 2.0, 0.084]
heading = 0.3
velocity = [0.0, 0.0, 0.0]
[[obstacles]]
type = "sphere"
center = [3.0, 2.0, 0.0]
radius = 0.5
[bounds]
speed = [0.0, 3.0]
[cost]
effort = 1e-6
duration = 1.0
smoothness = 1e-6
"""
IDENTITY = "[1.0, 0.0, 0.0, 0.0]"
TURNED = "[0.052335956242943966, 0.0, 0.19968597374908592, 0.9784612713705209]"  # 174° about (0, .2, .98)

SCENARIOS = {"car": CAR.format(alpha=0.5), "car-alpha0": CAR.format(alpha=0.0),
             "car-alpha1": CAR.format(alpha=1.0),
             "helicopter-cay": HELICOPTER.format(method="vi-cay", q0=IDENTITY),
             "helicopter-cay-turned": HELICOPTER.format(method="vi-cay", q0=TURNED),
             "helicopter-exp": HELICOPTER.format(method="vi-exp", q0=TURNED),
             "helicopter-cay-ln": HELICOPTER.format(method="vi-cay-ln", q0=IDENTITY),
             "boat": BOAT}
# rotation charts far from their centre (|ρ| up to ~3, i.e. rotations of ~110°) and near it
LARGE_CHART = {"helicopter-cay-turned", "helicopter-exp"}


def _problem(name: str, seed: int = 0, large: bool = False):
    setup = read(loads(SCENARIOS[name]))
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    rng = np.random.default_rng(seed)
    z = z0 + rng.normal(scale=0.05, size=z0.shape) * np.maximum(1.0, np.abs(z0))
    if setup.model.se3:
        rho = nlp.freepos[setup.model.rho.ravel()]
        rho = rho[rho >= 0]
        scale = 1.5 if (large or name in LARGE_CHART) else 1e-3
        z[rho] = rng.normal(scale=0.05 if name == "boat" else scale, size=len(rho))  # a boat stays afloat
    z = np.clip(z, nlp.lb, nlp.ub)
    return nlp, z


def dense_jacobian(fun, z: np.ndarray) -> np.ndarray:
    cols = []
    for i in range(len(z)):
        d = 1e-6 * max(1.0, abs(z[i]))
        zp, zm = z.copy(), z.copy()
        zp[i] += d
        zm[i] -= d
        cols.append((np.atleast_1d(fun(zp)) - np.atleast_1d(fun(zm))) / (2 * d))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_jacobian_and_gradient_match_differences(name):
    nlp, z = _problem(name)
    J = nlp.jacobian(z).toarray()
    Jd = dense_jacobian(lambda x: nlp.constraint_values(x), z)
    scale = np.maximum(1.0, np.abs(Jd).max(axis=1, keepdims=True))
    assert np.max(np.abs(J - Jd) / scale) < 2e-6
    g = nlp.gradient(z)
    gd = dense_jacobian(lambda x: nlp.objective(x), z)[0]
    assert np.max(np.abs(g - gd)) < 2e-6 * max(1.0, np.abs(gd).max())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_declared_sparsity_equals_computed(name):
    nlp, z = _problem(name, seed=1, large=True)  # a generic point: no accidental zeros
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
    nlp, z = _problem(name, seed=2)
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
    nlp, z = _problem("car", seed=5)
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
    nlp, z = _problem("car", seed=7)
    first = nlp.derivatives(z)
    trial = nlp.evaluate(z + 1e-3)
    count = nlp.evaluations
    assert nlp.derivatives(z.copy()) is first and nlp.evaluations == count
    assert nlp.evaluate(z + 1e-3) is trial and nlp.evaluations == count
    nlp.evaluate(z + 2e-3)  # a third point forgets the oldest
    assert nlp.evaluate(z) is not first and nlp.evaluations == count + 2


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_jacobian_gathered_in_place_equals_the_pattern_reduction(name):
    nlp, z = _problem(name, seed=8)
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
