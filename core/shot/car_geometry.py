"""A car's geometry from its wheels, and each wheel's spin along its own path (plain arrays, no Blender).

The car model (``core.vehicles.car``) is a bicycle whose nonholonomic constraint holds at the rear
axle centre, the point the solve plans; an artist's car object may have its origin anywhere.
:func:`measure` finds, from the four wheel objects' evaluated world geometry at one frame:

* each wheel's centre and radius: a wheel spins about the line through its object's origin along its
  local Wheel Axis (:func:`spin_axis`); its centre is that line's point midway across the wheel's
  width, its radius the largest distance of its vertices from the line (an empty gives its origin and
  the typed Wheel Radius);
* the rear axle point, midway between the rear wheels' centres at ground level. Its pose in the body
  frame is the **body offset**: keys of the object are moved by it to the rear axle (key world pose ×
  offset) and the bake puts the object back (trajectory pose × offset⁻¹);
* the wheelbase (rear axle to the front wheels' midpoint along the body's forward X), the track, and
  the model's wheel radius (the mean of the rear, driven, wheels').

With ``use_typed`` (the panel's Typed Values) the typed Wheel Radius and Wheelbase are used, the rear
axle still from the rear wheels' centres (at the typed radius below them). Without both rear wheels the
object's origin is the rear axle; wheels all at one place along the car (placeholders) give no layout:
the origin is the rear axle and the typed values hold, with a warning.

:func:`wheel_spins` gives each wheel's rolling angle: over each step (a rigid planar motion of constant
twist) the arc its contact point travels along its rolling direction — the heading for rear wheels,
heading + steering for steered front wheels — divided by its radius, so left and right wheels differ in
turns as a differential lets them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import VehicleMotionError
from .geometry import floats, polar

REAR = ("wheel_rear_left", "wheel_rear_right")
FRONT = ("wheel_front_left", "wheel_front_right")
LABELS = {"wheel_rear_left": "rear left wheel", "wheel_rear_right": "rear right wheel",
          "wheel_front_left": "front left wheel", "wheel_front_right": "front right wheel"}
MIN_WHEELBASE = 0.01     # m: wheels closer than this along the car give no wheelbase
ALIGN_DEG = 2.0          # a wheel's axle more than this from the car's sideways Y axis is warned about
MISALIGNED_DEG = 30.0    # … more than this: its radius is not measured (the Wheel Axis is likely wrong)
OFF_AXLE = 0.02          # a wheel whose geometry is off its spin axis by more than this × radius wobbles
UNEQUAL = 0.01           # left and right wheels of an axle differing by more than 1 % are warned about
SHIFT = 0.01             # m: left and right wheels of an axle more than 1 cm apart along the car or in height


class CarGeometryError(VehicleMotionError):
    """The wheels cannot make a car (front wheels behind the rear ones, …); one line naming them."""


@dataclass
class WheelInput:
    """One wheel object as gathered from the scene (world coordinates, scene units)."""
    name: str
    origin: np.ndarray                  # (3,) a point of the spin axis: the object's origin
    axis: np.ndarray                    # (3,) the spin axis direction (positive spin turns about it)
    vertices: np.ndarray | None = None  # (N, 3) evaluated world vertices; None or empty: an empty


@dataclass
class Wheel:
    """A wheel in the car's body frame, relative to the rear axle point (scene units)."""
    name: str
    centre: np.ndarray       # (3,) x forward, y left, z up
    radius: float            # scene units
    measured: bool           # the radius comes from its vertices (else the typed Wheel Radius)
    spin_sign: float = 1.0   # +1 when its spin axis points to the car's left (positive spin rolls forward)
    steered: bool = False

    def table(self) -> dict:
        return {"centre": floats(self.centre), "radius": float(self.radius), "spin_sign": float(self.spin_sign),
                "steered": bool(self.steered)}


@dataclass
class CarGeometry:
    body_offset: np.ndarray                  # (3,) the rear axle point in the body frame, scene units
    wheelbase: float                         # m
    wheel_radius: float                      # m: the car model's (rear, driven) wheel radius
    track: float | None = None               # m, across the rear wheels
    wheels: dict[str, Wheel] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    measured: tuple[str, ...] = ()           # which of "rear_axle", "wheelbase", "wheel_radius" the wheels gave

    def wheel_tables(self) -> dict:
        """The wheels for trajectory stats (``stats["wheels"]``): role → centre, radius, spin sign, steered."""
        return {role: w.table() for role, w in self.wheels.items()}


