"""``[controls.NAME]`` tables: per-step input series, given as values or sinusoids.

Either ``values = [...]`` (one per step) or
``offset + Σ amplitude[i]·sin(2π·frequency[i]·t + phase[i])`` evaluated at the start
of each step, t_k = k·dt. Inputs not given are zero.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import ScenarioError
from . import Table, check_vector


def read_controls(root: Table, names: Sequence[str], steps: int, dt: float,
                  limits: Mapping[str, tuple[float, float]] | None = None) -> dict[str, np.ndarray]:
    """Read every input of a vehicle; unknown names, wrong lengths and limit violations are errors."""
    table = root.table("controls")
    for name in table.keys():
        if name not in names:
            raise ScenarioError(f"[controls.{name}]",
                                f"unknown input; this vehicle's inputs are: {', '.join(names) or 'none'}")
    t = np.arange(steps) * dt
    out: dict[str, np.ndarray] = {}
    for name in names:
        if not table.has(name):
            out[name] = np.zeros(steps)
            continue
        spec = table.table(name)
        if spec.has("values"):
            values = spec.vector("values")
            if len(values) != steps:
                raise spec.error("values", f"must have one value per step ({steps}), got {len(values)}")
        else:
            offset = spec.number("offset", 0.0)
            amp = spec.vector("amplitude", default=[])
            freq = spec.vector("frequency", default=[])
            phase = spec.vector("phase", default=np.zeros(len(amp)))
            if not (len(amp) == len(freq) == len(phase)):
                raise spec.error("amplitude", "amplitude, frequency and phase must have equal lengths "
                                 f"(got {len(amp)}, {len(freq)}, {len(phase)})")
            values = offset + np.sum(amp[:, None] * np.sin(2 * np.pi * freq[:, None] * t + phase[:, None]), axis=0)
        spec.finish()
        if limits and name in limits:
            lo, hi = limits[name]
            bad = np.flatnonzero((values < lo - 1e-12) | (values > hi + 1e-12))
            if bad.size:
                k = int(bad[0])
                raise ScenarioError(f"[controls.{name}]",
                                    f"value {values[k]:.6g} at step {k} is outside the limit [{lo:g}, {hi:g}]")
        out[name] = np.asarray(values, dtype=float)
    return out


__all__ = ["read_controls", "check_vector"]
