"""The helicopter (paper §4.3.1) as DMOC residuals: the holonomic VI with its control wrench.

Controls per step u = (collective u_c, yaw u_ψ, pitch_tilt γ_p, roll_tilt γ_r) — the inputs of
``core.vehicles.helicopter`` — with control wrench B(u) = F(γ)(u_c, u_ψ),

    F(γ) = [[d_t sin γ_r, 0], [d_t sin γ_p cos γ_r, 0], [0, d_r],
            [sin γ_p cos γ_r, 0], [−sin γ_r, −1], [cos γ_p cos γ_r, 0]]

(equations.md, "Holonomic vehicles"; the vehicle module's ``control_matrix``), and external wrench
gravity E(R) = (0, −9.81 m Rᵀe_z), whose body-rotation derivative is −9.81 m (Rᵀe_z)^.
∂B/∂γ differentiates the entries of F (checked against differences in the tests).
"""
from __future__ import annotations

import numpy as np

from ...integrators.common import GRAVITY
from ...lie import so3
from ...scenario import Table
from ...trajectory import Trajectory
from ...scenario.common import read_integrator
from ...vehicles import helicopter as helilib
from ...vehicles.helicopter_spec import HELICOPTER
from ...integrators.common import VEHICLE_DEFAULT_METHOD
from .holonomic import HolonomicModel


class HelicopterModel(HolonomicModel):
    vehicle = "helicopter"
    inputs = helilib.INPUTS  # collective, yaw, pitch_tilt, roll_tilt
    shape = ("pitch_tilt", "roll_tilt")
    default_collision_radius = 5.0
    ext_depends = (True, False, False)
    ext_rot_rows = (False, False, False, True, True, True)  # gravity is a force through the centre of mass
    # rows τ1 τ2 τ3 F1 F2 F3 × (collective, yaw, pitch_tilt, roll_tilt)
    control_mask = np.array([[1, 0, 0, 1], [1, 0, 1, 1], [0, 1, 0, 0],
                             [1, 0, 1, 1], [1, 1, 0, 1], [1, 0, 1, 1]], dtype=bool)

    def __init__(self, heli: helilib.Helicopter, steps: int, method: str = "vi-cay"):
        self.heli = heli
        super().__init__(heli.inertia6, steps, method)

    def control_wrench(self, U):
        uc, gp, gr = U[:, 0], U[:, 2], U[:, 3]
        dt, dr = self.heli.main_rotor_offset, self.heli.tail_rotor_offset
        F = helilib.control_matrix(gp, gr, dt, dr)                       # (B, 6, 2)
        Bu = np.einsum("bij,bj->bi", F, U[:, :2])
        sp, cp, sr, cr = np.sin(gp), np.cos(gp), np.sin(gr), np.cos(gr)
        J = np.zeros((U.shape[0], 6, 4))
        J[:, :, :2] = F
        # ∂/∂γ_p of column 1 times u_c
        J[:, 1, 2] = dt * cp * cr * uc
        J[:, 3, 2] = cp * cr * uc
        J[:, 5, 2] = -sp * cr * uc
        # ∂/∂γ_r
        J[:, 0, 3] = dt * cr * uc
        J[:, 1, 3] = -dt * sp * sr * uc
        J[:, 3, 3] = -sp * sr * uc
        J[:, 4, 3] = -cr * uc
        J[:, 5, 3] = -cp * sr * uc
        return Bu, J

    def external_wrench(self, R, x, xi):
        return self.heli.gravity(R)

    def external_wrench_jacobian(self, R, x, xi):
        E = self.heli.gravity(R)
        B = R.shape[0]
        Es = np.zeros((B, 6, 3))
        ez_b = R[:, 2, :]                                                  # Rᵀ e_z
        Es[:, 3:, :] = -GRAVITY * self.heli.mass * so3.hat(ez_b)           # δ(Rᵀe_z) = (Rᵀe_z)^ s
        return E, Es, np.zeros((B, 6, 3)), np.zeros((B, 6, 6))

    def input_limits(self):
        return HELICOPTER.input_bounds(self.heli)

    def nominal_controls(self) -> np.ndarray:
        """Hover: u_c = m g, no yaw force, rotor level."""
        return np.array([self.heli.mass * GRAVITY, 0.0, 0.0, 0.0])

    def trajectory(self, y: np.ndarray) -> Trajectory:
        """As ``Helicopter.simulate``: plus shape (tilts per node, rotor angles) and the vehicle name."""
        traj = super().trajectory(y)
        t = np.asarray(traj.time)
        n = len(t)

        def per_node(u):
            return np.concatenate([u, u[-1:]])[:n]

        traj.shape = {"pitch_tilt": per_node(traj.controls["pitch_tilt"]),
                      "roll_tilt": per_node(traj.controls["roll_tilt"]),
                      "rotor_angle": self.heli.rotor_speed * t,
                      "tail_rotor_angle": self.heli.tail_rotor_ratio * self.heli.rotor_speed * t}
        return traj


def read_model(root: Table, vehicle: Table) -> HelicopterModel:
    from ...scenario.helicopter import read_helicopter

    heli = read_helicopter(vehicle)
    settings = read_integrator(root, HelicopterModel.methods, VEHICLE_DEFAULT_METHOD, solve=True)
    return HelicopterModel(heli, settings.steps, settings.method)


__all__ = ["HelicopterModel", "read_model"]
