"""How far an iterate is from a KKT point: the scaled optimality error of Wächter & Biegler 2006, eq. 5
(the termination test), and the KKT quality of Nocedal, Wächter & Waltz 2009, §5 (the free barrier mode's
progress test)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kkt import Jacobian, amax
from .scaled import Point, ScaledProgram


@dataclass(slots=True)
class Optimality:
    r_0: np.ndarray        # the dual residual without its bound multipliers, ∇f + Jᵀy on (x, s)
    rd: np.ndarray         # the dual residual r_0 − z_L + z_U
    compl_L: np.ndarray    # gap_L z_L on the finite lower bounds (0 elsewhere)
    compl_U: np.ndarray
    s_d: float             # WB06 eq. 5's scaling of the dual residual
    s_c: float             # and of the complementarity
    viol: float            # |g|∞
    dual_inf: float        # |rd|∞
    kkt: float             # the scaled optimality error E_0
    avg_compl: float       # the mean complementarity μ_avg
    quality: float         # |rd|²/(n + n_I) + |g|²/m + |complementarity|²/n_b (NWW09 §5)


def measure(prog: ScaledProgram, pt: Point, grad: np.ndarray, J: Jacobian, y: np.ndarray, zL: np.ndarray,
            zU: np.ndarray) -> Optimality:
    """The measures at the iterate (pt, y, zL, zU) with derivatives (grad, J)."""
    n, m, mI, nb, g = prog.n, prog.m, prog.mI, prog.nb, pt.g
    r_0 = np.concatenate([grad + J.T(y), -y[prog.I]])
    rd = r_0 - zL + zU
    compl_L = np.where(prog.hasL, pt.lo * zL, 0.0)
    compl_U = np.where(prog.hasU, pt.hi * zU, 0.0)
    z_sum = zL.sum() + zU.sum()
    s_d = max(100.0, (np.abs(y).sum() + z_sum) / max(1, n + mI + m)) / 100.0
    s_c = max(100.0, z_sum / max(1, n + mI)) / 100.0
    viol = amax(g)
    dual_inf = amax(rd)
    kkt = max(dual_inf / s_d, viol, float(np.maximum(compl_L, compl_U).max(initial=0.0)) / s_c)
    avg_compl = float(compl_L.sum() + compl_U.sum()) / nb if nb else 0.0
    quality = (float(rd @ rd) / max(1, n + mI) + float(g @ g) / max(1, m)
               + (float(compl_L @ compl_L + compl_U @ compl_U) / nb if nb else 0.0))
    return Optimality(r_0, rd, compl_L, compl_U, s_d, s_c, viol, dual_inf, kkt, avg_compl, quality)
