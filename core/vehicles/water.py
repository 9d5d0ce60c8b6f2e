"""Water and air around the boat (paper §4.3.2): the current field η(x), wind drag, surfaces.

* η(x): the water velocity in the world frame at world points x (…, 3) → (…, 3); it enters
  the hydrodynamic patch force f_h,i = −E(ṙ_i − Rᵀ η(x + R r_i)) − P n_i (equations.md, Boat).
  :func:`current_field` turns a constant vector or a callable into a checked, vectorised field.
* Wind: a quadratic drag on the emerged part of the hull,
  F_w = ½ ρ_air C_d A_p |v_rel| v_rel (world frame), v_rel = w − ẋ the air velocity relative to
  the boat, A_p the area of the emerged hull projected on the plane normal to v_rel. The seed
  only says "wind forces"; this is the standard bluff-body drag law.
* Water surfaces h(x, y) for :func:`core.vehicles.hull.clip`: the calm plane (``None``), a
  constant level or a tilted plane, and a travelling-free sinusoidal swell.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

from ..errors import ScenarioError

RHO_WATER = 1000.0  # kg/m³: 1 litre of displaced water = 1 kg
RHO_AIR = 1.225     # kg/m³ at sea level, 15 °C

VelocityField = Callable[[np.ndarray], np.ndarray]
CurrentSpec = Union[None, np.ndarray, VelocityField]


def current_field(spec: CurrentSpec, where: str = "current") -> VelocityField:
    """η as a vectorised callable: None → still water, a 3-vector → uniform, a callable → checked.

    The callable must map world points (…, 3) to velocities (…, 3); its output is checked for
    shape and finiteness at every call (ScenarioError naming ``where``).
    """
    if spec is None:
        return lambda x: np.zeros(np.shape(x))
    if callable(spec):
        fn = spec

        def checked(x: np.ndarray) -> np.ndarray:
            out = np.asarray(fn(x), dtype=float)
            try:
                out = np.broadcast_to(out, np.shape(x))
            except ValueError:
                raise ScenarioError(where, f"must return one velocity (3,) per point, got shape {out.shape}") from None
            if not np.all(np.isfinite(out)):
                raise ScenarioError(where, "returned NaN or infinite velocities")
            return out
        return checked
    u = np.asarray(spec, dtype=float)
    if u.shape != (3,) or not np.all(np.isfinite(u)):
        raise ScenarioError(where, f"must be 3 finite numbers (m/s, world frame), got {spec!r}")
    return lambda x: np.broadcast_to(u, np.shape(x)).copy()


@dataclass(frozen=True)
class Wind:
    """Uniform wind ``velocity`` (world, m/s) with drag coefficient ``drag`` and air density ``rho``."""

    velocity: np.ndarray = (0.0, 0.0, 0.0)
    drag: float = 1.0
    rho: float = RHO_AIR

    def __post_init__(self) -> None:
        v = np.asarray(self.velocity, dtype=float)
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ScenarioError("wind", f"must be 3 finite numbers (m/s, world frame), got {self.velocity!r}")
        if not (self.drag >= 0 and self.rho > 0):
            raise ScenarioError("wind", "drag coefficient must be ≥ 0 and air density > 0")
        object.__setattr__(self, "velocity", v)

    def force(self, relative: np.ndarray, area: np.ndarray) -> np.ndarray:
        """½ ρ_air C_d A_p |v_rel| v_rel for relative air velocities (…, 3) and projected areas (…)."""
        rel = np.asarray(relative, dtype=float)
        speed = np.linalg.norm(rel, axis=-1, keepdims=True)
        return 0.5 * self.rho * self.drag * np.asarray(area, float)[..., None] * speed * rel


def projected_area(normals: np.ndarray, areas: np.ndarray, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windward projected area of patches facing a flow along unit ``direction`` (…, 3).

    Patches (…, P, 3) normals and (…, P) areas; weight_i = max(0, −n_i·ê) dA_i (the patch's
    shadow on the plane normal to ê; for a convex emerged part Σ weight_i is exactly its projected
    area). Returns (Σ weights (…), weights (…, P)).
    """
    cosine = -np.einsum("...pi,...i->...p", normals, direction)
    weights = np.maximum(cosine, 0.0) * areas
    return weights.sum(axis=-1), weights


# --------------------------------------------------------------------------------------------
# water surfaces h(x, y) for hull.clip
# --------------------------------------------------------------------------------------------
def plane_surface(level: float = 0.0, slope: tuple[float, float] = (0.0, 0.0)) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """h(x, y) = level + slope_x x + slope_y y."""
    a, b = float(slope[0]), float(slope[1])
    return lambda x, y: level + a * np.asarray(x) + b * np.asarray(y)


def swell(amplitude: float, wavelength: float, direction: float = 0.0,
          phase: float = 0.0) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Frozen sinusoidal swell h = a sin(k (x cos β + y sin β) + φ), k = 2π/λ."""
    if not (wavelength > 0):
        raise ScenarioError("swell", f"wavelength must be positive, got {wavelength}")
    k = 2 * np.pi / wavelength
    c, s = np.cos(direction), np.sin(direction)
    return lambda x, y: amplitude * np.sin(k * (np.asarray(x) * c + np.asarray(y) * s) + phase)


__all__ = ["RHO_WATER", "RHO_AIR", "VelocityField", "CurrentSpec", "current_field", "Wind",
           "projected_area", "plane_surface", "swell"]
