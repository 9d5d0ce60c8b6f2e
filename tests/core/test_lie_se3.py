"""core.lie.se3: twists ξ = (ω, v), angular first; right-trivialised tangents.

References: scipy.linalg.expm/logm of the 4×4 hat, power series in ad_ξ, central
finite differences of the group maps (conftest.right_trivialised_fd), and the
discrete Noether identity C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ for every (τ, C) pairing the
integrators may use. Tolerances are norm-relative (``assert_close``).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given

from core.lie import se3, so3
from tests.core.conftest import (EPS, GRID_ANGLES, LD_EPS, LIE_SETTINGS, LIE_SETTINGS_SLOW,
                                 SERIES_THRESHOLD, assert_close, assert_finite, expm_extended,
                                 random_unit, right_trivialised_fd, se3_twists, series_dexp,
                                 series_dexp_inv, series_exp_minus_identity, vectors)

I4, I6 = np.eye(4), np.eye(6)


def _xi(theta: float, seed: int = 0, scale: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([theta * random_unit(rng), scale * rng.normal(size=3)])


# ---------------------------------------------------------------------------
# hat / vee, group helpers
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(6, 100.0))
def test_hat_vee_round_trip(xi):
    X = se3.hat(xi)
    assert np.array_equal(se3.vee(X), xi)
    assert np.array_equal(X[:3, :3], so3.hat(xi[:3]))
    assert np.array_equal(X[:3, 3], xi[3:])
    assert np.array_equal(X[3], np.zeros(4))


@LIE_SETTINGS
@given(se3_twists(), vectors(3))
def test_make_inverse_rotation_translation(xi, p):
    g = se3.exp(xi)
    assert np.array_equal(se3.make(se3.rotation(g), se3.translation(g)), g)
    assert_close(se3.inverse(g) @ g, I4, rtol=8 * EPS * (1 + np.abs(xi[3:]).max()))
    # Acting on a homogeneous point: g (p, 1) = (R p + x, 1).
    assert_close((g @ np.append(p, 1.0))[:3], se3.rotation(g) @ p + se3.translation(g),
                 rtol=4 * EPS)


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_exp_and_log_on_the_angle_grid(theta):
    xi = _xi(theta, seed=1)
    g = se3.exp(xi)
    assert_close(g, sla.expm(se3.hat(xi)), rtol=4e-15)
    assert_close(g - I4, series_exp_minus_identity(se3.hat(xi)),
                 rtol=0, atol=4 * EPS * np.abs(g).max())
    assert_close(se3.log(g), xi, rtol=8 * EPS)
    assert_close(se3.translation(g), so3.B_exp(xi[:3]) @ xi[3:], rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_exp_matches_expm(xi):
    g = se3.exp(xi)
    assert_close(g, sla.expm(se3.hat(xi)), rtol=4e-15)
    assert np.array_equal(se3.rotation(g), so3.exp(xi[:3]))
    assert_close(se3.translation(g), so3.B_exp(xi[:3]) @ xi[3:], rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_log_inverts_exp(xi):
    assert_close(se3.log(se3.exp(xi)), xi, rtol=8 * EPS)


@pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning:scipy")  # logm near I
@LIE_SETTINGS_SLOW
@given(se3_twists(max_angle=3.0))
def test_log_matches_logm(xi):
    g = se3.exp(xi)
    L = sla.logm(g)
    scale = np.abs(xi).max()
    assert_close(np.imag(L), np.zeros((4, 4)), rtol=0, atol=1e-14 * max(scale, 1))
    assert_close(se3.log(g), se3.vee(np.real(L)), rtol=1e-14, atol=1e-14)


# ---------------------------------------------------------------------------
# Cayley maps
# ---------------------------------------------------------------------------
def _matrix_cayley(xi: np.ndarray) -> np.ndarray:
    X = se3.hat(xi)
    return np.linalg.solve(I4 - X / 2, I4 + X / 2)


@LIE_SETTINGS
@given(se3_twists())
def test_cay_is_the_4x4_matrix_cayley_transform(xi):
    g = se3.cay(xi)
    assert_close(g, _matrix_cayley(xi), rtol=16 * EPS)
    assert np.array_equal(se3.rotation(g), so3.cay(xi[:3]))
    assert_close(se3.translation(g), so3.B_cay(xi[:3]) @ xi[3:], rtol=4 * EPS)
    assert_close(se3.cay_inv(g), xi, rtol=16 * EPS * (1 + so3.norm2(xi[:3]) / 4))


@LIE_SETTINGS
@given(se3_twists())
def test_cay_paper_rotation_and_translation(xi):
    g = se3.cay_paper(xi)
    w, v = xi[:3], xi[3:]
    assert np.array_equal(se3.rotation(g), so3.cay(w))
    ref = 2 / (4 + w @ w) * (2 * v + np.cross(w, v))
    assert_close(se3.translation(g), ref, rtol=4 * EPS)
    # It differs from the matrix Cayley transform by a term of second order in ω.
    assert_close(se3.translation(g) - se3.translation(se3.cay(xi)),
                 -(np.outer(w, w) @ v) / (4 + w @ w), rtol=8 * EPS, atol=8 * EPS * np.abs(v).max())


# ---------------------------------------------------------------------------
# dexp and dexp⁻¹ (Park & Chung closed forms)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_dexp_on_the_angle_grid(theta):
    xi = _xi(theta, seed=2)
    A = se3.ad(xi)
    D, Di = se3.dexp(xi), se3.dexp_inv(xi)
    if theta == 0:
        assert np.array_equal(D, I6 + A / 2) and np.array_equal(Di, I6 - A / 2)
    # Norm-relative error ≈ 3ε away from the series threshold; just above it the
    # cancellation in the k2, k3, k5 coefficients brings it to ≈ 15ε (measured).
    for got, ref in ((D, series_dexp(A)), (Di, series_dexp_inv(A))):
        assert_close(got, ref, rtol=32 * EPS)
    assert_close(Di @ D, I6, rtol=16 * EPS * max(1.0, np.abs(A).max()))


@LIE_SETTINGS
@given(se3_twists())
def test_dexp_matches_series_and_finite_differences(xi):
    D = se3.dexp(xi)
    assert_close(D, series_dexp(se3.ad(xi)), rtol=1e-14)
    assert_close(D, right_trivialised_fd(se3.exp, se3.vee, xi), rtol=1e-10)
    assert np.array_equal(D[:3, :3], so3.dexp(xi[:3]))
    assert np.array_equal(D[3:, 3:], so3.dexp(xi[:3]))
    assert_close(D @ xi, xi, rtol=8 * EPS)
    # Right vs left trivialisation: dexp_ξ = Ad_{exp ξ} dexp_{−ξ}.
    assert_close(D, se3.Ad(se3.exp(xi)) @ se3.dexp(-xi), rtol=16 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_dexp_inv_is_the_inverse_and_matches_bernoulli_series(xi):
    D, Di = se3.dexp(xi), se3.dexp_inv(xi)
    size = max(1.0, np.abs(se3.ad(xi)).max())
    assert_close(Di @ D, I6, rtol=16 * EPS * size)
    assert_close(D @ Di, I6, rtol=16 * EPS * size)
    assert_close(Di, series_dexp_inv(se3.ad(xi)), rtol=1e-14)
    assert np.array_equal(se3.C_exp(xi), Di)


# ---------------------------------------------------------------------------
# C maps: each is dτ⁻¹ of its τ; and the discrete Noether identity
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(se3_twists())
def test_C_cay_inverts_the_tangent_of_cay(xi):
    dcay = right_trivialised_fd(se3.cay, se3.vee, xi)
    assert_close(se3.C_cay(xi) @ dcay, I6, rtol=1e-9)
    w, v = xi[:3], xi[3:]
    P = np.eye(3) - so3.hat(w) / 2
    ref = np.block([[P + np.outer(w, w) / 4, np.zeros((3, 3))], [-0.5 * P @ so3.hat(v), P]])
    assert_close(se3.C_cay(xi), ref, rtol=4 * EPS)


@LIE_SETTINGS
@given(se3_twists())
def test_C_exp_inverts_the_tangent_of_exp(xi):
    assert_close(se3.C_exp(xi) @ right_trivialised_fd(se3.exp, se3.vee, xi), I6, rtol=1e-9)


@LIE_SETTINGS
@given(se3_twists())
def test_truncated_C_maps(xi):
    A = se3.ad(xi)
    assert_close(se3.C_exp_series(xi), I6 - A / 2 + A @ A / 12, rtol=4 * EPS)
    assert_close(se3.C_ln(xi), I6 - A / 2, rtol=0, atol=0)


CONSISTENT = [(se3.cay, se3.C_cay), (se3.exp, se3.C_exp), (se3.cay_paper, se3.C_ln)]


def noether_residual(tau, C, xi) -> tuple[float, float]:
    """max|C(−ξ)ᵀ − Ad_{τ(ξ)}ᵀ C(ξ)ᵀ| and max|C(−ξ)ᵀ|."""
    lhs = np.swapaxes(C(-xi), -1, -2)
    rhs = np.swapaxes(se3.Ad(tau(xi)), -1, -2) @ np.swapaxes(C(xi), -1, -2)
    return float(np.abs(lhs - rhs).max()), float(np.abs(lhs).max())


@pytest.mark.parametrize("tau, C", CONSISTENT, ids=lambda f: f.__name__)
@LIE_SETTINGS
@given(xi=se3_twists())
def test_discrete_noether_identity_holds_for_shipped_pairings(tau, C, xi):
    err, size = noether_residual(tau, C, xi)
    assert err <= 16 * EPS * size, (err, size)


@pytest.mark.parametrize("tau, C", CONSISTENT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("theta", GRID_ANGLES)
def test_discrete_noether_identity_on_the_angle_grid(tau, C, theta):
    err, size = noether_residual(tau, C, _xi(theta, seed=5))
    assert err <= 16 * EPS * size, (err, size)


def test_inconsistent_pairing_cay_paper_with_C_cay_fails():
    """Why (cay_paper, C_cay) is not shipped: C_cay is not dτ⁻¹ of the paper's Cayley map,
    and the Noether identity (hence momentum conservation) fails at first order."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        xi = np.concatenate([random_unit(rng), rng.normal(size=3)])  # |ω| = 1, |v| ~ 1
        err, _ = noether_residual(se3.cay_paper, se3.C_cay, xi)
        assert err > 1e-3, err
        # ...while the same ξ satisfies it to round-off with C_LN:
        assert noether_residual(se3.cay_paper, se3.C_ln, xi)[0] < 1e-14
        mismatch = se3.C_cay(xi) @ right_trivialised_fd(se3.cay_paper, se3.vee, xi) - I6
        assert np.abs(mismatch).max() > 1e-2


