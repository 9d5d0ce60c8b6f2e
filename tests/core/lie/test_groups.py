"""The group API of ``core.lie``, checked the same way on SO(3), SE(2) and SE(3).

Every group module exports DIM, identity, hat, vee, exp, log, cay, cay_inv, inverse, compose, act,
ad, Ad, dexp, dexp_inv, dcay, dcay_inv, dexp_inv_series and dexp_inv_linear, with right-trivialised
tangents (``core/lie/__init__.py``). The references share no code with ``core.lie``: scipy's
expm/logm of the hat matrix, the matrix Cayley transform by a linear solve, power series in ad,
matrix inverses and central finite differences (``tests/core/lie/references.py``). Angles run from exactly
0 through the series regime and across the 0.25 series threshold up to π − 1e-6 (π − 1e-12 for log).
Tolerances are multiples of ε scaled by the sizes involved; the few set by a reference's own error
(finite differences, scipy's expm and logm) say so.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given
from hypothesis import strategies as st

from core.lie import se2, se3, so3
from tests.core.lie.references import (EPS, GRID_ANGLES, LD_EPS, LIE_SETTINGS, LIE_SETTINGS_SLOW, NEAR_PI,
                                       SERIES_THRESHOLD, assert_close, assert_finite, expm_extended,
                                       random_unit, right_trivialised_fd, se2_twists, se3_twists,
                                       series_dexp, series_dexp_inv, so3_vectors, vectors)


@dataclass(frozen=True)
class Group:
    """A group module with what the tests need to know about it."""

    lie: ModuleType
    dim: int            # algebra dimension
    n: int              # matrix size
    points: int         # dimension of the space it acts on
    twists: Callable    # hypothesis strategy of algebra vectors, rotation angle ≤ max_angle
    rotation: slice     # the rotation coordinates of an algebra vector

    def twist(self, theta: float, seed: int = 0) -> np.ndarray:
        """A fixed algebra vector with rotation angle θ and a translation of size ~3."""
        rng = np.random.default_rng(seed)
        if self.lie is so3:
            return theta * random_unit(rng)
        if self.lie is se2:
            return np.concatenate([[theta * rng.choice([-1.0, 1.0])], 3 * rng.normal(size=2)])
        return np.concatenate([theta * random_unit(rng), 3 * rng.normal(size=3)])

    def angle(self, xi: np.ndarray) -> float:
        return float(np.linalg.norm(xi[self.rotation]))

    def homogeneous(self, p: np.ndarray) -> np.ndarray:
        """p as the vector g acts on by matrix product."""
        return p if self.lie is so3 else np.append(p, 1.0)


SO3 = Group(so3, 3, 3, 3, so3_vectors, slice(0, 3))
SE2 = Group(se2, 3, 3, 2, se2_twists, slice(0, 1))
SE3 = Group(se3, 6, 4, 3, se3_twists, slice(0, 3))
GROUPS = [pytest.param(SO3, id="so3"), pytest.param(SE2, id="se2"), pytest.param(SE3, id="se3")]


def each_group(test, settings=LIE_SETTINGS):
    """``test(G, data)`` for each group, drawing its random inputs from hypothesis's ``data``."""
    return pytest.mark.parametrize("G", GROUPS)(settings(given(data=st.data())(test)))


def each_group_slow(test):
    """:func:`each_group` with fewer examples, for a slow reference."""
    return each_group(test, LIE_SETTINGS_SLOW)


# Central differences with step h = 1e-3 and one Richardson step (references.right_trivialised_fd):
# round-off ≈ ε|τ|/h and a truncation error O(h⁴); measured worst 2.5e-12 of |dτ| on these twists.
FD_TOL = 100 * EPS / 1e-3

# scipy.linalg.expm (Padé 13 with scaling and squaring) is itself good to ~10ε on these matrices.
EXPM_RTOL = 18 * EPS
# log vs scipy.linalg.logm: logm's own error near the identity and at large angles.
LOGM_ATOL = 1e-14


def _max(a) -> float:
    return float(np.max(np.abs(a)))


def _product_atol(A: np.ndarray, B: np.ndarray) -> float:
    """Round-off of the product A B of n × n matrices: a few n ε |A| |B|."""
    return 4 * A.shape[-1] * EPS * _max(A) * _max(B)


