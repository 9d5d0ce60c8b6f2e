"""The boat (paper §4.3.2, eq. 15) as DMOC residuals: the holonomic VI with thrusters, buoyancy,
hydrodynamics and wind from ``core.vehicles.boat``.

Control wrench B(u) = F u with F the thruster matrix [(c_i × d_i, d_i)] (constant: ∂B/∂u = F).
External wrench E(g, ξ) = gravity + buoyancy + hydrodynamic drag + wind of the vehicle module
(``Boat.external_wrench``: the hull mesh clipped by the water surface). Its Jacobian is analytic
(``Boat.external_wrench_jacobian``: forward-mode derivatives of the clipped hull with the wet/dry
pattern held fixed, then eq. (15) and the drag laws in patch moments), one batched call over all
steps; a callable current falls back to batched central differences. Its second derivatives are
*not* in the Lagrangian Hessian (the rest of the Hessian — the momentum maps, the pose equations,
obstacles, costs — stays exact).

Step size: the hull's heave, roll and pitch are stiff (heave period ≈ 0.7 s for the default
800 kg RIB); the explicit-in-force VI is stable for h ≲ 0.1 s (h = 0.25 s already diverges
under thrust), so boat problems need h = T/N ≤ 0.1 s.
"""
from __future__ import annotations

import numpy as np

from ...lie.so3 import exp as so3_exp
from ...scenario import Table
from ...trajectory import Trajectory
from ...scenario.common import read_integrator
from ...vehicles import boat as boatlib
from ...vehicles.boat_spec import thruster_bounds
from ...integrators.common import VEHICLE_DEFAULT_METHOD
from .holonomic import HolonomicModel


class BoatModel(HolonomicModel):
    vehicle = "boat"
    shape = ()
    default_collision_radius = 3.0
    on_surface = True
    ext_depends = (True, True, True)
    exact_external_hessian = False
    # The clipped-hull wrench is only piecewise smooth (patches switch at the waterline, windward patches
    # at edge-on incidence), which limits the attainable dual accuracy to ~1e-6 (scaled): the default
    # optimality tolerance is 1e-5 (constraint feasibility is still 1e-9). [solver] tol overrides it.
    default_tol = 1e-5

    def __init__(self, boat: boatlib.Boat, steps: int, method: str = "vi-cay"):
        self.boat = boat
        self.inputs = boat.input_names
        self.F = boat.control_matrix                                    # (6, n)
        self.control_mask = self.F != 0.0
        super().__init__(boat.inertia6, steps, method)

    def _probe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sparsity of ∂E/∂(s, x, ξ), declared from the vehicle module's wrench itself: the union of the
        nonzeros of its difference Jacobian at a few random afloat states (its structure depends on the
        damping matrix, the current field and the surface, which the module owns). Cached."""
        if getattr(self, "_ext_masks", None) is None:
            rng = np.random.default_rng(12345)
            k = 4
            z0 = self.boat.float_height()
            R = np.stack([so3_exp(rng.normal(scale=0.05, size=3)) for _ in range(k)])
            x = np.column_stack([rng.normal(scale=3.0, size=(k, 2)), z0 + rng.normal(scale=0.02, size=k)])
            xi = rng.normal(scale=0.5, size=(k, 6))
            _, Es, Ex, Exi = self.external_wrench_jacobian(R, x, xi)
            tol = 1e-9 * max(1.0, float(np.max(np.abs(np.concatenate([Es, Ex], axis=2)))))
            self._ext_masks = tuple(np.any(np.abs(a) > tol, axis=0) for a in (Es, Ex, Exi))
        return self._ext_masks

    @property
    def ext_rot_mask(self) -> np.ndarray:
        return self._probe()[0]

    @property
    def ext_pos_mask(self) -> np.ndarray:
        return self._probe()[1]

    @property
    def ext_xi_mask(self) -> np.ndarray:
        return self._probe()[2]

    def control_wrench(self, U):
        return U @ self.F.T, np.broadcast_to(self.F, (U.shape[0],) + self.F.shape)

    def external_wrench(self, R, x, xi):
        return self.boat.external_wrench(R, x, xi)

    def external_wrench_jacobian(self, R, x, xi):
        """E and ∂E/∂s, ∂E/∂x, ∂E/∂ξ for all steps at once, analytic: ``Boat.external_wrench_jacobian``."""
        return self.boat.external_wrench_jacobian(R, x, xi)

    def read_goal(self, t: Table) -> None:
        """As for any SE(3) vehicle, except that ``position`` may also be [x, y]: the height of a floating
        hull is set by the water (heave is not actuated), so a boat's goal usually fixes only x and y."""
        if t.has("position") and isinstance(t.data.get("position"), list) and len(t.data["position"]) == 2:
            pos = t.vector("position", 2)
            self.base[self.x[self.N, :2]] = pos
            self.fixed[self.x[self.N, :2]] = True
            self.goal_position = np.array([pos[0], pos[1], float(self.boat.float_height())])
            sub = Table({k: v for k, v in t.data.items() if k != "position"}, t.path)
            super().read_goal(sub)
            for key in sub.data:
                t._used.add(key)
            return
        super().read_goal(t)

    def input_limits(self):
        return thruster_bounds(self.boat, self.inputs)

    def trajectory(self, y: np.ndarray) -> Trajectory:
        """As ``Boat.simulate``: no shape, the thrusts per step."""
        traj = super().trajectory(y)
        traj.shape = {}
        return traj


def read_model(root: Table, vehicle: Table) -> BoatModel:
    from ...scenario.boat import read_boat

    boat = read_boat(vehicle)
    settings = read_integrator(root, BoatModel.methods, VEHICLE_DEFAULT_METHOD, solve=True)
    return BoatModel(boat, settings.steps, settings.method)


__all__ = ["BoatModel", "read_model"]
