"""The barrier parameter μ of the interior point and how it moves.

Free mode: IPOPT's quality-function oracle (Nocedal, Wächter & Waltz 2009, "NWW09", §4.3): affine and
centring steps from the same factorisation, σ by IPOPT's golden-section search, μ = σ μ_avg. It is
globalised by NWW09 §5's KKT-error test: the quality must fall below 0.9999 × one of the last 4 accepted
values, else the fixed mode (monotone, Wächter & Biegler 2006, eq. 7) takes over from 0.8 × the mean
complementarity until the free mode makes progress again. This is IPOPT's adaptive_mu_globalization =
kkt-error; IPOPT's default judges that progress by a filter of (f, θ) instead.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from .bounds import masked_fraction_to_boundary
from .kkt import KKTSystem, amax
from .optimality import Optimality
from .scaled import Point, ScaledProgram

MU_MIN = 1e-11
KAPPA_EPS = 10.0          # barrier problem solved to κ_ε μ (fixed mode)
KAPPA_MU, THETA_MU = 0.2, 1.5
QUALITY_DECREASE, QUALITY_MEMORY = 0.9999, 4   # NWW09 §5's progress test
FIXED_MODE_FACTOR = 0.8   # the fixed mode starts at this × the mean complementarity
SIGMA_MIN, SIGMA_MAX, SIGMA_TOL, SECTION_STEPS = 1e-6, 100.0, 1e-2, 8   # quality-function search


def monotone_decrease(mu: float, floor: float) -> float:
    """The next barrier parameter of the monotone mode, min(κ_μ μ, μ^θ_μ), at least ``floor`` (WB06 eq. 7)."""
    return max(floor, min(KAPPA_MU * mu, mu**THETA_MU))


class BarrierParameter:
    """μ, its mode (``free``) and the KKT qualities of the last accepted free-mode iterates."""

    def __init__(self, mu: float, adaptive: bool, tol: float, mu_max: float):
        self.mu = mu
        self.adaptive = adaptive    # False: the monotone mode only
        self.free = adaptive
        self.floor = max(MU_MIN, tol / 11.0)   # the monotone mode's last barrier parameter (IPOPT)
        self.mu_max = mu_max
        self.refs: deque[float] = deque(maxlen=QUALITY_MEMORY)

    def update(self, opt: Optimality, damp: np.ndarray, hasL: np.ndarray, hasU: np.ndarray) -> bool:
        """Before a step: leave or re-enter the free mode by NWW09 §5's test, and in the fixed mode lower μ
        while the barrier problem is solved to κ_ε μ (WB06 eq. 7). True when μ was set anew (the line
        search's filter restarts)."""
        reset = False
        refs = self.refs
        if self.free:
            if len(refs) == refs.maxlen and opt.quality > QUALITY_DECREASE * max(refs):
                self.free = False
                self.mu = max(MU_MIN, FIXED_MODE_FACTOR * opt.avg_compl)
                reset = True
        elif self.adaptive and len(refs) and opt.quality <= QUALITY_DECREASE * max(refs):
            self.free = True
        if not self.free:
            mu = self.mu
            while True:
                e_mu = max(amax(opt.rd + mu * damp) / opt.s_d, opt.viol,
                           float(np.maximum(np.abs(opt.compl_L - mu * hasL), np.abs(opt.compl_U - mu * hasU)).max(
                               initial=0.0)) / opt.s_c)
                if e_mu > KAPPA_EPS * mu or mu <= self.floor:
                    break
                mu = monotone_decrease(mu, self.floor)
                reset = True
            self.mu = mu
        return reset

    def free_step(self, prog: ScaledProgram, kkt: KKTSystem, opt: Optimality, pt: Point, zL: np.ndarray,
                  zU: np.ndarray, SigL: np.ndarray, SigU: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The free mode's μ and step (dw, dy) on the factored ``kkt``. IPOPT's split: the affine-scaling
        step (μ = 0) and the centring step (only the barrier terms at μ_avg on the right), one solve each;
        the step for μ = σ μ_avg is d_aff + σ d_cen."""
        lo, hi, avg_compl = pt.lo, pt.hi, opt.avg_compl
        dwa, dya = kkt.newton(opt.r_0, pt.g)
        bLc, bUc, r_c = prog.barrier_terms(lo, hi, avg_compl)
        dwc, dyc = kkt.newton(r_c, prog.zeros_m)
        sigma = quality_function_sigma(dwa, dwc, bLc, bUc, SigL, SigU, lo, hi, zL, zU, prog.iL, prog.iU, opt.rd,
                                       pt.g, avg_compl, prog.nb, max(0.99, 1.0 - self.mu), MU_MIN, self.mu_max)
        self.mu = min(max(sigma * avg_compl, MU_MIN), self.mu_max)   # np.clip's result, on Python floats
        sigma = self.mu / avg_compl
        return dwa + sigma * dwc, dya + sigma * dyc

    def accepted(self, quality: float) -> None:
        """An accepted step from an iterate of KKT quality ``quality``: a free-mode reference value."""
        if self.free:
            self.refs.append(quality)

    def restored(self) -> None:
        """After a restoration phase: the free mode's reference values no longer apply."""
        self.refs.clear()


def quality_function_sigma(dwa, dwc, bLc, bUc, SigL, SigU, lo, hi, zL, zU, iL, iU, rd, g, avg_compl, nb,
                           tau, mu_min, mu_max) -> float:
    """IPOPT's quality-function oracle (NWW09 §4.3, IpQualityFunctionMuOracle): σ minimising
    q(σ) = (1 − α_d)² |r_d|²/n_d + (1 − α_p)² |g|²/m + |(gap + α_p Δgap)(z + α_d Δz)|²/n_b along the step
    d(σ) = d_aff + σ d_cen (the affine-scaling step and the centring step for μ_avg, whose barrier terms
    are bLc, bUc; α from the fraction-to-boundary rule with the current τ); then μ = σ μ_avg. As IPOPT:
    the sign of q(1) − q(1 − 0.01) picks the side of σ = 1, then a golden-section search in σ (not
    log σ) of at most 8 steps down to a relative width of 0.01 on [max(1e-6, μ_min/μ_avg), 0.99] or
    [1, min(100, μ_max/μ_avg)]. iL, iU: the entries with a finite lower / upper bound."""
    nd, nr = max(1, len(rd)), max(1, len(g))
    rd2, g2 = float(rd @ rd) / nd, float(g @ g) / nr
    # only the bounded entries enter q: restrict every vector to them once, not per σ, lower gaps then
    # upper gaps (an upper gap moves by −Δw); Δz = μ/gap − z − Σ Δgap. (gap, z) are stacked in one array,
    # and their affine and centring steps likewise, so that each σ moves both in one pass; −τ (gap, z) of
    # the fraction-to-boundary rule is the same for every σ
    nL, k = len(iL), len(iL) + len(iU)
    v = np.concatenate([lo[iL], hi[iU], zL[iL], zU[iU]])
    zb = v[k:]
    Sig = np.concatenate([SigL[iL], SigU[iU]])
    dga = np.concatenate([dwa[iL], -dwa[iU]])
    dgc = np.concatenate([dwc[iL], -dwc[iU]])
    d_aff = np.concatenate([dga, -zb - Sig * dga])
    d_cen = np.concatenate([dgc, np.concatenate([bLc[iL], bUc[iU]]) - Sig * dgc])
    ntv = -tau * v

    def q(sigma):
        # in place on the stacked arrays, each entry gets the same product and sum as in the unstacked
        # (gap + α_p (dga + σ dgc)) (z + α_d (dza + σ dzc)): IEEE + and × are commutative
        d = d_cen * sigma
        d += d_aff                   # (Δgap, Δz) = d_aff + σ d_cen
        neg = d < 0
        ap = masked_fraction_to_boundary(ntv[:k], d[:k], neg[:k])
        ad = masked_fraction_to_boundary(ntv[k:], d[k:], neg[k:])
        d[:k] *= ap
        d[k:] *= ad
        d += v                       # (gap + α_p Δgap, z + α_d Δz)
        c = d[:k] * d[k:]
        cl, cu = c[:nL], c[nL:]
        return (1 - ad) ** 2 * rd2 + (1 - ap) ** 2 * g2 + float(cl @ cl + cu @ cu) / nb

    s1m = 1.0 - SIGMA_TOL
    q1, q1m = q(1.0), q(s1m)
    if q1m > q1:
        lo_s, hi_s, q_lo, q_hi = 1.0, min(SIGMA_MAX, mu_max / avg_compl), q1, None
    else:
        lo_s = max(SIGMA_MIN, mu_min / avg_compl)
        hi_s, q_lo, q_hi = min(max(lo_s, s1m), mu_max / avg_compl), None, q1m
    if lo_s >= hi_s:
        return hi_s if q1m > q1 else lo_s
    return golden_section(q, lo_s, hi_s, q_lo, q_hi)


def golden_section(q, lo: float, up: float, q_lo: float | None, q_up: float | None) -> float:
    """IPOPT's PerformGoldenSection on [lo, up]; q_lo/q_up: known end values (None: not evaluated)."""
    lo_in, up_in = lo, up
    gf = (3.0 - math.sqrt(5.0)) / 2.0
    m1, m2 = lo + gf * (up - lo), lo + (1 - gf) * (up - lo)
    q1, q2 = q(m1), q(m2)
    steps = 0
    while up - lo >= SIGMA_TOL * up and steps < SECTION_STEPS:
        steps += 1
        if q1 > q2:
            lo, q_lo = m1, q1
            m1, q1 = m2, q2
            m2 = lo + (1 - gf) * (up - lo)
            q2 = q(m2)
        else:
            up, q_up = m2, q2
            m2, q2 = m1, q1
            m1 = lo + gf * (up - lo)
            q1 = q(m1)
    sigma, qs = (m1, q1) if q1 < q2 else (m2, q2)
    if up == up_in:
        qt = q(up) if q_up is None else q_up
        if qt < qs:
            sigma = up
    elif lo == lo_in:
        qt = q(lo) if q_lo is None else q_lo
        if qt < qs:
            sigma = lo
    return sigma
