"""The car (paper §5.2.1, Kelly–Murray model) as DMOC residuals.

Decision variables: at every node k = 0…N the discrete state of ``core.vehicles.car``
s_k = (ψ_k, σ_k, θ_k, x_k, y_k, p_k) — wheel angle, σ = tan φ, the SE(2) pose (already on the
group), and the wheel momentum arriving at the node — and per step the controls
u_k = (f^ψ_k torque, u^σ_k steering rate); plus T when the duration is free (h = T/N).

Dynamics: the car's update is fully explicit for any α (equations.md, "Car with simple
dynamics"; ``core.vehicles.car.step``), so its update equations at every step are

    s_{k+1} − Φ_h(s_k, u_k) = 0,   k = 0…N−1

with Φ the car's step. The Jacobian blocks are the car module's analytic
``step_jacobian`` (∂Φ/∂s, ∂Φ/∂u); the column of T is (∂Φ/∂h)/N as :func:`step_dh` gives it (the car
module has no ∂/∂h; the chain rule through the same explicit update, checked against
differences in the tests). The group evaluates both fused (:func:`_residuals`,
:func:`_jacobian_block`: the same floating-point operations, so the same bits, without the
per-call stacking) and the Jacobian reuses the values' σ_{k+α}, σ_{k+1}, D, u^ψ at the same point.
Start: s_0 fixed at ``initial_state`` (p₀ = M(σ₀) u^ψ(0), the discrete Legendre transform). Node
speed (what ``simulate`` reports): v_k = ρ p_k / M(σ_k).

Terrain (``terrain``, optional; None = the flat plane, the groups above bit for bit): the path is still
planned in the ground plane and the slope drives the wheel — the update equations of :mod:`.car_slope`
(the flat group at the torque f + G_k, its Jacobian chained through the terrain's gradient and Hessian).
"""
from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ScenarioError
from ...lie._series import SERIES_THRESHOLD as _SERIES_THRESHOLD
from ...scenario import Table
from ...trajectory import Trajectory
from ...scenario.common import read_integrator
from ...vehicles import car as carlib
from ...vehicles.car_slope import slope_torque
from ...vehicles.car_spec import CAR
from ..problem import Group
from . import Model, se2_point_curvature, se2_point_map

if TYPE_CHECKING:
    from ...terrain.surface import Terrain

PSI, SIG, TH, X, Y, P = range(6)


