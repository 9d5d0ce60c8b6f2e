"""Default initial guess: interpolation of start, waypoints and goal, or a forward simulation.

When the scenario gives positions to reach (waypoints, a goal position), the reference
point follows the piecewise-linear interpolation of start → waypoints → goal in time
(nodes at the waypoint times), pushed out of obstacles along the distance gradient (round them, not
over them, for a vehicle on the water), and the model fills the rest on its group from that path
(SE(2): heading along the path, shape and velocities from differences; SE(3): orientation
interpolated on SO(3) through the exponential, see the models). Without any position to reach, the guess is a forward
simulation of the model from its start with nominal controls (zero, or hover for an
aircraft) — exactly feasible for the dynamics.
"""
from __future__ import annotations

import numpy as np

from .constraints import Spec, clearance_floor, waypoint_node
from .models import Model


def duration_guess(model: Model) -> float:
    if model.fixed[model.T]:
        return float(model.base[model.T])
    lo, hi = float(model.lo[model.T]), float(model.hi[model.T])
    return 0.5 * (lo + hi) if np.isfinite(hi) else max(lo, 1.0) * 2.0


def push_out(path: np.ndarray, spec: Spec, keep: np.ndarray, sweeps: int = 3, floors=None,
             on_surface: bool = False) -> np.ndarray:
    """Move path points whose collision spheres could touch an obstacle out along ∇d (never the kept nodes).
    ``floors``: per obstacle, its clearance floor at each path point (lowered around a contact), else
    its margin. ``on_surface``: the vehicle keeps to the water, so points go round an obstacle, not over
    it (see :class:`_Pusher`)."""
    path = np.array(path, dtype=float)
    if not spec.obstacles:
        return path
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    pusher = _Pusher(spec, len(path), floors, on_surface)
    for _ in range(sweeps):
        pusher.sweep(path, movable)
    return path


class _Pusher:
    """One sweep over the obstacles pushes the movable points that are closer than they need be out along
    ∇d, obstacle after obstacle. It keeps, per obstacle and point, a lower bound of the point's distance:
    signed distances to spheres, capsules and boxes are 1-Lipschitz, so a point that moved by δ since its
    distance d was computed is still at least d − δ away. Points whose bound already clears what they
    need are not evaluated again: the same pushes as evaluating every point (the smoothing's 200 sweeps
    touch only the points near an obstacle).

    ``on_surface``: a vehicle on the water goes round an obstacle, never over it. Where ∇d points
    more up (or down) than sideways (a buoy or a low block whose top is nearer than its side), its points
    move along the horizontal part of ∇d taken at the obstacle's middle height instead: a boat lifted out
    of the water is a guess the optimiser takes hundreds of iterations to undo."""

    SLACK = 1e-9   # m: evaluate a point whose bound is this close to what it needs (round-off in the bound)
    LIPSCHITZ = ("sphere", "capsule", "box")   # exact signed distances; any other kind is evaluated every time

    def __init__(self, spec: Spec, n_points: int, floors=None, on_surface: bool = False):
        self.spec = spec
        self.on_surface = on_surface
        reach = float(np.max(spec.spheres[:, 3]))  # the spheres' offsets are left to the solver
        self.need = np.stack([np.broadcast_to((ob.margin if floors is None else floors[o]) + reach + 0.05,
                                              (n_points,)) for o, ob in enumerate(spec.obstacles)])
        self.trigger = self.need + self.SLACK
        self.bound = np.full(self.need.shape, -np.inf)   # (obstacle, point)
        self.tracked = [ob.kind in self.LIPSCHITZ for ob in spec.obstacles]

    def moved(self, delta: np.ndarray) -> None:
        """Points moved by ``delta`` (per point) outside a sweep: loosen every bound."""
        self.bound -= np.sqrt(np.einsum("ij,ij->i", delta, delta))

    def sweep(self, path: np.ndarray, movable: np.ndarray) -> None:
        for o, ob in enumerate(self.spec.obstacles):
            cand = np.flatnonzero(movable & (self.bound[o] <= self.trigger[o]))
            if cand.size == 0:
                continue
            d, g = ob.distance(path[cand])
            push = self.need[o, cand] - d
            if self.tracked[o]:
                self.bound[o, cand] = d
            hit = push > 0
            if not hit.any():
                continue
            idx = cand[hit]
            g = g[hit]
            if self.on_surface:
                # ∇d more vertical than horizontal: the nearest face is a top (or a bottom)
                up = np.abs(g[:, 2]) > np.hypot(g[:, 0], g[:, 1])
                g[up] = self._sideways(ob, path[idx[up]])
            gn = np.linalg.norm(g, axis=1)
            g = np.where(gn[:, None] > 0, g / np.maximum(gn, 1e-300)[:, None], np.array([0.0, 1.0, 0.0]))
            step = push[hit, None] * g
            path[idx] += step
            self.bound[:, idx] -= np.linalg.norm(step, axis=1)

    @staticmethod
    def _sideways(ob, points: np.ndarray) -> np.ndarray:
        """The horizontal part of ∇d at the points lowered or raised to the obstacle's middle height."""
        level = points.copy()
        level[:, 2] = ob.middle()[2]
        g = ob.distance(level)[1].copy()
        g[:, 2] = 0.0
        return g


