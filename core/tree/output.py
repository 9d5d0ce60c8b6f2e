"""A tree run as the project's :class:`~core.trajectory.Trajectory` (the JSON contract).

The generic trajectory carries one pose; a tree carries many. The tree output is therefore:

- ``position``, ``orientation`` (w, x, y, z), ``angular_velocity``, ``linear_velocity`` (body
  frame): the pose and body velocity of the *root body*, the first frame given a mass (in the
  order the frames were listed), so a tree still animates as one object;
- named series at the top level of the JSON: ``q`` and ``dq`` ({variable: (N+1)}), ``energy``
  (N+1, T + V), ``constraint_residual`` (N+1, max_r |h_r(q_k)|, 0 without constraints) and
  ``frames`` ({frame: (N+1) × 3}, the world position of every massive frame);
- ``stats``: method, dt, steps, alpha, wall_time_s, blew_up (+ message), newton_iterations_mean
  and _max (variational), max_constraint_residual, energy_drift (E_N − E_0) and
  energy_oscillation (max − min of E), initial_projection (max |Δq| the start-up moved q₀ by),
  root_frame; ``vehicle`` = "tree".

Everything is evaluated for all nodes at once (in chunks of 4096 nodes).
"""
from __future__ import annotations

import numpy as np

from ..lie import quaternion
from ..trajectory import Trajectory
from .system import System
from .variational import Run

CHUNK = 4096


def node_series(system: System, run: Run) -> dict[str, np.ndarray]:
    """energy (N+1), residual (N+1), positions (N+1, B_massive, 3), root g (N+1, 4, 4), root v (N+1, 6)."""
    s = system
    N = run.q.shape[0]
    B = s.n_massive
    energy = np.zeros(N)
    pos = np.zeros((N, B, 3))
    root_g = np.zeros((N, 4, 4))
    root_v = np.zeros((N, 6))
    for a in range(0, N, CHUNK):
        b = min(N, a + CHUNK)
        kin = s.kinematics(run.q[a:b], run.dq[a:b])
        energy[a:b] = s.energy(kin)
        pos[a:b] = kin.G[:, s.body_frames[:B]][..., :3, 3]
        root_g[a:b] = kin.G[:, s.body_frames[0]]
        root_v[a:b] = kin.v[:, 0]
    residual = run.residual if run.residual is not None else np.zeros(N)
    return {"energy": energy, "residual": residual, "positions": pos, "root_g": root_g, "root_v": root_v}


def to_trajectory(system: System, run: Run) -> Trajectory:
    """The run in the Trajectory/JSON layout described in the module docstring."""
    s = system
    series = node_series(s, run)
    names = s.tree.variables
    massive = [s.tree.names[k] for k in s.body_frames[: s.n_massive]]
    E = series["energy"]
    stats = {
        "method": run.method, "dt": run.dt, "steps": int(run.q.shape[0] - 1), "alpha": run.alpha,
        "wall_time_s": run.wall_time_s, "blew_up": bool(run.blew_up),
        "max_constraint_residual": float(np.max(series["residual"], initial=0.0)),
        "energy_drift": float(E[-1] - E[0]), "energy_oscillation": float(E.max() - E.min()),
        "initial_projection": float(run.initial_correction), "root_frame": massive[0],
        "newton_iterations_mean": float(np.mean(run.iterations)) if run.iterations is not None and run.iterations.size else 0.0,
        "newton_iterations_max": int(np.max(run.iterations)) if run.iterations is not None and run.iterations.size else 0,
    }
    if run.message:
        stats["message"] = run.message
    g = series["root_g"]
    orientation = quaternion.make_continuous(quaternion.from_matrix(g[:, :3, :3]))
    return Trajectory(
        time=run.time, position=g[:, :3, 3], orientation=orientation,
        angular_velocity=series["root_v"][:, :3], linear_velocity=series["root_v"][:, 3:],
        series={
            "q": {v: run.q[:, i] for i, v in enumerate(names)},
            "dq": {v: run.dq[:, i] for i, v in enumerate(names)},
            "energy": E,
            "constraint_residual": series["residual"],
            "frames": {name: series["positions"][:, j] for j, name in enumerate(massive)},
        },
        stats=stats, vehicle="tree")
