"""Constraint and cost groups shared by every vehicle, and the assembly of the NLP.

Kobilarov, Crane & Desbrun 2009, §6, Fig. 11: "subject to initial and final poses and velocities,
and for each pose along the path: dynamics (eqs. 9–10 or 16), pose and velocity bounds, shape
variable bounds, additional constraints on the k-th state"; ``docs/equations.md``, "DMOC". Here:

* dynamics, start, goal and velocity limits come from the vehicle model
  (``core.dmoc.models``); start values and exactly given goal values are fixed variables;
* waypoints: |p(g_k) − w|² ≤ r² at the node k = round(t/h) nearest to the waypoint time
  (p(g) the vehicle's reference point, or a given body point), or, for an ``exact`` waypoint, at its own time
  t = (k + s) h on the chord between nodes k and k+1: |(1 − s) p(g_k) + s p(g_{k+1}) − w|² ≤ r²;
  an optional heading is fixed at the nearest node;
* keep-out obstacles: for every node, every collision sphere (c_s, r_s) and every
  obstacle, d_o(x_k + R_k c_s) − r_s ≥ margin_o (``obstacles.py``), or ≥ the obstacle's floor at
  t_k around a contact (a vehicle keyed touching it: the floor is the spheres' clearance there,
  rising back to the margin, ``Obstacle.floors``);
* costs (``costs.py``): effort, duration, smoothness, path length, and the hazard
  Σ_k h w Σ_{o,s} exp(−(d_o(x_k + R_k c_s) − r_s)/ℓ) (around a contact, from the lowered floor).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import costs as C
from .models import Model
from .obstacles import Obstacle, ObstacleSet, hazard
from .problem import NLP, Group, GroupBatch, LastCall


@dataclass(frozen=True)
class Waypoint:
    time: float
    position: np.ndarray
    radius: float
    heading: float | None = None
    label: str = "waypoint"
    exact: bool = False     # imposed at its own time between nodes, not at the nearest node
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))   # the body point that passes (body frame)


@dataclass
class CostWeights:
    effort: float = 0.0
    duration: float = 0.0
    path_length: float = 0.0
    hazard: float = 0.0
    smoothness: float = 0.0
    hazard_length: float = 1.0
    input_weights: dict[str, float] = field(default_factory=dict)


@dataclass
class Spec:
    """What the scenario asks beyond the vehicle model: obstacles, waypoints, collision spheres, costs."""

    spheres: np.ndarray  # (S, 4): body centre x, y, z and radius
    obstacles: list[Obstacle] = field(default_factory=list)
    waypoints: list[Waypoint] = field(default_factory=list)
    cost: CostWeights = field(default_factory=CostWeights)


def waypoint_node(model: Model, time: float, duration: float) -> int:
    return int(np.clip(round(time / duration * model.N), 1, model.N))


def waypoint_bracket(model: Model, time: float, duration: float) -> tuple[int, float]:
    """(k, s) with time = (k + s) h, 0 ≤ s < 1, k + s within [1, N]; s is 0 within 1e-9 of a node."""
    x = float(np.clip(time / duration * model.N, 1.0, model.N))
    k = int(np.floor(x))
    s = x - k
    if s < 1e-9 or k >= model.N:
        return min(k, model.N), 0.0
    if s > 1.0 - 1e-9:
        return k + 1, 0.0
    return k, s


def waypoint_group(model: Model, wp: Waypoint, node: int) -> Group:
    """|p(g_k, c) − w|² ≤ r² with p(g, c) the world position of the body point c (``wp.point``; the
    reference point, the body origin, by default)."""
    nodes = np.array([node])
    idx = model.pose_idx[nodes]
    ref = model.pose_params(nodes)
    target = np.asarray(wp.position, dtype=float)[None, :]
    c = np.asarray(wp.point, dtype=float)

    def fun(X, w, *ref):
        p, _ = model.point_map(X, np.broadcast_to(c, (X.shape[0], 3)), *ref)
        return np.sum((p - w) ** 2, axis=1)[:, None]

    def jac(X, w, *ref):
        p, J = model.point_map(X, np.broadcast_to(c, (X.shape[0], 3)), *ref)
        return (2.0 * np.einsum("bi,bij->bj", p - w, J))[:, None, :]

    def hess(X, lam, w, *ref):
        """λ (2 JᵀJ + 2 Σ_i (p − w)_i ∇²p_i)."""
        body = np.broadcast_to(c, (X.shape[0], 3))
        p, J = model.point_map(X, body, *ref)
        H = 2.0 * (np.einsum("bij,bik->bjk", J, J) + model.point_curvature(X, body, p - w, *ref))
        return lam[:, 0, None, None] * H

    mask = _point_mask(model, origin=not np.any(c))
    return Group(f"waypoint {wp.label}", idx, fun, mask, jac=jac, hess=hess, params=(target,) + ref,
                 lower=-np.inf, upper=wp.radius**2, labels=[f"node {node}"])


def waypoint_chord_group(model: Model, wp: Waypoint, node: int, frac: float) -> Group:
    """|(1 − s) p(g_k, c) + s p(g_{k+1}, c) − w|² ≤ r² (s = ``frac`` in (0, 1)): the waypoint at its own
    time on the chord between nodes k and k+1, p(g, c) the world position of the body point c
    (``wp.point``; the body origin by default)."""
    nodes = np.array([node, node + 1])
    c = np.array([1.0 - frac, frac])
    P = model.pose_dim
    idx = model.pose_idx[nodes].reshape(1, -1)
    ref = tuple(r.reshape((1, len(nodes)) + r.shape[1:]) for r in model.pose_params(nodes))
    target = np.asarray(wp.position, dtype=float)[None, :]
    point = np.asarray(wp.point, dtype=float)

    def points(X, ref):
        """p_j and J_j of every node of the bracket: (B, n, 3), (B, n, 3, P)."""
        B = X.shape[0]
        Xn = X.reshape(B * len(nodes), P)
        refn = tuple(r.reshape((B * len(nodes),) + r.shape[2:]) for r in ref)
        p, J = model.point_map(Xn, np.broadcast_to(point, (Xn.shape[0], 3)), *refn)
        return p.reshape(B, len(nodes), -1), J.reshape(B, len(nodes), J.shape[-2], P), refn, Xn

    def fun(X, w, *ref):
        p, _, _, _ = points(X, ref)
        q = np.einsum("j,bji->bi", c, p)
        return np.sum((q - w) ** 2, axis=1)[:, None]

    def jac(X, w, *ref):
        p, J, _, _ = points(X, ref)
        q = np.einsum("j,bji->bi", c, p)
        g = 2.0 * np.einsum("bi,j,bjik->bjk", q - w, c, J)
        return g.reshape(X.shape[0], 1, -1)

    def hess(X, lam, w, *ref):
        """λ (2 KᵀK + 2 Σ_j c_j Σ_i (q − w)_i ∇²p_{j,i}) with K = [c_j J_j] and q = Σ_j c_j p_j."""
        B, n = X.shape[0], len(nodes)
        p, J, refn, Xn = points(X, ref)
        q = np.einsum("j,bji->bi", c, p)
        K = np.einsum("j,bjik->bijk", c, J).reshape(B, J.shape[2], n * P)
        H = 2.0 * np.einsum("bij,bik->bjk", K, K)
        wq = (q - w)[:, None, :] * c[None, :, None]  # each node's share of the contraction
        curv = model.point_curvature(Xn, np.broadcast_to(point, (B * n, 3)), wq.reshape(B * n, -1), *refn).reshape(B, n, P, P)
        for j in range(n):
            H[:, j * P:(j + 1) * P, j * P:(j + 1) * P] += 2.0 * curv[:, j]
        return lam[:, 0, None, None] * H

    mask = np.tile(_point_mask(model, origin=not np.any(point)), (1, len(nodes)))
    label = f"node {node + frac:.4g}"
    return Group(f"waypoint {wp.label}", idx, fun, mask, jac=jac, hess=hess, params=(target,) + ref,
                 lower=-np.inf, upper=wp.radius**2, labels=[label])


def _point_mask(model: Model, origin: bool | np.ndarray) -> np.ndarray:
    """Which pose coordinates move a body point: all, except the rotation for a point on the
    rotation axis (SE(3): the body origin; SE(2): b_x = b_y = 0). ``origin`` may be per instance:
    the mask is then (K, 1, pose_dim)."""
    origin = np.asarray(origin, dtype=bool)
    mask = np.ones(origin.shape + (1, model.pose_dim), dtype=bool)
    rot = slice(0, 3) if model.se3 else slice(0, 1)
    mask[..., 0, rot] = ~origin[..., None]
    return mask


def _sphere_instances(model: Model, spheres: np.ndarray):
    nodes = np.arange(model.N + 1)
    S = len(spheres)
    node_of = np.repeat(nodes, S)
    body = np.tile(spheres[:, :3], (len(nodes), 1))
    radius = np.tile(spheres[:, 3], len(nodes))
    idx = model.pose_idx[node_of]
    ref = model.pose_params(node_of)
    labels = [f"node {k}, collision sphere {s + 1}" for k in nodes for s in range(S)]
    axis = slice(0, 3) if model.se3 else slice(0, 2)
    origin = np.all(body[:, axis] == 0.0, axis=1)  # per instance: does the rotation move it?
    return idx, body, radius, ref, labels, origin


def _chain(g: np.ndarray, J: np.ndarray) -> np.ndarray:
    """∇_p d J (O, B, 1, P) for gradients g (O, B, 3) and J = ∂p/∂X (B, 3, P): one (O, 3)·(3, P) product
    per instance instead of one (1, 3)·(3, P) product per obstacle and instance: the same sums, several
    times cheaper; equal to round-off (bit for bit where BLAS runs the same kernel for both shapes).
    Written through a transposed view, so the result is contiguous in (O, B, P) (the NLP gathers from it)."""
    out = np.empty(g.shape[:2] + J.shape[2:])
    np.matmul(g.swapaxes(0, 1), J, out=out.swapaxes(0, 1))  # (the methods: np.swapaxes adds a Python wrapper)
    return out[:, :, None, :]


class _Shared(GroupBatch):
    """What every obstacle's clearance groups share: the sphere instances and, at the last X, the body
    points and the clearance terms of *all* obstacles, each kind in one vectorised call
    (:class:`~core.dmoc.obstacles.ObstacleSet`): the first group asked computes them, the others read
    their row. As a :class:`~core.dmoc.problem.GroupBatch` it gives the NLP all the clearance rows in
    one call, and their Lagrangian Hessian as one per instance:
    Σ_o λ_o ∇²_X d_o = Jᵀ (Σ_o λ_o ∇²_p d_o) J + Σ_i (Σ_o λ_o ∂_i d_o) ∇²p_i."""

    def __init__(self, model: Model, spheres: np.ndarray, obstacles: list[Obstacle] | None = None):
        self.model = model
        self.instances = _sphere_instances(model, spheres)
        self.obstacles = ObstacleSet(obstacles or [])
        self.points = LastCall(model.point_map)
        self.first = LastCall(self._first)
        self.second = LastCall(self._second)
        self._members: list[Group | None] = [None] * len(self.obstacles)  # set by clearance_group

    @property
    def groups(self) -> list[Group]:
        """Every obstacle's clearance group, in the obstacles' order (empty until all are built)."""
        return [] if any(g is None for g in self._members) else list(self._members)

    def _at(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, body, _, ref, _, _ = self.instances
        return self.points(X, body, *ref)

    def values(self, X: np.ndarray) -> np.ndarray:
        """d_o(p) − r_s (O, K, 1): every obstacle's clearance rows."""
        p, _ = self._at(X)
        d, _ = self.obstacles.evaluate(p)
        return (d - self.instances[2])[:, :, None]

    def jacobian(self, X: np.ndarray) -> np.ndarray:
        """∂d_o/∂X = ∇_p d_o J (O, K, 1, P)."""
        p, J = self._at(X)
        _, g = self.obstacles.evaluate(p)
        return _chain(g, J)

    def hessian(self, X: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Σ_o λ_o ∇²_X d_o (K, P, P) for lam (O, K, 1): the λ-weighted sum is formed in the world frame
        first (one JᵀHJ and one body-point curvature per instance, not one per obstacle)."""
        _, body, _, ref, _, _ = self.instances
        p, J = self._at(X)
        lam = lam[:, :, 0]
        _, g = self.obstacles.evaluate(p)
        Hp = self.obstacles.weighted_hessian(p, lam)
        w = np.matmul(lam.T[:, None, :], g.swapaxes(0, 1))[:, 0]  # Σ_o λ_o ∇_p d_o (K, 3)
        return J.swapaxes(1, 2) @ (Hp @ J) + self.model.point_curvature(X, body, w, *ref)

    def _first(self, X, b, *ref):
        """d (O, B) and ∂d/∂X (O, B, 1, P) = ∇_p d J for every obstacle."""
        p, J = self.points(X, b, *ref)
        d, g = self.obstacles.distances(p)
        return d, _chain(g, J)

    def _second(self, X, b, *ref):
        """∇²_X d (O, B, P, P) = Jᵀ ∇²_p d J + Σ_i ∂_i d ∇²p_i for every obstacle."""
        p, J = self.points(X, b, *ref)
        _, g, Hd = self.obstacles.distances(p, hessian=True)
        H = np.swapaxes(J, 1, 2) @ (Hd @ J)
        # the body-point curvature for all obstacles in one call: g (O, B, 3) broadcasts over the obstacles
        return H + self.model.point_curvature(X, b, g, *ref)


def node_times(model: Model) -> np.ndarray:
    """t_k = k T / N of every node (a fixed duration: contacts are only read with one)."""
    if not model.fixed[model.T]:
        raise ValueError("node times need a fixed duration")
    return np.arange(model.N + 1) * (float(model.base[model.T]) / model.N)


def clearance_floor(model: Model, obstacle: Obstacle) -> float | np.ndarray:
    """The clearance rows' lower bound: the margin, or with contacts one floor per node (``Obstacle.floors``)."""
    if not obstacle.contacts:
        return obstacle.margin
    return obstacle.floors(node_times(model))


def clearance_group(model: Model, obstacle: Obstacle, spheres: np.ndarray, shared: _Shared | None = None) -> Group:
    """d_o(x_k + R_k c_s) − r_s ≥ margin for every node and collision sphere; with contacts, ≥ the
    obstacle's floor at node k (lowered around the contact times, ``Obstacle.floors``)."""
    if shared is None or not any(ob is obstacle for ob in shared.obstacles.obstacles):
        shared = _Shared(model, spheres, [obstacle])
    o = shared.obstacles.index(obstacle)
    idx, body, radius, ref, labels, origin = shared.instances
    first, second = shared.first, shared.second

    def fun(X, b, r, *ref):
        return (first(X, b, *ref)[0][o] - r)[:, None]

    def jac(X, b, r, *ref):
        return first(X, b, *ref)[1][o]

    def hess(X, lam, b, r, *ref):
        """λ (Jᵀ ∇²d J + Σ_i ∂_i d ∇²p_i), J = ∂p/∂X."""
        return lam[:, 0, None, None] * second(X, b, *ref)[o]

    floor = clearance_floor(model, obstacle)
    if np.ndim(floor):  # one floor a node: the instances run node by node, every sphere of a node in turn
        floor = np.repeat(floor, len(body) // (model.N + 1))[:, None]
    group = Group(obstacle.label, idx, fun, _point_mask(model, origin), jac=jac, hess=hess,
                  params=(body, radius) + ref, lower=floor, upper=np.inf, labels=labels, batch=shared)
    shared._members[o] = group
    return group


def hazard_group(model: Model, obstacle: Obstacle, spheres: np.ndarray, weight: float, length: float) -> Group:
    """Σ_k h w exp(−(d − r_s)/ℓ) over nodes 1…N and collision spheres; local = (pose_k, T). Around a contact
    the clearance is measured from the lowered floor (d − r_s + margin − floor_k): touching costs what
    keeping the margin costs elsewhere."""
    idx, body, radius, ref, _, origin = _sphere_instances(model, spheres)
    S = len(spheres)
    if obstacle.contacts:  # folded into the radius: r_s − (margin − floor_k)
        radius = radius - np.repeat(obstacle.margin - clearance_floor(model, obstacle), S)
    keep = np.arange(S, idx.shape[0])  # nodes 1..N
    idx = np.concatenate([idx[keep], np.full((len(keep), 1), model.T)], axis=1)
    body, radius, origin = body[keep], radius[keep], origin[keep]
    ref = tuple(r[keep] for r in ref)
    P = model.pose_dim
    N = model.N

    def fun(X, b, r, *ref):
        p, _ = model.point_map(X[:, :P], b, *ref)
        d, _ = obstacle.distance(p)
        phi, _ = hazard(d - r, length)
        return (weight * X[:, P] / N * phi)[:, None]

    def jac(X, b, r, *ref):
        p, J = model.point_map(X[:, :P], b, *ref)
        d, g = obstacle.distance(p)
        phi, dphi = hazard(d - r, length)
        h = X[:, P] / N
        out = np.empty((X.shape[0], 1, P + 1))
        out[:, 0, :P] = (weight * h * dphi)[:, None] * np.einsum("bi,bij->bj", g, J)
        out[:, 0, P] = weight * phi / N
        return out

    def hess(X, lam, b, r, *ref):
        """w λ [h(φ'' ∇d∇dᵀ + φ' ∇²d), φ' ∇d/N; φ' ∇dᵀ/N, 0] with ∇d = Jᵀ∇_p d, ∇²d = Jᵀ∇²_p d J + curvature."""
        p, J = model.point_map(X[:, :P], b, *ref)
        d, g, Hd = obstacle.distance_hessian(p)
        phi, dphi = hazard(d - r, length)
        ddphi = phi / (length * length)
        gx = np.einsum("bi,bij->bj", g, J)
        Hx = np.swapaxes(J, 1, 2) @ (Hd @ J) + model.point_curvature(X[:, :P], b, g, *ref)
        h = X[:, P] / N
        s = weight * lam[:, 0]
        H = np.zeros((X.shape[0], P + 1, P + 1))
        H[:, :P, :P] = (s * h)[:, None, None] * (ddphi[:, None, None] * gx[:, :, None] * gx[:, None, :]
                                                 + dphi[:, None, None] * Hx)
        H[:, :P, P] = H[:, P, :P] = (s * dphi / N)[:, None] * gx
        return H

    pm = _point_mask(model, origin)
    mask = np.concatenate([pm, np.ones(pm.shape[:-1] + (1,), dtype=bool)], axis=-1)
    return Group(f"cost: hazard ({obstacle.label})", idx, fun, mask, jac=jac, hess=hess, params=(body, radius) + ref)


def assemble(model: Model, spec: Spec) -> NLP:
    """The NLP of the model (dynamics, boundary data, bounds) plus the shared groups of ``spec``."""
    base, fixed, lo, hi = model.base, model.fixed, model.lo, model.hi
    groups: list[Group] = list(model.dynamics()) + list(model.extra_groups)
    duration = float(base[model.T]) if fixed[model.T] else None
    for wp in spec.waypoints:
        node = waypoint_node(model, wp.time, duration)
        k, frac = waypoint_bracket(model, wp.time, duration) if wp.exact else (node, 0.0)
        groups.append(waypoint_chord_group(model, wp, k, frac) if frac else waypoint_group(model, wp, k))
        if wp.heading is not None:
            groups.extend(model.fix_heading(node, wp.heading, wp.label))
    shared = _Shared(model, spec.spheres, spec.obstacles) if spec.obstacles else None
    for ob in spec.obstacles:
        groups.append(clearance_group(model, ob, spec.spheres, shared))
    cw = spec.cost
    u_idx = model.control_idx
    weights = np.array([cw.input_weights.get(name, 1.0) for name in model.inputs])
    cost_groups: list[Group] = []
    if cw.effort:
        cost_groups.append(C.effort(u_idx, model.T, weights, cw.effort))
    if cw.smoothness and model.N > 1:
        cost_groups.append(C.smoothness(u_idx, model.T, weights, cw.smoothness))
    if cw.duration and not fixed[model.T]:
        cost_groups.append(C.duration(model.T, cw.duration))
    if cw.path_length:
        cost_groups.append(C.path_length(model.position_idx, cw.path_length))
    if cw.hazard:
        for ob in spec.obstacles:
            cost_groups.append(hazard_group(model, ob, spec.spheres, cw.hazard, cw.hazard_length))
    meta = {"lower_full": lo.copy(), "upper_full": hi.copy(),
            "presolve_checks": model.presolve_checks() + _goal_obstacle_checks(model, spec)}
    return NLP(model.layout, base, fixed, lo, hi, groups, cost_groups, meta=meta)


def _goal_obstacle_checks(model: Model, spec: Spec):
    """A goal position inside an obstacle (by more than the spheres can reach) is infeasible."""
    goal = getattr(model, "goal_position", None)
    if goal is None or not spec.obstacles:
        return []
    reach = np.linalg.norm(spec.spheres[:, :3], axis=1) - spec.spheres[:, 3]  # clearance ≤ d(goal) + reach

    def check() -> str:
        for ob in spec.obstacles:
            d, _ = ob.distance(np.asarray(goal, dtype=float)[None, :])
            best = float(d[0] + np.max(reach))
            floor = float(np.ravel(clearance_floor(model, ob))[-1])  # a contact at the goal lowers it
            if best < floor:
                what = "margin" if floor == ob.margin else "floor (a contact)"
                return (f"{ob.label}: the goal position is inside it or closer than its {what} "
                        f"(clearance at most {best:.3g} m < {what} {floor:g} m)")
        return ""

    return [check]


__all__ = ["Waypoint", "CostWeights", "Spec", "assemble", "waypoint_group", "clearance_group", "clearance_floor",
           "hazard_group", "waypoint_node"]
