"""Ground surfaces z = h(x, y) in world metres: the query every terrain answers.

A terrain is anything with ``height(x, y)``, ``gradient(x, y)``, ``hessian(x, y)`` and ``normal(x, y)``
that broadcast over arrays of points (the :class:`Terrain` protocol). The unit upward normal of a graph
z = h(x, y) is n = (−h_x, −h_y, 1)/√(1 + h_x² + h_y²). The Hessian [[h_xx, h_xy], [h_xy, h_yy]] is what
the exact Jacobian of the car's slope force needs (``core.vehicles.car``, docs/equations.md, "Car with
simple dynamics"). :class:`PlaneTerrain` and :class:`FunctionTerrain` are the
analytic terrains (tests, samples, scenario files); the mesh terrain read from a scene is in
:mod:`.mesh`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from ..errors import ScenarioError

SMOOTHING = 0.5   # m: the sample spacing of the spline a car's drive reads a mesh through (.smooth)

Field = Callable[[np.ndarray, np.ndarray], np.ndarray]


@runtime_checkable
class Terrain(Protocol):
    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Ground height (m) at world (x, y); the broadcast shape of x and y."""

    def gradient(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(∂h/∂x, ∂h/∂y) at (x, y); shape (..., 2)."""

    def hessian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """[[h_xx, h_xy], [h_xy, h_yy]] at (x, y); shape (..., 2, 2), symmetric."""

    def normal(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Unit upward normal at (x, y); shape (..., 3), n_z > 0."""


def normal_from_gradient(gradient: np.ndarray) -> np.ndarray:
    """n = (−h_x, −h_y, 1)/√(1 + h_x² + h_y²) for gradients (..., 2)."""
    g = np.asarray(gradient, dtype=float)
    n = np.concatenate([-g, np.ones(g.shape[:-1] + (1,))], axis=-1)
    return n / np.linalg.norm(n, axis=-1, keepdims=True)


@dataclass(frozen=True)
class PlaneTerrain:
    """h(x, y) = level + slope_x x + slope_y y (a flat floor for the default slope)."""

    level: float = 0.0
    slope: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        values = (self.level, *self.slope)
        if len(self.slope) != 2 or not all(np.isfinite(v) for v in values):
            raise ScenarioError("terrain", f"a plane needs a finite level and two finite slopes, got {self.level!r}, {self.slope!r}")

    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        return self.level + self.slope[0] * x + self.slope[1] * y

    def gradient(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return np.broadcast_to(np.asarray(self.slope, float), shape + (2,)).copy()

    def hessian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)) + (2, 2))

    def normal(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return normal_from_gradient(self.gradient(x, y))


# the central difference's step relative to max(1, |x|): ∛(machine ε) balances its O(step²) truncation
# against the O(ε/step) rounding of the gradient's values
_HESSIAN_STEP = float(np.finfo(float).eps) ** (1.0 / 3.0)


@dataclass(frozen=True)
class FunctionTerrain:
    """A terrain from a height function h(x, y), its gradient (x, y) → (..., 2) and, optionally, its
    Hessian (x, y) → (..., 2, 2); without ``hessian_fn`` the Hessian is the central difference of
    ``gradient_fn`` (relative error about 1e-10 for a smooth terrain), symmetrised."""

    height_fn: Field
    gradient_fn: Field
    hessian_fn: Field | None = None

    def height(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        return _finite(np.asarray(self.height_fn(x, y), dtype=float), x.shape, "height")

    def gradient(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        return _finite(np.asarray(self.gradient_fn(x, y), dtype=float), x.shape + (2,), "gradient")

    def hessian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        if self.hessian_fn is not None:
            return _finite(np.asarray(self.hessian_fn(x, y), dtype=float), x.shape + (2, 2), "hessian")
        sx, sy = _HESSIAN_STEP * np.maximum(1.0, np.abs(x)), _HESSIAN_STEP * np.maximum(1.0, np.abs(y))
        xp, xm, yp, ym = x + sx, x - sx, y + sy, y - sy
        hx = (self.gradient(xp, y) - self.gradient(xm, y)) / (xp - xm)[..., None]   # (h_xx, h_xy)
        hy = (self.gradient(x, yp) - self.gradient(x, ym)) / (yp - ym)[..., None]   # (h_xy, h_yy)
        cross = 0.5 * (hx[..., 1] + hy[..., 0])
        return np.stack([np.stack([hx[..., 0], cross], -1), np.stack([cross, hy[..., 1]], -1)], -2)

    def normal(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return normal_from_gradient(self.gradient(x, y))


def _finite(value: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    try:
        value = np.broadcast_to(value, shape)
    except ValueError:
        raise ScenarioError("terrain", f"the {what} function must return shape {shape}, got {value.shape}") from None
    if not np.all(np.isfinite(value)):
        raise ScenarioError("terrain", f"the {what} function returned NaN or infinite values")
    return value


__all__ = ["Terrain", "PlaneTerrain", "FunctionTerrain", "normal_from_gradient"]
