"""Bound gaps, the bound push of a starting point and the fraction-to-the-boundary rule (Wächter & Biegler
2006, eq. 15 and §3.6): what keeps every iterate of the interior point strictly inside its bounds."""
from __future__ import annotations

from typing import Callable

import numpy as np


def gap_function(L: np.ndarray, U: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """w ↦ (w − L, U − w): the distances to the finite bounds, 1 where a bound is infinite (never used
    there). The masks and the bounds with 0 for ±∞ are computed here once, not at every call."""
    fl, fh = np.isfinite(L), np.isfinite(U)
    L0, U0 = np.where(fl, L, 0.0), np.where(fh, U, 0.0)

    def gap(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.where(fl, w - L0, 1.0), np.where(fh, U0 - w, 1.0)

    return gap


def fraction_to_boundary(v: np.ndarray, dv: np.ndarray, tau: float) -> float:
    """Largest α ∈ (0, 1] with v + α dv ≥ (1 − τ) v for v > 0 (WB06 eq. 15)."""
    return masked_fraction_to_boundary(-tau * v, dv, dv < 0)


def masked_fraction_to_boundary(ntv: np.ndarray, dv: np.ndarray, neg: np.ndarray) -> float:
    """:func:`fraction_to_boundary` from −τ v over the entries ``neg`` (where dv < 0): −τ v can be formed once
    for many dv, and a mask ANDed into ``neg`` restricts the rule to some entries (the bounded ones) without
    gathering v and dv first. The same quotients and the same minimum as the rule on the gathered entries."""
    k = neg.nonzero()[0]   # integer indices: the mask is scanned once, not once per gather
    if not len(k):
        return 1.0
    return min(1.0, float(np.minimum.reduce(ntv[k] / dv[k])))


def bound_push(v: np.ndarray, lo: np.ndarray, hi: np.ndarray, k1: float = 1e-2) -> np.ndarray:
    """v moved strictly inside [lo, hi] (IPOPT's bound_push = bound_frac = k1; WB06 §3.6)."""
    fl, fh = np.isfinite(lo), np.isfinite(hi)
    lo0, hi0 = np.where(fl, lo, 0.0), np.where(fh, hi, 0.0)
    width = np.where(fl & fh, hi0 - lo0, np.inf)
    plo = np.minimum(k1 * np.maximum(1.0, np.abs(lo0)), 0.5 * k1 * width)
    phi = np.minimum(k1 * np.maximum(1.0, np.abs(hi0)), 0.5 * k1 * width)
    v = np.where(fl, np.maximum(v, lo0 + plo), v)
    v = np.where(fh, np.minimum(v, hi0 - phi), v)
    return v
