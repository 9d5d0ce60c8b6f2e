"""What only SE(3) has: make/rotation/translation, the blocks of its maps, the paper's Cayley variant.

The group API shared with SO(3) and SE(2) is checked in ``test_groups.py``. Here: each map's
rotation and translation blocks against the SO(3) maps they are built from, the translation blocks
B_cay and B_cay_paper of the two Cayley maps, and the pairings of Kobilarov, Crane & Desbrun 2009
(eqs. 13–14, Appendix A) through the discrete Noether identity C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ: (cay_paper,
dexp_inv_linear) holds it, (cay_paper, dcay_inv) and (exp, dexp_inv_series) do not.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from core.lie import se3, so3
from tests.core.lie.references import (EPS, GRID_ANGLES, LIE_SETTINGS, assert_close, assert_finite,
                                       random_unit, right_trivialised_fd, se3_twists,
                                       series_exp_minus_identity, so3_vectors, vectors)

I3, I4, I6 = np.eye(3), np.eye(4), np.eye(6)


def _xi(theta: float, seed: int = 0, scale: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([theta * random_unit(rng), scale * rng.normal(size=3)])


# ---------------------------------------------------------------------------
# hat, make / rotation / translation
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(6, 100.0))
def test_hat_blocks(xi):
    X = se3.hat(xi)
    assert np.array_equal(X[:3, :3], so3.hat(xi[:3]))
    assert np.array_equal(X[:3, 3], xi[3:])
    assert np.array_equal(X[3], np.zeros(4))


@LIE_SETTINGS
@given(se3_twists())
def test_make_rotation_translation(xi):
    g = se3.exp(xi)
    assert np.array_equal(se3.make(se3.rotation(g), se3.translation(g)), g)
    assert np.array_equal(se3.act(g, np.zeros(3)), se3.translation(g))


def test_make_broadcasts():
    R = so3.exp(random_unit(np.random.default_rng(11), (5,)))
    g = se3.make(R, np.zeros(3))
    assert g.shape == (5, 4, 4)
    assert np.array_equal(g[:, :3, :3], R)


# ---------------------------------------------------------------------------
# exp: (exp ω, dexp_ω v)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_blocks_on_the_angle_grid(theta):
    xi = _xi(theta, seed=1)
    g = se3.exp(xi)
    assert_close(g - I4, series_exp_minus_identity(se3.hat(xi)), rtol=0, atol=4 * EPS * np.abs(g).max())
    assert_close(se3.translation(g), so3.dexp(xi[:3]) @ xi[3:], rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_exp_and_its_tangents_are_built_from_so3(xi):
    w = xi[:3]
    g = se3.exp(xi)
    assert np.array_equal(se3.rotation(g), so3.exp(w))
    assert_close(se3.translation(g), so3.dexp(w) @ xi[3:], rtol=4 * EPS)
    D, Di = se3.dexp(xi), se3.dexp_inv(xi)
    assert np.array_equal(D[:3, :3], so3.dexp(w)) and np.array_equal(D[3:, 3:], so3.dexp(w))
    assert np.array_equal(Di[:3, :3], so3.dexp_inv(w)) and np.array_equal(Di[3:, 3:], so3.dexp_inv(w))
    assert not D[:3, 3:].any() and not Di[:3, 3:].any()


def test_exp_tangents_at_zero_rotation_are_exact():
    xi = _xi(0.0, seed=2)
    A = se3.ad(xi)
    assert np.array_equal(se3.dexp(xi), I6 + A / 2)
    assert np.array_equal(se3.dexp_inv(xi), I6 - A / 2)


# ---------------------------------------------------------------------------
# Cayley maps and their translation blocks
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(so3_vectors())
def test_translation_blocks_of_the_cayley_maps(w):
    assert_close(se3.B_cay(w), np.linalg.inv(I3 - so3.hat(w) / 2), rtol=8 * EPS)
    ref = 2 / (4 + w @ w) * (2 * I3 + so3.hat(w))
    assert_close(se3.B_cay_paper(w), ref, rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_cay_blocks(xi):
    g = se3.cay(xi)
    assert np.array_equal(se3.rotation(g), so3.cay(xi[:3]))
    assert_close(se3.translation(g), se3.B_cay(xi[:3]) @ xi[3:], rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_cay_paper_rotation_and_translation(xi):
    g = se3.cay_paper(xi)
    w, v = xi[:3], xi[3:]
    assert np.array_equal(se3.rotation(g), so3.cay(w))
    ref = 2 / (4 + w @ w) * (2 * v + np.cross(w, v))
    assert_close(se3.translation(g), ref, rtol=4 * EPS)
    assert_close(se3.translation(g), se3.B_cay_paper(w) @ v, rtol=4 * EPS)
    # It differs from the matrix Cayley transform by a term of second order in ω.
    assert_close(se3.translation(g) - se3.translation(se3.cay(xi)),
                 -(np.outer(w, w) @ v) / (4 + w @ w), rtol=8 * EPS, atol=8 * EPS * np.abs(v).max())
    # τ(−η) = τ(η)⁻¹, which makes the vi-cay-ln step symmetric.
    assert_close(se3.cay_paper(-xi) @ g, I4, rtol=0, atol=16 * EPS * max(1.0, np.abs(v).max()))


@LIE_SETTINGS
@given(se3_twists())
def test_cayley_tangents_closed_forms(xi):
    """dcay⁻¹ = [[I − ω̂/2 + ωωᵀ/4, 0], [−½(I − ω̂/2)v̂, I − ω̂/2]], dcay its block-triangular inverse."""
    w, v = xi[:3], xi[3:]
    P = I3 - so3.hat(w) / 2
    ref = np.block([[P + np.outer(w, w) / 4, np.zeros((3, 3))], [-0.5 * P @ so3.hat(v), P]])
    assert_close(se3.dcay_inv(xi), ref, rtol=4 * EPS)
    D = so3.dcay(w)
    ref = np.block([[D, np.zeros((3, 3))], [0.5 * so3.hat(v) @ D, np.linalg.inv(P)]])
    assert_close(se3.dcay(xi), ref, rtol=8 * EPS)


# ---------------------------------------------------------------------------
# The pairings of Kobilarov, Crane & Desbrun 2009 and the discrete Noether identity
# ---------------------------------------------------------------------------
def noether_residual(tau, C, xi) -> tuple[float, float]:
    """max|C(−ξ)ᵀ − Ad_{τ(ξ)}ᵀ C(ξ)ᵀ| and max|C(−ξ)ᵀ|."""
    lhs = np.swapaxes(C(-xi), -1, -2)
    rhs = np.swapaxes(se3.Ad(tau(xi)), -1, -2) @ np.swapaxes(C(xi), -1, -2)
    return float(np.abs(lhs - rhs).max()), float(np.abs(lhs).max())


@LIE_SETTINGS
@given(se3_twists())
def test_noether_identity_holds_for_cay_paper_with_dexp_inv_linear(xi):
    err, size = noether_residual(se3.cay_paper, se3.dexp_inv_linear, xi)
    assert err <= 16 * EPS * size, (err, size)


@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_noether_identity_for_cay_paper_on_the_angle_grid(theta):
    err, size = noether_residual(se3.cay_paper, se3.dexp_inv_linear, _xi(theta, seed=5))
    assert err <= 16 * EPS * size, (err, size)


def test_inconsistent_pairing_cay_paper_with_dcay_inv_fails():
    """Why (cay_paper, dcay_inv) is not shipped: dcay_inv is not dτ⁻¹ of the paper's Cayley map,
    and the Noether identity (hence momentum conservation) fails at first order."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        xi = np.concatenate([random_unit(rng), rng.normal(size=3)])  # |ω| = 1, |v| ~ 1
        err, _ = noether_residual(se3.cay_paper, se3.dcay_inv, xi)
        assert err > 1e-3, err
        # ...while the same ξ satisfies it to round-off with dexp_inv_linear:
        assert noether_residual(se3.cay_paper, se3.dexp_inv_linear, xi)[0] < 1e-14
        mismatch = se3.dcay_inv(xi) @ right_trivialised_fd(se3.cay_paper, se3.vee, xi) - I6
        assert np.abs(mismatch).max() > 1e-2


