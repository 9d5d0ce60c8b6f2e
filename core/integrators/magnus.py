"""The Magnus update of a rotation under constant angular acceleration, and the ``magnus`` integrator
(``docs/equations.md``, "Baselines … and the other integrator families", ``magnus``).

From the article *Numerical Integration for Rotational Dynamics* (spatial ω, R′ = exp(Ω̂)R,
q′ = exp(½Ω) ⊗ q), with α = (ω′ − ω)/Δt:

    Ω = ½(ω + ω′)Δt + (1/12)(ω′ × ω)Δt² [+ Ω₃ = (1/240) α × (α × ω)Δt⁵, ``third_term``].

The first two terms are Blanes, Casas & Ros's fourth-order Magnus integrator (local error O(Δt⁵));
Ω₃ does not raise that order. Body form on SE(3), for ġ = g ξ̂ (the commutator changes sign):
Θ = ½(ξ + ξ′)h + (h²/12) ad_ξ ξ′ [+ (h³/240) ad_Δ ad_Δ ξ, Δ = ξ′ − ξ]. The article's normalised
third-order quaternion exponential keeps the axis exactly and is unit by construction; its angle
error is φ⁵/480, below 1 % up to 86° per step.

``magnus``: per step, Heun (explicit trapezoid) on the velocities, y* = y_k + hF(g_k, y_k),
y_{k+1} = y_k + (h/2)(F(g_k, y_k) + F(g*, y*)) — the article's constant acceleration — then the
pose by the body-form update from ξ_k and ξ_{k+1}. g* = g_k when the right-hand side ignores the
pose (one exponential per step), else g_k exp(hξ_k) (two). Order 2: against the true, non-linear
ω(t) the trapezoidal first term already has an O(h³) local error.
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
    """Ω = ½(ω + ω′)Δt + (1/12)(ω′ × ω)Δt² [+ (1/240) α × (α × ω) Δt⁵] (spatial ω; module docstring).

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

    "exact": (cos|X|, sin|X| X/|X|). "normalised3": the rotation article's normalised third-order
    truncation ((1 − |X|²/2) + (1 − |X|²/6) X)/norm.
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
    """R′ = exp(Ω̂) R with Ω from :func:`magnus_vector` (spatial ω)."""
    return so3.exp(magnus_vector(omega0, omega1, dt, third_term)) @ np.asarray(R, dtype=float)


def magnus_quaternion(q: Array, omega0: Array, omega1: Array, dt: float, third_term: bool = False,
                      exponential: Exponential = "exact") -> Array:
    """q′ = exp(½ Ω) ⊗ q (spatial ω), with the exact or the normalised exponential."""
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
    """(E, t) of exp(Θ) on SE(3): closed form, or the normalised quaternion exponential for
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

    ``third_term`` adds the rotation article's Ω₃; ``exponential="normalised3"`` uses its normalised
    third-order quaternion exponential for the step rotation. One exponential per step.
    """
    name = "magnus" + ("-omega3" if third_term else "") + ("-q3" if exponential == "normalised3" else "")
    return integrate_rigid_body(magnus_step_function(True, third_term, exponential), name, system,
                                initial, dt, steps, wrench)


__all__ = ["magnus", "magnus_vector", "magnus_rotation", "magnus_quaternion", "magnus_twist",
           "quaternion_exp", "step_increment", "magnus_step_function", "EXPONENTIALS"]
