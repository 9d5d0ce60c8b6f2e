"""Boat hull: a closed triangle mesh clipped by the water surface (paper §4.3.2).

The boat model of ``equations.md`` (Holonomic vehicles, Boat) needs, at every step,

* the submerged volume Π_s (as a mass of water, kg) and its world centroid x_s, for the
  buoyancy wrench 9.81·(Rᵀ((x_s − x) × (0, 0, Π_s)), Rᵀ(0, 0, Π_s − m));
* the submerged surface patches i (body position r_i, outward unit normal n_i, area dA_i)
  over which the hydrodynamic force f_h,i is summed;
* the emerged patches, which catch the wind.

Mesh. ``vertices`` (n, 3) in the body frame (origin = centre of mass), ``faces`` (m, 3)
vertex indices ordered counter-clockwise seen from outside (outward normals). A hull is
accepted only if it is closed and consistently oriented — every edge shared by exactly two
faces, traversed once in each direction — and encloses a positive volume.

Clipping. The signed depth of a world point p below the water is φ(p) = h(p_x, p_y) − p_z,
h ≡ 0 for the calm plane z = 0. Each triangle is split by the sign of φ at its vertices
(0, 1, 2 or 3 vertices submerged) into at most two submerged and two emerged triangles,
with the crossing point on each cut edge at φ = 0: found exactly by linear interpolation
for the plane (φ is linear along an edge), and by Illinois (modified regula falsi) steps on
φ for a height field, bracketed, until |φ| < 1e-12 m, so the cut points lie on the true surface. The output has a
fixed shape (…, m, 2) — empty slots are degenerate triangles of zero area — so every
step is vectorised over the triangles and over any leading batch axes of the pose.

Volume and centroid (divergence theorem, no waterline cap needed). With g(p) = p_z − h(p_x, p_y),
the fields F = (0, 0, g), (0, 0, p_x g), (0, 0, p_y g), (0, 0, (p_z² − h²)/2) have divergences
1, p_x, p_y, p_z and vanish on the water surface z = h, so over the submerged solid Ω

    V = ∫_S g n_z dA,   V x̄ = ∫_S p_x g n_z dA,   V ȳ = ∫_S p_y g n_z dA,   V z̄ = ∫_S ½(p_z² − h²) n_z dA

with S only the submerged part of the hull surface: the cap on the water surface contributes
nothing. The integrands are quadratic on a flat triangle when h is linear, and the
three-edge-midpoint rule used here is exact for quadratics, so the plane z = 0 and any
tilted plane h = a x + b y + c are integrated exactly (to round-off). For a curved height
field h is sampled at the edge midpoints of each clipped triangle and the waterline is the
polygon through the cut points: the error is second order in the triangle size, and surface
features smaller than the triangles (a crest between three emerged vertices) are missed —
refine the hull with :func:`subdivide` when the waves are short compared with the mesh.

Work is per (pose, face) row: a wholly wet or wholly dry face is its own patch (no cutting); only the
faces the surface crosses are rolled, cut and split. :func:`clip_jacobian` adds the exact derivatives
of every output with respect to the pose (forward mode, the wet/dry pattern and quad diagonals held
fixed; the cut parameters by the implicit function theorem on φ = 0), for the boat's analytic
wrench Jacobian.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import ScenarioError

# h(x, y) → water surface height; takes and returns arrays of one shape (broadcasting).
HeightField = Callable[[np.ndarray, np.ndarray], np.ndarray]

TRANSOM_FRACTION = 0.35  # default hull: centre of mass this fraction of the length ahead of the transom
_REFINE_MAX_STEPS = 60  # Illinois steps on φ along each cut edge (height fields only) …
_REFINE_TOL = 1e-12     # … until every |φ| at the cut points is below this (m)


# ---------------------------------------------------------------------------------------------
# mesh checks and whole-mesh mass properties
# ---------------------------------------------------------------------------------------------
def validate_mesh(vertices: np.ndarray, faces: np.ndarray, where: str = "hull",
                  allow_inward: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Check a closed, consistently oriented, positive-volume triangle mesh; return float/int copies.

    Raises ScenarioError(where, problem) for: wrong shapes, non-finite vertices, indices out of
    range or not whole numbers, degenerate faces (a repeated vertex), an edge used by one face
    only (open mesh) or twice in the same direction (inconsistent orientation or non-manifold),
    and a non-positive enclosed volume (inside-out mesh). With ``allow_inward`` a consistently
    inward-facing mesh (negative volume) is turned outward (every face reversed) instead.
    """
    v = np.asarray(vertices, dtype=float)
    f_raw = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 4:
        raise ScenarioError(where, f"vertices must be an (n, 3) array with n ≥ 4, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ScenarioError(where, "vertices contain NaN or infinite values")
    if f_raw.ndim != 2 or f_raw.shape[1] != 3 or f_raw.shape[0] < 4:
        raise ScenarioError(where, f"faces must be an (m, 3) array with m ≥ 4, got shape {f_raw.shape}")
    if f_raw.dtype.kind not in "iu":
        if f_raw.dtype.kind != "f" or not np.all(np.isfinite(f_raw)) or np.any(f_raw != np.round(f_raw)):
            raise ScenarioError(where, "faces must hold whole-number vertex indices")
    f = f_raw.astype(np.int64)
    n = v.shape[0]
    if f.min() < 0 or f.max() >= n:
        raise ScenarioError(where, f"face vertex index out of range 0..{n - 1}")
    if np.any((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 2] == f[:, 0])):
        bad = int(np.flatnonzero((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 2] == f[:, 0]))[0])
        raise ScenarioError(where, f"face {bad} repeats a vertex")
    directed = np.stack([f, np.roll(f, -1, axis=1)], axis=-1).reshape(-1, 2)  # (3m, 2) a→b
    key = directed[:, 0] * n + directed[:, 1]
    rev = directed[:, 1] * n + directed[:, 0]
    uniq, counts = np.unique(key, return_counts=True)
    if np.any(counts > 1):
        a, b = divmod(int(uniq[np.argmax(counts > 1)]), n)
        raise ScenarioError(where, f"edge {a}-{b} is used twice in the same direction "
                            "(faces not consistently oriented, or more than two faces share it)")
    missing = ~np.isin(rev, uniq)
    if np.any(missing):
        a, b = directed[int(np.argmax(missing))]
        raise ScenarioError(where, f"mesh is not closed: edge {a}-{b} belongs to one face only")
    vol, _ = mesh_volume(v, f)
    if allow_inward and vol < 0:
        f, vol = f[:, ::-1].copy(), -vol
    if not vol > 0:
        raise ScenarioError(where, f"enclosed volume is {vol:.6g} m³; faces must be ordered "
                            "counter-clockwise seen from outside (outward normals)")
    return v, f


