"""Keep-out obstacles: signed distances with gradients, and the hazard potential.

Paper §6: "obstacle avoidance can be imposed in the form of inequalities or as
penalizing terms in the cost function" (safest travel: a repulsive potential from
hazards). The vehicle is a set of body-frame collision spheres (centre c_s, radius r_s);
each sphere must keep its surface at least ``margin`` from every obstacle:

    d_o(x + R c_s) − r_s ≥ margin                                            (clearance)

with d_o the signed distance to obstacle o (negative inside):

* sphere (centre c, radius r):        d = |p − c| − r
* capsule (segment a–b, radius r):    d = |p − (a + t*(b − a))| − r,  t* = clip((p − a)·(b − a)/|b − a|², 0, 1)
* oriented box (centre c, rotation Q, half extents e), q = Qᵀ(p − c):
      d = |max(|q| − e, 0)| + min(max_i(|q_i| − e_i), 0)        (exact distance)

The box distance is exact: outside the box it is the Euclidean distance to a convex
set, which is continuously differentiable (its gradient, the unit vector from the
nearest surface point, is continuous), so the clearance constraint d ≥ margin > 0 is
smooth where it matters. Inside, the distance is the largest face distance, whose
gradient is the nearest face's normal; at a face it matches the outside gradient, so
the only kinks are on the interior medial planes (reached only by an initial guess
that crosses a box; the solver leaves them in the first iterations). Exactly at the
surface the outside formula is 0/0 and the inside one is used.

Hazard potential (a cost): φ(d) = exp(−d / ℓ), ℓ the hazard length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .problem import same_values

TINY = 1e-300


def _norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("...i,...i->...", v, v))


def sphere_distance(p: np.ndarray, center: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """d = |p − c| − r and ∇d = (p − c)/|p − c| for p (B, 3)."""
    dv = np.asarray(p, dtype=float) - center
    n = _norm(dv)
    grad = dv / np.maximum(n, TINY)[..., None]
    return n - radius, grad


def capsule_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Distance to the segment a–b minus r; ∇d = unit vector from the nearest segment point."""
    p = np.asarray(p, dtype=float)
    ab = b - a
    t = np.clip(((p - a) @ ab) / max(float(ab @ ab), TINY), 0.0, 1.0)
    dv = p - (a + t[..., None] * ab)
    n = _norm(dv)
    return n - radius, dv / np.maximum(n, TINY)[..., None]


def _box(p: np.ndarray, center: np.ndarray, rotation: np.ndarray, half_extents: np.ndarray, curvature: bool | str):
    """p (B, 3) and one box (center (3,), rotation (3, 3)), or stacked boxes: p (1, B, 3), center (O, 1, 3),
    rotation (O, 3, 3), half extents (O, 1, 3). ``rotation=None``: axis-aligned (Q = I, no products).
    ``curvature``: False → (d, ∇d); True → (d, ∇d, ∇²d); "aux" → (d, ∇d, intermediates of ∇²d)."""
    q = np.asarray(p, dtype=float) - center
    if rotation is not None:
        q = q @ rotation  # Qᵀ(p − c) for row vectors
    s = np.where(q < 0.0, -1.0, 1.0)
    w = np.abs(q) - half_extents
    out_v = np.maximum(w, 0.0)
    out = _norm(out_v)
    outside = out > 0.0
    g_local = s * out_v / np.where(outside, out, 1.0)[..., None]
    d = out
    if not np.all(outside):
        inside_j = np.argmax(w, axis=-1)
        at = (np.arange(len(w)),) if w.ndim == 2 else ()
        if w.ndim == 2:
            g_in = np.zeros_like(q)
            g_in[at[0], inside_j] = s[at[0], inside_j]
            inside = w[at[0], inside_j]
        else:
            g_in = np.zeros_like(q)
            np.put_along_axis(g_in, inside_j[..., None], np.take_along_axis(s, inside_j[..., None], axis=-1), axis=-1)
            inside = np.take_along_axis(w, inside_j[..., None], axis=-1)[..., 0]
        g_local = np.where(outside[..., None], g_local, g_in)
        d = np.where(outside, out, inside)
    rt = None if rotation is None else np.swapaxes(rotation, -1, -2)
    g = g_local if rt is None else g_local @ rt
    if curvature == "aux":
        return d, g, (w, g_local, outside, d, rotation)
    if not curvature:
        return d, g
    return d, g, _box_curvature(w, g_local, outside, d, rotation)