class CarModel(Model):
    vehicle = "car"
    inputs = carlib.INPUT_NAMES          # torque, steering_rate
    shape = carlib.SHAPE_NAMES           # wheel_angle, steering_angle
    pose_dim = 3
    position_dim = 2
    se3 = False
    default_collision_radius = 1.0
    bound_names = ("torque", "steering_rate", "steering_angle", "wheel_angle", "speed")

    def __init__(self, car: carlib.Car, steps: int, alpha: float = 0.5, terrain: Terrain | None = None):
        super().__init__(steps, alpha)
        self.car = car
        self.terrain = terrain           # the ground z = h(x, y) (core.terrain.Terrain) or None: flat
        self.state = self.layout.add("state", (self.N + 1, 6),
                                     ("wheel_angle", "tan(steering_angle)", "heading", "x", "y", "wheel momentum"))
        self.controls = self.layout.add("controls", (self.N, 2), self.inputs, axis="step")
        self.base, self.fixed, self.lo, self.hi = self.arrays()
        self.extra_groups: list[Group] = []
        self.goal_position: np.ndarray | None = None
        self._goal_speed: float | None = None
        self.start = carlib.CarInitial()
        # default bounds: the vehicle's limits
        for name, (lo, hi) in CAR.input_bounds(car).items():
            self.set_input_bounds(name, lo, hi)
        self.set_sigma_bounds(*CAR.channel("steering_angle").bounds(car))

    # -- indices ------------------------------------------------------------------------------
    @property
    def pose_idx(self) -> np.ndarray:
        return self.state[:, [TH, X, Y]]

    @property
    def position_idx(self) -> np.ndarray:
        return self.state[:, [X, Y]]

    @property
    def control_idx(self) -> np.ndarray:
        return self.controls

    def point_map(self, X, body, *ref):
        return se2_point_map(X, body)

    def point_curvature(self, X, body, w, *ref):
        return se2_point_curvature(X, body, w)

    # -- bounds, start, goal ------------------------------------------------------------------
    def set_input_bounds(self, name: str, lo: float, hi: float) -> None:
        j = self.inputs.index(name)
        self.lo[self.controls[:, j]] = lo
        self.hi[self.controls[:, j]] = hi

    def set_sigma_bounds(self, lo: float, hi: float) -> None:
        self.lo[self.state[:, SIG]] = math.tan(lo)
        self.hi[self.state[:, SIG]] = math.tan(hi)

    def read_bounds(self, t: Table) -> None:
        for item in (*CAR.inputs, CAR.channel("steering_angle")):   # each within ±its limit parameter
            name = item.name
            if t.has(name):
                lo, hi = _interval(t, name)
                lim = getattr(self.car, item.limit)
                if lo < -lim - 1e-12 or hi > lim + 1e-12:
                    raise t.error(name, f"[{lo:g}, {hi:g}] exceeds the vehicle's limit ±{lim:g}")
                if name == "steering_angle":
                    self.set_sigma_bounds(lo, hi)
                else:
                    self.set_input_bounds(name, lo, hi)
        if t.has("wheel_angle"):
            lo, hi = _interval(t, "wheel_angle")
            self.lo[self.state[:, PSI]], self.hi[self.state[:, PSI]] = lo, hi
        if t.has("speed"):
            lo, hi = _interval(t, "speed")
            self.extra_groups.append(self._speed_group(np.arange(1, self.N + 1), lo, hi, "bounds: speed"))
            self.speed_bounds = (lo, hi)

    def read_start(self, t: Table) -> None:
        pos = t.vector("position", 2, [0.0, 0.0])
        wheel_rate = _speed_or_rate(t, self.car, 0.0)
        self.start = carlib.CarInitial(position=(float(pos[0]), float(pos[1])), heading=t.number("heading", 0.0),
                                       steering_angle=t.number("steering_angle", 0.0, low=-math.pi / 2 + 1e-9,
                                                               high=math.pi / 2 - 1e-9),
                                       wheel_angle=t.number("wheel_angle", 0.0), wheel_rate=wheel_rate)
        s0 = carlib.initial_state(self.car, self.start)
        self.base[self.state[0]] = s0
        self.fixed[self.state[0]] = True

    def read_goal(self, t: Table) -> None:
        last = self.state[self.N]
        if t.has("position"):
            pos = t.vector("position", 2)
            self._fix(last[[X, Y]], pos)
            self.goal_position = np.array([pos[0], pos[1], 0.0])
        if t.has("heading"):
            self._fix([last[TH]], [t.number("heading")])
        if t.has("steering_angle"):
            phi = t.number("steering_angle", low=-math.pi / 2 + 1e-9, high=math.pi / 2 - 1e-9)
            self._fix([last[SIG]], [math.tan(phi)])
        if t.has("wheel_angle"):
            self._fix([last[PSI]], [t.number("wheel_angle")])
        if t.has("speed") or t.has("wheel_rate"):
            rate = _speed_or_rate(t, self.car, None)
            v = rate * self.car.wheel_radius
            self.extra_groups.append(self._speed_group(np.array([self.N]), v, v, "goal: speed"))
            self._goal_speed = abs(v)

    def _fix(self, idx, values) -> None:
        idx = np.asarray(idx)
        self.base[idx] = values
        self.fixed[idx] = True

    def fix_heading(self, node: int, heading: float, label: str) -> list[Group]:
        self._fix([self.state[node, TH]], [heading])
        return []

    def _speed_group(self, nodes: np.ndarray, lo: float, hi: float, name: str) -> Group:
        """v_k = ρ p_k / M(σ_k) within [lo, hi]; local = (σ_k, p_k). The speed bounds and the goal speed share
        their (elementwise) functions, so the NLP evaluates them in one call."""
        idx = self.state[nodes][:, [SIG, P]]
        fun, jac, hess = _speed_functions(self.car)
        return Group(name, idx, fun, np.ones((1, 2), dtype=bool), jac=jac, hess=hess, lower=lo, upper=hi,
                     labels=[f"node {k}" for k in nodes], elementwise=True)

    # -- dynamics -----------------------------------------------------------------------------
    def _mask(self) -> np.ndarray:
        """Structural nonzeros of s_{k+1} − Φ(s_k, u_k) over local (s_k, u_k, s_{k+1}, T)."""
        a = self.alpha
        u_deps = {SIG, P, "T"} | ({"w"} if a > 0 else set()) | ({"f"} if a < 1 else set())
        sa_deps = {SIG} | ({"w"} if a > 0 else set())
        rows = [
            {PSI} | u_deps,
            {SIG, "w", "T"},
            {TH} | u_deps | sa_deps,
            {X, TH} | u_deps | sa_deps,
            {Y, TH} | u_deps | sa_deps,
            {SIG, "w", "T"} | u_deps | sa_deps | ({"f"} if a > 0 else set()),
        ]
        col = {i: i for i in range(6)}
        col.update({"f": 6, "w": 7, "T": 14})
        mask = np.zeros((6, 15), dtype=bool)
        for i, deps in enumerate(rows):
            for d in deps:
                mask[i, col[d]] = True
            mask[i, 8 + i] = True
        return mask

    def dynamics(self) -> list[Group]:
        N, car, alpha = self.N, self.car, self.alpha
        idx = np.concatenate([self.state[:-1], self.controls, self.state[1:], np.full((N, 1), self.T)], axis=1)
        free_T = not self.fixed[self.T]
        nonlinear = np.zeros(15, dtype=bool)        # ψ_k, x_k, y_k and s_{k+1} enter with constant coefficients
        nonlinear[_NL] = True
        labels = [f"step {k}" for k in range(N)]
        if self.terrain is not None:
            from .car_slope import slope_dynamics

            return [slope_dynamics(car, self.terrain, idx, self._mask(), N, alpha, free_T, nonlinear, labels)]

        last = _LastStep()                  # the values' intermediates, for the Jacobian at the same X

        def fun(Xl):
            return _residuals(car, Xl, N, alpha, last)

        def jac(Xl):
            return _jacobian_block(car, Xl, N, alpha, free_T, last)

        nl = _NL if free_T else _NL[:-1]  # a fixed duration: h is a constant, no T row
        hflat = (nl[:, None] * 15 + nl[None, :]).ravel()    # the (nl, nl) block of a flattened 15 × 15

        def hess(Xl, lam):
            # −Σλ_i∇²Φ_i as Σ(−λ_i)∇²Φ_i: the closed form is odd in λ, so this is the negation exactly
            B = Xl.shape[0]
            H = np.zeros((B, 225))
            H[:, hflat] = step_lagrangian_hessian(car, Xl[:, _NL], -lam, N, alpha, free_T).reshape(B, -1)
            return H.reshape(B, 15, 15)

        return [Group("dynamics", idx, fun, self._mask(), jac=jac, hess=hess, nonlinear=nonlinear, labels=labels)]

    def presolve_checks(self):
        return []

    # -- output ---------------------------------------------------------------------------------
    def trajectory(self, y: np.ndarray) -> Trajectory:
        """The same fields, formulas and order as ``core.vehicles.car.simulate``."""
        car = self.car
        Q = y[self.state]
        U = y[self.controls]
        h = float(y[self.T]) / self.N
        n = len(Q)
        sigma = Q[:, SIG]
        Mq = car.reduced_inertia(sigma)
        rate = Q[:, P] / Mq
        heading = Q[:, TH]
        zeros = np.zeros(n)
        return Trajectory(
            time=np.arange(n) * h,
            position=np.stack([Q[:, X], Q[:, Y], zeros], axis=-1),
            orientation=np.stack([np.cos(0.5 * heading), zeros, zeros, np.sin(0.5 * heading)], axis=-1),
            angular_velocity=np.stack([zeros, zeros, car.kappa * sigma * rate], axis=-1),
            linear_velocity=np.stack([car.wheel_radius * rate, zeros, zeros], axis=-1),
            heading=heading,
            shape={"wheel_angle": Q[:, PSI], "steering_angle": np.arctan(sigma)},
            controls={"torque": U[:, 0], "steering_rate": U[:, 1]},
            series={"energy": carlib.node_energy(car, Q, self.terrain)},
            stats={"method": "vi", "alpha": self.alpha, "dt": h}, vehicle="car")

    def from_trajectory(self, traj: Trajectory) -> np.ndarray:
        """Decision variables from a trajectory (warm start): nodes, controls and the duration."""
        y = self.base.copy()
        n = self.N + 1
        if len(traj.time) != n or any(len(traj.controls.get(k, [])) != self.N for k in self.inputs):
            raise ScenarioError("initial trajectory", f"must have {n} nodes and {self.N} controls per input")
        sigma = np.tan(np.asarray(traj.shape["steering_angle"]))
        rate = np.asarray(traj.linear_velocity)[:, 0] / self.car.wheel_radius
        Q = np.stack([traj.shape["wheel_angle"], sigma, traj.heading, traj.position[:, 0], traj.position[:, 1],
                      self.car.reduced_inertia(sigma) * rate], axis=1)
        y[self.state] = Q
        y[self.controls] = np.stack([traj.controls[k] for k in self.inputs], axis=1)
        y[self.T] = float(traj.time[-1])
        return np.where(self.fixed, self.base, y)

    # -- initial guess ------------------------------------------------------------------------
    def guess_from_path(self, y: np.ndarray, path: np.ndarray, spec=None) -> np.ndarray:
        """Nodes along a path (N+1, 3; z ignored): heading along it, σ from the turn rate, p from the
        speed; controls from the differences (clipped to the bounds). Fixed values are kept."""
        car, N = self.car, self.N
        path = np.asarray(path, dtype=float)[:, :2]
        last_heading = self.state[N, TH]
        heading_end = float(self.base[last_heading]) if self.fixed[last_heading] else None
        h = float(y[self.T]) / N
        d = np.diff(path, axis=0)
        seg = np.linalg.norm(d, axis=1)
        head = np.where(seg > 1e-9, np.arctan2(d[:, 1], d[:, 0]), np.nan)
        th0 = float(self.start.heading)
        # node k heads along segment k (the last node along the last segment); the start is fixed
        raw = _ffill(np.concatenate([[th0], head[1:], head[-1:]]) if N > 1 else np.array([th0, head[0]]))
        raw = np.where(np.isnan(raw), th0, raw)
        step = np.diff(raw)
        theta = th0 + np.concatenate([[0.0], np.cumsum((step + np.pi) % (2 * np.pi) - np.pi)])
        if heading_end is not None:
            theta[-1] = heading_end
        speed = np.concatenate([seg / h, [seg[-1] / h if N else 0.0]])
        speed[0] = self.start.wheel_rate * car.wheel_radius if speed[0] == 0 else speed[0]
        omega = np.diff(theta) / h
        v_step = np.maximum(seg / h, 1e-3)
        sigma = np.concatenate([[math.tan(self.start.steering_angle)], omega * car.wheelbase / v_step])
        sigma = np.clip(sigma, self.lo[self.state[:, SIG]], self.hi[self.state[:, SIG]])
        p = car.reduced_inertia(sigma) * speed / car.wheel_radius
        psi = self.start.wheel_angle + np.concatenate([[0.0], np.cumsum(seg / car.wheel_radius)])
        Q = np.stack([psi, sigma, theta, path[:, 0], path[:, 1], p], axis=1)
        y[self.state] = Q
        torque = np.diff(p) / h
        if self.terrain is not None:       # the slope's impulse h((1−α)G_k + αG_{k+1}) is not the engine's
            g = slope_torque(car, self.terrain, theta, path[:, 0], path[:, 1])
            torque -= (1.0 - self.alpha) * g[:-1] + self.alpha * g[1:]
        U = np.stack([torque, np.diff(sigma) / h], axis=1)
        y[self.controls] = np.clip(U, self.lo[self.controls], self.hi[self.controls])
        return np.where(self.fixed, self.base, y)

    def guess_rollout(self, y: np.ndarray) -> np.ndarray:
        """Forward simulation from the start with the (clipped) controls in y."""
        h = float(y[self.T]) / self.N
        U = np.clip(y[self.controls], self.lo[self.controls], self.hi[self.controls])
        Q, _ = carlib.rollout(self.car, y[self.state[0]], U, h, self.alpha, self.terrain)
        y[self.state] = Q
        y[self.controls] = U
        return np.where(self.fixed, self.base, y)

    def start_speed(self) -> float:
        return abs(self.start.wheel_rate) * self.car.wheel_radius

    def goal_speed(self) -> float | None:
        return self._goal_speed

    def start_position(self) -> np.ndarray:
        return np.array([self.start.position[0], self.start.position[1], 0.0])


