"""Shared hypothesis strategies and numerical references for the ``core.lie`` tests.

The test modules import these helpers as ``from tests.core.lie.references import ...`` (the
repository root is on pytest's ``pythonpath``, pyproject.toml); the integrator tests use the
exact coefficient series too.

References used by the tests, none of which share code with ``core.lie``:

* ``scipy.linalg.expm`` / ``logm`` of the hat matrices;
* truncated power series in ad (Σ adᵏ/(k+1)!, Σ Bₖ/k! adᵏ) with enough terms;
* central finite differences with one Richardson step (error O(h⁴));
* exact Taylor coefficients (``fractions.Fraction`` power-series arithmetic) and
  120-digit ``decimal`` evaluations of the scalar coefficient functions (mpmath and
  sympy are not installed in the project venv, so these are built here).
"""
from __future__ import annotations

import os
from decimal import Decimal, localcontext
from fractions import Fraction
from math import factorial

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

EPS = np.finfo(float).eps

# ---------------------------------------------------------------------------
# hypothesis settings: fast and reproducible (no example database in the repo).
# LIE_TEST_EXAMPLES=2000 runs a much longer, non-derandomised search locally.
# ---------------------------------------------------------------------------
_N_EXAMPLES = int(os.environ.get("LIE_TEST_EXAMPLES", "0"))
if _N_EXAMPLES:
    LIE_SETTINGS = settings(max_examples=_N_EXAMPLES, deadline=None, database=None)
else:
    LIE_SETTINGS = settings(max_examples=60, deadline=None, database=None, derandomize=True)
# For tests whose reference is slow (scipy.linalg.logm takes ~40 ms on a defective matrix).
LIE_SETTINGS_SLOW = settings(LIE_SETTINGS, max_examples=max(20, _N_EXAMPLES // 3))

# ---------------------------------------------------------------------------
# Angles: exactly zero, the series regime, both sides of the 0.25 series threshold,
# both sides of the π/2 branch switch of so3.log, and up to nearly π.
# ---------------------------------------------------------------------------
SERIES_THRESHOLD = 0.25
NEAR_PI = np.pi - 1e-6
SPECIAL_ANGLES = (
    0.0, 1e-300, 1e-12, 1e-8, 1e-4, 0.1,
    SERIES_THRESHOLD - 1e-9, float(np.nextafter(SERIES_THRESHOLD, 0.0)), SERIES_THRESHOLD,
    float(np.nextafter(SERIES_THRESHOLD, 1.0)), SERIES_THRESHOLD + 1e-9,
    np.pi / 2 - 1e-12, np.pi / 2, np.pi / 2 + 1e-12,
    1.0, 2.0, 3.0, NEAR_PI,
)
# The subset named in the acceptance criterion, for parametrised (non-random) tests.
GRID_ANGLES = (0.0, 1e-12, 1e-8, 1e-4, 0.1, SERIES_THRESHOLD - 1e-9, SERIES_THRESHOLD,
               SERIES_THRESHOLD + 1e-9, 1.0, 2.0, 3.0, NEAR_PI)


def angles(max_angle: float = NEAR_PI, min_angle: float = 0.0) -> st.SearchStrategy[float]:
    """Angles in [min_angle, max_angle]: special values, log-uniform tiny ones, uniform ones."""
    special = [a for a in SPECIAL_ANGLES if min_angle <= a <= max_angle]
    tiny = (st.floats(-12.0, 0.0).map(lambda e: 10.0**e)
            .filter(lambda a: min_angle <= a <= max_angle))
    return st.one_of(st.sampled_from(special), tiny, st.floats(min_angle, max_angle))


def _normalised(a: np.ndarray) -> np.ndarray:
    return a / np.linalg.norm(a)


unit_vectors = (st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array)
                .filter(lambda a: np.linalg.norm(a) > 0.1).map(_normalised))


def vectors(n: int, scale: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    return st.tuples(*[st.floats(-scale, scale, allow_subnormal=False)] * n).map(
        lambda t: np.array(t, dtype=float))


def so3_vectors(max_angle: float = NEAR_PI,
                min_angle: float = 0.0) -> st.SearchStrategy[np.ndarray]:
    """ω = θ n with a unit axis n and θ from :func:`angles`."""
    return st.builds(lambda n, t: t * n, unit_vectors, angles(max_angle, min_angle))


def se3_twists(max_angle: float = NEAR_PI, scale: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """ξ = (ω, v) with |ω| ≤ max_angle and |vᵢ| ≤ scale."""
    return st.builds(lambda w, v: np.concatenate([w, v]), so3_vectors(max_angle), vectors(3, scale))


def se2_twists(max_angle: float = NEAR_PI, scale: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """v = (angular, vx, vy) with |angular| ≤ max_angle (either sign)."""
    return st.builds(lambda s, a, v: np.concatenate([[s * a], v]),
                     st.sampled_from([-1.0, 1.0]), angles(max_angle), vectors(2, scale))


def random_unit(rng: np.random.Generator, shape=()) -> np.ndarray:
    a = rng.normal(size=tuple(shape) + (3,))
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


# ---------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------
def max_abs(a) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=float)), initial=0.0))