def test_noether_identity_fails_for_truncated_series():
    """dexp_inv_series is only the truncated dexp⁻¹: no exact conservation (documented)."""
    err, _ = noether_residual(se3.exp, se3.dexp_inv_series, _xi(1.0, seed=8, scale=1.0))
    assert err > 1e-4


# ---------------------------------------------------------------------------
# Batching and exact values of the SE(3)-only functions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("f", [se3.cay_paper, se3.B_cay, se3.B_cay_paper, se3.rotation, se3.translation],
                         ids=lambda f: f.__name__)
def test_batched_equals_loop_and_zero_is_finite(f):
    rng = np.random.default_rng(10)
    scales = np.array([0.0, 1e-9, 1e-5, 0.2, 0.3, 1.0, 2.5, 3.1])
    w = random_unit(rng, (2, 4)) * scales.reshape(2, 4, 1)
    xi = np.concatenate([w, 5 * rng.normal(size=(2, 4, 3))], axis=-1)
    x = {se3.cay_paper: xi, se3.B_cay: w, se3.B_cay_paper: w}.get(f, se3.exp(xi))
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)
    assert_finite(f(np.zeros(x.shape[2:])))
    assert f(np.zeros((0,) + x.shape[2:])).shape[0] == 0


def test_exact_values():
    z = np.zeros(3)
    assert np.array_equal(se3.cay_paper(np.zeros(6)), I4)
    assert np.array_equal(se3.B_cay(z), I3)
    assert np.array_equal(se3.B_cay_paper(z), I3)
    # A pure translation: exp and both Cayley maps give x = v exactly.
    v = np.array([1.0, -2.0, 3.0])
    for f in (se3.exp, se3.cay, se3.cay_paper):
        assert np.array_equal(f(np.concatenate([z, v])), se3.make(I3, v))
