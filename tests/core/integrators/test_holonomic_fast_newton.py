"""The fast Newton termination of the holonomic VI kernels (core/integrators/variational/newton.py):
the a-priori error bound (newton_bound), chord updates, the quartic predictor, and the
rewritten pose formulas of the finish kernels, each against the formula it replaced."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.integrators import variational as V
from core.integrators.common import HolonomicSystem, RigidState
from core.integrators.variational import newton
from core.lie import so3

KERNEL_METHODS = ("vi-cay", "vi-cay-ln", "vi-exp", "vi-exp-ln")


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("method", ["vi-cay-ln", "vi-cay", "vi-exp"])
def test_newton_error_bound_holds_on_random_bodies(method):
    """eᵀJe ≤ kc D₁² after a Newton update and ≤ kc D₁ D₂ after a chord update (kc =
    newton_bound), wherever the bound is trusted (kc finite): random bodies, masses, steps
    (negative too), velocities and guess errors 1e-8…1e-2. Errors are measured against the
    root polished by Newton (not the ξ that generated b: b carries round-off of the size of
    h m|v|² eps) and only where they exceed a tenth of the integrator's tolerance."""
    rng = np.random.default_rng(5)
    pv_max = V.PAIRINGS[method].kernel.pv_max
    worst, used = 0.0, 0
    for _ in range(1500):
        Jb = rng.uniform(1.0, 5.0, 3)
        m = rng.uniform(0.5, 10.0)
        w = rng.normal(size=3) * rng.uniform(0.1, 3.0)
        v = rng.normal(size=3) * rng.uniform(0.0, 10.0)
        h = float(rng.choice([0.01, 0.05, 0.1, 0.2, 0.5, 1.0])) * float(rng.choice([1.0, -1.7]))
        b = V.momentum_map(method, h, np.r_[w, v], np.r_[Jb, m, m, m])
        for _ in range(4):
            G, A = V.reduced_residual(method, h, w, Jb, m, b)
            w = w - np.linalg.solve(A, G)
        w0 = w + 10 ** rng.uniform(-8, -2) * np.linalg.norm(w) * rng.normal(size=3)
        kc = V.newton_bound(pv_max, h, Jb.max(), Jb.min(), 1.0 / m, *w0, *b[3:])
        if not math.isfinite(kc):
            continue
        G0, A0 = V.reduced_residual(method, h, w0, Jb, m, b)
        d1 = np.linalg.solve(A0, G0)
        G1, _ = V.reduced_residual(method, h, w0 - d1, Jb, m, b)
        d2 = np.linalg.solve(A0, G1)
        E = lambda e: float(e @ (Jb * e))  # noqa: E731
        floor = 1e-29 * (E(b[:3] / Jb) + float(b[3:] @ b[3:]) / m)
        e1, e2 = E(w0 - d1 - w), E(w0 - d1 - d2 - w)
        if e1 > floor:
            worst = max(worst, e1 / (kc * E(d1) ** 2))
            used += 1
        if e2 > floor and E(d2) > 0:
            worst = max(worst, e2 / (kc * E(d1) * E(d2)))
    assert used > 300
    assert 1e-3 < worst <= 1.0, worst


