"""Secondary motion: parts hung on a moving vehicle, simulated by the tree variational integrator.

The vehicle's pose samples drive the six kinematic root frames of
:func:`core.tree.prescribed.vehicle_root` (Johnson & Murphey: kinematic configuration variables); each
part adds, under its parent's frame (eq. 1 of :mod:`.spec`):

    {name}.rest   fixed: position and rest orientation in the parent's frame
    {name}.1      rotation about the first joint axis, variable "{name}.1"
    {name}        rotation about the second (swing joints), variable "{name}.2"
    {name}.end    fixed at ``end``: the part's mass and inertia (the link length is |end|)

(for a hinge, "{name}.1" is the frame ``{name}``). Joint damping is a damper on each joint
variable; a hinge part with ``grip`` gets the lateral wheel damping of :mod:`.grip` at its end,
across the link and the hinge axis (n = â × end / |â × end|). Gravity acts along −z of the
world. The parts start at rest relative to the vehicle (q = 0, q̇ = 0 for the joints).

:func:`simulate` returns every part's joint angles at every node; the positions of the
joints and ends follow from the tree's kinematics, so a link's length and the attachment of
its joint to its parent hold exactly (by construction, not by a constraint solve).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..errors import ScenarioError
from ..lie import quaternion
from ..tree import variational
from ..tree.frames import Frame, Tree
from ..tree.prescribed import vehicle_drives, vehicle_root
from ..tree.system import Body, Damper
from .grip import Grip, GripSystem
from .spec import AXES, Part, axis_vector, validate

ROOT = "vehicle"
GRAVITY = 9.81
MAX_PITCH = math.radians(85.0)   # the root's Z-Y-X Euler chain is singular at ±90°


def frames_of(part: Part) -> list[Frame]:
    """The tree frames of one part (module docstring); its parent is ``ROOT`` or its parent part."""
    parent = ROOT if part.parent is None else part.parent
    frames = [Frame(f"{part.name}.rest", parent, "fixed", position=tuple(float(x) for x in part.position),
                    orientation=tuple(float(x) for x in part.orientation))]
    axes = part.axes()
    above = f"{part.name}.rest"
    for j, axis in enumerate(axes, start=1):
        name = part.name if j == len(axes) else f"{part.name}.{j}"
        frames.append(Frame(name, above, "r" + axis[-1], variable=f"{part.name}.{j}"))
        above = name
    frames.append(Frame(f"{part.name}.end", part.name, "fixed", position=tuple(float(x) for x in part.end)))
    return frames


def _signs(part: Part) -> np.ndarray:
    """Sign between each tree variable (about +x/+y/+z) and the joint angle about the part's axis."""
    return np.array([AXES[a][1] for a in part.axes()])


def build_system(parts: Sequence[Part], time: np.ndarray, position: np.ndarray, orientation: np.ndarray,
                 gravity: bool = True) -> GripSystem:
    """The tree of the vehicle root and ``parts`` (validated), driven by pose samples (time (N,),
    position (N, 3) in m, orientation (N, 4) w x y z)."""
    parts = validate(parts)
    if not parts:
        raise ScenarioError("parts", "no parts to simulate")
    frames = vehicle_root(ROOT)
    bodies, dampers, grips = [], [], []
    for p in parts:
        frames += frames_of(p)
        bodies.append(Body(f"{p.name}.end", float(p.mass), tuple(float(x) for x in p.inertia)))
        if p.damping > 0:
            dampers += [Damper(f"{p.name}.{j}", float(p.damping)) for j in range(1, len(p.axes()) + 1)]
        if p.grip > 0:
            lateral = np.cross(axis_vector(p.axis), np.asarray(p.end, dtype=float))
            norm = float(np.linalg.norm(lateral))
            if norm < 1e-9:
                raise ScenarioError(f"part '{p.name}'", "grip needs a hinge axis across the link")
            grips.append(Grip(f"{p.name}.end", (0.0, 0.0, 0.0), tuple(lateral / norm), float(p.grip)))
    drives = vehicle_drives(np.asarray(time, dtype=float), np.asarray(position, dtype=float),
                            np.asarray(orientation, dtype=float), ROOT)
    g = (0.0, 0.0, -GRAVITY if gravity else 0.0)
    return GripSystem(Tree(frames), bodies, gravity=g, dampers=dampers, drives=drives, grips=grips)


