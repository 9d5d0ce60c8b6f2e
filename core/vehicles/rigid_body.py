"""A free rigid body on SE(3), optionally under uniform gravity (paper §3.3 test body, §4.3).

𝕀 = diag(J₁, J₂, J₃, m, m, m) with principal moments J (kg·m²) in the body frame and the
origin of the body frame at the centre of mass. Gravity acts as the body wrench
f_ext = (0, 0, 0, Rᵀ(0, 0, −9.81 m)) (equations.md, Holonomic vehicles); its potential is
m g z. The integrators are those of :mod:`core.integrators` (``vi-cay`` by default).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..integrators import METHODS, integrate
from ..integrators.common import GRAVITY, HolonomicSystem, RigidState, WrenchSpec, wrench_function
from ..trajectory import Trajectory


def gravity_wrench(mass: float):
    """f(k, R, x, ξ) = (0, 0, 0, Rᵀ(0, 0, −g m)): uniform gravity as a body wrench (batched)."""
    w = -GRAVITY * float(mass)

    def f(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=float)
        out = np.zeros(R.shape[:-2] + (6,))
        out[..., 3:] = w * R[..., 2, :]   # Rᵀ e_z is the third row of R
        return out

    return f


@dataclass(frozen=True)
class RigidBody:
    """Mass m (kg), principal moments of inertia (3,) (kg·m²), uniform gravity on/off, extra wrench.

    ``wrench`` is added to gravity: None, an array (steps, 6) of body wrenches (torque, force)
    per step, or f(k, R, x, ξ) → (6,). Invalid parameters raise
    :class:`~core.errors.ScenarioError` naming the ``[vehicle]`` key.
    """

    mass: float
    inertia: Any
    gravity: bool = False
    wrench: WrenchSpec = field(default=None, compare=False)

    def __post_init__(self) -> None:
        m = _number("[vehicle] mass", self.mass)
        if m <= 0:
            raise ScenarioError("[vehicle] mass", f"must be positive, got {_fmt(self.mass)}")
        try:
            J = np.asarray(self.inertia, dtype=float)
        except (TypeError, ValueError):
            raise ScenarioError("[vehicle] inertia", f"must be 3 numbers, got {self.inertia!r}") from None
        if J.shape != (3,):
            raise ScenarioError("[vehicle] inertia", f"must have 3 entries, got shape {J.shape}")
        for i, j in enumerate(J):
            if not math.isfinite(j):
                raise ScenarioError(f"[vehicle] inertia[{i}]", f"must be finite, got {_fmt(j)}")
            if j <= 0:
                raise ScenarioError(f"[vehicle] inertia[{i}]", f"must be positive, got {_fmt(j)}")
        if not isinstance(self.gravity, (bool, np.bool_)):
            raise ScenarioError("[vehicle] gravity", f"must be true or false, got {self.gravity!r}")
        if self.wrench is not None and not callable(self.wrench):
            w = np.asarray(self.wrench, dtype=float)
            if w.ndim != 2 or w.shape[-1] != 6 or not np.all(np.isfinite(w)):
                raise ScenarioError("[vehicle] wrench", f"must be finite with shape (steps, 6), got shape {w.shape}")
        object.__setattr__(self, "mass", m)
        object.__setattr__(self, "inertia", tuple(float(j) for j in J))
        object.__setattr__(self, "gravity", bool(self.gravity))

    @property
    def inertia6(self) -> np.ndarray:
        """𝕀 = diag(J₁, J₂, J₃, m, m, m) as the (6,) vector a HolonomicSystem takes."""
        return np.array([*self.inertia, self.mass, self.mass, self.mass])

    def system(self) -> HolonomicSystem:
        """The body as a HolonomicSystem; its wrench is gravity (when on). ``wrench`` goes to simulate."""
        return HolonomicSystem(inertia=self.inertia6, wrench=gravity_wrench(self.mass) if self.gravity else None)

    def energy(self, state: RigidState) -> np.ndarray:
        """Kinetic energy ½ ωᵀJω + ½ m|v|², plus the potential m g z with gravity (batched)."""
        w = np.asarray(state.omega, dtype=float)
        v = np.asarray(state.v, dtype=float)
        e = 0.5 * np.einsum("...i,i,...i->...", w, np.asarray(self.inertia), w) + 0.5 * self.mass * np.sum(v * v, -1)
        if self.gravity:
            e = e + self.mass * GRAVITY * np.asarray(state.x, dtype=float)[..., 2]
        return e

    def simulate(self, initial: RigidState, dt: float, steps: int, method: str = "vi-cay") -> Trajectory:
        """Integrate from ``initial`` (body velocities); the Trajectory carries ``energy`` per node."""
        if method not in METHODS:
            raise ScenarioError("[integrator] method", f"unknown value {method!r}; valid: {', '.join(METHODS)}")
        spec = self.wrench
        if spec is not None and not callable(spec) and np.shape(spec)[0] != steps:
            raise ScenarioError("[vehicle] wrench", f"must have {steps} rows (one per step), got {np.shape(spec)[0]}")
        traj = integrate(self.system(), initial, dt, steps, method, wrench_function(spec, steps))
        traj.vehicle = "rigid_body"
        state = RigidState(R=np.eye(3), x=traj.position, omega=traj.angular_velocity, v=traj.linear_velocity)
        traj.series["energy"] = self.energy(state)
        return traj


def _number(where: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ScenarioError(where, f"must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ScenarioError(where, f"must be finite, got {_fmt(v)}")
    return v


def _fmt(v: Any) -> str:
    """-1.0 → '-1', 0.5 → '0.5': numbers as a person would write them in the scenario."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return str(int(f)) if math.isfinite(f) and f.is_integer() else repr(f)


__all__ = ["RigidBody", "gravity_wrench"]
