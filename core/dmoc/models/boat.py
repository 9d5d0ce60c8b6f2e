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

Moving water (a surface h(x, y, t)): the node wrench sees the sea as ``Boat.simulate`` does, held over each
step at its midpoint time — node 0 at h/2, an inner node k the mean of its wrench at (k − ½)h and (k + ½)h (its
two half kicks), the momentum arriving at node k at (k − ½)h — so a solved motion re-simulates exactly. Which
nodes a call holds is known from its site in the holonomic groups (start, momentum rows k = 1 … N − 1, goal,
the arriving momenta); the times need a fixed duration. The heave, roll and pitch follow the waves (a boat
cannot be at rest on them): on moving water a goal holds the horizontal position, the heading, the horizontal
velocity and the yaw rate only.

Step size: the hull's heave, roll and pitch are stiff (heave period ≈ 0.7 s for the default
800 kg RIB); the explicit-in-force VI is stable for h ≲ 0.1 s (h = 0.25 s already diverges
under thrust), so boat problems need h = T/N ≤ 0.1 s.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ...errors import ScenarioError
from ...lie import quaternion
from ...lie.so3 import exp as so3_exp
from ...scenario import Table
from ...trajectory import Trajectory
from ...scenario.common import read_integrator
from ..problem import Group
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
        self._water_site: str | None = None
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
            with self._site("probe"):   # (on moving water, at t = 0)
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
        if not self.boat.moving:
            return self.boat.external_wrench(R, x, xi)
        times = self._water_times(len(R))
        return sum(self.boat.external_wrench(R, x, xi, time=t) for t in times) / len(times)

    def external_wrench_jacobian(self, R, x, xi):
        """E and ∂E/∂s, ∂E/∂x, ∂E/∂ξ for all steps at once, analytic: ``Boat.external_wrench_jacobian`` (on
        moving water the mean over the nodes' times, as :meth:`external_wrench`)."""
        if not self.boat.moving:
            return self.boat.external_wrench_jacobian(R, x, xi)
        times = self._water_times(len(R))
        parts = [self.boat.external_wrench_jacobian(R, x, xi, time=t) for t in times]
        return tuple(sum(p[i] for p in parts) / len(parts) for i in range(4))

    # -- moving water: which nodes a wrench call holds, and when they see the sea ----------------------
    @contextmanager
    def _site(self, site: str):
        before, self._water_site = self._water_site, site
        try:
            yield
        finally:
            self._water_site = before

    def _water_times(self, n: int) -> list[np.ndarray]:
        """The times (n,) at which the n nodes of the current call see the sea, one array per wrench averaged
        (module docstring): start h/2; momentum rows k = 1 … N − 1 both (k ∓ ½)h; goal and arriving (k − ½)h;
        the sparsity probe's random states t = 0."""
        N, site = self.N, self._water_site
        if site == "probe":
            return [np.zeros(n)]
        h = float(self.base[self.T]) / N
        nodes = {"start": np.zeros(1), "momentum": np.arange(1.0, N), "goal": np.full(1, float(N)),
                 "arriving": np.arange(1.0, N + 1)}.get(site)
        if nodes is None or len(nodes) != n:
            raise RuntimeError(f"boat on moving water: no node times for a wrench call of {n} poses "
                               f"at site {site!r}")
        if site == "start":
            return [np.full(1, 0.5 * h)]
        if site == "momentum":
            return [(nodes - 0.5) * h, (nodes + 0.5) * h]
        return [(nodes - 0.5) * h]

    def _ext_remembered(self, site, jacobian, R, x, xi):
        with self._site(site):
            return super()._ext_remembered(site, jacobian, R, x, xi)

    def node_momenta(self, y: np.ndarray) -> np.ndarray:
        with self._site("arriving"):
            return super().node_momenta(y)

    def guess_rollout(self, y: np.ndarray) -> np.ndarray:
        """The rollout of the nominal thrusts on still water; on moving water the start pose held (the rollout's
        wrench has no clock)."""
        if not self.boat.moving:
            return super().guess_rollout(y)
        return self.guess_from_path(y, np.repeat(self.base[self.x[0]][None], self.N + 1, axis=0))

    def read_goal(self, t: Table) -> None:
        """As for any SE(3) vehicle, except that ``position`` may also be [x, y]: the height of a floating
        hull is set by the water (heave is not actuated), so a boat's goal usually fixes only x and y. On moving
        water the waves set the heave, roll and pitch: a goal [x, y, z] fixes x and y, an orientation its heading
        only; and the duration must be fixed (the nodes see the sea at their own times)."""
        moving = self.boat.moving
        if moving and not self.fixed[self.T]:
            raise ScenarioError("[time]", "moving water needs a fixed duration (give [time] duration): "
                                "each node sees the sea at its own time")
        raw = t.data.get("position")
        planar = isinstance(raw, list) and (len(raw) == 2 or (len(raw) == 3 and moving))
        level = moving and t.has("orientation")
        if not (planar or level):
            super().read_goal(t)
            return
        sub = {k: v for k, v in t.data.items() if not (k == "position" and planar or k == "orientation" and level)}
        if planar:
            pos = t.vector("position", len(raw))[:2]
            self.base[self.x[self.N, :2]] = pos
            self.fixed[self.x[self.N, :2]] = True
            self.goal_position = np.array([pos[0], pos[1], float(self.boat.float_height(time=self.base[self.T]))])
        if level:
            if t.has("heading"):
                raise t.error("heading", "give orientation or heading, not both")
            R = quaternion.to_matrix(t.quaternion("orientation"))
            sub["heading"] = float(np.arctan2(R[1, 0], R[0, 0]))
        table = Table(sub, t.path)
        super().read_goal(table)
        t._used.update(table.data)

    def goal_velocity_group(self, linear_world, angular_body) -> Group:
        """As for any SE(3) vehicle; on moving water only the yaw rate (body ω₃) and the horizontal world velocity
        are held (module docstring)."""
        g = super().goal_velocity_group(linear_world, angular_body)
        if not self.boat.moving:
            return g
        rows = ([0, 1, 2] if angular_body is not None else []) + ([3, 4, 5] if linear_world is not None else [])
        sel = np.array([i for i, r in enumerate(rows) if r in (2, 3, 4)])
        return Group("goal: velocity (horizontal, yaw rate)", g.idx, lambda X, Rr: g.fun(X, Rr)[:, sel], g.mask[sel],
                     jac=lambda X, Rr, frozen=False: g.jac(X, Rr, frozen)[:, sel], params=g.params,
                     lower=g.lower[:, sel], upper=g.upper[:, sel],
                     hess_jac=None if g.hess_jac is None else (lambda X, *p: g.hess_jac(X, *p)[:, sel]),
                     labels=g.labels)

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