def test_bound_is_infinite_outside_its_range():
    """Large (h/2)|ω| J_max/J_min, or (vi-exp) large h²|b^v|²/(m J_min): no a-priori acceptance."""
    assert V.newton_bound(None, 1.0, 3.0, 1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0) == math.inf
    assert math.isfinite(V.newton_bound(None, 0.1, 3.0, 1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    assert V.newton_bound(10.0, 0.1, 3.0, 1.0, 1.0, 0.1, 0.0, 0.0, 1e3, 0.0, 0.0) == math.inf
    kc = V.newton_bound(math.inf, 0.1, 3.0, 1.0, 0.5, 0.1, 0.0, 0.0, 10.0, 0.0, 0.0)
    assert kc == pytest.approx(2 * 0.01 * 3.0 * (1 + 0.01 * 100 * 0.5) ** 2)
    arr = V.newton_bound(10.0, 0.1, np.array([3.0, 3.0]), np.array([1.0, 1.0]), np.array([0.5, 0.5]),
                         np.array([0.1, 100.0]), np.zeros(2), np.zeros(2), np.array([10.0, 10.0]),
                         np.zeros(2), np.zeros(2))
    assert arr[0] == pytest.approx(kc) and arr[1] == math.inf


def test_extrapolation_is_exact_for_polynomials():
    """n values of a polynomial of degree n − 1 give its next value exactly (n = 2…5), on tuples
    of floats and on arrays alike."""
    rng = np.random.default_rng(2)
    for n in (2, 3, 4, 5):
        coef = rng.normal(size=n)
        f = lambda t: np.polyval(coef, t)  # noqa: E731
        hist = [(f(0.1 * i), 2.0 * f(0.1 * i)) for i in range(n)]
        assert np.allclose(newton.extrapolate(hist), (f(0.1 * n), 2.0 * f(0.1 * n)), rtol=1e-11, atol=1e-12)
        arrs = [(np.full((3, 2), f(0.1 * i)),) for i in range(n)]
        assert np.allclose(newton.extrapolate(arrs)[0], f(0.1 * n), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("method", ["vi-cay", "vi-cay-ln"])
def test_finish_translation_equals_the_previous_formula(method):
    """The translation of τ(hξ) is now formed from b^v directly; the previous formulas went
    through p = (I + û)⁻¹b^v: vi-cay (I − û)⁻¹(h/m)p = (c + u×c + u(u·c))/(1 + |u|²), c = (h/m)p,
    vi-cay-ln (c + u×c)/(1 + |u|²). Same values to round-off."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        w, Jb, bv = rng.normal(size=3) * 3, rng.uniform(0.5, 4, 3), rng.normal(size=3) * 10
        h, m = float(rng.uniform(0.001, 1.0)), float(rng.uniform(0.5, 5))
        p, _, _, t = V.reduced_finish(method, h, w, Jb, m, bv)
        u = 0.5 * h * w
        c = h / m * p
        n = 1.0 + u @ u
        old = (c + np.cross(u, c) + u * (u @ c)) / n if method == "vi-cay" else (c + np.cross(u, c)) / n
        assert rel(t, old) < 1e-13
        assert rel((np.eye(3) + so3.hat(u)) @ p, bv) < 1e-13


@pytest.mark.parametrize("method", KERNEL_METHODS)
@pytest.mark.parametrize("batched", [False, True])
def test_fast_termination_agrees_with_plain_newton(method, batched, monkeypatch):
    """Bound acceptance, chords and the quartic predictor against plain Newton with the
    quadratic-convergence test only (UR_MAX = 0 makes the bound infinite: no chords, no a-priori
    acceptance): the same trajectory to round-off, with fewer residual evaluations."""
    rng = np.random.default_rng(7)
    B = 4
    inertia = np.concatenate([rng.uniform(1, 3, (B, 3)), np.repeat(rng.uniform(1, 3, (B, 1)), 3, 1)], 1)
    init = RigidState(so3.exp(rng.normal(size=(B, 3))), rng.normal(size=(B, 3)),
                      rng.normal(size=(B, 3)), rng.normal(size=(B, 3)))
    if not batched:
        inertia, init = inertia[0], RigidState(init.R[0], init.x[0], init.omega[0], init.v[0])
    system = HolonomicSystem(inertia)
    fast = V.integrate(system, init, 0.05, 300, method)
    monkeypatch.setattr(newton, "UR_MAX", 0.0)
    plain = V.integrate(system, init, 0.05, 300, method)
    assert fast.stats["path"] == plain.stats["path"] == ("batch" if batched else "scalar")
    for key in ("position", "orientation", "angular_velocity", "linear_velocity", "momentum_angular"):
        assert rel(getattr(fast, key), getattr(plain, key)) < 1e-12, key
    assert fast.stats["newton_iterations_mean"] < 0.7 * plain.stats["newton_iterations_mean"]