def _inverse_atol(A: np.ndarray, B: np.ndarray) -> float:
    """Round-off of A B = I for a tangent map and its inverse: the product's, and that of the
    coefficients, which lose up to ~24ε/θ² to cancellation just above the series threshold."""
    return 4 * _product_atol(A, B)


def _fd_close(G: Group, tau, d, xi: np.ndarray) -> None:
    """d(ξ) against central differences of τ, within their round-off (relative to |τ|) and truncation."""
    assert_close(d(xi), right_trivialised_fd(tau, G.lie.vee, xi), rtol=FD_TOL, atol=FD_TOL * _max(tau(xi)))


# ---------------------------------------------------------------------------
# The API, hat / vee, identity
# ---------------------------------------------------------------------------
API = ("identity", "hat", "vee", "exp", "log", "cay", "cay_inv", "inverse", "compose", "act", "ad", "Ad",
       "dexp", "dexp_inv", "dcay", "dcay_inv", "dexp_inv_series", "dexp_inv_linear")


def test_every_group_exports_the_same_api():
    for name in API:
        arities = {len(inspect.signature(getattr(G.lie, name)).parameters) for G in (SO3, SE2, SE3)}
        assert len(arities) == 1, (name, arities)
    assert [G.lie.DIM for G in (SO3, SE2, SE3)] == [3, 3, 6]


@pytest.mark.parametrize("G", GROUPS)
def test_dim_and_identity(G):
    assert G.lie.DIM == G.dim
    assert G.lie.hat(np.zeros(G.dim)).shape == (G.n, G.n)
    assert np.array_equal(G.lie.identity(), np.eye(G.n))
    stack = G.lie.identity((2, 3))
    assert stack.shape == (2, 3, G.n, G.n) and np.array_equal(stack[1, 2], np.eye(G.n))
    stack[0, 0, 0, 0] = 5.0  # writable, and not shared with later calls
    assert np.array_equal(G.lie.identity((2, 3))[0, 0], np.eye(G.n))
    assert G.lie.identity(4).shape == (4, G.n, G.n)


@each_group
def test_hat_vee_round_trip(G, data):
    xi = data.draw(vectors(G.dim, 100.0))
    eta = data.draw(vectors(G.dim, 100.0))
    X = G.lie.hat(xi)
    assert np.array_equal(G.lie.vee(X), xi)
    assert np.array_equal(G.lie.hat(xi + eta), X + G.lie.hat(eta))  # hat only places entries
    assert np.array_equal(G.lie.hat(-xi), -X)


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@each_group
def test_exp_matches_expm_and_log_inverts_it(G, data):
    xi = data.draw(G.twists())
    g = G.lie.exp(xi)
    assert_close(g, sla.expm(G.lie.hat(xi)), rtol=EXPM_RTOL)
    assert_close(G.lie.log(g), xi, rtol=8 * EPS)
    assert_close(G.lie.exp(G.lie.log(g)), g, rtol=8 * EPS)


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_and_log_on_the_angle_grid(G, theta):
    xi = G.twist(theta, seed=1)
    g = G.lie.exp(xi)
    assert_close(g, sla.expm(G.lie.hat(xi)), rtol=EXPM_RTOL)
    assert_close(G.lie.log(g), xi, rtol=8 * EPS)


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("gap", [1e-3, 1e-6, 1e-9, 1e-12])
def test_log_inverts_exp_near_pi(G, gap):
    """The rotation angle read off near π, where the skew part of R vanishes (SE(2): |v¹| < π)."""
    for seed in range(4):
        xi = G.twist(np.pi - gap, seed=seed)
        assert_close(G.lie.log(G.lie.exp(xi)), xi, rtol=8 * EPS)


@pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning:scipy")  # logm near I
@each_group_slow
def test_log_matches_logm(G, data):
    xi = data.draw(G.twists(max_angle=3.0))
    L = sla.logm(G.lie.exp(xi))
    scale = max(1.0, _max(xi))
    assert_close(np.imag(L), np.zeros((G.n, G.n)), rtol=0, atol=LOGM_ATOL * scale)
    assert_close(G.lie.log(G.lie.exp(xi)), G.lie.vee(np.real(L)), rtol=LOGM_ATOL, atol=LOGM_ATOL)


