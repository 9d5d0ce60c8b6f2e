"""Shapes of a shot from plain arrays: rotations of world matrices, and the obstacle shapes
(sphere, oriented box, capsule) fitted to an object's evaluated vertices in world space.

An obstacle is its geometry: the fitted shape holds every vertex. Flat geometry (a plane, a
wall, a pole) is a shape of zero thickness across it, given a half thickness of at least
``min_half`` so that no distance divides by a zero size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..lie import quaternion
from .frames import FrameMap

MIN_SIZE = 1e-6      # m: the thinnest half thickness of an obstacle; smaller in every direction: no size


def floats(v) -> list[float]:
    return [float(x) for x in np.asarray(v, dtype=float).reshape(-1)]


def polar(m3: np.ndarray) -> np.ndarray:
    """The rotation nearest to a 3×3 matrix (removes scale and shear). A mirroring matrix (negative
    scale, det < 0) has no nearest rotation (every one is as near when the scale is uniform): it
    gives the rotation of its axes with Y reversed, so X (forward) and Z (up) keep their world
    directions and an obstacle's box keeps the object's axes."""
    m3 = np.array(m3, dtype=float)
    if np.linalg.det(m3) < 0:
        m3[:, 1] *= -1
    u, _, vt = np.linalg.svd(m3)
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] *= -1
        r = u @ vt
    return r


def yaw(r: np.ndarray) -> float:
    return math.atan2(r[1, 0], r[0, 0])


def quaternion_of(r: np.ndarray) -> list[float]:
    """The unit quaternion (w, x, y, z; w ≥ 0) of a rotation matrix."""
    return floats(quaternion.from_matrix(np.asarray(r, dtype=float)))


@dataclass
class ObstacleShape:
    """A keep-out shape in world coordinates (scene units)."""
    name: str
    kind: str                               # "sphere" | "box" | "capsule"
    center: np.ndarray
    radius: float = 0.0
    half_extents: np.ndarray | None = None
    rotation: np.ndarray | None = None      # box: columns are its axes in world
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    margin: float = 0.0
    source: str = "obstacle"                # "obstacle" | "keep-out"

    def distance(self, p) -> np.ndarray:
        """Signed distance (negative inside) of world points p (..., 3)."""
        p = np.asarray(p, dtype=float)
        if self.kind == "sphere":
            return np.linalg.norm(p - self.center, axis=-1) - self.radius
        if self.kind == "capsule":
            ab = self.b - self.a
            t = np.clip(((p - self.a) @ ab) / float(ab @ ab), 0.0, 1.0)
            return np.linalg.norm(p - (self.a + t[..., None] * ab), axis=-1) - self.radius
        q = np.abs((p - self.center) @ self.rotation) - self.half_extents
        outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
        return outside + np.minimum(np.max(q, axis=-1), 0.0)

    def volume(self) -> float:
        if self.kind == "sphere":
            return 4.0 / 3.0 * math.pi * self.radius ** 3
        if self.kind == "capsule":
            return math.pi * self.radius ** 2 * float(np.linalg.norm(self.b - self.a)) \
                + 4.0 / 3.0 * math.pi * self.radius ** 3
        return 8.0 * float(np.prod(self.half_extents))

    def label(self) -> str:
        return f"{self.source} '{self.name}'"

    def table(self, fm: FrameMap) -> dict:
        """The ``[[obstacles]]`` entry (metres, solve coordinates)."""
        s = fm.scale
        out: dict = {"type": self.kind, "margin": self.margin * s}
        if self.kind == "sphere":
            out.update(center=floats(fm.to_solve(self.center)), radius=max(self.radius * s, MIN_SIZE))
        elif self.kind == "box":
            out.update(center=floats(fm.to_solve(self.center)),
                       half_extents=floats(np.maximum(self.half_extents * s, MIN_SIZE)),
                       orientation=quaternion_of(self.rotation))
        else:
            out.update(a=floats(fm.to_solve(self.a)), b=floats(fm.to_solve(self.b)),
                       radius=max(self.radius * s, MIN_SIZE))
        return out


def _box_in_frame(v: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre (world) and half extents of the box with axes r (columns) holding v."""
    local = v @ r
    lo, hi = local.min(axis=0), local.max(axis=0)
    return r @ (0.5 * (lo + hi)), 0.5 * (hi - lo)


def fit_shape(name: str, v: np.ndarray, shape: str, frame_hint: np.ndarray | None = None,
              margin: float = 0.0, min_half: float = 0.0) -> ObstacleShape:
    """The sphere, oriented box or capsule (``shape``: SPHERE, BOX, CAPSULE, or AUTO for the
    smallest) that holds the points v (N, 3); the box's axes (a proper rotation, det +1) are the
    object's (frame_hint) or the points' principal axes, whichever gives the smaller box (for
    flat points, of zero volume either way, the one with the smaller sides). Flat points (a
    plane, a line) are a box or capsule of zero thickness across them: every half extent and
    radius is at least ``min_half``, so no distance divides by a zero size."""
    frames = []
    if frame_hint is not None:
        frames.append(frame_hint)
    if len(v) >= 3:
        cov = np.cov((v - v.mean(axis=0)).T)
        _, vecs = np.linalg.eigh(cov)
        if np.linalg.det(vecs) < 0:
            vecs[:, 0] *= -1
        frames.append(vecs)
    if not frames:
        frames.append(np.eye(3))
    best = None
    for r in frames:
        c, e = _box_in_frame(v, r)
        if best is None or np.prod(e) < np.prod(best[2]) - 1e-12 or \
                (np.prod(e) <= np.prod(best[2]) + 1e-12 and np.sum(e) < np.sum(best[2]) * (1.0 - 1e-9)):
            best = (r, c, e)
    r, c, e = best
    box = ObstacleShape(name, "box", c, half_extents=np.maximum(e, min_half), rotation=r, margin=margin)
    sphere = ObstacleShape(name, "sphere", c, radius=max(float(np.max(np.linalg.norm(v - c, axis=1))), min_half),
                           margin=margin)
    # capsule along the box's longest axis through its centre (a segment's: radius 0, then min_half)
    axis = r[:, int(np.argmax(e))]
    rel = v - c
    t = rel @ axis
    radial = np.linalg.norm(rel - t[:, None] * axis, axis=1)
    rad = float(np.max(radial))
    half = float(np.max(np.abs(t) - np.sqrt(np.maximum(rad * rad - radial * radial, 0.0))))
    capsule = None
    if half > 1e-9 * max(rad, 1.0):
        capsule = ObstacleShape(name, "capsule", c, radius=max(rad, min_half), a=c - half * axis, b=c + half * axis,
                                margin=margin)
    if shape == "SPHERE":
        return sphere
    if shape == "BOX":
        return box
    if shape == "CAPSULE":
        return capsule or sphere
    candidates = [s for s in (sphere, box, capsule) if s is not None]
    return min(candidates, key=lambda s: s.volume())


__all__ = ["ObstacleShape", "fit_shape", "polar", "yaw", "quaternion_of", "floats", "MIN_SIZE"]