def test_noether_identity_fails_for_truncated_series():
    """C_exp_series is only the truncated dexp⁻¹: no exact conservation (documented)."""
    err, _ = noether_residual(se3.exp, se3.C_exp_series, _xi(1.0, seed=8, scale=1.0))
    assert err > 1e-4


# ---------------------------------------------------------------------------
# ad / Ad
# ---------------------------------------------------------------------------
@LIE_SETTINGS
@given(vectors(6), vectors(6))
def test_ad_is_the_matrix_commutator(xi, eta):
    X, Y = se3.hat(xi), se3.hat(eta)
    scale = np.abs(xi).max() * np.abs(eta).max()
    assert_close(se3.hat(se3.ad(xi) @ eta), X @ Y - Y @ X, rtol=0, atol=8 * EPS * scale)
    assert_close(se3.ad(xi) @ xi, np.zeros(6), rtol=0, atol=4 * EPS * np.abs(xi).max() ** 2)


@LIE_SETTINGS
@given(se3_twists(), vectors(6))
def test_Ad_conjugates_and_integrates_ad(xi, eta):
    g = se3.exp(xi)
    Ad = se3.Ad(g)
    size = np.abs(g).max() ** 2 * np.abs(eta).max()
    assert_close(se3.hat(Ad @ eta), g @ se3.hat(eta) @ se3.inverse(g), rtol=0, atol=16 * EPS * size)
    # Ad_{exp ξ} = exp(ad_ξ). (scipy's expm of the non-normal ad_ξ is only good to ~2e-14
    # near |ω| = π, so the reference is an extended-precision exponential.)
    assert_close(Ad, expm_extended(se3.ad(xi)), rtol=8 * EPS + 1e3 * LD_EPS)
    assert_close(np.linalg.inv(Ad), se3.Ad(se3.inverse(g)), rtol=16 * EPS)


