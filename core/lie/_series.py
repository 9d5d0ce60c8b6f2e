"""Smooth scalar coefficient functions of θ² shared by the SO(3)/SE(3) maps.

Each coefficient is a ratio such as (θ − sin θ)/θ³ whose direct formula loses
accuracy (or divides by zero) near θ = 0. Below a threshold we evaluate its Taylor
series in θ² instead (Horner form, exact rational coefficients from sympy), which
keeps every map exact at zero and accurate to round-off at θ = 1e-8.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

# Below this angle the series (through θ^10) is accurate to ~1e-16 relative for every
# coefficient here, while the direct formulas lose at most ~1e-11 just above it.
SERIES_THRESHOLD = 0.25


def _horner(t2: np.ndarray, coeffs: Sequence[float]) -> np.ndarray:
    out = np.full_like(t2, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = out * t2 + c
    return out


def smooth(direct: Callable[[np.ndarray], np.ndarray], coeffs: Sequence[float]):
    """Return f(θ²) that uses ``direct(θ)`` away from 0 and the series near it."""

    def f(t2: np.ndarray) -> np.ndarray:
        t2 = np.asarray(t2, dtype=float)
        small = t2 < SERIES_THRESHOLD**2
        theta = np.sqrt(np.where(small, 1.0, t2))
        with np.errstate(all="ignore"):
            d = direct(theta)
        return np.where(small, _horner(t2, coeffs), d)

    return f


# sin θ / θ
sinc = smooth(lambda t: np.sin(t) / t, [1, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800])
# (1 − cos θ) / θ²
cosc = smooth(lambda t: (1 - np.cos(t)) / t**2,
              [1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800, -1 / 479001600])
# (θ − sin θ) / θ³
k1 = smooth(lambda t: (t - np.sin(t)) / t**3,
            [1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800, -1 / 6227020800])
# (α − β)/θ² of Park & Chung eq. (21), α = sin θ/θ, β = 2(1 − cos θ)/θ²
k2 = smooth(lambda t: (np.sin(t) / t - 2 * (1 - np.cos(t)) / t**2) / t**2,
            [-1 / 12, 1 / 180, -1 / 6720, 1 / 453600, -1 / 47900160, 1 / 7264857600])
# (β/2 − 3(1 − α)/θ²)/θ² of eq. (21)
k3 = smooth(lambda t: ((1 - np.cos(t)) / t**2 - 3 * (t - np.sin(t)) / t**3) / t**2,
            [-1 / 60, 1 / 1260, -1 / 60480, 1 / 4989600, -1 / 622702080, 1 / 108972864000])
# (1 − γ)/θ² of eq. (19), γ = (θ/2) cot(θ/2)
k4 = smooth(lambda t: (1 - (t / 2) / np.tan(t / 2)) / t**2,
            [1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160, 691 / 1307674368000])
# (1/β + γ − 2)/θ⁴ of eq. (24)
k5 = smooth(lambda t: ((t / 2) ** 2 / np.sin(t / 2) ** 2 + (t / 2) / np.tan(t / 2) - 2) / t**4,
            [1 / 360, 1 / 7560, 1 / 201600, 1 / 5987520, 691 / 130767436800, 1 / 6227020800])
# θ / sin θ (for log)
# (its series converges only like (θ/π)^2k, so it needs three more terms than the others)
inv_sinc = smooth(lambda t: t / np.sin(t),
                  [1, 1 / 6, 7 / 360, 31 / 15120, 127 / 604800, 73 / 3421440,
                   1414477 / 653837184000, 8191 / 37362124800, 16931177 / 762187345920000])


def theta2(w: np.ndarray) -> np.ndarray:
    """θ² = |w|² over the last axis (batched), the argument of every coefficient above."""
    w = np.asarray(w, dtype=float)
    return np.einsum("...i,...i->...", w, w)