@pytest.mark.parametrize("G", GROUPS)
def test_maps_continuous_across_series_threshold(G):
    """Adjacent floats around the 0.25 switch to the Taylor series: the maps move by rounding only."""
    base = G.twist(1.0, seed=3)
    base = base / G.angle(base)
    t = SERIES_THRESHOLD
    xis = [th * base for th in (np.nextafter(t, 0), t, np.nextafter(t, 1))]
    for f in (G.lie.exp, G.lie.dexp, G.lie.dexp_inv, G.lie.log):
        vals = [f(G.lie.exp(x)) if f is G.lie.log else f(x) for x in xis]
        for a, b in zip(vals, vals[1:]):
            assert_close(a, b, rtol=8 * EPS, msg=f.__name__)


# ---------------------------------------------------------------------------
# Cayley
# ---------------------------------------------------------------------------
def _matrix_cayley(G: Group, xi: np.ndarray) -> np.ndarray:
    X = G.lie.hat(xi)
    eye = np.eye(G.n)
    return np.linalg.solve(eye - X / 2, eye + X / 2)


@each_group
def test_cay_is_the_matrix_cayley_transform_and_cay_inv_inverts_it(G, data):
    xi = data.draw(st.one_of(G.twists(), vectors(G.dim, 100.0)))
    theta = G.angle(xi)
    g = G.lie.cay(xi)
    assert_close(g, _matrix_cayley(G, xi), rtol=16 * EPS * (1 + theta))
    # cay_inv is ill-conditioned as the rotation angle 2 atan(θ/2) nears π.
    assert_close(G.lie.cay_inv(g), xi, rtol=16 * EPS * (1 + theta**2 / 4))


@each_group
def test_cay_of_cay_inv(G, data):
    xi = data.draw(G.twists(max_angle=np.pi - 1e-3))
    g = G.lie.exp(xi)
    # cay_inv(g) has size 2 tan(θ/2) ≈ 4/(π − θ): its rounding, mapped back by cay, grows with it.
    assert_close(G.lie.cay(G.lie.cay_inv(g)), g, rtol=32 * EPS * (1 + 4 / (np.pi - G.angle(xi))))


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_cay_round_trips_on_the_angle_grid(G, theta):
    xi = G.twist(theta, seed=4)
    assert_close(G.lie.cay_inv(G.lie.cay(xi)), xi, rtol=16 * EPS * (1 + theta**2 / 4))
    g = G.lie.exp(xi)
    assert_close(G.lie.cay(G.lie.cay_inv(g)), g, rtol=32 * EPS * (1 + 4 / (np.pi - theta)))


# ---------------------------------------------------------------------------
# Group operations
# ---------------------------------------------------------------------------
@each_group
def test_inverse_compose_act_agree_with_matrices(G, data):
    g = G.lie.exp(data.draw(G.twists()))
    h = G.lie.exp(data.draw(G.twists()))
    p = data.draw(vectors(G.points))
    scale = max(1.0, _max(g))
    assert_close(G.lie.inverse(g), np.linalg.inv(g), rtol=8 * EPS * scale**2)
    assert_close(G.lie.compose(g, G.lie.inverse(g)), G.lie.identity(), rtol=0, atol=8 * EPS * scale**2)
    assert_close(G.lie.compose(g, h), g @ h, rtol=0, atol=_product_atol(g, h))
    gp = G.lie.act(g, p)
    assert gp.shape == (G.points,)
    size = scale * max(1.0, _max(p))
    assert_close(G.homogeneous(gp), g @ G.homogeneous(p), rtol=0, atol=4 * EPS * size)
    assert_close(G.lie.act(G.lie.compose(g, h), p), G.lie.act(g, G.lie.act(h, p)),
                 rtol=0, atol=16 * EPS * size * max(1.0, _max(h)))


