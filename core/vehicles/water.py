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
* Moving water h(x, y, t): :class:`RegularWave` (linear Airy wave, optionally its orbital velocity)
  and :class:`WaveSum`, and :class:`SampledSurface`, a time series of height grids (the add-on fills
  it from a Blender Ocean modifier or any animated water mesh). :func:`is_moving` tells the two
  forms apart: a surface with three arguments (x, y, t) moves.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Callable, Union, cast

import numpy as np

from ..errors import ScenarioError
from ..integrators.common import GRAVITY

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

    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))   # any 3 numbers; stored as an array
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


# --------------------------------------------------------------------------------------------
# moving water h(x, y, t)
# --------------------------------------------------------------------------------------------
def is_moving(surface: object) -> bool:
    """Whether a water surface moves: h(x, y, t) (three arguments), not the frozen h(x, y).

    The classes below say so themselves (``moving``); any other callable is moving when it requires a
    third positional argument (a frozen surface may have optional extras after x and y)."""
    if surface is None:
        return False
    flag = getattr(surface, "moving", None)
    if flag is not None:
        return bool(flag)
    if not callable(surface):
        return False
    try:
        params = inspect.signature(surface).parameters.values()
    except (TypeError, ValueError):
        return False
    required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return len(required) >= 3


@dataclass(frozen=True)
class RegularWave:
    """A linear (Airy) regular wave h = a cos(k (x cos β + y sin β) − ω t + φ), k = 2π/λ.

    ``direction`` β (rad): the way the crests travel. ``period`` T (s) gives ω = 2π/T; without it
    the deep-water dispersion ω = √(g k) holds. :meth:`velocity` is the orbital velocity of deep-water
    linear theory (Airy): u = a ω e^{k z} cos θ along ê = (cos β, sin β), w = a ω e^{k z} sin θ,
    θ the phase above (w = ∂h/∂t at the mean level); above the mean level (in a crest) the decay
    e^{k z} is held at 1 instead of growing."""

    amplitude: float
    wavelength: float
    direction: float = 0.0
    period: float | None = None
    phase: float = 0.0
    moving = True

    def __post_init__(self) -> None:
        values = [self.amplitude, self.wavelength, self.direction, self.phase]
        if not all(math.isfinite(float(v)) for v in values):
            raise ScenarioError("wave", f"amplitude, wavelength, direction and phase must be finite, got {values}")
        if not self.wavelength > 0:
            raise ScenarioError("wave", f"wavelength must be positive, got {self.wavelength}")
        if self.period is not None and not (math.isfinite(self.period) and self.period > 0):
            raise ScenarioError("wave", f"period must be positive, got {self.period}")

    @property
    def wavenumber(self) -> float:
        return 2.0 * math.pi / self.wavelength

    @property
    def frequency(self) -> float:
        """ω (rad/s): 2π/T, or √(g k) in deep water."""
        if self.period is not None:
            return 2.0 * math.pi / self.period
        return math.sqrt(GRAVITY * self.wavenumber)

    def _theta(self, x, y, t) -> np.ndarray:
        k, c, s = self.wavenumber, math.cos(self.direction), math.sin(self.direction)
        return k * (np.asarray(x, float) * c + np.asarray(y, float) * s) - self.frequency * np.asarray(t, float) + self.phase

    def __call__(self, x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        return self.amplitude * np.cos(self._theta(x, y, t))

    def velocity(self, points: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Orbital velocity (…, 3) at world points (…, 3) and times t (broadcast against the points' …)."""
        p = np.asarray(points, dtype=float)
        th = self._theta(p[..., 0], p[..., 1], t)
        speed = self.amplitude * self.frequency * np.exp(self.wavenumber * np.minimum(p[..., 2], 0.0))
        along = speed * np.cos(th)
        return np.stack([along * math.cos(self.direction), along * math.sin(self.direction), speed * np.sin(th)], -1)


@dataclass(frozen=True)
class WaveSum:
    """The superposition of regular waves (linear theory: heights and orbital velocities add)."""

    waves: tuple[RegularWave, ...]
    moving = True

    def __post_init__(self) -> None:
        if not self.waves:
            raise ScenarioError("wave", "a sum of waves needs at least one wave")

    # sum() types an empty sum as the int 0; the waves are never empty (__post_init__), so it is an array
    def __call__(self, x: np.ndarray, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, sum(w(x, y, t) for w in self.waves))

    def velocity(self, points: np.ndarray, t: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, sum(w.velocity(points, t) for w in self.waves))


def regular_wave(amplitude: float, wavelength: float, direction: float = 0.0, period: float | None = None,
                 phase: float = 0.0) -> RegularWave:
    """h(x, y, t) of one regular wave (:class:`RegularWave`; deep-water dispersion when no period)."""
    return RegularWave(float(amplitude), float(wavelength), float(direction),
                       None if period is None else float(period), float(phase))


class SampledSurface:
    """Water heights sampled on a regular grid over frames: h(x, y, t) bilinear in space, linear in time.

    ``heights`` (frames, ny, nx): frame i at time ``start`` + i ``interval``, sample (j, k) at
    (x, y) = ``origin`` + (k dx, j dy), ``spacing`` = (dx, dy). Outside the grid (or before the first,
    after the last frame) the surface is held at its edge value (clamped), never NaN: continuous, so
    the buoyancy has no jump where the boat leaves the grid; :meth:`contains` tells where that is (``Boat.simulate``
    counts the nodes outside; the add-on samples the region the boat can reach, with a margin, and warns when
    it reaches beyond the water). A single frame is still water, h(x, y) (``moving`` False)."""

    def __init__(self, heights: np.ndarray, origin: tuple[float, float], spacing: tuple[float, float],
                 start: float = 0.0, interval: float = 1.0, where: str = "water"):
        h = np.asarray(heights, dtype=float)
        if h.ndim != 3 or h.shape[1] < 2 or h.shape[2] < 2 or h.shape[0] < 1:
            raise ScenarioError(where, f"heights must be (frames, ny ≥ 2, nx ≥ 2), got shape {h.shape}")
        if not np.all(np.isfinite(h)):
            raise ScenarioError(where, "heights contain NaN or infinite values")
        dx, dy = (float(v) for v in spacing)
        x0, y0 = (float(v) for v in origin)
        if not (dx > 0 and dy > 0 and math.isfinite(dx) and math.isfinite(dy)):
            raise ScenarioError(where, f"spacing must be two positive numbers, got {spacing!r}")
        if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(float(start))):
            raise ScenarioError(where, "origin and start must be finite")
        if h.shape[0] > 1 and not (float(interval) > 0 and math.isfinite(float(interval))):
            raise ScenarioError(where, f"interval must be positive, got {interval!r}")
        self.heights = h
        self.origin, self.spacing = (x0, y0), (dx, dy)
        self.start, self.interval = float(start), float(interval)

    @property
    def moving(self) -> bool:
        return self.heights.shape[0] > 1

    def contains(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether points (x, y) lie on the grid (elsewhere the surface is held at its edge)."""
        ny, nx = self.heights.shape[1:]
        u = (np.asarray(x, float) - self.origin[0]) / self.spacing[0]
        v = (np.asarray(y, float) - self.origin[1]) / self.spacing[1]
        return (u >= 0) & (u <= nx - 1) & (v >= 0) & (v <= ny - 1)

    def _cell(self, u: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Cell index (clamped to 0 … n − 2) and fraction in [0, 1] of grid coordinates u."""
        u = np.clip(u, 0.0, n - 1.0)
        i = np.minimum(np.floor(u), n - 2.0)
        return i.astype(np.intp), u - i

    def __call__(self, x: np.ndarray, y: np.ndarray, t: np.ndarray | None = None) -> np.ndarray:
        x, y, t = np.broadcast_arrays(*(np.asarray(a, float) for a in (x, y, 0.0 if t is None else t)))
        nt, ny, nx = self.heights.shape
        u = (x - self.origin[0]) / self.spacing[0]
        v = (y - self.origin[1]) / self.spacing[1]
        i, fx = self._cell(u, nx)
        j, fy = self._cell(v, ny)
        H = self.heights

        def plane(kk):
            a = H[kk, j, i] * (1 - fx) + H[kk, j, i + 1] * fx
            b = H[kk, j + 1, i] * (1 - fx) + H[kk, j + 1, i + 1] * fx
            return a * (1 - fy) + b * fy

        if nt == 1:
            return plane(np.zeros(x.shape, np.intp))
        k, ft = self._cell((t - self.start) / self.interval, nt)
        return plane(k) * (1 - ft) + plane(k + 1) * ft


__all__ = ["RHO_WATER", "RHO_AIR", "VelocityField", "CurrentSpec", "current_field", "Wind",
           "projected_area", "plane_surface", "swell", "is_moving", "RegularWave", "WaveSum", "regular_wave",
           "SampledSurface"]