def spin_axis(world3: np.ndarray, own_scale, local_axis) -> np.ndarray:
    """The world direction about which a positive rotation about ``local_axis`` turns an object whose
    world matrix has the 3×3 part ``world3`` and whose own scale (scale × delta scale) is
    ``own_scale``: the object's rotation part (world3 with its own scale divided out) applied to the
    axis, reversed when that part mirrors (a mirror turns a rotation the other way)."""
    s = np.asarray(own_scale, dtype=float)
    s = np.where(np.abs(s) > 1e-30, s, 1.0)
    a3 = np.asarray(world3, dtype=float) / s[None, :]
    v = a3 @ np.asarray(local_axis, dtype=float)
    n = float(np.linalg.norm(v))
    if not (n > 0 and math.isfinite(n)):
        return np.zeros(3)
    return (v / n) * (-1.0 if np.linalg.det(a3) < 0 else 1.0)


def _measure_wheel(w: WheelInput, typed_radius: float) -> tuple[np.ndarray, float, bool, list[str]]:
    """(world centre, radius, measured, warnings) of one wheel, scene units."""
    origin = np.asarray(w.origin, dtype=float)
    a = np.asarray(w.axis, dtype=float)
    v = None if w.vertices is None else np.asarray(w.vertices, dtype=float).reshape(-1, 3)
    if v is None or len(v) < 3 or not np.all(np.isfinite(v)) or not np.linalg.norm(a) > 0:
        return origin, typed_radius, False, []
    rel = v - origin
    t = rel @ a
    perp = rel - t[:, None] * a
    radius = float(np.max(np.linalg.norm(perp, axis=1)))
    if not radius > 1e-9:
        return origin, typed_radius, False, [f"'{w.name}' has no size across its Wheel Axis: the typed Wheel "
                                             "Radius is used for it"]
    centre = origin + a * 0.5 * (float(t.min()) + float(t.max()))
    warnings = []
    e1 = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(a, e1)
    uv = np.stack([perp @ e1, perp @ e2], axis=1)
    off = float(np.linalg.norm(0.5 * (uv.min(axis=0) + uv.max(axis=0))))
    if off > OFF_AXLE * radius:
        warnings.append(f"'{w.name}' has its origin {off:.3g} off the centre of its geometry (across its Wheel "
                        "Axis): it wobbles as it spins; set its origin to its centre (Object › Set Origin)")
    return centre, radius, True, warnings


def measure(vehicle: str, body_world: np.ndarray, wheels: dict[str, WheelInput], *, scale: float,
            typed_radius: float, typed_wheelbase: float, use_typed: bool = False) -> CarGeometry:
    """The car's geometry from its wheels (see the module). ``body_world``: the car object's 4×4
    world matrix at the start frame; ``wheels``: role → :class:`WheelInput` for the wheel objects it
    has; ``scale``: metres per scene unit; typed values in metres. Raises CarGeometryError."""
    m = np.asarray(body_world, dtype=float)
    o, r = m[:3, 3], polar(m[:3, :3])
    typed_r = typed_radius / scale
    warnings: list[str] = []
    centres: dict[str, np.ndarray] = {}
    radii: dict[str, float] = {}
    measured: dict[str, bool] = {}
    signs: dict[str, float] = {}
    for role in (*REAR, *FRONT):
        w = wheels.get(role)
        if w is None:
            continue
        axis = np.asarray(w.axis, dtype=float)
        body_axis = r.T @ axis if np.linalg.norm(axis) > 0 else np.zeros(3)
        angle = math.degrees(math.acos(min(1.0, abs(float(body_axis[1]))))) if np.linalg.norm(body_axis) > 0 \
            else 90.0
        if angle > ALIGN_DEG:
            more = "; its radius is not measured (the typed Wheel Radius is used)" if angle > MISALIGNED_DEG else ""
            warnings.append(f"'{w.name}' ({LABELS[role]} of '{vehicle}') spins about an axis {angle:.0f}° from the "
                            f"car's sideways Y axis: check its Wheel Axis (Vehicle › Parts){more}")
        if angle > MISALIGNED_DEG:
            w = WheelInput(w.name, w.origin, w.axis, None)
        centre, radius, ok, notes = _measure_wheel(w, typed_r)
        warnings += notes
        centres[role] = r.T @ (centre - o)
        radii[role] = radius
        measured[role] = ok
        signs[role] = -1.0 if body_axis[1] < 0 else 1.0

    def axle(pair, what):
        have = [p for p in pair if p in centres]
        if len(have) == 2:
            a, b = (centres[p] for p in pair)
            shift = abs(float(a[0] - b[0])) * scale
            if shift > SHIFT:
                warnings.append(f"the {what} wheels of '{vehicle}' are {shift:.3g} m apart along the car: its "
                                f"{what} axle is taken midway between them")
            drop = abs(float(a[2] - b[2])) * scale
            if drop > SHIFT:
                warnings.append(f"the {what} wheels of '{vehicle}' are {drop:.3g} m apart in height: its {what} "
                                "axle is taken midway between them")
            ra, rb = (radii[p] for p in pair)
            if all(measured[p] for p in pair) and abs(ra - rb) > UNEQUAL * max(ra, rb):
                warnings.append(f"the {what} wheels of '{vehicle}' have different radii ({ra * scale:.3g} m, "
                                f"{rb * scale:.3g} m): each spins by its own")
        return have

    rear = axle(REAR, "rear")
    front = axle(FRONT, "front")
    got: list[str] = []
    offset = np.zeros(3)
    track = None
    if len(rear) == 2:
        a, b = (centres[p] for p in REAR)
        ground = 0.5 * ((a[2] - radii[REAR[0]]) + (b[2] - radii[REAR[1]]))
        if use_typed:
            ground = 0.5 * (a[2] + b[2]) - typed_r
        offset = np.array([0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), ground])
        track = abs(float(a[1] - b[1])) * scale
        got.append("rear_axle")
    wheel_radius = typed_radius
    if not use_typed and rear and all(measured[p] for p in rear):
        wheel_radius = float(np.mean([radii[p] for p in rear])) * scale
        got.append("wheel_radius")
    wheelbase = typed_wheelbase
    if len(rear) == 2 and front and not use_typed:
        measured_base = (float(np.mean([centres[p][0] for p in front])) - offset[0]) * scale
        if measured_base < -MIN_WHEELBASE:
            raise CarGeometryError(
                f"the front wheels of '{vehicle}' are {-measured_base:.3g} m behind its rear wheels along its X "
                "axis: a car drives along its local +X; turn the body so that +X points forward, or swap the "
                "front and rear wheel objects (Vehicle › Parts)")
        if measured_base < MIN_WHEELBASE:  # placeholders at one place: no layout, the car as typed
            warnings.append(f"the wheels of '{vehicle}' are all at one place along the car (Vehicle › Parts): its "
                            f"origin is taken as the rear axle, with the typed Wheelbase {typed_wheelbase:.3g} m "
                            f"and Wheel Radius {typed_radius:.3g} m")
            use_typed, offset, got, track, wheel_radius = True, np.zeros(3), [], None, typed_radius
        else:
            wheelbase = measured_base
            got.append("wheelbase")
    out = {}
    for role in centres:
        radius = typed_r if use_typed else radii[role]
        out[role] = Wheel(wheels[role].name, centres[role] - offset, float(radius),
                          measured[role] and not use_typed, signs[role], steered=role in FRONT)
    return CarGeometry(offset, float(wheelbase), float(wheel_radius), track, out, warnings, tuple(got))