def mesh_volume(vertices: np.ndarray, faces: np.ndarray) -> tuple[float, np.ndarray]:
    """Signed volume and centroid of a closed mesh, by signed tetrahedra from the origin.

    V = Σ_f (a·(b × c))/6, centroid = Σ_f V_f (a + b + c)/4 / V (divergence theorem; exact for
    any closed polyhedron).
    """
    v = np.asarray(vertices, dtype=float)
    tri = v[np.asarray(faces)]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    vol_f = np.einsum("fi,fi->f", a, np.cross(b, c)) / 6.0
    vol = float(vol_f.sum())
    if vol == 0.0:
        return 0.0, np.zeros(3)
    centroid = (vol_f[:, None] * (a + b + c)).sum(axis=0) / (4.0 * vol)
    return vol, centroid


def face_areas_normals(vertices: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Area (m,) and outward unit normal (m, 3) of each face: ½ |(b − a) × (c − a)|."""
    tri = np.asarray(vertices, dtype=float)[np.asarray(faces)]
    nvec = 0.5 * np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = np.linalg.norm(nvec, axis=-1)
    normal = np.divide(nvec, area[:, None], out=np.zeros_like(nvec), where=area[:, None] > 0)
    return area, normal


@dataclass(frozen=True)
class Hull:
    """A closed, outward-oriented triangle mesh in the body frame (validated on construction)."""

    vertices: np.ndarray
    faces: np.ndarray
    volume: float = field(init=False)
    centroid: np.ndarray = field(init=False)
    face_area: np.ndarray = field(init=False, repr=False)
    face_normal: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        v, f = validate_mesh(self.vertices, self.faces)
        vol, cen = mesh_volume(v, f)
        area, normal = face_areas_normals(v, f)
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)
        object.__setattr__(self, "volume", vol)
        object.__setattr__(self, "centroid", cen)
        object.__setattr__(self, "face_area", area)
        object.__setattr__(self, "face_normal", normal)

    @property
    def area(self) -> float:
        return float(self.face_area.sum())

    def translated(self, offset: np.ndarray) -> "Hull":
        return Hull(self.vertices + np.asarray(offset, dtype=float), self.faces)


def from_mesh(vertices: np.ndarray, faces: np.ndarray, where: str = "hull") -> Hull:
    """Any closed mesh (e.g. the Blender object's own), errors naming ``where``."""
    v, f = validate_mesh(vertices, faces, where)
    return Hull(v, f)


def mesh_inertia(vertices: np.ndarray, faces: np.ndarray, mass: float,
                 about: np.ndarray = (0.0, 0.0, 0.0)) -> np.ndarray:
    """Inertia tensor (3, 3) about the point ``about`` of the closed mesh as a uniform solid of ``mass``.

    Signed tetrahedra from ``about``: each (0, a, b, c) of volume V_f = a·(b × c)/6 has second moment
    ∫ p pᵀ dV = V_f/20 (a aᵀ + b bᵀ + c cᵀ + s sᵀ), s = a + b + c; J = ρ (tr(C) I − C), ρ = mass/V.
    """
    v = np.asarray(vertices, dtype=float) - np.asarray(about, dtype=float)
    tri = v[np.asarray(faces)]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    vol_f = np.einsum("fi,fi->f", a, np.cross(b, c)) / 6.0
    vol = float(vol_f.sum())
    if not vol > 0:
        raise ScenarioError("hull", f"enclosed volume is {vol:.6g} m³: no inertia")
    s = a + b + c
    second = (np.einsum("f,fi,fj->ij", vol_f, a, a) + np.einsum("f,fi,fj->ij", vol_f, b, b)
              + np.einsum("f,fi,fj->ij", vol_f, c, c) + np.einsum("f,fi,fj->ij", vol_f, s, s)) / 20.0
    return (mass / vol) * (np.trace(second) * np.eye(3) - second)


@dataclass(frozen=True)
class MeshRepair:
    """What :func:`repair_mesh` made of a triangle soup (e.g. a Blender object's evaluated mesh).

    ``vertices`` / ``faces``: welded, without degenerate triangles, each connected piece oriented
    consistently and outward when the mesh is closed. ``open_edges``: edges used by one triangle only;
    ``nonmanifold_edges``: edges shared by more than two; ``flipped``: triangles turned to agree with
    their neighbours / face outward; ``welded``: vertices merged into another at the same place.
    """

    vertices: np.ndarray
    faces: np.ndarray
    open_edges: int
    nonmanifold_edges: int
    flipped: int
    welded: int
    volume: float

    @property
    def closed(self) -> bool:
        return self.open_edges == 0 and self.nonmanifold_edges == 0 and len(self.faces) >= 4 and self.volume > 0


def repair_mesh(vertices: np.ndarray, faces: np.ndarray, weld: float | None = None) -> MeshRepair:
    """Weld coincident vertices (closer than ``weld``; default 1e-6 × the bounding-box diagonal), drop
    triangles that collapse, count open and non-manifold edges, and — when every edge is shared by
    exactly two triangles — orient each connected piece consistently (breadth-first over shared edges:
    neighbours must run along their common edge in opposite directions) and outward (positive volume).
    A piece that cannot be oriented (a Möbius-like surface) counts its edges as non-manifold.
    """
    v = np.asarray(vertices, dtype=float).reshape(-1, 3)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    welded = 0
    if len(v):
        diag = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
        tol = weld if weld is not None else 1e-6 * max(diag, 1e-12)
        key = np.round(v / tol).astype(np.int64)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        welded = len(v) - len(first)
        v, f = v[first], inverse[f]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
    n, m = len(v), len(f)
    if m == 0:
        return MeshRepair(v, f, 0, 0, 0, welded, 0.0)
    directed = np.stack([f, np.roll(f, -1, axis=1)], axis=-1).reshape(-1, 2)       # edge k of face k // 3
    undirected = np.sort(directed, axis=1)
    ukey = undirected[:, 0] * n + undirected[:, 1]
    uniq, inv, counts = np.unique(ukey, return_inverse=True, return_counts=True)
    open_edges = int(np.sum(counts == 1))
    nonmanifold = int(np.sum(counts > 2))
    flipped = 0
    if open_edges == 0 and nonmanifold == 0:
        # the two uses of each edge: faces p, q and whether they run the same way (then one must flip)
        order = np.argsort(inv, kind="stable")
        p_use, q_use = order[0::2], order[1::2]
        same = directed[p_use, 0] == directed[q_use, 0]
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import breadth_first_order, connected_components
        fp, fq = p_use // 3, q_use // 3
        graph = coo_matrix((np.ones(len(fp)), (fp, fq)), shape=(m, m)).tocsr()
        graph = graph + graph.T
        relation = {}
        for a, b, s_ in zip(fp.tolist(), fq.tolist(), same.tolist()):
            relation[(a, b)] = relation[(b, a)] = s_
        flip = np.zeros(m, dtype=bool)
        ncomp, label = connected_components(graph, directed=False)
        for comp in range(ncomp):
            root = int(np.flatnonzero(label == comp)[0])
            visit, pred = breadth_first_order(graph, root, directed=False, return_predecessors=True)
            for face in visit[1:].tolist():
                flip[face] = flip[pred[face]] ^ relation[(face, int(pred[face]))]
        f = np.where(flip[:, None], f[:, ::-1], f)
        # every shared edge must now run both ways (a reversed face runs its edges backwards)
        start_p = np.where(flip[fp], directed[p_use, 1], directed[p_use, 0])
        start_q = np.where(flip[fq], directed[q_use, 1], directed[q_use, 0])
        clash = int(np.sum(start_p == start_q))
        if clash:
            nonmanifold = clash
        else:
            tri = v[f]
            vol_f = np.einsum("fi,fi->f", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6.0
            comp_vol = np.bincount(label, weights=vol_f, minlength=ncomp)
            inward = comp_vol[label] < 0
            f = np.where(inward[:, None], f[:, ::-1], f)
            flip ^= inward
            flipped = int(flip.sum())
    vol, _ = mesh_volume(v, f)
    return MeshRepair(v, f, open_edges, nonmanifold, flipped, welded, float(vol))


def convex_hull_mesh(vertices: np.ndarray, max_faces: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The convex hull of points (n, 3) as a closed outward mesh (its own vertices, reindexed).

    With ``max_faces``, at most that many triangles: the hull of k = max_faces/2 + 2 of its vertices
    picked by farthest-point sampling (a hull of k points has at most 2k − 4 triangles), which lies
    inside the full hull.
    """
    from scipy.spatial import ConvexHull

    pts = np.asarray(vertices, dtype=float).reshape(-1, 3)
    hull = ConvexHull(pts)
    if max_faces is not None and len(hull.simplices) > max_faces:
        cand = pts[hull.vertices]
        k = max(4, max_faces // 2 + 2)
        chosen = [int(np.argmax(np.linalg.norm(cand - cand.mean(axis=0), axis=1)))]
        dist = np.linalg.norm(cand - cand[chosen[0]], axis=1)
        for _ in range(k - 1):
            nxt = int(np.argmax(dist))
            chosen.append(nxt)
            dist = np.minimum(dist, np.linalg.norm(cand - cand[nxt], axis=1))
        pts = cand[chosen]
        hull = ConvexHull(pts)
    used = np.unique(hull.simplices)
    remap = np.full(len(pts), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    v = pts[used]
    f = remap[hull.simplices]
    # outward: each triangle's normal along its facet's outward plane normal
    tri = v[f]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    inward = np.einsum("fi,fi->f", nrm, hull.equations[:, :3]) < 0
    f = np.where(inward[:, None], f[:, ::-1], f)
    return v, f


# ---------------------------------------------------------------------------------------------
# generated meshes
# ---------------------------------------------------------------------------------------------
def _loft(sections: np.ndarray, xs: np.ndarray, other_diagonal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closed mesh through convex cross-sections (s, k, 2) (y, z) at stations xs (s,), end caps fanned.

    Each section polygon is ordered counter-clockwise in the (y, z) plane; with x increasing
    from section to section this gives outward normals. Segment j (point j → j + 1) is split
    along the diagonal (i, j + 1)–(i + 1, j), or (i, j)–(i + 1, j + 1) where
    ``other_diagonal[j]``: mirrored segments take mirrored diagonals, so a mirror-symmetric
    section list gives an exactly mirror-symmetric surface.
    """
    s, k, _ = sections.shape
    ring = np.concatenate([np.broadcast_to(xs[:, None, None], (s, k, 1)), sections], axis=-1).reshape(-1, 3)
    i = np.arange(s - 1)[:, None] * k
    j = np.arange(k)[None, :]
    a, b = i + j, i + (j + 1) % k           # on section i
    c, d = a + k, b + k                     # on section i + 1
    flip = np.broadcast_to(np.asarray(other_diagonal, bool)[None, :, None], (s - 1, k, 3))
    t1 = np.where(flip, np.stack([a, b, d], -1), np.stack([a, b, c], -1)).reshape(-1, 3)
    t2 = np.where(flip, np.stack([a, d, c], -1), np.stack([b, d, c], -1)).reshape(-1, 3)
    side = np.concatenate([t1, t2])
    centres = np.stack([[xs[0], 0.0, sections[0, :, 1].mean()],
                        [xs[-1], 0.0, sections[-1, :, 1].mean()]])
    c0, c1 = s * k, s * k + 1
    jj = np.arange(k)
    # end caps fanned from the section centre: the first (transom) faces −x, so its fan runs
    # against the section order; the last (bow) faces +x and runs with it
    cap0 = np.stack([np.full(k, c0), (jj + 1) % k, jj], -1)
    cap1 = np.stack([np.full(k, c1), (s - 1) * k + jj, (s - 1) * k + (jj + 1) % k], -1)
    verts = np.concatenate([ring, centres])
    faces = np.concatenate([side, cap0, cap1])
    return verts, faces


def box_hull(size: np.ndarray = (1.0, 1.0, 1.0), center: np.ndarray = (0.0, 0.0, 0.0),
             divisions: int = 1) -> Hull:
    """Axis-aligned box of edge lengths ``size`` centred at ``center``; 12·divisions² triangles per side pair.

    ``divisions`` > 1 splits every face into a grid (useful against curved water surfaces).
    """
    size = np.asarray(size, dtype=float)
    center = np.asarray(center, dtype=float)
    if divisions < 1:
        raise ScenarioError("hull", f"divisions must be at least 1, got {divisions}")
    t = np.linspace(-0.5, 0.5, divisions + 1)
    verts: list[np.ndarray] = []
    faces: list[np.ndarray] = []
    base = 0
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u_ax, v_ax = (axis + 1) % 3, (axis + 2) % 3
            if sign < 0:
                u_ax, v_ax = v_ax, u_ax  # keep (u × v) along the outward normal
            U, W = np.meshgrid(t, t, indexing="ij")
            p = np.zeros(U.shape + (3,))
            p[..., axis] = 0.5 * sign
            p[..., u_ax] = U
            p[..., v_ax] = W
            verts.append(p.reshape(-1, 3))
            g = np.arange((divisions + 1) ** 2).reshape(divisions + 1, divisions + 1) + base
            a, b, c, d = g[:-1, :-1], g[1:, :-1], g[1:, 1:], g[:-1, 1:]
            faces.append(np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3),
                                         np.stack([a, c, d], -1).reshape(-1, 3)]))
            base += (divisions + 1) ** 2
    v = np.concatenate(verts)
    f = np.concatenate(faces)
    # weld the duplicated edge/corner vertices of the six grids
    key = np.round(v * 2 * divisions).astype(np.int64)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    v = v[first] * size + center
    f = inverse.reshape(-1)[f]
    return Hull(v, f)


def default_hull(length: float = 5.0, beam: float = 2.0, height: float = 0.8,
                 stations: int = 17, keel_depth: float | None = None) -> Hull:
    """A RIB-like closed hull: flat deck, vertical topsides, V bottom, tapered bow with rocker, flat transom.

    Body frame: x forward, y to port, z up; the origin (the centre of mass) sits on the centreline
    ``TRANSOM_FRACTION``·length (0.35) forward of the transom — close to the centre of buoyancy, so
    the default boat floats almost level — and ``keel_depth`` above the keel (default
    0.375·height). Each of
    the ``stations`` cross-sections has 12 points (deck centre and edges, a topside midpoint,
    the chine, two bottom points and the keel on each side), mirror-symmetric in y exactly;
    17 stations give 408 triangles.
    """
    if not (length > 0 and beam > 0 and height > 0):
        raise ScenarioError("hull", f"length, beam and height must be positive, got {length}, {beam}, {height}")
    if stations < 3:
        raise ScenarioError("hull", f"stations must be at least 3, got {stations}")
    kd = 0.375 * height if keel_depth is None else float(keel_depth)
    xs = np.linspace(-TRANSOM_FRACTION * length, (1.0 - TRANSOM_FRACTION) * length, stations)
    s = (xs - xs[0]) / length                      # 0 at the transom, 1 at the bow
    u = np.clip((s - 0.5) / 0.5, 0.0, 1.0)         # 0 aft of amidships, 1 at the bow
    half = 0.5 * beam * np.maximum(np.sqrt(1.0 - u**2), 0.08)
    keel = -kd + 0.55 * height * u**2              # rocker: the keel rises toward the bow
    deck = np.full_like(xs, height - kd)
    chine = np.minimum(-kd + 0.25 * height + 0.35 * height * u**2, deck - 0.1 * height)
    keel = np.minimum(keel, chine - 0.02 * height)
    side_mid = 0.5 * (chine + deck)
    b1 = (2 * keel + chine) / 3, (keel + 2 * chine) / 3  # bottom points (z) at 1/3 and 2/3 of the V
    # counter-clockwise in (y, z): starboard deck edge → down the starboard side → keel → up port → deck
    ys = np.stack([-half, -half, -half, -2 * half / 3, -half / 3, np.zeros_like(half),
                   half / 3, 2 * half / 3, half, half, half, np.zeros_like(half)], axis=1)
    zs = np.stack([deck, side_mid, chine, b1[1], b1[0], keel,
                   b1[0], b1[1], chine, side_mid, deck, deck], axis=1)
    # segments 0–4 (starboard) and 11 (deck centre → starboard edge) mirror 5–9 and 10
    other = np.array([False] * 5 + [True] * 5 + [True, False])
    verts, faces = _loft(np.stack([ys, zs], axis=-1), xs, other)
    return Hull(verts, faces)


def icosphere(radius: float = 1.0, level: int = 2, center: np.ndarray = (0.0, 0.0, 0.0)) -> Hull:
    """Subdivided icosahedron with vertices on a sphere (20·4^level triangles)."""
    p = (1 + 5**0.5) / 2
    v = np.array([[-1, p, 0], [1, p, 0], [-1, -p, 0], [1, -p, 0], [0, -1, p], [0, 1, p],
                  [0, -1, -p], [0, 1, -p], [p, 0, -1], [p, 0, 1], [-p, 0, -1], [-p, 0, 1]], float)
    f = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
                  [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
                  [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]])
    for _ in range(level):
        v, f = _subdivide(v, f)
    v = v / np.linalg.norm(v, axis=1, keepdims=True) * radius + np.asarray(center, float)
    return Hull(v, f)


