"""A primal-dual interior-point method on scipy.sparse: the ``scipy`` backend's default solver.

Only numpy and scipy run inside Blender; scipy's own ``minimize(method="trust-constr")`` stays available as
``[solver] method = "trust-constr"``.
The algorithm is IPOPT's (Wächter & Biegler 2006, "WB06"; the adaptive barrier update of Nocedal, Wächter &
Waltz 2009, "NWW09"), in named parts:

* ``scaled``: the scaled program with slacks and its barrier function (WB06 eq. 3);
* ``kkt`` (``layout``, ``scipy_private``): the Newton matrix (WB06 eq. 11), its inertia and correction (§3.1);
* ``barrier``: μ by the quality-function oracle (NWW09 §4.3) or the monotone rule (WB06 eq. 7);
* ``line_search``: the filter line search with second-order corrections (WB06 §2.3–2.4);
* ``restoration``: the feasibility restoration phase, which also detects local infeasibility;
* ``loop``: :class:`InteriorPoint`, the iteration; termination by the scaled KKT error (WB06 eq. 5,
  ``optimality``) and the unscaled constraint violation, or a limit, infeasibility or a failed restoration.
"""
from __future__ import annotations

from .bounds import fraction_to_boundary, gap_function, masked_fraction_to_boundary
from .kkt import Jacobian, KKTSystem
from .line_search import Filter
from .layout import KKT_LAYOUTS
from .loop import InteriorPoint, IPMResult, interior_point
from .restoration import MU_R_MIN, Restoration, restoration
from .scaled import Duals, ScaledProgram

__all__ = ["interior_point", "InteriorPoint", "IPMResult", "Duals", "KKTSystem", "KKT_LAYOUTS", "Jacobian",
           "ScaledProgram", "fraction_to_boundary", "masked_fraction_to_boundary", "gap_function",
           "restoration", "Restoration", "Filter", "MU_R_MIN"]
