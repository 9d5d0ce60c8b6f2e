"""Magnus update for rotations with constant angular acceleration (the Magnus paper), and the ``magnus``
integrator built on it.

Seed 001 (spatial angular velocity ω, Ṙ = ω̂ R, q̇ = ½ ω ⊗ q). Over a step Δt with ω at the
start, ω′ at the end and constant angular acceleration α = (ω′ − ω)/Δt, R′ = exp(Ω̂) R and
q′ = exp(½ Ω) ⊗ q with the Magnus series

    Ω₁ = ½ (ω + ω′) Δt
    Ω₂ = (1/12) (ω′ × ω) Δt²            (= (1/12) α × ω Δt³)
    Ω₃ = (1/240) α × (α × ω) Δt⁵         (optional, ``third_term=True``)

(equations.md, "Baselines"). Measured against the exact solution of Ṙ = ω̂(t) R with
ω(t) = ω + α t (tests/core/test_magnus.py): Ω₁ + Ω₂ has local error O(Δt⁵) — it is the
fourth-order Magnus integrator α₁ − (1/12)[α₁, α₂] of Blanes, Casas & Ros for a linear ω(t) —
and Ω₃ does **not** raise that order: the h⁵ part of the exact Ω also contains
(1/720)[α₁, [α₁, [α₁, α₂]]] (α₁ = Δt ω(Δt/2), α₂ = Δt² α), which the seed omits. Adding Ω₃
changes the error by a modest factor only (measured in the test and in
docs/benchmarks/park_chung.md).

Normalised third-order quaternion exponential (the Magnus paper): for an imaginary quaternion X,

    exp(X) ≈ ((1 − |X|²/2) + (1 − |X|²/6) X) / √((1 − |X|²/2)² + (1 − |X|²/6)² |X|²).

It keeps the axis exactly and is a unit quaternion by construction, so only the angle is off:
with θ = |X| (half the rotation angle φ) the approximate half angle is
atan2((1 − θ²/6) θ, 1 − θ²/2) = θ + θ⁵/30 + O(θ⁷), i.e. a rotation-angle error of
φ⁵/480 + O(φ⁷). Measured (test + docs): 2.1e-8 rad at φ = 0.1 rad, 6.1e-4 rad (0.078 % of
the angle) at φ = 45°, 1.9e-2 rad (1.19 %) at φ = 90°. The seed's "error less than 1% for
rotations up to 90 degrees per time-step" holds up to 86° (φ = 1.50 rad), not quite at 90°.

Body form. For ġ = g ξ̂ with the body twist ξ = (ω, v) (equations.md), the same expansion gives
g′ = g exp(Θ) with

    Θ = ½ (ξ + ξ′) h + (h²/12) ad_ξ ξ′ [+ (h³/240) ad_Δ ad_Δ ξ, Δ = ξ′ − ξ],

whose rotation part is the seed's Ω with ω′ × ω replaced by ω × ω′ (the left-trivialised
equation reverses the sign of the commutator term; Ω₃ keeps its sign). R_k exp(Θ_ω) =
exp(R_k Θ_ω) R_k, so this is the seed's update with both angular velocities resolved in the
frame of R_k.

The ``magnus`` integrator (for every SE(3) vehicle through ``integrate(..., method="magnus")``):
per step, Heun's method (explicit trapezoid) on the velocity part,

    y* = y_k + h F(g_k, y_k),   y_{k+1} = y_k + (h/2)(F(g_k, y_k) + F(g*, y*)),

which is the seed's constant-acceleration assumption with α = (ω_{k+1} − ω_k)/h, then the pose
by the Magnus update above from ξ_k and ξ_{k+1}. One SE(3) exponential per step when the
right-hand side does not depend on the pose (rigid body: the wrench is held over the step;
g* = g_k), two otherwise (g* = g_k exp(h ξ_k), needed for second order: a chain under gravity).
Order 2 (fitted in the tests): the true ω(t) is not linear within a step, so the trapezoidal
Ω₁ already has an O(h³) local error; Ω₂ and Ω₃ only remove errors of higher order.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..lie import _series as S
from ..lie import quaternion, se3, so3
from ..trajectory import Trajectory
from .common import HolonomicSystem, RigidState, WrenchSpec
from .lie_rk import Counter, Step, StageRates, compose, exp_blocks, integrate_rigid_body
from .euler_poincare import cross, rotate

Array = np.ndarray
Exponential = Literal["exact", "normalised3"]
EXPONENTIALS: tuple[str, ...] = ("exact", "normalised3")


def magnus_vector(omega0: Array, omega1: Array, dt: float, third_term: bool = False) -> Array:
    """Ω = ½(ω + ω′)Δt + (1/12)(ω′ × ω)Δt² [+ (1/240) α × (α × ω) Δt⁵] (Magnus paper; spatial ω).

    α = (ω′ − ω)/Δt. Batched over leading axes; R′ = exp(Ω̂) R.
    """
    w0 = np.asarray(omega0, dtype=float)
    w1 = np.asarray(omega1, dtype=float)
    out = 0.5 * (w0 + w1) * dt + (dt * dt / 12.0) * cross(w1, w0)
    if third_term:
        alpha = (w1 - w0) / dt
        out = out + (dt ** 5 / 240.0) * cross(alpha, cross(alpha, w0))
    return out


def quaternion_exp(X: Array, approximation: Exponential = "exact") -> Array:
    """exp of the imaginary quaternion X (…, 3) as a unit quaternion (w, x, y, z).

    "exact": (cos|X|, sin|X| X/|X|) (the Magnus paper). "normalised3": the seed's normalised
    third-order truncation ((1 − |X|²/2) + (1 − |X|²/6) X)/norm.
    """
    X = np.asarray(X, dtype=float)
    t2 = np.einsum("...i,...i->...", X, X)
    if approximation == "exact":
        c = np.cos(np.sqrt(t2))
        s = S.sinc(t2)
        return np.concatenate([c[..., None], s[..., None] * X], axis=-1)
    if approximation == "normalised3":
        a = 1.0 - 0.5 * t2
        b = 1.0 - t2 / 6.0
        n = np.sqrt(a * a + b * b * t2)
        return np.concatenate([(a / n)[..., None], (b / n)[..., None] * X], axis=-1)
    raise ValueError(f"unknown exponential {approximation!r}; valid: {', '.join(EXPONENTIALS)}")


def magnus_rotation(R: Array, omega0: Array, omega1: Array, dt: float, third_term: bool = False) -> Array:
    """R′ = exp(Ω̂) R with Ω from :func:`magnus_vector` (spatial ω, the Magnus paper)."""
    return so3.exp(magnus_vector(omega0, omega1, dt, third_term)) @ np.asarray(R, dtype=float)


def magnus_quaternion(q: Array, omega0: Array, omega1: Array, dt: float, third_term: bool = False,
                      exponential: Exponential = "exact") -> Array:
    """q′ = exp(½ Ω) ⊗ q (the Magnus paper; spatial ω), with the exact or the normalised exponential."""
    dq = quaternion_exp(0.5 * magnus_vector(omega0, omega1, dt, third_term), exponential)
    return quaternion.multiply(dq, np.asarray(q, dtype=float))


def magnus_twist(xi0: Array, xi1: Array, h: float, third_term: bool = False) -> Array:
    """Body form on SE(3): Θ = ½(ξ + ξ′)h + (h²/12) ad_ξ ξ′ [+ (h³/240) ad_Δ ad_Δ ξ], Δ = ξ′ − ξ.

    g′ = g exp(Θ) for ġ = g ξ̂ with ξ(t) linear over the step (see the module docstring).
    """
    xi0 = np.asarray(xi0, dtype=float)
    xi1 = np.asarray(xi1, dtype=float)
    theta = 0.5 * h * (xi0 + xi1) + (h * h / 12.0) * rotate(se3.ad(xi0), xi1)
    if third_term:
        d = xi1 - xi0
        A = se3.ad(d)
        theta = theta + (h ** 3 / 240.0) * rotate(A, rotate(A, xi0))
    return theta


def step_increment(theta: Array, exponential: Exponential = "exact") -> tuple[Array, Array]:
    """(E, t) of exp(Θ) on SE(3): closed form, or the seed's normalised quaternion exponential for
    E with the matching third-order translation block (I + ½Θ̂_ω + (1/6)Θ̂_ω²) Θ_v (no trig)."""
    if exponential == "exact":
        return exp_blocks(theta)
    w, v = theta[..., :3], theta[..., 3:]
    E = quaternion.to_matrix(quaternion_exp(0.5 * w, exponential))
    return E, v + 0.5 * cross(w, v) + cross(w, cross(w, v)) / 6.0


def magnus_step_function(pose_free: bool, third_term: bool = False,
                         exponential: Exponential = "exact") -> Step:
    """The ``magnus`` step (Heun on y, Magnus on the pose) for a problem whose right-hand side
    does (``pose_free=False``) or does not depend on the pose."""
    if exponential not in EXPONENTIALS:
        raise ValueError(f"unknown exponential {exponential!r}; valid: {', '.join(EXPONENTIALS)}")

    def step(R: Array, x: Array, y: Array, h: float, rates: StageRates, counter: Counter):
        k1 = rates(R, x, y)
        y_pred = y + h * k1
        if pose_free:
            Rp, xp = R, x
        else:
            Rp, xp = compose(R, x, *exp_blocks(h * y[..., :6]))
            counter.exp += 1
        k2 = rates(Rp, xp, y_pred)
        counter.rates += 2
        y_new = y + (0.5 * h) * (k1 + k2)
        E, t = step_increment(magnus_twist(y[..., :6], y_new[..., :6], h, third_term), exponential)
        counter.exp += 1
        R_new, x_new = compose(R, x, E, t)
        return R_new, x_new, y_new

    return step


def magnus(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
           wrench: WrenchSpec = None, *, third_term: bool = False,
           exponential: Exponential = "exact") -> Trajectory:
    """The ``magnus`` rigid-body integrator (order 2; see the module docstring).

    ``third_term`` adds the seed's Ω₃; ``exponential="normalised3"`` uses the seed's normalised
    third-order quaternion exponential for the step rotation. One exponential per step.
    """
    name = "magnus" + ("-omega3" if third_term else "") + ("-q3" if exponential == "normalised3" else "")
    return integrate_rigid_body(magnus_step_function(True, third_term, exponential), name, system,
                                initial, dt, steps, wrench)


__all__ = ["magnus", "magnus_vector", "magnus_rotation", "magnus_quaternion", "magnus_twist",
           "quaternion_exp", "step_increment", "magnus_step_function", "EXPONENTIALS"]
