"""Keep-out obstacles: signed distances with gradients, and the hazard potential (Kobilarov, Crane &
Desbrun 2009, §6: obstacles "in the form of inequalities or as penalizing terms in the cost
function"; ``docs/equations.md``, "DMOC").

The vehicle is a set of body-frame collision spheres (c_s, r_s); each keeps its surface at least
``margin`` from every obstacle, d_o(x + R c_s) − r_s ≥ margin, except around a :class:`Contact` (the
vehicle keyed at rest on or against the obstacle), where the floor drops to the spheres' clearance
at the touching pose (``Obstacle.floors``). d_o is the signed distance (negative inside):

* sphere (centre c, radius r):        d = |p − c| − r
* capsule (segment a–b, radius r):    d = |p − (a + t*(b − a))| − r,  t* = clip((p − a)·(b − a)/|b − a|², 0, 1)
* oriented box (centre c, rotation Q, half extents e), q = Qᵀ(p − c):
      d = |max(|q| − e, 0)| + min(max_i(|q_i| − e_i), 0)        (exact distance)

Outside the box d is the Euclidean distance to a convex set, continuously differentiable, so the
clearance d ≥ margin > 0 is smooth where it matters; inside, its gradient is the nearest face's
normal, with kinks only on the interior medial planes (reached only by a guess that crosses a box).
Exactly at the surface the inside formula is used. Hazard potential (a cost): φ(d) = exp(−d/ℓ),
ℓ the hazard length.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .problem import same_values

try:  # the clip ufunc and einsum themselves: the same values without numpy's Python-level wrappers
    from numpy._core._multiarray_umath import c_einsum as _einsum
    from numpy._core.umath import clip as _clip
except ImportError:  # pragma: no cover - numpy 1.x
    try:
        from numpy.core._multiarray_umath import c_einsum as _einsum
        from numpy.core.umath import clip as _clip
    except ImportError:  # a numpy that moved them again: the public functions (same values)
        _einsum, _clip = np.einsum, np.clip

TINY = 1e-300


def _norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt(_einsum("...i,...i->...", v, v))


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
    w = np.abs(q) - half_extents
    out_v = np.maximum(w, 0.0)
    out = _norm(out_v)
    outside = out > 0.0
    g_local = np.copysign(out_v, q) / np.where(outside, out, 1.0)[..., None]  # sign(q) max(w, 0) / |…|
    d = out
    if not outside.all():
        inside_j = w.argmax(axis=-1)
        # the nearest face of every point (its largest w) as flat positions in the raveled (…, 3) arrays:
        # plain gathers instead of numpy's take/put_along_axis, whose Python-level index building dominates here
        at = np.arange(0, 3 * inside_j.size, 3) + inside_j.ravel()
        g_in = np.zeros(q.size)
        g_in[at] = np.where(q.ravel()[at] < 0.0, -1.0, 1.0)
        g_in = g_in.reshape(q.shape)
        inside = w.ravel()[at].reshape(inside_j.shape)
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
class Contact:
    """The vehicle touches an obstacle at ``time`` (a pose keyed at rest on or against it): around it the
    clearance floor of that obstacle is lowered from its margin to ``allowance`` (the collision spheres'
    clearance at the touching pose, negative when they reach into the obstacle), and rises back
    quadratically, reaching the margin ``span`` seconds before and after:

        floor(t) = allowance + (margin − allowance) · min(1, |t − time| / span)²

    Quadratic, so that a vehicle at rest at ``time`` can meet it with a bounded acceleration
    (2 (margin − allowance) / span²); a linear rise would need an infinite one."""

    time: float
    allowance: float
    span: float = 1.0


@dataclass(frozen=True)
class Obstacle:
    """One keep-out obstacle; ``label`` names it in messages (e.g. ``obstacle #2 (box)``). ``contacts``
    lower its clearance floor around the times the vehicle touches it (:class:`Contact`)."""

    kind: str
    center: np.ndarray | None = None
    radius: float = 0.0
    half_extents: np.ndarray | None = None
    rotation: np.ndarray | None = None
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    margin: float = 0.0
    label: str = "obstacle"
    contacts: tuple[Contact, ...] = ()

    def floors(self, times) -> np.ndarray:
        """The least clearance allowed at each of ``times`` (s): the margin, lowered around each contact
        (the lowest of the contacts' floors where they overlap)."""
        t = np.asarray(times, dtype=float)
        out = np.full(t.shape, float(self.margin))
        for c in self.contacts:
            s = np.minimum(1.0, np.abs(t - c.time) / c.span)
            out = np.minimum(out, c.allowance + (self.margin - c.allowance) * s * s)
        return out

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


# The kernels of ObstacleSet: (d, ∇d, aux) of stacked obstacles of one family, and ∇²d from (prm, aux), so
# that the Hessian at the point whose values were just asked reuses d, ∇d and their intermediates
# (the same formulas as the single-obstacle functions above: bit-identical results). Spheres and
# capsules are one family: a sphere is a capsule whose segment is a point (ab = 0, so t = 0, the
# nearest point is a = c and P = I: the sphere's own expressions).
def _rounds(p: np.ndarray, prm: tuple):
    a, ab, L2, radius, _ = prm  # a, ab repeated over the points: (O, B, 3), no broadcast over the last axis
    # t of every capsule by one batched matrix-vector product: the same sums as capsule_distance's
    t_raw = np.matmul(p - a, ab[:, 0, :, None])[..., 0] / L2
    dv = p - (a + np.repeat(_clip(t_raw, 0.0, 1.0), 3, axis=-1).reshape(ab.shape) * ab)
    n = _norm(dv)
    g = dv / np.maximum(n, TINY)[..., None]
    return n - radius, g, (t_raw, g, n)


def _rounds_hessian(prm: tuple, aux: tuple) -> np.ndarray:
    _, ab, L2, _, _ = prm
    return _capsule_curvature(ab, L2, *aux)


def _boxes(p: np.ndarray, prm: tuple):
    center, rotation, half = prm
    return _box(p, center, rotation, half, "aux")


def _boxes_hessian(prm: tuple, aux: tuple) -> np.ndarray:
    return _box_curvature(*aux)


# Weighted curvature Σ_o λ_o ∇²d_o = Σ_o c_o P_o − Σ_o c_o ∇d_o ∇d_oᵀ (c_o = λ_o/n_o, see _curvature):
# each family adds its Σ c_o P_o into H (B, 3, 3) and returns its c (O_family, B); the ∇d ∇dᵀ terms of
# all obstacles are summed at once by ObstacleSet.weighted_hessian. No (O, B, 3, 3) array is formed.
def _diagonal(H: np.ndarray) -> np.ndarray:
    """The diagonal of every H (B, 3, 3), as a writable (B, 3) view."""
    return H.reshape(H.shape[0], 9)[:, ::4]


def _rounds_weighted(prm: tuple, aux: tuple, lam: np.ndarray, H: np.ndarray) -> np.ndarray:
    axis_proj = prm[4]
    t_raw, _, n = aux
    c = lam / np.maximum(n, CURV_FLOOR)
    _diagonal(H)[...] += np.add.reduce(c, axis=0)[:, None]
    if axis_proj is not None:  # P = I − ab abᵀ/|ab|² where the nearest point is inside a capsule's segment
        H.reshape(H.shape[0], 9)[...] -= (c * ((t_raw > 0.0) & (t_raw < 1.0))).T @ axis_proj
    return c


def _boxes_weighted(prm: tuple, aux: tuple, lam: np.ndarray, H: np.ndarray) -> np.ndarray:
    w, _, outside, d, rotation = aux
    c = lam * outside / np.maximum(np.where(outside, d, 1.0), CURV_FLOOR)  # zero curvature inside
    e = c[..., None] * (w > 0.0)  # c P in the box frame: the axes on which the point is outside the slab
    if rotation is None:
        _diagonal(H)[...] += np.add.reduce(e, axis=0)
    else:  # Σ_i e_i r_i r_iᵀ with r_i the box axes (columns of Q)
        O, B = c.shape
        axes = np.swapaxes(rotation, 1, 2)  # (O, i, 3): row i = axis i
        outer = (axes[:, :, :, None] * axes[:, :, None, :]).reshape(O * 3, 9)
        H.reshape(B, 9)[...] += np.swapaxes(e, 0, 1).reshape(B, O * 3) @ outer
    return c


def _as_slice(pos: np.ndarray) -> np.ndarray | slice:
    """Positions as a slice when they are consecutive (the usual case: obstacles of a kind listed together):
    reading and writing the rows of a family then costs a view, not a fancy-index copy."""
    if len(pos) and np.array_equal(pos, np.arange(pos[0], pos[0] + len(pos))):
        return slice(int(pos[0]), int(pos[0]) + len(pos))
    return pos


_FAMILY = {"sphere": "round", "capsule": "round", "box": "box"}
_KERNELS = {"round": (_rounds, _rounds_hessian, _rounds_weighted), "box": (_boxes, _boxes_hessian, _boxes_weighted)}


class ObstacleSet:
    """Several obstacles evaluated together: one vectorised call per family (every box at once, every
    sphere and capsule at once) instead of one per obstacle. The same formulas as :meth:`Obstacle.distance`
    and :meth:`Obstacle.distance_hessian`, results in the obstacles' order (the groups built from
    them keep each obstacle's label)."""

    def __init__(self, obstacles: Sequence[Obstacle]):
        self.obstacles = list(obstacles)
        self._kinds: list[tuple[str, np.ndarray | slice, tuple]] = []
        unknown = {ob.kind for ob in self.obstacles} - set(_FAMILY)
        if unknown:
            raise ValueError(f"unknown obstacle kind {sorted(unknown)[0]!r}")
        for family in _KERNELS:
            pos = np.array([i for i, ob in enumerate(self.obstacles) if _FAMILY[ob.kind] == family], dtype=np.int64)
            if not len(pos):
                continue
            obs = [self.obstacles[i] for i in pos]
            radius = np.array([[float(ob.radius)] for ob in obs])
            if family == "round":
                a = np.stack([np.asarray(ob.a if ob.kind == "capsule" else ob.center, dtype=float) for ob in obs])
                b = np.stack([np.asarray(ob.b if ob.kind == "capsule" else ob.center, dtype=float) for ob in obs])
                a, ab = a[:, None, :], (b - a)[:, None, :]  # a sphere: ab = 0
                L2 = np.array([[max(float(v[0] @ v[0]), TINY)] for v in ab])  # as capsule_distance
                # (O, 9): ab abᵀ/|ab|² of every capsule, for the weighted curvature (None: only spheres)
                axis_proj = (ab[:, 0, :, None] * ab[:, 0, None, :] / L2[:, :, None]).reshape(len(ab), 9)
                prm: tuple = (a, ab, L2, radius, axis_proj if np.any(axis_proj) else None)
            else:
                R = np.stack([np.asarray(ob.rotation, dtype=float) for ob in obs])
                # axis-aligned boxes (the common case) skip the three rotation products: same values
                prm = (_stacked(obs, "center"), None if np.array_equal(R, np.broadcast_to(np.eye(3), R.shape)) else R,
                       _stacked(obs, "half_extents"))
            self._kinds.append((family, _as_slice(pos), prm))
        self._last: tuple | None = None  # (p, d, ∇d, per-kind intermediates) at the last points
        self._tiles: dict[int, list[tuple]] = {}  # B → each family's parameters with (O, B, 3) vectors

    def __len__(self) -> int:
        return len(self.obstacles)

    def index(self, obstacle: Obstacle) -> int:
        """Position of this very obstacle object in the set (ValueError if absent)."""
        for i, ob in enumerate(self.obstacles):
            if ob is obstacle:
                return i
        raise ValueError(f"{obstacle.label} is not in this obstacle set")

    def _tiled(self, B: int) -> list[tuple]:
        """The families' parameters with their 3-vectors repeated over B points (elementwise operations
        between (O, B, 3) arrays run far faster than broadcasts over a last axis of 3; same values)."""
        tiles = self._tiles.get(B)
        if tiles is None:
            rep = lambda v: None if v is None else np.repeat(v, B, axis=1)  # noqa: E731
            tiles = []
            for kind, _, prm in self._kinds:
                if kind == "round":
                    a, ab, L2, radius, proj = prm
                    tiles.append((rep(a), rep(ab), L2, radius, proj))
                else:
                    center, rotation, half = prm
                    tiles.append((rep(center), rotation, rep(half)))
            self._tiles = {B: tiles}  # one size at a time (an NLP evaluates one B)
        return tiles

    def _at(self, p: np.ndarray) -> tuple:
        """(p, d, ∇d, per-kind intermediates) at p, remembered for the last p."""
        p = np.asarray(p, dtype=float)
        last = self._last
        if last is not None and same_values(last[0], p):
            return last
        O, B = len(self.obstacles), p.shape[0]
        d, g = np.empty((O, B)), np.empty((O, B, 3))
        auxes = []
        for (kind, pos, _), prm in zip(self._kinds, self._tiled(B)):
            dk, gk, aux = _KERNELS[kind][0](p[None], prm)
            d[pos], g[pos] = dk, gk
            auxes.append(aux)
        self._last = (p.copy(), d, g, auxes)
        return self._last

    def evaluate(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d (O, B) and ∇d (O, B, 3) as :meth:`distances`, but the remembered arrays themselves (no
        copies: read them, never write)."""
        _, d, g, _ = self._at(p)
        return d, g

    def weighted_hessian(self, p: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Σ_o λ_o ∇²d_o (B, 3, 3) for weights lam (O, B): the Hessians of :meth:`distances` contracted
        over the obstacles (equal to round-off) without forming them one by one."""
        _, d, g, auxes = self._at(p)
        lam = np.asarray(lam, dtype=float)
        H = np.zeros((p.shape[0], 3, 3))
        c = np.empty(d.shape)
        for (kind, pos, prm), aux in zip(self._kinds, auxes):
            c[pos] = _KERNELS[kind][2](prm, aux, lam[pos], H)
        # Σ_o c_o ∇d_o ∇d_oᵀ as one (3, O)·(O, 3) product per point
        H -= np.matmul(g.swapaxes(0, 1).transpose(0, 2, 1), (c[..., None] * g).swapaxes(0, 1))
        return H

    def distances(self, p: np.ndarray, hessian: bool = False):
        """Signed distances d (O, B) of points p (B, 3) to every obstacle, gradients (O, B, 3) and, with
        ``hessian``, Hessians (O, B, 3, 3). The values and intermediates at the last p are kept: the
        Hessian at the point whose values were just asked is formed from them."""
        _, d, g, auxes = self._at(p)
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


__all__ = ["Obstacle", "Contact", "ObstacleSet", "sphere_distance", "capsule_distance", "box_distance", "hazard", "sphere_distance_hessian",
           "capsule_distance_hessian", "box_distance_hessian", "CURV_FLOOR"]
