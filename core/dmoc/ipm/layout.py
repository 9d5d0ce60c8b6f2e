"""The KKT matrix's fill-reducing order and permuted CSC layout, computed once per sparsity pattern and kept
for the last few patterns: a re-solve of a problem of the same shape (a moved key, a warm start, the outer
solves of an SE(3) model) skips the symbolic analysis."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu


@dataclass(frozen=True)
class KKTLayout:
    """K's fill-reducing order and its permuted CSC layout: they depend on K's pattern only."""
    perm: np.ndarray      # perm[i] = position of unknown i
    iperm: np.ndarray     # iperm[k] = the unknown at position k
    fill: int             # nonzeros of L + U in that order
    slot: np.ndarray      # entry e of K's value array lands in CSC slot slot[e] (duplicates summed)
    indices: np.ndarray
    indptr: np.ndarray

    @classmethod
    def of(cls, size: int, rows: np.ndarray, cols: np.ndarray) -> "KKTLayout":
        """The layout of a size × size matrix with entries at (rows, cols), duplicates allowed."""
        # the ordering of a diagonally dominant matrix with K's pattern
        od = rows != cols
        S = sp.csc_matrix((np.ones(int(od.sum())), (rows[od], cols[od])), shape=(size, size))
        S = (S + sp.diags(np.asarray(abs(S).sum(axis=1)).ravel() + 1.0)).tocsc()
        lu = splu(S, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
        perm = np.asarray(lu.perm_c, dtype=np.int64)
        iperm = np.empty(size, dtype=np.int64)
        iperm[perm] = np.arange(size)
        key = perm[cols] * size + perm[rows]
        uniq, slot = np.unique(key, return_inverse=True)
        indices = (uniq % size).astype(np.intc)
        indptr = np.searchsorted(uniq // size, np.arange(size + 1)).astype(np.intc)
        for a in (perm, iperm, slot, indices, indptr):
            a.flags.writeable = False   # shared by every KKTSystem of this pattern
        return cls(perm, iperm, int(lu.L.nnz + lu.U.nnz), slot, indices, indptr)


def pattern_key(n: int, m: int, *patterns: np.ndarray) -> bytes:
    """A digest of K's pattern: the sizes and the COO index arrays of W and J."""
    h = hashlib.blake2b(np.array([n, m] + [len(p) for p in patterns], dtype=np.int64).tobytes(), digest_size=20)
    for p in patterns:
        h.update(np.ascontiguousarray(p, dtype=np.int64).tobytes())
    return h.digest()


class LayoutCache:
    """The layouts of the last ``capacity`` patterns, by :func:`pattern_key`; a new pattern drops the oldest."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._layouts: dict[bytes, KKTLayout] = {}

    def get(self, key: bytes) -> KKTLayout | None:
        return self._layouts.get(key)

    def put(self, key: bytes, layout: KKTLayout) -> None:
        self._layouts[key] = layout
        while len(self._layouts) > self.capacity:
            del self._layouts[next(iter(self._layouts))]   # the oldest

    def clear(self) -> None:
        self._layouts.clear()

    def __len__(self) -> int:
        return len(self._layouts)

    def __contains__(self, key: bytes) -> bool:
        return key in self._layouts


KKT_LAYOUTS = LayoutCache(capacity=8)
