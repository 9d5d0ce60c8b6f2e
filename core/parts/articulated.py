"""Articulated parts on a free-base vehicle: the vehicle and its hinged parts as one chain of
rigid bodies (seed 004 §V, :class:`core.vehicles.chain.Chain`), integrated by the Lie group
families (cg2–cg4, cf2–cf4, mk2–mk4) or RK4.

Mapping from the parts (:mod:`.spec`, hinges only: the chain's joints are revolute):

- the base is the vehicle: ``base_mass``, principal ``base_inertia`` about its frame's origin;
- every chain body frame is, at q = 0, parallel to the vehicle's frame at rest, with its origin
  at the joint (the chain's convention). With (R_p, x_p) the part's rest frame in the vehicle
  frame (:func:`.spec.rest_poses`) and x_parent the parent joint (0 for the vehicle):

      position = x_p − x_parent,  axis = R_p â,  offset = R_p · end,  J = R_p diag(I) R_pᵀ   (1)

  J must be diagonal (a part turned by right angles, or with equal moments), since the chain
  takes principal moments in its frames;
- the chain's joint angle q_k turns body k about R_p â, which is the part's object turned
  about its own axis â by q_k: the same joint rotation R_joint(q) = exp(q â) as a hinge of the
  secondary-motion tree (eq. 1 of :mod:`.spec`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ScenarioError
from ..trajectory import Trajectory
from ..vehicles.chain import CHAIN_METHODS, Chain, ChainState, Joint
from .spec import Part, axis_vector, rest_poses, validate

METHODS: tuple[str, ...] = tuple(m for m in CHAIN_METHODS if m != "magnus")


def _inertia(part: Part, R: np.ndarray) -> tuple[float, float, float]:
    J = R @ np.diag(np.asarray(part.inertia, dtype=float)) @ R.T
    off = J - np.diag(np.diag(J))
    if np.max(np.abs(off)) > 1e-9 * max(1.0, float(np.max(np.abs(J)))):
        raise ScenarioError(f"part '{part.name}'", "its axes are not lined up with the vehicle's (turned by other "
                            "than right angles), so its inertia needs equal moments")
    d = np.diag(J)
    if np.any(d <= 0):
        raise ScenarioError(f"part '{part.name}'", "an articulated part needs positive inertia moments")
    return tuple(float(x) for x in d)


def build_chain(parts: Sequence[Part], base_mass: float, base_inertia: Sequence[float],
                gravity: bool = False) -> tuple[Chain, list[Part]]:
    """The chain of eq. (1) and the parts in joint order (joint k = parts[k − 1])."""
    parts = validate(parts)
    if not parts:
        raise ScenarioError("parts", "no parts to simulate")
    poses = rest_poses(parts)
    index = {p.name: k for k, p in enumerate(parts, start=1)}
    joints = []
    for p in parts:
        if p.joint != "HINGE":
            raise ScenarioError(f"part '{p.name}'", "an articulated (free-base) part turns on a hinge; "
                                "swing joints need Secondary Motion")
        if p.grip > 0:
            raise ScenarioError(f"part '{p.name}'", "grip needs Secondary Motion (the free base has no ground)")
        R, x = poses[p.name]
        x_parent = np.zeros(3) if p.parent is None else poses[p.parent][1]
        joints.append(Joint(parent=0 if p.parent is None else index[p.parent],
                            position=tuple(x - x_parent), axis=tuple(R @ axis_vector(p.axis)),
                            mass=float(p.mass), inertia=_inertia(p, R),
                            offset=tuple(R @ np.asarray(p.end, dtype=float))))
    return Chain(float(base_mass), tuple(float(x) for x in base_inertia), joints, bool(gravity)), parts


@dataclass
class ArticulatedResult:
    trajectory: Trajectory            # the base (vehicle) and the chain's series
    angles: dict[str, np.ndarray]     # part → (N+1, 1) joint angle about its axis
    parts: list[Part]


def simulate(parts: Sequence[Part], base_mass: float, base_inertia: Sequence[float], R0: np.ndarray,
             x0: np.ndarray, omega0: Sequence[float], v0: Sequence[float], dt: float, steps: int,
             method: str = "cf4", gravity: bool = False) -> ArticulatedResult:
    """Integrate the vehicle and its parts from the base pose (R0, x0) and body velocity
    (ω0, v0), parts at rest placement with their initial ``rate``; ``method`` in METHODS."""
    if method not in METHODS:
        raise ScenarioError("method", f"unknown value {method!r}; valid: {', '.join(METHODS)}")
    chain, parts = build_chain(parts, base_mass, base_inertia, gravity)
    n = chain.n_joints
    state = ChainState(R=np.asarray(R0, dtype=float), x=np.asarray(x0, dtype=float),
                       omega=np.asarray(omega0, dtype=float), v=np.asarray(v0, dtype=float),
                       q=np.zeros(n), qd=np.array([p.rate for p in parts], dtype=float))
    traj = chain.simulate(state, dt, steps, method)
    if not (np.all(np.isfinite(traj.position)) and all(np.all(np.isfinite(s)) for s in traj.shape.values())):
        raise ScenarioError("articulated motion", f"the {method} integration blew up; try more steps per frame")
    angles = {p.name: np.asarray(traj.shape[f"joint_{k}"], dtype=float)[:, None]
              for k, p in enumerate(parts, start=1)}
    return ArticulatedResult(traj, angles, parts)
