"""The snakeboard (paper §5.2.2) as DMOC residuals: the nonholonomic VI of eqs. (16)–(17).

Decision variables: at every node k the discrete node of ``core.vehicles.snakeboard``
n_k = (θ, x, y, ψ, φ, P, π_ψ, π_φ) — the SE(2) pose, the shape (rotor angle ψ, wheel angle φ), the
nonholonomic momentum P arriving at the node and the rotor and steering momenta (discrete Legendre
transforms) — per step the velocity coordinate s_k along the constraint direction
(ξ_k = s_k e₁(φ_{k+α})) and the torques f_k = (f^ψ, f^φ); plus T when the duration is free.

The vehicle module solves the momentum equation for s_k by Newton inside its step; DMOC keeps s_k
as a variable and imposes the equation itself, so every row is explicit (nine per step):

    Π = π_ψ + h(1−α) f^ψ,   u^φ = (π_φ + h(1−α) f^φ)/(2J),   φ_{k+α} = φ + αh u^φ
    e₁(φ_k)ᵀ dcay⁻¹(hξ_k)ᵀ μ_k − P_k = 0                      (momentum, eq. 16: the cubic in s_k)
    θ' = θ + 2 atan(½hω),  (x', y') = (x, y) + R(θ)(4hv, 2hω hv)/(4 + (hω)²)     (g' = g cay(hξ))
    ψ' = ψ + h(Π/I − ω),   φ' = φ + h u^φ
    P' = e₁(φ')ᵀ dcay⁻¹(−hξ_k)ᵀ μ_k,   π_ψ' = Π + hα f^ψ,   π_φ' = 2J u^φ + hα f^φ

with ω = s e₁⁰(φ_{k+α}), v = s e₁¹(φ_{k+α}), μ_k = (Π + (ml² − I)ω, m v, 0) — the same equations as
``core.vehicles.snakeboard.step`` (a test checks that these residuals vanish on its output). The
wheel stop of the simulator is a bound |φ| ≤ max_wheel_angle here. The residuals are written with
complex-safe numpy operations, so their Jacobian is the complex-step derivative over the 20 local
coordinates of a step (exact to rounding, one batched evaluation).
"""
from __future__ import annotations

import numpy as np

from ...errors import ScenarioError
from ...scenario import Table
from ...trajectory import Trajectory
from ...scenario.common import read_integrator
from ...vehicles import snakeboard as sblib
from ...vehicles.snakeboard_spec import SNAKEBOARD
from ..problem import Group
from . import Model, se2_point_curvature, se2_point_map

TH, X, Y, PSI, PHI, P, PIPSI, PIPHI = range(8)
NODE = ("heading", "x", "y", "rotor_angle", "wheel_angle", "nonholonomic momentum", "rotor momentum",
        "steering momentum")


def node_speed(b: sblib.Snakeboard, phi, P, pi_psi):
    """Forward body speed v_x at a node: ψ̇ from the momenta (``rotor_rate_from_momenta``), then
    v_x = −(P − I sin 2φ ψ̇)/(2 m l) (``body_velocity``); complex-safe."""
    ml2 = b.mass * b.half_wheelbase ** 2
    k = b.rotor_inertia / ml2
    s = np.sin(phi)
    psid = (pi_psi / b.rotor_inertia - np.tan(phi) * P / (2 * ml2)) / (1 - k * s * s)
    return -(P - b.rotor_inertia * np.sin(2 * phi) * psid) / (2 * b.mass * b.half_wheelbase)