def smooth_path(path: np.ndarray, spec: Spec, keep: np.ndarray, passes: int = 200, floors=None,
                on_surface: bool = False) -> np.ndarray:
    """Relax the kinks that pushing leaves: repeated [¼, ½, ¼] averaging of the movable nodes,
    each pass followed by a push out of the obstacles (vectorised over the nodes)."""
    path = np.array(path, dtype=float)
    movable = np.ones(len(path), dtype=bool)
    movable[keep] = False
    movable[[0, -1]] = False
    pusher = _Pusher(spec, len(path), floors, on_surface) if spec.obstacles else None
    for _ in range(passes):
        avg = path.copy()
        avg[1:-1] = 0.25 * path[:-2] + 0.5 * path[1:-1] + 0.25 * path[2:]
        if pusher is not None:
            pusher.moved(np.where(movable[:, None], avg - path, 0.0))
        path[movable] = avg[movable]
        if pusher is not None:
            pusher.sweep(path, movable)
    return path


def retime(path: np.ndarray, anchors: np.ndarray, v_start: float | None, v_end: float | None) -> np.ndarray:
    """Redistribute the nodes between consecutive anchor nodes along the arc length with a cubic
    Hermite profile s(τ): the speed at the first and last node matches the start and goal speeds
    (when known; e.g. 0 for a start at rest), at interior anchors the mean of the neighbouring
    segments, and the profile stays monotone (end slopes clipped to [0, 3])."""
    out = np.array(path, dtype=float)
    segs = [(a, b) for a, b in zip(anchors[:-1], anchors[1:]) if b > a]
    lengths, arcs = [], []
    for a, b in segs:
        s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(out[a:b + 1], axis=0), axis=1))])
        arcs.append(s)
        lengths.append(s[-1])
    n = len(segs)
    for i, (a, b) in enumerate(segs):
        s, length = arcs[i], lengths[i]
        if length <= 0 or b - a < 2:
            continue
        mean = 1.0  # slopes in units of the segment's mean speed
        m0 = mean if i > 0 else (mean if v_start is None else v_start * (b - a) / length)
        m1 = mean if i < n - 1 else (mean if v_end is None else v_end * (b - a) / length)
        m0, m1 = (float(np.clip(m, 0.0, 3.0)) for m in (m0, m1))
        t = np.linspace(0.0, 1.0, b - a + 1)
        prof = (t**3 - 2 * t**2 + t) * m0 + (-2 * t**3 + 3 * t**2) + (t**3 - t**2) * m1
        target = np.clip(prof, 0.0, 1.0) * length
        seg = out[a:b + 1].copy()
        out[a:b + 1] = np.stack([np.interp(target, s, seg[:, i_]) for i_ in range(seg.shape[1])], axis=1)
    return out


def initial_guess(model: Model, spec: Spec) -> np.ndarray:
    """The full decision vector y of the default initial guess."""
    y = model.base.copy()
    T = duration_guess(model)
    y[model.T] = T
    goal = getattr(model, "goal_position", None)
    if goal is None and not spec.waypoints:
        return model.guess_rollout(y)
    N = model.N
    times = [0.0]
    points = [model.start_position()]
    nodes = [0]
    for wp in sorted(spec.waypoints, key=lambda w: w.time):
        node = waypoint_node(model, wp.time, T) if model.fixed[model.T] else int(round(wp.time / T * N))
        times.append(node * T / N)
        points.append(np.asarray(wp.position, dtype=float))
        nodes.append(node)
    if goal is not None:
        times.append(T)
        points.append(np.asarray(goal, dtype=float))
        nodes.append(N)
    t = np.arange(N + 1) * T / N
    P = np.stack(points)
    path = np.stack([np.interp(t, times, P[:, i]) for i in range(3)], axis=1)
    # an obstacle touched at a contact keeps the guess only as far out as its lowered floor there
    floors = [np.broadcast_to(clearance_floor(model, ob), (N + 1,)) for ob in spec.obstacles]
    path = push_out(path, spec, np.array(nodes), floors=floors, on_surface=model.on_surface)
    path = smooth_path(path, spec, np.array(nodes), floors=floors, on_surface=model.on_surface)
    h = T / N
    v0 = model.start_speed() * h if hasattr(model, "start_speed") else None
    v1 = model.goal_speed() if hasattr(model, "goal_speed") else None
    path = retime(path, np.unique(np.array(nodes)), v0, None if v1 is None else v1 * h)
    return model.guess_from_path(y, path, spec)


__all__ = ["initial_guess", "push_out", "smooth_path", "retime", "duration_guess"]
