"""What every SE(3) integrator takes: a holonomic system, an initial state, a wrench.

One interface for the variational integrators and the baselines:
``integrate(system, initial, dt, steps, method, wrench) -> Trajectory``
(see ``core.integrators``). Leading batch axes run many bodies at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

# f(k, R, x, ξ) → body wrench (..., 6) = (torque, force). k selects step k's inputs (held over
# the step); R (..., 3, 3), x (..., 3), ξ (..., 6) are the state where the method evaluates it:
# the node for the variational integrators, every stage for the Runge–Kutta-type methods.
WrenchFunction = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
WrenchSpec = Union[None, np.ndarray, WrenchFunction]

GRAVITY = 9.81  # m/s², along −z

# Vehicles default to the paper's own Appendix A pairing. The exact SE(3) pairings (vi-cay,
# vi-exp) couple spin to linear momentum through O(h²) terms such as (h²/4) m v × (ω × v):
# total momentum stays exact, but a fast vehicle's attitude error grows with speed squared
# (helicopter preset at 30 m/s, h = 0.05, 10 s: 1.07 rad for vi-cay, 6e-5 rad for vi-cay-ln;
# tests/core/integrators/test_holonomic.py measures it).
VEHICLE_DEFAULT_METHOD = "vi-cay-ln"


@dataclass(frozen=True)
class RigidState:
    """Pose (R, x) and body velocity ξ = (ω, v); arrays may carry leading batch axes."""

    R: np.ndarray
    x: np.ndarray
    omega: np.ndarray
    v: np.ndarray

    @property
    def xi(self) -> np.ndarray:
        return np.concatenate([np.asarray(self.omega, float), np.asarray(self.v, float)], axis=-1)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return np.shape(self.x)[:-1]


@dataclass(frozen=True)
class HolonomicSystem:
    """A rigid body on SE(3): 𝕀 = diag(J₁, J₂, J₃, m, m, m) and the wrench acting on it.

    ``inertia`` has shape (..., 6). ``wrench`` adds to any per-call wrench: gravity,
    buoyancy, control forces F(γ)u of a vehicle.
    """

    inertia: np.ndarray
    wrench: WrenchFunction | None = None


def wrench_function(spec: WrenchSpec, steps: int, batch_shape: tuple[int, ...] = ()) -> WrenchFunction | None:
    """Normalise a wrench given as None, an array (steps, ..., 6) or a callable."""
    if spec is None or callable(spec):
        return spec
    arr = np.asarray(spec, dtype=float)
    if arr.shape[0] != steps or arr.shape[-1] != 6:
        raise ValueError(f"wrench array must have shape ({steps}, ..., 6), got {arr.shape}")
    return lambda k, R, x, xi: arr[k]


def combine(*fns: WrenchFunction | None) -> WrenchFunction | None:
    """Sum of wrench functions (None entries skipped)."""
    live = [f for f in fns if f is not None]
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    return lambda k, R, x, xi: sum(f(k, R, x, xi) for f in live)
