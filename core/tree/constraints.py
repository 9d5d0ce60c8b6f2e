"""Holonomic constraints h(q) = 0 between frames (Johnson & Murphey, §IV-D), with Dh and D²h.

Every constraint row is a bilinear form of four body-fixed points,

    h = s (P₁ − P₂) · (P₃ − P₄) − c,

so one vectorised evaluation serves all types (positions and their derivatives from
eqs. (2)–(4)):

- ``Distance(a, b, length)`` — the wire constraint, eq. (37) divided by 2L:
  h = (|p_a − p_b|² − L²) / (2L) (first-order equal to |p_a − p_b| − L, so the residual is a
  length). L > 0: coincident points need :class:`PointToPoint` (§IV-D4: the gradient of a
  zero-length wire vanishes).
- ``PointOnPlane(a, b, normal, offset)`` — the origin of frame b lies on the plane of frame a
  with unit normal n (in a's coordinates) at signed distance ``offset`` from a's origin:
  h = (R_a n) · (p_b − p_a) − offset.
- ``PointToPoint(a, b, directions, frame)`` — §IV-D4: one row per direction e,
  h = (R_c e) · (p_a − p_b), e in the coordinates of frame c (default the world). A planar
  mechanism needs the two in-plane directions only (a third row would be identically zero
  and make the system singular).

"world" may be used as a frame name. Derivatives: Dh = s (dU·W + U·dW),
D²h = s (d²U·W + dU⊗dW + dW⊗dU + U·d²W) (eq. 38 and its derivative).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ScenarioError
from .frames import WORLD, Points, Tree

_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class Distance:
    a: str
    b: str
    length: float


@dataclass(frozen=True)
class PointOnPlane:
    a: str
    b: str
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    offset: float = 0.0


@dataclass(frozen=True)
class PointToPoint:
    a: str
    b: str
    directions: tuple[tuple[float, float, float], ...] = _AXES
    frame: str = WORLD


Constraint = Distance | PointOnPlane | PointToPoint
TYPES: dict[str, type] = {"distance": Distance, "point_on_plane": PointOnPlane, "point_to_point": PointToPoint}


def _unit(vec: Sequence[float], where: str) -> np.ndarray:
    v = np.asarray(vec, dtype=float).reshape(-1)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ScenarioError(where, "must be 3 finite numbers")
    norm = float(np.linalg.norm(v))
    if norm < 1e-12:
        raise ScenarioError(where, "must not be the zero vector")
    return v / norm


class ConstraintSet:
    """The compiled rows of a list of constraints; ``entry[r]`` is the constraint of row r."""

    def __init__(self, tree: Tree, constraints: Sequence[Constraint], where: str = "constraints"):
        self.tree = tree
        self.constraints = list(constraints)
        frames: list[int] = []
        offsets: list[np.ndarray] = []
        lookup: dict[tuple, int] = {}

        def point(frame: int, offset: Sequence[float] = (0.0, 0.0, 0.0)) -> int:
            key = (frame,) + tuple(float(x) for x in offset)
            if key not in lookup:
                lookup[key] = len(frames)
                frames.append(frame)
                offsets.append(np.asarray(offset, dtype=float))
            return lookup[key]

        rows: list[tuple[int, int, int, int, float, float, int]] = []
        for e, c in enumerate(self.constraints):
            w = f"[{where} #{e + 1}]"
            if isinstance(c, Distance):
                a, b = tree.frame(c.a, f"{w} a"), tree.frame(c.b, f"{w} b")
                if a == b:
                    raise ScenarioError(f"{w} b", "must differ from a")
                L = float(c.length)
                if not (np.isfinite(L) and L > 0):
                    raise ScenarioError(f"{w} length", f"must be positive, got {c.length} "
                                        "(use point_to_point for coincident points)")
                pa, pb = point(a), point(b)
                rows.append((pa, pb, pa, pb, 0.5 / L, 0.5 * L, e))
            elif isinstance(c, PointOnPlane):
                a, b = tree.frame(c.a, f"{w} a"), tree.frame(c.b, f"{w} b")
                if a == b:
                    raise ScenarioError(f"{w} b", "must differ from a")
                n = _unit(c.normal, f"{w} normal")
                off = float(c.offset)
                if not np.isfinite(off):
                    raise ScenarioError(f"{w} offset", "must be finite")
                rows.append((point(a, n), point(a), point(b), point(a), 1.0, off, e))
            elif isinstance(c, PointToPoint):
                a, b = tree.frame(c.a, f"{w} a"), tree.frame(c.b, f"{w} b")
                if a == b:
                    raise ScenarioError(f"{w} b", "must differ from a")
                f = tree.frame(c.frame, f"{w} frame")
                dirs = [_unit(d, f"{w} directions[{i}]") for i, d in enumerate(c.directions)]
                if not dirs:
                    raise ScenarioError(f"{w} directions", "must list at least one direction")
                if np.linalg.matrix_rank(np.array(dirs), tol=1e-9) < len(dirs):
                    raise ScenarioError(f"{w} directions", "must be linearly independent")
                for d in dirs:
                    rows.append((point(f, d), point(f), point(a), point(b), 1.0, 0.0, e))
            else:
                raise ScenarioError(w, f"unknown constraint {c!r}")
        self.points = Points(np.array(frames, dtype=int), np.array(offsets).reshape(-1, 3))
        r = np.array(rows, dtype=float).reshape(-1, 7)
        self.i1, self.i2, self.i3, self.i4 = (r[:, j].astype(int) for j in range(4))
        self.scale, self.const = r[:, 4], r[:, 5]
        self.entry = r[:, 6].astype(int)

    def __len__(self) -> int:
        return int(self.entry.size)

    def kinematics(self, q: np.ndarray, dq: np.ndarray | None = None,
                   kinematics: Callable | None = None):
        """Kinematics of the constraint points only (no body velocities)."""
        make = kinematics or self.tree.at
        return make(q, dq, bodies=(), points=self.points)

    def _uw(self, kin) -> tuple[np.ndarray, np.ndarray]:
        p = kin.p
        return p[..., self.i1, :] - p[..., self.i2, :], p[..., self.i3, :] - p[..., self.i4, :]

    def h(self, kin) -> np.ndarray:
        U, W = self._uw(kin)
        return self.scale * np.einsum("...ra,...ra->...r", U, W) - self.const

    def Dh(self, kin) -> np.ndarray:
        """(..., m, n)."""
        U, W = self._uw(kin)
        dp = kin.dp
        dU, dW = dp[..., self.i1, :, :] - dp[..., self.i2, :, :], dp[..., self.i3, :, :] - dp[..., self.i4, :, :]
        return self.scale[:, None] * (np.einsum("...ria,...ra->...ri", dU, W)
                                      + np.einsum("...ra,...ria->...ri", U, dW))

    def D2h(self, kin) -> np.ndarray:
        """(..., m, n, n)."""
        U, W = self._uw(kin)
        dp, d2p = kin.dp, kin.d2p
        dU, dW = dp[..., self.i1, :, :] - dp[..., self.i2, :, :], dp[..., self.i3, :, :] - dp[..., self.i4, :, :]
        d2U = d2p[..., self.i1, :, :, :] - d2p[..., self.i2, :, :, :]
        d2W = d2p[..., self.i3, :, :, :] - d2p[..., self.i4, :, :, :]
        cross = np.einsum("...ria,...rja->...rij", dU, dW)
        out = (np.einsum("...rija,...ra->...rij", d2U, W) + cross + np.swapaxes(cross, -1, -2)
               + np.einsum("...ra,...rija->...rij", U, d2W))
        return self.scale[:, None, None] * out