@functools.lru_cache(maxsize=64)
def _speed_functions(car: carlib.Car):
    """fun, jac, hess of the speed v = ρ p / M(σ) over local (σ, p), one set per car (shared by its groups)."""

    def fun(Xl):
        return (car.wheel_radius * Xl[:, 1] / car.reduced_inertia(Xl[:, 0]))[:, None]

    def jac(Xl):
        M = car.reduced_inertia(Xl[:, 0])
        J = np.empty((Xl.shape[0], 1, 2))
        J[:, 0, 0] = -car.wheel_radius * Xl[:, 1] * 2.0 * car.c * Xl[:, 0] / M**2
        J[:, 0, 1] = car.wheel_radius / M
        return J

    def hess(Xl, lam):
        """λ ρ [−2cp(M − 4cσ²)/M³, −2cσ/M²; −2cσ/M², 0]."""
        sg, p = Xl[:, 0], Xl[:, 1]
        M = car.reduced_inertia(sg)
        s = lam[:, 0] * car.wheel_radius
        H = np.zeros((Xl.shape[0], 2, 2))
        H[:, 0, 0] = -2.0 * s * car.c * p * (M - 4.0 * car.c * sg * sg) / M**3
        H[:, 0, 1] = H[:, 1, 0] = -2.0 * s * car.c * sg / M**2
        return H

    return fun, jac, hess


