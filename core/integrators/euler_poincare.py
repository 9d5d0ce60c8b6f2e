"""The continuous forced Euler–Poincaré equations of a rigid body on SE(3), and a reference solver.

Conventions of ``docs/equations.md``: body velocity ξ = (ω, v), 𝕀 = diag(J, M) with
``inertia`` (..., 6) = (J₁, J₂, J₃, M₁, M₂, M₃) (M = m I₃ for a rigid body), body wrench
f = (τ, F), pose g = (R, x), quaternions stored (w, x, y, z). Everything is batched over
leading axes.

Kobilarov, Crane & Desbrun 2009, eq. (8) (forced Euler–Poincaré; also Bauer 2024, *Rigid Body
Dynamics on Lie Groups*, "Forward Dynamics"):

    𝕀 ξ̇ = ad_ξᵀ 𝕀 ξ + f,   i.e.   J ω̇ = Jω × ω + Mv × v + τ,   M v̇ = Mv × ω + F

with the reconstruction (left trivialisation ġ = g ξ̂)

    Ṙ = R ω̂,   ẋ = R v,   or with a unit quaternion   q̇ = ½ q ⊗ (0, ω).

:func:`reference` integrates these with scipy's DOP853 at tight tolerances; it is the
ground truth the integrator tests and the Fig. 4 benchmark (``benchmarks/rigid_body_accuracy.py``)
compare against.
"""
from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp

from ..lie import quaternion, se3
from ..trajectory import Trajectory
from .common import HolonomicSystem, RigidState, WrenchFunction, WrenchSpec, combine, wrench_function


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (faster than ``np.cross`` on the small arrays used here)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


# The right-hand sides below are bilinear (or quadratic) in the state. Each is evaluated as one
# outer product times a constant matrix built from the project's own maps (se3.ad, the
# quaternion product, the quaternion rotation matrix): a handful of numpy calls per evaluation,
# which is what a per-step Python loop over a batch pays for.

# ad_ξᵀ μ = Σ_jk K[i, j, k] ξ_j μ_k with K[:, j, :] = ad(e_j)ᵀ.
_K_COAD = np.stack([se3.ad(e).T for e in np.eye(6)], axis=1)           # (6, 6, 6)
_K_COAD_FLAT = _K_COAD.transpose(1, 2, 0).reshape(36, 6).copy()        # (ξ ⊗ μ) → ad_ξᵀ μ
# ∂(ad_ξᵀ μ)/∂ξ_j = K[:, j, :] μ and ∂(ad_ξᵀ μ)/∂μ_k = K[:, :, k] ξ, as (36 × 6) maps
_K_DXI = _K_COAD.transpose(2, 0, 1).reshape(6, 36).copy()              # μ → (i, j) matrix
_K_DMU = _K_COAD.transpose(1, 0, 2).reshape(6, 36).copy()              # ξ → (i, k) matrix
# ½ q ⊗ (0, ω) = Σ_jk C[i, j, k] q_j ω_k
_C_QRATE = np.stack([np.stack([0.5 * quaternion.multiply(a, np.concatenate([[0.0], b]))
                               for b in np.eye(3)], axis=-1) for a in np.eye(4)], axis=1)  # (4, 4, 3)
_C_QRATE_FLAT = _C_QRATE.transpose(1, 2, 0).reshape(12, 4).copy()


def _homogeneous_rotation(q: np.ndarray) -> np.ndarray:
    """R(q) written as a homogeneous quadratic form in q (equals to_matrix(q) when |q| = 1)."""
    w, x, y, z = q
    return np.array([[w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]])


# R(q) v = Σ_jkl D[i, j, k, l] q_j q_k v_l (symmetric polarisation of the quadratic form)
_D_ROT = np.zeros((3, 4, 4, 3))
for _j, _a in enumerate(np.eye(4)):
    for _k, _b in enumerate(np.eye(4)):
        _D_ROT[:, _j, _k, :] = 0.5 * (_homogeneous_rotation(_a + _b) - _homogeneous_rotation(_a)
                                      - _homogeneous_rotation(_b))
_D_ROT_FLAT = _D_ROT.transpose(1, 2, 3, 0).reshape(48, 3).copy()


