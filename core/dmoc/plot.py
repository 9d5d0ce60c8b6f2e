"""PNG of an optimised trajectory (matplotlib, imported only here and only when asked).

Top view (x–y) with the obstacles, waypoints, start and goal, the path and the vehicle's
collision spheres at a few nodes; a side view (x–z) for vehicles in space; the controls
against time. Used by ``python -m core solve --plot`` and for the sample images.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..trajectory import Trajectory
from .obstacles import Obstacle


def _obstacle_patches(ax, ob: Obstacle, plane: tuple[int, int], color: str = "0.55") -> None:
    import matplotlib.patches as mp

    i, j = plane
    if ob.kind == "sphere":
        ax.add_patch(mp.Circle((ob.center[i], ob.center[j]), ob.radius, color=color, alpha=0.8))
        if ob.margin:
            ax.add_patch(mp.Circle((ob.center[i], ob.center[j]), ob.radius + ob.margin, fill=False,
                                   ls=":", color=color))
    elif ob.kind == "capsule":
        a, b = ob.a[[i, j]], ob.b[[i, j]]
        d = b - a
        n = np.array([-d[1], d[0]])
        n = n / np.linalg.norm(n) * ob.radius if np.linalg.norm(n) > 0 else np.zeros(2)
        ax.add_patch(mp.Polygon([a + n, b + n, b - n, a - n], color=color, alpha=0.8))
        for c in (a, b):
            ax.add_patch(mp.Circle(c, ob.radius, color=color, alpha=0.8))
    else:
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        corners = ob.center + (signs * ob.half_extents) @ ob.rotation.T
        pts = corners[:, [i, j]]
        # convex hull of the projected corners (gift wrapping; 8 points)
        hull = _hull(pts)
        ax.add_patch(mp.Polygon(hull, color=color, alpha=0.8))


def _hull(pts: np.ndarray) -> np.ndarray:
    pts = np.unique(np.round(pts, 12), axis=0)
    if len(pts) < 3:
        return pts
    start = pts[np.lexsort((pts[:, 1], pts[:, 0]))[0]]
    hull = [start]
    cur = start
    while True:
        cand = pts[0] if not np.allclose(pts[0], cur) else pts[1]
        for p in pts:
            cross = (cand[0] - cur[0]) * (p[1] - cur[1]) - (cand[1] - cur[1]) * (p[0] - cur[0])
            if cross < 0 or (cross == 0 and np.linalg.norm(p - cur) > np.linalg.norm(cand - cur)):
                cand = p
        if np.allclose(cand, start) or len(hull) > len(pts):
            break
        hull.append(cand)
        cur = cand
    return np.array(hull)


def _frame(ax, pts: np.ndarray, extra, dims: tuple[int, int]) -> None:
    """View the motion (and its goal and waypoints) with a margin, not the whole of a large obstacle."""
    rows = [pts] + [np.asarray(e, dtype=float)[list(dims)][None, :] for e in extra if e is not None]
    allp = np.concatenate(rows)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    pad = np.maximum(0.15 * (hi - lo).max(), 3.0)
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)


def plot_solution(traj: Trajectory, setup: Any, path: str, title: str | None = None) -> None:
    """Draw ``traj`` (from ``solve_scenario``) with the scenario of ``setup`` into a PNG file."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    model, spec = setup.model, setup.spec
    spatial = model.position_dim == 3
    fig = plt.figure(figsize=(13, 6.5 if spatial else 5.5))
    grid = fig.add_gridspec(2, 2, width_ratios=[1.6, 1.0])
    ax = fig.add_subplot(grid[:, 0] if not spatial else grid[0, 0])
    P = np.asarray(traj.position)
    R = traj.rotation_matrices
    for ob in spec.obstacles:
        _obstacle_patches(ax, ob, (0, 1))
    n = len(P)
    for k in np.unique(np.linspace(0, n - 1, 12).round().astype(int)):
        for s in spec.spheres:
            c = P[k] + R[k] @ s[:3]
            ax.add_patch(Circle((c[0], c[1]), s[3], fill=False, color="tab:blue", alpha=0.35, lw=0.8))
    ax.plot(P[:, 0], P[:, 1], "-", color="tab:blue", lw=1.6, label="optimised path")
    ax.plot(P[0, 0], P[0, 1], "o", color="tab:green", label="start")
    ax.plot(P[-1, 0], P[-1, 1], "s", color="tab:red", label="end")
    goal = getattr(model, "goal_position", None)
    if goal is not None:
        ax.plot(goal[0], goal[1], "x", color="k", ms=10, mew=2, label="goal")
    for wp in spec.waypoints:
        ax.add_patch(Circle((wp.position[0], wp.position[1]), max(wp.radius, 0.05), fill=False, color="tab:orange",
                            lw=1.5))
    ax.set_aspect("equal")
    _frame(ax, P[:, [0, 1]], extra=[getattr(model, "goal_position", None)] + [w.position for w in spec.waypoints],
           dims=(0, 1))
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(loc="best", fontsize=8)
    stats = traj.stats
    head = title or f"{traj.vehicle}: {stats.get('status', '')}"
    ax.set_title(f"{head} — cost {stats.get('cost', float('nan')):.4g}, "
                 f"{stats.get('iterations', 0)} it., {stats.get('solve_time_s', stats.get('wall_time_s', 0)):.2f} s "
                 f"({stats.get('backend', '')})", fontsize=9)
    if spatial:
        side = fig.add_subplot(grid[1, 0])
        for ob in spec.obstacles:
            _obstacle_patches(side, ob, (0, 2))
        side.plot(P[:, 0], P[:, 2], "-", color="tab:blue", lw=1.6)
        side.plot(P[0, 0], P[0, 2], "o", color="tab:green")
        side.plot(P[-1, 0], P[-1, 2], "s", color="tab:red")
        side.set_aspect("equal")
        _frame(side, P[:, [0, 2]], extra=[getattr(model, "goal_position", None)], dims=(0, 2))
        side.set_xlabel("x (m)")
        side.set_ylabel("z (m)")
        side.set_title("side view", fontsize=9)
    names = list(traj.controls)
    t = np.asarray(traj.time)[:-1]
    for i, name in enumerate(names[:2] if len(names) <= 2 else [names[:2], names[2:]]):
        cax = fig.add_subplot(grid[i, 1])
        for nm in ([name] if isinstance(name, str) else name):
            cax.step(t, traj.controls[nm], where="post", label=nm)
        cax.legend(fontsize=8)
        cax.set_xlabel("t (s)")
        cax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["plot_solution"]
