"""A failed solve in the artist's terms: the frames where it fails and the physical limit that binds
(torque, steering, speed, thrust, tilt, or an obstacle by its object name), from the solver's
structured failure (constraint group, instance, node) and the best motion it found. The solver's
own wording goes to the console, not to the artist."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frames import fmt_frame

# input or shape → (setting, unit, shown in degrees)
LIMIT_LABELS: dict[str, tuple[str, str, bool]] = {
    "torque": ("Max Torque", "N·m", False),
    "steering_rate": ("Max Steering Rate", "1/s", False),
    "steering_angle": ("Max Steering Angle", "°", True),
    "collective": ("Max Collective", "N", False),
    "yaw": ("Max Yaw Force", "N", False),
    "pitch_tilt": ("Max Tilt", "°", True),
    "roll_tilt": ("Max Tilt", "°", True),
    "rotor_torque": ("Max Rotor Torque", "N·m", False),
    "steering_torque": ("Max Steering Torque", "N·m", False),
    "wheel_angle": ("Max Wheel Angle", "°", True),
}
SATURATED = 0.98   # a value within 2 % of its limit is at the limit
WINDOW = 0.75      # s either side of the failing node to look for limits at work


@dataclass
class Failure:
    """Where a solve fails: the constraint group and instance with the largest violation (core's
    ``NLP.worst_detail``), the node it belongs to, and the violation."""
    group: str
    instance: int
    node: int | None
    value: float


def _limit_of(name: str, vehicle: dict, bounds: dict) -> tuple[float, float] | None:
    if name in bounds:
        lo, hi = bounds[name]
        return float(lo), float(hi)
    if name.startswith("thruster_"):
        m = vehicle.get("max_thrust")
        return None if m is None else (-float(m), float(m))
    key = {"torque": "max_torque", "steering_rate": "max_steering_rate", "steering_angle": "max_steering_angle",
           "collective": "max_collective", "yaw": "max_yaw", "pitch_tilt": "max_tilt", "roll_tilt": "max_tilt",
           "rotor_torque": "max_rotor_torque", "steering_torque": "max_steering_torque",
           "wheel_angle": "max_wheel_angle"}.get(name)
    if key is None or key not in vehicle:
        return None
    m = float(vehicle[key])
    return (0.0, m) if name == "collective" else (-m, m)


def _setting(name: str, limit: float) -> str:
    if name.startswith("thruster_"):
        return f"Max Thrust ({limit:g} N)"
    label, unit, degrees = LIMIT_LABELS[name]
    return f"{label} ({math.degrees(limit):.0f}°)" if degrees else f"{label} ({limit:g} {unit})"


def limits_at_work(scenario: dict, trajectory, nodes: slice) -> list[str]:
    """The settings whose limits the motion sits at within ``nodes`` (inputs and steering)."""
    vehicle, bounds = scenario.get("vehicle", {}), scenario.get("bounds", {})
    out: list[str] = []
    series = {**{k: np.asarray(v, dtype=float) for k, v in trajectory.controls.items()},
              **{k: np.asarray(v, dtype=float) for k, v in trajectory.shape.items() if k in LIMIT_LABELS}}
    for name, values in series.items():
        limit = _limit_of(name, vehicle, bounds)
        if limit is None or not len(values):
            continue
        lo, hi = limit
        window = values[nodes]
        at_hi = hi > 0 and np.any(window >= SATURATED * hi)
        at_lo = lo < 0 and np.any(window <= SATURATED * lo)
        if at_hi or at_lo:
            text = _setting(name, max(abs(lo), abs(hi)))
            if text not in out:
                out.append(text)
    if "speed" in bounds and len(trajectory.linear_velocity):
        lo, hi = (float(x) for x in bounds["speed"])
        speed = np.asarray(trajectory.linear_velocity, dtype=float)[nodes, 0]
        if np.any(speed >= SATURATED * hi) or (lo < 0 and np.any(speed <= SATURATED * lo)):
            out.append(f"the speed limit ({max(abs(lo), hi):g} m/s)")
    return out


def explain(name: str, failure: Failure | None, segment, problem, trajectory, status: str) -> str:
    """One line for the artist: what fails where, and what to change."""
    fm = problem.frame_map
    steps = int(segment.scenario["integrator"]["steps"])
    frames_per_node = (segment.frame_end - segment.frame_start) / steps

    def frame(node: float, rounding=round) -> str:
        return fmt_frame(rounding(segment.frame_start + node * frames_per_node - 1e-9 * (rounding is math.ceil)))

    if status == "time_limit":
        head = f"'{name}' ran out of time (Solve Settings › Time Limit) before it met every key"
    elif status == "iteration_limit":
        head = f"'{name}' ran out of iterations (Solve Settings › Max Iterations) before it met every key"
    else:
        head = f"'{name}' cannot meet every key"
    if failure is None or failure.node is None:
        return head + f" in frames {frame(0)}–{frame(steps)}: add frames, move the keys apart, or relax the limits"
    node = min(max(failure.node, 0), steps)
    width = max(1, int(round(WINDOW * fm.fps / max(frames_per_node, 1e-9))))
    nodes = slice(max(0, node - width), min(steps + 1, node + width + 1))
    where = f"frames {frame(nodes.start, math.floor)}–{frame(nodes.stop - 1, math.ceil)}"
    group = failure.group
    if group.startswith("clearance") or group.startswith("obstacle"):
        what = _obstacle(group, problem)
        return f"{head}: around frame {frame(node)} it cannot keep clear of {what}: move the key or the obstacle, " \
               "or add frames"
    if group.startswith("waypoint"):
        label = _waypoint(group, segment)
        limits = limits_at_work(segment.scenario, trajectory, nodes)
        why = f" with {', '.join(limits)} at work in {where}" if limits else f" in {where}"
        return f"{head}: it misses {label} by {math.sqrt(max(failure.value, 0.0)):.2g} m{why}: add frames, " \
               "move the key, or raise those limits" if limits else \
               f"{head}: it misses {label}{why}: add frames or move the key"
    limits = limits_at_work(segment.scenario, trajectory, nodes)
    if limits:
        return f"{head}: in {where} it needs more than {_join(limits)} allow: add frames, move the keys apart, " \
               f"or raise {'that limit' if len(limits) == 1 else 'those limits'}"
    return f"{head}: its motion breaks down in {where}: add frames or move the keys apart"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _obstacle(group: str, problem) -> str:
    import re
    m = re.search(r"obstacle #(\d+)", group)
    if m:
        i = int(m.group(1)) - 1
        if 0 <= i < len(problem.obstacles):
            return problem.obstacles[i].label()
    return "an obstacle"


def _waypoint(group: str, segment) -> str:
    import re
    m = re.search(r"waypoint #(\d+)", group)
    if m:
        i = int(m.group(1)) - 1
        if 0 <= i < len(segment.waypoint_labels):
            return segment.waypoint_labels[i]
    return "a key"


__all__ = ["Failure", "explain", "limits_at_work", "LIMIT_LABELS"]
