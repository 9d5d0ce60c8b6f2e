"""The program the interior point works on: the NLP scaled (x = z/D, ĉ = Sc c, f̂ = sf f; ``solve.scaling``)
with a slack per inequality row, min f̂(x) s.t. ĉ_E(x) = t_E, ĉ_I(x) − s = 0, L ≤ w = (x, s) ≤ U, and its
barrier function (Wächter & Biegler 2006, eq. 3, with the linear damping of one-sided bounds of §3.7)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problem import NLP
from .bounds import gap_function, masked_fraction_to_boundary
from .kkt import Jacobian

KAPPA_D = 1e-5            # linear damping of variables bounded on one side only (WB06 §3.7)


@dataclass
class Duals:
    """The multipliers of a solution, unscaled (the Lagrangian f + λᵀc − z_Lᵀ(v − l) − z_Uᵀ(u − v)): one λ per
    constraint row, and bound multipliers on (free variables, inequality rows) — an inequality row's bound
    multipliers are those of its slack. ``mu``: the barrier parameter they were found at. A warm start
    passes them back with a nearby problem of the same structure (``NLP.structure_key``)."""
    y: np.ndarray
    z_lower: np.ndarray
    z_upper: np.ndarray
    mu: float


@dataclass(slots=True)
class Point:
    """A primal point w = (x, s) and what the method needs of it: the scaled cost f, constraint values c,
    residual g (of c_E = t_E and c_I = s), bound gaps (lo, hi) and the violation θ = |g|₁."""
    w: np.ndarray
    f: float
    c: np.ndarray
    g: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    theta: float


class ScaledProgram:
    """``nlp`` scaled by (D, Sc, sf), with slacks: sizes, bounds and their masks, and the evaluations."""

    def __init__(self, nlp: NLP, D: np.ndarray, Sc: np.ndarray, sf: float):
        self.nlp, self.D, self.Sc, self.sf = nlp, D, Sc, sf
        self.n, self.m = nlp.n, nlp.m
        m = self.m
        eq = nlp.cl == nlp.cu
        self.E, self.I = E, I = np.flatnonzero(eq), np.flatnonzero(~eq)
        self.mI = mI = len(I)
        self.t_E = Sc[E] * nlp.cl[E]
        self.Ls, self.Us = Sc[I] * nlp.cl[I], Sc[I] * nlp.cu[I]
        self.Lx, self.Ux = nlp.lb / D, nlp.ub / D
        L = np.concatenate([self.Lx, self.Ls])
        U = np.concatenate([self.Ux, self.Us])
        self.hasL, self.hasU = hasL, hasU = np.isfinite(L), np.isfinite(U)
        onlyL, onlyU = hasL & ~hasU, hasU & ~hasL   # one-sided bounds: κ_d damping
        # the same entries as index arrays, for the per-iteration gathers (the same values in the same order
        # as the masks give, about half the cost)
        self.iL, self.iU, self.i_onlyL, self.i_onlyU = (np.flatnonzero(a) for a in (hasL, hasU, onlyL, onlyU))
        self.nb = int(hasL.sum() + hasU.sum())
        self.gap = gap_function(L, U)
        self.damp = KAPPA_D * (np.where(onlyL, 1.0, 0.0) - np.where(onlyU, 1.0, 0.0))
        self.zeros_m, self.zeros_mI = np.zeros(m), np.zeros(mI)   # read-only
        # unscaled multiplier = scaled × these (the scaled Lagrangian is σ times the unscaled one)
        self.y_unscale = Sc / sf
        self.b_unscale = np.concatenate([1.0 / (sf * D), Sc[I] / sf])
        self.jr, self.jc = nlp.jac_pattern.rows, nlp.jac_pattern.cols
        self._jscale = Sc[self.jr] * D[self.jc]
        self._gscale = sf * D
        self._hscale = D[nlp.hess_pattern.rows] * D[nlp.hess_pattern.cols]

    def evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(f̂, ĉ) at x."""
        ev = self.nlp.evaluate(self.D * x)
        return self.sf * ev.cost, self.Sc * ev.cons

    def gradients(self, x: np.ndarray) -> tuple[np.ndarray, Jacobian]:
        """(∇f̂, ∂ĉ/∂x) at x."""
        ev = self.nlp.derivatives(self.D * x)
        return self._gscale * ev.grad, Jacobian(self._jscale * ev.jac, self.jr, self.jc, self.n)

    def hessian(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The scaled Lagrangian Hessian's lower-triangle values at the unscaled point z for scaled multipliers y."""
        return self._hscale * self.nlp.hessian_values(z, self.Sc * y, self.sf)

    def residual(self, c: np.ndarray, s: np.ndarray) -> np.ndarray:
        """g = (c_E − t_E, c_I − s) in row order."""
        g = np.empty(self.m)
        g[self.E] = c[self.E] - self.t_E
        g[self.I] = c[self.I] - s
        return g

    def point(self, w: np.ndarray, f: float, c: np.ndarray) -> Point:
        """The point w whose (f̂, ĉ) are known."""
        g = self.residual(c, w[self.n:])
        lo, hi = self.gap(w)
        return Point(w, f, c, g, lo, hi, float(np.abs(g).sum()))

    def evaluate_point(self, w: np.ndarray) -> Point:
        f, c = self.evaluate(w[:self.n])
        return self.point(w, f, c)

    def barrier(self, f: float, lo: np.ndarray, hi: np.ndarray, mu: float) -> float:
        """φ_μ = f − μ Σ ln(gaps) + κ_d μ Σ (gaps of the one-sided bounds) (WB06 eq. 3 with §3.7's damping) at
        the point whose bound gaps are (lo, hi) (the caller has them: they are not formed again here)."""
        gl, gu = lo[self.iL], hi[self.iU]
        if np.count_nonzero(gl <= 0) or np.count_nonzero(gu <= 0):
            return np.inf
        return (f - mu * (np.log(gl).sum() + np.log(gu).sum())
                + mu * KAPPA_D * (lo[self.i_onlyL].sum() + hi[self.i_onlyU].sum()))

    def barrier_terms(self, lo: np.ndarray, hi: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(μ/gap_L, μ/gap_U, the μ-part of the dual residual): the barrier terms of WB06 eq. 11."""
        with np.errstate(divide="ignore", invalid="ignore"):
            bL = np.where(self.hasL, mu / lo, 0.0)
            bU = np.where(self.hasU, mu / hi, 0.0)
        return bL, bU, -bL + bU + mu * self.damp

    def primal_step_limit(self, lo: np.ndarray, hi: np.ndarray, dw: np.ndarray, tau: float) -> float:
        """The fraction-to-the-boundary α for w's step dw (WB06 eq. 15a)."""
        ndw = -dw   # an upper gap moves by −dw
        return min(masked_fraction_to_boundary(-tau * lo, dw, (dw < 0) & self.hasL),
                   masked_fraction_to_boundary(-tau * hi, ndw, (ndw < 0) & self.hasU))

    def dual_step_limit(self, zL: np.ndarray, zU: np.ndarray, dzL: np.ndarray, dzU: np.ndarray,
                        tau: float) -> float:
        """The fraction-to-the-boundary α for the bound multipliers' step (WB06 eq. 15b)."""
        return min(masked_fraction_to_boundary(-tau * zL, dzL, (dzL < 0) & self.hasL),
                   masked_fraction_to_boundary(-tau * zU, dzU, (dzU < 0) & self.hasU))

    def unscaled_duals(self, y: np.ndarray, zL: np.ndarray, zU: np.ndarray, mu: float) -> Duals:
        return Duals(y=y * self.y_unscale, z_lower=zL * self.b_unscale, z_upper=zU * self.b_unscale, mu=float(mu))
