"""What every variational driver does alike while it runs: evaluate the wrench, weigh the half
kicks, record a single body's nodes, and keep the run's account (blown-up bodies, Newton work).

Kick–drift–kick (docs/equations.md, "Holonomic variational integrator"): the momentum entering a
sub-step of length h_j carries half a kick (h_j/2) f, and the momentum leaving it the other half,
so between sub-steps j and j + 1 the kick is (h_j + h_{j+1})/2 f and after the last one h_last/2 f.
Both half kicks of step k use f(k, ·), so a wrench given per step acts as a zero-order hold.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...lie import quaternion
from ..common import WrenchFunction

XI_LIMIT = 1e8         # |ω| or |v| beyond this counts as a blow-up


def substeps_of(dt: float, fractions: Sequence[float]) -> tuple[list[float], list[float]]:
    """The sub-step lengths h_j = c_j dt of a composition with fractions c_j of the step, and the
    kick after each: (h_j + h_{j+1})/2, after the last one h_last/2."""
    hs = [float(c) * dt for c in fractions]
    n = len(hs)
    return hs, [0.5 * (hs[j] + hs[j + 1]) if j + 1 < n else 0.5 * hs[j] for j in range(n)]


def wrench_floats(fn: WrenchFunction, k: int, q: tuple, x: tuple, xi: tuple) -> list[float]:
    """fn(k, R(q), x, ξ) for one body as six floats (q a unit quaternion, all given as tuples)."""
    f = np.asarray(fn(k, quaternion.to_matrix(np.array(q, dtype=float)), np.array(x, dtype=float),
                      np.array(xi, dtype=float)), dtype=float)
    if f.size != 6:  # a TypeError is not mistaken for a numerical blow-up below
        raise TypeError(f"the wrench function must return 6 numbers (torque, force), got shape {f.shape}")
    return f.ravel().tolist()


def batch_wrench(fn: WrenchFunction, k: int, R: np.ndarray, x: np.ndarray, xi: np.ndarray,
                 batch: tuple[int, ...]) -> np.ndarray:
    """fn(k, R, x, ξ) for a flattened batch, R (B, 3, 3), x (B, 3), ξ (B, 6), called with the
    caller's batch shape: the body wrenches (B, 6)."""
    f = np.asarray(fn(k, R.reshape(batch + (3, 3)), x.reshape(batch + (3,)), xi.reshape(batch + (6,))), dtype=float)
    return np.broadcast_to(f, batch + (6,)).reshape(-1, 6)


class StepRows:
    """The per-step state tuples of a scalar run, packed into float blocks every 65,536 rows so that
    a long run never holds millions of Python tuples; :meth:`array` is the (n, width) record."""

    __slots__ = ("rows", "blocks", "width")

    def __init__(self, first: tuple, width: int):
        self.rows: list[tuple] = [first]
        self.blocks: list[np.ndarray] = []
        self.width = width

    def add(self, row: tuple) -> None:
        self.rows.append(row)
        if len(self.rows) >= 65536:
            self.blocks.append(np.array(self.rows, dtype=float))
            self.rows = []

    def array(self) -> np.ndarray:
        if self.rows or not self.blocks:
            self.blocks.append(np.array(self.rows, dtype=float).reshape(-1, self.width))
            self.rows = []
        return np.concatenate(self.blocks, axis=0)


class RunTally:
    """A run's account, body by body: which bodies still run, and the Newton work done.

    A body that blows up (non-finite value, Newton failure, |ω| or |v| over ``XI_LIMIT``) is frozen
    at its last good node; the output is truncated only once every body has blown up (the
    baselines' convention). ``any_dead``: some body has failed, so the batch drivers take their
    masked (slower) branches. ``updates`` and ``chords`` count the Newton and chord updates per
    body, ``solves`` the Newton solves (one per sub-step)."""

    __slots__ = ("alive", "last_good", "n_nodes", "any_dead", "updates", "chords", "solves")

    def __init__(self, bodies: int, steps: int):
        self.alive = np.ones(bodies, dtype=bool)
        self.last_good = np.full(bodies, steps, dtype=int)
        self.n_nodes = steps + 1
        self.any_dead = False
        self.updates = np.zeros(bodies)
        self.chords = np.zeros(bodies)
        self.solves = 0

    @classmethod
    def of_single_body(cls, blew: bool, nodes: int, steps: int, updates: int, solves: int,
                       chords: int = 0) -> RunTally:
        """The account of a one-body run that kept ``nodes`` nodes (``blew``: it stopped early)."""
        tally = cls(1, steps)
        tally.updates[0], tally.chords[0], tally.solves = updates, chords, solves
        if blew:
            tally.alive[0] = False
            tally.last_good[0] = nodes - 1
            tally.n_nodes = nodes
            tally.any_dead = True
        return tally

    @property
    def blew_up(self) -> bool:
        """Some body blew up."""
        return bool(not self.alive.all())

    def body_stats(self, batch: tuple[int, ...]) -> dict:
        """The stats entries ``last_good_node`` (and ``blew_up_per_body`` for a batch)."""
        if batch:
            return {"blew_up_per_body": (~self.alive).reshape(batch).tolist(),
                    "last_good_node": self.last_good.reshape(batch).tolist()}
        return {"last_good_node": int(self.last_good[0])}

    def retire(self, ok: np.ndarray, k: int) -> bool:
        """Stop the running bodies that are not ``ok`` after step k; True once none is left."""
        newly = self.alive & ~ok
        if newly.any():
            self.any_dead = True
            self.last_good[newly] = k
            self.alive &= ok
            if not self.alive.any():
                self.n_nodes = k + 1
                return True
        return False


__all__ = ["XI_LIMIT", "substeps_of", "wrench_floats", "batch_wrench", "StepRows", "RunTally"]