@functools.lru_cache(maxsize=64)
def _hess_constants(car: carlib.Car, N: int, alpha: float) -> tuple[np.ndarray, ...]:
    """1/N, α/N, (1−α)/N, c, a, ½κ, ρ, 2c/κ, α, 1−α as 0-d arrays: numpy multiplies an array by a 0-d
    array faster than by a Python float, and the Hessian's many small products are call-bound."""
    al = float(alpha)
    q = 1.0 / N
    return _readonly(q, al * q, (1.0 - al) * q, car.c, car.a, 0.5 * car.kappa, car.wheel_radius,
                     2.0 * car.c / car.kappa, al, 1.0 - al)


# d/dz (sin z / z) = (z cos z − sin z)/z² = z · g(z²): g's series (``core.vehicles.car``'s) as 0-d arrays
_G_SERIES_0D = tuple(np.array(co) for co in carlib.DSINC_SERIES)
_THRESHOLD2_0D = np.array(_SERIES_THRESHOLD**2)
_sinc = carlib._sinc  # sin z / z (1 at 0): the simulator's, so the residuals match its step bit for bit


def _sinc_g(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sinc z = sin z / z (1 at 0) and g(z²) = (cos z − sinc z)/z² (so sinc′ = z g, sinc″ = −sinc − 2g): the
    values of ``core.vehicles.car._dsinc_over_z`` (its series below |z| = 0.25, the direct formula above), without
    its masked passes over the whole batch when all z are on one side of the threshold."""
    zz = z * z
    big = zz >= _THRESHOLD2_0D
    n_big = np.count_nonzero(big)                          # (counts: cheaper than min/max reductions)
    if n_big == z.size:                                    # no series
        s = np.sin(z) / z
        return s, (np.cos(z) - s) / zz
    s = _sinc(z)
    g = zz * _G_SERIES_0D[-1]
    for co in _G_SERIES_0D[-2:0:-1]:
        g += co
        g *= zz
    g += _G_SERIES_0D[0]
    if n_big:
        np.divide(np.cos(z) - s, zz, out=g, where=big)
    return s, g


# local columns of (σ_k, θ_k, p_k, f_k, w_k, T) in the dynamics group: the variables Φ is nonlinear in
_NL = np.array([SIG, TH, P, 6, 7, 14])
_EYE6 = np.eye(6)


# local columns of the dynamics group's Φ partials that vary, in the order of the columns of _jacobian_block's
# work array: (σ, w, p, f) stacked by the chain rule, then T (when the duration is free); θ's are two entries
_JCOLS = (np.array([SIG, 7, P, 6, 14]), np.array([SIG, 7, P, 6]))


@functools.lru_cache(maxsize=8)
def _jacobian_template(B: int, free_T: bool) -> np.ndarray:
    """The constant entries of the dynamics block −∂Φ/∂(s_k, u_k) | I | −∂Φ/∂T/N, (B, 6, 15): −1 where ψ,
    θ, x, y are carried, the identity of s_{k+1}, and −0.0 (the negated zero partials, as the dense form
    −step_jacobian has them) everywhere else left of s_{k+1}. Read only: callers copy it."""
    J = np.zeros((B, 6, 15))
    J[:, :, :8] = -0.0
    for r in (PSI, TH, X, Y):
        J[:, r, r] = -1.0
    J[:, :, 8:14] = _EYE6
    J.flags.writeable = False
    return J


def _readonly(*values) -> tuple[np.ndarray, ...]:
    """The values as arrays that cannot be written (shared constants)."""
    out = tuple(np.array(v) for v in values)
    for v in out:
        v.flags.writeable = False
    return out


@functools.lru_cache(maxsize=64)
def _step_constants(car: carlib.Car, h: float, alpha: float) -> tuple[np.ndarray, ...]:
    """h, αh, (1−α)h, ½hκ, hρ, a, c, ½κ, ρ, 2c/κ, α, 1−α, hα as read-only 0-d arrays — the car step's
    scalar factors, spelled as ``core.vehicles.car`` computes them (so the products are the same to the bit);
    numpy multiplies an array by a 0-d array faster than by a Python float — and ∂σ_{k+1}/∂(σ, w, p, f) =
    (1, h, 0, 0) as a (4, 1) column."""
    kap = car.kappa
    return _readonly(h, alpha * h, h * (1 - alpha), 0.5 * h * kap, h * car.wheel_radius, car.a, car.c, 0.5 * kap,
                     car.wheel_radius, 2.0 * car.c / kap, alpha, 1 - alpha, h * alpha, [[1.0], [h], [0.0], [0.0]])


def _h_sets(T: np.ndarray, N: int) -> list[tuple[float, np.ndarray | None]]:
    """(h, selection) for each distinct step length h = T/N in a batch: [(T₀/N, None)] for all of it when T
    is one value (always, unless T is perturbed), else (h value, mask) per distinct value."""
    if not T.shape[0]:
        return []
    T0 = T.item(0)
    if not np.count_nonzero(T != T0):
        return [(T0 / N, None)]
    h = T / N
    return [(float(hv), h == hv) for hv in np.unique(h)]


class _LastStep:
    """What the dynamics values leave for the Jacobian at the same point (IPOPT asks the values at every trial
    point, then the Jacobian at the accepted one, the last evaluated): the bytes of X and σ_{k+α}, σ_{k+1},
    D = a + cσσ_{k+α}, u^ψ, which the Jacobian's chain rule (``step_partials``) computes by the same
    operations — σ_{k+α} = σ + α(hw) there and σ + (αh)w here are the same number when α is 0, 1 or a
    power of two (exact scalings; barring subnormal h·w), so only then is it kept. The arrays are private
    (never returned, never written after they are stored), so callers mutating what the group returns
    cannot corrupt them; a hit needs X equal byte for byte."""

    __slots__ = ("key", "step")

    def __init__(self) -> None:
        self.key: bytes | None = None
        self.step: tuple[np.ndarray, ...] = ()

    def get(self, Xl: np.ndarray) -> tuple[np.ndarray, ...] | None:
        return self.step if self.key is not None and self.key == Xl.tobytes() else None


def _shares_sigma_alpha(alpha: float) -> bool:
    """α(hw) == (αh)w exactly for every h, w (no subnormals): α is 0 or a power of two."""
    return alpha == 0.0 or math.frexp(alpha)[0] == 0.5


def _mass_and_wheel_rate(a, c, hb, sg, sa, p, f) -> tuple[np.ndarray, np.ndarray]:
    """D = a + cσσ_{k+α} and u^ψ_k = (p + h(1−α)f)/D, by ``core.vehicles.car.advance``'s operations (same bits)."""
    D = c * sg
    D *= sa
    D += a
    u = hb * f
    u += p
    u /= D
    return D, u


def _residuals(car: carlib.Car, Xl: np.ndarray, N: int, alpha: float, last: _LastStep | None = None) -> np.ndarray:
    """s_{k+1} − Φ_h(s_k, u_k) (B, 6) over the dynamics group's locals (s_k, u_k, s_{k+1}, T), h = T/N:
    the expressions of ``core.vehicles.car.advance`` (bit for bit), written column by column. With ``last``
    (and α sharing σ_{k+α}, :class:`_LastStep`), leaves σ_{k+α}, σ_{k+1}, D, u^ψ there for the Jacobian."""
    out = np.empty((Xl.shape[0], 6))
    hsets = _h_sets(Xl[:, 14], N)
    for hv, sel in hsets:
        h, _, hb, _, _, a, c, k2, rho, c2k, al, _, _, _ = _step_constants(car, hv, alpha)
        Xs = Xl if sel is None else Xl[sel]
        o = out if sel is None else np.empty((Xs.shape[0], 6))
        sg, th, p, f, w = Xs[:, SIG], Xs[:, TH], Xs[:, P], Xs[:, 6], Xs[:, 7]
        hw = h * w
        sa = al * hw
        sa += sg                                             # σ_{k+α}
        D, u = _mass_and_wheel_rate(a, c, hb, sg, sa, p, f)
        hu = h * u
        z = k2 * sa
        z *= hu                                              # hω/2
        chord = rho * hu
        chord *= _sinc(z)
        tm = th + z
        hu += Xs[:, PSI]
        np.subtract(Xs[:, 8], hu, out=o[:, PSI])
        s1 = hw
        s1 += sg                                             # σ_{k+1} = σ + hw
        np.subtract(Xs[:, 9], s1, out=o[:, SIG])
        np.subtract(Xs[:, 10], tm + z, out=o[:, TH])
        np.subtract(Xs[:, 11], Xs[:, X] + chord * np.cos(tm), out=o[:, X])
        chord *= np.sin(tm)
        chord += Xs[:, Y]
        np.subtract(Xs[:, 12], chord, out=o[:, Y])
        p1 = h * f
        p1 += p
        z *= c2k * w
        p1 += z                                              # p + hf + (2c/κ) w z
        np.subtract(Xs[:, 13], p1, out=o[:, P])
        if sel is not None:
            out[sel] = o
        elif last is not None and _shares_sigma_alpha(alpha):
            last.key, last.step = Xl.tobytes(), (hv, sa, s1, D, u)
    return out


def _jacobian_block(car: carlib.Car, Xl: np.ndarray, N: int, alpha: float, free_T: bool,
                    last: _LastStep | None = None) -> np.ndarray:
    """∂(s_{k+1} − Φ_h(s_k, u_k))/∂(s_k, u_k, s_{k+1}, T) (B, 6, 15), h = T/N: bit for bit −[∂Φ/∂s, ∂Φ/∂u]
    of ``core.vehicles.car.step_partials``/``step_jacobian_rows``, I, and −(∂Φ/∂h)/N of :func:`_step_dh`
    (the same floating-point expressions, reassociated only where exact: commuted operands, −(xy) = (−x)y;
    the sums with a structural 0 kept where they can change the sign of a zero). The partials are formed in
    a (6, m, B) array A over (row, column ∈ _JCOLS), negated once and scattered into a copy of the constant
    template; the partials in h share the chain rule's arrays (∂z, ∂L by column); σ_{k+α}, σ_{k+1}, D, u^ψ
    come from ``last`` when the values were just evaluated at this X (:class:`_LastStep`)."""
    B = Xl.shape[0]
    J = _jacobian_template(B, free_T).copy()
    cols = _JCOLS[0 if free_T else 1]
    m = len(cols)                                            # (σ, w, p, f[, T])
    shared = last.get(Xl) if last is not None else None
    for hv, sel in ([(shared[0], None)] if shared is not None else _h_sets(Xl[:, 14], N)):
        h, ah, hb, k, hr, a, c, k2, rho, _, al, bl, hal, sig_row = _step_constants(car, hv, alpha)
        Xs = Xl if sel is None else Xl[sel]
        n = Xs.shape[0]
        sg, th, p, f, w = Xs[:, SIG], Xs[:, TH], Xs[:, P], Xs[:, 6], Xs[:, 7]
        A = np.empty((6, m, n))
        if shared is not None:
            _, sa, s1, D, u = shared
        else:
            sa = ah * w
            sa += sg                                         # σ_{k+α}
            s1 = h * w
            s1 += sg                                         # σ_{k+1}
            D, u = _mass_and_wheel_rate(a, c, hb, sg, sa, p, f)
        # ∂u/∂(σ, w, p, f) = (−u·c(σ_{k+α} + σ), −u·c(σαh), 1, h(1−α))/D
        du = np.empty((4, n))
        t = du[:2]
        np.add(sa, sg, out=t[0])
        np.multiply(sg, ah, out=t[1])
        t *= c
        t *= -u
        du[2] = 1.0
        du[3] = hb
        du /= D
        z = k * sa
        z *= u
        s, g = _sinc_g(z)
        zg = z * g
        # ∂z/∂(σ, w, p, f) = k(u ∂σ_{k+α} + σ_{k+α} ∂u) in dzx[:4]; ∂z/∂h in dzx[4] (_step_dh)
        dzx = np.empty((m, n))
        dz = dzx[:4]
        np.multiply(sa, du, out=dz)
        dz[0] += u
        dz[1] += u * ah
        dz[2:] += 0.0                                        # 0 + x: a −0.0 product (α = 1, σ_{k+α} = −0.0) as +0.0
        dz *= k
        tm = th + z
        ct, st = np.cos(tm), np.sin(tm)
        L = hr * u
        L *= s
        Lst, Lct = L * st, L * ct
        Mq = c * s1
        Mq *= sa
        Mq += a
        cu = c * u
        if free_T:                                           # _step_dh's expressions
            dsa = al * w
            du_h = cu * sg
            du_h *= dsa
            np.subtract(bl * f, du_h, out=du_h)
            du_h /= D
            t = sa * du_h
            t += dsa * u
            t *= h
            t += sa * u
            np.multiply(k2, t, out=dzx[4])
        zdz = zg * dzx                                       # (dsinc/dz) ∂z
        # ∂L/∂(σ, w, p, f) = hρ(sinc ∂u + u sinc′ ∂z); ∂L/∂h (dchord) likewise in dLx[4]
        dLx = np.empty((m, n))
        dL = dLx[:4]
        np.multiply(u, zdz[:4], out=dL)
        dL += s * du
        dL *= hr
        if free_T:
            hdu = h * du_h
            d = u * s
            d += hdu * s
            t = h * u
            t *= zdz[4]
            d += t
            np.multiply(rho, d, out=dLx[4])
        # the rows of ∂Φ over (σ, w, p, f[, T])
        np.multiply(h, du, out=A[PSI, :4])
        A[SIG, :4] = sig_row                                 # σ₁ = σ + hw
        np.add(dzx, dzx, out=A[TH])                          # 2∂z
        r = A[X]
        np.multiply(ct, dLx, out=r)
        r -= Lst * dzx
        r = A[Y]
        np.multiply(st, dLx, out=r)
        r += Lct * dzx
        # p₁: Mq ∂u + c u (σ_{k+α} ∂σ_{k+1} + σ_{k+1} ∂σ_{k+α}) + hα ∂f; (r[2] = 0 + Mq/D in the dense form is
        # not a zero for finite inputs, and r[3] = 0 + Mq∂u + hα gets the sign of a zero right without the 0)
        r = A[P, :4]
        np.multiply(Mq, du, out=r)
        t = np.empty((2, n))
        np.add(sa, s1, out=t[0])
        np.multiply(sa, h, out=t[1])
        t[1] += s1 * ah
        t *= cu
        r[:2] += t
        r[3] += hal
        if free_T:
            np.add(u, hdu, out=A[PSI, 4])
            A[SIG, 4] = w
            e = w * sa
            e += s1 * dsa
            e *= c
            e *= u
            e += Mq * du_h
            e += al * f
            A[P, 4] = e
        np.negative(A, out=A)
        if free_T:
            A[:, 4] /= N
        Jt = J if sel is None else J[sel]
        Jt[:, :, cols] = A.transpose(2, 0, 1)
        Jt[:, X, TH] = Lst                                   # −∂(x₁, y₁)/∂θ = (L sin, −L cos)(θ + z)
        np.negative(Lct, out=Jt[:, Y, TH])
        if sel is not None:
            J[sel] = Jt
    return J


def step_lagrangian_hessian(car: carlib.Car, V: np.ndarray, lam: np.ndarray, N: int, alpha: float,
                            T_free: bool = True) -> np.ndarray:
    """Σ_i λ_i ∇²Φ_i (B, 6, 6) over V = (σ, θ, p, f, w, T) (B, 6), h = T/N — or (B, 5, 5) over (σ, θ, p, f, w)
    with h a constant when ``T_free`` is False — of the explicit car update (``core.vehicles.car.advance``)

        σ_{k+α} = σ + αhw,  D = a + cσσ_{k+α},  u = (p + h(1−α)f)/D,  z = ½κσ_{k+α}hu,
        ψ₁ = ψ + hu,  σ₁ = σ + hw,  θ₁ = θ + 2z,  (x₁, y₁) = (x, y) + ρhu sinc z (cos, sin)(θ + z),
        p₁ = p + hf + (2c/κ) w z,

    in closed form (:func:`_lagrangian_hessian_t`)."""
    return _lagrangian_hessian_t(car, V, lam, N, alpha, T_free)


def _lagrangian_hessian_t(car: carlib.Car, V: np.ndarray, lam: np.ndarray, N: int, alpha: float,
                          T_free: bool) -> np.ndarray:
    """The body of :func:`step_lagrangian_hessian`. λ·Φ = F(hu, z, θ, w, hw, hf) with

        F = λ_ψ hu + λ_σ hw + λ_p hf + (2λ_θ + k₂w) z + G,  k₂ = 2cλ_p/κ,  G = ρ hu sinc z · C(θ + z),
        C = λ_x cos + λ_y sin,  S = C′ = λ_y cos − λ_x sin,

    so ∇²(λ·Φ) = Σ_j F_j ∇²y_j + Jᵀ∇²F J over the intermediates y. With sym(a, b) = abᵀ + baᵀ, q = 1/N,
    ∇σ_{k+α} = e_σ + α(h e_w + wq e_T), ∇D = c(σ_{k+α} e_σ + σ∇σ_{k+α}), ∇u = (e_p + (1−α)(h e_f + fq e_T)
    − u∇D)/D, ∇(hu) = h∇u + uq e_T, ∇z = ½κ(σ_{k+α}∇(hu) + hu∇σ_{k+α}) and, from
    ∇²u = ((1−α)q sym(e_f, e_T) − u∇²D − sym(∇u, ∇D))/D, ∇²D = c(sym(e_σ, ∇σ_{k+α}) + σαq sym(e_w, e_T)),
    ∇²(hu) = h∇²u + q sym(e_T, ∇u), ∇²z = ½κ(σ_{k+α}∇²(hu) + huαq sym(e_w, e_T) + sym(∇σ_{k+α}, ∇(hu))):

        ∇²(λ·Φ) = sym(∇z, ½G_zz∇z + G_hz∇(hu) + G_zθ e_θ + k₂e_w) + sym(∇(hu), G_hθ e_θ) + G_θθ e_θe_θᵀ
                  + sym(∇σ_{k+α}, ½κF_z∇(hu) − Quc e_σ) + sym(∇u, Pq e_T − Q∇D)
                  + (½κF_z huα − Qucσα + λ_σ) q sym(e_w, e_T) + (Q(1−α) + λ_p) q sym(e_f, e_T),

    F_z = 2λ_θ + k₂w + G_z, P = F_hu + ½κσ_{k+α}F_z, Q = Ph/D and the partials of G (s = sinc z,
    s′ = z g(z²), s″ = −s − 2g): G_hu = ρsC, G_z = huG_hz, G_hz = ρ(s′C + sS), G_hθ = ρsS,
    G_zz = ρhu(s″C + 2s′S − sC) = −2ρhu((s + g)C − s′S), G_zθ = ρhu(s′S − sC), G_θθ = −ρhu sC.
    With ∇z = ½κσ_{k+α}∇(hu) + ½κhu∇σ_{k+α} the first line is sym(∇(hu), ½κσ_{k+α}v + G_hθ e_θ)
    + sym(∇σ_{k+α}, ½κhu v) for v its first bracket: three products [∇(hu), ∇σ_{k+α}, ∇u] × [r₁, r₂, r₃]
    (one batched matmul, symmetrised once) plus the θθ, wT and fT entries. (B, n, n).
    """
    n = 6 if T_free else 5
    q, aq, bq, c, a, k, rho, c2k, al, bl = _hess_constants(car, N, alpha)
    sg, th, p, f, w, T = np.asarray(V, dtype=float).T
    lpsi, lsg, lth, lx, ly, lp = np.asarray(lam, dtype=float).T
    h = T * q
    ah = T * aq
    bh = T * bq
    sa = sg + ah * w
    csg = c * sg
    rD = np.reciprocal(csg * sa + a)
    u = (p + bh * f) * rD
    hu = h * u
    ksa = k * sa
    khu = k * hu
    z = ksa * hu
    s, g = _sinc_g(z)
    s1 = z * g
    tm = th + z
    ct, st = np.cos(tm), np.sin(tm)
    Cv = lx * ct + ly * st
    Sv = ly * ct - lx * st
    a1, a2 = s * Cv, s * Sv
    a4 = s1 * Sv
    rhu = rho * hu
    G_hz = rho * (s1 * Cv + a2)
    k2 = c2k * lp
    F_z = lth + lth + k2 * w + hu * G_hz
    Fk = k * F_z
    P = lpsi + rho * a1 + F_z * ksa
    Q = P * h * rD
    Quc = Q * u * c
    # the gradients (n, B), written straight into the stacked factors of the product
    Lf = np.zeros((3, n) + sg.shape)
    ghu, gsa, gu = Lf
    gsa[0] = 1.0
    gsa[4] = ah
    gD = csg * gsa
    gD[0] += c * sa
    np.multiply(-u, gD, out=gu)
    gu[2] = 1.0                                             # e_p + (1 − α)h e_f (∇D has no p, f entries)
    gu[3] = bh
    if T_free:
        gsa[5] = aq * w
        gD[5] = csg * gsa[5]
        gu[5] = bq * f - u * gD[5]
    gu *= rD
    np.multiply(h, gu, out=ghu)
    if T_free:
        ghu[5] += u * q
    gz = ksa * ghu + khu * gsa
    v = (-rhu * (a1 + g * Cv - a4)) * gz + G_hz * ghu      # ½G_zz ∇z + G_hz ∇(hu)
    v[1] += rhu * (a4 - a1)                                 # G_zθ
    v[4] += k2
    Rf = np.empty((3, n) + sg.shape)
    r1, r2, r3 = Rf
    np.multiply(ksa, v, out=r1)
    r1[1] += rho * a2                                       # G_hθ
    np.multiply(khu, v, out=r2)
    r2 += Fk * ghu
    r2[0] -= Quc
    np.multiply(-Q, gD, out=r3)
    if T_free:
        r3[5] += P * q
    X = np.matmul(Lf.T, Rf.transpose(2, 0, 1))
    if T_free:
        X[:, 4, 5] += ((Fk * hu - Quc * sg) * al + lsg) * q
        X[:, 3, 5] += (Q * bl + lp) * q
    H = X + X.transpose(0, 2, 1)
    H[:, 1, 1] = -rhu * a1
    return H


def step_dh(car: carlib.Car, s: np.ndarray, u: np.ndarray, h: float, alpha: float) -> np.ndarray:
    """∂Φ_h(s, u)/∂h of the explicit car update (module docstring of core.vehicles.car), (B, 6).

    σ_{k+α} = σ + αhw, σ_{k+1} = σ + hw, u^ψ = (p + h(1−α)f)/(a + cσσ_{k+α}), z = ½hκσ_{k+α}u^ψ,
    chord = hρu^ψ sinc z, x₁ = x + chord cos(θ + z), y₁ = y + chord sin(θ + z), θ₁ = θ + 2z,
    ψ₁ = ψ + hu^ψ, p₁ = (a + cσ_{k+1}σ_{k+α})u^ψ + hαf — differentiated in h.
    """
    sg, f, w = s[:, SIG], u[:, 0], u[:, 1]
    return _step_dh(car, carlib.step_partials(car, sg, s[:, TH], s[:, P], f, w, h, alpha), sg, f, w, h, alpha)


def _step_dh(car: carlib.Car, q: dict, sg: np.ndarray, f: np.ndarray, w: np.ndarray, h: float,
             alpha: float) -> np.ndarray:
    """:func:`step_dh` from the update's intermediates q (``core.vehicles.car.step_partials``: σ_{k+α},
    σ_{k+1}, a + cσσ_{k+α}, u^ψ, z, sinc z, z g(z²), chord, cos/sin(θ + z), a + cσ_{k+1}σ_{k+α})."""
    c, kap, rho = car.c, car.kappa, car.wheel_radius
    sa, s1, D, uu, sinc = q["sa"], q["s1"], q["D"], q["u"], q["sinc"]
    dsa, ds1 = alpha * w, w
    du = ((1 - alpha) * f - uu * c * sg * dsa) / D
    dz = 0.5 * kap * (sa * uu + h * (dsa * uu + sa * du))
    dsinc = q["zg"] * dz
    dchord = rho * (uu * sinc + h * du * sinc + h * uu * dsinc)
    ct, st = q["ct"], q["st"]
    out = np.empty((sg.shape[0], 6))
    out[:, PSI] = uu + h * du
    out[:, SIG] = ds1
    out[:, TH] = 2 * dz
    out[:, X] = dchord * ct - q["Lst"] * dz
    out[:, Y] = dchord * st + q["Lct"] * dz
    out[:, P] = c * (ds1 * sa + s1 * dsa) * uu + q["Mq"] * du + alpha * f
    return out


def read_model(root: Table, vehicle: Table) -> CarModel:
    """``[vehicle]`` through the simulate reader (core.scenario.car.read_car), ``[vehicle.terrain]``,
    ``[integrator]`` steps/alpha."""
    from ...scenario.car import METHODS, read_car
    from ...scenario.terrain import read_terrain

    car = read_car(vehicle)
    terrain = read_terrain(vehicle)
    settings = read_integrator(root, METHODS, METHODS[0], with_alpha=True, solve=True)
    return CarModel(car, settings.steps, settings.alpha, terrain)


def _ffill(a: np.ndarray) -> np.ndarray:
    """Forward-fill NaNs (vectorised)."""
    ok = ~np.isnan(a)
    idx = np.where(ok, np.arange(len(a)), 0)
    np.maximum.accumulate(idx, out=idx)
    return a[idx]


def _interval(t: Table, key: str) -> tuple[float, float]:
    v = t.vector(key, 2)
    if v[0] > v[1]:
        raise t.error(key, f"lower bound {v[0]:g} exceeds upper bound {v[1]:g}")
    return float(v[0]), float(v[1])


def _speed_or_rate(t: Table, car: carlib.Car, default: float | None) -> float:
    if t.has("speed") and t.has("wheel_rate"):
        raise t.error("speed", "give either speed (m/s) or wheel_rate (rad/s), not both")
    if t.has("wheel_rate"):
        return t.number("wheel_rate")
    if t.has("speed") or default is None:
        return t.number("speed") / car.wheel_radius
    return default


__all__ = ["CarModel"]
