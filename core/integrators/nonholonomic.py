"""The general nonholonomic variational integrator of Kobilarov, Crane & Desbrun 2009, eqs. (16)–(17)
(§3.2, §5.1; ``docs/equations.md``, "Nonholonomic integrator", which also gives the one-step form).

A system on Q = M × G: shape r ∈ Rˢ with velocity u, pose g ∈ SE(2) or SE(3) (:class:`GroupMaps`: τ
and C_τ), body velocity ξ = Ω − A(r)u with A the connection and Ω in the span of the momentum
directions e_1(r) … e_b(r) (b = 0: Ω = 0). Ω_k is based at r_{k+α}, the point of the connection, so
every step moves exactly along the constrained directions there. The scheme is a one-step map on
(g_k, r_k, ν_k, π_k), ν_k and π_k the momenta arriving at node k, started by the continuous Legendre
transform (:func:`initial_state`). Step k solves for z = (c_k, the free entries of u_k) by Newton with
a central-difference Jacobian, |Δz| ≤ 1e-13 (1 + |z|). Shape coordinates in ``prescribed`` are
velocity-controlled (the car's steering): their u_k is an input and their row of the shape equation,
which would only give the actuator force, is dropped.

Checked in ``tests/core/integrators/test_nonholonomic.py``: the constraints hold to round-off at every step and g
stays on the group; without constraints or forces, with a pairing that satisfies the discrete Noether
identity (``SE2_EXP``, ``SE2_CAY``, ``SE3_EXP``, ``SE3_CAY``), the spatial momentum Ad*_{g_k⁻¹} ν_k and
the momentum of every cyclic shape variable are conserved; order 2 for α = ½, 1 otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..lie import se2, se3

Array = np.ndarray

NEWTON_TOL = 1e-13
NEWTON_MAX_ITER = 30
FD_STEP = 1e-6


# ---------------------------------------------------------------------------------------------
# Groups: τ and its C map (the matrix of dτ⁻¹, right-trivialised), batched.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GroupMaps:
    """A matrix Lie group for the integrator: τ (..., n) → (..., m, m) and C_τ (..., n) → (..., n, n)."""

    name: str
    dim: int
    tau: Callable[[Array], Array]
    C: Callable[[Array], Array]
    Ad: Callable[[Array], Array]


SE2_EXP = GroupMaps("se2-exp", 3, se2.exp, se2.dexp_inv, se2.Ad)
SE2_EXP_LN = GroupMaps("se2-exp-ln", 3, se2.exp, se2.dexp_inv_linear, se2.Ad)   # trapezoidal (App. A)
SE2_EXP_SERIES = GroupMaps("se2-exp-series", 3, se2.exp, se2.dexp_inv_series, se2.Ad)
SE2_CAY = GroupMaps("se2-cay", 3, se2.cay, se2.dcay_inv, se2.Ad)
SE3_EXP = GroupMaps("se3-exp", 6, se3.exp, se3.dexp_inv, se3.Ad)
SE3_CAY = GroupMaps("se3-cay", 6, se3.cay, se3.dcay_inv, se3.Ad)


# ---------------------------------------------------------------------------------------------
# Reduced Lagrangians ℓ(r, u, ξ).
# ---------------------------------------------------------------------------------------------
class LagrangianDerivatives:
    """ℓ given by its partial derivatives, each a callable (r, u, ξ) → array (batched).

    ``d_xi`` → (..., n) = ∂ℓ/∂ξ (the body momentum μ), ``d_u`` → (..., s), ``d_r`` → (..., s);
    ``d_r`` may be None when ℓ does not depend on r.
    """

    def __init__(self, d_xi: Callable[[Array, Array, Array], Array],
                 d_u: Callable[[Array, Array, Array], Array],
                 d_r: Callable[[Array, Array, Array], Array] | None = None):
        self.d_xi, self.d_u, self.d_r = d_xi, d_u, d_r

    def derivatives(self, r: Array, u: Array, xi: Array) -> tuple[Array, Array, Array]:
        l_xi = np.asarray(self.d_xi(r, u, xi), dtype=float)
        l_u = np.asarray(self.d_u(r, u, xi), dtype=float)
        l_r = np.zeros_like(l_u) if self.d_r is None else np.asarray(self.d_r(r, u, xi), dtype=float)
        return l_xi, l_u, l_r


class QuadraticLagrangian:
    """ℓ = ½ [ξ; u]ᵀ M(r) [ξ; u], M symmetric (n + s) × (n + s) (the vehicles of Kobilarov,
    Crane & Desbrun 2009, §5.2).

    ``M`` is a constant array or a callable r (..., s) → (..., n+s, n+s). ∂ℓ/∂r = ½ wᵀ ∂M/∂r_i w
    uses ``dM`` (r → (..., s, n+s, n+s)) when given, else central differences of M (error
    ~1e-10 relative); a constant M has ∂ℓ/∂r = 0 exactly.
    """

    def __init__(self, M: Array | Callable[[Array], Array], n: int,
                 dM: Callable[[Array], Array] | None = None):
        self.n = n
        self._const = None if callable(M) else np.asarray(M, dtype=float)
        self._M = M
        self._dM = dM

    def matrix(self, r: Array) -> Array:
        if self._const is not None:
            return np.broadcast_to(self._const, np.shape(r)[:-1] + self._const.shape)
        return np.asarray(self._M(r), dtype=float)

    def derivatives(self, r: Array, u: Array, xi: Array) -> tuple[Array, Array, Array]:
        r = np.asarray(r, dtype=float)
        xi, u = np.asarray(xi, dtype=float), np.asarray(u, dtype=float)
        batch = np.broadcast_shapes(xi.shape[:-1], u.shape[:-1], r.shape[:-1])
        w = np.concatenate([np.broadcast_to(xi, batch + xi.shape[-1:]),
                            np.broadcast_to(u, batch + u.shape[-1:])], axis=-1)
        Mw = np.einsum("...ij,...j->...i", self.matrix(r), w)
        s = r.shape[-1]
        if self._const is not None:
            l_r = np.zeros(w.shape[:-1] + (s,))
        elif self._dM is not None:
            l_r = 0.5 * np.einsum("...i,...kij,...j->...k", w, np.asarray(self._dM(r), float), w)
        else:
            l_r = np.zeros(w.shape[:-1] + (s,))
            for i in range(s):
                d = FD_STEP * np.maximum(1.0, np.abs(r[..., i]))
                rp, rm = r.copy(), r.copy()
                rp[..., i] += d
                rm[..., i] -= d
                dMi = (self.matrix(rp) - self.matrix(rm)) / (2 * d)[..., None, None]
                l_r[..., i] = 0.5 * np.einsum("...i,...ij,...j->...", w, dMi, w)
        return Mw[..., : self.n], Mw[..., self.n:], l_r


Lagrangian = LagrangianDerivatives | QuadraticLagrangian


# ---------------------------------------------------------------------------------------------
# The system and its state.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NonholonomicSystem:
    """Everything eqs. (16)–(17) need.

    connection: r (..., s) → A(r) (..., n, s), or None for A = 0.
    momentum_directions: r → [e_1 … e_b] (..., n, b), or None for b = 0 (Ω = 0).
    prescribed: indices of velocity-controlled shape coordinates (their u_k is an input).
    external_force: (g (..., m, m), ξ_prev (..., n)) → f_ext (..., n), or None.
    """

    group: GroupMaps
    shape_dim: int
    lagrangian: Lagrangian
    connection: Callable[[Array], Array] | None = None
    momentum_directions: Callable[[Array], Array] | None = None
    prescribed: tuple[int, ...] = ()
    external_force: Callable[[Array, Array], Array] | None = None

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(i for i in range(self.shape_dim) if i not in self.prescribed)

    def A(self, r: Array) -> Array:
        if self.connection is None:
            return np.zeros(np.shape(r)[:-1] + (self.group.dim, self.shape_dim))
        return np.asarray(self.connection(r), dtype=float)

    def E(self, r: Array) -> Array | None:
        return None if self.momentum_directions is None else np.asarray(self.momentum_directions(r), float)

    def body_velocity(self, r: Array, u: Array, c: Array | None) -> Array:
        """ξ = Ω − A(r) u with Ω = [e(r)] c (the connection form of §3.2)."""
        xi = -np.einsum("...ij,...j->...i", self.A(r), u)
        E = self.E(r)
        if E is not None and c is not None and E.shape[-1]:
            xi = xi + np.einsum("...ij,...j->...i", E, c)
        return xi


@dataclass
class NonholonomicState:
    """Node k: pose g_k (..., m, m), shape r_k (..., s), arriving momenta ν_k (..., n), π_k (..., s)."""

    g: Array
    r: Array
    nu: Array
    pi: Array


@dataclass
class NonholonomicResult:
    """Nodes 0…N (leading axis) of g, r, ν, π; per step 0…N−1: u, c (Ω coordinates), ξ, Newton iterations."""

    g: Array
    r: Array
    nu: Array
    pi: Array
    u: Array
    c: Array
    xi: Array
    iterations: Array
    converged: bool = True


def initial_state(system: NonholonomicSystem, g0: Array, r0: Array, u0: Array,
                  c0: Array | None = None, dt: float = 0.0) -> NonholonomicState:
    """Discrete Legendre start: ν₀ = ∂ℓ/∂ξ + h f_ext(g₀, ξ(0)), π₀ = ∂ℓ/∂u at the continuous initial velocity."""
    g0, r0, u0 = (np.asarray(a, dtype=float) for a in (g0, r0, u0))
    xi0 = system.body_velocity(r0, u0, None if c0 is None else np.asarray(c0, float))
    l_xi, l_u, _ = system.lagrangian.derivatives(r0, u0, xi0)
    nu = l_xi.copy()
    if system.external_force is not None:
        nu = nu + dt * np.asarray(system.external_force(g0, xi0), float)
    return NonholonomicState(g=g0, r=r0, nu=nu, pi=np.array(l_u, dtype=float))


def _assemble_u(system: NonholonomicSystem, u_free: Array, u_given: Array) -> Array:
    u = np.array(np.broadcast_to(u_given, u_free.shape[:-1] + (system.shape_dim,)), dtype=float)
    free = list(system.free)
    if free:
        u[..., free] = u_free
    return u


def _split(system: NonholonomicSystem, z: Array, b: int) -> tuple[Array, Array]:
    return z[..., :b], z[..., b:]


def _residual(system: NonholonomicSystem, state: NonholonomicState, z: Array, b: int, u_given: Array,
              f: Array, h: float, alpha: float):
    """Residual of the step-k equations (16) at unknowns z = (c_k, u_k[free]); also the step's quantities."""
    c, u_free = _split(system, z, b)
    u = _assemble_u(system, u_free, u_given)
    r = state.r
    r_a = r + alpha * h * u
    xi = system.body_velocity(r_a, u, c if b else None)
    l_xi, l_u, l_r = system.lagrangian.derivatives(r_a, u, xi)
    Cm = np.einsum("...ji,...j->...i", system.group.C(h * xi), l_xi)       # C_τ(hξ_k)ᵀ μ_k
    dep = Cm - state.nu                                                     # DEP(k), eq. (17)
    parts = []
    if b:
        parts.append(np.einsum("...ji,...j->...i", system.E(r), dep))      # [e(r_k)]ᵀ DEP(k)
    free = list(system.free)
    if free:
        shape_eq = (l_u - h * (1 - alpha) * (l_r + f)
                    - np.einsum("...ji,...j->...i", system.A(r), dep) - state.pi)
        parts.append(shape_eq[..., free])
    res = np.concatenate(parts, axis=-1) if parts else np.zeros(z.shape[:-1] + (0,))
    return res, (u, xi, l_xi, l_u, l_r)


