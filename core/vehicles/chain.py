"""Articulated rigid bodies with a free base (Park & Chung §V): a chain or tree of
rigid bodies joined by revolute joints, the base free in SE(3).

Model (equations.md conventions: twists ξ = (ω, v) angular first, body frames, wrenches
(torque, force)):

- body 0 is the base: mass ``base_mass``, principal moments ``base_inertia``; its frame is at its
  centre of mass along its principal axes, pose g = (R, x) ∈ SE(3), body twist V;
- joint i = 1…N joins body i to its ``parent`` p(i) < i (0 = the base; a tree is allowed). It sits
  at ``position`` r_i in the parent's frame and turns about the unit ``axis`` a_i (parent frame).
  Body i's frame has its origin at the joint and is the parent's frame turned by q_i about a_i:
  g_{p,i}(q_i) = (exp(q_i â_i), r_i), so a_i has the same coordinates in both frames and
  the joint's motion subspace in body i's frame is S_i = (a_i, 0);
- body i has mass m_i, principal moments ``inertia`` J_i about its centre of mass (axes parallel
  to its frame) and its centre of mass at ``offset`` c_i from the joint (body i's frame). Its
  spatial inertia about the frame origin is 𝕀_i = [[J_i − m_i ĉ_i², m_i ĉ_i], [−m_i ĉ_i, m_i I]]
  (so ½ ξᵀ𝕀ξ = ½ ωᵀJω + ½ m |v + ω × c|²).

State (g, y) with y = (V, q, q̇) ∈ R^{6+2N} — the state (T, V, q, q̇) of Park & Chung eqs. (44a–d);
the integrators of :mod:`core.integrators.lie_rk` and :mod:`core.integrators.magnus` act on it.

Forward dynamics (Park & Chung eq. 45, 𝕂_V and 𝕂_q) by the **articulated-body algorithm**
(Featherstone, *Rigid Body Dynamics Algorithms*, 2008, §7.3 and the floating-base variant §9.4),
in numpy over leading batch axes:

1. outward: X_i = Ad_{g_{p,i}⁻¹} = [[Eᵀ, 0], [−Eᵀ r̂_i, Eᵀ]] (E = exp(q_i â_i)),
   V_i = X_i V_{p(i)} + S_i q̇_i, c_i = ad_{V_i} S_i q̇_i, bias p_i = −ad_{V_i}ᵀ 𝕀_i V_i − f_i;
2. inward: U_i = 𝕀ᴬ_i S_i, D_i = S_iᵀU_i, u_i = τ_i − S_iᵀ pᴬ_i,
   𝕀ᵃ = 𝕀ᴬ_i − U_iU_iᵀ/D_i, pᵃ = pᴬ_i + 𝕀ᵃ c_i + U_i u_i/D_i, 𝕀ᴬ_p += X_iᵀ𝕀ᵃX_i, pᴬ_p += X_iᵀpᵃ;
3. V̇ = −(𝕀ᴬ_0)⁻¹ pᴬ_0, then outward a_i′ = X_i a_p + c_i, q̈_i = (u_i − U_iᵀa_i′)/D_i,
   a_i = a_i′ + S_i q̈_i.

Why ABA rather than the composite-rigid-body method: it is O(N) (CRB forms and factors the
(6+N)² mass matrix, O(N²)–O(N³)), it never builds M(q) at all, and it handles a tree and a
floating base without special cases; every step is a handful of batched 6×6 products, which
is what a numpy loop over bodies pays for. The tests check it against an independent
formulation (tests/core/vehicles/test_chain.py): the Lagrangian M(q) assembled from body Jacobians,
M u̇ + Ṁ u − (ad*_V, ∂_q) of ½uᵀMu = forces, plus momentum and energy conservation.

Inputs: joint torques τ (N·m, one per joint) and body wrenches (torque, force) per body in the
body's frame about its **centre of mass** (converted here to the frame origin:
n_o = n_c + c × f). Both are held over each step (zero-order hold, as every integrator of the
project does). Gravity (optional, 9.81 m/s² along −z) acts on every centre of mass and is
evaluated at every stage (it depends on the pose, so it is not held).

Outputs of :meth:`Chain.simulate`: the base trajectory as for a rigid body, ``shape`` with
``joint_1``, ``joint_2``, … (angles, rad), series ``energy`` (kinetic + potential), ``momentum``
(``angular``, ``linear``: the spatial momentum of the whole system about the world origin,
Σ_i (R_i μ_i^ω + x_i × R_i μ_i^v, R_i μ_i^v) with μ_i = 𝕀_i V_i), and extra series
``joint_rates`` {joint_i} and ``links`` {link_i: {position, orientation}} (the world pose of each
body's frame, i.e. of its joint, for animation).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ScenarioError
from ..integrators.common import GRAVITY
from ..integrators.euler_poincare import cross, quaternion_rate, rotate
from ..integrators.families import FAMILIES
from ..integrators.lie_rk import LieProblem, StageRates, Step, rk4_quaternion_step, run, tableau_step
from ..integrators.magnus import magnus_step_function
from ..lie import quaternion, so3
from ..trajectory import Trajectory

Array = np.ndarray

# ``[integrator] method`` values for a chain: the Lie group families and classical RK4.
CHAIN_METHODS: tuple[str, ...] = (*FAMILIES, "rk4")
DEFAULT_METHOD = "cf4"


@dataclass(frozen=True)
class Joint:
    """A revolute joint and the body it carries (see the module docstring for the frames)."""

    parent: int
    position: Any
    axis: Any
    mass: float
    inertia: Any
    offset: Any = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ChainState:
    """Base pose (R, x), base body velocity (ω, v), joint angles q and rates q̇ (batched)."""

    R: Any
    x: Any
    omega: Any
    v: Any
    q: Any
    qd: Any

    def y(self, n: int) -> Array:
        parts = [np.asarray(a, dtype=float) for a in (self.omega, self.v, self.q, self.qd)]
        batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
        return np.concatenate([np.broadcast_to(p, batch + p.shape[-1:]) for p in parts], axis=-1)


def _where(i: int, key: str) -> str:
    return f"[[joints]] #{i} {key}"


def _vector(where: str, value: Any, n: int = 3, positive: bool = False) -> Array:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ScenarioError(where, f"must be {n} numbers, got {value!r}") from None
    if arr.shape != (n,):
        raise ScenarioError(where, f"must have {n} entries, got {arr.size if arr.ndim == 1 else arr.shape}")
    for k, a in enumerate(arr):
        if not math.isfinite(a):
            raise ScenarioError(f"{where}[{k}]", f"must be finite, got {a}")
        if positive and a <= 0:
            raise ScenarioError(f"{where}[{k}]", f"must be positive, got {a:g}")
    return arr


def _scalar(where: str, value: Any, positive: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ScenarioError(where, f"must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ScenarioError(where, f"must be finite, got {v}")
    if positive and v <= 0:
        raise ScenarioError(where, f"must be positive, got {v:g}")
    return v


def spatial_inertia(mass: float, inertia: Array, offset: Array) -> Array:
    """𝕀 = [[J − m ĉ², m ĉ], [−m ĉ, m I]] about a point at −c from the centre of mass."""
    C = so3.hat(np.asarray(offset, dtype=float))
    out = np.zeros((6, 6))
    out[:3, :3] = np.diag(inertia) - mass * C @ C
    out[:3, 3:] = mass * C
    out[3:, :3] = -mass * C
    out[3:, 3:] = mass * np.eye(3)
    return out


def _coad(V: Array, mu: Array) -> Array:
    """ad_Vᵀ μ = (μ_ω × ω + μ_v × v, μ_v × ω) (equations.md)."""
    w, v = V[..., :3], V[..., 3:]
    mw, mv = mu[..., :3], mu[..., 3:]
    return np.concatenate([cross(mw, w) + cross(mv, v), cross(mv, w)], axis=-1)


def _mv(A: Array, b: Array) -> Array:
    return np.einsum("...ij,...j->...i", A, b)


def _inv3(M: Array) -> Array:
    """Inverse of 3×3 matrices (…, 3, 3) by cofactors: columns b × c, c × a, a × b over a·(b × c),
    a, b, c the rows (elementwise numpy: no LAPACK call, whose threads cost more than the solve)."""
    a, b, c = M[..., 0, :], M[..., 1, :], M[..., 2, :]
    cof = np.stack([cross(b, c), cross(c, a), cross(a, b)], axis=-1)
    det = np.einsum("...i,...i->...", a, cof[..., :, 0])
    return cof / det[..., None, None]


def _solve_spd6(A: Array, b: Array) -> Array:
    """A⁻¹ b for symmetric positive definite 6×6 A = [[P, Q], [Qᵀ, S]] by the Schur complement
    S − Qᵀ P⁻¹ Q (both 3×3 blocks positive definite)."""
    P, Q, S = A[..., :3, :3], A[..., :3, 3:], A[..., 3:, 3:]
    Pi = _inv3(P)
    PiQ = Pi @ Q
    Qt = np.swapaxes(Q, -1, -2)
    Si = _inv3(S - Qt @ PiQ)
    b1, b2 = b[..., :3], b[..., 3:]
    z = _mv(Pi, b1)
    x2 = _mv(Si, b2 - _mv(Qt, z))
    return np.concatenate([z - _mv(PiQ, x2), x2], axis=-1)


@dataclass(frozen=True)
class Chain:
    """A free-base articulated system; invalid data raise ScenarioError naming the entry."""

    base_mass: float
    base_inertia: Any
    joints: Sequence[Joint] = ()
    gravity: bool = False
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        m = _scalar("[vehicle] base_mass", self.base_mass, positive=True)
        J = _vector("[vehicle] base_inertia", self.base_inertia, positive=True)
        if not isinstance(self.gravity, (bool, np.bool_)):
            raise ScenarioError("[vehicle] gravity", f"must be true or false, got {self.gravity!r}")
        joints = []
        for i, j in enumerate(self.joints, start=1):
            if not isinstance(j, Joint):
                raise ScenarioError(f"[[joints]] #{i}", "must be a joint table")
            p = j.parent
            if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)):
                raise ScenarioError(_where(i, "parent"), f"must be a whole number (0 = the base), got {p!r}")
            if not 0 <= p < i:
                earlier = ("0 (the base)" if i == 1 else "0 (the base) or 1 (joint #1)" if i == 2
                           else f"0 (the base) or an earlier joint, 1 … {i - 1}")
                raise ScenarioError(_where(i, "parent"),
                                    f"must be {earlier}: a joint's parent must exist and come before it, got {p}")
            pos = _vector(_where(i, "position"), j.position)
            axis = _vector(_where(i, "axis"), j.axis)
            n = float(np.linalg.norm(axis))
            if n < 1e-9:
                raise ScenarioError(_where(i, "axis"), f"must not be zero, got {axis.tolist()}")
            mass = _scalar(_where(i, "mass"), j.mass, positive=True)
            inertia = _vector(_where(i, "inertia"), j.inertia, positive=True)
            offset = _vector(_where(i, "offset"), j.offset)
            joints.append(Joint(int(p), tuple(pos), tuple(axis / n), mass, tuple(inertia), tuple(offset)))
        object.__setattr__(self, "base_mass", m)
        object.__setattr__(self, "base_inertia", tuple(J))
        object.__setattr__(self, "joints", tuple(joints))
        object.__setattr__(self, "gravity", bool(self.gravity))
        self._cache["I"] = [spatial_inertia(m, J, np.zeros(3))] + [
            spatial_inertia(j.mass, np.array(j.inertia), np.array(j.offset)) for j in joints]
        self._cache["rhat"] = [None] + [so3.hat(np.array(j.position)) for j in joints]
        self._cache["axis"] = [None] + [np.array(j.axis) for j in joints]
        self._cache["axis_hat"] = [None] + [so3.hat(np.array(j.axis)) for j in joints]
        self._cache["axis_hat2"] = [None] + [so3.hat(np.array(j.axis)) @ so3.hat(np.array(j.axis)) for j in joints]
        self._cache["com"] = [np.zeros(3)] + [np.array(j.offset) for j in joints]
        self._cache["mass"] = [m] + [j.mass for j in joints]

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        return len(self.joints)

    @property
    def n_bodies(self) -> int:
        return len(self.joints) + 1

    @property
    def spatial_inertias(self) -> list[Array]:
        """𝕀_0 … 𝕀_N (6×6, each body's frame)."""
        return list(self._cache["I"])

    def split(self, y: Array) -> tuple[Array, Array, Array]:
        n = self.n_joints
        return y[..., :6], y[..., 6:6 + n], y[..., 6 + n:6 + 2 * n]

    # -- kinematics ---------------------------------------------------------------------------------
    def _tree(self, R: Array | None, x: Array | None, V: Array, q: Array, qd: Array, poses: bool = True):
        """World poses (R_i, x_i), body twists V_i, motion transforms X_i and c_i = ad_{V_i} S_i q̇_i.
        Without ``poses`` (R, x may be None) the pose lists hold the base's only."""
        Rs: list[Any] = [R]
        xs: list[Any] = [x]
        Vs = [V]
        Xs: list[Any] = [None]   # X_i and c_i of the joints 1 … N (the base has none)
        cs: list[Any] = [None]
        for i, j in enumerate(self.joints, start=1):
            a = self._cache["axis"][i]
            qi = q[..., i - 1, None, None]
            # exp(q â) for a unit axis: Rodrigues, I + sin q â + (1 − cos q) â² (Park & Chung eq. 11)
            E = np.eye(3) + np.sin(qi) * self._cache["axis_hat"][i] + (1.0 - np.cos(qi)) * self._cache["axis_hat2"][i]
            Et = np.swapaxes(E, -1, -2)
            X = np.zeros(E.shape[:-2] + (6, 6))
            X[..., :3, :3] = Et
            X[..., 3:, 3:] = Et
            X[..., 3:, :3] = -Et @ self._cache["rhat"][i]
            Vi = _mv(X, Vs[j.parent])
            sq = a * qd[..., i - 1:i]
            Vi = Vi + np.concatenate([sq, np.zeros_like(sq)], axis=-1)
            cs.append(np.concatenate([cross(Vi[..., :3], sq), cross(Vi[..., 3:], sq)], axis=-1))
            Vs.append(Vi)
            Xs.append(X)
            if poses:
                Rp, xp = Rs[j.parent], xs[j.parent]
                Rs.append(Rp @ E)
                xs.append(xp + rotate(Rp, np.array(j.position)))
        return Rs, xs, Vs, Xs, cs

    def link_poses(self, R: Array, x: Array, q: Array) -> tuple[list[Array], list[Array]]:
        """World poses (R_i, x_i) of every body frame (0 = base)."""
        q = np.asarray(q, dtype=float)
        zeros = np.zeros(q.shape[:-1] + (6,))
        Rs, xs, _, _, _ = self._tree(np.asarray(R, float), np.asarray(x, float), zeros, q, np.zeros_like(q))
        return Rs, xs

    def body_velocities(self, y: Array) -> list[Array]:
        """Body twists V_0 … V_N, each in its own body frame."""
        V, q, qd = self.split(np.asarray(y, dtype=float))
        _, _, Vs, _, _ = self._tree(None, None, V, q, qd, poses=False)
        return Vs

    # -- forces -------------------------------------------------------------------------------------
    def _body_forces(self, Rs: list[Array], wrench: Array | None, batch: tuple[int, ...]) -> list[Array | None]:
        """External wrench on each body at its frame origin, body frame: inputs + gravity (which reads the
        body rotations ``Rs``)."""
        out: list[Array | None] = []
        for i in range(self.n_bodies):
            c = self._cache["com"][i]
            f = None
            if wrench is not None:
                w = wrench[..., i, :]
                f = np.concatenate([w[..., :3] + cross(np.broadcast_to(c, w[..., 3:].shape), w[..., 3:]),
                                    w[..., 3:]], axis=-1)
            if self.gravity:
                F = (-GRAVITY * self._cache["mass"][i]) * Rs[i][..., 2, :]      # Rᵢᵀ (0, 0, −m g)
                g = np.concatenate([cross(np.broadcast_to(c, F.shape), F), F], axis=-1)
                f = g if f is None else f + g
            out.append(None if f is None else np.broadcast_to(f, batch + (6,)))
        return out

    def forward_dynamics(self, R: Array, x: Array, y: Array, tau: Array | None = None,
                         wrench: Array | None = None) -> Array:
        """ẏ = (V̇, q̇, q̈) by the articulated-body algorithm (Park & Chung eq. 45; module docstring).

        R (…, 3, 3), x (…, 3): base pose (used by gravity only); y (…, 6 + 2N) = (V, q, q̇);
        tau (…, N) joint torques; wrench (…, N + 1, 6) body wrenches (torque, force) in each body's
        frame about its centre of mass.
        """
        y = np.asarray(y, dtype=float)
        batch = y.shape[:-1]
        V, q, qd = self.split(y)
        Rs, _, Vs, Xs, cs = self._tree(R, x, V, q, qd, poses=self.gravity)
        forces = self._body_forces(Rs, wrench, batch)
        I = self._cache["I"]
        IA = [np.broadcast_to(I[i], batch + (6, 6)).copy() for i in range(self.n_bodies)]
        pA = []
        for i in range(self.n_bodies):
            p = -_coad(Vs[i], _mv(I[i], Vs[i]))
            pA.append(p if forces[i] is None else p - forces[i])
        n = self.n_joints
        U: list[Any] = [None] * (n + 1)   # filled for the joints 1 … n below
        D: list[Any] = [None] * (n + 1)
        u: list[Any] = [None] * (n + 1)
        for i in range(n, 0, -1):
            a = self._cache["axis"][i]
            Ui = IA[i][..., :, :3] @ a
            Di = Ui[..., :3] @ a
            ui = -(pA[i][..., :3] @ a)
            if tau is not None:
                ui = ui + tau[..., i - 1]
            Ia = IA[i] - Ui[..., :, None] * Ui[..., None, :] / Di[..., None, None]
            pa = pA[i] + _mv(Ia, cs[i]) + Ui * (ui / Di)[..., None]
            par = self.joints[i - 1].parent
            Xt = np.swapaxes(Xs[i], -1, -2)
            IA[par] = IA[par] + Xt @ Ia @ Xs[i]
            pA[par] = pA[par] + _mv(Xt, pa)
            U[i], D[i], u[i] = Ui, Di, ui
        acc = [_solve_spd6(IA[0], -pA[0])]
        qdd = []
        for i in range(1, n + 1):
            a = self._cache["axis"][i]
            ai = _mv(Xs[i], acc[self.joints[i - 1].parent]) + cs[i]
            qi = (u[i] - np.einsum("...i,...i->...", U[i], ai)) / D[i]
            acc.append(ai + np.concatenate([a * qi[..., None], np.zeros(qi.shape + (3,))], axis=-1))
            qdd.append(qi)
        qdd_arr = np.stack(qdd, axis=-1) if qdd else np.zeros(batch + (0,))
        return np.concatenate([acc[0], qd, qdd_arr], axis=-1)

    # -- invariants -----------------------------------------------------------------------------------
    def energy(self, R: Array, x: Array, y: Array) -> Array:
        """Kinetic energy Σ ½ V_iᵀ𝕀_iV_i plus, with gravity, Σ m_i g z_i (centres of mass)."""
        y = np.asarray(y, dtype=float)
        V, q, qd = self.split(y)
        Rs, xs, Vs, _, _ = self._tree(np.asarray(R, float), np.asarray(x, float), V, q, qd)
        I = self._cache["I"]
        e = sum(0.5 * np.einsum("...i,...i->...", Vs[i], _mv(I[i], Vs[i])) for i in range(self.n_bodies))
        if self.gravity:
            for i in range(self.n_bodies):
                z = (xs[i] + rotate(Rs[i], self._cache["com"][i]))[..., 2]
                e = e + GRAVITY * self._cache["mass"][i] * z
        return e

    def momentum(self, R: Array, x: Array, y: Array) -> tuple[Array, Array]:
        """Spatial momentum of the whole system about the world origin: (L, P)."""
        y = np.asarray(y, dtype=float)
        V, q, qd = self.split(y)
        Rs, xs, Vs, _, _ = self._tree(np.asarray(R, float), np.asarray(x, float), V, q, qd)
        L = P = np.zeros(())
        for i in range(self.n_bodies):
            mu = _mv(self._cache["I"][i], Vs[i])
            Pi = rotate(Rs[i], mu[..., 3:])
            L = L + rotate(Rs[i], mu[..., :3]) + cross(xs[i], Pi)
            P = P + Pi
        return L, P

    # -- integration ---------------------------------------------------------------------------------
    def problem(self, torques: Array | None, wrenches: Array | None) -> LieProblem:
        """The Lie-group problem (g, y) with inputs held over each step k."""

        def rates_for_step(k: int, R: Array, x: Array, y: Array) -> StageRates:
            tau = None if torques is None else torques[k]
            w = None if wrenches is None else wrenches[k]
            return lambda Rs, xs, ys: self.forward_dynamics(Rs, xs, ys, tau, w)

        return LieProblem(rates_for_step, pose_free=not self.gravity)

    def check_inputs(self, steps: int, torques: Any = None, wrenches: Any = None) -> tuple[Array | None, Array | None]:
        n = self.n_joints
        if torques is not None:
            torques = np.asarray(torques, dtype=float)
            if torques.shape[:1] != (steps,) or torques.shape[-1:] != (n,):
                raise ScenarioError("[controls] torque_i", f"joint torques must have shape ({steps}, …, {n}), got {torques.shape}")
            if not np.all(np.isfinite(torques)):
                raise ScenarioError("[controls] torque_i", "contains NaN or infinite values")
        if wrenches is not None:
            wrenches = np.asarray(wrenches, dtype=float)
            if wrenches.shape[:1] != (steps,) or wrenches.shape[-2:] != (n + 1, 6):
                raise ScenarioError("[controls] body_i_*", f"body wrenches must have shape ({steps}, …, {n + 1}, 6), got {wrenches.shape}")
            if not np.all(np.isfinite(wrenches)):
                raise ScenarioError("[controls] body_i_*", "contains NaN or infinite values")
        return torques, wrenches

    def simulate(self, initial: ChainState, dt: float, steps: int, method: str = DEFAULT_METHOD,
                 torques: Any = None, wrenches: Any = None, *, third_term: bool = False) -> Trajectory:
        """Integrate from ``initial`` with ``method`` (a name of :data:`CHAIN_METHODS`).

        ``torques`` (steps, …, N) and ``wrenches`` (steps, …, N + 1, 6) are held over each step.
        The state may carry leading batch axes. Outputs: see the module docstring.
        """
        if method not in CHAIN_METHODS:
            raise ScenarioError("[integrator] method", f"unknown value {method!r}; valid: {', '.join(CHAIN_METHODS)}")
        t_start = time.perf_counter()
        h = float(dt)
        steps = int(steps)
        if steps < 0 or not (math.isfinite(h) and h > 0):
            raise ScenarioError("[integrator] dt", f"need steps ≥ 0 and a finite dt > 0, got steps={steps}, dt={dt}")
        torques, wrenches = self.check_inputs(steps, torques, wrenches)
        n = self.n_joints
        y0 = initial.y(n)
        R0 = np.asarray(initial.R, dtype=float)
        x0 = np.asarray(initial.x, dtype=float)
        batch = np.broadcast_shapes(y0.shape[:-1], R0.shape[:-2], x0.shape[:-1])
        problem = self.problem(torques, wrenches)
        step: Step
        if method == "rk4":
            step = rk4_quaternion_step
        elif method == "magnus":
            step = magnus_step_function(problem.pose_free, third_term)
        else:
            step = tableau_step(method)
        res = run(problem, step, R0, x0, y0, h, steps, batch)
        traj = self.trajectory(res.R, res.x, res.y, h)
        stats = res.stats(batch)
        stats.update(method=method, steps=steps, dt=h, wall_time_s=time.perf_counter() - t_start)
        traj.stats = stats
        if torques is not None:
            traj.controls.update({f"torque_{i + 1}": torques[: len(traj.time) - 1, ..., i] for i in range(n)})
        return traj

    def trajectory(self, R: Array, x: Array, y: Array, h: float) -> Trajectory:
        """Trajectory of nodes (R, x, y) (leading axis = nodes) with the chain's outputs."""
        V, q, qd = self.split(y)
        L, P = self.momentum(R, x, y)
        Rs, xs = self.link_poses(R, x, q)
        return Trajectory(
            time=h * np.arange(len(x)), position=np.array(x), orientation=quaternion.from_matrix(R),
            angular_velocity=np.array(V[..., :3]), linear_velocity=np.array(V[..., 3:]),
            momentum_angular=np.asarray(L), momentum_linear=np.asarray(P),
            shape={f"joint_{i + 1}": np.array(q[..., i]) for i in range(self.n_joints)},
            series={"energy": np.asarray(self.energy(R, x, y)),
                    "joint_rates": {f"joint_{i + 1}": np.array(qd[..., i]) for i in range(self.n_joints)},
                    "links": {f"link_{i}": {"position": xs[i], "orientation": quaternion.from_matrix(Rs[i])}
                              for i in range(1, self.n_bodies)}},
            vehicle="chain")

    def reference(self, initial: ChainState, dt: float, steps: int, torques: Any = None,
                  wrenches: Any = None, rtol: float = 1e-12, atol: float = 1e-12) -> Trajectory:
        """Tight-tolerance DOP853 solution on (q_base, x, y) (quaternion, renormalised only at the
        nodes), inputs held over each step (one solve_ivp call per step when there are inputs).
        One body (no batch)."""
        t_start = time.perf_counter()
        torques, wrenches = self.check_inputs(steps, torques, wrenches)
        n = self.n_joints
        y0 = initial.y(n)
        q0 = quaternion.from_matrix(np.asarray(initial.R, dtype=float))
        z0 = np.concatenate([q0, np.asarray(initial.x, dtype=float), y0])
        times = dt * np.arange(steps + 1)

        def rhs_for(k: int | None):
            tau = None if (torques is None or k is None) else torques[k]
            w = None if (wrenches is None or k is None) else wrenches[k]

            def rhs(_t: float, z: Array) -> Array:
                qb = z[:4] / np.linalg.norm(z[:4])
                R = quaternion.to_matrix(qb)
                y = z[7:]
                return np.concatenate([quaternion_rate(z[:4], y[:3]), rotate(R, y[3:6]),
                                       self.forward_dynamics(R, z[4:7], y, tau, w)])
            return rhs

        Z = np.empty((steps + 1, z0.size))
        Z[0] = z0
        if torques is None and wrenches is None:
            sol = solve_ivp(rhs_for(None), (0.0, times[-1]), z0, method="DOP853", rtol=rtol, atol=atol,
                            dense_output=True)
            if not sol.success:
                raise RuntimeError(f"reference solver failed: {sol.message}")
            if steps:
                Z[1:] = sol.sol(times[1:]).T
                Z[-1] = sol.y[:, -1]
        else:
            z = z0
            for k in range(steps):
                sol = solve_ivp(rhs_for(k), (times[k], times[k + 1]), z, method="DOP853", rtol=rtol, atol=atol)
                if not sol.success:
                    raise RuntimeError(f"reference solver failed at step {k}: {sol.message}")
                z = sol.y[:, -1]
                Z[k + 1] = z
        R = quaternion.to_matrix(quaternion.normalize(Z[:, :4]))
        traj = self.trajectory(R, Z[:, 4:7], Z[:, 7:], dt)
        traj.stats = {"method": "reference-dop853", "rtol": rtol, "atol": atol,
                      "wall_time_s": time.perf_counter() - t_start}
        return traj


__all__ = ["Chain", "Joint", "ChainState", "CHAIN_METHODS", "DEFAULT_METHOD", "spatial_inertia"]