def assert_close(actual, desired, rtol: float, atol: float = 0.0, msg: str = "") -> None:
    """max|actual − desired| ≤ atol + rtol · max|desired|  (norm-relative, not entrywise).

    Entrywise relative error is meaningless for entries that are round-off of zero;
    this compares the error to the size of the whole array.
    """
    actual = np.asarray(actual, dtype=float)
    desired = np.asarray(desired, dtype=float)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    assert np.all(np.isfinite(actual)), f"non-finite values {msg}"
    err = max_abs(actual - desired)
    bound = atol + rtol * max_abs(desired)
    assert err <= bound, f"error {err:.3e} > {bound:.3e} {msg}"


def assert_finite(*arrays) -> None:
    for a in arrays:
        assert np.all(np.isfinite(np.asarray(a, dtype=float))), a


# ---------------------------------------------------------------------------
# Series references in ad (matrix argument A = ad_ξ or ŵ)
# ---------------------------------------------------------------------------
def bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0..B_n with B_1 = −1/2."""
    B = [Fraction(0)] * (n + 1)
    B[0] = Fraction(1)
    for m in range(1, n + 1):
        B[m] = -sum(Fraction(factorial(m + 1), factorial(k) * factorial(m + 1 - k)) * B[k]
                    for k in range(m)) / (m + 1)
    return B


_BERN = [float(b / factorial(k)) for k, b in enumerate(bernoulli_numbers(90))]


def series_dexp(A: np.ndarray, terms: int = 40) -> np.ndarray:
    """Σ_{k<terms} Aᵏ/(k+1)!: the right-trivialised dexp for A = ad_ξ (batched)."""
    A = np.asarray(A, dtype=float)
    eye = np.broadcast_to(np.eye(A.shape[-1]), A.shape)
    out, term = eye.copy(), eye.copy()
    for k in range(1, terms):
        term = term @ A / (k + 1)
        out = out + term
    return out


def series_dexp_inv(A: np.ndarray, terms: int = 90) -> np.ndarray:
    """Σ_{k<terms} B_k/k! Aᵏ (B_1 = −½): dexp⁻¹ for A = ad_ξ; converges for |θ| < 2π."""
    A = np.asarray(A, dtype=float)
    eye = np.broadcast_to(np.eye(A.shape[-1]), A.shape)
    out, power = eye.copy(), eye.copy()
    for k in range(1, terms):
        power = power @ A
        if _BERN[k]:
            out = out + _BERN[k] * power
    return out


# ---------------------------------------------------------------------------
# Central finite differences
# ---------------------------------------------------------------------------
def right_trivialised_fd(tau, vee, xi: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """Matrix of δ ↦ vee((Dτ(ξ)·δ) τ(ξ)⁻¹), by central differences with one Richardson step.

    Column j uses ξ ± h eⱼ and ξ ± (h/2) eⱼ, all evaluated in one batched call of τ;
    the truncation error is O(h⁴) and the round-off ≈ ε·|τ|/h.
    """
    xi = np.asarray(xi, dtype=float)
    n = xi.shape[-1]
    E = np.eye(n)

    def d(step: float) -> np.ndarray:
        plus = tau(xi + step * E)
        minus = tau(xi - step * E)
        return (plus - minus) / (2 * step)  # (n, m, m): column j stacked on axis 0

    D = (4 * d(h / 2) - d(h)) / 3
    g_inv = np.linalg.inv(tau(xi))
    return np.stack([vee(D[j] @ g_inv) for j in range(n)], axis=-1)


# ---------------------------------------------------------------------------
# Exact Taylor series (in t = θ²) and high-precision values of the _series coefficients
# ---------------------------------------------------------------------------
_NS = 26  # terms kept in the exact power series


def _ps_div(a, b):
    q = []
    for k in range(_NS):
        q.append((a[k] - sum(q[i] * b[k - i] for i in range(k))) / b[0])
    return q


def _ps_scale(a, c):
    return [a[k] * c**k for k in range(_NS)]


def _ps_div_t(a):
    assert a[0] == 0
    return a[1:] + [Fraction(0)]


def _ps_lin(*pairs):
    return [sum(c * s[k] for c, s in pairs) for k in range(_NS)]


def _exact_series() -> dict[str, list[Fraction]]:
    one = [Fraction(1)] + [Fraction(0)] * (_NS - 1)
    sinc = [Fraction((-1) ** k, factorial(2 * k + 1)) for k in range(_NS)]   # sin θ/θ
    cosc = [Fraction((-1) ** k, factorial(2 * k + 2)) for k in range(_NS)]   # (1 − cos θ)/θ²
    cos = [Fraction((-1) ** k, factorial(2 * k)) for k in range(_NS)]
    k1 = _ps_div_t(_ps_lin((1, one), (-1, sinc)))
    k2 = _ps_div_t(_ps_lin((1, sinc), (-2, cosc)))
    k3 = _ps_div_t(_ps_lin((1, cosc), (-3, k1)))
    # γ = (θ/2) cot(θ/2) = cos(θ/2) / (sin(θ/2)/(θ/2))
    gamma = _ps_div(_ps_scale(cos, Fraction(1, 4)), _ps_scale(sinc, Fraction(1, 4)))
    k4 = _ps_div_t(_ps_lin((1, one), (-1, gamma)))
    inv_beta = _ps_div(one, _ps_lin((2, cosc)))
    k5 = _ps_div_t(_ps_div_t(_ps_lin((1, inv_beta), (1, gamma), (-2, one))))
    inv_sinc = _ps_div(one, sinc)
    return dict(sinc=sinc, cosc=cosc, k1=k1, k2=k2, k3=k3, k4=k4, k5=k5, inv_sinc=inv_sinc)


EXACT_SERIES = _exact_series()
COEFFICIENT_NAMES = tuple(EXACT_SERIES)

_PREC = 120


def _dsin_dcos(x: Decimal) -> tuple[Decimal, Decimal]:
    tol = Decimal(10) ** (-_PREC - 10)
    s, term, n = Decimal(0), x, 1
    while abs(term) > tol:
        s += term
        term = -term * x * x / ((n + 1) * (n + 2))
        n += 2
    c, term, n = Decimal(0), Decimal(1), 0
    while abs(term) > tol:
        c += term
        term = -term * x * x / ((n + 1) * (n + 2))
        n += 2
    return s, c


def _direct_decimal(name: str, t2) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = _PREC
        t = Decimal(t2).sqrt()
        s, c = _dsin_dcos(t)
        h = t / 2
        sh, ch = _dsin_dcos(h)
        if name == "sinc":
            return s / t
        if name == "cosc":
            return (1 - c) / t**2
        if name == "k1":
            return (t - s) / t**3
        if name == "k2":
            return (s / t - 2 * (1 - c) / t**2) / t**2
        if name == "k3":
            return ((1 - c) / t**2 - 3 * (t - s) / t**3) / t**2
        if name == "k4":
            return (1 - h * ch / sh) / t**2
        if name == "k5":
            return (h * h / (sh * sh) + h * ch / sh - 2) / t**4
        if name == "inv_sinc":
            return t / s
    raise KeyError(name)


def coefficient_reference(name: str, t2: float) -> float:
    """The coefficient at θ² = t2 (a float, taken exactly), correctly rounded in practice.

    Below θ² = 1/4 the exact rational series (26 terms, remainder < 1e-30) is summed in
    exact arithmetic; above it the defining formula is evaluated with 120 digits.
    """
    if t2 < 0.25:
        x, out = Fraction(t2), Fraction(0)
        for c in reversed(EXACT_SERIES[name]):
            out = out * x + c
        return float(out)
    return float(_direct_decimal(name, t2))


def coefficient_condition(name: str, theta: float) -> float:
    """Relative condition number |θ f'(θ)/f(θ)| of the coefficient, by a 120-digit difference.

    The coefficients are functions of θ² = t2, and t2 (or θ = √t2) carries a relative
    rounding error of ~ε, so no implementation can beat ε times this number.
    """
    t2 = theta * theta
    if t2 == 0.0:
        return 0.0
    if t2 < 0.25:  # the exact series and its derivative
        x = Fraction(t2)
        f = df = Fraction(0)
        coeffs = EXACT_SERIES[name]
        for k in reversed(range(len(coeffs))):
            f = f * x + coeffs[k]
            if k:
                df = df * x + k * coeffs[k]
        return float(abs(2 * x * df / f))
    with localcontext() as ctx:
        ctx.prec = _PREC
        rel = Decimal(10) ** -30
        f0 = _direct_decimal(name, Decimal(t2))
        f1 = _direct_decimal(name, Decimal(t2) * (1 + rel))
        return float(abs((f1 - f0) / f0) / rel * 2)


def series_exp_minus_identity(A: np.ndarray, terms: int = 40) -> np.ndarray:
    """Σ_{1≤k<terms} Aᵏ/k! = exp(A) − I, accurate relative to its own size even for tiny A."""
    A = np.asarray(A, dtype=float)
    term = A.copy()
    out = A.copy()
    for k in range(2, terms):
        term = term @ A / k
        out = out + term
    return out


LD_EPS = float(np.finfo(np.longdouble).eps)  # 1.1e-19 on x86 (80-bit); = EPS where there is none


def expm_extended(A: np.ndarray) -> np.ndarray:
    """exp(A) by scaling and squaring in np.longdouble, rounded to float64.

    Used where scipy.linalg.expm itself is only good to ~1e-14 (e.g. the non-normal
    6×6 ad_ξ near |ω| = π): here the error is ~2ˢ·LD_EPS, far below float64 round-off
    on platforms with an extended long double.
    """
    A = np.asarray(A, dtype=np.longdouble)
    s = max(0, int(np.ceil(np.log2(max(float(np.abs(A).sum(axis=-1).max()), 1e-300) / 0.25))))
    B = A / np.longdouble(2.0) ** s
    eye = np.eye(A.shape[-1], dtype=np.longdouble)
    out, term = eye.copy(), eye.copy()
    for k in range(1, 25):
        term = term @ B / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out.astype(float)
