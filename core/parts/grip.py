"""Lateral wheel grip: a damping force against the sideways speed of a body-fixed point.

A trailer's wheels roll forward but resist sliding sideways. Here that is a viscous force at
the axle point A along the unit lateral direction n of the trailer (a body-fixed direction,
written as the difference of two body-fixed points, n = p_B − p_A with B = A + n_body):

    F = −c (ṗ_A · n) n,    ṗ_A = Σ_j ∂p_A/∂q_j q̇_j                                   (1)

(the nonholonomic "no side slip" constraint in the limit c → ∞; a finite c lets the wheels
scrub, as real tyres do). As a generalised force (Johnson & Murphey §IV-E1, f = Jᵀ F):

    w_i = ∂p_A/∂q_i · n,   s = w · q̇,   f_i = −c w_i s                                 (2)
    ∂f_i/∂q̇_j = −c w_i w_j                                                            (3)
    ∂f_i/∂q_j = −c (∂w_i/∂q_j s + w_i Σ_l ∂w_l/∂q_j q̇_l),
        ∂w_i/∂q_j = ∂²p_A/∂q_i∂q_j · n + ∂p_A/∂q_i · (∂p_B/∂q_j − ∂p_A/∂q_j)         (4)

with the positions and their derivatives from the tree's kinematics (seed eqs. 3, 4). The
power −c s² ≤ 0: grip only dissipates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..tree.frames import Points
from ..tree.system import System


@dataclass(frozen=True)
class Grip:
    """Lateral damping ``coefficient`` (N s/m) at ``offset`` in ``frame`` along ``direction``
    (unit, frame axes)."""

    frame: str
    offset: Sequence[float]
    direction: Sequence[float]
    coefficient: float


class GripSystem(System):
    """A :class:`~core.tree.system.System` with grips added to its generalised forces."""

    def __init__(self, *args, grips: Sequence[Grip] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.grips = list(grips)
        frames, offsets = [], []
        for i, g in enumerate(self.grips):
            k = self.tree.frame(g.frame, f"[grips #{i + 1}] frame")
            a = np.asarray(g.offset, dtype=float)
            d = np.asarray(g.direction, dtype=float)
            frames += [k, k]
            offsets += [a, a + d / np.linalg.norm(d)]
        self._grip_points = Points(np.array(frames, dtype=int), np.array(offsets).reshape(-1, 3))
        self._grip_c = np.array([g.coefficient for g in self.grips], dtype=float)
        self._has_forces = self._has_forces or bool(self.grips)

    def grip_force(self, q: np.ndarray, dq: np.ndarray, derivatives: bool = False):
        """(f, ∂f/∂q, ∂f/∂q̇) of eqs. (2)–(4) at one configuration."""
        n = self.tree.n
        f = np.zeros(n)
        fq = np.zeros((n, n)) if derivatives else None
        fdq = np.zeros((n, n)) if derivatives else None
        if not self.grips:
            return f, fq, fdq
        kin = self.at(q, dq, bodies=(), points=self._grip_points)
        p, dp = kin.p, kin.dp
        d2p = kin.d2p if derivatives else None
        for g, c in enumerate(self._grip_c):
            A, B = 2 * g, 2 * g + 1
            nvec = p[B] - p[A]
            w = dp[A] @ nvec
            s = float(w @ dq)
            f -= c * w * s
            if derivatives:
                dw = d2p[A] @ nvec + dp[A] @ (dp[B] - dp[A]).T
                fq -= c * (dw * s + np.outer(w, dq @ dw))
                fdq -= c * np.outer(w, w)
        return f, fq, fdq

    def force(self, kin, t: float, derivatives: bool = False):
        f, fq, fdq = super().force(kin, t, derivatives)
        if not self.grips:
            return f, fq, fdq
        g, gq, gdq = self.grip_force(kin.q, kin.dq, derivatives)
        f = f + g
        if derivatives:
            fq = (0.0 if fq is None else fq) + gq
            fdq = (0.0 if fdq is None else fdq) + gdq
        return f, fq, fdq
