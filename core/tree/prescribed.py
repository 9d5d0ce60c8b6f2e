"""Kinematic (prescribed) configuration variables: q(t), q̇(t), q̈(t) given, not solved for.

A kinematic variable (trep's "kinematic configuration variable") takes part in the
kinematics and the Lagrangian like any other, but the discrete Euler–Lagrange equations
(Johnson & Murphey 2009, eqs. 16, 44) are written only for the dynamic variables: q_{k+1} of a
kinematic variable is its prescribed value at t_{k+1}. The motion is given by a callable, by
samples (a cubic spline), or as constant rate.

:func:`vehicle_root` and :func:`vehicle_drives` attach a tree to a moving vehicle: six
kinematic frames tx, ty, tz, rz, ry, rx (g = T(x, y, z) R_z(yaw) R_y(pitch) R_x(roll)) whose
variables follow a vehicle trajectory's position and orientation samples.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.interpolate import CubicSpline

from ..errors import ScenarioError
from ..lie import quaternion
from .frames import WORLD, Frame

Fn = Callable[[np.ndarray], np.ndarray]


class Prescribed:
    """The motion of one kinematic variable: value, rate and acceleration as functions of t."""

    def __init__(self, value: Fn, rate: Fn, accel: Fn):
        self._value, self._rate, self._accel = value, rate, accel

    def value(self, t: float | np.ndarray) -> np.ndarray:
        return np.asarray(self._value(np.asarray(t, dtype=float)), dtype=float)

    def rate(self, t: float | np.ndarray) -> np.ndarray:
        return np.asarray(self._rate(np.asarray(t, dtype=float)), dtype=float)

    def accel(self, t: float | np.ndarray) -> np.ndarray:
        return np.asarray(self._accel(np.asarray(t, dtype=float)), dtype=float)

    @classmethod
    def constant_rate(cls, q0: float, dq0: float = 0.0, t0: float = 0.0) -> "Prescribed":
        """q(t) = q0 + dq0 (t − t0)."""
        q0, dq0, t0 = float(q0), float(dq0), float(t0)
        return cls(lambda t: q0 + dq0 * (t - t0), lambda t: np.full(np.shape(t), dq0),
                   lambda t: np.zeros(np.shape(t)))

    @classmethod
    def function(cls, f: Fn, rate: Fn | None = None, accel: Fn | None = None) -> "Prescribed":
        """q(t) = f(t); missing derivatives by central differences (steps 1e-6 and 1e-4 s)."""
        if rate is None:
            def rate(t: np.ndarray, f: Fn = f) -> np.ndarray:
                e = 1e-6
                return (np.asarray(f(t + e)) - np.asarray(f(t - e))) / (2 * e)
        if accel is None:
            def accel(t: np.ndarray, f: Fn = f) -> np.ndarray:
                e = 1e-4
                return (np.asarray(f(t + e)) - 2 * np.asarray(f(t)) + np.asarray(f(t - e))) / (e * e)
        return cls(f, rate, accel)

    @classmethod
    def samples(cls, times: np.ndarray, values: np.ndarray, where: str = "samples") -> "Prescribed":
        """A not-a-knot cubic spline through (times, values), continued linearly (with the end
        rate) outside the sampled interval. Needs ≥ 2 strictly increasing finite times."""
        t = np.asarray(times, dtype=float)
        y = np.asarray(values, dtype=float)
        if t.ndim != 1 or t.size < 2:
            raise ScenarioError(where, "needs at least 2 samples")
        if y.shape != t.shape:
            raise ScenarioError(where, f"time and value must have the same length ({t.size} and {y.size})")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
            raise ScenarioError(where, "samples must be finite")
        if np.any(np.diff(t) <= 0):
            raise ScenarioError(where, "sample times must be strictly increasing")
        spline = CubicSpline(t, y, bc_type="not-a-knot", extrapolate=True)
        d1, d2 = spline.derivative(1), spline.derivative(2)
        lo, hi = t[0], t[-1]
        y_lo, y_hi, r_lo, r_hi = spline(lo), spline(hi), d1(lo), d1(hi)

        def value(s: np.ndarray) -> np.ndarray:
            return np.where(s < lo, y_lo + r_lo * (s - lo), np.where(s > hi, y_hi + r_hi * (s - hi),
                                                                       spline(np.clip(s, lo, hi))))

        def rate(s: np.ndarray) -> np.ndarray:
            return np.where(s < lo, r_lo, np.where(s > hi, r_hi, d1(np.clip(s, lo, hi))))

        def accel(s: np.ndarray) -> np.ndarray:
            return np.where((s < lo) | (s > hi), 0.0, d2(np.clip(s, lo, hi)))

        return cls(value, rate, accel)


VEHICLE_AXES: tuple[tuple[str, str], ...] = (("x", "tx"), ("y", "ty"), ("z", "tz"),
                                             ("yaw", "rz"), ("pitch", "ry"), ("roll", "rx"))


def vehicle_root(name: str = "vehicle", parent: str = WORLD) -> list[Frame]:
    """Six kinematic frames whose last one, ``name``, carries a vehicle's pose.

    Frames ``{name}.x`` … ``{name}.pitch`` and ``name``; variables ``{name}.x``, ``{name}.y``,
    ``{name}.z``, ``{name}.yaw``, ``{name}.pitch``, ``{name}.roll``. Attach the tree's
    frames to ``name``.
    """
    frames, par = [], parent
    for i, (axis, kind) in enumerate(VEHICLE_AXES):
        fname = name if i == len(VEHICLE_AXES) - 1 else f"{name}.{axis}"
        frames.append(Frame(fname, par, kind, variable=f"{name}.{axis}", kinematic=True))
        par = fname
    return frames


def vehicle_drives(time: np.ndarray, position: np.ndarray, orientation: np.ndarray,
                   name: str = "vehicle") -> dict[str, Prescribed]:
    """Drives of :func:`vehicle_root` from pose samples (positions (N, 3), unit quaternions
    (N, 4) w x y z): ZYX Euler angles, unwrapped over time, splined. Pitch must stay away
    from ±90° (the Euler chain's singularity)."""
    R = quaternion.to_matrix(np.asarray(orientation, dtype=float))
    yaw = np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0]))
    pitch = np.arcsin(np.clip(-R[:, 2, 0], -1.0, 1.0))
    roll = np.unwrap(np.arctan2(R[:, 2, 1], R[:, 2, 2]))
    pos = np.asarray(position, dtype=float)
    series = {"x": pos[:, 0], "y": pos[:, 1], "z": pos[:, 2], "yaw": yaw, "pitch": pitch, "roll": roll}
    return {f"{name}.{axis}": Prescribed.samples(time, series[axis], where=f"vehicle {axis}")
            for axis, _ in VEHICLE_AXES}
