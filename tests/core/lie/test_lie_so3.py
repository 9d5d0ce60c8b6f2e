"""What only SO(3) has, and the scalar coefficients of core.lie._series.

The group API shared with SE(2) and SE(3) is checked in ``test_groups.py``. Here: the skew part of
vee, the relative accuracy of exp, cay and the tangent maps at small angles, the rotation by
exactly π, the closed form of dcay⁻¹, and the coefficients of ``_series`` against exact Taylor
coefficients and 120-digit values (tests/core/lie/references.py). Tolerances are norm-relative
(``assert_close``).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.lie import _series as S
from core.lie import so3
from tests.core.lie.references import (COEFFICIENT_NAMES, EPS, GRID_ANGLES, LIE_SETTINGS, NEAR_PI,
                                       SERIES_THRESHOLD, angles, assert_close, assert_finite,
                                       coefficient_condition, coefficient_reference, random_unit,
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


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_keeps_relative_accuracy_at_small_angles(theta):
    w = _w(theta)
    R = so3.exp(w)
    # For small θ the skew part (sin θ/θ) ŵ must be accurate relative to its own size,
    # however small; the symmetric O(θ²) part cannot be, next to the 1 on the diagonal.
    dev = series_exp_minus_identity(so3.hat(w))
    if theta <= 1:
        assert_close(_skew(R), _skew(dev), rtol=4 * EPS)
    assert_close(R - I3, dev, rtol=0, atol=4 * EPS)


@LIE_SETTINGS
@given(so3_vectors())
def test_exp_is_a_rotation_about_its_axis(w):
    R = so3.exp(w)
    assert_close(R.T @ R, I3, rtol=8 * EPS)
    assert abs(np.linalg.det(R) - 1.0) < 8 * EPS
    assert_close(R @ w, w, rtol=0, atol=4 * EPS * np.linalg.norm(w))  # the axis is fixed


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
def test_cay_is_a_rotation_accurate_at_small_angles(w):
    W = so3.hat(w)
    ref = np.linalg.solve(I3 - W / 2, I3 + W / 2)
    R = so3.cay(w)
    assert_close(R.T @ R, I3, rtol=4 * EPS)
    if np.linalg.norm(w) <= 1:  # small rotations: the skew part to its own relative accuracy
        assert_close(_skew(R), _skew(ref), rtol=8 * EPS, atol=1e-300)  # (atol: subnormal w)


@LIE_SETTINGS
@given(so3_vectors())
def test_dcay_inv_closed_form(w):
    assert_close(so3.dcay_inv(w), I3 - so3.hat(w) / 2 + np.outer(w, w) / 4, rtol=4 * EPS)
    assert_close(so3.dcay(w), 4 / (4 + w @ w) * (I3 + so3.hat(w) / 2), rtol=4 * EPS)


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


def test_theta2_is_the_squared_norm_over_the_last_axis():
    w = np.array([[3.0, 4.0, 12.0], [0.0, 0.0, 0.0]])
    assert np.array_equal(S.theta2(w), [169.0, 0.0])


EXACT_CONSTANT = {"sinc": 1, "cosc": 0.5, "k1": 1 / 6, "k2": -1 / 12, "k3": -1 / 60,
                  "k4": 1 / 12, "k5": 1 / 360, "inv_sinc": 1}
