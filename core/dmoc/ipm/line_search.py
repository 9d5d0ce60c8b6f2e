"""IPOPT's filter line search (Wächter & Biegler 2006, §2.3–2.4): backtracking on the step from the largest
α the fraction-to-the-boundary rule allows, accepting a trial point the filter does not block when it cuts
the violation θ = |g|₁ or the barrier function φ_μ enough (or, by the switching condition, meets Armijo's
condition on φ_μ), with up to four second-order corrections, down to the minimum step α_min (WB06 eq. 23)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kkt import KKTSystem
from .scaled import Point, ScaledProgram

GAMMA_THETA, GAMMA_PHI = 1e-5, 1e-8
S_THETA, S_PHI, DELTA_SW, ETA_PHI = 1.1, 2.3, 1.0, 1e-4
MAX_SOC, KAPPA_SOC = 4, 0.99
ALPHA_MIN_FRACTION = 0.05   # α_min's safety factor γ_α (WB06 eq. 23)


class Filter:
    """Pairs (θ, φ) that a trial point must improve on in at least one (WB06 eq. 18); it holds for one μ."""

    def __init__(self, mu: float):
        self.entries: list[tuple[float, float]] = []
        self.mu = mu

    def reset(self, mu: float) -> None:
        self.entries, self.mu = [], mu

    def blocks(self, theta: float, phi: float) -> bool:
        """Whether the filter rejects a point with violation θ and barrier value φ."""
        for th_j, ph_j in self.entries:
            if theta >= th_j and phi >= ph_j:
                return True
        return False

    def augment(self, theta: float, phi: float) -> None:
        """Add the margins around the point (θ, φ) (WB06 eq. 22)."""
        self.entries.append(((1 - GAMMA_THETA) * theta, phi - GAMMA_PHI * theta))


@dataclass(frozen=True)
class _Current:
    """The point the search starts from: its θ, φ_μ and the directional derivative of φ_μ along the step."""
    theta: float
    phi: float
    dphi: float


@dataclass
class Trial:
    """An accepted trial point of the search."""
    point: Point
    alpha: float
    f_type: bool    # accepted by the switching and Armijo conditions (the filter is not augmented)
    trials: int     # backtracking steps
    soc: int        # second-order corrections tried


class FilterLineSearch:
    """The filter line search on ``prog``; ``theta_max``, ``theta_min``: WB06's θ_max and θ_min."""

    def __init__(self, prog: ScaledProgram, kkt: KKTSystem, theta_max: float, theta_min: float, mu: float):
        self.prog, self.kkt = prog, kkt
        self.theta_max, self.theta_min = theta_max, theta_min
        self.filter = Filter(mu)

    def search(self, pt: Point, grad: np.ndarray, dw: np.ndarray, r_mu: np.ndarray, bL: np.ndarray,
               bU: np.ndarray, a_max: float, tau: float, mu: float) -> Trial | None:
        """The accepted trial point along dw from pt (gradient ``grad``, barrier terms bL, bU, right-hand side
        r_mu of the step), or None when α fell below α_min (then the caller restores feasibility)."""
        prog = self.prog
        gradB = np.concatenate([grad, prog.zeros_mI]) - bL + bU + mu * prog.damp
        cur = _Current(pt.theta, prog.barrier(pt.f, pt.lo, pt.hi, mu), float(gradB @ dw))
        if mu != self.filter.mu:
            self.filter.reset(mu)
        alpha_min = self._alpha_min(cur)
        tiny = float((np.abs(dw) / (1.0 + np.abs(pt.w))).max(initial=0.0)) < 10 * np.finfo(float).eps
        alpha = a_max
        accepted = None
        trials = soc = 0
        while alpha >= alpha_min or tiny:
            trials += 1
            t = prog.evaluate_point(pt.w + alpha * dw)
            if tiny:
                accepted = Trial(t, alpha, True, trials, soc)
                break
            ok, f_type = self._acceptable(cur, t, alpha, mu)
            if ok:
                accepted = Trial(t, alpha, f_type, trials, soc)
                break
            if trials == 1 and t.theta >= cur.theta:
                accepted, soc = self._second_order_corrections(cur, pt, t, alpha, r_mu, tau, mu)
                if accepted is not None:
                    accepted.trials = trials
                    break
            alpha *= 0.5
        if accepted is None or not accepted.f_type:
            self.filter.augment(cur.theta, cur.phi)
        return accepted

    def _alpha_min(self, cur: _Current) -> float:
        """α_min (WB06 eq. 23): below it the search gives up."""
        theta, dphi = cur.theta, cur.dphi
        if dphi < 0 and theta <= self.theta_min:
            return ALPHA_MIN_FRACTION * min(GAMMA_THETA, GAMMA_PHI * theta / -dphi,
                                            DELTA_SW * theta ** S_THETA / (-dphi) ** S_PHI)
        if dphi < 0:
            return ALPHA_MIN_FRACTION * min(GAMMA_THETA, GAMMA_PHI * theta / -dphi)
        return ALPHA_MIN_FRACTION * GAMMA_THETA

    def _acceptable(self, cur: _Current, t: Point, alpha: float, mu: float) -> tuple[bool, bool]:
        """(accepted, f-type step) for the trial point t of step α (WB06 eqs. 18–20)."""
        phi_t = self.prog.barrier(t.f, t.lo, t.hi, mu)
        if not np.isfinite(phi_t) or t.theta > self.theta_max:
            return False, False
        if self.filter.blocks(t.theta, phi_t):
            return False, False
        theta, phi, dphi = cur.theta, cur.phi, cur.dphi
        switching = dphi < 0 and alpha * (-dphi) ** S_PHI > DELTA_SW * theta ** S_THETA
        if switching and theta <= self.theta_min:
            return phi_t <= phi + ETA_PHI * alpha * dphi, True
        return t.theta <= (1 - GAMMA_THETA) * theta or phi_t <= phi - GAMMA_PHI * theta, False

    def _second_order_corrections(self, cur: _Current, pt: Point, t: Point, alpha: float, r_mu: np.ndarray,
                                  tau: float, mu: float) -> tuple[Trial | None, int]:
        """Up to MAX_SOC second-order corrections (WB06 §2.4) after the first trial t (step α) raised θ: re-solve
        with the accumulated constraint values; (the accepted corrected point or None, corrections tried)."""
        prog = self.prog
        c_soc = alpha * pt.g + t.g
        theta_old = cur.theta
        th_soc = t.theta
        r_soc = alpha * r_mu
        count = 0
        while count < MAX_SOC and th_soc < 1e300:
            count += 1
            dws, _ = self.kkt.newton(r_soc, c_soc)
            a_soc = prog.primal_step_limit(pt.lo, pt.hi, dws, tau)
            s = prog.evaluate_point(pt.w + a_soc * dws)
            th_soc = s.theta
            ok, f_type = self._acceptable(cur, s, alpha, mu)
            if ok:
                return Trial(s, a_soc, f_type, 1, count), count
            if th_soc > KAPPA_SOC * theta_old:
                break
            theta_old = th_soc
            c_soc = a_soc * c_soc + s.g
            r_soc = a_soc * r_soc
        return None, count