@pytest.mark.parametrize("G", GROUPS)
def test_compose_and_act_broadcast(G):
    rng = np.random.default_rng(5)
    g = G.lie.exp(rng.normal(size=(4, G.dim)))
    h = G.lie.exp(rng.normal(size=G.dim))
    assert np.array_equal(G.lie.compose(g, h), np.stack([gi @ h for gi in g]))
    points = rng.normal(size=(7, G.points))
    moved = G.lie.act(g[1], points)
    assert moved.shape == (7, G.points)
    assert_close(moved, np.stack([G.lie.act(g[1], q) for q in points]), rtol=4 * EPS)
    assert G.lie.act(g[:, None], points).shape == (4, 7, G.points)
    with pytest.raises(ValueError, match="coordinates"):
        G.lie.act(g[1], np.zeros(G.points + 1))


# ---------------------------------------------------------------------------
# ad / Ad
# ---------------------------------------------------------------------------
@each_group
def test_ad_is_the_matrix_commutator(G, data):
    xi, eta = data.draw(vectors(G.dim)), data.draw(vectors(G.dim))
    X, Y = G.lie.hat(xi), G.lie.hat(eta)
    scale = _max(xi) * _max(eta)
    assert_close(G.lie.hat(G.lie.ad(xi) @ eta), X @ Y - Y @ X, rtol=0, atol=8 * EPS * scale)
    assert_close(G.lie.ad(xi) @ xi, np.zeros(G.dim), rtol=0, atol=4 * EPS * _max(xi) ** 2)


@each_group
def test_Ad_conjugates_and_integrates_ad(G, data):
    xi = data.draw(G.twists())
    eta = data.draw(vectors(G.dim))
    g = G.lie.exp(xi)
    Ad = G.lie.Ad(g)
    size = _max(g) ** 2 * _max(eta)
    assert_close(G.lie.hat(Ad @ eta), g @ G.lie.hat(eta) @ G.lie.inverse(g), rtol=0, atol=16 * EPS * size)
    # Ad_{exp ξ} = exp(ad_ξ); scipy's expm of the non-normal ad_ξ is only good to ~2e-14 near
    # |ω| = π, so the reference is an extended-precision exponential.
    assert_close(Ad, expm_extended(G.lie.ad(xi)), rtol=8 * EPS + 1e3 * LD_EPS)
    assert_close(G.lie.Ad(G.lie.inverse(g)), np.linalg.inv(Ad), rtol=16 * EPS * _max(Ad))


@each_group
def test_Ad_is_a_homomorphism(G, data):
    g, h = G.lie.exp(data.draw(G.twists())), G.lie.exp(data.draw(G.twists()))
    A, B = G.lie.Ad(g), G.lie.Ad(h)
    assert_close(G.lie.Ad(G.lie.compose(g, h)), A @ B, rtol=0, atol=4 * _product_atol(A, B))


# ---------------------------------------------------------------------------
# Tangent maps, right-trivialised: dτ_ξ δ = (Dτ(ξ)·δ) τ(ξ)⁻¹
# ---------------------------------------------------------------------------
@each_group
def test_dexp_matches_finite_differences_and_the_series(G, data):
    xi = data.draw(G.twists())
    D = G.lie.dexp(xi)
    _fd_close(G, G.lie.exp, G.lie.dexp, xi)
    assert_close(D, series_dexp(G.lie.ad(xi)), rtol=32 * EPS)
    assert_close(D @ xi, xi, rtol=8 * EPS)


@each_group
def test_dcay_matches_finite_differences_and_the_cayley_formula(G, data):
    xi = data.draw(st.one_of(G.twists(), vectors(G.dim, 100.0)))
    D = G.lie.dcay(xi)
    _fd_close(G, G.lie.cay, G.lie.dcay, xi)
    # dcay_ξ δ = (I − ξ̂/2)⁻¹ δ̂ (I + ξ̂/2)⁻¹, column by column.
    X, eye = G.lie.hat(xi), np.eye(G.n)
    left, right = np.linalg.inv(eye - X / 2), np.linalg.inv(eye + X / 2)
    ref = np.stack([G.lie.vee(left @ G.lie.hat(e) @ right) for e in np.eye(G.dim)], axis=-1)
    assert_close(D, ref, rtol=16 * EPS * (1 + G.angle(xi)))


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_tangent_maps_on_the_angle_grid(G, theta):
    xi = G.twist(theta, seed=2)
    A = G.lie.ad(xi)
    # Just above the series threshold the cancellation in the SE(3) coefficients costs ≈ 15ε.
    assert_close(G.lie.dexp(xi), series_dexp(A), rtol=32 * EPS)
    assert_close(G.lie.dexp_inv(xi), series_dexp_inv(A), rtol=32 * EPS)
    for D, Di in ((G.lie.dexp(xi), G.lie.dexp_inv(xi)), (G.lie.dcay(xi), G.lie.dcay_inv(xi))):
        assert_close(Di @ D, np.eye(G.dim), rtol=0, atol=_inverse_atol(Di, D))


