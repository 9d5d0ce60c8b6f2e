"""The two private scipy routines the interior point calls, in one place.

Why: the KKT system is factored and multiplied thousands of times per solve, and the public routes add
fixed costs per call: ``splu`` checks formats and copies its input (about 0.5 ms a factorisation) and a CSC
matrix's ``@`` goes through the operator dispatch (about 7 µs a product). Both routines are scipy internals
(``scipy.sparse.linalg._dsolve._superlu.gstrf``, ``scipy.sparse._sparsetools.csc_matvec``); if a scipy
release moves them, ``PRIVATE_SUPERLU`` / ``PRIVATE_MATVEC`` are False and the public ``splu`` and ``@`` do
the same work with the same results, only slower.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

try:
    from scipy.sparse.linalg._dsolve._superlu import gstrf as _gstrf
except ImportError:  # pragma: no cover - scipy moved it: the public splu below
    _gstrf = None
try:
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
except ImportError:  # pragma: no cover - scipy moved it: the public operator below
    _csc_matvec = None

PRIVATE_SUPERLU = _gstrf is not None
PRIVATE_MATVEC = _csc_matvec is not None


def _raw_csc(arrays, shape):
    """gstrf's L and U as raw CSC arrays (no sparse-matrix construction)."""
    return arrays


def superlu(size: int, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, options: dict):
    """SuperLU of the CSC matrix (data, indices, indptr) with SuperLU ``options`` (ColPerm "NATURAL": the
    columns in the given order) → (the factor, with ``solve`` and ``perm_r``; U's CSC arrays (data, indices,
    indptr), whose buffers can be longer than U's nonzeros). Raises RuntimeError when SuperLU fails."""
    if _gstrf is None:  # pragma: no cover
        lu = splu(sp.csc_matrix((data, indices, indptr), shape=(size, size)), permc_spec=options["ColPerm"],
                  diag_pivot_thresh=options["DiagPivotThresh"], panel_size=options["PanelSize"],
                  relax=options["Relax"], options=dict(SymmetricMode=options["SymmetricMode"]))
        U = lu.U
        return lu, (U.data, U.indices, U.indptr)
    lu = _gstrf(size, len(indices), data, indices, indptr, csc_construct_func=_raw_csc, ilu=False,
                options=options)
    return lu, lu.U


def csc_matvec(A: sp.csc_matrix, x: np.ndarray) -> np.ndarray:
    """A @ x for a square CSC matrix A, by the routine behind the operator."""
    if _csc_matvec is None:  # pragma: no cover
        return A @ x
    n = A.shape[0]
    y = np.zeros(n)
    _csc_matvec(n, n, A.indptr, A.indices, A.data, x, y)
    return y
