"""A smooth ground for the drive: a bicubic spline through a terrain's heights on a regular grid.

A mesh terrain's slope jumps at every face edge and has no curvature, so the slope's torque in the
car's drive (``core/vehicles/car_slope.py``) is discontinuous along the path and the interior point's
nodes get caught on edges. The drive reads this spline instead: heights of the mesh sampled every
``spacing`` metres and interpolated by a C² bicubic spline (scipy's ``RectBivariateSpline``), whose
gradient and Hessian are exact. Between samples the spline and the mesh differ by the mesh's own
faceting (bounded in the tests); the ride (:mod:`.ride`) still stands the wheels on the mesh itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import RectBivariateSpline

from ..errors import ScenarioError
from .surface import SMOOTHING, Terrain, normal_from_gradient

SPACING = SMOOTHING    # m: fine beside a car's 2–3 m wheelbase, coarse beside a mesh's faceting
MAX_SAMPLES = 801      # per side: a 400 m ground at 0.5 m


@dataclass(frozen=True, eq=False)
class SplineTerrain:
    """The bicubic spline through ``terrain``'s heights over ``low``–``high`` (x, y), held at the edge
    beyond it (the query is clamped to the box, so the ground continues level there)."""

    spline: RectBivariateSpline
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, terrain: Terrain, low, high, spacing: float = SPACING) -> "SplineTerrain":
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        if not (spacing > 0 and math.isfinite(spacing)):
            raise ScenarioError("terrain smoothing", f"must be a positive number of metres, got {spacing!r}")
        if not (low.shape == high.shape == (2,) and np.all(np.isfinite(low)) and np.all(high >= low)):
            raise ScenarioError("terrain", f"bad extent {low!r} to {high!r}")
        axes = []
        for a, b in zip(low, high):
            n = min(MAX_SAMPLES, max(4, int(math.ceil((b - a) / spacing)) + 1))
            axes.append(np.linspace(a, b, n))   # inside the footprint's box: a plane stays a plane
        X, Y = np.meshgrid(*axes, indexing="ij")
        heights = np.asarray(terrain.height(X, Y), dtype=float)
        spline = RectBivariateSpline(axes[0], axes[1], heights, kx=3, ky=3, s=0)
        return cls(spline, np.array([axes[0][0], axes[1][0]]), np.array([axes[0][-1], axes[1][-1]]))

    def _ev(self, x, y, dx: int = 0, dy: int = 0) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        inside = (x >= self.low[0]) & (x <= self.high[0]) & (y >= self.low[1]) & (y <= self.high[1])
        xc, yc = np.clip(x, self.low[0], self.high[0]), np.clip(y, self.low[1], self.high[1])
        value = self.spline.ev(xc.ravel(), yc.ravel(), dx=dx, dy=dy).reshape(x.shape)
        return value if dx == dy == 0 else np.where(inside, value, 0.0)

    def height(self, x, y) -> np.ndarray:
        return self._ev(x, y)

    def gradient(self, x, y) -> np.ndarray:
        return np.stack([self._ev(x, y, 1, 0), self._ev(x, y, 0, 1)], axis=-1)

    def hessian(self, x, y) -> np.ndarray:
        hxx, hxy, hyy = self._ev(x, y, 2, 0), self._ev(x, y, 1, 1), self._ev(x, y, 0, 2)
        return np.stack([np.stack([hxx, hxy], -1), np.stack([hxy, hyy], -1)], -2)

    def normal(self, x, y) -> np.ndarray:
        return normal_from_gradient(self.gradient(x, y))


__all__ = ["SplineTerrain", "SPACING"]
