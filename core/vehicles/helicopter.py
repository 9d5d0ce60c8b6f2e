"""Simple helicopter (paper §4.3.1): an underactuated rigid body steered by a tiltable main rotor.

Model (equations.md, "Holonomic vehicles"): a rigid body on SE(3) with J = diag(J₁, J₂, J₃),
M = m I₃, under gravity f_ext = (0, 0, 0, Rᵀ(0, 0, −9.81 m)) and the control wrench F(γ) u with
controls u = (u_c collective lift, u_ψ tail-rotor force), shape γ = (γ_p pitch tilt, γ_r roll tilt):

    F(γ) = [[d_t sin γ_r, 0], [d_t sin γ_p cos γ_r, 0], [0, d_r],
            [sin γ_p cos γ_r, 0], [−sin γ_r, −1], [cos γ_p cos γ_r, 0]]     (rows τ₁ τ₂ τ₃ F₁ F₂ F₃)

Sign conventions (body frame: x forward, y to the left, z up; origin at the centre of mass).
The first column is the lift u_c along the unit rotor axis n(γ) = (sin γ_p cos γ_r, −sin γ_r,
cos γ_p cos γ_r) applied at the rotor hub (0, 0, d_t): its torque (0, 0, d_t) × n is exactly the
first three rows. Hence

* γ_p > 0 tilts the rotor forward: body force +x (the helicopter accelerates forward) and
  torque +τ₂, which pitches the nose down (as a real helicopter does);
* γ_r > 0 tilts the rotor to the right: body force −y (toward the right) and torque +τ₁,
  a roll to the right (right side down);
* the tail rotor sits at (−d_r, 0, 0) and pushes along −y with force u_ψ; its torque
  (−d_r, 0, 0) × (0, −u_ψ, 0) = (0, 0, d_r u_ψ): u_ψ > 0 yaws the nose to the left (ω₃ > 0).

The rotor's reaction torque and gyroscopic effects are not modelled (as in the seed). Hovering
needs u_c = m g with γ = 0, which cancels gravity exactly at any yaw.

Inputs are per step: u_k and γ_k are held over step k, [t_k, t_{k+1}] (a zero-order hold, as
the integrators apply a per-step wrench). To follow a smooth input profile u(t) to second
order, sample it at the step midpoints t_k + h/2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..errors import ScenarioError
from ..integrators.common import GRAVITY, VEHICLE_DEFAULT_METHOD, HolonomicSystem, RigidState
from ..trajectory import Trajectory
from .helicopter_spec import HELICOPTER

INPUTS = HELICOPTER.input_names   # collective, yaw, pitch_tilt, roll_tilt
_LIGHT: Mapping[str, Any] = HELICOPTER.preset("light helicopter").values   # numbers and the inertia triple


@dataclass(frozen=True)
class Helicopter:
    """Parameters (SI units, angles in radians). Defaults: the "light helicopter" preset."""

    mass: float = _LIGHT["mass"]
    inertia: tuple[float, float, float] = _LIGHT["inertia"]      # roll, pitch, yaw (kg m²)
    main_rotor_offset: float = _LIGHT["main_rotor_offset"]      # d_t: rotor hub height above the centre of mass (m)
    tail_rotor_offset: float = _LIGHT["tail_rotor_offset"]      # d_r: tail rotor distance behind the centre of mass (m)
    max_tilt: float = _LIGHT["max_tilt"]
    max_collective: float = _LIGHT["max_collective"]            # N: 1.6 × the weight
    max_yaw: float = _LIGHT["max_yaw"]                          # N
    rotor_speed: float = _LIGHT["rotor_speed"]                  # rad/s (530 rpm) — spin of the animated main rotor
    tail_rotor_ratio: float = _LIGHT["tail_rotor_ratio"]        # tail-rotor spin / main-rotor spin

    def __post_init__(self) -> None:
        inertia = np.asarray(self.inertia, dtype=float)
        checks = [("mass", self.mass > 0), ("main_rotor_offset", self.main_rotor_offset > 0),
                  ("tail_rotor_offset", self.tail_rotor_offset > 0),
                  ("max_collective", self.max_collective > 0), ("max_yaw", self.max_yaw >= 0),
                  ("max_tilt", 0 <= self.max_tilt < math.pi / 2)]
        for key, ok in checks:
            if not (ok and math.isfinite(getattr(self, key))):
                raise ScenarioError(f"[vehicle] {key}", f"out of range: {getattr(self, key)!r}")
        if inertia.shape != (3,) or not np.all(np.isfinite(inertia)) or np.any(inertia <= 0):
            raise ScenarioError("[vehicle] inertia", f"must be 3 positive numbers, got {self.inertia!r}")
        if not math.isfinite(self.rotor_speed):
            raise ScenarioError("[vehicle] rotor_speed", f"must be finite, got {self.rotor_speed!r}")
        object.__setattr__(self, "inertia", tuple(float(j) for j in inertia))

    # -- model ------------------------------------------------------------------------------------
    @property
    def inertia6(self) -> np.ndarray:
        """𝕀 = diag(J₁, J₂, J₃, m, m, m) as the (6,) vector HolonomicSystem takes."""
        return np.array([*self.inertia, self.mass, self.mass, self.mass])

    def control_matrix(self, pitch_tilt: np.ndarray, roll_tilt: np.ndarray) -> np.ndarray:
        """F(γ) of §4.3.1, shape (…, 6, 2) for tilt arrays of shape (…)."""
        return control_matrix(pitch_tilt, roll_tilt, self.main_rotor_offset, self.tail_rotor_offset)

    def gravity(self, R: np.ndarray) -> np.ndarray:
        """f_ext = (0, 0, 0, Rᵀ(0, 0, −9.81 m)) for orientations (…, 3, 3) → (…, 6)."""
        R = np.asarray(R, dtype=float)
        force = -GRAVITY * self.mass * R[..., 2, :]       # Rᵀ e_z is the third row of R
        return np.concatenate([np.zeros_like(force), force], axis=-1)

    def check_controls(self, controls: Mapping[str, np.ndarray], steps: int) -> dict[str, np.ndarray]:
        """Per-step inputs by name (missing ones are zero), checked for shape and limits."""
        unknown = sorted(set(controls) - set(INPUTS))
        if unknown:
            raise ScenarioError(f"[controls.{unknown[0]}]",
                                f"unknown input; this vehicle's inputs are: {', '.join(INPUTS)}")
        limits = HELICOPTER.input_bounds(self)
        out = {}
        for name in INPUTS:
            u = np.zeros(steps) if name not in controls else np.asarray(controls[name], dtype=float)
            if u.shape != (steps,):
                raise ScenarioError(f"[controls.{name}]", f"must have one value per step ({steps}), got shape {u.shape}")
            if not np.all(np.isfinite(u)):
                raise ScenarioError(f"[controls.{name}]", "contains NaN or infinite values")
            lo, hi = limits[name]
            bad = np.flatnonzero((u < lo - 1e-12) | (u > hi + 1e-12))
            if bad.size:
                k = int(bad[0])
                raise ScenarioError(f"[controls.{name}]",
                                    f"value {u[k]:.6g} at step {k} is outside the limit [{lo:g}, {hi:g}]")
            out[name] = u
        return out

    def system(self, controls: Mapping[str, np.ndarray], steps: int) -> HolonomicSystem:
        """The holonomic system with wrench f(k, R, x, ξ) = F(γ_k) u_k + gravity, over step k."""
        c = self.check_controls(controls, steps)
        F = self.control_matrix(c["pitch_tilt"], c["roll_tilt"])                   # (steps, 6, 2)
        u = np.stack([c["collective"], c["yaw"]], axis=-1)                          # (steps, 2)
        control_wrench = np.einsum("kij,kj->ki", F, u)                              # (steps, 6)

        def wrench(k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray) -> np.ndarray:
            return control_wrench[k] + self.gravity(R)

        return HolonomicSystem(inertia=self.inertia6, wrench=wrench)

    def simulate(self, initial: RigidState, controls: Mapping[str, np.ndarray], dt: float, steps: int,
                 method: str = VEHICLE_DEFAULT_METHOD) -> Trajectory:
        """Integrate; the trajectory carries the rotor shape and the inputs for the Blender baker.

        ``shape``: ``pitch_tilt``, ``roll_tilt`` (per node: the tilt commanded over the step
        leaving the node, the last node repeating the last step's), ``rotor_angle`` = rotor_speed·t
        and ``tail_rotor_angle`` = tail_rotor_ratio·rotor_speed·t (accumulating, for animation).
        ``controls``: the four inputs per step.
        """
        from ..integrators import integrate  # the shared VI and baselines

        c = self.check_controls(controls, steps)
        traj = integrate(self.system(c, steps), initial, dt, steps, method)
        t = np.asarray(traj.time, dtype=float)
        n = len(t)

        def per_node(u: np.ndarray) -> np.ndarray:
            return np.concatenate([u, u[-1:]])[:n]

        traj.shape = {"pitch_tilt": per_node(c["pitch_tilt"]), "roll_tilt": per_node(c["roll_tilt"]),
                      "rotor_angle": self.rotor_speed * t,
                      "tail_rotor_angle": self.tail_rotor_ratio * self.rotor_speed * t}
        traj.controls = {name: c[name][: max(n - 1, 0)] for name in INPUTS}
        traj.vehicle = "helicopter"
        return traj


def control_matrix(pitch_tilt: np.ndarray, roll_tilt: np.ndarray, d_t: float, d_r: float) -> np.ndarray:
    """F(γ) (equations.md, Holonomic vehicles): (…, 6, 2), columns (collective, yaw)."""
    gp = np.asarray(pitch_tilt, dtype=float)
    gr = np.asarray(roll_tilt, dtype=float)
    gp, gr = np.broadcast_arrays(gp, gr)
    sp, cp, sr, cr = np.sin(gp), np.cos(gp), np.sin(gr), np.cos(gr)
    F = np.zeros(gp.shape + (6, 2))
    F[..., 0, 0] = d_t * sr
    F[..., 1, 0] = d_t * sp * cr
    F[..., 2, 1] = d_r
    F[..., 3, 0] = sp * cr
    F[..., 4, 0] = -sr
    F[..., 4, 1] = -1.0
    F[..., 5, 0] = cp * cr
    return F


PRESETS: dict[str, Helicopter] = {"light helicopter": Helicopter()}


__all__ = ["Helicopter", "INPUTS", "PRESETS", "control_matrix"]