def _subdivide(v: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edges = np.stack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], axis=1)      # (m, 3, 2)
    sorted_e = np.sort(edges, axis=-1).reshape(-1, 2)
    uniq, inv = np.unique(sorted_e, axis=0, return_inverse=True)
    mid = 0.5 * (v[uniq[:, 0]] + v[uniq[:, 1]])
    m = (inv.reshape(-1, 3) + len(v))                                          # (m, 3): mid of ab, bc, ca
    a, b, c = f[:, 0], f[:, 1], f[:, 2]
    ab, bc, ca = m[:, 0], m[:, 1], m[:, 2]
    nf = np.concatenate([np.stack([a, ab, ca], -1), np.stack([ab, b, bc], -1),
                         np.stack([ca, bc, c], -1), np.stack([ab, bc, ca], -1)])
    return np.concatenate([v, mid]), nf


def subdivide(hull: Hull, levels: int = 1) -> Hull:
    """Split every triangle into four at its edge midpoints, ``levels`` times (same solid, finer patches)."""
    v, f = hull.vertices, hull.faces
    for _ in range(levels):
        v, f = _subdivide(v, f)
    return Hull(v, f)


# ---------------------------------------------------------------------------------------------
# clipping by the water surface
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Clipped:
    """Result of :func:`clip` for a pose with batch shape (…).

    ``volume`` (…) m³ and ``centroid`` (…, 3) world: the submerged solid. The patches are
    (…, m, 2) slots (two per hull face; unused slots have zero area): ``*_position`` body-frame
    centroid r_i (…, m, 2, 3), ``*_normal`` body-frame outward unit normal n_i of the parent face,
    ``*_area`` dA_i (…, m, 2); ``submerged_*`` below the surface, ``emerged_*`` above it.
    """

    volume: np.ndarray
    centroid: np.ndarray
    submerged_position: np.ndarray
    submerged_normal: np.ndarray
    submerged_area: np.ndarray
    emerged_position: np.ndarray
    emerged_normal: np.ndarray
    emerged_area: np.ndarray

    @property
    def submerged_total_area(self) -> np.ndarray:
        return self.submerged_area.sum(axis=(-2, -1))


