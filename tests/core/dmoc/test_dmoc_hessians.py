"""Analytic Lagrangian Hessians of the DMOC groups (core.dmoc.jets, obstacles, costs, models).

(The holonomic vehicles' pose update, eq. (9), for the Cayley pairings by the rational maps of
``jets.RationalMap``; their momentum maps by jets; both through the group test below.)

Every group with an analytic ``hess`` is checked against the coloured central differences of its
analytic Jacobian (``fd_hessian_colored``, the scheme it replaces) at random points, near the
identity and at large rotations (|ρ| up to ~3, rotations of ~110°), for every vehicle scenario
of ``tests/core/dmoc/problems.py``; the building blocks (jets, the car's update, obstacle distances in every
region, the body point maps) against central differences of their analytic gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

from core.dmoc import jets
from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.models import car as carmodel
from core.dmoc.models import se2_point_curvature, se2_point_map
from core.dmoc.models.holonomic import HolonomicModel
from core.dmoc.obstacles import (box_distance, box_distance_hessian, capsule_distance, capsule_distance_hessian,
                                 sphere_distance, sphere_distance_hessian)
from core.dmoc.problem import LastCall, fd_hessian_colored
from core.dmoc.scenario import read
from core.lie import se3, so3
from core.scenario import loads
from core.vehicles import car as carlib
from tests.core.dmoc.problems import SCENARIOS, perturbed_problem

WAYPOINTS = """
[[waypoints]]
time = {t1}
position = {p1}
radius = 1.0
heading = 0.4
[[waypoints]]
time = {t2}
position = {p2}
radius = 2.0
"""


def _fixed_duration(text: str, old: str, duration: float) -> str:
    """Waypoints need a fixed duration (and then no duration cost)."""
    return text.replace(old, f"duration = {duration}").replace("duration = 2.0\n", "").replace(
        "duration = 10.0\n", "")


EXTRA = {
    "car-waypoints": _fixed_duration(SCENARIOS["car"], "min = 3.0\nmax = 6.0", 5.0)
    + WAYPOINTS.format(t1=2.0, p1="[5.0, 1.0]", t2=3.0, p2="[9.0, 2.0]"),
    "helicopter-waypoints": _fixed_duration(SCENARIOS["helicopter-cay-turned"], "min = 4.0\nmax = 9.0", 6.0)
    + WAYPOINTS.format(t1=2.0, p1="[10.0, 1.0, 11.0]", t2=4.0, p2="[25.0, 3.0, 12.0]"),
}


def _fd_columns(fun, X: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """Central differences of fun (B, ...) over the columns of X (B, n): (B, ..., n)."""
    cols = []
    for j in range(X.shape[1]):
        d = step * np.maximum(1.0, np.abs(X[:, j]))
        Xp, Xm = X.copy(), X.copy()
        Xp[:, j] += d
        Xm[:, j] -= d
        cols.append((fun(Xp) - fun(Xm)) / d.reshape((-1,) + (1,) * (np.ndim(fun(X)) - 1)) / 2)
    return np.stack(cols, axis=-1)


def _group_problem(name: str, seed: int, large: bool):
    if name in EXTRA:
        setup = read(loads(EXTRA[name]))
        nlp = assemble(setup.model, setup.spec)
        z = nlp.reduce(initial_guess(setup.model, setup.spec))
        rng = np.random.default_rng(seed)
        z = z + rng.normal(scale=0.05, size=z.shape) * np.maximum(1.0, np.abs(z))
        if setup.model.se3:
            rho = nlp.freepos[setup.model.rho.ravel()]
            rho = rho[rho >= 0]
            z[rho] = rng.normal(scale=1.5 if large else 1e-3, size=len(rho))
        return nlp, np.clip(z, nlp.lb, nlp.ub)
    return perturbed_problem(name, seed=seed, large=large)


@pytest.mark.parametrize("large", [False, True], ids=["near-identity", "large-rotation"])
@pytest.mark.parametrize("name", sorted(SCENARIOS) + sorted(EXTRA))
def test_analytic_group_hessians_match_coloured_differences(name, large):
    nlp, z = _group_problem(name, seed=5, large=large)
    y = nlp.full(z)
    rng = np.random.default_rng(6)
    checked = 0
    for g in nlp.constraints + nlp.costs:
        if g.hess is None:
            continue
        X = y[g.idx]
        lam = rng.normal(size=(g.K, g.m))
        H = g.hessian(X, lam)
        cols = np.flatnonzero(g.nonlinear)
        jac = ((lambda Xb, pb: g.jacobian(Xb, pb)) if g.hess_jac is None  # the boat's omits the hull's curvature
               else (lambda Xb, pb: g.hess_jac(Xb, *pb).reshape(len(Xb), g.m, g.L)))
        Hd = fd_hessian_colored(jac, X, g.params, lam, [np.array([c]) for c in cols], np.ones((g.L, g.L), dtype=bool))
        free = nlp.freepos[g.idx] >= 0  # fixed columns (e.g. T of a fixed duration) are dropped
        both = free[:, :, None] & free[:, None, :]
        scale = max(1.0, float(np.abs(Hd).max()))
        assert np.max(np.abs(H - Hd)[both]) < 1e-7 * scale, g.name
        assert np.array_equal(H, np.swapaxes(H, 1, 2)), g.name
        assert not np.any(H[:, ~g.hess_mask]), g.name  # inside the declared Hessian pattern
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("name", ["helicopter-exp", "helicopter-exp-fixed-T"])
def test_coloured_hessians_match_one_column_per_colour(name):
    """Groups differenced with shared colours (the exp pairings' pose group ρ_{k+1}/v, the momentum group's
    blocks) give the same Hessian as one colour per column; columns fixed in every instance (the start
    pose, T of a fixed duration) are not perturbed and their rows stay zero."""
    if name.endswith("fixed-T"):
        setup = read(loads(_fixed_duration(SCENARIOS["helicopter-exp"], "min = 4.0\nmax = 9.0", 6.0)))
        nlp = assemble(setup.model, setup.spec)
        z = nlp.reduce(initial_guess(setup.model, setup.spec))
        z = z + np.random.default_rng(11).normal(scale=0.05, size=z.shape) * np.maximum(1.0, np.abs(z))
    else:
        nlp, z = perturbed_problem(name, seed=11, large=True)
    y = nlp.full(z)
    rng = np.random.default_rng(12)
    shared = skipped = 0
    for g in nlp.constraints:
        if g.hess is not None or g.linear:
            continue
        X = y[g.idx]
        lam = rng.normal(size=(g.K, g.m))
        cols = np.flatnonzero(g.nonlinear)
        shared += len(np.unique(g.hess_colors[cols])) < len(cols)
        skipped += int(np.sum(g.nonlinear & ~g.active))
        Hd = fd_hessian_colored(lambda Xb, pb: g.jacobian(Xb, pb), X, g.params, lam, [np.array([c]) for c in cols],
                                g.hess_mask)
        H = g.hessian(X, lam)
        act = g.active[:, None] & g.active[None, :]
        assert np.max(np.abs(H - Hd)[:, act]) < 1e-7 * max(1.0, float(np.abs(Hd).max())), g.name
        assert not np.any(H[:, ~act]), g.name
    assert shared >= 2
    assert skipped >= (6 if name.endswith("fixed-T") else 3)  # ρ_0 of the start group; T of three groups when fixed


@pytest.mark.parametrize("form,exact", [(jets.CAY_FORM, so3.cay), (jets.B_CAY_FORM, se3.B_cay),
                                        (jets.B_CAY_PAPER_FORM, se3.B_cay_paper)], ids=["cay", "B_cay", "B_cay_paper"])
def test_rational_maps_value_and_derivatives(form, exact):
    rng = np.random.default_rng(13)
    w = np.concatenate([rng.normal(scale=1e-3, size=(5, 3)), rng.normal(scale=2.0, size=(5, 3)), np.zeros((1, 3))])
    G = rng.normal(size=(len(w), 3, 3))
    r = jets.RationalMap(w, form)
    assert np.allclose(r.value, exact(w), atol=1e-15)
    assert np.allclose(r.d, np.moveaxis(_fd_columns(exact, w), -1, 1), atol=1e-8)
    assert np.allclose(r.gradient(G), _fd_columns(lambda wb: np.einsum("bij,bij->b", G, exact(wb)), w), atol=1e-8)
    H = r.hessian(G)
    assert np.allclose(H, _fd_columns(lambda wb: jets.RationalMap(wb, form).gradient(G), w), atol=1e-8)
    assert np.allclose(H, np.swapaxes(H, 1, 2), rtol=0, atol=1e-14 * np.abs(H).max())


@pytest.mark.parametrize("T_free", [True, False], ids=["free-T", "fixed-T"])
@pytest.mark.parametrize("method", ["vi-cay", "vi-cay-ln", "vi-exp-ln"])
def test_momentum_map_hessian_matches_differences_of_its_jacobian(method, T_free):
    """Jets of λ·C_τ(±hξ)ᵀ𝕀ξ against differences of the analytic momentum-map Jacobian (and ∂/∂T)."""
    from core.integrators import variational
    from core.dmoc.models.holonomic import momentum_lagrangian_hessian

    rng = np.random.default_rng(14)
    B, N = 8, 30
    I6 = np.array([3.0, 5.0, 4.0, 2.5, 2.5, 2.5])
    V = np.concatenate([rng.normal(scale=2.0, size=(B, 6)), rng.uniform(3, 12, (B, 1))], axis=1)
    sign = rng.choice([-1.0, 1.0], size=B)
    lam = rng.normal(size=(B, 6))

    def grad(Vb):
        out = np.empty((len(Vb), 7))
        for i in range(len(Vb)):
            h = sign[i] * Vb[i, 6] / N
            xi = Vb[i:i + 1, :6]
            J = variational.momentum_map_jacobian(method, h, xi, I6)[0]
            dT = np.einsum("ij,j->i", variational.PAIRINGS[method].K(h * xi, I6 * xi)[0], xi[0]) * sign[i] / N
            out[i] = lam[i] @ np.concatenate([J, dT[:, None]], axis=1)
        return out

    H = momentum_lagrangian_hessian(method, V[:, :6], V[:, 6], sign, lam, I6, N, T_free)
    n = 7 if T_free else 6
    Hd = _fd_columns(lambda Vb: grad(np.concatenate([Vb, V[:, n:]], axis=1))[:, :n], V[:, :n])
    assert H.shape == (B, n, n)
    assert np.max(np.abs(H - Hd)) < 1e-7 * max(1.0, np.abs(Hd).max())


def _car_step_hessian_jets(car, V, lam, N, alpha, T_free=True):
    """The reference for the closed form: Σ_i λ_i ∇²Φ_i of the car's explicit update by second-order jets
    (the formulas of ``carmodel.step_lagrangian_hessian``'s docstring, traced through ``core.dmoc.jets``)."""
    if T_free:
        sg, th, p, f, w, T = jets.Jet.variables(V)
        h = T * (1.0 / N)
    else:
        sg, th, p, f, w = jets.Jet.variables(V[:, :5])
        h = V[:, 5] / N
    hw = h * w
    sa = sg + hw.scale(alpha)
    u = (p + (h * f).scale(1.0 - alpha)) / ((sg * sa).scale(car.c) + car.a)
    hu = h * u
    z = (sa * hu).scale(0.5 * car.kappa)
    chord = (hu * jets.sinc(z, carlib._dsinc_over_z)).scale(car.wheel_radius)
    tm = th + z
    Lg = (hu.scale(lam[:, 0]) + hw.scale(lam[:, 1]) + z.scale(2.0 * lam[:, 2])
          + chord * (jets.cos(tm).scale(lam[:, 3]) + jets.sin(tm).scale(lam[:, 4]))
          + (h * f + (w * z).scale(2.0 * car.c / car.kappa)).scale(lam[:, 5]))
    return Lg.hessian()


def _car_points(regime: str, B: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(σ, θ, p, f, w, T) and λ: random; ω = 0 exactly (z = 0, the sinc series); every |z| below the series
    threshold; full lock; large (momenta, torques, durations and multipliers ×10–100, D ≥ a kept)."""
    V = np.column_stack([rng.normal(scale=0.3, size=B), rng.uniform(-4, 4, B), rng.normal(scale=400, size=B),
                         rng.normal(scale=300, size=B), rng.normal(scale=0.5, size=B), rng.uniform(2, 20, B)])
    lam = rng.normal(size=(B, 6))
    if regime == "straight":
        V[:, 0] = 0.0
        V[:, 4] = 0.0
    elif regime == "small-z":
        V[:, 0] *= 1e-3
        V[:, 4] *= 1e-3
    elif regime == "full-lock":
        V[:, 0] = np.tan(0.6) * np.sign(V[:, 0])
    elif regime == "large":
        V[:, 4] = np.abs(V[:, 4]) * np.sign(V[:, 0])   # σ and σ_{k+α} of one sign: D ≥ a (well conditioned)
        V[:, 2:4] *= 10.0
        V[:, 5] *= 10.0
        lam *= rng.uniform(10, 100, size=(B, 1))
    return V, lam


@pytest.mark.parametrize("T_free", [True, False], ids=["free-T", "fixed-T"])
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("regime", ["random", "straight", "small-z", "full-lock", "large", "mixed"])
def test_car_step_hessian_closed_form_matches_the_jets(regime, alpha, T_free):
    rng = np.random.default_rng(16)
    car = carlib.Car.preset("hatchback")
    B, N = 40, 40
    if regime == "mixed":    # one batch across the threshold, with z = 0 in it
        V, lam = _car_points("random", B, rng)
        V[::3, [0, 4]] *= 1e-3
        V[::5, [0, 4]] = 0.0
    else:
        V, lam = _car_points(regime, B, rng)
    H = carmodel.step_lagrangian_hessian(car, V, lam, N, alpha, T_free)
    Hj = _car_step_hessian_jets(car, V, lam, N, alpha, T_free)
    n = 6 if T_free else 5
    assert H.shape == (B, n, n)
    scale = np.abs(Hj).max(axis=(1, 2), keepdims=True)
    assert np.all(np.abs(H - Hj) <= 1e-12 * scale)
    assert np.array_equal(H, np.swapaxes(H, 1, 2))


def test_car_step_hessian_with_fixed_duration_is_the_block_of_the_free_one():
    car = carlib.Car.preset("hatchback")
    rng = np.random.default_rng(15)
    V = np.column_stack([rng.normal(scale=0.3, size=9), rng.uniform(-4, 4, 9), rng.normal(scale=400, size=9),
                         rng.normal(scale=300, size=9), rng.normal(scale=0.5, size=9), rng.uniform(2, 20, 9)])
    lam = rng.normal(size=(9, 6))
    H6 = carmodel.step_lagrangian_hessian(car, V, lam, 40, 0.5)
    H5 = carmodel.step_lagrangian_hessian(car, V, lam, 40, 0.5, T_free=False)
    assert H5.shape == (9, 5, 5)
    assert np.allclose(H5, H6[:, :5, :5], rtol=1e-13, atol=1e-13 * np.abs(H6).max())


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("regime", ["random", "straight", "full-lock", "large"])
def test_car_step_hessian_matches_differences_of_the_analytic_jacobian(alpha, regime):
    car = carlib.Car.preset("hatchback")
    rng = np.random.default_rng(7)
    B, N = 12, 40
    V, lam = _car_points(regime, B, rng)

    def grad(Vb):
        s = np.zeros((len(Vb), 6))
        s[:, [1, 2, 5]] = Vb[:, :3]
        u = Vb[:, 3:5]
        G = np.empty((len(Vb), 6))
        for i in range(len(Vb)):
            h = Vb[i, 5] / N
            _, Js, Ju = carlib.step_jacobian(s[i:i + 1], u[i:i + 1], h, alpha, car)
            Jh = carmodel.step_dh(car, s[i:i + 1], u[i:i + 1], h, alpha) / N
            J = np.concatenate([Js[0][:, [1, 2, 5]], Ju[0], Jh[0][:, None]], axis=1)
            G[i] = lam[i] @ J
        return G

    H = carmodel.step_lagrangian_hessian(car, V, lam, N, alpha)
    Hd = _fd_columns(grad, V)
    assert np.max(np.abs(H - Hd)) < 1e-7 * max(1.0, np.abs(Hd).max())
    assert np.all(np.isfinite(H))


def test_jets_second_order_chain_rule():
    """f = sin(x0 x1)/(1 + x2²) + cos(x0) x2 + sinc(x1 − x2) against differences of its jet gradient."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(9, 3))
    X[0, 1] = X[0, 2]  # sinc at 0

    def jet(Xb):
        a, b, c = jets.Jet.variables(Xb)
        return (jets.sin(a * b) / (1.0 + c * c) + jets.cos(a) * c
                + jets.sinc(b - c, carlib._dsinc_over_z) - 2.0 * a + (3.0 - b).scale(Xb[:, 0]))

    f = jet(X)
    v = (np.sin(X[:, 0] * X[:, 1]) / (1 + X[:, 2] ** 2) + np.cos(X[:, 0]) * X[:, 2] - 2 * X[:, 0]
         + (3 - X[:, 1]) * X[:, 0])
    dz = X[:, 1] - X[:, 2]
    v += np.where(dz == 0, 1.0, np.sin(dz) / np.where(dz == 0, 1.0, dz))
    assert np.allclose(f.v, v, rtol=1e-14, atol=1e-14)
    # gradient (the scale by the constant X[:, 0] is not differentiated: treat it as fixed)
    const = X[:, 0].copy()

    def jet_fixed(Xb):
        a, b, c = jets.Jet.variables(Xb)
        return (jets.sin(a * b) / (1.0 + c * c) + jets.cos(a) * c
                + jets.sinc(b - c, carlib._dsinc_over_z) - 2.0 * a + (3.0 - b).scale(const))

    g = jet_fixed(X)
    assert np.allclose(g.g, _fd_columns(lambda Xb: jet_fixed(Xb).v, X), atol=1e-8)
    assert np.allclose(g.hessian(), _fd_columns(lambda Xb: jet_fixed(Xb).g, X), atol=1e-7)


def _box_points(rng, e):
    """Points in every region of a box: inside, near each face, edge and corner regions, far."""
    u = rng.uniform(-1, 1, size=(400, 3))
    pts = u * e * rng.choice([0.5, 1.3, 2.5], size=(400, 3))
    return pts


@pytest.mark.parametrize("kind", ["sphere", "capsule", "box"])
def test_distance_hessians_match_differences_of_gradients(kind):
    rng = np.random.default_rng(9)
    Q = so3.exp(np.array([0.3, -0.7, 1.1]))
    c = np.array([1.0, -2.0, 0.5])
    e = np.array([1.0, 0.6, 2.0])
    a, b = np.array([0.0, 0.0, 0.0]), np.array([2.0, 1.0, 3.0])
    if kind == "sphere":
        p = c + rng.normal(scale=2.0, size=(300, 3))
        dist, dh = (lambda q: sphere_distance(q, c, 0.7)), (lambda q: sphere_distance_hessian(q, c, 0.7))
    elif kind == "capsule":
        p = a + rng.uniform(-0.5, 1.5, size=(300, 1)) * (b - a) + rng.normal(scale=1.0, size=(300, 3))
        dist, dh = (lambda q: capsule_distance(q, a, b, 0.4)), (lambda q: capsule_distance_hessian(q, a, b, 0.4))
    else:
        p = c + _box_points(rng, e) @ Q.T
        dist, dh = (lambda q: box_distance(q, c, Q, e)), (lambda q: box_distance_hessian(q, c, Q, e))
    d, g, H = dh(p)
    d0, g0 = dist(p)
    assert np.array_equal(d, d0) and np.array_equal(g, g0)  # the same expressions on the same arrays
    Hd = _fd_columns(lambda q: dist(q)[1], p, step=1e-7)
    # skip points within the differencing step of a kink (box medial planes and faces, capsule ends)
    smooth = np.all(np.abs(Hd - np.swapaxes(Hd, 1, 2)) < 1e-5, axis=(1, 2)) & (np.abs(Hd).max(axis=(1, 2)) < 1e4)
    assert smooth.mean() > 0.9
    assert np.max(np.abs(H - Hd)[smooth]) < 1e-5
    if kind == "box":
        q = (p - c) @ Q
        inside = np.all(np.abs(q) < e, axis=1)
        corner = np.sum(np.abs(q) > e, axis=1) == 3
        assert inside.any() and corner.any()
        assert not np.any(H[inside])


def test_point_curvatures_match_differences_of_point_jacobians():
    rng = np.random.default_rng(10)
    body = rng.normal(size=(20, 3))
    w = rng.normal(size=(20, 3))
    X2 = rng.normal(scale=2.0, size=(20, 3))
    H2 = se2_point_curvature(X2, body, w)
    Hd2 = _fd_columns(lambda Xb: np.einsum("bi,bij->bj", w, se2_point_map(Xb, body)[1]), X2)
    assert np.allclose(H2, Hd2, atol=1e-7)
    model = HolonomicModel.__new__(HolonomicModel)
    Rref = so3.exp(rng.normal(size=(20, 3)))
    for scale in (1e-3, 1.5):  # near the chart centre and at large rotations
        X3 = np.concatenate([rng.normal(scale=scale, size=(20, 3)), rng.normal(size=(20, 3))], axis=1)
        H3 = model.point_curvature(X3, body, w, Rref)
        Hd3 = _fd_columns(lambda Xb: np.einsum("bi,bij->bj", w, model.point_map(Xb, body, Rref)[1]), X3)
        assert np.allclose(H3, Hd3, atol=1e-7)
        assert np.allclose(H3, np.swapaxes(H3, 1, 2), atol=1e-14)


def test_last_call_memo_hits_only_at_the_same_point_and_params():
    calls = []

    def f(X, p):
        calls.append(1)
        return X * p

    m = LastCall(f)
    X, p = np.arange(6.0).reshape(3, 2), np.ones((3, 1))
    a = m(X, p)
    assert m(X.copy(), p) is a and len(calls) == 1          # same values, same params: remembered
    X2 = X.copy()
    X2[1, 1] += 1e-12
    m(X2, p)
    assert len(calls) == 2                                   # another point
    m(X2, p.copy())
    assert len(calls) == 3                                   # other params (e.g. tiled for differences)
    X2[0, 0] = 99.0                                          # the caller mutates its array: still a miss
    assert m(X2, p.copy())[0, 0] == 99.0