@each_group
def test_inverse_tangents_invert_the_tangents(G, data):
    xi = data.draw(st.one_of(G.twists(), vectors(G.dim, 100.0).filter(lambda x: G.angle(x) < NEAR_PI)))
    eye = np.eye(G.dim)
    for D, Di in ((G.lie.dexp(xi), G.lie.dexp_inv(xi)), (G.lie.dcay(xi), G.lie.dcay_inv(xi))):
        assert_close(Di @ D, eye, rtol=0, atol=_inverse_atol(Di, D))
        assert_close(D @ Di, eye, rtol=0, atol=_inverse_atol(D, Di))
    assert_close(G.lie.dexp_inv(xi), series_dexp_inv(G.lie.ad(xi)), rtol=1e-14)


@each_group
def test_left_trivialised_tangent_is_the_right_one_at_minus_xi(G, data):
    """dτ_ξ = Ad_{τ(ξ)} dτ_{−ξ}: the right-trivialised tangent at ξ and the left one, dτ_{−ξ}."""
    xi = data.draw(G.twists())
    for tau, d in ((G.lie.exp, G.lie.dexp), (G.lie.cay, G.lie.dcay)):
        Ad, Dm = G.lie.Ad(tau(xi)), d(-xi)
        assert_close(d(xi), Ad @ Dm, rtol=0, atol=4 * _product_atol(Ad, Dm), msg=tau.__name__)


def _noether_residual(G: Group, tau, C, xi: np.ndarray) -> tuple[float, float]:
    """max|C(−ξ)ᵀ − Ad*_{τ(ξ)} C(ξ)ᵀ| and max|C(−ξ)ᵀ|, Ad*_g = Ad_gᵀ."""
    lhs = C(-xi).T
    rhs = G.lie.Ad(tau(xi)).T @ C(xi).T
    return _max(lhs - rhs), _max(lhs)


PAIRINGS = [pytest.param("exp", "dexp_inv", id="exp"), pytest.param("cay", "dcay_inv", id="cay")]


@pytest.mark.parametrize("tau, C", PAIRINGS)
@each_group
def test_discrete_noether_identity(G, tau, C, data):
    """dτ⁻¹(−ξ)ᵀ = Ad*_{τ(ξ)} dτ⁻¹(ξ)ᵀ: (τ, dτ⁻¹) conserves the discrete spatial momentum."""
    xi = data.draw(G.twists())
    err, size = _noether_residual(G, getattr(G.lie, tau), getattr(G.lie, C), xi)
    assert err <= 16 * EPS * size, (err, size)


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("tau, C", PAIRINGS)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_discrete_noether_identity_on_the_angle_grid(G, tau, C, theta):
    err, size = _noether_residual(G, getattr(G.lie, tau), getattr(G.lie, C), G.twist(theta, seed=5))
    assert err <= 16 * EPS * size, (err, size)


