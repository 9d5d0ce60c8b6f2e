"""Classical RK4 on the continuous constrained Euler–Lagrange equations (Johnson & Murphey, eqs. 28, 36).

The comparison baseline of the variational integrator, on the same tree, Lagrangian and
forces, in the same generalised coordinates. The holonomic constraints are index-reduced:
they enter as the acceleration condition (36b), D²h(q)(q̇, q̇) + Dh(q) q̈ = 0, so the
constraint residual h(q) drifts with the integration error — no Baumgarte terms and no
projection (Johnson & Murphey's point about eq. 36). At each stage

    [ M_dd     −Dh_dᵀ ] [ q̈_d ]   [ ∂L/∂q − (∂²L/∂q∂q̇)ᵀ q̇ + f_c − M_dk q̈_k ]_d
    [ Dh_d       0    ] [  λ  ] = [ −D²h(q̇, q̇) − Dh_k q̈_k                ]

with subscripts d / k for dynamic / kinematic variables (q̈_k from the drives). State
(q_d, q̇_d); the initial velocity is made consistent (Dh q̇ = 0) by the same M-orthogonal
projection the variational integrator's start-up implies.
"""
from __future__ import annotations

import time

import numpy as np

from .system import System, solve_small
from .variational import Run, initial_state


def acceleration(system: System, t: float, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    """q̈ of every variable at (t, q, q̇) (kinematic ones from their drives), eqs. (28), (36)."""
    s = system
    d, k = s.dyn, s.kin
    kin = s.kinematics(q, dq)
    lt = s.lagrangian(kin, 2, want_qq=False)
    rhs = lt.L_q - lt.L_qdq.T @ dq
    if s.has_forces:
        rhs = rhs + s.force(kin, t)[0]
    ddq = np.zeros_like(q)
    if k.size:
        ddq[k] = s.drive(t)[2]
    rhs_d = rhs[d] - lt.M[np.ix_(d, k)] @ ddq[k]
    Mdd = lt.M[np.ix_(d, d)]
    if s.m == 0:
        ddq[d] = solve_small(Mdd, rhs_d)
        return ddq
    kc = s.constraint_kinematics(q)
    Dh = s.constraints.Dh(kc)
    c = -np.einsum("rij,i,j->r", s.constraints.D2h(kc), dq, dq) - Dh[:, k] @ ddq[k]
    nd, m = d.size, s.m
    A = np.zeros((nd + m, nd + m))
    A[:nd, :nd] = Mdd
    A[:nd, nd:] = -Dh[:, d].T
    A[nd:, :nd] = Dh[:, d]
    ddq[d] = solve_small(A, np.concatenate([rhs_d, c]))[:nd]
    return ddq


def simulate(system: System, q0: np.ndarray, dq0: np.ndarray, dt: float, steps: int, t0: float = 0.0) -> Run:
    """``steps`` classical RK4 steps of ``dt`` from (q₀, q̇₀). Stops (``blew_up``) at non-finite values."""
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite positive number, got {dt}")
    wall0 = time.perf_counter()
    s = system
    d, k = s.dyn, s.kin
    q, dq, correction = initial_state(s, q0, dq0, t0)
    dq = s.project_velocity(q, dq)
    steps = int(steps)
    times = t0 + dt * np.arange(steps + 1)
    Q = np.zeros((steps + 1, q.size))
    DQ = np.zeros_like(Q)
    Q[0], DQ[0] = q, dq
    blew, message, last = False, "", steps

    def f(t: float, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        qq, vv = q.copy(), dq.copy()
        qq[d], vv[d] = x, v
        if k.size:
            dk = s.drive(t)
            qq[k], vv[k] = dk[0], dk[1]
        return v, acceleration(s, t, qq, vv)[d]

    x, v = q[d].copy(), dq[d].copy()
    for i in range(steps):
        t = times[i]
        try:
            k1x, k1v = f(t, x, v)
            k2x, k2v = f(t + dt / 2, x + dt / 2 * k1x, v + dt / 2 * k1v)
            k3x, k3v = f(t + dt / 2, x + dt / 2 * k2x, v + dt / 2 * k2v)
            k4x, k4v = f(t + dt, x + dt * k3x, v + dt * k3v)
        except np.linalg.LinAlgError:
            blew, message, last = True, f"singular equations of motion at step {i} (t = {t:.6g})", i
            break
        x = x + dt / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(v))):
            blew, message, last = True, f"non-finite state at step {i}", i
            break
        Q[i + 1, d], DQ[i + 1, d] = x, v
    N = last + 1
    Q, DQ, times = Q[:N], DQ[:N], times[:N]
    if k.size:
        dk = s.drive(times)
        Q[:, k], DQ[:, k] = dk[0], dk[1]
    residual = np.zeros(N)
    if s.m:
        for a in range(0, N, 4096):
            b = min(N, a + 4096)
            residual[a:b] = np.max(np.abs(s.constraints.h(s.constraint_kinematics(Q[a:b]))), axis=-1)
    run = Run(time=times, q=Q, dq=DQ, method="rk4", dt=float(dt), residual=residual, blew_up=blew,
              message=message, initial_correction=correction)
    run.wall_time_s = time.perf_counter() - wall0
    return run
