"""core.lie.se2: v = (angular, vx, vy); 3×3 homogeneous matrices; right-trivialised tangents.

References: scipy.linalg.expm/logm of v̂, the matrix Cayley transform, central finite
differences, the discrete Noether identity, and the embedding of SE(2) in SE(3)
as rotations about z (ξ = (0, 0, v¹, v², v³, 0)), which ties the two modules together.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given
from hypothesis import strategies as st

from core.lie import se2, se3
from tests.core.conftest import (EPS, GRID_ANGLES, LD_EPS, LIE_SETTINGS, LIE_SETTINGS_SLOW,
                                 NEAR_PI, SERIES_THRESHOLD, assert_close, assert_finite,
                                 expm_extended, right_trivialised_fd, se2_twists, series_dexp,
                                 series_dexp_inv, vectors)

I3 = np.eye(3)
SUB = [2, 3, 4]  # (ω_z, v_x, v_y) inside the SE(3) twist


def _embed(v: np.ndarray) -> np.ndarray:
    return np.array([0.0, 0.0, v[0], v[1], v[2], 0.0])


def _sub_group(g4: np.ndarray) -> np.ndarray:
    """The planar 3×3 part of a 4×4 pose that rotates about z and translates in the xy plane."""
    return g4[np.ix_([0, 1, 3], [0, 1, 3])]


def _v(theta: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([[theta * rng.choice([-1.0, 1.0])], 3 * rng.normal(size=2)])


# ---------------------------------------------------------------------------
# hat / vee, poses
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(3, 100.0))
def test_hat_vee_round_trip_and_embedding(v):
    X = se2.hat(v)
    assert np.array_equal(se2.vee(X), v)
    assert np.array_equal(X, [[0, -v[0], v[1]], [v[0], 0, v[2]], [0, 0, 0]])
    assert np.array_equal(X, _sub_group(se3.hat(_embed(v))))


@LIE_SETTINGS
@given(st.floats(-NEAR_PI, NEAR_PI), vectors(2))
def test_pose_round_trip(theta, xy):
    p = np.concatenate([[theta], xy])
    g = se2.from_pose(p)
    assert_close(se2.to_pose(g), p, rtol=4 * EPS, atol=4 * EPS)
    assert_close(g[:2, :2].T @ g[:2, :2], np.eye(2), rtol=4 * EPS)


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_and_log_on_the_angle_grid(theta):
    v = _v(theta, seed=1)
    g = se2.exp(v)
    assert_close(g, sla.expm(se2.hat(v)), rtol=4e-15)
    assert_close(se2.log(g), v, rtol=8 * EPS)
    if theta <= 1e-4:  # first-order deviation from I right relative to its size
        assert_close(g[1, 0], np.sin(v[0]), rtol=2 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_exp_matches_expm_and_se3(v):
    g = se2.exp(v)
    assert_close(g, sla.expm(se2.hat(v)), rtol=4e-15)
    assert_close(g, _sub_group(se3.exp(_embed(v))), rtol=4 * EPS)
    a = v[0]
    if abs(a) > 0.1:  # the closed form of equations.md, where it is accurate
        x = (v[1] * np.sin(a) - v[2] * (1 - np.cos(a))) / a
        y = (v[1] * (1 - np.cos(a)) + v[2] * np.sin(a)) / a
        assert_close(se2.to_pose(g), [a, x, y], rtol=16 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_log_inverts_exp(v):
    assert_close(se2.log(se2.exp(v)), v, rtol=8 * EPS)


@pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning:scipy")  # logm near I
@LIE_SETTINGS_SLOW
@given(se2_twists(max_angle=3.0))
def test_log_matches_logm(v):
    L = sla.logm(se2.exp(v))
    assert_close(np.imag(L), np.zeros((3, 3)), rtol=0, atol=1e-14 * max(1.0, np.abs(v).max()))
    assert_close(se2.log(se2.exp(v)), se2.vee(np.real(L)), rtol=1e-14, atol=1e-14)


# ---------------------------------------------------------------------------
# Cayley
# ---------------------------------------------------------------------------
def _appendix_b(v: np.ndarray) -> np.ndarray:
    a, b, c = v
    return np.array([[4 - a * a, -4 * a, 4 * b - 2 * a * c],
                     [4 * a, 4 - a * a, 4 * c + 2 * a * b],
                     [0, 0, 4 + a * a]]) / (4 + a * a)


@LIE_SETTINGS
@given(st.one_of(se2_twists(), vectors(3, 100.0)))
def test_cay_is_the_matrix_cayley_transform(v):
    X = se2.hat(v)
    g = se2.cay(v)
    assert_close(g, np.linalg.solve(I3 - X / 2, I3 + X / 2), rtol=16 * EPS)
    assert_close(g, _appendix_b(v), rtol=16 * EPS)
    # (so3.B_cay forms its I coefficient as 1 − θ²/(4 + θ²): absolute error ~ε|v| for θ ≫ 2)
    assert_close(g, _sub_group(se3.cay(_embed(v))), rtol=16 * EPS * max(1.0, np.abs(v).max()))
    assert_close(se2.cay_inv(g), v, rtol=16 * EPS * (1 + v[0] ** 2 / 4))


# ---------------------------------------------------------------------------
# ad / Ad
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(3), vectors(3))
def test_ad_is_the_matrix_commutator(u, w):
    U, W = se2.hat(u), se2.hat(w)
    scale = np.abs(u).max() * np.abs(w).max()
    assert_close(se2.hat(se2.ad(u) @ w), U @ W - W @ U, rtol=0, atol=8 * EPS * scale)
    assert_close(se2.ad(u), se3.ad(_embed(u))[np.ix_(SUB, SUB)], rtol=0, atol=0)


@LIE_SETTINGS
@given(se2_twists(), vectors(3))
def test_Ad_conjugates(v, eta):
    g = se2.exp(v)
    Ad = se2.Ad(g)
    size = np.abs(g).max() ** 2 * np.abs(eta).max()
    assert_close(se2.hat(Ad @ eta), g @ se2.hat(eta) @ np.linalg.inv(g),
                 rtol=0, atol=16 * EPS * size)
    assert_close(Ad, se3.Ad(se3.exp(_embed(v)))[np.ix_(SUB, SUB)], rtol=4 * EPS)
    assert_close(Ad, expm_extended(se2.ad(v)), rtol=8 * EPS + 1e3 * LD_EPS)


# ---------------------------------------------------------------------------
# C maps and the discrete Noether identity
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(se2_twists())
def test_C_cay_inverts_the_tangent_of_cay(v):
    C = se2.C_cay(v)
    assert_close(C @ right_trivialised_fd(se2.cay, se2.vee, v), I3, rtol=1e-9)
    ref = I3 - se2.ad(v) / 2
    ref[:, 0] += v[0] * v / 4
    assert_close(C, ref, rtol=4 * EPS)
    # The same map as the SE(3) C_cay restricted to the planar subalgebra.
    assert_close(C, se3.C_cay(_embed(v))[np.ix_(SUB, SUB)], rtol=4 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_C_exp_is_the_exact_dexp_inv(v):
    C = se2.C_exp(v)
    assert_close(C @ right_trivialised_fd(se2.exp, se2.vee, v), I3, rtol=1e-9)
    assert_close(C, series_dexp_inv(se2.ad(v)), rtol=1e-14)
    assert_close(np.linalg.inv(C), series_dexp(se2.ad(v)), rtol=1e-14)
    assert_close(C, se3.C_exp(_embed(v))[np.ix_(SUB, SUB)], rtol=8 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_truncated_C_maps(v):
    A = se2.ad(v)
    assert_close(se2.C_exp_series(v), I3 - A / 2 + A @ A / 12, rtol=4 * EPS)
    assert_close(se2.C_ln(v), I3 - A / 2, rtol=0, atol=0)
    assert_close(se2.C_exp_series(v), se3.C_exp_series(_embed(v))[np.ix_(SUB, SUB)], rtol=4 * EPS)


def _noether(tau, C, v):
    lhs = C(-v).T
    rhs = se2.Ad(tau(v)).T @ C(v).T
    return np.abs(lhs - rhs).max(), np.abs(lhs).max()


CONSISTENT = [(se2.cay, se2.C_cay), (se2.exp, se2.C_exp)]


@pytest.mark.parametrize("tau, C", CONSISTENT, ids=lambda f: f.__name__)
@LIE_SETTINGS
@given(v=st.one_of(se2_twists(), vectors(3, 100.0)))
def test_discrete_noether_identity(tau, C, v):
    if tau is se2.exp and abs(v[0]) >= NEAR_PI:
        v = np.concatenate([[np.clip(v[0], -NEAR_PI, NEAR_PI)], v[1:]])  # exp: below 2π only
    err, size = _noether(tau, C, v)
    assert err <= 16 * EPS * size, (err, size)


@pytest.mark.parametrize("tau, C", CONSISTENT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_discrete_noether_identity_on_the_angle_grid(tau, C, theta):
    err, size = _noether(tau, C, _v(theta, seed=2))
    assert err <= 16 * EPS * size, (err, size)


def test_noether_identity_fails_for_truncated_series():
    """C_exp_series is only the truncated dexp⁻¹: no exact conservation (documented)."""
    err, _ = _noether(se2.exp, se2.C_exp_series, np.array([1.0, 0.5, -0.7]))
    assert err > 1e-4


# ---------------------------------------------------------------------------
# Continuity, batching, zero
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("f", [se2.exp, se2.log], ids=lambda f: f.__name__)
def test_continuous_across_series_threshold(f):
    t = SERIES_THRESHOLD
    vs = [np.array([th, 1.5, -2.5]) for th in (np.nextafter(t, 0), t, np.nextafter(t, 1))]
    vals = [f(se2.exp(v)) if f is se2.log else f(v) for v in vs]
    for a, b in zip(vals, vals[1:]):
        assert_close(a, b, rtol=8 * EPS)


VECTOR_FUNCS = [se2.hat, se2.exp, se2.cay, se2.ad, se2.C_cay, se2.C_exp, se2.C_exp_series, se2.C_ln,
                se2.from_pose]
GROUP_FUNCS = [se2.vee, se2.log, se2.cay_inv, se2.Ad, se2.to_pose]


@pytest.mark.parametrize("f", VECTOR_FUNCS + GROUP_FUNCS, ids=lambda f: f.__name__)
def test_batched_equals_loop_and_zero_is_finite(f):
    rng = np.random.default_rng(3)
    angles = np.array([0.0, 1e-9, -1e-5, 0.2, -0.3, 1.0, -2.5, 3.1])
    v = np.concatenate([angles.reshape(2, 4, 1), 5 * rng.normal(size=(2, 4, 2))], axis=-1)
    x = se2.exp(v) if f in GROUP_FUNCS else v
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)
    x0 = I3 if f in GROUP_FUNCS else np.zeros(3)
    assert_finite(f(x0))
    assert_finite(f(np.zeros((0,) + x0.shape)))


def test_zero_gives_exact_values():
    z = np.zeros(3)
    for f in (se2.exp, se2.cay, se2.C_cay, se2.C_exp, se2.C_exp_series, se2.C_ln, se2.from_pose):
        assert np.array_equal(f(z), I3)
    for f in (se2.log, se2.cay_inv, se2.to_pose):
        assert np.array_equal(f(I3), z)
    assert np.array_equal(se2.Ad(I3), I3)
    v = np.array([0.0, 2.0, -3.0])  # pure translation
    assert np.array_equal(se2.exp(v), se2.cay(v))
    assert np.array_equal(se2.exp(v)[:2, 2], v[1:])
