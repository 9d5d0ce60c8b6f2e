"""Ground beyond a mesh's edge: the height of the nearest point of the footprint's outline.

A point no triangle covers (outside the mesh, or in a hole) takes the height of the nearest point q of
the mesh's boundary edges (edges of one triangle only) in the (x, y) plane: h(p) = h(q(p)). The
surface so extended is continuous across the outline, flat across it and sloped along it; its exact
gradient is that of h(q(p)): where q is inside an edge a→b, ∂h/∂p = (z_b − z_a)(b − a)/|b − a|²
(the edge's slope along it); where q is an end vertex, 0.

The nearest edge is found exactly with a k-d tree of the edges' midpoints: edges longer than the
median are first cut into pieces no longer than it, so that every piece lies within R (the largest
half length) of its midpoint and a piece whose midpoint is farther than d + R cannot be nearer than
a piece at distance d. Each point asks for its k nearest midpoints; k doubles for the points not yet
proved (the k-th midpoint closer than the best distance + R) until all are.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

FIRST_K = 8


@dataclass(frozen=True)
class Outline:
    """Pieces of the boundary edges: each piece is the part ``low``…``high`` (P,) of the edge from
    ``a`` to ``b`` (P, 3, world metres) it was cut from; ``reach`` the largest half length of a piece."""

    a: np.ndarray
    b: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reach: float
    tree: cKDTree

    @classmethod
    def of(cls, vertices: np.ndarray, triangles: np.ndarray) -> "Outline":
        """The outline of the mesh ``triangles`` (T, 3) indexing ``vertices`` (V, 3)."""
        edges = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]), axis=1)
        key, counts = np.unique(edges[:, 0] * len(vertices) + edges[:, 1], return_counts=True)  # one number an edge
        if np.any(counts == 1):
            key = key[counts == 1]     # else a closed surface: its silhouette is made of folds, not edges
        boundary = np.stack([key // len(vertices), key % len(vertices)], axis=1)
        a, b = vertices[boundary[:, 0]], vertices[boundary[:, 1]]
        length = np.hypot(b[:, 0] - a[:, 0], b[:, 1] - a[:, 1])
        piece = float(np.median(length))
        parts = np.ones(len(a), dtype=np.int64)
        if piece > 0:
            parts = np.maximum(np.ceil(length / piece), 1).astype(np.int64)
        edge = np.repeat(np.arange(len(a)), parts)
        k = np.arange(len(edge)) - np.repeat(np.cumsum(parts) - parts, parts)
        low, high = k / parts[edge], (k + 1) / parts[edge]
        a, b = a[edge], b[edge]
        middle = a[:, :2] + (0.5 * (low + high))[:, None] * (b[:, :2] - a[:, :2])
        reach = 0.5 * float(np.max((high - low) * length[edge]))
        return cls(a=a, b=b, low=low, high=high, reach=reach, tree=cKDTree(middle))

    def nearest(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For flat arrays of points: (height h(q), gradient (N, 2), distance |p − q|) (module docstring)."""
        p = np.stack([x, y], axis=-1)
        n, count = len(p), len(self.a)
        best_d = np.full(n, np.inf)
        best_h = np.zeros(n)
        best_g = np.zeros((n, 2))
        todo = np.arange(n)
        k = min(FIRST_K, count)
        while todo.size:
            dist, index = self.tree.query(p[todo], k=k)
            dist, index = dist.reshape(len(todo), -1), index.reshape(len(todo), -1)
            d, h, g = self._to_pieces(p[todo], index)
            pick = np.argmin(d, axis=1)
            rows = np.arange(len(todo))
            best_d[todo], best_h[todo], best_g[todo] = d[rows, pick], h[rows, pick], g[rows, pick]
            if k == count:
                break
            proved = dist[:, -1] >= best_d[todo] + self.reach
            todo = todo[~proved]
            k = min(2 * k, count)
        return best_h, best_g, best_d

    def _to_pieces(self, p: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distance, height and gradient of the nearest point on each listed piece, (N, k) and (N, k, 2).
        The gradient is the edge's slope where the point's foot on the whole edge is inside it: a piece
        nearest to a point is the one holding that foot (or its end vertex)."""
        a, b = self.a[index], self.b[index]
        ab = b[..., :2] - a[..., :2]
        length2 = np.einsum("...i,...i->...", ab, ab)
        safe = np.where(length2 > 0, length2, 1.0)
        t = np.einsum("...i,...i->...", p[:, None, :] - a[..., :2], ab) / safe
        interior = (t > 0) & (t < 1) & (length2 > 0)
        t = np.clip(t, self.low[index], self.high[index])
        q = a[..., :2] + t[..., None] * ab
        rise = b[..., 2] - a[..., 2]
        gradient = np.where(interior[..., None], (rise / safe)[..., None] * ab, 0.0)
        return np.hypot(*(p[:, None, :] - q).transpose(2, 0, 1)), a[..., 2] + t * rise, gradient


__all__ = ["Outline"]
