"""A primal-dual interior-point method on scipy.sparse: the ``scipy`` backend's default solver.

Written for the DMOC programs because ``scipy.optimize.minimize(method="trust-constr")`` —
the other scipy option, kept as ``[solver] method = "trust-constr"`` — stalls on the helicopter
and snakeboard problems (constraint violation stuck near its starting value for hundreds of
iterations; measured in docs/benchmarks/dmoc.md). Only numpy and scipy are used, so it runs inside
Blender. The algorithm follows IPOPT's (Wächter & Biegler 2006) in a reduced form:

* problem  min f(x)  s.t.  c_E(x) = t_E,  c_I(x) − s = 0,  l ≤ (x, s) ≤ u  (slacks for the
  inequality rows), on the scaled program (x = z/D, ĉ = S c, f̂ = σ f; ``solve.scaling``);
* Newton steps on the primal-dual barrier equations with the exact Lagrangian Hessian; the slack
  block is eliminated, leaving the sparse symmetric quasi-definite system
  [[H + Σ_x + δ_w I, Jᵀ], [J, −(δ_c I + D_s⁻¹)]] solved by SuperLU (``scipy.sparse.linalg.splu``);
* inertia control without an inertia-revealing factorisation: the regularisation δ_w grows
  until the step is a descent direction of the merit function (the curvature test);
* the filter line search of IPOPT on (|g|₁, barrier function) with its switching and Armijo
  conditions, the fraction-to-boundary rule (τ = max(0.99, 1 − μ)) and one second-order correction
  against the Maratos effect; when no step is acceptable, a reduced restoration: a minimum-norm
  Gauss–Newton step on the constraints, kept interior;
* monotone barrier update μ ← max(tol/10, min(0.2 μ, μ^1.5)) once the barrier problem is solved to
  10 μ; bound multipliers kept within [μ/(10¹⁰ gap), 10¹⁰ μ/gap].

Termination: scaled KKT error ≤ tol (dual infeasibility scaled as IPOPT does, constraint
violation, complementarity), or the iteration / time limit, or a line search that cannot
progress ("stalled").
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from .problem import NLP


@dataclass
class IPMResult:
    z: np.ndarray
    status: str          # converged, iteration_limit, time_limit, stalled, numerical_failure
    message: str
    iterations: int
    kkt_error: float


def _gap(w, L, U):
    """Distances to the finite bounds (1 where a bound is infinite: never used there)."""
    fl, fh = np.isfinite(L), np.isfinite(U)
    lo = np.where(fl, w - np.where(fl, L, 0.0), 1.0)
    hi = np.where(fh, np.where(fh, U, 0.0) - w, 1.0)
    return lo, hi


def interior_point(nlp: NLP, z0: np.ndarray, D: np.ndarray, Sc: np.ndarray, sf: float, tol: float = 1e-8,
                   constraint_tol: float = 1e-9, max_iter: int = 1000, deadline: float = math.inf,
                   callback: Callable[[np.ndarray], None] | None = None, verbose: bool = False,
                   mu_mode: str = "monotone") -> IPMResult:
    n, m = nlp.n, nlp.m
    eq = nlp.cl == nlp.cu
    iq = ~eq
    E, I = np.flatnonzero(eq), np.flatnonzero(iq)
    mI = len(I)
    t_E = Sc[E] * nlp.cl[E]
    Ls, Us = Sc[I] * nlp.cl[I], Sc[I] * nlp.cu[I]
    Lx, Ux = nlp.lb / D, nlp.ub / D
    L = np.concatenate([Lx, Ls])
    U = np.concatenate([Ux, Us])
    hasL, hasU = np.isfinite(L), np.isfinite(U)

    def push(v, lo, hi, k1=1e-2):
        """Move v strictly inside [lo, hi] (IPOPT's bound_push / bound_frac)."""
        fl, fh = np.isfinite(lo), np.isfinite(hi)
        lo0, hi0 = np.where(fl, lo, 0.0), np.where(fh, hi, 0.0)
        width = np.where(fl & fh, hi0 - lo0, np.inf)
        plo = np.minimum(k1 * np.maximum(1.0, np.abs(lo0)), 0.5 * k1 * width)
        phi = np.minimum(k1 * np.maximum(1.0, np.abs(hi0)), 0.5 * k1 * width)
        v = np.where(fl, np.maximum(v, lo0 + plo), v)
        v = np.where(fh, np.minimum(v, hi0 - phi), v)
        return v

    def evaluate(x):
        ev = nlp.evaluate(D * x)
        return sf * ev.cost, Sc * ev.cons

    def scaled_jacobian(x):
        return (sp.diags(Sc) @ nlp.jacobian(D * x) @ sp.diags(D)).tocsr()

    evaluate.jacobian = scaled_jacobian  # type: ignore[attr-defined]

    def gradients(x):
        ev = nlp.derivatives(D * x)
        J = (sp.diags(Sc) @ nlp.jac_pattern.matrix(ev.jac) @ sp.diags(D)).tocsr()
        return sf * D * ev.grad, J

    x = push(np.clip(z0 / D, Lx, Ux), Lx, Ux)
    f, c = evaluate(x)
    s = push(c[I], Ls, Us)
    w = np.concatenate([x, s])
    y = np.zeros(m)
    zL = np.where(hasL, 1.0, 0.0)
    zU = np.where(hasU, 1.0, 0.0)
    mu = 0.1
    filt: list[tuple[float, float]] = []
    filter_mu = mu
    delta_w_last = 0.0
    it = 0

    def constraint_residual(c, s):
        g = np.empty(m)
        g[E] = c[E] - t_E
        g[I] = c[I] - s
        return g

    def barrier(f, w, mu):
        lo, hi = _gap(w, L, U)
        if np.any(lo[hasL] <= 0) or np.any(hi[hasU] <= 0):
            return np.inf
        return f - mu * (np.sum(np.log(lo[hasL])) + np.sum(np.log(hi[hasU])))

    def ftb(v, dv, tau):
        """Largest α ∈ (0, 1] keeping v + α dv ≥ (1 − τ) v for v > 0 (fraction to the boundary)."""
        neg = dv < 0
        if not np.any(neg):
            return 1.0
        return float(min(1.0, np.min(-tau * v[neg] / dv[neg])))

    g = constraint_residual(c, s)
    theta0 = float(np.sum(np.abs(g)))
    grad, J = gradients(x)
    status, message = "iteration_limit", f"iteration limit of {max_iter} reached"
    kkt = np.inf
    while True:
        # --- optimality measures ---------------------------------------------------------------
        lo, hi = _gap(w, L, U)
        JT_y = J.T @ y
        rd = np.concatenate([grad + JT_y, -y[I]]) - zL + zU
        compl_L = np.where(hasL, lo * zL, 0.0)
        compl_U = np.where(hasU, hi * zU, 0.0)
        s_d = max(100.0, (np.abs(y).sum() + zL.sum() + zU.sum()) / max(1, n + mI + m)) / 100.0
        s_c = max(100.0, (zL.sum() + zU.sum()) / max(1, n + mI)) / 100.0
        viol = float(np.max(np.abs(g), initial=0.0))
        kkt = max(float(np.max(np.abs(rd), initial=0.0)) / s_d, viol,
                  float(np.max(np.maximum(compl_L, compl_U), initial=0.0)) / s_c)
        if callback is not None:
            callback(D * w[:n])
        if verbose:
            print(f"{it:4d} f {f / sf:.8e} viol {viol:.2e} kkt {kkt:.2e} mu {mu:.1e} dw {delta_w_last:.1e}")
        if kkt <= tol and nlp.max_violation(D * w[:n]) <= max(constraint_tol, 10 * constraint_tol):
            status, message = "converged", f"optimal: KKT error {kkt:.2g} (scipy interior point)"
            break
        if it >= max_iter:
            break
        if time.perf_counter() > deadline:
            status, message = "time_limit", "time limit reached"
            break
        # --- barrier update --------------------------------------------------------------------------
        if mu_mode == "loqo":
            # LOQO's rule: μ = σ · mean complementarity, σ = 0.1 min(0.05 (1 − ξ)/ξ, 2)³ with ξ the
            # ratio of the smallest product to the mean; a floor keeps μ from outrunning feasibility.
            prods = np.concatenate([compl_L[hasL], compl_U[hasU]])
            if len(prods):
                avg = float(np.mean(prods))
                xi = float(np.min(prods)) / max(avg, 1e-300)
                sigma = 0.1 * min(0.05 * (1 - xi) / max(xi, 1e-12), 2.0) ** 3
                mu = max(tol / 10, sigma * avg, min(mu, 1e-2 * viol))
        while mu_mode == "monotone":
            e_mu = max(float(np.max(np.abs(rd), initial=0.0)) / s_d, viol,
                       float(np.max(np.maximum(np.abs(compl_L - mu * hasL), np.abs(compl_U - mu * hasU)),
                                    initial=0.0)) / s_c)
            if e_mu > 10.0 * mu or mu <= tol / 10:
                break
            mu = max(tol / 10, min(0.2 * mu, mu**1.5))
        it += 1
        # --- Newton system -------------------------------------------------------------------
        lam = Sc * y
        H = nlp.hessian(D * w[:n], lam, sf)
        H = (sp.diags(D) @ H @ sp.diags(D)).tocsr()
        with np.errstate(divide="ignore", invalid="ignore"):
            SigL = np.where(hasL, zL / lo, 0.0)
            SigU = np.where(hasU, zU / hi, 0.0)
            bL = np.where(hasL, mu / lo, 0.0)
            bU = np.where(hasU, mu / hi, 0.0)
        Sig = SigL + SigU
        r_mu = np.concatenate([grad + JT_y, -y[I]]) - bL + bU
        delta_w = 0.0
        delta_c = 0.0
        dx = None
        for attempt in range(12):
            Ds = Sig[n:] + delta_w
            Dc = np.full(m, delta_c)
            Dc[I] += 1.0 / Ds
            rhs_y = -g.copy()
            rhs_y[I] -= r_mu[n:] / Ds
            K = sp.bmat([[H + sp.diags(Sig[:n] + delta_w), J.T], [J, -sp.diags(Dc)]], format="csc")
            try:
                lu = splu(K, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.1)
                sol = lu.solve(np.concatenate([-r_mu[:n], rhs_y]))
                ok = np.all(np.isfinite(sol))
            except RuntimeError:
                ok = False
            if ok:
                dx, dy = sol[:n], sol[n:]
                ds = (dy[I] - r_mu[n:]) / Ds
                dw = np.concatenate([dx, ds])
                curv = float(dx @ (H @ dx)) + float(np.sum((Sig + delta_w) * dw * dw))
                if curv > 1e-12 * float(dw @ dw) or float(dw @ dw) < 1e-24:
                    break
            dx = None
            if delta_w == 0.0:
                delta_w = max(1e-4, delta_w_last / 3) if delta_w_last > 0 else 1e-4
            else:
                delta_w *= 8.0 if delta_w_last == 0.0 else 4.0
            if not ok:
                delta_c = max(delta_c, 1e-8 * mu**0.25)
        if dx is None:
            status, message = "numerical_failure", "could not factor the KKT matrix"
            break
        delta_w_last = delta_w
        if mu_mode == "probing" and np.any(hasL | hasU):
            # Mehrotra's probing: an affine step (μ = 0) from the same factorisation, then
            # μ = (μ_aff/μ_avg)³ μ_avg, not below a tenth of the KKT error's dual part
            def step_for(mu_):
                with np.errstate(divide="ignore", invalid="ignore"):
                    bL_ = np.where(hasL, mu_ / lo, 0.0)
                    bU_ = np.where(hasU, mu_ / hi, 0.0)
                r_ = np.concatenate([grad + JT_y, -y[I]]) - bL_ + bU_
                ry = -g.copy()
                ry[I] -= r_[n:] / Ds
                sol_ = lu.solve(np.concatenate([-r_[:n], ry]))
                dw_ = np.concatenate([sol_[:n], (sol_[n:][I] - r_[n:]) / Ds])
                return bL_, bU_, r_, sol_, dw_

            _, _, _, _, dwa = step_for(0.0)
            dzLa = np.where(hasL, -zL - SigL * dwa, 0.0)
            dzUa = np.where(hasU, -zU + SigU * dwa, 0.0)
            ap = min(ftb(np.where(hasL, lo, 1.0), np.where(hasL, dwa, 0.0), 1.0),
                     ftb(np.where(hasU, hi, 1.0), np.where(hasU, -dwa, 0.0), 1.0))
            ad = min(ftb(np.where(hasL, zL, 1.0), np.where(hasL, dzLa, 0.0), 1.0),
                     ftb(np.where(hasU, zU, 1.0), np.where(hasU, dzUa, 0.0), 1.0))
            cnt = int(hasL.sum() + hasU.sum())
            avg = float((compl_L.sum() + compl_U.sum()) / cnt)
            aff = float(np.sum(np.where(hasL, (lo + ap * dwa) * (zL + ad * dzLa), 0.0))
                        + np.sum(np.where(hasU, (hi - ap * dwa) * (zU + ad * dzUa), 0.0))) / cnt
            mu = float(np.clip((max(aff, 0.0) / max(avg, 1e-300)) ** 3 * avg, tol / 10, 1e5))
            bL, bU, r_mu, sol, dw = step_for(mu)
            dx, dy = sol[:n], sol[n:]
        dzL = np.where(hasL, bL - zL - SigL * dw, 0.0)
        dzU = np.where(hasU, bU - zU + SigU * dw, 0.0)
        tau = max(0.99, 1.0 - mu)
        a_max = min(ftb(np.where(hasL, lo, 1.0), np.where(hasL, dw, 0.0), tau),
                    ftb(np.where(hasU, hi, 1.0), np.where(hasU, -dw, 0.0), tau))
        a_z = min(ftb(np.where(hasL, zL, 1.0), np.where(hasL, dzL, 0.0), tau),
                  ftb(np.where(hasU, zU, 1.0), np.where(hasU, dzU, 0.0), tau))
        # --- filter line search (Wächter & Biegler 2006, §2.3–2.4) ------------------------------
        B0 = barrier(f, w, mu)
        theta = float(np.sum(np.abs(g)))
        gradB = np.concatenate([grad, np.zeros(mI)]) - bL + bU
        dphi = float(gradB @ dw)
        if mu != filter_mu:
            filt, filter_mu = [], mu
        theta_max = 1e4 * max(1.0, theta0)

        def acceptable(theta_t, phi_t, alpha_):
            """(accepted, f-type step) for a trial point."""
            if not np.isfinite(phi_t) or theta_t > theta_max:
                return False, False
            for th_j, ph_j in filt:
                if theta_t >= th_j and phi_t >= ph_j:
                    return False, False
            switching = dphi < 0 and alpha_ * (-dphi) ** 2.3 > theta ** 1.1
            if switching and theta <= 1e-4 * max(1.0, theta0):
                return phi_t <= B0 + 1e-4 * alpha_ * dphi, True
            return theta_t <= (1 - 1e-5) * theta or phi_t <= B0 - 1e-8 * theta, False

        alpha = a_max
        accepted = ftype = False
        soc_done = False
        w_t = f_t = c_t = g_t = None
        for trial in range(40):
            w_t = w + alpha * dw
            f_t, c_t = evaluate(w_t[:n])
            g_t = constraint_residual(c_t, w_t[n:])
            theta_t = float(np.sum(np.abs(g_t)))
            accepted, ftype = acceptable(theta_t, barrier(f_t, w_t, mu), alpha)
            if accepted:
                break
            if trial == 0 and not soc_done and theta_t >= theta:
                # second-order correction: re-solve with the constraint values at the trial point
                soc_done = True
                rhs_y = -(alpha * g + g_t)
                rhs_y[I] -= alpha * r_mu[n:] / Ds
                sol = lu.solve(np.concatenate([-alpha * r_mu[:n], rhs_y]))
                dws = np.concatenate([sol[:n], (sol[n:][I] - alpha * r_mu[n:]) / Ds])
                a_soc = min(ftb(np.where(hasL, lo, 1.0), np.where(hasL, dws, 0.0), tau),
                            ftb(np.where(hasU, hi, 1.0), np.where(hasU, -dws, 0.0), tau))
                w_s = w + a_soc * dws
                f_s, c_s = evaluate(w_s[:n])
                g_s = constraint_residual(c_s, w_s[n:])
                ok_s, ft_s = acceptable(float(np.sum(np.abs(g_s))), barrier(f_s, w_s, mu), alpha)
                if ok_s:
                    w_t, f_t, c_t, g_t, accepted, ftype = w_s, f_s, c_s, g_s, True, ft_s
                    break
            alpha *= 0.5
            if alpha < 1e-12:
                break
        if accepted and not ftype:
            filt.append(((1 - 1e-5) * theta, B0 - 1e-8 * theta))
        if not accepted:
            # feasibility restoration: least squares of g over (x, s) within the bounds, from the current
            # point with a small proximity term (scipy least_squares, trust region reflective, LSMR)
            w_r = _restore(w, g, J, n, I, L, U, evaluate, constraint_residual, deadline)
            if w_r is not None:
                w_r = push(w_r, L, U, 1e-6)
                f_r, c_r = evaluate(w_r[:n])
                g_r = constraint_residual(c_r, w_r[n:])
                if float(np.sum(np.abs(g_r))) < 0.9 * theta:
                    w_t, f_t, c_t, g_t = w_r, f_r, c_r, g_r
                    accepted = True
                    filt = [((1 - 1e-5) * theta, B0 - 1e-8 * theta)]
                    alpha = 0.0
                    lo_r, hi_r = _gap(w_r, L, U)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        zL = np.where(hasL, 1.0, 0.0)
                        zU = np.where(hasU, 1.0, 0.0)
                    dzL = np.zeros_like(zL)
                    dzU = np.zeros_like(zU)
                    dy = -y  # restart the multipliers at 0
            if not accepted:
                status, message = "stalled", ("the line search cannot make progress and the restoration "
                                               f"failed (scipy interior point); constraint violation {theta:.3g}")
                break
        if verbose:
            print(f"      alpha {alpha:.2e} a_max {a_max:.2e} a_z {a_z:.2e} trials {trial} soc {soc_done}")
        w, f, c, g = w_t, f_t, c_t, g_t
        a_y = alpha if alpha > 0 else 1.0
        y = y + a_y * dy
        zL = zL + a_z * dzL
        zU = zU + a_z * dzU
        lo, hi = _gap(w, L, U)
        with np.errstate(divide="ignore", invalid="ignore"):
            zL = np.where(hasL, np.clip(zL, mu / (1e10 * lo), 1e10 * mu / lo), 0.0)
            zU = np.where(hasU, np.clip(zU, mu / (1e10 * hi), 1e10 * mu / hi), 0.0)
        grad, J = gradients(w[:n])
    return IPMResult(z=D * w[:n], status=status, message=message, iterations=it, kkt_error=kkt)


def _restore(w, g, J, n, I, L, U, evaluate, constraint_residual, deadline, proximity: float = 1e-4):
    """min ½|g(x, s)|² + ½ζ|w − w₀|² within the bounds (least_squares 'trf'); None on failure."""
    from scipy.optimize import least_squares

    mI = len(I)
    w0 = w.copy()
    rz = math.sqrt(proximity)

    def res(v):
        if time.perf_counter() > deadline:
            raise TimeoutError
        _, c = evaluate(v[:n])
        return np.concatenate([constraint_residual(c, v[n:]), rz * (v - w0)])

    def jac(v):
        _, c = evaluate(v[:n])
        Jx = _jac_at(v[:n])
        m = Jx.shape[0]
        Js = sp.csr_matrix((-np.ones(mI), (I, np.arange(mI))), shape=(m, mI))
        top = sp.hstack([Jx, Js])
        return sp.vstack([top, rz * sp.identity(n + mI)]).tocsr()

    _jac_at = evaluate.jacobian
    lo = np.where(np.isfinite(L), L, -np.inf)
    hi = np.where(np.isfinite(U), U, np.inf)
    try:
        r = least_squares(res, np.clip(w0, lo, hi), jac=jac, bounds=(lo, hi), method="trf", tr_solver="lsmr",
                          max_nfev=60, ftol=1e-10, xtol=1e-12, gtol=1e-12)
    except (TimeoutError, ValueError, np.linalg.LinAlgError):
        return None
    return r.x if np.all(np.isfinite(r.x)) else None


__all__ = ["interior_point", "IPMResult"]
