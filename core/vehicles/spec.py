"""A vehicle's facts, declared once: its parameters, presets, inputs, shape channels and moving parts.

Every front end reads a vehicle through its :class:`VehicleSpec`: the scenario readers
(``core.scenario``: the ``[vehicle]`` keys, their defaults and checks, the input limits), the DMOC
models (``core.dmoc.models``: the bounds of the controls and of the shape), and the Blender add-on
(its settings and presets, the control channels and their limits, what the bake turns).

Each vehicle's spec lives in ``core.vehicles.<vehicle>_spec``, beside its dynamics rather than in
them: a spec imports nothing but this module, so the add-on can build its settings from the specs
when it registers, before scipy (which the dynamics import) may be loaded.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

Value = float | tuple[float, ...] | bool

# The SI units a parameter, input or channel may be given in ("" for a ratio or a switch).
UNITS = frozenset({"kg", "m", "kg·m²", "rad", "rad/s", "1/s", "N", "N·m", ""})
KINDS = ("number", "vector", "switch")   # a number, 3 numbers, true/false


@dataclass(frozen=True)
class Parameter:
    """One physical parameter: a ``[vehicle]`` key of a scenario and a setting of the add-on.

    ``default`` is a scenario's value when the key is missing and no preset gives one (None: required);
    ``positive`` and ``upper`` are what core refuses (≤ 0, above ``upper``); ``minimum`` is the least
    value an editor offers (0 for a limit, so that a zero reaches the reader, which names it);
    ``is_length``: metres whatever a scene's unit scale. ``scenario`` False: not a scenario key
    (animation only: the add-on keeps it, the models use their own value).
    """

    name: str
    label: str
    unit: str
    description: str
    kind: str = "number"
    default: Value | None = None
    is_length: bool = False
    positive: bool = True
    upper: float | None = None
    minimum: float = 0.0
    scenario: bool = True


@dataclass(frozen=True)
class Preset:
    """Named values for every parameter (``name`` is what a scenario's ``preset`` key gives)."""

    name: str
    label: str
    description: str
    values: Mapping[str, Value]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))


@dataclass(frozen=True)
class Input:
    """One control input, bounded by the parameter ``limit``: |u| ≤ limit, or 0 ≤ u ≤ limit when
    ``nonnegative`` (a rotor's lift). The add-on weighs its effort by 1/limit²."""

    name: str
    unit: str
    description: str
    limit: str
    nonnegative: bool = False

    def bound(self, vehicle: Any) -> float:
        """The limit of ``vehicle``: any object with the limit parameter as an attribute (a core
        vehicle, the add-on's settings)."""
        return getattr(vehicle, self.limit)

    def bounds(self, vehicle: Any) -> tuple[float, float]:
        hi = self.bound(vehicle)
        return (0.0 if self.nonnegative else -hi, hi)


@dataclass(frozen=True)
class Channel:
    """A shape channel of the vehicle's trajectories (or one the bake derives from them); ``limit``:
    the parameter bounding |value|, if any."""

    name: str
    unit: str
    description: str
    limit: str | None = None

    def bounds(self, vehicle: Any) -> tuple[float, float]:
        if self.limit is None:
            raise ValueError(f"channel {self.name!r} has no limit")
        hi = getattr(vehicle, self.limit)
        return -hi, hi


@dataclass(frozen=True)
class Part:
    """A moving part a scene may give the vehicle (the add-on's object setting ``role``).

    ``channels``: the channels turning it about its own axis, the first one a trajectory has wins; a
    leading "-" turns it the other way. ``spins``: it turns without end (its angle is unwrapped).
    ``tilts_with``: the (pitch, roll) channels tilting it about the body's Y and X axes.
    ``optional``: the vehicle moves as modelled without it (a missing required part makes a proxy).
    """

    role: str
    channels: tuple[str, ...] = ()
    spins: bool = False
    tilts_with: tuple[str, ...] = ()
    optional: bool = False


@dataclass(frozen=True)
class VehicleSpec:
    """Everything that names or bounds a vehicle outside its dynamics.

    ``name`` is the scenario's ``type`` and ``Trajectory.vehicle``; ``default_preset`` fills the
    parameters a scenario leaves out (None: each is required unless it has its own default);
    ``derived`` are channels the bake computes from the shape (a car's front wheel roll); ``planar``:
    the pose is in SE(2); ``solvable``: it has a DMOC model (``python -m core solve``).
    """

    name: str
    label: str
    description: str
    parameters: tuple[Parameter, ...]
    presets: tuple[Preset, ...] = ()
    default_preset: str | None = None
    inputs: tuple[Input, ...] = ()
    shape: tuple[Channel, ...] = ()
    derived: tuple[Channel, ...] = ()
    parts: tuple[Part, ...] = ()
    planar: bool = False
    solvable: bool = False

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def scenario_parameters(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.scenario)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.inputs)

    @property
    def shape_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.shape)

    @property
    def preset_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.presets)

    def parameter(self, name: str) -> Parameter:
        return _named(self.parameters, name, "parameter", self.name)

    def input(self, name: str) -> Input:
        return _named(self.inputs, name, "input", self.name)

    def channel(self, name: str) -> Channel:
        return _named(self.shape + self.derived, name, "channel", self.name)

    def preset(self, name: str) -> Preset:
        return _named(self.presets, name, "preset", self.name)

    def defaults(self) -> dict[str, Value]:
        """A scenario's values for the keys it leaves out: the parameters' own defaults, then the
        default preset's values."""
        out = {p.name: p.default for p in self.parameters if p.default is not None}
        if self.default_preset is not None:
            out.update(self.preset(self.default_preset).values)
        return out

    def input_bounds(self, vehicle: Any) -> dict[str, tuple[float, float]]:
        """(lower, upper) of every input of ``vehicle`` (a core vehicle or the add-on's settings)."""
        return {i.name: i.bounds(vehicle) for i in self.inputs}


def _named(items: tuple, name: str, what: str, vehicle: str) -> Any:
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"{vehicle} has no {what} {name!r}")


# Parameters every rigid vehicle shares, with one meaning.
MASS = Parameter("mass", "Mass", "kg", "Total mass", minimum=1e-3)
INERTIA = Parameter("inertia", "Inertia", "kg·m²",
                    "Principal moments of inertia about body X (roll), Y (pitch), Z (yaw)", kind="vector",
                    minimum=1e-6)


def vehicle_specs() -> tuple[VehicleSpec, ...]:
    """Every vehicle's spec, in the order a front end lists them."""
    from .boat_spec import BOAT
    from .car_spec import CAR
    from .helicopter_spec import HELICOPTER
    from .rigid_body_spec import RIGID_BODY
    from .snakeboard_spec import SNAKEBOARD
    return CAR, HELICOPTER, BOAT, SNAKEBOARD, RIGID_BODY


__all__ = ["Parameter", "Preset", "Input", "Channel", "Part", "VehicleSpec", "MASS", "INERTIA", "UNITS", "KINDS",
           "vehicle_specs"]
