"""Suspension struts on a tree: vertical spring-dampers between a body's mounts and prescribed hub heights.

A strut joins a point M fixed in a body (the wheel's mount, at the wheel's centre at ride height) to
its wheel's hub, whose height z_H is a kinematic variable of the tree (the wheel's contact with the
terrain sets it; :mod:`.contact`). Its length is the vertical distance

    ℓ(q) = p_M(q)·ẑ − z_H,      w = ∂ℓ/∂q = ∂p_M/∂q·ẑ − e_H,      ∂²ℓ/∂q² = ∂²p_M/∂q²·ẑ        (1)

(positions and their derivatives from the tree's kinematics, Johnson & Murphey 2009, eqs. 3–4). The
spring is a potential and the damper a force (Johnson & Murphey §IV-E):

    V = ½ k (ℓ − ℓ₀)²,   ∂V/∂q = k (ℓ − ℓ₀) w,   ∂²V/∂q² = k (w wᵀ + (ℓ − ℓ₀) ∂²ℓ)          (2)
    f = −c ℓ̇ w,  ℓ̇ = w·q̇,   ∂f/∂q̇ = −c w wᵀ,   ∂f/∂q = −c (ℓ̇ ∂²ℓ + w (∂²ℓ q̇)ᵀ)          (3)

so the variational integrator (:mod:`core.tree.variational`) sees the springs in its discrete
Lagrangian — an undamped suspension keeps its energy to O(h²) without drift — and the dampers in
its discrete forces. The struts act along the world vertical: the wheel's horizontal position is
held by the planned path, so only the vertical force reaches the body (a strut inclined with the
body would differ by the body's pitch or roll, a few degrees, in its lever arms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ScenarioError
from ..tree.frames import Kinematics, Points
from ..tree.system import System


@dataclass(frozen=True)
class Strut:
    """A spring (``stiffness`` N/m, free length ``free_length`` m: the length at which it pushes
    nothing) and a damper (``damping`` N·s/m) from ``mount`` (m, in ``frame``) down to the hub
    height held by the kinematic variable ``hub``."""

    frame: str
    mount: Sequence[float]
    hub: str
    stiffness: float
    damping: float
    free_length: float


@dataclass
class _Geometry:
    kin: object
    length: np.ndarray           # (..., S)
    w: np.ndarray                # (..., S, n)
    d2: np.ndarray | None        # (..., S, n, n)


class StrutSystem(System):
    """A :class:`~core.tree.system.System` with :class:`Strut` springs in its potential and their
    dampers in its forces (module docstring, eqs. 1–3)."""

    def __init__(self, *args, struts: Sequence[Strut] = (), **kwargs):
        super().__init__(*args, **kwargs)
        tree = self.tree
        self.struts = list(struts)
        frames, mounts, hubs = [], [], []
        for i, s in enumerate(self.struts):
            where = f"[struts #{i + 1}]"
            frames.append(tree.frame(s.frame, f"{where} frame"))
            mounts.append(np.asarray(s.mount, dtype=float).reshape(3))
            j = tree.variable(s.hub, f"{where} hub")
            if not tree.kinematic[j]:
                raise ScenarioError(f"{where} hub", f"variable {s.hub!r} must be kinematic (a prescribed hub height)")
            hubs.append(j)
            for name in ("stiffness", "damping", "free_length"):
                value = getattr(s, name)
                if not (np.isfinite(value) and value >= 0):
                    raise ScenarioError(f"{where} {name}", f"must be a finite non-negative number, got {value}")
        self._mounts = Points(np.array(frames, dtype=int), np.array(mounts).reshape(-1, 3))
        self._hub = np.array(hubs, dtype=int)
        self._strut_k = np.array([s.stiffness for s in self.struts], dtype=float)
        self._strut_c = np.array([s.damping for s in self.struts], dtype=float)
        self._strut_l0 = np.array([s.free_length for s in self.struts], dtype=float)
        self._has_forces = self._has_forces or bool(np.any(self._strut_c > 0))
        self._last: _Geometry | None = None

    def strut_lengths(self, q: np.ndarray) -> np.ndarray:
        """ℓ of eq. (1) at configurations q (..., n) → (..., S)."""
        q = np.asarray(q, dtype=float)
        kin = Kinematics(self.tree, q, None, (), self._mounts)
        return kin.p[..., 2] - q[..., self._hub]

    def _geometry(self, kin, second: bool) -> _Geometry:
        """ℓ, w and (``second``) ∂²ℓ of eq. (1) at kin's q, kept for the force at the same kin."""
        last = self._last
        if last is not None and last.kin is kin and (last.d2 is not None or not second):
            return last
        q = np.asarray(kin.q, dtype=float)
        mk = Kinematics(self.tree, q, None, (), self._mounts)
        length = mk.p[..., 2] - q[..., self._hub]
        w = np.array(mk.dp[..., 2])
        w[..., np.arange(len(self.struts)), self._hub] -= 1.0
        d2 = np.array(mk.d2p[..., 2]) if second else None
        self._last = _Geometry(kin, length, w, d2)
        return self._last

    def potential(self, kin, order: int = 1):
        V, V_q, V_qq = super().potential(kin, order)
        if not self.struts:
            return V, V_q, V_qq
        g = self._geometry(kin, order >= 2)
        k = self._strut_k
        stretch = g.length - self._strut_l0
        V = V + 0.5 * np.einsum("s,...s->...", k, stretch * stretch)
        V_q = V_q + np.einsum("s,...s,...si->...i", k, stretch, g.w)
        if order >= 2:
            V_qq = V_qq + (np.einsum("s,...si,...sj->...ij", k, g.w, g.w)
                           + np.einsum("s,...s,...sij->...ij", k, stretch, g.d2))
        return V, V_q, V_qq

    def force(self, kin, t: float, derivatives: bool = False):
        f, fq, fdq = super().force(kin, t, derivatives)
        c = self._strut_c
        if not np.any(c > 0):
            return f, fq, fdq
        g = self._geometry(kin, derivatives)
        dq = np.asarray(kin.dq, dtype=float)
        rate = np.einsum("...si,...i->...s", g.w, dq)
        f = f - np.einsum("s,...s,...si->...i", c, rate, g.w)
        if derivatives:
            fdq = fdq - np.einsum("s,si,sj->ij", c, g.w, g.w)
            fq = fq - (np.einsum("s,s,sij->ij", c, rate, g.d2)
                       + np.einsum("s,si,sj->ij", c, g.w, g.d2 @ dq))
        return f, fq, fdq


__all__ = ["Strut", "StrutSystem"]
