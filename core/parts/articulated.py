"""Articulated parts on a free-base vehicle: the vehicle and its hinged parts as one chain of rigid
bodies (Park & Chung 2005, §V, :class:`core.vehicles.chain.Chain`), integrated by the Lie group
families (cg2–cg4, cf2–cf4, mk2–mk4) or RK4.

The base is the vehicle (``base_mass``, principal ``base_inertia`` about its frame's origin); the
parts are the chain's revolute joints (:mod:`.spec`, hinges only). Every chain body frame is, at
q = 0, parallel to the vehicle's frame at rest, with its origin at the joint. With (R_p, x_p) the
part's rest frame in the vehicle frame (:func:`.spec.rest_poses`) and x_parent the parent joint
(0 for the vehicle):

    position = x_p − x_parent,  axis = R_p â,  offset = R_p · end,  J = R_p diag(I) R_pᵀ   (1)

J must be diagonal (a part turned by right angles, or with equal moments: the chain takes principal
moments in its frames), and the joint angle q_k turns
the part about its own axis â: the joint rotation exp(q â) of a hinge of the secondary-motion tree
(eq. 1 of :mod:`.spec`). Forces, evaluated at every stage (inputs held over each step, as
:mod:`core.integrators.lie_rk` does for the rigid body): gravity on every body; the vehicle's own
wrench f(k, R, x, ξ_base) on the base (:mod:`.base`: rotor, buoyancy, damping, current, wind,
thrusters) about its centre of mass; joint damping τ_k = −d_k q̇_k (the part's ``damping``).
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ScenarioError
from ..integrators.common import WrenchFunction
from ..integrators.lie_rk import LieProblem, StageRates, rk4_quaternion_step, run, tableau_step
from ..trajectory import Trajectory
from ..vehicles.chain import CHAIN_METHODS, Chain, ChainState, Joint
from .base import VehicleBase
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


def chain_problem(chain: Chain, damping: np.ndarray, base_wrench: WrenchFunction | None) -> LieProblem:
    """The chain's Lie-group problem with the forces of the module docstring at every stage."""
    n = chain.n_joints
    damped = bool(np.any(damping > 0))

    def rates_for_step(k: int, R: np.ndarray, x: np.ndarray, y: np.ndarray) -> StageRates:
        def rates(Rs: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
            tau = -damping * ys[..., 6 + n:] if damped else None
            wrench = None
            if base_wrench is not None:
                wrench = np.zeros(ys.shape[:-1] + (n + 1, 6))
                wrench[..., 0, :] = base_wrench(k, Rs, xs, ys[..., :6])
            return chain.forward_dynamics(Rs, xs, ys, tau, wrench)
        return rates

    return LieProblem(rates_for_step, pose_free=not (chain.gravity or base_wrench is not None))


def simulate(parts: Sequence[Part], base_mass: float, base_inertia: Sequence[float], R0: np.ndarray,
             x0: np.ndarray, omega0: Sequence[float], v0: Sequence[float], dt: float, steps: int,
             method: str = "cf4", gravity: bool = False, base_wrench: WrenchFunction | None = None,
             label: Callable[[float], str] | None = None) -> ArticulatedResult:
    """Integrate the vehicle and its parts from the base pose (R0, x0) and body velocity
    (ω0, v0), parts at rest placement with their initial ``rate``; ``method`` in METHODS.
    ``base_wrench`` f(k, R, x, ξ) is the vehicle's own wrench on the base without its weight
    (:mod:`.base`); a blow-up is refused naming the moment by ``label(t)`` (default "t = … s")."""
    if method not in METHODS:
        raise ScenarioError("method", f"unknown value {method!r}; valid: {', '.join(METHODS)}")
    h, steps = float(dt), int(steps)
    if steps < 1 or not (np.isfinite(h) and h > 0):
        raise ScenarioError("articulated motion", f"needs at least one step of a finite dt > 0, got {steps} of {dt}")
    label = label or (lambda t: f"t = {t:.4g} s")
    chain, parts = build_chain(parts, base_mass, base_inertia, gravity)
    n = chain.n_joints
    state = ChainState(R=np.asarray(R0, dtype=float), x=np.asarray(x0, dtype=float),
                       omega=np.asarray(omega0, dtype=float), v=np.asarray(v0, dtype=float),
                       q=np.zeros(n), qd=np.array([p.rate for p in parts], dtype=float))
    damping = np.array([p.damping for p in parts], dtype=float)
    step = rk4_quaternion_step if method == "rk4" else tableau_step(method)
    t0 = _time.perf_counter()
    res = run(chain_problem(chain, damping, base_wrench), step, state.R, state.x, state.y(n), h, steps, ())
    if res.steps_taken < steps:
        raise ScenarioError("articulated motion", f"the {method} integration blew up at "
                            f"{label(h * (res.steps_taken + 1))}; try more steps per frame")
    traj = chain.trajectory(res.R, res.x, res.y, h)
    traj.stats = {**res.stats(()), "method": method, "steps": steps, "dt": h,
                  "wall_time_s": _time.perf_counter() - t0}
    angles = {p.name: np.asarray(traj.shape[f"joint_{k}"], dtype=float)[:, None]
              for k, p in enumerate(parts, start=1)}
    return ArticulatedResult(traj, angles, parts)


def simulate_vehicle(parts: Sequence[Part], base: VehicleBase, R0: np.ndarray, x0: np.ndarray,
                     omega0: Sequence[float], v0: Sequence[float], dt: float, steps: int, method: str = "cf4",
                     gravity: bool = True, label: Callable[[float], str] | None = None) -> ArticulatedResult:
    """:func:`simulate` with the vehicle model ``base`` (its mass, inertia and own wrench); the
    trajectory's ``shape`` also carries the vehicle's animation series (``base.shape``) and its
    ``controls`` the inputs per step."""
    if base.steps is not None and base.steps != int(steps):
        raise ScenarioError("[controls]", f"the {base.kind}'s inputs cover {base.steps} steps, the simulation "
                            f"takes {int(steps)}")
    res = simulate(parts, base.mass, base.inertia, R0, x0, omega0, v0, dt, steps, method, gravity,
                   base.wrench, label)
    traj = res.trajectory
    traj.shape.update(base.shape(traj.time))
    traj.controls.update({name: np.asarray(u, dtype=float)[:steps] for name, u in base.controls.items()})
    traj.stats["vehicle"] = base.kind
    return res