def _height(surface: HeightField | None, p: np.ndarray) -> np.ndarray:
    if surface is None:
        return np.zeros(p.shape[:-1])
    h = np.asarray(surface(p[..., 0], p[..., 1]), dtype=float)
    return np.broadcast_to(h, p.shape[:-1])


_ROLL = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])   # cyclic rolls (keep the orientation)
_NEXT = np.array([1, 2, 0])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis (np.cross is slow on many small vectors)."""
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def _cut(pa: np.ndarray, pb: np.ndarray, fa: np.ndarray, fb: np.ndarray, sgn: np.ndarray,
         surface: HeightField | None) -> np.ndarray:
    """Parameter t ∈ [0, 1] of φ = 0 on the segment a→b, where sgn·φ(a) ≥ 0 ≥ sgn·φ(b) (else 0)."""
    fa, fb = sgn * fa, sgn * fb
    denom = fa - fb
    ok = denom > 0
    t = np.where(ok, fa / np.where(ok, denom, 1.0), 0.0)
    if surface is None:
        return np.clip(t, 0.0, 1.0)
    # Illinois iterations on ψ(t) = sgn·(h(p(t)) − p_z(t)), bracket [lo, hi] with ψ(lo) ≥ 0 ≥ ψ(hi)
    lo, hi = np.zeros_like(t), np.ones_like(t)
    flo, fhi = np.where(ok, fa, 1.0), np.where(ok, fb, -1.0)
    side = np.zeros(t.shape, dtype=np.int8)
    for _ in range(_REFINE_MAX_STEPS):
        p = pa + t[..., None] * (pb - pa)
        ft = sgn * (_height(surface, p) - p[..., 2])
        if not np.any(ok & (np.abs(ft) > _REFINE_TOL)):
            break
        above = ft > 0
        lo = np.where(above, t, lo)
        flo = np.where(above, ft, np.where(side == -1, 0.5 * flo, flo))
        hi = np.where(above, hi, t)
        fhi = np.where(above, np.where(side == 1, 0.5 * fhi, fhi), ft)
        side = np.where(above, 1, -1).astype(np.int8)
        d = flo - fhi
        t = np.where(d > 0, lo + (hi - lo) * flo / np.where(d > 0, d, 1.0), 0.5 * (lo + hi))
    return np.clip(np.where(ok, t, 0.0), 0.0, 1.0)


# Sub-triangles as corner indices into the per-face bank [A, B, C, P, Q] (A the odd vertex, P on AB,
# Q on AC): _SLOTS[side][count of submerged corners, quad diagonal] → 2 slots × 3 corners;
# side 0 = submerged part, 1 = emerged part; (0, 0, 0) is an empty (zero-area) slot.
_E = (0, 0, 0)
_QUAD = (((3, 1, 2), (3, 2, 4)), ((3, 1, 4), (1, 2, 4)))   # diagonal P–C, or B–Q
_SLOTS = np.array([
    [[(_E, _E)] * 2, [((0, 3, 4), _E)] * 2, list(_QUAD), [((0, 1, 2), _E)] * 2],   # submerged
    [[((0, 1, 2), _E)] * 2, list(_QUAD), [((0, 3, 4), _E)] * 2, [(_E, _E)] * 2],   # emerged
], dtype=np.intp)                                                                    # (2, 4, 2, 2, 3)


def clip(hull: Hull, R: np.ndarray, x: np.ndarray, surface: HeightField | None = None) -> Clipped:
    """Split the hull at pose (R, x) (batch shape …) by the water surface z = h(x, y) (h ≡ 0 if None).

    See the module docstring for the method; volume in m³, multiply by ρ = 1000 kg/m³ for Π_s.
    """
    return _clip(hull, R, x, surface, False)[0]


@dataclass(frozen=True)
class ClippedTangent:
    """First derivatives of a :class:`Clipped` with respect to the pose, trailing axis of 6 directions:
    the body rotation increment s (R → R cay(s), j = 0…2) and the world position x (j = 3…5).

    ``volume`` (…, 6), ``moment`` (…, 3, 6) of V x̄ (``Clipped.centroid`` · volume), patch
    ``*_position`` (…, m, 2, 3, 6) and ``*_area`` (…, m, 2, 6) (the normals are those of the parent faces:
    constant). Exact derivatives of the discrete clipping (fixed combinatorics: which corners are wet and
    which quad diagonal is used; the cut parameters by the implicit function theorem on φ = 0).
    """

    volume: np.ndarray
    moment: np.ndarray
    submerged_position: np.ndarray
    submerged_area: np.ndarray
    emerged_position: np.ndarray
    emerged_area: np.ndarray


def clip_jacobian(hull: Hull, R: np.ndarray, x: np.ndarray,
                  surface: HeightField | None = None) -> tuple[Clipped, ClippedTangent]:
    """:func:`clip` and its derivatives with respect to the pose (see :class:`ClippedTangent`); R (B, 3, 3),
    x (B, 3). The height field's gradient is by central differences of h (step 1e-6 m) when it is given."""
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    if R.ndim != 3 or x.shape != (R.shape[0], 3):
        raise ValueError(f"clip_jacobian: R must be (B, 3, 3) and x (B, 3), got {R.shape} and {x.shape}")
    return _clip(hull, R, x, surface, True)


