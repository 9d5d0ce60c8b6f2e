"""Heights of a triangle mesh on a regular x-y grid: how the add-on turns the scene's water (an Ocean modifier's
evaluated mesh, any animated mesh) into one frame of a :class:`core.vehicles.water.SampledSurface`.

At each grid point the height is that of the highest triangle over it — the surface a ray cast straight down
from above meets first (a choppy Ocean's folded crest counts, not the trough under it) — interpolated on the
triangle barycentrically, so the result is exactly the piecewise-linear mesh at the grid points. Points with
no triangle over them are NaN (the caller fills and reports them). Vectorised: each triangle's candidate grid
points are those of its x-y bounding box, all candidates of all triangles tested at once.
"""
from __future__ import annotations

import numpy as np

_INSIDE = -1e-9   # barycentric slack: a point on a shared edge belongs to both triangles (no cracks)


def mesh_heights(vertices: np.ndarray, triangles: np.ndarray, origin: tuple[float, float],
                 spacing: tuple[float, float], shape: tuple[int, int]) -> np.ndarray:
    """Heights (ny, nx) of the mesh (world vertices (n, 3), triangles (m, 3)) at the grid points
    (x, y) = ``origin`` + (k dx, j dy), ``spacing`` = (dx, dy), ``shape`` = (ny, nx); NaN where no triangle lies
    over a point. Triangles that are edge-on seen from above (vertical walls) are skipped."""
    v = np.asarray(vertices, dtype=float)
    tri = v[np.asarray(triangles, dtype=np.int64)]                       # (m, 3, 3)
    ny, nx = shape
    out = np.full(ny * nx, -np.inf)
    a, e1, e2 = tri[:, 0, :2], tri[:, 1, :2] - tri[:, 0, :2], tri[:, 2, :2] - tri[:, 0, :2]
    det = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    size = np.maximum(np.abs(e1).max(axis=1), np.abs(e2).max(axis=1))
    keep = np.abs(det) > 1e-12 * np.maximum(size * size, 1e-300)
    tri, a, e1, e2, det = tri[keep], a[keep], e1[keep], e2[keep], det[keep]
    lo_xy, hi_xy = tri[:, :, :2].min(axis=1), tri[:, :, :2].max(axis=1)
    o, d = np.asarray(origin, dtype=float), np.asarray(spacing, dtype=float)
    lo = np.maximum(np.ceil((lo_xy - o) / d - 1e-9), 0).astype(np.int64)
    hi = np.minimum(np.floor((hi_xy - o) / d + 1e-9), [nx - 1, ny - 1]).astype(np.int64)
    wx, wy = np.maximum(hi[:, 0] - lo[:, 0] + 1, 0), np.maximum(hi[:, 1] - lo[:, 1] + 1, 0)
    count = wx * wy
    if count.sum() == 0:
        return np.full((ny, nx), np.nan)
    t = np.repeat(np.arange(len(tri)), count)                          # the triangle of each candidate
    r = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)   # its rank within the triangle
    k, j = lo[t, 0] + r % wx[t], lo[t, 1] + r // wx[t]
    px, py = o[0] + k * d[0] - a[t, 0], o[1] + j * d[1] - a[t, 1]
    u = (px * e2[t, 1] - py * e2[t, 0]) / det[t]                      # P − A = u e1 + w e2
    w = (py * e1[t, 0] - px * e1[t, 1]) / det[t]
    inside = (u >= _INSIDE) & (w >= _INSIDE) & (u + w <= 1 - _INSIDE)
    z = tri[t, 0, 2] + u * (tri[t, 1, 2] - tri[t, 0, 2]) + w * (tri[t, 2, 2] - tri[t, 0, 2])
    np.maximum.at(out, (j * nx + k)[inside], z[inside])
    out[np.isneginf(out)] = np.nan
    return out.reshape(ny, nx)


__all__ = ["mesh_heights"]