@LIE_SETTINGS
@given(se3_twists(), se3_twists())
def test_Ad_is_a_homomorphism(a, b):
    g, h = se3.exp(a), se3.exp(b)
    assert_close(se3.Ad(g @ h), se3.Ad(g) @ se3.Ad(h), rtol=16 * EPS)


# ---------------------------------------------------------------------------
# Continuity across the series threshold, batching, zero
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("f", [se3.exp, se3.dexp, se3.dexp_inv, se3.log], ids=lambda f: f.__name__)
def test_maps_continuous_across_series_threshold(f):
    rng = np.random.default_rng(9)
    n, v = random_unit(rng), 3 * rng.normal(size=3)
    t = SERIES_THRESHOLD
    thetas = [np.nextafter(t, 0), t, np.nextafter(t, 1)]
    xis = [np.concatenate([th * n, v]) for th in thetas]
    vals = [f(se3.exp(x)) if f is se3.log else f(x) for x in xis]
    for a, b in zip(vals, vals[1:]):
        assert_close(a, b, rtol=8 * EPS)


VECTOR_FUNCS = [se3.hat, se3.exp, se3.cay, se3.cay_paper, se3.ad, se3.dexp, se3.dexp_inv,
                se3.C_cay, se3.C_exp, se3.C_exp_series, se3.C_ln]
