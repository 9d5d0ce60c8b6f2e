"""Newton on the reduced equations (three unknowns, ω): error bound, start, solve.

The equations are eq. (10) of Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation
and control of vehicles", with M = m I₃ (:mod:`.kernels`; docs/equations.md, "Holonomic
variational integrator", which also states the start-up rule).

Start. Newton starts from a polynomial extrapolation of the last ω of the same sub-step
(:func:`extrapolate`, degree 4 with five values: error O(h⁵)); the first steps, and a retry after a
failed solve, start from the explicit 𝕀⁻¹b. vi-cay4 adds its own correction (:mod:`.triple_jump`).

Error bound. For C = I − ½ ad (vi-cay-ln) the residual G(ω) = Jω + (h/2) ω × Jω − b^ω is quadratic,
A = dG/dω = J + (h/2)(ω̂J − (Jω)^). With δ a Newton update, the residual after it is exactly
Q(δ) = (h/2) δ × Jδ, so the error left is e = A⁻¹Q(δ); after a simplified-Newton ("chord")
update δ_n with the Jacobian A₀ of the last Newton update Δ, e ≈ A₀⁻¹(h/2)(Δ × Jδ_n + δ_n × JΔ).
With A ≈ J, |δ|² ≤ D/J_min and |Jδ|² ≤ J_max D (D = δᵀJδ):

    eᵀJe ≤ 4 (h/2)² (J_max/J_min²) D₁ D_n ≤ kc D₁ D_n,   kc = 2h² J_max/J_min²

(D_n = D₁ for a Newton update). An update is accepted, without evaluating the residual again, once
kc D₁ D_n is below the tolerance: the error left is below round-off, where the plain test would
spend one more, merely confirming update. At h = 0.05 that is about 1.15 updates per solve instead
of 2. A chord update contracts the error by about √(kc D₁), so it is used (at most ``CHORDS`` per
Jacobian) only after a Newton update with kc D₁ < ``CHORD_START``. vi-cay and vi-exp widen kc
(:func:`newton_bound`). tests/core/integrators/test_holonomic.py and
tests/core/integrators/test_holonomic_fast_newton.py check the bound on random bodies, steps and guesses
and the agreement with plain Newton.

Solvers, with the 3×3 algebra unrolled for the reason given in :mod:`.kernels`:
:func:`newton_scalar` (one body, floats) and :func:`newton_arrays` (a batch, (B,) component
arrays) for any reduced kernel, and :func:`newton_ln`, vi-cay4's vi-cay-ln residual and Jacobian fused
into the Newton loop on floats (calling the kernel and :func:`adjugate3` per update instead would
add about 10 % to a vi-cay4 step), with ``strict=True`` running full Newton updates until |δ|
itself is below ``NEWTON_TOL`` (the reference the tests compare the fast termination against).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

NEWTON_TOL = 1e-14     # relative, in the kinetic-energy norm of the velocity update
NEWTON_MAX_ITER = 20
FAST_TOL = 1e-16       # vi-cay4: bound on the Newton error left, relative (energy norm)
UR_MAX = 2.0           # the Newton error bound is trusted for (h/2)|ω| J_max/J_min ≤ UR_MAX
CHORDS = 2             # chord (simplified-Newton) updates per Jacobian
CHORD_START = 1e-4     # … used after a Newton update with kc D₁ below this (contraction ≈ √(kc D₁))
PREDICTOR_DEGREE = 4   # Newton's start: polynomial extrapolation of the last ω (error O(h⁵))


def newton_bound(pv_max: float | None, h: float, Jmax, Jmin, im, w1, w2, w3, b1, b2, b3):
    """Factor kc of the a-priori Newton error bound of the reduced kernels (floats or arrays).

    After a Newton update δ from a guess (D = δᵀJδ) the error left e satisfies eᵀJe ≤ kc D²; after
    a chord update δ_n that reuses that Jacobian, eᵀJe ≤ kc D₁ D_n. For C = I − ½ ad the residual is
    quadratic, G(ω − δ) − (Newton model) = (h/2) δ × Jδ, which gives kc = 2h² J_max/J_min²
    (derivation in the module docstring). vi-cay and vi-exp add cubic and b^v-dependent terms; the
    factor (1 + p_v)², p_v = h²|b^v|²/(m J_min), covers them (tests/core/integrators/test_holonomic.py checks
    the bound on random bodies, steps, momenta and guesses: measured worst 6 % of it for I − ½ ad,
    37 % for vi-cay, 5 % for vi-exp with p_v ≤ 10, where its bound stops). Trusted for
    u_r = (h/2)|ω| J_max/J_min ≤ ``UR_MAX`` (and p_v ≤ ``pv_max``); elsewhere kc = ∞ and the
    a-posteriori tests of :func:`newton_scalar` decide alone.
    """
    c = 0.5 * h * Jmax / Jmin
    ur2 = c * c * (w1 * w1 + w2 * w2 + w3 * w3)
    kc = (2.0 * h * h) * Jmax / (Jmin * Jmin)
    if pv_max is not None:
        pv = (h * h) * (b1 * b1 + b2 * b2 + b3 * b3) * im / Jmin
        g = 1.0 + pv
        kc = kc * g * g
    if isinstance(ur2, float):
        return kc if ur2 <= UR_MAX * UR_MAX and (pv_max is None or pv <= pv_max) else math.inf
    ok = ur2 <= UR_MAX * UR_MAX
    if pv_max is not None and pv_max < math.inf:
        ok &= pv <= pv_max
    return np.where(ok, kc, np.inf)


def array_bound(pv_max: float | None, Jmax: np.ndarray, Jmin: np.ndarray, im: np.ndarray) -> Callable:
    """:func:`newton_bound` for a batch of (B,) component arrays, its per-body constants hoisted out
    of the step loop: ``array_bound(...)(h, bb)`` (bb = b² per component, (6, B)) is the function
    g ↦ kc per body at the guesses g (3, B) of a sub-step of length h."""
    Jratio = Jmax / (Jmin * Jmin)
    ur2_lim = (UR_MAX * 2.0 * Jmin / Jmax) ** 2    # (h/2)²|ω|²(J_max/J_min)² ≤ UR_MAX²  ⇔  h²|ω|² ≤ this
    pv_scale = im / Jmin

    def at(h: float, bb: np.ndarray) -> Callable:
        kc_base = (2.0 * h * h) * Jratio
        ur_lim = ur2_lim / (h * h)
        pv = None if pv_max is None else (h * h) * (bb[3] + bb[4] + bb[5]) * pv_scale

        def bound(g: np.ndarray) -> np.ndarray:
            ok_b = (g * g).sum(0) <= ur_lim
            if pv is None:
                return np.where(ok_b, kc_base, np.inf)
            if pv_max < math.inf:
                ok_b &= pv <= pv_max
            gp = 1.0 + pv
            return np.where(ok_b, kc_base * gp * gp, np.inf)

        return bound

    return at


def adjugate3(a00, a01, a02, a10, a11, a12, a20, a21, a22):
    """Rows of adj(A) and 1/det A of a 3×3 matrix (floats or arrays): A⁻¹ = adj(A)/det A."""
    r00 = a11 * a22 - a12 * a21
    r10 = a12 * a20 - a10 * a22
    r20 = a10 * a21 - a11 * a20
    return (r00, a02 * a21 - a01 * a22, a01 * a12 - a02 * a11,
            r10, a00 * a22 - a02 * a20, a02 * a10 - a00 * a12,
            r20, a01 * a20 - a00 * a21, a00 * a11 - a01 * a10,
            1.0 / (a00 * r00 + a01 * r10 + a02 * r20))


def extrapolate(hist: Sequence):
    """Polynomial extrapolation of the next value from the last 2–5 (oldest first), degree 1–4:
    error O(h⁵) for the full history. Works on tuples of floats and on arrays alike."""
    n = len(hist)
    if n == 5:
        v0, v1, v2, v3, v4 = hist
        return tuple(a + 5.0 * (e - b) + 10.0 * (c - d) for a, b, c, d, e in zip(v0, v1, v2, v3, v4))
    if n == 4:
        v0, v1, v2, v3 = hist
        return tuple(4.0 * (b + d) - 6.0 * c - a for a, b, c, d in zip(v0, v1, v2, v3))
    if n == 3:
        v0, v1, v2 = hist
        return tuple(a + 3.0 * (c - b) for a, b, c in zip(v0, v1, v2))
    v0, v1 = hist
    return tuple(2.0 * b - a for a, b in zip(v0, v1))


def newton_scalar(rj, res, w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3, tolE, kc):
    """Newton on the reduced equations; None if it does not converge in NEWTON_MAX_ITER updates.

    Accepts when the update is below the tolerance in the energy norm (D = ΔωᵀJΔω ≤ tol²·2E), or
    when the a-priori bound of :func:`newton_bound` puts the error left below it (kc D₁ D ≤ tol²·2E:
    no extra update to confirm), or, between two Newton updates, when the quadratic-convergence
    estimate D³/D_prev² is. After a small Newton update (kc D₁ < ``CHORD_START``) up to ``CHORDS``
    chord updates reuse its Jacobian: they need the residual only.
    """
    chords = 0
    D1 = Dp = 0.0
    fresh_prev = False
    for it in range(1, NEWTON_MAX_ITER + 1):
        if chords == 0:
            G1, G2, G3, *A = rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
            r00, r01, r02, r10, r11, r12, r20, r21, r22, idet = adjugate3(*A)
        else:
            G1, G2, G3 = res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
        d1 = (r00 * G1 + r01 * G2 + r02 * G3) * idet
        d2 = (r10 * G1 + r11 * G2 + r12 * G3) * idet
        d3 = (r20 * G1 + r21 * G2 + r22 * G3) * idet
        w1 -= d1
        w2 -= d2
        w3 -= d3
        D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
        if chords == 0:
            if D <= tolE or kc * D * D <= tolE or (fresh_prev and D * D * D <= tolE * Dp * Dp):
                return w1, w2, w3, it
            D1 = D
        elif D <= tolE or kc * D1 * D <= tolE:
            return w1, w2, w3, it
        fresh_prev = chords == 0
        chords = chords + 1 if chords < CHORDS and kc * D1 < CHORD_START else 0
        Dp = D
    return None


def newton_arrays(rj, res, g, b, J1, J2, J3, h, im, tolE, kc):
    """:func:`newton_scalar` on every body of a batch at once, on (B,) component arrays: guesses
    g (3, B), right-hand side b (6, B). A pass updates all bodies; the chord decision is common
    (only when kc D₁ < ``CHORD_START`` for every body not yet converged). Returns ω (3, B),
    converged and updates per body. The float loop stays separate: it returns at the first
    accepted update, without masks or per-body counts, which is what makes it cheap."""
    B = g.shape[1]
    w = g.copy()
    w1, w2, w3 = w
    bw1, bw2, bw3, b1, b2, b3 = b
    done = np.zeros(B, dtype=bool)
    cnt = np.zeros(B)
    chords = 0
    fresh_prev = False
    D1 = Dp = None
    for _ in range(NEWTON_MAX_ITER):
        if chords == 0:
            out = rj(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
            G1, G2, G3 = out[:3]
            r00, r01, r02, r10, r11, r12, r20, r21, r22, idet = adjugate3(*out[3:])
        else:
            G1, G2, G3 = res(w1, w2, w3, J1, J2, J3, h, im, bw1, bw2, bw3, b1, b2, b3)
        d1 = (r00 * G1 + r01 * G2 + r02 * G3) * idet
        d2 = (r10 * G1 + r11 * G2 + r12 * G3) * idet
        d3 = (r20 * G1 + r21 * G2 + r22 * G3) * idet
        w1 -= d1
        w2 -= d2
        w3 -= d3
        cnt += ~done
        D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
        if chords == 0:
            conv = (D <= tolE) | (kc * D * D <= tolE)
            if fresh_prev:
                conv |= D * D * D <= tolE * Dp * Dp
            D1 = D
        else:
            conv = (D <= tolE) | (kc * D1 * D <= tolE)
        done |= conv
        if done.all():
            break
        fresh_prev = chords == 0
        chords = chords + 1 if chords < CHORDS and (done | (kc * D1 < CHORD_START)).all() else 0
        Dp = D
    return w, done, cnt


def accept_coefficients(J: np.ndarray, hs: Sequence[float]) -> list:
    """2 h² J_max/J_min² per sub-step (J (..., 3)): the factor of the Newton error bound."""
    J = np.asarray(J, dtype=float)
    c = J.max(-1) / J.min(-1) ** 2
    return [2.0 * h * h * c for h in hs]


def newton_ln(w1: float, w2: float, w3: float, b1: float, b2: float, b3: float, J1: float, J2: float,
              J3: float, hh: float, kc: float, tolE: float, strict: bool) -> tuple:
    """Solve G(ω) = Jω + (h/2) ω × Jω − b = 0 from (w1, w2, w3) on floats (module docstring):
    one Newton update, up to ``CHORDS`` chord updates with its adjugate (only when the Newton
    update was small, kc D₁ < ``CHORD_START``: a chord contracts the error by about √(kc D₁)), a fresh
    Newton update, …; accepted when kc D₁ D ≤ tolE (strict: D ≤ tolE). Returns (ω₁, ω₂, ω₃, Newton updates, chord
    updates, 1.0 if converged else 0.0)."""
    J23, J13, J12 = J2 * J3, J1 * J3, J1 * J2
    chords = 0
    nn = nc = 0
    D1 = 0.0
    for _ in range(NEWTON_MAX_ITER):
        y1 = J1 * w1
        y2 = J2 * w2
        y3 = J3 * w3
        u1 = hh * w1
        u2 = hh * w2
        u3 = hh * w3
        G1 = y1 + u2 * y3 - u3 * y2 - b1
        G2 = y2 + u3 * y1 - u1 * y3 - b2
        G3 = y3 + u1 * y2 - u2 * y1 - b3
        if chords == 0:     # fresh Jacobian J + (h/2)(ω̂J − ŷ) and its adjugate
            nn += 1
            hy1 = hh * y1
            hy2 = hh * y2
            hy3 = hh * y3
            a01 = hy3 - u3 * J2
            a02 = u2 * J3 - hy2
            a10 = u3 * J1 - hy3
            a12 = hy1 - u1 * J3
            a20 = hy2 - u2 * J1
            a21 = u1 * J2 - hy1
            c00 = J23 - a12 * a21
            c01 = a02 * a21 - a01 * J3
            c02 = a01 * a12 - a02 * J2
            c10 = a12 * a20 - a10 * J3
            c11 = J13 - a02 * a20
            c12 = a02 * a10 - J1 * a12
            c20 = a10 * a21 - J2 * a20
            c21 = a01 * a20 - J1 * a21
            c22 = J12 - a01 * a10
            idet = 1.0 / (J1 * c00 + a01 * c10 + a02 * c20)
        else:
            nc += 1
        d1 = (c00 * G1 + c01 * G2 + c02 * G3) * idet
        d2 = (c10 * G1 + c11 * G2 + c12 * G3) * idet
        d3 = (c20 * G1 + c21 * G2 + c22 * G3) * idet
        w1 -= d1
        w2 -= d2
        w3 -= d3
        D = J1 * d1 * d1 + J2 * d2 * d2 + J3 * d3 * d3
        if strict:
            if D <= tolE:
                return w1, w2, w3, nn, nc, 1.0
            continue
        if chords == 0:
            D1 = D
        if kc * D1 * D <= tolE:
            return w1, w2, w3, nn, nc, 1.0
        # a chord contracts the error by ≈ √(kc D₁): worth it only after a small Newton update
        chords = chords + 1 if chords < CHORDS and kc * D1 < CHORD_START else 0
    return w1, w2, w3, nn, nc, 0.0


def newton_ln_continued(b1: float, b2: float, b3: float, J1: float, J2: float, J3: float, hh: float,
                        kc: float, tolE: float, strict: bool, depth: int = 6) -> tuple:
    """The last resort of a failed solve (large |hω|, a guess Newton cannot start from): follow
    the solution from h = 0, where ω = J⁻¹b, by continuation in h, halving the increment of h
    whenever Newton fails. Same return as :func:`newton_ln` (counts summed)."""
    w1, w2, w3 = b1 / J1, b2 / J2, b3 / J3
    s, ds, nn, nc = 0.0, 0.5, 0, 0
    while s < 1.0:
        t = min(1.0, s + ds)
        r = newton_ln(w1, w2, w3, b1, b2, b3, J1, J2, J3, t * hh, kc * t * t, tolE, strict)
        nn += r[3]
        nc += r[4]
        if r[5] == 1.0:
            w1, w2, w3 = r[:3]
            s = t
            ds *= 2.0
        elif depth:
            ds *= 0.5
            depth -= 1
        else:
            return w1, w2, w3, nn, nc, 0.0
    return w1, w2, w3, nn, nc, 1.0


def newton_ln_rescue(g1: float, g2: float, g3: float, b1: float, b2: float, b3: float, J1: float, J2: float,
                     J3: float, hh: float, kc: float, tolE: float, strict: bool) -> tuple:
    """The fall-backs of a failed :func:`newton_ln`: Newton from the explicit guess g (J⁻¹b), then
    :func:`newton_ln_continued`. Same return as :func:`newton_ln` (counts summed)."""
    r = newton_ln(g1, g2, g3, b1, b2, b3, J1, J2, J3, hh, kc, tolE, strict)
    if r[5] == 1.0:
        return r
    c = newton_ln_continued(b1, b2, b3, J1, J2, J3, hh, kc, tolE, strict)
    return c[:3] + (r[3] + c[3], r[4] + c[4], c[5])


__all__ = ["NEWTON_TOL", "NEWTON_MAX_ITER", "FAST_TOL", "newton_bound", "array_bound", "adjugate3", "extrapolate",
           "newton_scalar", "newton_arrays", "accept_coefficients", "newton_ln", "newton_ln_continued",
           "newton_ln_rescue"]