def check_pitch(orientation: np.ndarray, label: Callable[[float], str], time: np.ndarray) -> None:
    """Refuse a vehicle that pitches near ±90° (naming the first such sample by ``label``)."""
    R = quaternion.to_matrix(np.asarray(orientation, dtype=float))
    pitch = np.arcsin(np.clip(-R[:, 2, 0], -1.0, 1.0))
    bad = np.flatnonzero(np.abs(pitch) > MAX_PITCH)
    if bad.size:
        k = int(bad[0])
        raise ScenarioError(f"at {label(float(time[k]))}",
                            f"the vehicle pitches to {math.degrees(pitch[k]):.0f}°; secondary motion "
                            f"follows vehicles that stay within ±{math.degrees(MAX_PITCH):.0f}° of level")


@dataclass
class SecondaryResult:
    time: np.ndarray                                     # (N+1,)
    angles: dict[str, np.ndarray]                        # part → (N+1, k) joint angles about its axes
    parts: list[Part]                                    # parents first
    stats: dict = field(default_factory=dict)


def simulate(parts: Sequence[Part], time: np.ndarray, position: np.ndarray, orientation: np.ndarray,
             dt: float, steps: int, gravity: bool = True,
             label: Callable[[float], str] | None = None) -> SecondaryResult:
    """Simulate ``parts`` on a vehicle moving through the pose samples, from t = time[0] with
    ``steps`` steps of ``dt`` (midpoint VI). Raises ScenarioError for bad input or when Newton
    fails, naming the moment by ``label(t)`` (default "t = … s")."""
    label = label or (lambda t: f"t = {t:.4g} s")
    time = np.asarray(time, dtype=float)
    if time.ndim != 1 or time.size < 2:
        raise ScenarioError("vehicle motion", "needs at least 2 pose samples")
    if not (math.isfinite(dt) and dt > 0) or int(steps) < 1:
        raise ScenarioError("integrator", f"needs dt > 0 and at least one step, got dt={dt}, steps={steps}")
    check_pitch(orientation, label, time)
    parts = validate(parts)
    system = build_system(parts, time - time[0], position, orientation, gravity)
    tree = system.tree
    q0 = np.zeros(tree.n)
    dq0 = np.zeros(tree.n)
    run = variational.simulate(system, q0, dq0, float(dt), int(steps))
    if run.blew_up:
        raise ScenarioError("secondary motion", f"the integrator failed at {label(time[0] + float(run.time[-1]))} "
                            f"({run.message.split(' (')[0]}); try more steps per frame or more damping")
    angles = {}
    for p in parts:
        idx = [tree.var_index[f"{p.name}.{j}"] for j in range(1, len(p.axes()) + 1)]
        angles[p.name] = run.q[:, idx] * _signs(p)
    stats = {"method": "variational", "dt": float(dt), "steps": int(steps), "wall_time_s": run.wall_time_s,
             "newton_iterations_mean": float(np.mean(run.iterations)) if run.iterations.size else 0.0,
             "variables": tree.n, "dynamic_variables": int(system.dyn.size)}
    return SecondaryResult(time=time[0] + run.time, angles=angles, parts=parts, stats=stats)


def end_positions(system: GripSystem, q: np.ndarray) -> dict[str, np.ndarray]:
    """World positions of every frame of the system at configurations q (N, n): name → (N, 3)."""
    G = system.tree.transforms(np.asarray(q, dtype=float))
    return {name: G[..., k, :3, 3] for k, name in enumerate(system.tree.names)}
