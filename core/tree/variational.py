"""Forced, constrained midpoint variational integrator in generalised coordinates (Johnson & Murphey
2009, §IV; ``docs/equations.md``, "Tree integrator").

Discrete Lagrangian L_d(q_k, q_{k+1}) = h L(q_α, (q_{k+1} − q_k)/h), q_α = (1 − α)q_k + αq_{k+1}
(eq. 19; α = ½ second order, any α ∈ [0, 1] selectable); discrete forces f_d⁻ = (1 − α)h f_c and
f_d⁺ = αh f_c at (q_α, q̇, t_α) (½h f_c at α = ½, eq. 41). One step is the map (q_k, p_k) →
(q_{k+1}, p_{k+1}) of eqs. (44)–(46): Newton on (q_{k+1}, λ_k) with the analytic Jacobian, then
p_{k+1} = D₂L_d(q_k, q_{k+1}) + f_d⁺. The constraints hold at every node to the Newton tolerance,
with no Baumgarte terms or projection. Kinematic variables take their prescribed values; the
equations (and p, λ's columns) are those of the dynamic variables only. The start is the discrete
Legendre transform p₀ = ∂L/∂q̇(q₀, q̇₀), after projecting q₀ onto h = 0; the output node velocities
are the constrained Legendre transform of p_k at q_k (:meth:`.system.System.project_velocity`).

Newton starts q_{k+1} from the quadratic through the last three nodes, 3q_k − 3q_{k−1} + q_{k−2}
(Johnson & Murphey start from q_k; the better guess saves an iteration), and λ_k from λ_{k−1}; it
stops when the update z_j, or the error it leaves, |z_j|³/|z_{j−1}|² for a quadratically converging
iteration, is below ``xtol``·(1 + |q|). The step is then evaluated once more for p_{k+1},
Dh(q_{k+1}) and the residual max|h(q_{k+1})| (their optimised evaluation order, §V-A): the residual
is measured, not assumed. ``composition="triple_jump"`` makes each step three sub-steps (order 4).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .system import System, solve_small


@dataclass
class Run:
    """A simulated trajectory in generalised coordinates (nodes 0..N)."""

    time: np.ndarray            # (N+1,)
    q: np.ndarray               # (N+1, n)
    dq: np.ndarray              # (N+1, n)
    method: str
    dt: float
    alpha: float = 0.5
    momentum: np.ndarray | None = None     # (N+1, n_dyn): p_k (variational only)
    multipliers: np.ndarray | None = None  # (N, m): λ_k
    iterations: np.ndarray | None = None   # (N,): Newton iterations per step
    residual: np.ndarray | None = None     # (N+1,): max |h(q_k)|
    blew_up: bool = False
    message: str = ""
    wall_time_s: float = 0.0
    initial_correction: float = 0.0


def initial_state(system: System, q0: np.ndarray, dq0: np.ndarray, t0: float = 0.0
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """(q₀, q̇₀, correction): drives inserted at t0, q₀ projected onto h = 0, checked solvable."""
    q = np.array(q0, dtype=float)
    dq = np.array(dq0, dtype=float)
    n = system.tree.n
    if q.shape != (n,) or dq.shape != (n,):
        raise ValueError(f"q0 and dq0 must have shape ({n},), got {q.shape} and {dq.shape}")
    qk, dqk, _ = system.drive(t0)
    q[system.kin], dq[system.kin] = qk, dqk
    q, correction = system.project_configuration(q)
    system.check_solvable(q)
    return q, dq, correction


class _Step:
    """Residual and Jacobian of eq. (45)/(46) for one step; keeps the last evaluation."""

    def __init__(self, system: System, h: float, alpha: float):
        self.s, self.h, self.a = system, h, alpha
        self.d = system.dyn

    def midpoint(self, qk: np.ndarray, qn: np.ndarray, t_mid: float, order: int):
        s, h, a = self.s, self.h, self.a
        kin = s.kinematics((1.0 - a) * qk + a * qn, (qn - qk) / h)
        lt = s.lagrangian(kin, order)
        f = fq = fdq = None
        if s.has_forces:
            f, fq, fdq = s.force(kin, t_mid, derivatives=order >= 2)
        return lt, f, fq, fdq

    def D1(self, lt, f) -> np.ndarray:
        h, a, d = self.h, self.a, self.d
        out = h * (1.0 - a) * lt.L_q[d] - lt.L_dq[d]
        if f is not None:
            out = out + (1.0 - a) * h * f[d]
        return out

    def D2(self, lt, f) -> np.ndarray:
        h, a, d = self.h, self.a, self.d
        out = h * a * lt.L_q[d] + lt.L_dq[d]
        if f is not None:
            out = out + a * h * f[d]
        return out

    def D2D1(self, lt, fq, fdq) -> np.ndarray:
        h, a, d = self.h, self.a, self.d
        A = h * (1.0 - a) * a * lt.L_qq + (1.0 - a) * lt.L_qdq - a * lt.L_qdq.T - lt.M / h
        if fq is not None:
            A = A + (1.0 - a) * h * (a * fq + fdq / h)
        return A[np.ix_(d, d)]


# Yoshida's triple jump: the symmetric (α = ½) step composed as h·γ₁, h·γ₂, h·γ₁ is of order 4
# (Hairer, Lubich & Wanner, GNI §II.4). Each sub-step is the same variational update, so the
# composition is symplectic, keeps the constraints at every sub-node, and conserves what the
# midpoint VI conserves.
TRIPLE_JUMP = (1.0 / (2.0 - 2.0 ** (1.0 / 3.0)), -(2.0 ** (1.0 / 3.0)) / (2.0 - 2.0 ** (1.0 / 3.0)),
               1.0 / (2.0 - 2.0 ** (1.0 / 3.0)))
COMPOSITIONS: dict[str, tuple[float, ...]] = {"none": (1.0,), "triple_jump": TRIPLE_JUMP}


def _extrapolate(Q: np.ndarray, k: int, s: float, step0: np.ndarray) -> np.ndarray:
    """Newton's first guess for the node at t_k + s·dt: the quadratic through the last three
    nodes (at s = 1 the quadratic extrapolation 3q_k − 3q_{k−1} + q_{k−2}; Johnson & Murphey start
    from q_{k+1} = q_k, and a better guess saves an iteration); fewer nodes at the start, where
    ``step0`` = dt·q̇₀."""
    if k >= 2:
        return (0.5 * (s + 1.0) * (s + 2.0)) * Q[k] - (s * (s + 2.0)) * Q[k - 1] + (0.5 * s * (s + 1.0)) * Q[k - 2]
    if k == 1:
        return Q[1] + s * (Q[1] - Q[0])
    return Q[0] + s * step0


class _Newton:
    """Solves eq. (45) for (q_{k+1}, λ_k) by Newton with the Jacobian of eq. (46)."""

    def __init__(self, system: System, xtol: float, max_iter: int):
        self.s, self.xtol, self.max_iter = system, xtol, max_iter
        nd, m = system.dyn.size, system.m
        self.KKT = np.zeros((nd + m, nd + m))
        self.rhs = np.zeros(nd + m)

    def solve(self, stepper: _Step, qk: np.ndarray, pk: np.ndarray, qn: np.ndarray, lam: np.ndarray,
              Dh_k: np.ndarray | None, t_mid: float) -> tuple[bool, int, np.ndarray]:
        """Updates qn (dynamic entries) in place; returns (converged, iterations, λ)."""
        s, d, m = self.s, self.s.dyn, self.s.m
        nd = d.size
        KKT, rhs = self.KKT, self.rhs
        prev = np.inf
        it = 0
        try:
            for it in range(1, self.max_iter + 1):
                lt, f, fq, fdq = stepper.midpoint(qk, qn, t_mid, 2)
                rhs[:nd] = -(pk + stepper.D1(lt, f))
                KKT[:nd, :nd] = stepper.D2D1(lt, fq, fdq)
                if m:
                    rhs[:nd] += Dh_k.T @ lam
                    kc = s.constraint_kinematics(qn)
                    rhs[nd:] = -s.constraints.h(kc)
                    KKT[:nd, nd:] = -Dh_k.T
                    KKT[nd:, :nd] = s.constraints.Dh(kc)[:, d]
                z = solve_small(KKT, rhs)
                if not np.all(np.isfinite(z)):
                    return False, it, lam
                qn[d] += z[:nd]
                lam = lam + z[nd:]
                size = float(np.max(np.abs(z[:nd]), initial=0.0))
                tol = self.xtol * (1.0 + float(np.max(np.abs(qn[d]), initial=0.0)))
                # quadratic convergence: the error left after this update is ≈ |z|³/|z_prev|²
                if size <= tol or (it > 1 and size < prev and size**3 <= tol * prev**2):
                    return True, it, lam
                prev = size
        except np.linalg.LinAlgError:
            pass
        return False, it, lam


def simulate(system: System, q0: np.ndarray, dq0: np.ndarray, dt: float, steps: int,
             alpha: float = 0.5, t0: float = 0.0, xtol: float = 1e-10, max_iter: int = 30,
             composition: str = "none") -> Run:
    """Integrate ``steps`` steps of ``dt`` from (q₀, q̇₀) with the midpoint VI (eqs. 16–22, 44–46).

    ``composition = "triple_jump"`` makes each step of ``dt`` three variational sub-steps
    (``TRIPLE_JUMP``; α must be ½): fourth order, still variational, constraints still exact at
    every sub-node. The output holds the nodes of the full steps only.

    A step whose Newton iteration fails (singular Jacobian, no convergence in ``max_iter``,
    non-finite values) ends the run: the nodes so far are returned with ``blew_up`` set.
    """
    if not (0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite positive number, got {dt}")
    if composition not in COMPOSITIONS:
        raise ValueError(f"composition must be one of {sorted(COMPOSITIONS)}, got {composition!r}")
    gammas = COMPOSITIONS[composition]
    if len(gammas) > 1 and alpha != 0.5:
        raise ValueError(f"composition {composition!r} needs the symmetric step alpha = 0.5, got {alpha}")
    steps = int(steps)
    wall0 = time.perf_counter()
    s = system
    n, d, m = s.tree.n, s.dyn, s.m
    nd = d.size
    q, dq, correction = initial_state(s, q0, dq0, t0)
    times = t0 + dt * np.arange(steps + 1)
    # sub-node times of every step: t_k + dt·(γ₁ + … + γ_i)
    offsets = np.concatenate([[0.0], np.cumsum(gammas)])
    sub_times = times[:-1, None] + dt * offsets[None, :]
    sub_times[:, -1] = times[1:]
    kin_sub = np.asarray(s.drive(sub_times.reshape(-1))[0]).reshape(steps, len(gammas) + 1, s.kin.size)
    Q = np.zeros((steps + 1, n))
    Pm = np.zeros((steps + 1, nd))
    lam_out = np.zeros((steps, m))
    iters = np.zeros(steps, dtype=int)
    resid = np.zeros(steps + 1)
    Q[0] = q
    Pm[0] = s.lagrangian(s.kinematics(q, dq)).L_dq[d]
    steppers = [_Step(s, g * dt, alpha) for g in gammas]
    newton = _Newton(s, xtol, max_iter)
    Dh_k = None
    if m:
        kc = s.constraint_kinematics(q)
        resid[0] = float(np.max(np.abs(s.constraints.h(kc))))
        Dh_k = s.constraints.Dh(kc)[:, d]
    lams = [np.zeros(m) for _ in gammas]
    blew, message, last = False, "", steps
    for k in range(steps):
        qk, pk = Q[k], Pm[k]
        ok, it_total = True, 0
        for i, stepper in enumerate(steppers):
            qn = _extrapolate(Q, k, offsets[i + 1], dt * dq)
            qn[s.kin] = kin_sub[k, i + 1]
            t_mid = sub_times[k, i] + alpha * stepper.h
            ok, it, lams[i] = newton.solve(stepper, qk, pk, qn, lams[i], Dh_k, t_mid)
            it_total += it
            if not ok:
                break
            lt, f, _, _ = stepper.midpoint(qk, qn, t_mid, 1)
            qk, pk = qn, stepper.D2(lt, f)
            if m:
                kc = s.constraint_kinematics(qn)
                h_res = float(np.max(np.abs(s.constraints.h(kc))))
                resid[k + 1] = max(resid[k + 1], h_res)
                Dh_k = s.constraints.Dh(kc)[:, d]
        if not ok:
            blew, message, last = True, f"Newton did not converge at step {k} (t = {times[k]:.6g})", k
            break
        iters[k] = it_total
        Q[k + 1] = qk
        Pm[k + 1] = pk
        lam_out[k] = lams[-1]
        if not (np.all(np.isfinite(Q[k + 1])) and np.all(np.isfinite(Pm[k + 1]))):
            blew, message, last = True, f"non-finite state at step {k}", k
            break
    N = last + 1
    Q, Pm, times = Q[:N], Pm[:N], times[:N]
    # node velocities: constrained Legendre transform of p_k at q_k (batched over nodes)
    DQ = np.zeros_like(Q)
    _, kin_rate, _ = s.drive(times)
    DQ[:, s.kin] = kin_rate
    for a in range(0, N, 4096):
        b = min(N, a + 4096)
        DQ[a:b] = s.project_velocity(Q[a:b], DQ[a:b], Pm[a:b])
    run = Run(time=times, q=Q, dq=DQ, method="variational" if len(gammas) == 1 else f"variational-{composition}",
              dt=float(dt), alpha=float(alpha), momentum=Pm,
              multipliers=lam_out[: N - 1], iterations=iters[: N - 1], residual=resid[:N], blew_up=blew,
              message=message, initial_correction=correction)
    run.wall_time_s = time.perf_counter() - wall0
    return run
