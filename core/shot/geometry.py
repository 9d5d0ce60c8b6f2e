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


# -- the vehicle's collision spheres and real geometry ------------------------------------------------

@dataclass
class RotorDisc:
    """A spinning rotor as the disc its blades sweep (body frame, metres): the centre of the disc on the
    spin axis, the unit axis, the radius (the farthest blade point from the axis)."""
    centre: np.ndarray
    axis: np.ndarray
    radius: float


def _perpendicular(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors completing ``axis`` to a right-handed frame."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(a, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(a, u)


def rotor_disc(points: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> RotorDisc | None:
    """The disc swept by a rotor's points (body frame) spinning about the line through ``origin`` along
    ``axis``; None without points or axis."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    n = float(np.linalg.norm(axis))
    if not len(points) or not n > 0:
        return None
    a = np.asarray(axis, dtype=float) / n
    rel = points - origin
    t = rel @ a
    radial = float(np.max(np.linalg.norm(rel - t[:, None] * a, axis=1)))
    return RotorDisc(np.asarray(origin, dtype=float) + 0.5 * (t.min() + t.max()) * a, a, radial)


def swept(points: np.ndarray, origin: np.ndarray, axis: np.ndarray, count: int = 16) -> np.ndarray:
    """A spinning part's points turned about its axis through ``origin`` to ``count`` angles (its real
    geometry over a turn: the blades' disc)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    n = float(np.linalg.norm(axis))
    if not len(points) or not n > 0:
        return points
    a = np.asarray(axis, dtype=float) / n
    rel = points - origin
    along = (rel @ a)[:, None] * a
    perp = rel - along
    cross = np.cross(a, perp)
    out = [origin + along + math.cos(th) * perp + math.sin(th) * cross
           for th in np.linspace(0.0, 2.0 * math.pi, count, endpoint=False)]
    return np.concatenate(out)


def _row_of_spheres(body: np.ndarray, radius: float) -> np.ndarray:
    """Spheres along the body's X axis covering the bounding box of the points (``radius`` > 0: that
    radius instead of the fitted one)."""
    lo, hi = body.min(axis=0), body.max(axis=0)
    length = hi[0] - lo[0]
    cross = math.hypot(0.5 * (hi[1] - lo[1]), 0.5 * (hi[2] - lo[2]))
    n = max(1, math.ceil(length / max(cross, 1e-9) - 1e-9))
    spacing = length / n
    fitted = math.sqrt(cross ** 2 + (0.5 * spacing) ** 2)
    yc, zc = 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])
    return np.array([[lo[0] + (i + 0.5) * spacing, yc, zc, radius if radius > 0 else fitted] for i in range(n)])


def disc_spheres(disc: RotorDisc, bottom: float | None, body_spheres: np.ndarray) -> np.ndarray:
    """Spheres covering a rotor disc without reaching below the body: radius ρ = R/2 (seven spheres, the
    fewest equal discs that cover a disc), lowered to the height of the disc above the body's lowest
    point (``bottom``, body z) but not below R/3 (at most 19); centres on a hexagonal grid in the disc's
    plane (spacing ρ√3: the cells' corners are ρ from their centres), every cell that meets the disc,
    except spheres inside a body sphere."""
    R = float(disc.radius)
    if not R > 0:
        return np.zeros((0, 4))
    height = float(disc.centre[2] - bottom) if bottom is not None else 0.0
    rho = min(0.5 * R, max(height, R / 3.0))
    u, v = _perpendicular(disc.axis)
    s = rho * math.sqrt(3.0)
    m = int(math.ceil((R + rho) / s)) + 1
    rows = []
    for i in range(-2 * m, 2 * m + 1):
        for j in range(-m, m + 1):
            x, y = s * (i + 0.5 * j), s * (math.sqrt(3.0) / 2.0) * j
            if math.hypot(x, y) >= R + rho * (1.0 - 1e-9):
                continue
            c = disc.centre + x * u + y * v
            if len(body_spheres) and np.any(np.linalg.norm(body_spheres[:, :3] - c, axis=1) + rho
                                            <= body_spheres[:, 3]):
                continue
            rows.append([*c, rho])
    return np.array(rows).reshape(-1, 4)


def fit_spheres(body: np.ndarray, radius: float = 0.0, disc: RotorDisc | None = None) -> np.ndarray:
    """Collision spheres (body frame, metres; (S, 4) rows x, y, z, r) of a vehicle: a row along its X axis
    covering the bounding box of its points ``body`` (the body and every part but the main rotor), and a
    main rotor's ``disc`` covered by spheres that reach no lower than the body (:func:`disc_spheres`): a
    rotor disc well above the skids does not make a vehicle standing on a roof reach into it.
    ``radius`` > 0 is the artist's Collision Radius for the row. No points and no radius: no spheres."""
    body = np.asarray(body, dtype=float).reshape(-1, 3)
    if len(body):
        rows = _row_of_spheres(body, radius)
    elif radius > 0:
        rows = np.array([[0.0, 0.0, 0.0, radius]])
    else:
        rows = np.zeros((0, 4))
    if disc is not None:
        bottom = float(body[:, 2].min()) if len(body) else None
        rows = np.concatenate([rows, disc_spheres(disc, bottom, rows)])
    return rows


__all__ = ["ObstacleShape", "fit_shape", "polar", "yaw", "quaternion_of", "floats", "MIN_SIZE", "RotorDisc",
           "rotor_disc", "swept", "fit_spheres", "disc_spheres"]
