"""The interior point's Newton matrix (Wächter & Biegler 2006, eq. 11 with the slacks eliminated), factored
with SuperLU in symmetric mode so that the signs of its pivots give its inertia, and the inertia correction
of WB06 §3.1 (Algorithm IC) that makes the step a descent direction on nonconvex programs."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .layout import KKT_LAYOUTS, KKTLayout, pattern_key
from .scipy_private import csc_matvec, superlu

DELTA_REG = 1e-9          # constant quasi-definite regularisation, removed by iterative refinement
REFINE_K, REFINE_FULL = 1e-14, 1e-12   # iterative refinement stops at these relative residuals (K; the full system)
# SuperLU for K: diagonal pivots only, K's columns in the layout's order, panel size 1 and no relaxed supernodes:
# K's columns are short and its fill small, and SuperLU's defaults (panels of 8 columns, relaxed supernodes of up
# to 10) factor it 1.35-1.6x slower with the same or more fill (car tunnel N = 50/200, canyon, landing, snakeboard,
# boat)
SUPERLU_OPTIONS = dict(DiagPivotThresh=0.0, ColPerm="NATURAL", SymmetricMode=True, PanelSize=1, Relax=1)
MAX_INERTIA_TRIALS = 60


def coo_dot(vals: np.ndarray, out_idx: np.ndarray, in_idx: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    """y_i = Σ_e vals_e x_{in_e} over the entries e with out_e = i: a product with a matrix on a fixed COO
    pattern (A x with (out, in) = (rows, cols), Aᵀ x with them swapped), without building the matrix."""
    return np.bincount(out_idx, weights=vals * x[in_idx], minlength=size)


def amax(*arrays: np.ndarray) -> float:
    """The largest |entry| over all the arrays (0 when they are empty)."""
    return max([float(np.abs(a).max(initial=0.0)) for a in arrays], default=0.0)


class Jacobian:
    """A Jacobian on a fixed COO pattern: its values and the product Jᵀy the method needs."""

    __slots__ = ("v", "rows", "cols", "n")

    def __init__(self, v: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: int):
        self.v, self.rows, self.cols, self.n = v, rows, cols, n

    def T(self, y: np.ndarray) -> np.ndarray:
        return coo_dot(self.v, self.cols, self.rows, y, self.n)


class KKTSystem:
    """The Newton matrix of the barrier problem with the slacks eliminated, factored with inertia.

    Unknowns (dx, ds, dy) of
        (W + diag(Dx)) dx + Jᵀ dy = −r_x
        diag(Ds) ds − dy_I        = −r_s
        J dx − P_Iᵀ ds − diag(dc) dy = −r_c.
    The slack equations give ds = (dy_I − r_s)/Ds, which leaves
        K = [[W + Dx, Jᵀ], [J, −diag(dc + P_Iᵀ Ds⁻¹ P_I)]],
    n + m square. :meth:`factor` returns its number of negative pivots, which are its negative
    eigenvalues (the factor is LDLᵀ-like, diagonal pivots only), or −1 when SuperLU had to pivot off the
    diagonal or failed. A tiny constant ±δ_r on the diagonal (+ for the variables, − for the constraints:
    a quasi-definite matrix, Vanderbei 1995) makes every diagonal pivot exist; iterative refinement on the
    unregularised K removes its effect. :meth:`solve` refines the step on the full system in (dx, ds, dy),
    so that the recovered ds is checked too.

    K's pattern never changes, so it is laid out once (:class:`KKTLayout`), already in the fill-reducing
    order: a factorisation only scatters the value arrays of W (lower triangle, ``hess_rows ≥ hess_cols``),
    J and the diagonals into it (one ``bincount``) instead of assembling, permuting and converting a sparse
    matrix per call. The layout is kept per pattern (``KKT_LAYOUTS``), so a problem of the same shape
    solved again reuses it.
    """

    def __init__(self, n: int, m: int, I: np.ndarray, hess_rows: np.ndarray, hess_cols: np.ndarray,
                 jac_rows: np.ndarray, jac_cols: np.ndarray):
        self.n, self.m, self.I = n, m, np.asarray(I, dtype=np.int64)
        self.size = size = n + m
        self.lu = None
        self.factorizations = 0
        self._hr, self._hc = hr, hc = np.asarray(hess_rows, np.int64), np.asarray(hess_cols, np.int64)
        self._jr, self._jc = jr, jc = np.asarray(jac_rows, np.int64), np.asarray(jac_cols, np.int64)
        off = hr != hc
        self._h_off = np.flatnonzero(off)
        self._hr_off, self._hc_off = hr[off], hc[off]   # W's strict lower triangle, for Wᵀ's half of W dx
        self._h_zero = np.zeros(len(hr))
        key = pattern_key(n, m, hr, hc, jr, jc)
        layout = KKT_LAYOUTS.get(key)
        if layout is None:
            diag = np.arange(size, dtype=np.int64)
            # every entry of K, in the order the value array of factor() is built (the diagonal last)
            rows = np.concatenate([hr, hc[off], n + jr, jc, diag])
            cols = np.concatenate([hc, hr[off], jc, n + jr, diag])
            layout = KKTLayout.of(size, rows, cols)
            KKT_LAYOUTS.put(key, layout)
        self.layout = layout
        self.perm, self.iperm, self.fill = layout.perm, layout.iperm, layout.fill
        self._slot, self._indices, self._indptr = layout.slot, layout.indices, layout.indptr
        self._nnz = len(layout.indices)
        diag_slot = self._slot[len(self._slot) - size:]   # the slot of K's diagonal entry for unknown i
        self._diag_slot_x, self._diag_slot_c = diag_slot[:n], diag_slot[n:]
        # K in the fill-reducing order; each factorisation only overwrites its values
        self.Kp = sp.csc_matrix((np.zeros(self._nnz), self._indices, self._indptr), shape=(size, size))
        self._identity = np.arange(size)

    def factor(self, hv: np.ndarray | None, jv: np.ndarray, Dx: np.ndarray, Ds: np.ndarray,
               dc: np.ndarray) -> int:
        """Factor K for W's lower-triangle values ``hv`` (None: W = 0) and J's values ``jv``; its number
        of negative eigenvalues (−1: no factor with diagonal pivots)."""
        self.Ds, self.jv, self.Dx, self.dc = Ds, jv, Dx, dc
        self._hv = self._h_zero if hv is None else hv
        self._hv_off = self._hv[self._h_off]
        dcc = dc.copy()
        dcc[self.I] += 1.0 / Ds
        vals = np.concatenate([self._hv, self._hv_off, jv, jv, Dx, -dcc])
        data = np.bincount(self._slot, weights=vals, minlength=self._nnz)
        self.Kp.data = data
        # the constant quasi-definite shift, kept below 1% of a positive (2,2) entry (1/Ds can be ~1e-12
        # when a slack sits at its bound); larger, it would swamp the entry and refinement could not undo it
        data_r = data.copy()
        data_r[self._diag_slot_x] += DELTA_REG
        data_r[self._diag_slot_c] -= np.where(dcc > 0, np.minimum(DELTA_REG, 1e-2 * dcc), DELTA_REG)
        self.factorizations += 1
        self.lu = None
        if not np.isfinite(data_r).all():
            return -1  # SuperLU may crash on inf/NaN (seen: a segfault in gstrf); the caller reports a failure
        try:
            lu, d = self.lu_and_pivots(data_r)
        except RuntimeError:
            return -1
        if not (lu.perm_r == self._identity).all():
            return -1  # an off-diagonal pivot: the pivot signs no longer give the inertia
        if not np.isfinite(d).all() or np.count_nonzero(d == 0):
            return -1
        self.lu = lu
        return int(np.count_nonzero(d < 0))

    def lu_and_pivots(self, data: np.ndarray):
        """SuperLU of K (values ``data`` on the fixed layout) in the layout's order with diagonal pivots,
        and the pivots (U's diagonal)."""
        lu, (u_data, u_ind, u_ptr) = superlu(self.size, data, self._indices, self._indptr, SUPERLU_OPTIONS)
        nnz = int(u_ptr[-1])
        u_data, u_ind = u_data[:nnz], u_ind[:nnz]
        # SuperLU's U lists each column's diagonal entry last (scipy's LU_to_csc: the rows above the
        # supernode, then its own rows up to the diagonal), leaving out an exact 0: read the pivots there,
        # checking the rows; else (a zero pivot, or an empty first column) find them entry by entry
        last = u_ptr[1:] - 1
        if nnz and u_ptr[1] > 0 and (u_ind[last] == self._identity).all():
            return lu, u_data[last]
        col = np.repeat(self._identity, np.diff(u_ptr))
        on = u_ind == col
        d = np.zeros(self.size)
        d[col[on]] = u_data[on]
        return lu, d

    @property
    def K(self) -> sp.csc_matrix:
        """K in the original order (for tests and diagnostics)."""
        return self.Kp[self.perm][:, self.perm].tocsc()

    def solve_full(self, b: np.ndarray, refine: int = 8) -> tuple[np.ndarray, float]:
        """K x = b with iterative refinement on the unregularised K; (x, relative residual)."""
        bp = b[self.iperm]
        xp = self.lu.solve(bp)
        nb = max(amax(bp), 1e-300)
        res = bp - csc_matvec(self.Kp, xp)
        rn = amax(res) / nb
        for _ in range(refine):
            if rn <= REFINE_K or not np.isfinite(rn):
                break
            x2 = xp + self.lu.solve(res)
            res2 = bp - csc_matvec(self.Kp, x2)
            rn2 = amax(res2) / nb
            if not rn2 < 0.9 * rn:
                if rn2 < rn:
                    xp, res, rn = x2, res2, rn2
                break
            xp, res, rn = x2, res2, rn2
        return xp[self.perm], rn

    def solve(self, r_x: np.ndarray, r_s: np.ndarray, r_c: np.ndarray, refine: int = 5):
        """(dx, ds, dy, relative residual) of the system in the class docstring, refined on the full
        system (IPOPT also refines on the full system)."""
        dx, ds, dy, rn = self._solve_reduced(r_x, r_s, r_c)
        scale = max(amax(r_x, r_s, r_c), 1e-300)
        e = self._full_residual(dx, ds, dy, r_x, r_s, r_c)
        err = amax(*e) / scale
        for _ in range(refine):
            if err <= REFINE_FULL or not np.isfinite(err):
                break
            cx, cs, cy, _ = self._solve_reduced(*e)
            dx2, ds2, dy2 = dx - cx, ds - cs, dy - cy
            e2 = self._full_residual(dx2, ds2, dy2, r_x, r_s, r_c)
            err2 = amax(*e2) / scale
            if not err2 < err:
                break
            dx, ds, dy, err, e = dx2, ds2, dy2, err2, e2
        return dx, ds, dy, max(rn, err)

    def newton(self, r_w: np.ndarray, r_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dw, dy) with dw = (dx, ds) for the residuals r_w = (r_x, r_s) and r_c."""
        dx, ds, dy, _ = self.solve(r_w[:self.n], r_w[self.n:], r_c)
        return np.concatenate([dx, ds]), dy

    def _full_residual(self, dx, ds, dy, r_x, r_s, r_c):
        """(A d + r) of the three block equations of the class docstring (zero for an exact step)."""
        n, hv, jv = self.n, self._hv, self.jv
        hr, hc, jr, jc = self._hr, self._hc, self._jr, self._jc
        Wdx = coo_dot(hv, hr, hc, dx, n) + coo_dot(self._hv_off, self._hc_off, self._hr_off, dx, n)
        e_x = Wdx + self.Dx * dx + coo_dot(jv, jc, jr, dy, n) + r_x
        e_s = self.Ds * ds - dy[self.I] + r_s
        e_c = coo_dot(jv, jr, jc, dx, self.m) - self.dc * dy + r_c
        e_c[self.I] -= ds
        return e_x, e_s, e_c

    def _solve_reduced(self, r_x: np.ndarray, r_s: np.ndarray, r_c: np.ndarray):
        n, I = self.n, self.I
        rc = -r_c
        rc[I] -= r_s / self.Ds
        sol, rn = self.solve_full(np.concatenate([-r_x, rc]))
        dx, dy = sol[:n], sol[n:]
        ds = (dy[I] - r_s) / self.Ds
        return dx, ds, dy, rn


def correct_inertia(kkt: KKTSystem, hv: np.ndarray, jv: np.ndarray, Sig: np.ndarray, mu: float,
                    delta_w_last: float) -> float | None:
    """Factor K with W + Σ + δ_w I in its (1,1) block and −δ_c I added to its (2,2) block, raising δ_w and δ_c
    as WB06 §3.1's Algorithm IC does until K's inertia is (n, m, 0) (δ_c also when K has too few
    negative pivots: a rank-deficient J); the δ_w it took, None when no δ_w ≤ 1e40 gives that inertia.
    After an iteration that needed δ_w (``delta_w_last`` > 0) the first trial is δ_w_last/3, not 0:
    IPOPT's choice once it has found the Hessian degenerate, where the δ_w = 0 trial would most likely
    fail and cost a factorisation."""
    n, m = kkt.n, kkt.m
    delta_w = max(1e-20, delta_w_last / 3.0) if delta_w_last > 0.0 else 0.0
    delta_c = np.zeros(m)
    for _ in range(MAX_INERTIA_TRIALS):
        neg = kkt.factor(hv, jv, Sig[:n] + delta_w, Sig[n:] + delta_w, delta_c)
        if neg == m:
            return delta_w
        if neg < m and not np.any(delta_c):
            delta_c = np.full(m, 1e-8 * mu**0.25)
            continue
        if delta_w == 0.0:
            delta_w = 1e-4   # δ_w = 0 is tried only when delta_w_last is 0
        else:
            delta_w *= 100.0 if delta_w_last == 0.0 else 8.0
        if delta_w > 1e40:
            return None
    return None
