"""core.lie.so3 and the scalar coefficients of core.lie._series.

References: scipy.linalg.expm/logm, power series in ŵ, central finite differences,
exact Taylor coefficients and 120-digit values (see tests/core/conftest.py).
Angles run from exactly 0 through the series regime, across the 0.25 series
threshold and up to π − 1e-6. Tolerances are norm-relative (``assert_close``).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given
from hypothesis import strategies as st

from core.lie import _series as S
from core.lie import so3
from tests.core.conftest import (COEFFICIENT_NAMES, EPS, GRID_ANGLES, LIE_SETTINGS,
                                 LIE_SETTINGS_SLOW, NEAR_PI, SERIES_THRESHOLD, angles,
                                 assert_close, assert_finite, coefficient_condition,
                                 coefficient_reference, random_unit, right_trivialised_fd,
                                 series_dexp, series_dexp_inv, series_exp_minus_identity,
                                 so3_vectors, unit_vectors, vectors)

I3 = np.eye(3)


def _skew(M: np.ndarray) -> np.ndarray:
    return (M - np.swapaxes(M, -1, -2)) / 2


def _w(theta: float, seed: int = 0) -> np.ndarray:
    return theta * random_unit(np.random.default_rng(seed))


# ---------------------------------------------------------------------------
# hat / vee
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(3, 100.0), vectors(3, 100.0))
def test_hat_is_cross_product_and_vee_inverts_it(w, u):
    W = so3.hat(w)
    assert np.array_equal(W, -W.T)
    assert np.array_equal(so3.vee(W), w)
    assert_close(W @ u, np.cross(w, u),
                 rtol=0, atol=4 * EPS * np.linalg.norm(w) * np.linalg.norm(u))


@LIE_SETTINGS
@given(vectors(3), st.lists(st.floats(-10, 10), min_size=6, max_size=6))
def test_vee_takes_the_skew_part(w, s):
    a, b, c, d, e, f = s
    sym = np.array([[a, b, c], [b, d, e], [c, e, f]])
    assert_close(so3.vee(so3.hat(w) + sym), w,
                 rtol=0, atol=4 * EPS * (np.abs(s).max() + np.abs(w).max()))


def test_norm2():
    w = np.array([[3.0, 4.0, 12.0], [0.0, 0.0, 0.0]])
    assert np.array_equal(so3.norm2(w), [169.0, 0.0])


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_matches_expm_on_the_angle_grid(theta):
    w = _w(theta)
    R = so3.exp(w)
    assert_close(R, sla.expm(so3.hat(w)), rtol=4e-15)
    # For small θ the skew part (sin θ/θ) ŵ must be accurate relative to its own size,
    # however small; the symmetric O(θ²) part cannot be, next to the 1 on the diagonal.
    dev = series_exp_minus_identity(so3.hat(w))
    if theta <= 1:
        assert_close(_skew(R), _skew(dev), rtol=4 * EPS)
    assert_close(R - I3, dev, rtol=0, atol=4 * EPS)


@LIE_SETTINGS
@given(so3_vectors())
def test_exp_matches_expm_and_is_a_rotation(w):
    R = so3.exp(w)
    assert_close(R, sla.expm(so3.hat(w)), rtol=4e-15)
    assert_close(R.T @ R, I3, rtol=8 * EPS)
    assert abs(np.linalg.det(R) - 1.0) < 8 * EPS
    assert_close(R @ w, w, rtol=0, atol=4 * EPS * np.linalg.norm(w))  # the axis is fixed


@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_log_inverts_exp_on_the_angle_grid(theta):
    w = _w(theta, seed=1)
    assert_close(so3.log(so3.exp(w)), w, rtol=4 * EPS)


@LIE_SETTINGS
@given(so3_vectors())
def test_log_inverts_exp(w):
    assert_close(so3.log(so3.exp(w)), w, rtol=4 * EPS)


@pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning:scipy")  # logm near I
@LIE_SETTINGS_SLOW
@given(so3_vectors(max_angle=3.0))
def test_log_matches_logm(w):
    R = so3.exp(w)
    L = sla.logm(R)
    assert_close(np.imag(L), np.zeros((3, 3)), rtol=0, atol=1e-14)
    assert_close(so3.log(R), so3.vee(np.real(L)), rtol=0, atol=1e-14)


@LIE_SETTINGS
@given(unit_vectors)
def test_log_of_half_turn(n):
    """A rotation by exactly π has two logs ±πn: either is fine, and exp must give R back."""
    R = 2 * np.outer(n, n) - I3  # rotation by π about n, built without trigonometry
    w = so3.log(R)
    assert abs(np.linalg.norm(w) - np.pi) < 8 * EPS
    assert_close(np.abs(w @ n), np.pi, rtol=8 * EPS)
    assert_close(so3.exp(w), R, rtol=8 * EPS)


@LIE_SETTINGS
@given(so3_vectors(min_angle=np.pi - 1e-3), st.floats(1e-15, 1e-3))
def test_log_continuous_through_pi(w, extra):
    """Past π the principal log jumps to the other side: log(exp((π + ε)n)) = −(π − ε)n."""
    n = w / np.linalg.norm(w)
    beyond = (np.pi + extra) * n
    assert_close(so3.log(so3.exp(beyond)), beyond - 2 * np.pi * n, rtol=8 * EPS)


# ---------------------------------------------------------------------------
# Cayley
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(st.one_of(so3_vectors(), vectors(3, 100.0)))
def test_cay_is_the_matrix_cayley_transform(w):
    W = so3.hat(w)
    ref = np.linalg.solve(I3 - W / 2, I3 + W / 2)
    R = so3.cay(w)
    assert_close(R, ref, rtol=8 * EPS * (1 + np.linalg.norm(w)))
    assert_close(R.T @ R, I3, rtol=4 * EPS)
    if np.linalg.norm(w) <= 1:  # small rotations: the skew part to its own relative accuracy
        assert_close(_skew(R), _skew(ref), rtol=8 * EPS, atol=1e-300)  # (atol: subnormal w)


@LIE_SETTINGS
@given(st.one_of(so3_vectors(), vectors(3, 100.0)))
def test_cay_inv_inverts_cay(w):
    # cay_inv is ill-conditioned as the rotation angle 2 atan(|w|/2) nears π.
    cond = 1 + so3.norm2(w) / 4
    assert_close(so3.cay_inv(so3.cay(w)), w, rtol=8 * EPS * cond)


@LIE_SETTINGS
@given(so3_vectors(max_angle=np.pi - 1e-3))
def test_cay_of_cay_inv(w):
    R = so3.exp(w)
    assert_close(so3.cay(so3.cay_inv(R)), R, rtol=2e-14 / (np.pi - np.linalg.norm(w)))


@LIE_SETTINGS
@given(so3_vectors())
def test_dcay_matches_finite_differences_and_dcay_inv_inverts_it(w):
    D = so3.dcay(w)
    assert_close(D, right_trivialised_fd(so3.cay, so3.vee, w), rtol=1e-10)
    assert_close(so3.dcay_inv(w) @ D, I3, rtol=8 * EPS * (1 + so3.norm2(w)))
    assert_close(so3.dcay_inv(w), I3 - so3.hat(w) / 2 + np.outer(w, w) / 4, rtol=4 * EPS)


@LIE_SETTINGS
@given(so3_vectors())
def test_B_cay_is_the_inverse_of_I_minus_half_hat(w):
    assert_close(so3.B_cay(w), np.linalg.inv(I3 - so3.hat(w) / 2), rtol=8 * EPS)
    ref = 2 / (4 + so3.norm2(w)) * (2 * I3 + so3.hat(w))
    assert_close(so3.B_cay_paper(w), ref, rtol=4 * EPS)


# ---------------------------------------------------------------------------
# dexp and dexp⁻¹
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_dexp_and_inverse_match_series_on_the_angle_grid(theta):
    w = _w(theta, seed=2)
    W = so3.hat(w)
    # Exact at 0, no loss of accuracy at 1e-8: the first-order (skew) part ŵ/2 relative to
    # its own size; the O(θ²) symmetric part to round-off next to the 1 on the diagonal.
    # (Above the 0.25 threshold (1 − cos θ)/θ² loses ≲ 8ε/θ² to cancellation.)
    skew_rtol = 4 * EPS * (1 + (2 / theta**2 if theta >= SERIES_THRESHOLD else 0))
    for got, ref in ((so3.dexp(w), series_dexp(W)), (so3.dexp_inv(w), series_dexp_inv(W))):
        assert_close(_skew(got), _skew(ref), rtol=skew_rtol)
        assert_close(got, ref, rtol=4 * EPS)
    assert_close(so3.dexp_inv(w) @ so3.dexp(w), I3, rtol=8 * EPS)
    if theta == 0:
        for f in (so3.exp, so3.dexp, so3.dexp_inv, so3.cay, so3.dcay, so3.dcay_inv,
                  so3.B_cay, so3.B_exp):
            assert np.array_equal(f(w), I3), f


@LIE_SETTINGS
@given(so3_vectors())
def test_dexp_matches_series_and_finite_differences(w):
    D = so3.dexp(w)
    assert_close(D, series_dexp(so3.hat(w)), rtol=4e-15)
    assert_close(D, right_trivialised_fd(so3.exp, so3.vee, w), rtol=1e-10)
    assert so3.B_exp is so3.dexp
    # Right vs left trivialisation: dexp_ω = exp(ω) dexp_{−ω}; and dexp_ω ω = ω.
    assert_close(D, so3.exp(w) @ so3.dexp(-w), rtol=8 * EPS)
    assert_close(D @ w, w, rtol=0, atol=4 * EPS * np.linalg.norm(w))


@LIE_SETTINGS
@given(so3_vectors())
def test_dexp_inv_is_the_inverse_and_matches_bernoulli_series(w):
    Di = so3.dexp_inv(w)
    assert_close(Di @ so3.dexp(w), I3, rtol=8 * EPS)
    assert_close(Di, np.linalg.inv(so3.dexp(w)), rtol=8 * EPS * np.linalg.cond(so3.dexp(w)))
    assert_close(Di, series_dexp_inv(so3.hat(w)), rtol=1e-14)


# ---------------------------------------------------------------------------
# Continuity across the series threshold, at the level of the maps
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("f", [so3.exp, so3.dexp, so3.dexp_inv, so3.log, so3.cay])
def test_maps_continuous_across_series_threshold(f):
    n = random_unit(np.random.default_rng(3))
    t = SERIES_THRESHOLD
    thetas = [t - 1e-9, np.nextafter(t, 0), t, np.nextafter(t, 1), t + 1e-9]
    if f is so3.log:
        vals = [f(so3.exp(th * n)) / th for th in thetas]
    else:
        vals = [f(th * n) for th in thetas]
    for a, b in zip(vals, vals[1:]):
        assert_close(a, b, rtol=4 * EPS + 2e-9)  # the map moves by O(1e-9) between the angles
    for a, b in zip(vals[1:3], vals[2:4]):  # adjacent floats: pure rounding noise
        assert_close(a, b, rtol=8 * EPS)


# ---------------------------------------------------------------------------
# Batching and zero
# ---------------------------------------------------------------------------
VECTOR_FUNCS = [so3.hat, so3.exp, so3.cay, so3.dexp, so3.dexp_inv, so3.B_cay, so3.B_cay_paper,
                so3.dcay, so3.dcay_inv, so3.norm2]
MATRIX_FUNCS = [so3.vee, so3.log, so3.cay_inv]


@pytest.mark.parametrize("f", VECTOR_FUNCS + MATRIX_FUNCS, ids=lambda f: f.__name__)
def test_batched_equals_loop_and_zero_is_finite(f):
    rng = np.random.default_rng(4)
    scales = np.array([0.0, 1e-9, 1e-5, 0.2, 0.3, 1.0, 2.5, 3.1])  # both branches in one batch
    w = random_unit(rng, (2, 4)) * scales.reshape(2, 4, 1)
    x = so3.exp(w) if f in MATRIX_FUNCS else w
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)  # batched einsum/matmul may round differently
    x0 = np.eye(3) if f in MATRIX_FUNCS else np.zeros(3)
    assert_finite(f(x0))
    assert_finite(f(np.zeros((0,) + x0.shape)))


def test_zero_gives_exact_values():
    z = np.zeros(3)
    assert np.array_equal(so3.log(I3), z)
    assert np.array_equal(so3.cay_inv(I3), z)
    assert np.array_equal(so3.B_cay_paper(z), I3)


# ---------------------------------------------------------------------------
# _series coefficients
# ---------------------------------------------------------------------------
# Error model of each direct formula just above the threshold: the cancelling terms
# are O(1) with O(ε) errors, so the relative error is ≲ B ε / θᵖ (derived by hand
# from the formula, e.g. k5 = (1/β + γ − 2)/θ⁴ with 1/β, γ ≈ 1 and value 1/360:
# ≈ 5 · 360 ε / θ⁴). On top of that no implementation beats ε × condition number.
CANCELLATION = {"sinc": (0, 0), "cosc": (4, 2), "k1": (12, 2), "k2": (24, 4), "k3": (240, 4),
                "k4": (24, 2), "k5": (1800, 4), "inv_sinc": (0, 0)}


def _allowed(name: str, theta: float) -> float:
    B, p = CANCELLATION[name]
    cancel = B / theta**p if theta >= SERIES_THRESHOLD else 0.0
    return EPS * (4 + 2 * coefficient_condition(name, theta) + 2 * cancel)


@pytest.mark.parametrize("name", COEFFICIENT_NAMES)
def test_coefficients_against_high_precision(name):
    f = getattr(S, name)
    thetas = [0.0, 1e-150, 1e-12, 1e-8, 1e-4, 0.01, 0.1, 0.2, 0.249, np.nextafter(0.25, 0),
              0.25, np.nextafter(0.25, 1), 0.251, 0.3, 0.5, 1.0, 2.0, 3.0, NEAR_PI]
    for th in thetas:
        t2 = th * th
        ref = coefficient_reference(name, t2)
        got = float(f(np.array(t2)))
        assert abs(got - ref) <= _allowed(name, th) * abs(ref), (name, th, got, ref)


@pytest.mark.parametrize("name", COEFFICIENT_NAMES)
def test_coefficients_series_branch_is_correctly_rounded(name):
    """Below the threshold the Horner series must be as good as the float format allows."""
    f = getattr(S, name)
    t2 = np.linspace(0, SERIES_THRESHOLD**2, 200, endpoint=False)
    got = f(t2)
    ref = np.array([coefficient_reference(name, x) for x in t2])
    rel = np.abs(got - ref) / np.abs(ref)
    assert rel.max() <= 4 * EPS, (name, rel.max(), np.sqrt(t2[rel.argmax()]))


@pytest.mark.parametrize("name", COEFFICIENT_NAMES)
def test_coefficients_continuous_across_threshold(name):
    f = getattr(S, name)
    t2 = SERIES_THRESHOLD**2
    below, at, above = f(np.array([np.nextafter(t2, 0), t2, np.nextafter(t2, 1)]))
    # Adjacent floats: the function itself moves by ~ε·cond, the rest is each branch's error.
    tol = 2 * _allowed(name, SERIES_THRESHOLD) * abs(at)
    assert abs(below - at) <= tol and abs(above - at) <= tol, (name, below, at, above)


@LIE_SETTINGS
@given(st.sampled_from(COEFFICIENT_NAMES), angles(max_angle=3.0))
def test_coefficients_random_angles(name, theta):
    t2 = theta * theta
    got = float(getattr(S, name)(np.array(t2)))
    ref = coefficient_reference(name, t2)
    assert abs(got - ref) <= _allowed(name, theta) * abs(ref)


def test_coefficients_batched_and_finite_at_zero():
    t2 = np.array([[0.0, 1e-16], [0.0625, 4.0]])
    for name in COEFFICIENT_NAMES:
        f = getattr(S, name)
        out = f(t2)
        assert out.shape == (2, 2)
        assert_finite(out)
        # elementwise, but a batch and single values may take different SIMD paths on other CPUs
        np.testing.assert_allclose(out, [[f(x) for x in row] for row in t2], rtol=4 * EPS, atol=0)
        assert float(f(0.0)) == float(EXACT_CONSTANT[name])


EXACT_CONSTANT = {"sinc": 1, "cosc": 0.5, "k1": 1 / 6, "k2": -1 / 12, "k3": -1 / 60,
                  "k4": 1 / 12, "k5": 1 / 360, "inv_sinc": 1}
