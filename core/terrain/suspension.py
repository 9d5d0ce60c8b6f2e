"""A car's suspension: a spring and a damper at each wheel, set from a ride frequency and a damping ratio.

Artists think in how a car rides, not in N/m, so the springs follow from the body's bounce: each
corner carries its static share F_i of the weight (lever rule over the axles from ``front_load``,
and between the wheels of each axle), and its spring and damper are

    k_i = (F_i/g) ω²,   c_i = 2 ζ (F_i/g) ω,   ω = 2π f                                   (1)

so every corner bounces on its own at f with damping ratio ζ, and — the stiffnesses being
proportional to the loads — the stiffness centre is the centre of mass: the body's bounce is a mode
of its own (Σ k_i (x_i − x_c) = 0), at frequency f with damping ratio ζ, uncoupled from pitch and
roll to first order (Gillespie, *Fundamentals of Vehicle Dynamics*, ch. 5: ride rates and the
bounce–pitch decoupling). Each spring is preloaded by F_i, i.e. its free length is the static
deflection g/ω² beyond its length at ride height, so the body rests at ride height on level ground.

Parameters (SI, with presets): ``ride_frequency`` f (1/s; Gillespie: 1–1.5 Hz for cars, higher for
sports cars), ``damping_ratio`` ζ (0.2–0.4 for ride comfort), ``centre_of_mass_height`` (m above the
ground at ride height: how much the body pitches under braking and rolls in turns), ``front_load``
(share of the weight on the front wheels), ``pitch_inertia`` and ``roll_inertia`` (kg·m² about the
centre of mass; None: ``PITCH_PER_YAW`` and ``ROLL_PER_YAW`` of the car's yaw inertia, the ratios of
measured passenger cars). The parameters are declared as :class:`core.vehicles.spec.Parameter`
(``PARAMETERS``) so that a front end can list them like a vehicle's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from ..errors import ScenarioError
from ..vehicles.spec import Parameter, Preset

GRAVITY = 9.81
PITCH_PER_YAW = 0.9    # pitch / yaw inertia of passenger cars (about the centre of mass)
ROLL_PER_YAW = 0.3     # roll / yaw inertia

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("ride_frequency", "Ride Frequency", "1/s",
              "Natural frequency of the body bouncing on its springs, in cycles per second (Hz)",
              default=1.3, minimum=0.05, upper=10.0),
    Parameter("damping_ratio", "Damping Ratio", "", "Damping of the bounce: 0 undamped, 1 critical",
              default=0.3, positive=False, upper=2.0),
    Parameter("centre_of_mass_height", "Centre of Mass Height", "m",
              "Height of the body's centre of mass above the ground at ride height", default=0.5,
              is_length=True, positive=False, minimum=0.0, upper=5.0),
    Parameter("front_load", "Front Axle Load", "", "Share of the car's weight on the front wheels",
              default=0.55, minimum=0.05, upper=0.95),
)

PRESETS: tuple[Preset, ...] = (
    Preset("comfort", "Comfort", "Soft, lightly damped: a family car over rough roads",
           dict(ride_frequency=1.1, damping_ratio=0.25, centre_of_mass_height=0.55, front_load=0.6)),
    Preset("standard", "Standard", "A typical passenger car",
           dict(ride_frequency=1.3, damping_ratio=0.3, centre_of_mass_height=0.5, front_load=0.55)),
    Preset("sport", "Sport", "Stiff and well damped, low centre of mass",
           dict(ride_frequency=1.8, damping_ratio=0.4, centre_of_mass_height=0.42, front_load=0.52)),
)


@dataclass(frozen=True)
class Suspension:
    """The suspension's parameters (module docstring); validated on construction."""

    ride_frequency: float = 1.3
    damping_ratio: float = 0.3
    centre_of_mass_height: float = 0.5
    front_load: float = 0.55
    pitch_inertia: float | None = None
    roll_inertia: float | None = None

    def __post_init__(self) -> None:
        for p in PARAMETERS:
            value = getattr(self, p.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ScenarioError(f"[suspension] {p.name}", f"must be a finite number, got {value!r}")
            if value < p.minimum or value > p.upper:
                raise ScenarioError(f"[suspension] {p.name}", f"must be in [{p.minimum:g}, {p.upper:g}] "
                                    f"{p.unit}".rstrip() + f", got {value}")
        for name in ("pitch_inertia", "roll_inertia"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ScenarioError(f"[suspension] {name}", f"must be a positive number or None, got {value!r}")

    @classmethod
    def preset(cls, name: str, **overrides: float) -> "Suspension":
        for p in PRESETS:
            if p.name == name:
                return replace(cls(**dict(p.values)), **overrides)
        raise ScenarioError("[suspension] preset", f"unknown preset {name!r}; expected one of: "
                            + ", ".join(p.name for p in PRESETS))

    @property
    def omega(self) -> float:
        """ω = 2π f (rad/s)."""
        return 2.0 * math.pi * self.ride_frequency

    def inertia(self, yaw_inertia: float) -> tuple[float, float, float]:
        """(roll, pitch, yaw) inertias about the centre of mass, kg·m²."""
        roll = ROLL_PER_YAW * yaw_inertia if self.roll_inertia is None else self.roll_inertia
        pitch = PITCH_PER_YAW * yaw_inertia if self.pitch_inertia is None else self.pitch_inertia
        return float(roll), float(pitch), float(yaw_inertia)


@dataclass(frozen=True)
class Corners:
    """Static corner loads and the springs and dampers of eq. (1), in the order of ``roles``."""

    roles: tuple[str, ...]
    load: np.ndarray           # N
    stiffness: np.ndarray      # N/m
    damping: np.ndarray        # N·s/m
    free_length: float         # m: each spring's static deflection g/ω² (its preload F_i/k_i)
    centre_of_mass: np.ndarray  # (3,) body frame, m


def corners(suspension: Suspension, mass: float, wheels: Mapping[str, np.ndarray]) -> Corners:
    """Corner loads, springs and dampers (eq. 1) of a car of ``mass`` (kg) whose wheels (role →
    centre (x, y, z) in the body frame, m) are two rear (``*rear*``) and two front (``*front*``) ones."""
    roles = tuple(wheels)
    rear = [r for r in roles if "rear" in r]
    front = [r for r in roles if "front" in r]
    if len(rear) != 2 or len(front) != 2 or len(roles) != 4:
        raise ScenarioError("wheels", f"the suspension needs two rear and two front wheels, got {', '.join(roles)}")
    centre = {r: np.asarray(wheels[r], dtype=float) for r in roles}
    x_rear = 0.5 * (centre[rear[0]][0] + centre[rear[1]][0])
    x_front = 0.5 * (centre[front[0]][0] + centre[front[1]][0])
    if not x_front - x_rear > 1e-3:
        raise ScenarioError("wheels", "the front wheels must be ahead of the rear wheels along the car's x axis")
    y_c = float(np.mean([centre[r][1] for r in roles]))
    weight = mass * GRAVITY
    load = {}
    for axle, share in ((rear, 1.0 - suspension.front_load), (front, suspension.front_load)):
        a, b = axle
        span = centre[a][1] - centre[b][1]
        if abs(span) < 1e-3:
            raise ScenarioError("wheels", f"the wheels {a} and {b} must be apart across the car (a track)")
        load[a] = weight * share * (y_c - centre[b][1]) / span
        load[b] = weight * share - load[a]
    F = np.array([load[r] for r in roles])
    if np.any(F <= 0):
        raise ScenarioError("wheels", "the centre of mass must lie between the wheels")
    w = suspension.omega
    x_c = float(F @ np.array([centre[r][0] for r in roles])) / weight   # = x_rear + front_load (x_front − x_rear)
    return Corners(roles=roles, load=F, stiffness=F / GRAVITY * w * w,
                   damping=2.0 * suspension.damping_ratio * F / GRAVITY * w, free_length=GRAVITY / (w * w),
                   centre_of_mass=np.array([x_c, y_c, suspension.centre_of_mass_height]))


__all__ = ["Suspension", "Corners", "corners", "PARAMETERS", "PRESETS", "GRAVITY", "PITCH_PER_YAW", "ROLL_PER_YAW"]
