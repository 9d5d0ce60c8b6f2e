"""Parts of a vehicle: links joined by hinges or two-axis swing joints (plain data, validated).

A :class:`Part` is one rigid link. Its frame (the axes of the object that shows it) sits at
the joint, ``position`` from and turned by ``orientation`` relative to its parent's frame at
rest (the parent is the vehicle's body frame or another part's frame). The joint turns the
part about axes of its own frame, after the rest turn:

    R_part = R_parent · R_rest · R_joint(q),    R_joint = exp(q₁ â₁) [exp(q₂ â₂)]      (1)

with â₁ (and â₂ for a swing joint) signed unit coordinate axes of the part's frame; q = 0 is
the rest placement. A baker therefore keys the part object's local rotation as
rest ∘ R_joint(q) (:func:`joint_quaternions` gives R_joint as quaternions). The part's
mass sits at its ``end`` (the link's far end, in the part's frame; the link length is
|end|), with principal moments ``inertia`` about it in the part's axes.

A swing joint (a cable's hook) turns about the two coordinate axes across the link
(:func:`swing_axes`): a universal joint, R_joint = R_a(q₁) R_b(q₂).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ScenarioError

JOINTS: tuple[str, ...] = ("HINGE", "SWING")
# signed coordinate axes: name → (index, sign)
AXES: dict[str, tuple[int, float]] = {"x": (0, 1.0), "y": (1, 1.0), "z": (2, 1.0),
                                      "-x": (0, -1.0), "-y": (1, -1.0), "-z": (2, -1.0)}
MIN_LENGTH = 1e-6   # m: a shorter link is refused (its joint would move no mass)


@dataclass(frozen=True)
class Part:
    """One link; see the module docstring. Lengths in metres, angles in radians."""

    name: str
    parent: str | None                                  # another part's name; None: the vehicle
    joint: str                                          # "HINGE" or "SWING"
    position: Sequence[float]                           # joint in the parent's frame
    orientation: Sequence[float] = (1.0, 0.0, 0.0, 0.0)  # part frame in the parent's frame (w, x, y, z)
    end: Sequence[float] = (0.0, 0.0, -1.0)             # centre of mass in the part's frame
    mass: float = 1.0
    inertia: Sequence[float] = (0.0, 0.0, 0.0)          # about the end, part axes (kg m²)
    axis: str = "z"                                     # hinge axis (a key of AXES)
    damping: float = 0.0                                # joint damping (N m s/rad)
    grip: float = 0.0                                   # lateral damping of the end (N s/m), hinge only
    rate: float = 0.0                                   # initial joint rate (rad/s; free-base chains)

    def axes(self) -> tuple[str, ...]:
        """The joint's axes in the part's frame, outermost first."""
        return (self.axis,) if self.joint == "HINGE" else swing_axes(self.end)

    @property
    def length(self) -> float:
        return float(np.linalg.norm(np.asarray(self.end, dtype=float)))


def axis_vector(name: str) -> np.ndarray:
    i, sign = AXES[name]
    v = np.zeros(3)
    v[i] = sign
    return v


def swing_axes(end: Sequence[float]) -> tuple[str, str]:
    """The two coordinate axes across a link pointing at ``end`` (the two other than the one it
    runs most along), in x, y, z order."""
    k = int(np.argmax(np.abs(np.asarray(end, dtype=float))))
    a, b = (i for i in range(3) if i != k)
    return "xyz"[a], "xyz"[b]


def _vector(where: str, value, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (n,) or not np.all(np.isfinite(arr)):
        raise ScenarioError(where, f"must be {n} finite numbers")
    return arr


def validate(parts: Sequence[Part]) -> list[Part]:
    """Check every part (ScenarioError naming it, e.g. ``part 'Cable': …``) and return them with
    parents before children (order otherwise kept)."""
    by_name: dict[str, Part] = {}
    for p in parts:
        where = f"part '{p.name}'"
        if not isinstance(p.name, str) or not p.name:
            raise ScenarioError("part", "every part needs a name")
        if p.name in by_name:
            raise ScenarioError(where, "is listed twice")
        if p.joint not in JOINTS:
            raise ScenarioError(where, f"unknown joint {p.joint!r}; expected one of {', '.join(JOINTS)}")
        if p.axis not in AXES:
            raise ScenarioError(where, f"unknown axis {p.axis!r}; expected one of {', '.join(AXES)}")
        _vector(f"{where} position", p.position, 3)
        q = _vector(f"{where} orientation", p.orientation, 4)
        if abs(float(np.linalg.norm(q)) - 1.0) > 1e-6:
            raise ScenarioError(where, "its rest orientation is not a unit quaternion")
        end = _vector(f"{where} end", p.end, 3)
        if float(np.linalg.norm(end)) < MIN_LENGTH:
            raise ScenarioError(where, "the link has zero length (its end is at its joint)")
        if not (math.isfinite(p.mass) and p.mass > 0):
            raise ScenarioError(where, f"mass must be positive, got {p.mass:g}")
        inertia = _vector(f"{where} inertia", p.inertia, 3)
        if np.any(inertia < 0):
            raise ScenarioError(where, "inertia must not be negative")
        for key in ("damping", "grip"):
            value = float(getattr(p, key))
            if not (math.isfinite(value) and value >= 0):
                raise ScenarioError(where, f"{key} must be zero or positive, got {value:g}")
        if not math.isfinite(p.rate):
            raise ScenarioError(where, "initial rate must be finite")
        if p.grip > 0 and p.joint != "HINGE":
            raise ScenarioError(where, "grip (a trailer's wheels) needs a hinge joint")
        if p.joint == "HINGE":
            a = axis_vector(p.axis)
            lever = float(np.linalg.norm(np.cross(a, end)))
            if lever < MIN_LENGTH and inertia[AXES[p.axis][0]] <= 0:
                raise ScenarioError(where, "its hinge axis runs through its end, so the joint moves no mass "
                                    "(give it inertia about the axis or choose another axis)")
        by_name[p.name] = p
    ordered: list[Part] = []
    placed: set[str] = set()
    for p in parts:
        chain, node = [], p
        while node is not None and node.name not in placed:
            if any(c.name == node.name for c in chain):
                raise ScenarioError(f"part '{p.name}'", "its parents form a cycle")
            chain.append(node)
            if node.parent is None:
                node = None
            elif node.parent not in by_name:
                raise ScenarioError(f"part '{node.name}'", f"unknown parent part '{node.parent}'")
            else:
                node = by_name[node.parent]
        for q in reversed(chain):
            ordered.append(q)
            placed.add(q.name)
    return ordered


def _axis_quaternion(name: str, angle: np.ndarray) -> np.ndarray:
    half = 0.5 * np.asarray(angle, dtype=float)
    out = np.zeros(half.shape + (4,))
    out[..., 0] = np.cos(half)
    out[..., 1 + AXES[name][0]] = AXES[name][1] * np.sin(half)
    return out


def joint_quaternions(part: Part, angles: np.ndarray) -> np.ndarray:
    """R_joint(q) of eq. (1) as unit quaternions (w, x, y, z): angles (N, k) → (N, 4), k the
    number of the joint's axes."""
    from ..lie import quaternion
    angles = np.asarray(angles, dtype=float)
    axes = part.axes()
    if angles.ndim != 2 or angles.shape[1] != len(axes):
        raise ValueError(f"part '{part.name}': angles must have shape (N, {len(axes)}), got {angles.shape}")
    q = _axis_quaternion(axes[0], angles[:, 0])
    for j in range(1, len(axes)):
        q = quaternion.multiply(q, _axis_quaternion(axes[j], angles[:, j]))
    return q


def rest_poses(parts: Sequence[Part]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each part's rest frame in the vehicle's body frame: name → (R (3, 3), x (3,)); ``parts``
    parents first (as :func:`validate` returns them)."""
    from ..lie import quaternion
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for p in parts:
        Rp, xp = (np.eye(3), np.zeros(3)) if p.parent is None else out[p.parent]
        R = Rp @ quaternion.to_matrix(np.asarray(p.orientation, dtype=float))
        out[p.name] = (R, xp + Rp @ np.asarray(p.position, dtype=float))
    return out