_GRAD_STEP = 1e-6


def _height_grad(surface: HeightField | None, p: np.ndarray) -> np.ndarray:
    """∇h (…, 2) at points p (…, 3) (zero for the calm plane; central differences of h otherwise)."""
    if surface is None:
        return np.zeros(p.shape[:-1] + (2,))
    d = _GRAD_STEP
    px, py = p[..., 0], p[..., 1]
    gx = (np.asarray(surface(px + d, py), float) - np.asarray(surface(px - d, py), float)) / (2 * d)
    gy = (np.asarray(surface(px, py + d), float) - np.asarray(surface(px, py - d), float)) / (2 * d)
    return np.stack(np.broadcast_arrays(gx, gy), axis=-1) * np.ones(p.shape[:-1] + (1,))


def _world_tangent(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """d(R p + x) for a fixed body point p (…, 3), R broadcast (…, 3, 3): (…, 3, 6) = [R (e_j × p) | e_j]."""
    zero = np.zeros(p.shape[:-1])
    # e_j × p as columns j: −p̂
    neg_hat = np.stack([np.stack([zero, p[..., 2], -p[..., 1]], -1),
                        np.stack([-p[..., 2], zero, p[..., 0]], -1),
                        np.stack([p[..., 1], -p[..., 0], zero], -1)], axis=-2)
    rot = np.einsum("...ik,...kj->...ij", R, neg_hat)
    return np.concatenate([rot, np.broadcast_to(np.eye(3), rot.shape)], axis=-1)


def _cut_tangent(Aw: np.ndarray, Bw: np.ndarray, dA: np.ndarray, dB: np.ndarray, t: np.ndarray,
                 active: np.ndarray, surface: HeightField | None) -> np.ndarray:
    """dt (…, 6) of the cut parameter t on a→b with ψ(t) = h(p(t)) − p_z(t) = 0 (implicit function theorem)."""
    p = Aw + t[..., None] * (Bw - Aw)
    dp = dA + t[..., None, None] * (dB - dA)                                # (…, 3, 6)
    gh = _height_grad(surface, p)
    e = Bw - Aw
    psi_t = gh[..., 0] * e[..., 0] + gh[..., 1] * e[..., 1] - e[..., 2]
    psi_p = gh[..., 0, None] * dp[..., 0, :] + gh[..., 1, None] * dp[..., 1, :] - dp[..., 2, :]
    ok = active & (psi_t != 0)
    return np.where(ok[..., None], -psi_p / np.where(ok, psi_t, 1.0)[..., None], 0.0)


def _cross2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over axis −2 (vectors (…, 3, K), broadcasting)."""
    return np.stack([a[..., 1, :] * b[..., 2, :] - a[..., 2, :] * b[..., 1, :],
                     a[..., 2, :] * b[..., 0, :] - a[..., 0, :] * b[..., 2, :],
                     a[..., 0, :] * b[..., 1, :] - a[..., 1, :] * b[..., 0, :]], axis=-2)


def _volume_tangent(d_nz: np.ndarray, d_mids: np.ndarray, mids: np.ndarray, g: np.ndarray, h_mid: np.ndarray,
                    w: np.ndarray, surface: HeightField | None) -> tuple[np.ndarray, np.ndarray]:
    """Tangents (n, 6) and (n, 3, 6) of the midpoint-rule volume and moment sums (module docstring) over the
    slots s of rows n: d_nz (n, s, 6) of n_z dA, d_mids (n, s, 3, 3, 6) of the world edge midpoints."""
    gh = _height_grad(surface, mids)                                      # (n, s, 3, 2)
    d_w = d_nz[:, :, None, :] / 3.0
    d_h = gh[..., 0, None] * d_mids[..., 0, :] + gh[..., 1, None] * d_mids[..., 1, :]
    d_g = d_mids[..., 2, :] - d_h
    d_vol = np.einsum("nsqj,nsq->nj", d_w, g) + np.einsum("nsq,nsqj->nj", w, d_g)
    integrands = np.stack([mids[..., 0] * g, mids[..., 1] * g, 0.5 * (mids[..., 2] ** 2 - h_mid**2)], axis=-1)
    d_int = np.stack([d_mids[..., 0, :] * g[..., None] + mids[..., 0, None] * d_g,
                      d_mids[..., 1, :] * g[..., None] + mids[..., 1, None] * d_g,
                      mids[..., 2, None] * d_mids[..., 2, :] - h_mid[..., None] * d_h], axis=-2)
    d_mom = np.einsum("nsqj,nsqk->nkj", d_w, integrands) + np.einsum("nsq,nsqkj->nkj", w, d_int)
    return d_vol, d_mom


def _clip(hull: Hull, R: np.ndarray, x: np.ndarray, surface: HeightField | None,
          tangents: bool) -> tuple[Clipped, ClippedTangent | None]:
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    batch = np.broadcast_shapes(R.shape[:-2], x.shape[:-1])
    nb = int(np.prod(batch, dtype=np.int64))
    Rf = np.broadcast_to(R, batch + (3, 3)).reshape(nb, 3, 3)
    xf = np.broadcast_to(x, batch + (3,)).reshape(nb, 3)
    Vb = hull.vertices                                                   # (n, 3)
    F = hull.faces
    m = len(F)
    Vw = np.einsum("bij,nj->bni", Rf, Vb) + xf[:, None, :]               # (nb, n, 3)
    phi_v = _height(surface, Vw) - Vw[..., 2]                            # (nb, n) depth below surface
    wet = phi_v[:, F] > 0                                                 # (nb, m, 3)
    count = wet.sum(axis=-1)

    # wholly wet (count 3) and wholly dry (count 0) faces: the face itself is the patch
    tri_w = Vw[:, F]                                                      # (nb, m, 3 corners, 3)
    mids_f = 0.5 * (tri_w + tri_w[:, :, _NEXT])                           # (nb, m, 3, 3)
    h_f = _height(surface, mids_f)
    g_f = mids_f[..., 2] - h_f
    face_vec = hull.face_area[:, None] * hull.face_normal                  # body area vectors (m, 3)
    w_f = np.repeat((Rf[:, 2, :] @ face_vec.T)[..., None] / 3.0, 3, axis=-1)   # n_z dA / 3 (nb, m, 3)
    int_f = np.stack([mids_f[..., 0] * g_f, mids_f[..., 1] * g_f, 0.5 * (mids_f[..., 2] ** 2 - h_f**2)], axis=-1)
    full = count == 3
    vol_face = np.where(full, (w_f * g_f).sum(axis=-1), 0.0)              # (nb, m)
    mom_face = np.where(full[..., None], np.einsum("bfq,bfqk->bfk", w_f, int_f), 0.0)
    tri_b = Vb[F]                                                         # (m, 3, 3)
    # empty slots sit at corner A (the first face corner) with zero area, as the cut faces' do
    sub_pos = np.broadcast_to(tri_b[:, None, 0, :], (nb, m, 2, 3)).copy()
    emr_pos = sub_pos.copy()
    sub_area = np.zeros((nb, m, 2))
    emr_area = np.zeros((nb, m, 2))
    centre_f = tri_b.sum(axis=1) / 3.0
    sub_pos[:, :, 0] = np.where(full[..., None], centre_f, sub_pos[:, :, 0])
    sub_area[:, :, 0] = np.where(full, hull.face_area, 0.0)
    dry = count == 0
    emr_pos[:, :, 0] = np.where(dry[..., None], centre_f, emr_pos[:, :, 0])
    emr_area[:, :, 0] = np.where(dry, hull.face_area, 0.0)

    # faces cut by the surface (count 1 or 2), on their own rows (batch, face)
    bi, fi = np.nonzero((count == 1) | (count == 2))
    cnt = count[bi, fi]
    wr = wet[bi, fi]
    odd = np.where(cnt == 1, np.argmax(wr, axis=-1), np.argmin(wr, axis=-1))
    rolled = F[fi[:, None], _ROLL[odd]]                                   # (n, 3) vertex indices, A odd
    cw = Vw[bi[:, None], rolled]                                          # (n, 3, 3) world corners
    cb = Vb[rolled]
    ph = phi_v[bi[:, None], rolled]
    A, B, C = (np.concatenate([cw[:, k], cb[:, k]], axis=-1) for k in range(3))   # (n, 6) world | body
    # cut points P on AB and Q on AC (the odd vertex A is alone on its side of the surface)
    sgn = np.where(cnt == 1, 1.0, -1.0)
    s_ab = _cut(A[:, :3], B[:, :3], ph[:, 0], ph[:, 1], sgn, surface)
    s_ac = _cut(A[:, :3], C[:, :3], ph[:, 0], ph[:, 2], sgn, surface)
    P, Q = A + s_ab[:, None] * (B - A), A + s_ac[:, None] * (C - A)
    bank = np.stack([A, B, C, P, Q], axis=1)                              # (n, 5, 6)
    # the quad PBCQ is split along its shorter diagonal (a mirror-invariant choice)
    cp, bq = C[:, :3] - P[:, :3], B[:, :3] - Q[:, :3]
    long_pc = (cp * cp).sum(axis=-1) > (bq * bq).sum(axis=-1)
    sel = np.moveaxis(_SLOTS[:, cnt, long_pc.astype(np.intp)], 0, 1).reshape(-1, 12)   # (n, 12)
    parts = np.take_along_axis(bank, sel[:, :, None], axis=1).reshape(-1, 2, 2, 3, 6)  # side, slot, corner
    sub_w, sub_b, emr_b = parts[:, 0, :, :, :3], parts[:, 0, :, :, 3:], parts[:, 1, :, :, 3:]
    # volume integrals over the submerged triangles (three-edge-midpoint rule)
    area_vec = 0.5 * _cross(sub_w[:, :, 1] - sub_w[:, :, 0], sub_w[:, :, 2] - sub_w[:, :, 0])   # (n, 2, 3)
    mids = 0.5 * (sub_w + sub_w[:, :, _NEXT])                             # (n, 2, 3, 3)
    h_mid = _height(surface, mids)
    g = mids[..., 2] - h_mid
    w = area_vec[..., 2, None] / 3.0                                      # midpoint-rule weights (n, 2, 3)
    integrands = np.stack([mids[..., 0] * g, mids[..., 1] * g, 0.5 * (mids[..., 2] ** 2 - h_mid**2)], axis=-1)
    vol_face[bi, fi] = np.einsum("nsq,nsq->n", w, g)
    mom_face[bi, fi] = np.einsum("nsq,nsqk->nk", w, integrands)
    cut_area = np.sqrt((area_vec * area_vec).sum(axis=-1))                # rotation keeps areas
    sub_area[bi, fi] = cut_area
    sub_pos[bi, fi] = sub_b.sum(axis=2) / 3.0
    emr_vec = _cross(emr_b[:, :, 1] - emr_b[:, :, 0], emr_b[:, :, 2] - emr_b[:, :, 0])
    emr_norm = np.sqrt((emr_vec * emr_vec).sum(axis=-1))
    emr_area[bi, fi] = 0.5 * emr_norm
    emr_pos[bi, fi] = emr_b.sum(axis=2) / 3.0

    vol = vol_face.sum(axis=-1)
    mom = mom_face.sum(axis=-2)
    pos_ok = vol > 0
    centroid = np.where(pos_ok[:, None], mom / np.where(pos_ok, vol, 1.0)[:, None], xf)
    normal = np.broadcast_to(hull.face_normal[:, None, :], batch + (m, 2, 3))
    shape = lambda a: a.reshape(batch + a.shape[1:])  # noqa: E731
    out = Clipped(shape(np.maximum(vol, 0.0)), shape(centroid), shape(sub_pos), normal, shape(sub_area),
                  shape(emr_pos), normal, shape(emr_area))
    if not tangents:
        return out, None

    # -- forward-mode derivatives in the 6 pose directions (fixed combinatorics) --------------------
    # Only the faces cut by the surface have moving body patches (the cut points slide along their
    # edges); the wholly wet faces contribute to the volume integrals through their world motion alone;
    # dry faces contribute nothing.
    d_vol = np.zeros((nb, 6))
    d_mom = np.zeros((nb, 3, 6))
    d_sub_pos = np.zeros((nb, m, 2, 3, 6))
    d_sub_area = np.zeros((nb, m, 2, 6))
    d_emr_pos = np.zeros(d_sub_pos.shape)
    d_emr_area = np.zeros(d_sub_area.shape)
    if bi.size:
        Rr = Rf[bi]
        dAw, dBw, dCw = (_world_tangent(Rr, Z[:, 3:]) for Z in (A, B, C))   # (n, 3, 6)
        on = np.ones(len(bi), dtype=bool)
        dt_ab = _cut_tangent(A[:, :3], B[:, :3], dAw, dBw, s_ab, on, surface)   # (n, 6)
        dt_ac = _cut_tangent(A[:, :3], C[:, :3], dAw, dCw, s_ac, on, surface)
        zero = np.zeros(dAw.shape)
        dPb = dt_ab[:, None, :] * (B[:, 3:] - A[:, 3:])[:, :, None]
        dQb = dt_ac[:, None, :] * (C[:, 3:] - A[:, 3:])[:, :, None]
        body_t = np.stack([zero, zero, zero, dPb, dQb], axis=1)           # (n, 5, 3, 6)
        world_t = (np.stack([dAw, dBw, dCw, _world_tangent(Rr, P[:, 3:]), _world_tangent(Rr, Q[:, 3:])], axis=1)
                   + np.einsum("nik,npkj->npij", Rr, body_t))
        wt = np.take_along_axis(world_t, sel[:, :6, None, None], axis=1).reshape(-1, 2, 3, 3, 6)
        bt = np.take_along_axis(body_t, sel[:, :, None, None], axis=1).reshape(-1, 2, 2, 3, 3, 6)
        sw, sb, eb = wt, bt[:, 0], bt[:, 1]                               # (n, 2 slots, 3 corners, 3, 6)
        a0, a1, a2 = sub_w[:, :, 0, :, None], sub_w[:, :, 1, :, None], sub_w[:, :, 2, :, None]
        d_av = 0.5 * (_cross2(sw[:, :, 1] - sw[:, :, 0], a2 - a0) + _cross2(a1 - a0, sw[:, :, 2] - sw[:, :, 0]))
        dv, dm = _volume_tangent(d_av[:, :, 2], 0.5 * (sw + sw[:, :, _NEXT]), mids, g, h_mid, w, surface)
        np.add.at(d_vol, bi, dv)
        np.add.at(d_mom, bi, dm)
        d_sub_area[bi, fi] = np.where(cut_area[..., None] > 0, np.einsum("nsi,nsij->nsj", area_vec, d_av)
                                      / np.where(cut_area > 0, cut_area, 1.0)[..., None], 0.0)
        d_sub_pos[bi, fi] = sb.sum(axis=2) / 3.0
        d_ev = (_cross2(eb[:, :, 1] - eb[:, :, 0], (emr_b[:, :, 2] - emr_b[:, :, 0])[..., None])
                + _cross2((emr_b[:, :, 1] - emr_b[:, :, 0])[..., None], eb[:, :, 2] - eb[:, :, 0]))
        d_emr_area[bi, fi] = np.where(emr_norm[..., None] > 0, 0.5 * np.einsum("nsi,nsij->nsj", emr_vec, d_ev)
                                      / np.where(emr_norm > 0, emr_norm, 1.0)[..., None], 0.0)
        d_emr_pos[bi, fi] = eb.sum(axis=2) / 3.0

    wb, wf = np.nonzero(full)                                             # wholly wet faces
    if wb.size:
        Rr = Rf[wb]
        d_mids = _world_tangent(Rr[:, None], 0.5 * (tri_b + tri_b[:, _NEXT])[wf])   # (n, 3, 3, 6)
        d_avz = _world_tangent(Rr, face_vec[wf])[:, 2]                    # d(R a)_z: rotation only
        d_avz[:, 3:] = 0.0
        dv, dm = _volume_tangent(d_avz[:, None], d_mids[:, None], mids_f[wb, wf][:, None], g_f[wb, wf][:, None],
                                 h_f[wb, wf][:, None], w_f[wb, wf][:, None], surface)
        np.add.at(d_vol, wb, dv)
        np.add.at(d_mom, wb, dm)
    d_vol = np.where(pos_ok[:, None], d_vol, 0.0)
    d_mom = np.where(pos_ok[:, None, None], d_mom, 0.0)
    return out, ClippedTangent(d_vol, d_mom, d_sub_pos, d_sub_area, d_emr_pos, d_emr_area)


__all__ = ["Hull", "HeightField", "Clipped", "ClippedTangent", "clip_jacobian", "validate_mesh", "mesh_volume",
           "face_areas_normals", "mesh_inertia", "MeshRepair", "repair_mesh", "convex_hull_mesh",
           "from_mesh", "box_hull", "default_hull", "icosphere", "subdivide", "clip"]
