"""A uniform 2-D grid of triangle bounding boxes: which triangles a vertical line at (x, y) may hit.

Each cell lists the triangles whose (x, y) bounding box overlaps it, stored flat (``cell_start``,
``cell_triangles``, as a compressed sparse row). A query point looks at the one cell it falls in, so
its candidates are every triangle that can contain it. The cell size starts at half the median
bounding-box extent (a few triangles per cell on an even mesh) and grows by 1.5× until the grid holds
at most ``MAX_ENTRIES_PER_TRIANGLE`` entries per triangle and ``MAX_CELLS_PER_TRIANGLE`` cells per
triangle (large triangles next to fine detail would otherwise fill it): memory and build stay O(T)
apart from one sort of the entries. A uniform grid suits meshes of even detail; a patch of far finer
triangles than the rest shares few cells and its queries test more candidates (still exact).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_ENTRIES_PER_TRIANGLE = 16
MAX_CELLS_PER_TRIANGLE = 4
MIN_BUDGET = 4096        # entries and cells a tiny mesh may always use
GROWTH = 1.5


@dataclass(frozen=True)
class TriangleGrid:
    """Cells of size ``cell`` from ``origin`` (2,), ``shape`` (nx, ny); cell c = ix·ny + iy lists the
    triangles ``cell_triangles[cell_start[c]:cell_start[c + 1]]``."""

    origin: np.ndarray
    cell: float
    shape: tuple[int, int]
    cell_start: np.ndarray
    cell_triangles: np.ndarray

    @classmethod
    def build(cls, low: np.ndarray, high: np.ndarray) -> "TriangleGrid":
        """The grid of triangles with (x, y) bounding boxes ``low``, ``high`` (T, 2)."""
        origin = low.min(axis=0)
        span = np.maximum(high.max(axis=0) - origin, 0.0)
        extent = np.max(high - low, axis=1)
        positive = extent[extent > 0]
        cell = 0.5 * float(np.median(positive)) if positive.size else float(np.max(span))
        cell = max(cell, 1e-9 * max(1.0, float(np.max(np.abs(origin))), float(np.max(span))))
        T = len(low)
        while True:
            lo = np.floor((low - origin) / cell).astype(np.int64)
            hi = np.floor((high - origin) / cell).astype(np.int64)
            shape = (int(np.floor(span[0] / cell)) + 1, int(np.floor(span[1] / cell)) + 1)
            counts = (hi[:, 0] - lo[:, 0] + 1) * (hi[:, 1] - lo[:, 1] + 1)
            cells = shape[0] * shape[1]
            if (int(counts.sum()) <= max(MAX_ENTRIES_PER_TRIANGLE * T, MIN_BUDGET)
                    and cells <= max(MAX_CELLS_PER_TRIANGLE * T, MIN_BUDGET)):
                break
            cell *= GROWTH
        lo = np.minimum(lo, np.array(shape) - 1)
        hi = np.minimum(hi, np.array(shape) - 1)
        width = hi[:, 1] - lo[:, 1] + 1
        counts = (hi[:, 0] - lo[:, 0] + 1) * width
        triangle = np.repeat(np.arange(T), counts)
        k = _ranks(counts)                                   # the entry's number within its triangle
        ix = lo[triangle, 0] + k // width[triangle]
        iy = lo[triangle, 1] + k % width[triangle]
        cell_of = ix * shape[1] + iy
        order = np.argsort(cell_of, kind="stable")
        start = np.zeros(cells + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell_of, minlength=cells), out=start[1:])
        return cls(origin=origin, cell=float(cell), shape=shape, cell_start=start,
                   cell_triangles=triangle[order])

    def cells_of(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The cell of each point (flat arrays), −1 outside the grid."""
        ix = np.floor((x - self.origin[0]) / self.cell)
        iy = np.floor((y - self.origin[1]) / self.cell)
        inside = (ix >= 0) & (ix < self.shape[0]) & (iy >= 0) & (iy < self.shape[1])
        out = np.full(x.shape, -1, dtype=np.int64)
        out[inside] = ix[inside].astype(np.int64) * self.shape[1] + iy[inside].astype(np.int64)
        return out

    def candidate_counts(self, cells: np.ndarray) -> np.ndarray:
        """How many triangles each point's cell lists (0 outside)."""
        counts = np.zeros(cells.shape, dtype=np.int64)
        inside = cells >= 0
        c = cells[inside]
        counts[inside] = self.cell_start[c + 1] - self.cell_start[c]
        return counts

    def pairs(self, cells: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (point, candidate triangle) pair, grouped by point in order: (point index, triangle)."""
        point = np.repeat(np.arange(len(cells)), counts)
        first = np.repeat(self.cell_start[np.maximum(cells, 0)], counts)
        return point, self.cell_triangles[first + _ranks(counts)]


def _ranks(counts: np.ndarray) -> np.ndarray:
    """0, 1, …, counts[i] − 1 for each i in turn, concatenated."""
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    return np.arange(total, dtype=np.int64) - np.repeat(starts, counts)


__all__ = ["TriangleGrid"]