@each_group
def test_truncations_are_the_first_terms_of_dexp_inv(G, data):
    xi = data.draw(G.twists())
    A = G.lie.ad(xi)
    eye = np.eye(G.dim)
    assert np.array_equal(G.lie.dexp_inv_linear(xi), eye - 0.5 * A)
    assert_close(G.lie.dexp_inv_series(xi), eye - A / 2 + A @ A / 12, rtol=4 * EPS)


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("size", [0.3, 0.1, 0.03, 0.01])
def test_truncations_agree_with_dexp_inv_to_their_order(G, size):
    """dexp⁻¹ = I − ½ad + ad²/12 − ad⁴/720 + O(ad⁶) (B₃ = 0): the linear truncation is off by
    ad²/12 + O(ad⁴), the series one by −ad⁴/720 + O(ad⁶); each remainder is within twice its
    leading omitted term (the series converges like (|ad|/2π)²) plus the round-off of dexp⁻¹."""
    for seed in range(4):
        xi = size * G.twist(1.0, seed=seed) / 3  # |ξ| ≈ size
        A = G.lie.ad(xi)
        A2 = A @ A
        A4 = A2 @ A2
        exact = G.lie.dexp_inv(xi)
        roundoff = 8 * EPS * _max(exact)
        err_linear = exact - G.lie.dexp_inv_linear(xi) - A2 / 12
        assert _max(err_linear) <= 2 * _max(A4) / 720 + roundoff
        err_series = exact - G.lie.dexp_inv_series(xi) + A4 / 720
        assert _max(err_series) <= 2 * _max(A4 @ A2) / 30240 + roundoff


# ---------------------------------------------------------------------------
# Batching and zero
# ---------------------------------------------------------------------------
ALGEBRA_FUNCS = ["hat", "exp", "cay", "ad", "dexp", "dexp_inv", "dcay", "dcay_inv", "dexp_inv_series",
                 "dexp_inv_linear"]
GROUP_FUNCS = ["vee", "log", "cay_inv", "Ad", "inverse"]


def _batch(G: Group) -> np.ndarray:
    """(2, 4, dim) algebra vectors, rotation angles on both sides of the series threshold."""
    rng = np.random.default_rng(6)
    angles = np.array([0.0, 1e-9, 1e-5, 0.2, 0.3, 1.0, 2.5, 3.1]).reshape(2, 4)
    xi = 5 * rng.normal(size=(2, 4, G.dim))
    rot = xi[..., G.rotation]
    xi[..., G.rotation] = angles[..., None] * rot / np.linalg.norm(rot, axis=-1, keepdims=True)
    return xi


@pytest.mark.parametrize("G", GROUPS)
@pytest.mark.parametrize("name", ALGEBRA_FUNCS + GROUP_FUNCS)
def test_batched_equals_loop_and_zero_is_finite(G, name):
    f = getattr(G.lie, name)
    xi = _batch(G)
    x = G.lie.exp(xi) if name in GROUP_FUNCS else xi
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)  # batched einsum/matmul may round differently
    x0 = np.eye(G.n) if name in GROUP_FUNCS else np.zeros(G.dim)
    assert_finite(f(x0))
    assert f(np.zeros((0,) + x0.shape)).shape[0] == 0


@pytest.mark.parametrize("G", GROUPS)
def test_binary_maps_batched_equal_loop(G):
    xi = _batch(G)
    g, h = G.lie.exp(xi), G.lie.exp(xi[::-1, ::-1])
    p = np.random.default_rng(7).normal(size=(2, 4, G.points))
    assert np.array_equal(G.lie.compose(g, h), np.array([[g[i, j] @ h[i, j] for j in range(4)] for i in range(2)]))
    loop = np.array([[G.lie.act(g[i, j], p[i, j]) for j in range(4)] for i in range(2)])
    assert_close(G.lie.act(g, p), loop, rtol=4 * EPS)


@pytest.mark.parametrize("G", GROUPS)
def test_zero_gives_exact_values(G):
    z, eye, eye_alg = np.zeros(G.dim), np.eye(G.n), np.eye(G.dim)
    for f in (G.lie.exp, G.lie.cay):
        assert np.array_equal(f(z), eye), f.__name__
    for f in (G.lie.dexp, G.lie.dexp_inv, G.lie.dcay, G.lie.dcay_inv, G.lie.dexp_inv_series,
              G.lie.dexp_inv_linear):
        assert np.array_equal(f(z), eye_alg), f.__name__
    for f in (G.lie.log, G.lie.cay_inv):
        assert np.array_equal(f(eye), z), f.__name__
    assert np.array_equal(G.lie.Ad(eye), eye_alg)
    assert np.array_equal(G.lie.inverse(eye), eye)
    assert np.array_equal(G.lie.ad(z), np.zeros((G.dim, G.dim)))