GROUP_FUNCS = [se3.vee, se3.log, se3.cay_inv, se3.Ad, se3.inverse, se3.rotation, se3.translation]


@pytest.mark.parametrize("f", VECTOR_FUNCS + GROUP_FUNCS, ids=lambda f: f.__name__)
def test_batched_equals_loop_and_zero_is_finite(f):
    rng = np.random.default_rng(10)
    scales = np.array([0.0, 1e-9, 1e-5, 0.2, 0.3, 1.0, 2.5, 3.1])  # both series branches
    w = random_unit(rng, (2, 4)) * scales.reshape(2, 4, 1)
    xi = np.concatenate([w, 5 * rng.normal(size=(2, 4, 3))], axis=-1)
    x = se3.exp(xi) if f in GROUP_FUNCS else xi
    out = f(x)
    loop = np.array([[f(x[i, j]) for j in range(4)] for i in range(2)])
    assert out.shape == loop.shape
    assert_close(out, loop, rtol=4 * EPS)  # batched einsum/matmul may round differently
    x0 = I4 if f in GROUP_FUNCS else np.zeros(6)
    assert_finite(f(x0))
    assert_finite(f(np.zeros((0,) + x0.shape)))


def test_make_broadcasts():
    R = so3.exp(random_unit(np.random.default_rng(11), (5,)))
    g = se3.make(R, np.zeros(3))
    assert g.shape == (5, 4, 4)
    assert np.array_equal(g[:, :3, :3], R)


def test_zero_gives_exact_values():
    z = np.zeros(6)
    for f in (se3.exp, se3.cay, se3.cay_paper):
        assert np.array_equal(f(z), I4)
    for f in (se3.dexp, se3.dexp_inv, se3.C_cay, se3.C_exp, se3.C_exp_series, se3.C_ln):
        assert np.array_equal(f(z), I6)
    assert np.array_equal(se3.log(I4), z)
    assert np.array_equal(se3.cay_inv(I4), z)
    assert np.array_equal(se3.Ad(I4), I6)
    # A pure translation: exp and both Cayley maps give x = v exactly.
    v = np.array([1.0, -2.0, 3.0])
    for f in (se3.exp, se3.cay, se3.cay_paper):
        assert np.array_equal(f(np.concatenate([np.zeros(3), v])), se3.make(np.eye(3), v))