# ----------------------------------------------------------------------------- per-wheel spin

def wheel_spins(position, heading, steering, wheels: dict) -> dict[str, np.ndarray]:
    """Each wheel's rolling angle (rad, 0 at the first node) along a planar trajectory of the rear
    axle point. ``position`` (N, 2 or 3) and the wheels' centres and radii in the same units;
    ``heading`` (N,) rad; ``steering`` (N,) rad or None (no steering); ``wheels``: role →
    {"centre": (x, y, z) body frame from the rear axle, "radius", "steered", "spin_sign"} (as
    :meth:`CarGeometry.wheel_tables`). A wheel's spin × its radius is its contact point's arc length
    along its rolling direction (positive forward), times its spin sign."""
    p = np.asarray(position, dtype=float)[:, :2]
    th = np.asarray(heading, dtype=float).reshape(-1)
    n = len(th)
    phi = np.zeros(n) if steering is None else np.asarray(steering, dtype=float).reshape(-1)
    if len(p) != n or len(phi) != n:
        raise ValueError("wheel_spins: position, heading and steering need one value a node")
    out: dict[str, np.ndarray] = {}
    if n < 2:
        return {role: np.zeros(n) for role in wheels}
    dth = np.remainder(np.diff(th) + math.pi, 2 * math.pi) - math.pi
    mid = th[:-1] + 0.5 * dth
    z = 0.5 * dth
    small = np.abs(z) < 1e-6
    arc = np.where(small, 1.0 + z * z / 6.0, z / np.where(small, 1.0, np.sin(z)))  # arc / chord of each step
    c, s = np.cos(th), np.sin(th)
    for role, w in wheels.items():
        x, y = float(w["centre"][0]), float(w["centre"][1])
        contact = p + np.stack([c * x - s * y, s * x + c * y], axis=1)
        d = np.diff(contact, axis=0)
        direction = mid + (0.5 * (phi[:-1] + phi[1:]) if w.get("steered") else 0.0)
        along = d[:, 0] * np.cos(direction) + d[:, 1] * np.sin(direction)
        steps = along * arc / float(w["radius"]) * float(w.get("spin_sign", 1.0))
        out[role] = np.concatenate([[0.0], np.cumsum(steps)])
    return out


def to_rear_axle(position, rotation, offset) -> np.ndarray:
    """The rear axle point of a body at ``position`` with ``rotation`` (3×3): position + R·offset."""
    return np.asarray(position, dtype=float) + np.asarray(rotation, dtype=float) @ np.asarray(offset, dtype=float)


__all__ = ["WheelInput", "Wheel", "CarGeometry", "CarGeometryError", "measure", "spin_axis", "wheel_spins",
           "to_rear_axle", "REAR", "FRONT"]