def step(system: NonholonomicSystem, state: NonholonomicState, u_given: Array, f: Array, dt: float,
         alpha: float = 0.5, guess: Array | None = None) -> tuple[NonholonomicState, dict]:
    """One step of eqs. (16)–(17): Newton on (c_k, u_k[free]), then the explicit updates.

    u_given (..., s): the shape velocities of the prescribed coordinates (other entries ignored);
    f (..., s): the shape force f_{k+α} held over the step. ``guess``: z = (c, u[free]) to start
    Newton from (default: c = 0 and u_given's entries at the free coordinates, so a caller can put a
    velocity guess there).
    Returns the state at node k+1 and {u, c, xi, z, iterations, converged}.
    """
    h = float(dt)
    E = system.E(state.r)
    b = 0 if E is None else E.shape[-1]
    free = list(system.free)
    batch = np.shape(state.r)[:-1]
    m = b + len(free)
    u_given = np.broadcast_to(np.asarray(u_given, dtype=float), batch + (system.shape_dim,))
    f = np.broadcast_to(np.asarray(f, dtype=float), batch + (system.shape_dim,))
    if guess is None:
        z = np.zeros(batch + (m,))
        if free:
            z[..., b:] = u_given[..., free]
    else:
        z = np.array(np.broadcast_to(guess, batch + (m,)), dtype=float)
    iterations = 0
    converged = True
    if m:
        converged = False
        for iterations in range(1, NEWTON_MAX_ITER + 1):  # noqa: B007  (the count is reported)
            F, J = _residual_and_jacobian(system, state, z, b, u_given, f, h, alpha)
            dz = np.linalg.solve(J, -F[..., None])[..., 0]
            z = z + dz
            if np.all(np.abs(dz) <= NEWTON_TOL * (1.0 + np.abs(z))):
                converged = True
                break
    _, (u, xi, l_xi, l_u, l_r) = _residual(system, state, z, b, u_given, f, h, alpha)
    g1 = state.g @ system.group.tau(h * xi)                                 # g_{k+1} = g_k τ(hξ_k)
    r1 = state.r + h * u                                                    # r_{k+1} = r_k + h u_k
    nu1 = np.einsum("...ji,...j->...i", system.group.C(-h * xi), l_xi)      # C_τ(−hξ_k)ᵀ μ_k
    if system.external_force is not None:
        nu1 = nu1 + h * np.asarray(system.external_force(g1, xi), float)
    pi1 = l_u + h * alpha * (l_r + f)
    info = {"u": u, "c": z[..., :b], "xi": xi, "z": z, "iterations": iterations, "converged": converged}
    return NonholonomicState(g=g1, r=r1, nu=nu1, pi=pi1), info