def coadjoint_term(inertia: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """ad_ξᵀ 𝕀 ξ = (Jω × ω + Mv × v, Mv × ω), the gyroscopic part of eq. (8).

    With [ad_ξ] = [[ω̂, 0], [v̂, ω̂]] (equations.md), ad_ξᵀ μ = (μ_ω × ω + μ_v × v, μ_v × ω);
    evaluated as (ξ ⊗ 𝕀ξ) contracted with the structure constants of se(3).
    """
    xi = np.asarray(xi, dtype=float)
    mu = np.asarray(inertia, dtype=float) * xi
    outer = xi[..., :, None] * mu[..., None, :]
    return outer.reshape(outer.shape[:-2] + (36,)) @ _K_COAD_FLAT


def velocity_rate(inertia: np.ndarray, xi: np.ndarray, f: np.ndarray | None = None) -> np.ndarray:
    """ξ̇ = 𝕀⁻¹ (ad_ξᵀ 𝕀 ξ + f), Kobilarov, Crane & Desbrun 2009, eq. (8)."""
    rhs = coadjoint_term(inertia, xi)
    if f is not None:
        rhs = rhs + f
    return rhs / inertia


def velocity_rate_jacobian(inertia: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """∂ξ̇/∂ξ of eq. (8) (the wrench held fixed), shape (..., 6, 6).

    D(ad_ξᵀ 𝕀 ξ)·η = ad_ηᵀ 𝕀ξ + ad_ξᵀ 𝕀η, i.e. in components
    D = 𝕀⁻¹ [[μ̂_ω − ω̂ J, μ̂_v − v̂ M], [μ̂_v, −ω̂ M]] with μ = 𝕀ξ.
    """
    inertia = np.asarray(inertia, dtype=float)
    xi = np.asarray(xi, dtype=float)
    mu = inertia * xi
    batch = np.broadcast_shapes(inertia.shape, xi.shape)[:-1]
    d_xi = (mu @ _K_DXI).reshape(batch + (6, 6))                 # ad_ηᵀ μ as a matrix in η
    d_mu = (xi @ _K_DMU).reshape(batch + (6, 6)) * inertia[..., None, :]   # ad_ξᵀ 𝕀 η
    return (d_xi + d_mu) / inertia[..., :, None]


def quaternion_rate(q: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """q̇ = ½ q ⊗ (0, ω) for the body angular velocity ω (the quaternion form of Ṙ = R ω̂)."""
    q = np.asarray(q, dtype=float)
    w = np.asarray(omega, dtype=float)
    outer = q[..., :, None] * w[..., None, :]
    return outer.reshape(outer.shape[:-2] + (12,)) @ _C_QRATE_FLAT


def rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v over batch axes."""
    return np.einsum("...ij,...j->...i", R, v)


def rotate_by_quaternion(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(q) v for a unit quaternion q (w, x, y, z), without forming R."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    outer = q[..., :, None, None] * q[..., None, :, None] * v[..., None, None, :]
    return outer.reshape(outer.shape[:-3] + (48,)) @ _D_ROT_FLAT


def state_rate(inertia: np.ndarray, q: np.ndarray, x: np.ndarray, xi: np.ndarray,
               f: np.ndarray | None = None, q_normalized: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q̇, ẋ, ξ̇) of the continuous rigid body: q̇ = ½ q ⊗ (0, ω), ẋ = R(q) v, eq. (8) for ξ̇.

    ``R(q)`` is the rotation of q/|q| unless ``q_normalized`` says q is already unit.
    """
    qn = q if q_normalized else quaternion.normalize(q)
    return (quaternion_rate(q, xi[..., :3]), rotate_by_quaternion(qn, xi[..., 3:]),
            velocity_rate(inertia, xi, f))


def momentum(R: np.ndarray, x: np.ndarray, omega: np.ndarray, v: np.ndarray,
             inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spatial momentum about the world origin: L = R J ω + x × (R M v), P = R M v.

    This is Ad*_{g⁻¹} 𝕀ξ with Ad*_{g⁻¹} = Ad_{g⁻¹}ᵀ = [[R, x̂ R], [0, R]]; it is constant
    along solutions of eq. (8) when f = 0.
    """
    inertia = np.asarray(inertia, dtype=float)
    L_body = rotate(R, inertia[..., :3] * omega)
    P = rotate(R, inertia[..., 3:] * v)
    return L_body + cross(x, P), P


def batch_shape_of(system: HolonomicSystem, initial: RigidState) -> tuple[int, ...]:
    """Common batch shape of the inertia and the initial state."""
    return np.broadcast_shapes(np.shape(system.inertia)[:-1], np.shape(initial.R)[:-2],
                               np.shape(initial.x)[:-1], np.shape(initial.omega)[:-1],
                               np.shape(initial.v)[:-1])


def checked_inputs(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
                   wrench: WrenchSpec = None) -> tuple[float, int, tuple[int, ...], np.ndarray, WrenchFunction | None]:
    """The common prologue of the rigid-body drivers: (h, steps, batch shape, inertia broadcast to
    batch + (6,) (a copy), the combined wrench function), with ValueError for steps < 0, a
    non-finite or non-positive dt, or an inertia that is not finite and positive."""
    h = float(dt)
    steps = int(steps)
    if steps < 0 or not np.isfinite(h) or h <= 0:
        raise ValueError(f"need steps ≥ 0 and a finite dt > 0, got steps={steps}, dt={dt}")
    batch = batch_shape_of(system, initial)
    inertia = np.array(np.broadcast_to(np.asarray(system.inertia, dtype=float), batch + (6,)))
    if not (np.all(np.isfinite(inertia)) and np.all(inertia > 0)):
        raise ValueError("inertia must be finite and positive")
    return h, steps, batch, inertia, combine(system.wrench, wrench_function(wrench, steps, batch))


def reference(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
              wrench: WrenchSpec = None, rtol: float = 1e-12, atol: float = 1e-12) -> Trajectory:
    """Tight-tolerance solution of eq. (8) with q̇ = ½ q ⊗ (0, ω), ẋ = R v (DOP853).

    The wrench (``system.wrench`` plus ``wrench``) enters as f(k, R(t), x(t), ξ(t)) on
    [t_k, t_{k+1}]: evaluated on the reference's own state at every right-hand-side call, with
    the step index k selecting the step's inputs (a wrench array (steps, ..., 6) is thus held
    constant over each step), the convention of every integrator (:mod:`.baselines`). With a
    wrench each step is a separate solve_ivp call, so the switches at the nodes are never
    smoothed over. Without a wrench one call covers [0, steps·dt] and the nodes are read off its
    dense output. A batch is integrated as one flattened ODE. Returns a Trajectory at the N+1
    nodes.
    """
    t0 = time.perf_counter()
    batch = batch_shape_of(system, initial)
    inertia = np.broadcast_to(np.asarray(system.inertia, dtype=float), batch + (6,))
    fn = combine(system.wrench, wrench_function(wrench, steps, batch))
    R0 = np.broadcast_to(np.asarray(initial.R, dtype=float), batch + (3, 3))
    q0 = quaternion.from_matrix(R0)
    x0 = np.broadcast_to(np.asarray(initial.x, dtype=float), batch + (3,))
    xi0 = np.broadcast_to(initial.xi, batch + (6,))
    n = int(np.prod(batch, dtype=int))
    y0 = np.concatenate([q0.reshape(n, 4), x0.reshape(n, 3), xi0.reshape(n, 6)], axis=-1).ravel()
    inertia_flat = inertia.reshape(n, 6)
    times = dt * np.arange(steps + 1)

    def rhs_factory(k: int | None):
        def rhs(_t: float, y: np.ndarray) -> np.ndarray:
            Y = y.reshape(n, 13)
            f_flat = None
            if k is not None:   # f(k, R(t), x(t), ξ(t))
                qn = quaternion.normalize(Y[:, :4])
                f = fn(k, quaternion.to_matrix(qn).reshape(batch + (3, 3)), Y[:, 4:7].reshape(batch + (3,)),
                       Y[:, 7:].reshape(batch + (6,)))
                f_flat = np.broadcast_to(np.asarray(f, dtype=float), batch + (6,)).reshape(n, 6)
            dq, dx, dxi = state_rate(inertia_flat, Y[:, :4], Y[:, 4:7], Y[:, 7:], f_flat,
                                     q_normalized=False)
            return np.concatenate([dq, dx, dxi], axis=-1).ravel()
        return rhs

    nfev = 0
    if fn is None:
        sol = solve_ivp(rhs_factory(None), (0.0, times[-1]), y0, method="DOP853", rtol=rtol,
                        atol=atol, dense_output=True)
        if not sol.success:
            raise RuntimeError(f"reference solver failed: {sol.message}")
        Y = sol.sol(times).T if steps > 0 else y0[None, :]
        Y[0] = y0
        Y[-1] = sol.y[:, -1]
        nfev = sol.nfev
    else:
        Y = np.empty((steps + 1, y0.size))
        Y[0] = y0
        y = y0
        for k in range(steps):
            sol = solve_ivp(rhs_factory(k), (times[k], times[k + 1]), y, method="DOP853",
                            rtol=rtol, atol=atol)
            if not sol.success:
                raise RuntimeError(f"reference solver failed at step {k}: {sol.message}")
            y = sol.y[:, -1]
            Y[k + 1] = y
            nfev += sol.nfev
    Y = Y.reshape((steps + 1,) + batch + (13,))
    q = quaternion.normalize(Y[..., :4])
    x, w, v = Y[..., 4:7], Y[..., 7:10], Y[..., 10:13]
    L, P = momentum(quaternion.to_matrix(q), x, w, v, inertia)
    return Trajectory(time=times, position=x, orientation=q, angular_velocity=w, linear_velocity=v,
                      momentum_angular=L, momentum_linear=P, vehicle="rigid_body",
                      stats={"wall_time_s": time.perf_counter() - t0, "method": "reference-dop853",
                             "rtol": rtol, "atol": atol, "nfev": int(nfev),
                             "newton_iterations_mean": 0.0, "blew_up": False})
