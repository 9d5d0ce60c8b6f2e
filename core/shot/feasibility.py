"""Feasibility first: before a solve, each stretch between consecutive timed constraints (keys,
pass-throughs, stops, landings) is checked against the vehicle's limits, and the first impossible
one is named in the artist's words (frames, metres, seconds, degrees, the setting to change).

Every check is a necessary condition, so a shot it refuses cannot be solved; a shot it passes may
still be too tight (the solve then says why). The bounds, in SI units:

* reach: from speed v at the earlier point, with acceleration at most a over Δt, the distance is at
  most v Δt + ½ a Δt² (and v_lim Δt under a speed limit); ending at rest (a stop, a landing, a goal
  keyed at rest) it is at most v t₁ + ½ a t₁² + (v + a t₁)²/(2a) with t₁ = (a Δt − v)/(2a), and ½ a Δt²
  when v > a Δt (only a speed of at most a Δt can be braked to rest in time). The speed at a later
  point is at most the speed where it was last known (the start, a stop) plus a times the time since.
* car: a = ρ τ_max / (I_w + ρ² m) (the drive torque at the rear wheels, the reduced inertia of
  Kobilarov, Crane & Desbrun 2009 §5.2.1 at straight wheels, its least value); a heading change Δθ
  keyed at both ends needs a path of at least R_min |Δθ|, R_min = wheelbase / tan(max steering).
* helicopter: a = max collective / m (the whole thrust turned along the motion).
* boat: a = (number of thrusters) × max thrust / m.
The snakeboard's propulsion (the rider's twist) has no such simple bound and is not checked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frames import fmt_frame


@dataclass
class Limits:
    """What bounds the motion, in SI units, and how the artist sets it."""
    accel: float                    # m/s², the largest acceleration along the path
    accel_source: str               # "its Max Torque of 2000 N·m"
    accel_setting: str              # "Max Torque"
    min_turn_radius: float = 0.0    # m (car)
    wheelbase: float = 0.0          # m (car)
    max_steering: float = 0.0       # rad (car)


@dataclass
class Point:
    """A timed constraint in solve space (metres, seconds)."""
    frame: float
    time: float
    position: np.ndarray
    radius: float                   # m: how far from position it may be passed
    heading: float | None
    at_rest: bool
    label: str


def vehicle_limits(vehicle_type: str, parameters: dict, input_limits: dict) -> Limits | None:
    p = parameters
    if vehicle_type == "CAR":
        r, m, iw = float(p["wheel_radius"]), float(p["mass"]), float(p.get("wheel_inertia", 0.0))
        torque = float(input_limits["torque"])
        steer = float(p.get("max_steering_angle", 0.0))
        base = float(p["wheelbase"])
        return Limits(r * torque / (iw + r * r * m), f"its Max Torque of {torque:g} N·m", "Max Torque",
                      min_turn_radius=base / math.tan(steer) if steer > 0 else math.inf, wheelbase=base,
                      max_steering=steer)
    if vehicle_type == "HELICOPTER":
        force = float(input_limits["collective"])
        return Limits(force / float(p["mass"]), f"its Max Collective of {force:g} N", "Max Collective")
    if vehicle_type == "BOAT":
        thrust = float(input_limits["thruster_1"])
        count = sum(1 for k in input_limits if k.startswith("thruster_"))
        return Limits(count * thrust / float(p["mass"]), f"its {count} thrusters of {thrust:g} N (Max Thrust)",
                      "Max Thrust")
    return None


def reach(v: float, a: float, dt: float, at_rest: bool, v_limit: float | None) -> float:
    """The farthest a vehicle starting at speed ≤ v, accelerating at most a, gets in dt (module doc)."""
    if a <= 0 or dt <= 0:
        return v * max(dt, 0.0)
    if at_rest:
        t1 = (a * dt - v) / (2 * a)
        if t1 < 0:  # from above a·dt it cannot come to rest in time: it must arrive slower, at most a·dt
            return 0.5 * a * dt * dt
        top = v + a * t1
        far = v * t1 + 0.5 * a * t1 * t1 + top * top / (2 * a)
    else:
        far = v * dt + 0.5 * a * dt * dt
    return min(far, v_limit * dt) if v_limit is not None else far


def _frames_needed(need: float, v: float, a: float, at_rest: bool, v_limit: float | None, dt: float,
                   fps: float) -> int:
    """Frames to add to dt so that reach(dt) covers need (bisection on a monotone function)."""
    lo, hi = dt, max(dt, 1e-3)
    while reach(v, a, hi, at_rest, v_limit) < need and hi < 1e6:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if reach(v, a, mid, at_rest, v_limit) < need else (lo, mid)
    return max(1, math.ceil((hi - dt) * fps - 1e-9))


def check(name: str, vehicle: str, limits: Limits | None, points: list[Point], start_speed: float,
          fps: float, v_limit: float | None, planar: bool) -> str | None:
    """The first impossible stretch as one line for the artist, or None."""
    if limits is None or len(points) < 2:
        return None
    a = limits.accel
    pts = sorted(points, key=lambda p: p.time)
    t0, v0 = pts[0].time, abs(start_speed)  # the last point where the speed is known, and that speed
    for p, q in zip(pts, pts[1:]):
        dt = q.time - p.time
        if dt <= 1e-9:
            continue
        dims = slice(0, 2) if planar else slice(0, 3)
        gap = float(np.linalg.norm(q.position[dims] - p.position[dims]))
        need = max(0.0, gap - p.radius - q.radius)
        if p.at_rest and p is not pts[0]:
            t0, v0 = p.time, 0.0
        v = v0 + a * (p.time - t0)
        if v_limit is not None:
            v = min(v, v_limit)
        far = reach(v, a, dt, q.at_rest, v_limit)
        frames = f"frames {fmt_frame(p.frame)}–{fmt_frame(q.frame)}"
        start = "from rest" if v == 0 else f"at up to {v:.3g} m/s"
        stop = " and stop there" if q.at_rest else ""
        if need > far * (1 + 1e-9) + 1e-9:
            more = _frames_needed(need, v, a, q.at_rest, v_limit, dt, fps)
            bound = "the speed limit" if v_limit is not None and far >= v_limit * dt * (1 - 1e-9) \
                else limits.accel_source
            raise_to = "raise the speed limit" if bound == "the speed limit" else f"raise {limits.accel_setting}"
            return (f"{frames}: '{name}' must cover {need:.3g} m in {dt:.2g} s {start}{stop} ({q.label}); "
                    f"with {bound} it covers at most {far:.3g} m: add about {more} frames, move the key, "
                    f"or {raise_to}")
        if vehicle == "CAR" and p.heading is not None and q.heading is not None and limits.min_turn_radius > 0:
            turn = abs(q.heading - p.heading)
            path = limits.min_turn_radius * turn
            if turn > 1e-6 and path > far * (1 + 1e-9) + 1e-9:
                steer = math.degrees(math.atan(limits.wheelbase * turn / max(far, 1e-9)))
                return (f"{frames}: '{name}' must turn {math.degrees(turn):.0f}° within {dt:.2g} s ({q.label}); "
                        f"it can travel at most {far:.3g} m in that time, which needs {steer:.0f}° of steering "
                        f"(limit {math.degrees(limits.max_steering):.0f}°): add about "
                        f"{_frames_needed(path, v, a, q.at_rest, v_limit, dt, fps)} frames, move the key, "
                        "or raise Max Steering Angle")
    return None


__all__ = ["Limits", "Point", "vehicle_limits", "reach", "check"]
