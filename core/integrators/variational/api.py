"""The two entry points: :func:`integrate` (a pairing, optionally composed) and :func:`integrate_cay4`.

Both validate and flatten the inputs (:func:`prepare`), pick a driver by batch shape and mass
(one body on floats, a batch on arrays, the generic 6×6 path otherwise) and build the Trajectory
and its stats the same way. Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation
and control of vehicles", eqs. 9–10; docs/equations.md, "Holonomic variational integrator".
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ...lie import quaternion
from ...trajectory import Trajectory
from ..common import HolonomicSystem, RigidState, WrenchSpec
from ..euler_poincare import checked_inputs
from .cay4_arrays import JOINT_MAX_BATCH, run_cay4_batch, run_cay4_joint
from .cay4_floats import run_cay4_scalar
from .generic import run_generic
from .outputs import from_body_records, from_matrices, from_world_records
from .pairings import PAIRINGS, VI_METHODS
from .reduced import run_batch, run_scalar
from .triple_jump import KERNEL, TRIPLE_JUMP


def isotropic_mass(inertia: np.ndarray) -> bool:
    """True when every body has M = m I₃ (the reduced kernels apply)."""
    inertia = np.asarray(inertia, dtype=float)
    return bool(np.all(inertia[..., 3] == inertia[..., 4]) and np.all(inertia[..., 4] == inertia[..., 5]))


def prepare(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
            wrench: WrenchSpec = None) -> dict:
    """Validated, flattened inputs shared by the VI drivers: batch shape, inertia (B, 6),
    R0 (B, 3, 3), x0 (B, 3), xi0 (B, 6) and the combined wrench function."""
    _, steps, batch, inertia, fn = checked_inputs(system, initial, dt, steps, wrench)
    B = int(np.prod(batch, dtype=int))
    return {"batch": batch, "inertia": inertia.reshape(B, 6),
            "R0": np.broadcast_to(np.asarray(initial.R, dtype=float), batch + (3, 3)).reshape(B, 3, 3).copy(),
            "x0": np.broadcast_to(np.asarray(initial.x, dtype=float), batch + (3,)).reshape(B, 3).copy(),
            "xi0": np.broadcast_to(initial.xi, batch + (6,)).reshape(B, 6).copy(),
            "fn": fn}


def _per_solve(counts: np.ndarray, solves: int) -> float:
    """Mean over the bodies of ``counts`` (updates per body), per Newton solve."""
    return float(np.mean(counts)) / solves if solves else 0.0


def integrate(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
              method: str = "vi-cay", wrench: WrenchSpec = None, *, fast: bool = True,
              substeps: Sequence[float] = (1.0,), name: str | None = None) -> Trajectory:
    """Run a holonomic VI pairing (eqs. 9–10) from ``initial`` for ``steps`` steps of ``dt``.

    ``system.wrench`` and ``wrench`` are added. Batch shape () or any leading batch shape
    (arrays then come out as (N+1,) + batch + (...)). ``substeps`` are the fractions of dt of
    a composition of the basic step (``(1,)``: the plain scheme; vi-cay-ln with the triple jump
    is vi-cay4's generic path, see :mod:`.triple_jump`). With M = m I₃ the reduced kernels run
    (plain floats for one body, component arrays for a batch); ``fast=False`` forces the generic
    6×6 numpy path (any diagonal 𝕀, the benchmark baseline). Stats: wall_time_s,
    newton_iterations_mean (per Newton solve), blew_up, method, steps, dt, path, last_good_node
    (and blew_up_per_body for a batch). A blow-up (non-finite value, Newton failure, |ω| or
    |v| > 1e8) stops a single body at its last good node (truncated output); in a batch the body
    is frozen there and the output is truncated only once every body has blown up (the
    baselines' convention).
    """
    t0 = time.perf_counter()
    if method not in PAIRINGS:
        raise ValueError(f"unknown variational method {method!r}; valid: {', '.join(VI_METHODS)}")
    pairing = PAIRINGS[method]
    steps = int(steps)
    dt = float(dt)
    setup = prepare(system, initial, dt, steps, wrench)
    batch, inertia, R0, x0, xi0, fn = (setup[k] for k in ("batch", "inertia", "R0", "x0", "xi0", "fn"))
    reduced = fast and pairing.kernel is not None and isotropic_mass(inertia)
    if reduced:
        q0 = quaternion.from_matrix(R0)
        if batch == ():
            rows, tally = run_scalar(pairing.kernel, inertia[0], q0[0], x0[0], xi0[0], dt, steps, substeps, fn)
            rec = rows[:, :, None]
            path = "scalar"
        else:
            rec, tally = run_batch(pairing.kernel, inertia, q0, x0, xi0, dt, steps, substeps, fn, batch)
            path = "batch"
    else:
        R, x, m, tally = run_generic(pairing, inertia, R0, x0, xi0, dt, steps, substeps, fn, batch)
        path = "generic"
    stats = {"method": name or method, "steps": steps, "dt": dt, "blew_up": tally.blew_up,
             "newton_iterations_mean": _per_solve(tally.updates, tally.solves), "path": path}
    stats.update(tally.body_stats(batch))
    if reduced:
        traj = from_body_records(rec, inertia, xi0, batch, dt, stats)
    else:
        shape = (len(x),) + batch
        traj = from_matrices(R.reshape(shape + (3, 3)), x.reshape(shape + (3,)), m.reshape(shape + (6,)),
                             inertia.reshape(batch + (6,)), xi0.reshape(batch + (6,)), dt, stats)
    traj.stats["wall_time_s"] = time.perf_counter() - t0
    return traj


def integrate_cay4(system: HolonomicSystem, initial: RigidState, dt: float, steps: int,
                   wrench: WrenchSpec = None, *, fast: bool = True, strict: bool = False,
                   joint: bool | None = None) -> Trajectory:
    """vi-cay4: the triple-jump composition of the vi-cay-ln step (Yoshida 1990; order 4, spatial
    momentum and, with M = m I₃, node kinetic energy exact; :mod:`.triple_jump`).

    Same interface, batching, outputs and blow-up handling as :func:`integrate`. With M = m I₃
    the fused kernels run (plain floats for one body, (B, 3) arrays for a batch); ``fast=False``
    or an anisotropic M runs the generic 6×6 path of :func:`integrate` with
    ``substeps=TRIPLE_JUMP``. ``strict`` replaces the accept-after-update Newton termination by
    full Newton to |δ| ≤ NEWTON_TOL. ``joint``: solve a free batch's three sub-steps as one
    system (default: for batches of at most ``JOINT_MAX_BATCH`` bodies, where it saves numpy
    calls; larger batches are dominated by the per-matrix LAPACK work, where sub-step after
    sub-step is cheaper). Stats: ``newton_iterations_mean`` = Newton + chord updates per solve
    (three solves per step), ``chord_iterations_mean`` the chord share.
    """
    t0 = time.perf_counter()
    setup = prepare(system, initial, dt, steps, wrench)
    batch, inertia, R0, x0, xi0, fn = (setup[k] for k in ("batch", "inertia", "R0", "x0", "xi0", "fn"))
    if not (fast and isotropic_mass(inertia)):
        return integrate(system, initial, dt, steps, KERNEL, wrench, fast=False, substeps=TRIPLE_JUMP,
                         name="vi-cay4")
    dt, steps = float(dt), int(steps)
    q0 = quaternion.from_matrix(R0)
    if batch == ():
        rows, tally = run_cay4_scalar(inertia[0], q0[0], x0[0], xi0[0], dt, steps, fn, strict)
        rec = rows[:, None, :]
        path = "scalar"
    elif fn is None and (joint if joint is not None else inertia.shape[0] <= JOINT_MAX_BATCH):
        rec, tally = run_cay4_joint(inertia, q0, x0, xi0, dt, steps, strict)
        path = "batch"
    else:
        rec, tally = run_cay4_batch(inertia, q0, x0, xi0, dt, steps, fn, batch, strict)
        path = "batch"
    stats = {"method": "vi-cay4", "steps": steps, "dt": dt, "blew_up": tally.blew_up, "path": path,
             "kernel": KERNEL, "newton_iterations_mean": _per_solve(tally.updates + tally.chords, tally.solves),
             "chord_iterations_mean": _per_solve(tally.chords, tally.solves)}
    stats.update(tally.body_stats(batch))
    traj = from_world_records(rec, inertia, xi0, batch, dt, stats)
    traj.stats["wall_time_s"] = time.perf_counter() - t0
    return traj


__all__ = ["isotropic_mass", "prepare", "integrate", "integrate_cay4"]