class SnakeboardModel(Model):
    vehicle = "snakeboard"
    inputs = sblib.INPUTS      # rotor_torque, steering_torque
    shape = sblib.SHAPE        # rotor_angle, wheel_angle
    pose_dim = 3
    position_dim = 2
    se3 = False
    default_collision_radius = 0.5

    def __init__(self, board: sblib.Snakeboard, steps: int, alpha: float = 0.5):
        super().__init__(steps, alpha)
        self.board = board
        N = self.N
        self.node = self.layout.add("node", (N + 1, 8), NODE)
        self.s = self.layout.add("s", (N, 1), ("constraint velocity s",), axis="step")
        self.controls = self.layout.add("controls", (N, 2), self.inputs, axis="step")
        self.base, self.fixed, self.lo, self.hi = self.arrays()
        self.extra_groups: list[Group] = []
        self.goal_position: np.ndarray | None = None
        self._goal_speed: float | None = None
        self.start = sblib.SnakeboardState()
        self.lo[self.node[:, PHI]], self.hi[self.node[:, PHI]] = SNAKEBOARD.channel("wheel_angle").bounds(board)
        for j, name in enumerate(self.inputs):
            self.lo[self.controls[:, j]], self.hi[self.controls[:, j]] = SNAKEBOARD.input(name).bounds(board)

    # -- indices ------------------------------------------------------------------------------------
    @property
    def pose_idx(self) -> np.ndarray:
        return self.node[:, [TH, X, Y]]

    @property
    def position_idx(self) -> np.ndarray:
        return self.node[:, [X, Y]]

    @property
    def control_idx(self) -> np.ndarray:
        return self.controls

    def point_map(self, Xp, body, *ref):
        return se2_point_map(Xp, body)

    def point_curvature(self, Xp, body, w, *ref):
        return se2_point_curvature(Xp, body, w)

    # -- dynamics -------------------------------------------------------------------------------------
    def residual(self, Xl: np.ndarray) -> np.ndarray:
        """The nine rows of step k from local (n_k, n_{k+1}, s_k, f^ψ, f^φ, T); complex-safe."""
        b, N, a = self.board, self.N, self.alpha
        m, l, I2, J = b.mass, b.half_wheelbase, b.rotor_inertia, b.wheel_inertia
        a_ = m * l * l - I2
        # every local coordinate contiguous (a transposed copy; n0[:, j] is then a contiguous row): numpy
        # multiplies complex arrays in a SIMD loop (fused multiply-adds) unless the output may overlap an
        # input, judged from the input's extent |stride| × length, and then in a scalar loop that rounds
        # differently. A strided column of Xl claims an extent past Xl's end, so a temporary that malloc
        # happened to place right after Xl took the scalar loop (the complex-step Jacobian 1 ulp off, from
        # one run to the next); a contiguous input's extent is exact, it never looks overlapping
        Xc = np.ascontiguousarray(np.transpose(Xl))
        n0, n1 = Xc[0:8].T, Xc[8:16].T
        s, fp, ff, h = Xc[16], Xc[17], Xc[18], Xc[19] / N
        th, phi, Pk, pi_psi, pi_phi = n0[:, TH], n0[:, PHI], n0[:, P], n0[:, PIPSI], n0[:, PIPHI]
        Pi = pi_psi + h * (1 - a) * fp
        uphi = (pi_phi + h * (1 - a) * ff) / (2 * J)
        phi_next = phi + h * uphi
        phia = phi + a * h * uphi
        c0, c1 = np.sin(2 * phi), -2 * l * np.cos(phi) ** 2
        e0, ee1 = np.sin(2 * phia), -2 * l * np.cos(phia) ** 2
        q4 = 0.25 * h * h
        cm0, cm1 = c0 * Pi, c0 * a_ * e0 + c1 * m * ee1
        em0, em1 = e0 * Pi, a_ * e0 * e0 + m * ee1 * ee1
        r = [cm0 + cm1 * s + q4 * e0 * c0 * s * s * (em0 + em1 * s) - Pk]
        w, v = s * e0, s * ee1
        hw, hv = h * w, h * v
        den = 4 + hw * hw
        bx, by = 4 * hv / den, 2 * hw * hv / den
        ct, st = np.cos(th), np.sin(th)
        mu0, mu1 = Pi + a_ * w, m * v
        cn0 = np.sin(2 * phi_next)
        P_next = cn0 * mu0 - 2 * l * np.cos(phi_next) ** 2 * mu1 + q4 * s * s * e0 * cn0 * (e0 * mu0 + ee1 * mu1)
        r += [n1[:, TH] - th - 2 * np.arctan(0.5 * hw),
              n1[:, X] - n0[:, X] - (ct * bx - st * by),
              n1[:, Y] - n0[:, Y] - (st * bx + ct * by),
              n1[:, PSI] - n0[:, PSI] - h * (Pi / I2 - w),
              n1[:, PHI] - phi_next,
              n1[:, P] - P_next,
              n1[:, PIPSI] - (Pi + h * a * fp),
              n1[:, PIPHI] - (2 * J * uphi + h * a * ff)]
        return np.stack(r, axis=1)

    def _mask(self) -> np.ndarray:
        a = self.alpha
        S, FP, FF, T = 16, 17, 18, 19
        pi_ = {PIPSI, T} | ({FP} if a < 1 else set())
        uphi = {PIPHI, T} | ({FF} if a < 1 else set())
        phia = {PHI} | (uphi if a > 0 else set())
        rows = [
            {PHI, P, S} | pi_ | phia | {T},
            {8 + TH, TH, S, T} | phia,
            {8 + X, X, TH, S, T} | phia,
            {8 + Y, Y, TH, S, T} | phia,
            {8 + PSI, PSI, S, T} | pi_ | phia,
            {8 + PHI, PHI} | uphi,
            {8 + P, PHI, S, T} | uphi | pi_ | phia,
            {8 + PIPSI, PIPSI, FP, T},
            {8 + PIPHI, PIPHI, FF, T} | uphi,
        ]
        mask = np.zeros((9, 20), dtype=bool)
        for i, deps in enumerate(rows):
            mask[i, sorted(deps)] = True
        return mask

    def dynamics(self) -> list[Group]:
        N = self.N
        idx = np.concatenate([self.node[:-1], self.node[1:], self.s, self.controls, np.full((N, 1), self.T)], axis=1)
        nonlinear = np.zeros(20, dtype=bool)
        nonlinear[[TH, PHI, PIPSI, PIPHI, 16, 17, 18, 19]] = True
        return [Group("dynamics (eqs. 16–17)", idx, lambda Xl: self.residual(Xl), self._mask(),
                      complex_step=True, nonlinear=nonlinear, labels=[f"step {k}" for k in range(N)])]

    def speed_group(self, nodes: np.ndarray, lo: float, hi: float, name: str) -> Group:
        b = self.board
        idx = self.node[nodes][:, [PHI, P, PIPSI]]
        return Group(name, idx, lambda Xl: node_speed(b, *np.ascontiguousarray(np.transpose(Xl)))[:, None],
                     np.ones((1, 3), dtype=bool), complex_step=True, lower=lo, upper=hi,
                     labels=[f"node {k}" for k in nodes])

    # -- scenario -------------------------------------------------------------------------------------
    def _fix(self, idx, values) -> None:
        idx = np.asarray(idx)
        self.base[idx] = values
        self.fixed[idx] = True

    def read_start(self, t: Table) -> None:
        lim = self.board.max_wheel_angle
        x, y = t.vector("position", 2, [0.0, 0.0])
        kw = dict(heading=t.number("heading", 0.0), x=float(x), y=float(y),
                  rotor_angle=t.number("rotor_angle", 0.0), wheel_angle=t.number("wheel_angle", 0.0, low=-lim, high=lim),
                  rotor_rate=t.number("rotor_rate", 0.0), wheel_rate=t.number("wheel_rate", 0.0))
        self.start = sblib.SnakeboardState.with_speed(self.board, t.number("speed", 0.0), **kw)
        self._fix(self.node[0], sblib.node_from_state(self.board, self.start.vector()))

    def read_goal(self, t: Table) -> None:
        last = self.node[self.N]
        if t.has("position"):
            pos = t.vector("position", 2)
            self._fix(last[[X, Y]], pos)
            self.goal_position = np.array([pos[0], pos[1], 0.0])
        for key, col in (("heading", TH), ("rotor_angle", PSI), ("wheel_angle", PHI)):
            if t.has(key):
                self._fix([last[col]], [t.number(key)])
        if t.has("speed"):
            v = t.number("speed")
            self._goal_speed = abs(v)
            self.extra_groups.append(self.speed_group(np.array([self.N]), v, v, "goal: speed"))

    def read_bounds(self, t: Table) -> None:
        b = self.board
        for j, name in enumerate(self.inputs):
            if t.has(name):
                lo, hi = _interval(t, name)
                lim = SNAKEBOARD.input(name).bound(b)
                if lo < -lim - 1e-12 or hi > lim + 1e-12:
                    raise t.error(name, f"[{lo:g}, {hi:g}] exceeds the vehicle's limit ±{lim:g}")
                self.lo[self.controls[:, j]], self.hi[self.controls[:, j]] = lo, hi
        if t.has("wheel_angle"):
            lo, hi = _interval(t, "wheel_angle")
            lim = SNAKEBOARD.channel("wheel_angle").bounds(b)[1]
            if lo < -lim - 1e-12 or hi > lim + 1e-12:
                raise t.error("wheel_angle", f"[{lo:g}, {hi:g}] exceeds max_wheel_angle ±{lim:g}")
            self.lo[self.node[:, PHI]], self.hi[self.node[:, PHI]] = lo, hi
        if t.has("rotor_angle"):
            lo, hi = _interval(t, "rotor_angle")
            self.lo[self.node[:, PSI]], self.hi[self.node[:, PSI]] = lo, hi
        if t.has("speed"):
            lo, hi = _interval(t, "speed")
            self.extra_groups.append(self.speed_group(np.arange(1, self.N + 1), lo, hi, "bounds: speed"))

    def fix_heading(self, node: int, heading: float, label: str) -> list[Group]:
        self._fix([self.node[node, TH]], [heading])
        return []

    # -- initial guess ---------------------------------------------------------------------------------
    def start_position(self) -> np.ndarray:
        return np.array([self.start.x, self.start.y, 0.0])

    def start_speed(self) -> float:
        return float(abs(node_speed(self.board, self.start.wheel_angle, self.start.momentum,
                                    self.base[self.node[0, PIPSI]])))

    def goal_speed(self) -> float | None:
        return self._goal_speed

    def seed_controls(self, h: float) -> np.ndarray:
        """A small deterministic excitation (10 % of the torque limits, two incommensurate sines):
        from rest every first-order sensitivity of the motion to the torques vanishes (the drift of a
        snakeboard is a product of rotor and wheel rates), so a guess exactly at rest is a stationary
        point the optimiser cannot leave. The gait itself is left to the optimiser."""
        t = np.arange(self.N) * h
        T = max(self.N * h, 1e-9)
        b = self.board
        return np.stack([0.1 * b.max_rotor_torque * np.sin(2 * np.pi * 1.5 * t / T),
                         0.1 * b.max_steering_torque * np.sin(2 * np.pi * 2.5 * t / T + 1.0)], axis=1)

    def guess_rollout(self, y: np.ndarray) -> np.ndarray:
        """Forward simulation (the vehicle's own integrator) from the start with the seed torques."""
        h = float(y[self.T]) / self.N
        U = np.clip(self.seed_controls(h), self.lo[self.controls], self.hi[self.controls])
        node = self.base[self.node[0]].copy()
        nodes, ss = [node], []
        for k in range(self.N):  # initial guess only (not a constraint evaluation)
            r = sblib.step(self.board, node, U[k, 0], U[k, 1], h, self.alpha)
            node = r["node"]
            nodes.append(node)
            ss.append(float(r["s"]))
        y[self.node] = np.array(nodes)
        y[self.s] = np.array(ss)[:, None]
        y[self.controls] = U
        return np.where(self.fixed, self.base, y)

    def guess_from_path(self, y: np.ndarray, path: np.ndarray, spec=None) -> np.ndarray:
        """Along a path: heading along it, wheels straight, s from the speed (v = −2 l s cos²0)."""
        N, b = self.N, self.board
        h = float(y[self.T]) / N
        d = np.diff(np.asarray(path)[:, :2], axis=0)
        seg = np.linalg.norm(d, axis=1)
        head = np.where(seg > 1e-9, np.arctan2(d[:, 1], d[:, 0]), self.start.heading)
        theta = np.concatenate([[self.start.heading], head])
        theta = self.start.heading + np.concatenate([[0.0], np.cumsum((np.diff(theta) + np.pi) % (2 * np.pi) - np.pi)])
        nodes = np.zeros((N + 1, 8))
        nodes[:, TH], nodes[:, X], nodes[:, Y] = theta, path[:, 0], path[:, 1]
        s = -seg / h / (2 * b.half_wheelbase)
        nodes[1:, P] = -2 * b.mass * b.half_wheelbase * seg / h
        y[self.node] = nodes
        y[self.s] = s[:, None]
        y[self.controls] = np.clip(self.seed_controls(h), self.lo[self.controls], self.hi[self.controls])
        return np.where(self.fixed, self.base, y)

    # -- output -------------------------------------------------------------------------------------
    def trajectory(self, y: np.ndarray) -> Trajectory:
        """The vehicle module's own Trajectory assembly from the nodes and torques."""
        h = float(y[self.T]) / self.N
        U = y[self.controls]
        traj = sblib._trajectory(self.board, y[self.node], U[:, 0], U[:, 1], h)
        traj.stats = {"alpha": self.alpha, "tau": "cay", "dt": h}
        return traj

    def from_trajectory(self, traj: Trajectory) -> np.ndarray:
        y = self.base.copy()
        n = self.N + 1
        if len(traj.time) != n or any(len(traj.controls.get(k, [])) != self.N for k in self.inputs):
            raise ScenarioError("initial trajectory", f"must have {n} nodes and {self.N} controls per input")
        st = np.column_stack([traj.heading, traj.position[:, 0], traj.position[:, 1], traj.shape["rotor_angle"],
                              traj.shape["wheel_angle"], traj.series["rotor_rate"], traj.series["wheel_rate"],
                              traj.series["nonholonomic_momentum"]])
        h = float(traj.time[-1]) / self.N
        nodes = sblib.node_from_state(self.board, st)
        y[self.node] = nodes
        U = np.stack([traj.controls[k] for k in self.inputs], axis=1)
        y[self.controls] = U
        y[self.T] = float(traj.time[-1])
        ss = [float(sblib.step(self.board, nodes[k], U[k, 0], U[k, 1], h, self.alpha)["s"]) for k in range(self.N)]
        y[self.s] = np.array(ss)[:, None]
        return np.where(self.fixed, self.base, y)


def _interval(t: Table, key: str) -> tuple[float, float]:
    v = t.vector(key, 2)
    if v[0] > v[1]:
        raise t.error(key, f"lower bound {v[0]:g} exceeds upper bound {v[1]:g}")
    return float(v[0]), float(v[1])


def read_model(root: Table, vehicle: Table) -> SnakeboardModel:
    from ...scenario.snakeboard import read_board

    board = read_board(vehicle)
    settings = read_integrator(root, ("variational",), "variational", with_alpha=True, solve=True)
    return SnakeboardModel(board, settings.steps, settings.alpha)


__all__ = ["SnakeboardModel", "read_model", "node_speed"]
