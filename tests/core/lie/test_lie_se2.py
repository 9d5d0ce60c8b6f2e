"""What only SE(2) has: poses (θ, x, y), the closed forms of Appendix B, and SE(2) inside SE(3).

The group API shared with SO(3) and SE(3) is checked in ``test_groups.py``. Here every map is also
held to its SE(3) counterpart on the embedding of SE(2) as rotations about z
(ξ = (0, 0, v¹, v², v³, 0)), which ties the two modules together.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.lie import se2, se3
from tests.core.lie.references import (EPS, GRID_ANGLES, LIE_SETTINGS, NEAR_PI, assert_close, assert_finite,
                                       se2_twists, vectors)

I3 = np.eye(3)
SUB = [2, 3, 4]  # (ω_z, v_x, v_y) inside the SE(3) twist


def _embed(v: np.ndarray) -> np.ndarray:
    return np.array([0.0, 0.0, v[0], v[1], v[2], 0.0])


def _sub_group(g4: np.ndarray) -> np.ndarray:
    """The planar 3×3 part of a 4×4 pose that rotates about z and translates in the xy plane."""
    return g4[np.ix_([0, 1, 3], [0, 1, 3])]


def _sub_algebra(M6: np.ndarray) -> np.ndarray:
    """The (ω_z, v_x, v_y) block of a 6×6 map on se(3)."""
    return M6[np.ix_(SUB, SUB)]


def _v(theta: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([[theta * rng.choice([-1.0, 1.0])], 3 * rng.normal(size=2)])


# ---------------------------------------------------------------------------
# hat / vee, poses
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(3, 100.0))
def test_hat_entries_and_embedding(v):
    X = se2.hat(v)
    assert np.array_equal(X, [[0, -v[0], v[1]], [v[0], 0, v[2]], [0, 0, 0]])
    assert np.array_equal(X, _sub_group(se3.hat(_embed(v))))


@LIE_SETTINGS
@given(st.floats(-NEAR_PI, NEAR_PI), vectors(2))
def test_pose_round_trip(theta, xy):
    p = np.concatenate([[theta], xy])
    g = se2.from_pose(p)
    assert_close(se2.to_pose(g), p, rtol=4 * EPS, atol=4 * EPS)
    assert_close(g[:2, :2].T @ g[:2, :2], np.eye(2), rtol=4 * EPS)


@pytest.mark.parametrize("f", [se2.from_pose, se2.to_pose], ids=lambda f: f.__name__)
def test_poses_batched_equal_loop(f):
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(-3, 3, size=(2, 4, 1)), 5 * rng.normal(size=(2, 4, 2))], axis=-1)
    x = se2.from_pose(p) if f is se2.to_pose else p
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)
    assert_finite(f(np.zeros((0,) + x.shape[2:])))


# ---------------------------------------------------------------------------
# exp and Cayley: Appendix B's closed forms and SE(3)'s maps
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", [a for a in GRID_ANGLES if a <= 1e-4])
def test_exp_keeps_relative_accuracy_at_small_angles(theta):
    v = _v(theta, seed=1)
    assert_close(se2.exp(v)[1, 0], np.sin(v[0]), rtol=2 * EPS)  # first-order deviation from I


@LIE_SETTINGS
@given(se2_twists())
def test_exp_matches_se3_and_the_closed_form(v):
    g = se2.exp(v)
    assert_close(g, _sub_group(se3.exp(_embed(v))), rtol=4 * EPS)
    a = v[0]
    if abs(a) > 0.1:  # the closed form of equations.md, where it is accurate
        x = (v[1] * np.sin(a) - v[2] * (1 - np.cos(a))) / a
        y = (v[1] * (1 - np.cos(a)) + v[2] * np.sin(a)) / a
        assert_close(se2.to_pose(g), [a, x, y], rtol=16 * EPS)


def _appendix_b(v: np.ndarray) -> np.ndarray:
    a, b, c = v
    return np.array([[4 - a * a, -4 * a, 4 * b - 2 * a * c],
                     [4 * a, 4 - a * a, 4 * c + 2 * a * b],
                     [0, 0, 4 + a * a]]) / (4 + a * a)


@LIE_SETTINGS
@given(st.one_of(se2_twists(), vectors(3, 100.0)))
def test_cay_is_appendix_b_and_matches_se3(v):
    g = se2.cay(v)
    assert_close(g, _appendix_b(v), rtol=16 * EPS)
    # (se3.B_cay forms its I coefficient as 1 − θ²/(4 + θ²): absolute error ~ε|v| for θ ≫ 2)
    assert_close(g, _sub_group(se3.cay(_embed(v))), rtol=16 * EPS * max(1.0, np.abs(v).max()))


# ---------------------------------------------------------------------------
# ad, Ad and the tangent maps: SE(3)'s on the planar subalgebra
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(se2_twists())
def test_ad_and_Ad_match_se3(v):
    assert np.array_equal(se2.ad(v), _sub_algebra(se3.ad(_embed(v))))
    assert_close(se2.Ad(se2.exp(v)), _sub_algebra(se3.Ad(se3.exp(_embed(v)))), rtol=4 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_cayley_tangents_closed_forms_and_se3(v):
    """dcay⁻¹ = I − ½ ad_v + ¼ v¹ [v | 0 0] (Appendix B), dcay = 4/(4 + (v¹)²)(I + ½ ad_v)."""
    ref = I3 - se2.ad(v) / 2
    ref[:, 0] += v[0] * v / 4
    assert_close(se2.dcay_inv(v), ref, rtol=4 * EPS)
    assert_close(se2.dcay(v), 4 / (4 + v[0] ** 2) * (I3 + se2.ad(v) / 2), rtol=4 * EPS)
    assert_close(se2.dcay_inv(v), _sub_algebra(se3.dcay_inv(_embed(v))), rtol=4 * EPS)
    assert_close(se2.dcay(v), _sub_algebra(se3.dcay(_embed(v))), rtol=8 * EPS)


@LIE_SETTINGS
@given(se2_twists())
def test_exp_tangents_match_se3(v):
    """The quadratics in ad_v equal Park & Chung's SE(3) closed forms restricted to the plane."""
    assert_close(se2.dexp(v), _sub_algebra(se3.dexp(_embed(v))), rtol=8 * EPS)
    assert_close(se2.dexp_inv(v), _sub_algebra(se3.dexp_inv(_embed(v))), rtol=8 * EPS)
    for name in ("dexp_inv_series", "dexp_inv_linear"):
        assert_close(getattr(se2, name)(v), _sub_algebra(getattr(se3, name)(_embed(v))), rtol=4 * EPS)


def test_noether_identity_fails_for_truncated_series():
    """dexp_inv_series is only the truncated dexp⁻¹: no exact conservation (documented)."""
    v = np.array([1.0, 0.5, -0.7])
    C = se2.dexp_inv_series
    err = np.abs(C(-v).T - se2.Ad(se2.exp(v)).T @ C(v).T).max()
    assert err > 1e-4


def test_exact_values():
    z = np.zeros(3)
    assert np.array_equal(se2.from_pose(z), I3)
    assert np.array_equal(se2.to_pose(I3), z)
    v = np.array([0.0, 2.0, -3.0])  # pure translation
    assert np.array_equal(se2.exp(v), se2.cay(v))
    assert np.array_equal(se2.exp(v)[:2, 2], v[1:])