def _residual_and_jacobian(system, state, z, b, u_given, f, h, alpha) -> tuple[Array, Array]:
    """F(z) and its central-difference Jacobian from one batched residual call (2m + 1 points stacked
    on a new leading axis, so user callables only need to broadcast over leading axes)."""
    m = z.shape[-1]
    d = FD_STEP * np.maximum(1.0, np.abs(z))                                # (..., m)
    pts = np.broadcast_to(z, (2 * m + 1,) + z.shape).copy()
    for j in range(m):
        pts[1 + j, ..., j] += d[..., j]
        pts[1 + m + j, ..., j] -= d[..., j]
    Fall, _ = _residual(system, state, pts, b, u_given, f, h, alpha)
    J = np.moveaxis((Fall[1: m + 1] - Fall[m + 1:]) / (2 * np.moveaxis(d, -1, 0))[..., None], 0, -1)
    return Fall[0], J


def integrate(system: NonholonomicSystem, initial: NonholonomicState, dt: float, steps: int,
              alpha: float = 0.5, shape_velocity: Array | None = None, force: Array | None = None,
              u0: Array | None = None, c0: Array | None = None) -> NonholonomicResult:
    """Run ``steps`` steps of eqs. (16)–(17) from ``initial`` (see :func:`initial_state`).

    shape_velocity (steps, ..., s): prescribed shape velocities per step (entries of free
    coordinates ignored); force (steps, ..., s): f_{k+α} per step. u0, c0: the initial velocity,
    used as the first Newton guess.
    """
    s = system.shape_dim
    batch = np.shape(initial.r)[:-1]
    zeros = np.zeros((steps,) + batch + (s,))
    U = zeros if shape_velocity is None else np.broadcast_to(np.asarray(shape_velocity, float), zeros.shape)
    F = zeros if force is None else np.broadcast_to(np.asarray(force, float), zeros.shape)
    E = system.E(initial.r)
    b = 0 if E is None else E.shape[-1]
    free = list(system.free)
    guess = np.zeros(batch + (b + len(free),))
    if u0 is not None and free:
        guess[..., b:] = np.broadcast_to(np.asarray(u0, float), batch + (s,))[..., free]
    if c0 is not None and b:
        guess[..., :b] = c0
    state = initial
    gs, rs, nus, pis = [state.g], [state.r], [state.nu], [state.pi]
    us, cs, xis, its = [], [], [], []
    ok = True
    for k in range(steps):
        state, info = step(system, state, U[k], F[k], dt, alpha, guess)
        guess = info["z"]
        ok = ok and info["converged"]
        gs.append(state.g), rs.append(state.r), nus.append(state.nu), pis.append(state.pi)
        us.append(info["u"]), cs.append(info["c"]), xis.append(info["xi"]), its.append(info["iterations"])
    return NonholonomicResult(g=np.stack(gs), r=np.stack(rs), nu=np.stack(nus), pi=np.stack(pis),
                              u=np.stack(us) if us else np.zeros((0,) + batch + (s,)),
                              c=np.stack(cs) if cs else np.zeros((0,) + batch + (b,)),
                              xi=np.stack(xis) if xis else np.zeros((0,) + batch + (system.group.dim,)),
                              iterations=np.asarray(its, dtype=int), converged=ok)


def spatial_momentum(group: GroupMaps, g: Array, nu: Array) -> Array:
    """Ad*_{g⁻¹} ν = Ad_{g⁻¹}ᵀ ν: a body momentum at node k seen in the fixed frame."""
    return np.einsum("...ji,...j->...i", group.Ad(np.linalg.inv(g)), nu)


__all__ = ["GroupMaps", "SE2_EXP", "SE2_EXP_LN", "SE2_EXP_SERIES", "SE2_CAY", "SE3_EXP", "SE3_CAY",
           "LagrangianDerivatives", "QuadraticLagrangian", "NonholonomicSystem",
           "NonholonomicState", "NonholonomicResult", "initial_state", "step", "integrate",
           "spatial_momentum"]