def _box_curvature(w, g_local, outside, d, rotation):
    """∇²d of :func:`_box` from its intermediates (in the box frame, rotated back)."""
    Hl = _curvature((w > 0.0)[..., :, None] * np.eye(3), g_local, np.where(outside, d, 1.0))
    Hl *= outside[..., None, None]
    if rotation is None:
        return Hl
    return rotation[..., None, :, :] @ Hl @ np.swapaxes(rotation, -1, -2)[..., None, :, :]


def box_distance(p: np.ndarray, center: np.ndarray, rotation: np.ndarray,
                 half_extents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact signed distance to an oriented box and its gradient (see the module docstring)."""
    return _box(p, center, rotation, half_extents, False)


# Curvature of the distance: ∇²d = (P − ∇d ∇dᵀ)/n with n the distance to the nearest point of the
# obstacle's core (centre, segment, box) and P the projector onto the directions in which that
# nearest point stays put (sphere: I; capsule: I − uuᵀ inside the segment, u along it, I at an end;
# box, in its frame: the axes on which the point is outside the slab). Deep inside a box d is
# piecewise linear: ∇²d = 0. n is floored at CURV_FLOOR (the centre of a sphere is a kink).
CURV_FLOOR = 1e-9


def _curvature(P: np.ndarray, g: np.ndarray, n: np.ndarray) -> np.ndarray:
    return (P - g[..., :, None] * g[..., None, :]) / np.maximum(n, CURV_FLOOR)[..., None, None]


def sphere_distance_hessian(p: np.ndarray, center: np.ndarray, radius: float):
    """d, ∇d (B, 3) and ∇²d (B, 3, 3) of :func:`sphere_distance`."""
    dv = np.asarray(p, dtype=float) - center
    n = _norm(dv)
    g = dv / np.maximum(n, TINY)[..., None]
    return n - radius, g, _curvature(np.eye(3), g, n)


def capsule_distance_hessian(p: np.ndarray, a: np.ndarray, b: np.ndarray, radius: float):
    """d, ∇d and ∇²d of :func:`capsule_distance`."""
    p = np.asarray(p, dtype=float)
    ab = b - a
    L2 = max(float(ab @ ab), TINY)
    t_raw = ((p - a) @ ab) / L2
    return _capsule_hessian(p, a, ab, L2, t_raw, radius)


def _capsule_hessian(p, a, ab, L2, t_raw, radius):
    """The rest of :func:`capsule_distance_hessian` once t (unclipped) is known; broadcasts over stacked
    capsules (a, ab (O, 1, 3), L2 and radius (O, 1))."""
    t = np.clip(t_raw, 0.0, 1.0)
    dv = p - (a + t[..., None] * ab)
    n = _norm(dv)
    g = dv / np.maximum(n, TINY)[..., None]
    return n - radius, g, _capsule_curvature(ab, L2, t_raw, g, n)


def _capsule_curvature(ab, L2, t_raw, g, n):
    """∇²d of a capsule from t (unclipped), ∇d and the distance n to the segment."""
    L2 = np.asarray(L2)
    inner = (t_raw > 0.0) & (t_raw < 1.0)
    P = np.eye(3) - inner[..., None, None] * ((ab[..., :, None] * ab[..., None, :]) / L2[..., None, None])
    return _curvature(P, g, n)


def box_distance_hessian(p: np.ndarray, center: np.ndarray, rotation: np.ndarray, half_extents: np.ndarray):
    """d, ∇d and ∇²d of :func:`box_distance` (zero curvature inside)."""
    return _box(p, center, rotation, half_extents, True)


@dataclass(frozen=True)
class Obstacle:
    """One keep-out obstacle; ``label`` names it in messages (e.g. ``obstacle #2 (box)``)."""

    kind: str
    center: np.ndarray | None = None
    radius: float = 0.0
    half_extents: np.ndarray | None = None
    rotation: np.ndarray | None = None
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    margin: float = 0.0
    label: str = "obstacle"

    def distance(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance of points p (B, 3) and its gradient (B, 3)."""
        if self.kind == "sphere":
            return sphere_distance(p, self.center, self.radius)
        if self.kind == "capsule":
            return capsule_distance(p, self.a, self.b, self.radius)
        if self.kind == "box":
            return box_distance(p, self.center, self.rotation, self.half_extents)
        raise ValueError(f"unknown obstacle kind {self.kind!r}")

    def distance_hessian(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Signed distance (B,), its gradient (B, 3) and its Hessian (B, 3, 3)."""
        if self.kind == "sphere":
            return sphere_distance_hessian(p, self.center, self.radius)
        if self.kind == "capsule":
            return capsule_distance_hessian(p, self.a, self.b, self.radius)
        if self.kind == "box":
            return box_distance_hessian(p, self.center, self.rotation, self.half_extents)
        raise ValueError(f"unknown obstacle kind {self.kind!r}")

    def bounding_radius(self) -> float:
        if self.kind == "sphere":
            return self.radius
        if self.kind == "capsule":
            return 0.5 * float(np.linalg.norm(self.b - self.a)) + self.radius
        return float(np.linalg.norm(self.half_extents))

    def middle(self) -> np.ndarray:
        return 0.5 * (self.a + self.b) if self.kind == "capsule" else np.asarray(self.center, dtype=float)


def _stacked(obstacles: Sequence[Obstacle], name: str) -> np.ndarray:
    """(O, 1, 3): a 3-vector attribute of several obstacles, broadcasting against points (1, B, 3)."""
    return np.stack([np.asarray(getattr(ob, name), dtype=float) for ob in obstacles])[:, None, :]


# The kernels of ObstacleSet: (d, ∇d, aux) of stacked obstacles of one kind, and ∇²d from (prm, aux), so
# that the Hessian at the point whose values were just asked reuses d, ∇d and their intermediates
# (the same formulas as the single-obstacle functions above: bit-identical results).
def _spheres(p: np.ndarray, prm: tuple):
    center, radius = prm
    dv = p - center
    n = _norm(dv)
    g = dv / np.maximum(n, TINY)[..., None]
    return n - radius, g, (g, n)


def _spheres_hessian(prm: tuple, aux: tuple) -> np.ndarray:
    g, n = aux
    return _curvature(np.eye(3), g, n)


def _capsules(p: np.ndarray, prm: tuple):
    a, ab, L2, radius = prm
    # t per capsule by the same product as capsule_distance (bit-identical results)
    t_raw = np.stack([(p[0] - a[o, 0]) @ ab[o, 0] for o in range(len(a))]) / L2
    dv = p - (a + np.clip(t_raw, 0.0, 1.0)[..., None] * ab)
    n = _norm(dv)
    g = dv / np.maximum(n, TINY)[..., None]
    return n - radius, g, (t_raw, g, n)


def _capsules_hessian(prm: tuple, aux: tuple) -> np.ndarray:
    _, ab, L2, _ = prm
    return _capsule_curvature(ab, L2, *aux)


def _boxes(p: np.ndarray, prm: tuple):
    center, rotation, half = prm
    return _box(p, center, rotation, half, "aux")


def _boxes_hessian(prm: tuple, aux: tuple) -> np.ndarray:
    return _box_curvature(*aux)


_KERNELS = {"sphere": (_spheres, _spheres_hessian), "capsule": (_capsules, _capsules_hessian),
            "box": (_boxes, _boxes_hessian)}


class ObstacleSet:
    """Several obstacles evaluated together: one vectorised call per kind (every box at once, every
    capsule at once, …) instead of one per obstacle. The same formulas as :meth:`Obstacle.distance`
    and :meth:`Obstacle.distance_hessian`, results in the obstacles' order (the groups built from
    them keep each obstacle's label)."""

    def __init__(self, obstacles: Sequence[Obstacle]):
        self.obstacles = list(obstacles)
        self._kinds: list[tuple[str, np.ndarray, tuple]] = []
        unknown = {ob.kind for ob in self.obstacles} - set(_KERNELS)
        if unknown:
            raise ValueError(f"unknown obstacle kind {sorted(unknown)[0]!r}")
        for kind in _KERNELS:
            pos = np.array([i for i, ob in enumerate(self.obstacles) if ob.kind == kind], dtype=np.int64)
            if not len(pos):
                continue
            obs = [self.obstacles[i] for i in pos]
            radius = np.array([[float(ob.radius)] for ob in obs])
            if kind == "sphere":
                prm: tuple = (_stacked(obs, "center"), radius)
            elif kind == "capsule":
                a = _stacked(obs, "a")
                ab = _stacked(obs, "b") - a
                L2 = np.array([[max(float(v[0] @ v[0]), TINY)] for v in ab])  # as capsule_distance
                prm = (a, ab, L2, radius)
            else:
                R = np.stack([np.asarray(ob.rotation, dtype=float) for ob in obs])
                # axis-aligned boxes (the common case) skip the three rotation products: same values
                prm = (_stacked(obs, "center"), None if np.array_equal(R, np.broadcast_to(np.eye(3), R.shape)) else R,
                       _stacked(obs, "half_extents"))
            self._kinds.append((kind, pos, prm))
        self._last: tuple | None = None  # (p, d, ∇d, per-kind intermediates) at the last points

    def __len__(self) -> int:
        return len(self.obstacles)

    def index(self, obstacle: Obstacle) -> int:
        """Position of this very obstacle object in the set (ValueError if absent)."""
        for i, ob in enumerate(self.obstacles):
            if ob is obstacle:
                return i
        raise ValueError(f"{obstacle.label} is not in this obstacle set")

    def distances(self, p: np.ndarray, hessian: bool = False):
        """Signed distances d (O, B) of points p (B, 3) to every obstacle, gradients (O, B, 3) and, with
        ``hessian``, Hessians (O, B, 3, 3). The values and intermediates at the last p are kept: the
        Hessian at the point whose values were just asked is formed from them."""
        p = np.asarray(p, dtype=float)
        last = self._last
        if last is not None and same_values(last[0], p):
            _, d, g, auxes = last
        else:
            O, B = len(self.obstacles), p.shape[0]
            d, g = np.empty((O, B)), np.empty((O, B, 3))
            auxes = []
            for kind, pos, prm in self._kinds:
                dk, gk, aux = _KERNELS[kind][0](p[None], prm)
                d[pos], g[pos] = dk, gk
                auxes.append(aux)
            self._last = (p.copy(), d, g, auxes)
        if not hessian:
            return d.copy(), g.copy()
        H = np.empty(g.shape + (3,))
        for (kind, pos, prm), aux in zip(self._kinds, auxes):
            H[pos] = _KERNELS[kind][1](prm, aux)
        return d.copy(), g.copy(), H


def hazard(d: np.ndarray, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Hazard potential φ(d) = exp(−d/ℓ) and dφ/dd."""
    e = np.exp(-np.asarray(d, dtype=float) / length)
    return e, -e / length


__all__ = ["Obstacle", "ObstacleSet", "sphere_distance", "capsule_distance", "box_distance", "hazard", "sphere_distance_hessian",
           "capsule_distance_hessian", "box_distance_hessian", "CURV_FLOOR"]
