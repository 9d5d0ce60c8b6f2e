"""``[vehicle.water]``: the moving sea a boat floats on (:mod:`core.vehicles.water`), read from a scenario.

    [vehicle.water]
    orbital_velocity = false      # the waves' orbital velocity enters η (regular waves only)
    time_origin = 0.0             # s: the water's clock at the scenario's t = 0 (a later segment of a shot)

    [[vehicle.water.waves]]       # regular waves, superposed
    amplitude = 0.3               # m
    wavelength = 40.0             # m
    direction = 0.0               # rad: the way the crests travel (0: along +x)
    period = 5.0                  # s; omitted: deep-water dispersion ω² = g k
    phase = 0.0                   # rad: h = a cos(k (x cos β + y sin β) − ω t + φ)

    [vehicle.water.grid]          # or heights sampled on a regular grid over frames (the add-on's Water)
    origin = [x0, y0]             # m: the first sample
    spacing = [dx, dy]            # m
    start = 0.0                   # s: the first frame's time
    interval = 0.04               # s between frames
    heights = [[[...]]]           # m, (frames, ny, nx): bilinear in x-y, linear in time, held at the edges

Waves or a grid, not both. Without ``[vehicle.water]`` the water is the calm plane z = 0.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ScenarioError
from ..vehicles.water import RegularWave, SampledSurface, WaveSum
from . import Table


def _wave(t: Table, origin: float) -> RegularWave:
    amplitude = t.number("amplitude", nonnegative=True)
    wavelength = t.number("wavelength", positive=True)
    direction = t.number("direction", 0.0)
    period = t.number("period", None, positive=True)
    phase = t.number("phase", 0.0)
    t.finish()
    wave = RegularWave(amplitude, wavelength, direction, period, phase)
    # h(x, y, t + t₀) = a cos(k·x − ω t + (φ − ω t₀)): the same wave on the scenario's clock
    return replace(wave, phase=phase - wave.frequency * origin)


def _grid(t: Table, origin: float) -> SampledSurface:
    xy0 = t.vector("origin", 2)
    spacing = t.vector("spacing", 2, positive=True)
    start = t.number("start", 0.0)
    interval = t.number("interval", 1.0, positive=True)
    raw = t._get("heights", None)
    where = t.where("heights")
    if raw is None:
        raise ScenarioError(where, "missing: heights (frames, ny, nx) in metres")
    try:
        heights = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise ScenarioError(where, "must be a (frames, ny, nx) array of numbers (rows of equal length)") from None
    t.finish()
    return SampledSurface(heights, tuple(xy0), tuple(spacing), start - origin, interval, where)


def read_water(vehicle: Table) -> tuple[RegularWave | WaveSum | SampledSurface | None, bool]:
    """The water surface h(x, y, t) of ``[vehicle.water]`` (None: calm) and whether its orbital velocity
    enters η."""
    if not vehicle.has("water"):
        return None, False
    t = vehicle.table("water")
    origin = t.number("time_origin", 0.0)
    orbital = t.boolean("orbital_velocity", False)
    waves = t.tables("waves")
    if waves and t.has("grid"):
        raise t.error("grid", "give waves or a grid, not both")
    if waves:
        parts = tuple(_wave(w, origin) for w in waves)
        surface = parts[0] if len(parts) == 1 else WaveSum(parts)
    elif t.has("grid"):
        surface = _grid(t.table("grid"), origin)
    else:
        raise t.error("waves", "missing: give [[vehicle.water.waves]] or [vehicle.water.grid]")
    t.finish()
    return surface, orbital


__all__ = ["read_water"]
