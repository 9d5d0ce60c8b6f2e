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

Work. A wholly wet or wholly dry face is its own patch (no cutting), fixed in the body frame: the
pose-independent quantities of the faces (corners, edge midpoints, area vectors, patch moments) are
tabulated once per hull (:class:`HullTables`), and the wet faces' volume integrals are masked sums over
every face of a pose — on the calm plane in closed form, from per-face midpoint moments (the integrands
are polynomials of degree ≤ 2 in the world midpoints), under a height field midpoint by midpoint. Only the
faces the surface crosses are rows (pose, face), rolled, cut and split; a slot's area fraction, centroid and
edge midpoints are polynomials in the two cut parameters (barycentric tables per wet/dry pattern and
diagonal). On the plane a cut face's submerged integral is that of its tip A P Q, or the face's less its
tip's — exact either way. :func:`clip_split` returns this compact form (the boat sums it directly) and
:func:`clip` the dense slots. With tangents, :func:`clip_jacobian` and :func:`clip_split` add the exact
derivatives of every output with respect to the pose (forward mode, the wet/dry pattern and quad diagonals
held fixed; the cut parameters by the implicit function theorem on φ = 0), for the boat's analytic wrench
Jacobian: the rigid motion of the integration points gathers into per-pose sums (:func:`_pose_tangent`),
the cut parameters' part into per-row partials times their tangents.

Moving water. With ``time`` (one per pose), the surface is h(x, y, t) and each pose is clipped by its own
frozen snapshot h(·, ·, t_pose) (:class:`_AtTimes`); the pose tangents then hold the time fixed, the
surface entering them through its spatial gradient at that time only.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from ..errors import ScenarioError

# h(x, y) → water surface height; takes and returns arrays of one shape (broadcasting). Moving water is
# h(x, y, t) (clip_split's ``time``).
HeightField = Callable[[np.ndarray, np.ndarray], np.ndarray]
# A surface as clip and the boat take it: h(x, y), or h(x, y, t) when it moves; which one is told at run
# time (core.vehicles.water.is_moving), so the type leaves the arguments open.
WaterSurface = Callable[..., np.ndarray]

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
class HullTables:
    """What the clipping needs of a hull that does not depend on the pose, computed once per hull:
    the body corners ``tri`` (m, 3, 3), the edge midpoints ``mids`` (3m, 3) (face-major, corner q → q + 1;
    ``mids_t`` their transpose (3, 3m)), the area vectors ``vec`` = dA n (m, 3), the centroids ``centre``
    (m, 3), the faces' own patch moments ``patch`` (m, 19): dA, dA c, dA c cᵀ (9, row-major), dA n,
    dA c × n (c the centroid, n the normal), which the boat sums over the wholly wet and dry faces, and the
    midpoint moments ``plane`` (m, 13), ``plane_z`` (m, 39) of :func:`_plane_faces`."""

    tri: np.ndarray
    mids: np.ndarray
    mids_t: np.ndarray
    vec: np.ndarray
    centre: np.ndarray
    patch: np.ndarray
    plane: np.ndarray
    plane_z: np.ndarray

    @classmethod
    def of(cls, v: np.ndarray, f: np.ndarray, area: np.ndarray, normal: np.ndarray) -> "HullTables":
        tri = v[f]
        m3 = 0.5 * (tri + tri[:, _NEXT])                                 # (m, 3 midpoints, 3)
        centre = tri.sum(axis=1) / 3.0
        vec = area[:, None] * normal
        ac = area[:, None] * centre
        patch = np.concatenate([area[:, None], ac, (ac[:, :, None] * centre[:, None, :]).reshape(-1, 9), vec,
                                _cross(ac, normal)], axis=1)
        # per-face midpoint moments for the calm plane (_plane_faces): 3, s_f = Σ_q m_q, S_f = Σ_q m_q m_qᵀ, and
        # the area vector against them, a_f, a_f s_fᵀ, a_f ⊗ S_f
        sf, Sf = m3.sum(axis=1), np.einsum("fqi,fqj->fij", m3, m3)
        plane = np.concatenate([np.full((len(f), 1), 3.0), sf, Sf.reshape(-1, 9)], axis=1)
        plane_z = np.concatenate([vec, (vec[:, :, None] * sf[:, None, :]).reshape(-1, 9),
                                  (vec[:, :, None, None] * Sf[:, None]).reshape(-1, 27)], axis=1)
        mids = m3.reshape(-1, 3)
        return cls(tri, mids, np.ascontiguousarray(mids.T), vec, centre, patch, plane, plane_z)


@dataclass(frozen=True)
class Hull:
    """A closed, outward-oriented triangle mesh in the body frame (validated on construction)."""

    vertices: np.ndarray
    faces: np.ndarray
    volume: float = field(init=False)
    centroid: np.ndarray = field(init=False)
    face_area: np.ndarray = field(init=False, repr=False)
    face_normal: np.ndarray = field(init=False, repr=False)
    tables: "HullTables" = field(init=False, repr=False, compare=False)

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
        object.__setattr__(self, "tables", HullTables.of(v, f, area, normal))

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
                 about: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0)) -> np.ndarray:
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


def box_hull(size: Sequence[float] | np.ndarray = (1.0, 1.0, 1.0), center: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
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


def icosphere(radius: float = 1.0, level: int = 2, center: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0)) -> Hull:
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


class _AtTimes:
    """A moving surface h(x, y, t) frozen per pose: called with points whose leading axis runs over the poses
    (or, after :meth:`rows`, over the cut rows), each point takes its own pose's time."""

    __slots__ = ("surface", "times")

    def __init__(self, surface: Callable, times: np.ndarray):
        self.surface, self.times = surface, times

    def __call__(self, px: np.ndarray, py: np.ndarray) -> np.ndarray:
        t = self.times.reshape(self.times.shape + (1,) * (np.ndim(px) - 1))
        return self.surface(px, py, t)

    def rows(self, bi: np.ndarray) -> "_AtTimes":
        return _AtTimes(self.surface, self.times[bi])


def _rows_of(surface: HeightField | None, bi: np.ndarray) -> HeightField | None:
    """The surface seen by rows of poses ``bi``: a frozen one as it is, a moving one at those poses' times."""
    return surface.rows(bi) if isinstance(surface, _AtTimes) else surface


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


# The slots as functions of the cut parameters t₁ = t_AB, t₂ = t_AC. A point of a cut face is A + u (B − A) +
# v (C − A); the bank's corners have (u, v) = A (0, 0), B (1, 0), C (0, 1), P (t₁, 0), Q (0, t₂), so a slot's
# centroid and its edge midpoints are affine in (t₁, t₂), and its area over its face's area is the determinant of
# its corners' barycentric coordinates — bilinear, c₀ + c₁t₁ + c₂t₂ + c₃t₁t₂, since a slot has at most one corner
# on each cut edge. Every such quantity is a row of coefficients on the basis (1, t₁, t₂, t₁t₂), per pattern
# key = 2 (count − 1) + diagonal: _SLOT_TABLE (4 keys × 4 basis, 52) holds, per side and slot, the fraction (4),
# the centroid's u and v (4 + 4), the fraction's ∂/∂t₁ and ∂/∂t₂ (4 + 4) and ∂u/∂t₁, ∂v/∂t₂ (4 + 4), then per
# submerged slot and edge midpoint its u and v (6 + 6) and ∂u/∂t₁, ∂v/∂t₂ (6 + 6).
def _bank_bary(t1: float, t2: float) -> np.ndarray:
    return np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1 - t1, t1, 0.0], [1 - t2, 0.0, t2]])


def _slot_table() -> np.ndarray:
    sl = _SLOTS[:, 1:3].transpose(1, 2, 0, 3, 4).reshape(4, 2, 2, 3)   # (key, side, slot, corner)
    f = [[np.linalg.det(_bank_bary(t1, t2)[sl]) for t2 in (0.0, 1.0)] for t1 in (0.0, 1.0)]
    c = np.rint(np.stack([f[0][0], f[1][0] - f[0][0], f[0][1] - f[0][0], f[1][1] - f[1][0] - f[0][1] + f[0][0]],
                         axis=-1))                                    # exact integers (key, side, slot, basis)
    uv = np.stack([(sl == k).astype(float) for k in (1, 3, 2, 4)], axis=-1)   # corners' (u₀, u₁, v₀, v₁)
    cen, mid = uv.mean(axis=-2), 0.5 * (uv + uv[..., _NEXT, :])[:, 0]   # centroids; submerged edge midpoints
    zero = np.zeros(cen.shape[:-1])
    on = lambda *b: np.stack(b, axis=-1).reshape(4, -1, 4)  # noqa: E731  coefficients of (1, t₁, t₂, t₁t₂)
    zm = np.zeros(mid.shape[:-1])
    parts = [c.reshape(4, -1, 4), on(cen[..., 0], cen[..., 1], zero, zero), on(cen[..., 2], zero, cen[..., 3], zero),
             on(c[..., 1], zero, c[..., 3], zero), on(c[..., 2], c[..., 3], zero, zero),
             on(cen[..., 1], zero, zero, zero), on(cen[..., 3], zero, zero, zero),
             on(mid[..., 0], mid[..., 1], zm, zm), on(mid[..., 2], zm, mid[..., 3], zm),
             on(mid[..., 1], zm, zm, zm), on(mid[..., 3], zm, zm, zm)]
    return np.concatenate(parts, axis=1).transpose(0, 2, 1).reshape(16, -1)


_SLOT_TABLE = _slot_table()                           # (16, 52)
_SLOT_VALUES = np.ascontiguousarray(_SLOT_TABLE[:, :12])      # the fractions and centroids
_SLOT_MIDPOINTS = np.ascontiguousarray(_SLOT_TABLE[:, 28:])   # the submerged midpoints (a height field's)
_SLOT_PARTIALS = np.ascontiguousarray(_SLOT_TABLE[:, 12:28])  # the partials in t (tangents)


@dataclass(frozen=True)
class ClipSplit:
    """:func:`clip` in compact form, for the boat's sums over patches (``Boat.external_wrench``).

    Per pose (the batch flattened to nb poses): ``volume`` (nb,) m³, ``moment`` (nb, 3) = V x̄ (zero when
    dry) and ``centroid`` (nb, 3) (x where nothing is wet). The wholly wet faces (``full`` (nb, m)) and the
    wholly dry ones (``dry``) are their own patches — the face itself, fixed in the body frame. The n faces
    the surface cuts are rows (pose ``bi``, face ``fi``, sorted by pose) with two submerged and two emerged
    slots: ``*_area`` (n, 2), body ``*_position`` (n, 2, 3) (empty slots: zero area at the corner alone on
    its side). With tangents: ``d_volume`` (nb, 6) and ``d_moment`` (nb, 3, 6) in the pose directions of
    :class:`ClippedTangent`, and the slots' partials in the cut parameters t = (t_AB, t_AC): ``*_area_t``
    (n, 2, 2) and, as the slots slide along the body edges ``edges`` (n, 2, 3) = (B − A, C − A),
    ∂position/∂t_j = ``*_slide``[…, j] · edges[j] (``*_slide`` (n, 2, 2)); ``dt`` (n, 2, 6) are the cut
    parameters' pose tangents: d(slot) = Σ_j ∂(slot)/∂t_j dt_j.
    """

    hull: Hull
    batch: tuple[int, ...]
    volume: np.ndarray
    moment: np.ndarray
    centroid: np.ndarray
    full: np.ndarray
    dry: np.ndarray
    bi: np.ndarray
    fi: np.ndarray
    submerged_area: np.ndarray
    submerged_position: np.ndarray
    emerged_area: np.ndarray
    emerged_position: np.ndarray
    d_volume: np.ndarray | None = None
    d_moment: np.ndarray | None = None
    submerged_area_t: np.ndarray | None = None
    submerged_slide: np.ndarray | None = None
    emerged_area_t: np.ndarray | None = None
    emerged_slide: np.ndarray | None = None
    edges: np.ndarray | None = None
    dt: np.ndarray | None = None
    stage: dict = field(default_factory=dict, repr=False, compare=False)   # for clip_split(values=…)

    @cached_property
    def _starts(self) -> np.ndarray:
        return np.flatnonzero(np.diff(self.bi, prepend=-1))            # first row of each pose with rows

    def row_sum(self, v: np.ndarray) -> np.ndarray:
        """Σ over every pose's cut rows of per-row values v (n, …) → (nb, …) (rows are sorted by pose)."""
        return _row_sum(v, self.bi, len(self.volume), self._starts)

    def _dense(self, whole: np.ndarray, area: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(…, m, 2) slots of one side: a face wholly on it is slot 0, other empty slots sit at its first corner."""
        nb, m = whole.shape
        tab = self.hull.tables
        p = np.empty((nb, m, 2, 3))
        p[:, :, 1] = tab.tri[:, 0]
        p[:, :, 0] = np.where(whole[..., None], tab.centre, tab.tri[:, 0])
        a = np.zeros((nb, m, 2))
        a[:, :, 0] = np.where(whole, self.hull.face_area, 0.0)
        p[self.bi, self.fi] = pos
        a[self.bi, self.fi] = area
        return p, a

    def clipped(self) -> Clipped:
        """The :class:`Clipped` of these poses (batch shape restored)."""
        sp, sa = self._dense(self.full, self.submerged_area, self.submerged_position)
        ep, ea = self._dense(self.dry, self.emerged_area, self.emerged_position)
        normal = np.broadcast_to(self.hull.face_normal[:, None, :], self.batch + sa.shape[1:] + (3,))
        shape = lambda a: a.reshape(self.batch + a.shape[1:])  # noqa: E731
        return Clipped(shape(self.volume), shape(self.centroid), shape(sp), normal, shape(sa), shape(ep), normal,
                       shape(ea))

    def tangent(self) -> ClippedTangent:
        """The dense :class:`ClippedTangent` (needs ``tangents``)."""
        if self.edges is None or self.dt is None or self.d_volume is None or self.d_moment is None:
            raise ValueError("ClipSplit.tangent: this split has no tangents (clip_split(..., tangents=True))")
        nb, m = self.full.shape
        move = self.edges[:, :, :, None] * self.dt[:, :, None, :]         # (n, t, 3, 6): edge_j ⊗ dt_j

        def dense(area_t, slide):
            dp, da = np.zeros((nb, m, 2, 3, 6)), np.zeros((nb, m, 2, 6))
            dp[self.bi, self.fi] = np.einsum("nsj,njik->nsik", slide, move)
            da[self.bi, self.fi] = area_t @ self.dt
            return dp, da

        sp, sa = dense(self.submerged_area_t, self.submerged_slide)
        ep, ea = dense(self.emerged_area_t, self.emerged_slide)
        return ClippedTangent(self.batch_shape(self.d_volume), self.batch_shape(self.d_moment), self.batch_shape(sp),
                              self.batch_shape(sa), self.batch_shape(ep), self.batch_shape(ea))

    def batch_shape(self, a: np.ndarray) -> np.ndarray:
        return a.reshape(self.batch + a.shape[1:])


def _row_sum(v: np.ndarray, bi: np.ndarray, nb: int, starts: np.ndarray) -> np.ndarray:
    out = np.zeros((nb,) + v.shape[1:])
    if len(bi):
        out[bi[starts]] = np.add.reduceat(v, starts, axis=0)
    return out


def clip(hull: Hull, R: np.ndarray, x: np.ndarray, surface: WaterSurface | None = None,
         time: np.ndarray | float | None = None) -> Clipped:
    """Split the hull at pose (R, x) (batch shape …) by the water surface z = h(x, y) (h ≡ 0 if None), or
    with ``time`` (broadcast to the batch) by the moving surface z = h(x, y, t) at each pose's time.

    See the module docstring for the method; volume in m³, multiply by ρ = 1000 kg/m³ for Π_s.
    """
    return clip_split(hull, R, x, surface, time=time).clipped()


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


def clip_jacobian(hull: Hull, R: np.ndarray, x: np.ndarray, surface: WaterSurface | None = None,
                  time: np.ndarray | float | None = None) -> tuple[Clipped, ClippedTangent]:
    """:func:`clip` and its derivatives with respect to the pose (see :class:`ClippedTangent`); R (B, 3, 3),
    x (B, 3). The height field's gradient is by central differences of h (step 1e-6 m) when it is given
    (a moving one at each pose's ``time``)."""
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    if R.ndim != 3 or x.shape != (R.shape[0], 3):
        raise ValueError(f"clip_jacobian: R must be (B, 3, 3) and x (B, 3), got {R.shape} and {x.shape}")
    split = clip_split(hull, R, x, surface, True, time=time)
    return split.clipped(), split.tangent()


_GRAD_STEP = 1e-6


def _surface_grad(surface: HeightField, px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∇h at points (px, py) by central differences of h (step _GRAD_STEP)."""
    d = _GRAD_STEP
    gx = (np.asarray(surface(px + d, py), float) - np.asarray(surface(px - d, py), float)) / (2 * d)
    gy = (np.asarray(surface(px, py + d), float) - np.asarray(surface(px, py - d), float)) / (2 * d)
    return np.broadcast_to(gx, px.shape), np.broadcast_to(gy, px.shape)


def _integrands(px: np.ndarray, py: np.ndarray, pz: np.ndarray, surface: HeightField | None, tangents: bool):
    """The midpoint-rule integrands of (V, V x̄, V ȳ, V z̄) at world points (module docstring), J (4, …), and
    with tangents their derivatives in the point's world coordinates as distinct ``planes`` (k, …) and ``pairs``
    [(o, c, plane)]: ∂J_o/∂p_c is the sum of its pairs' planes (g = p_z − h, ∂g/∂p = (−h_x, −h_y, 1))."""
    h: float | np.ndarray
    if surface is None:
        h, g = 0.0, pz
        J = np.stack([pz, px * pz, py * pz, 0.5 * pz * pz])
    else:
        h = np.broadcast_to(np.asarray(surface(px, py), dtype=float), px.shape)
        g = pz - h
        J = np.stack([g, px * g, py * g, 0.5 * (pz * pz - h * h)])
    if not tangents:
        return J, None, None
    one = np.ones(px.shape)
    planes = [one, px, py, g]
    pairs = [(0, 2, 0), (1, 2, 1), (2, 2, 2), (1, 0, 3), (2, 1, 3), (3, 2, 3)]   # g = p_z on the plane
    if surface is not None:
        hx, hy = _surface_grad(surface, px, py)
        pairs[-1] = (3, 2, 4)
        planes.append(pz)
        for o, psi in enumerate((one, px, py, h)):
            pairs += [(o, 0, len(planes)), (o, 1, len(planes) + 1)]
            planes += [-hx * psi, -hy * psi]
    return J, np.stack(planes), pairs


def _wet_faces(tab: HullTables, Rf: np.ndarray, xf: np.ndarray, full: np.ndarray, a3: np.ndarray,
               surface: HeightField | None, tangents: bool):
    """The sums of the wholly wet faces (every face at once, masked): (V, V x̄) (nb, 4) and, with tangents,
    the rigid-motion sums (U, X, Z) of :func:`_pose_tangent`."""
    nb, m = full.shape
    P = np.matmul(Rf, tab.mids_t) + xf[:, :, None]                       # (nb, 3, 3m) world edge midpoints
    W = np.repeat(np.where(full, a3, 0.0) / 3.0, 3, axis=1)              # n_z dA / 3 at each midpoint
    J, planes, pairs = _integrands(P[:, 0], P[:, 1], P[:, 2], surface, tangents)   # (4, nb, 3m)
    out = (J * W).sum(axis=-1).T                                         # (nb, 4)
    if not tangents:
        return out, None
    C = planes * W                                                       # (planes, nb, 3m)
    U, X = _pair_sums(pairs, np.matmul(C, tab.mids).transpose(1, 0, 2), C.sum(axis=-1).T)   # Σ_q C_q m_q, Σ_q C_q
    Jf = J.reshape(4, nb, m, 3).sum(axis=-1) * np.where(full, 1.0 / 3.0, 0.0)
    Z = np.matmul(Jf, tab.vec).transpose(1, 0, 2)                        # Σ_f (Σ_q J_q / 3) a_f (nb, 4, 3)
    return out, (U, X, Z)


def _plane_faces(tab: HullTables, Rf: np.ndarray, xf: np.ndarray, full: np.ndarray, a3: np.ndarray,
                 tangents: bool):
    """:func:`_wet_faces` for the calm plane h ≡ 0 in closed form: the midpoint rule's integrands are then
    polynomials of degree ≤ 2 in the world midpoints p_q = R m_q + x, so every sum over the wet faces is one of
    the weighted body moments w₀ = Σ w_q, s = Σ w_q m_q, S = Σ w_q m_q m_qᵀ (w_q = (R a_f)_z/3 on the wet faces),
    or for Z of Σ_f (1/3) a_f ⊗ (3, s_f, S_f): one product with per-face tables (``HullTables.plane``)."""
    nb = len(Rf)
    mo = np.where(full, a3, 0.0) @ (tab.plane / 3.0)                      # (nb, 13): w₀, s, S
    w0, s, S = mo[:, 0], mo[:, 1:4], mo[:, 4:].reshape(nb, 3, 3)
    Rs = (Rf @ s[:, :, None])[..., 0]
    mu1 = Rs + w0[:, None] * xf                                           # Σ w p
    half = (Rs + 0.5 * w0[:, None] * xf)[:, :, None] * xf[:, None, :]
    mu2 = Rf @ S @ Rf.transpose(0, 2, 1) + half + np.swapaxes(half, 1, 2)   # Σ w p pᵀ
    out = np.stack([mu1[:, 2], mu2[:, 0, 2], mu2[:, 1, 2], 0.5 * mu2[:, 2, 2]], axis=1)
    if not tangents:
        return out, None
    r = Rf                                                                # rows R_x, R_y, R_z
    Sr = S @ r.transpose(0, 2, 1)                                        # columns S R_c (nb, 3, 3)
    U, X = np.zeros((nb, 4, 3, 3)), np.zeros((nb, 4, 3))
    for o in range(3):                                                    # Σ w p_o m (o = x, y, z)
        U[:, o + 1 if o < 2 else 3, 2] = Sr[:, :, o] + xf[:, o, None] * s
    U[:, 0, 2] = s
    U[:, 1, 0] = U[:, 2, 1] = U[:, 3, 2]                                  # Σ w g m = Σ w p_z m
    X[:, 0, 2] = w0
    X[:, 1, 2], X[:, 2, 2], X[:, 3, 2] = mu1[:, 0], mu1[:, 1], mu1[:, 2]
    X[:, 1, 0] = X[:, 2, 1] = mu1[:, 2]
    mz = np.where(full, 1.0 / 3.0, 0.0) @ tab.plane_z                     # Σ_f (1/3) a_f ⊗ (1, s_f, S_f)
    al0, al1, al2 = mz[:, :3], mz[:, 3:12].reshape(nb, 3, 3), mz[:, 12:].reshape(nb, 3, 3, 3)
    r3, xz = r[:, 2], xf[:, 2, None]
    al1_r3 = (al1 @ r3[:, :, None])[..., 0]                               # Σ (1/3) a (s_f·R_z)
    al2_r3 = al2 @ r3[:, None, :, None]                                   # (nb, 3, 3, 1): Σ (1/3) a (S_f R_z)
    Z = np.empty((nb, 4, 3))
    Z[:, 0] = al1_r3 + 3.0 * xz * al0                                     # Σ_q p_z = s_f·R_z + 3 x_z
    for o in range(2):                                                    # Σ_q p_o p_z
        ro, xo = r[:, o], xf[:, o, None]
        Z[:, o + 1] = ((ro[:, None, None, :] @ al2_r3)[..., 0, 0] + xo * al1_r3
                       + xz * (al1 @ ro[:, :, None])[..., 0] + 3.0 * xo * xz * al0)
    Z[:, 3] = 0.5 * (r3[:, None, None, :] @ al2_r3)[..., 0, 0] + xz * al1_r3 + 1.5 * xz * xz * al0
    return out, (U, X, Z)


_TIP_U = np.array([[[1.0, 1.0, 0.0]]])   # the tip A P Q's edge midpoints: u / t₁ …
_TIP_V = np.array([[[0.0, 1.0, 1.0]]])   # … and v / t₂, times ½


def _cut_faces(hull: Hull, Vw: np.ndarray, phi_v: np.ndarray, wet: np.ndarray, count: np.ndarray,
               a3: np.ndarray, surface: HeightField | None) -> dict:
    """The faces the surface cuts, one row each (pose, face): their slots (``area`` (n, side, slot), body
    ``position`` (n, side, slot, 3)), the midpoint-rule sums of their submerged parts ``sums`` (n, 4), and the
    geometry :func:`_cut_tangents` differentiates.

    On the calm plane the submerged part of a face is its tip A P Q (one corner wet) or the face less its tip
    (the face then counts among the wet faces of :func:`_plane_faces`), integrated exactly either way; under a
    height field, its submerged slots."""
    F, Vb = hull.faces, hull.vertices
    bi, fi = np.nonzero((count == 1) | (count == 2))
    surface = _rows_of(surface, bi)
    n = len(bi)
    cnt = count[bi, fi]
    wr = wet[bi, fi]
    odd = np.where(cnt == 1, np.argmax(wr, axis=-1), np.argmin(wr, axis=-1))
    rolled = F[fi[:, None], _ROLL[odd]]                                   # (n, 3) vertex indices, A odd
    cw = Vw[bi[:, None], rolled]                                          # (n, 3, 3) world corners
    cb = Vb[rolled]
    ph = phi_v[bi[:, None], rolled]
    # cut points P on AB and Q on AC (the odd vertex A is alone on its side of the surface)
    sgn = np.where(cnt == 1, 1.0, -1.0)
    t1 = _cut(cw[:, 0], cw[:, 1], ph[:, 0], ph[:, 1], sgn, surface)
    t2 = _cut(cw[:, 0], cw[:, 2], ph[:, 0], ph[:, 2], sgn, surface)
    a_w, eb_w, ec_w = cw[:, 0], cw[:, 1] - cw[:, 0], cw[:, 2] - cw[:, 0]
    a_b, eb_b, ec_b = cb[:, 0], cb[:, 1] - cb[:, 0], cb[:, 2] - cb[:, 0]
    Pw, Qw = a_w + t1[:, None] * eb_w, a_w + t2[:, None] * ec_w
    # the quad PBCQ is split along its shorter diagonal (a mirror-invariant choice)
    cp, bq = cw[:, 2] - Pw, cw[:, 1] - Qw
    diag = np.einsum("ni,ni->n", cp, cp) > np.einsum("ni,ni->n", bq, bq)
    # the slots' polynomials in t, one product: the row's pattern (one-hot) times its basis (1, t₁, t₂, t₁t₂)
    basis = np.zeros((n, 16))
    basis[np.arange(n)[:, None], 4 * (2 * (cnt - 1) + diag)[:, None] + np.arange(4)] = np.stack(
        [np.ones(n), t1, t2, t1 * t2], axis=1)
    sv = basis @ _SLOT_VALUES
    frac = sv[:, :4].reshape(n, 2, 2)                                     # (n, side, slot)
    dA_f = hull.face_area[fi][:, None, None]
    u, v = sv[:, 4:8, None], sv[:, 8:12, None]                            # centroids A + u (B − A) + v (C − A)
    out = {"bi": bi, "fi": fi, "area": frac * dA_f, "basis": basis,
           "position": (a_b[:, None] + u * eb_b[:, None] + v * ec_b[:, None]).reshape(n, 2, 2, 3)}
    # the submerged part's triangles: fractions of the face (n, k) and edge midpoints A + u (B − A) + v (C − A)
    if surface is None:
        sg = sgn[:, None]
        T1, T2 = t1[:, None, None], t2[:, None, None]
        vfrac, vdfrac = sg * (t1 * t2)[:, None], np.stack([sg * t2[:, None], sg * t1[:, None]], axis=-1)
        mu, mv, du, dv = 0.5 * T1 * _TIP_U, 0.5 * T2 * _TIP_V, 0.5 * _TIP_U, 0.5 * _TIP_V
    else:
        sp, sm = basis @ _SLOT_PARTIALS, basis @ _SLOT_MIDPOINTS
        vfrac, vdfrac = frac[:, 0], np.stack([sp[:, 0:2], sp[:, 4:6]], axis=-1)
        mu, mv, du, dv = (sm[:, k:k + 6].reshape(n, 2, 3) for k in (0, 6, 12, 18))
    px, py, pz = (a_w[:, c, None, None] + mu * eb_w[:, c, None, None] + mv * ec_w[:, c, None, None] for c in range(3))
    a3r = a3[bi, fi][:, None]
    W = (vfrac * a3r / 3.0)[..., None]                                    # n_z dA / 3 at the midpoints
    J, _, _ = _integrands(px, py, pz, surface, False)                    # (4, n, triangle, midpoint)
    out["sums"] = np.einsum("kntq,nt->nk", J, W[..., 0])                 # (n, 4)
    out.update(px=px, py=py, pz=pz, W=W, mu=mu, mv=mv, du=du, dv=dv, vfrac=vfrac, vdfrac=vdfrac, a3r=a3r, frac=frac,
               t1=t1, t2=t2, a_b=a_b, eb_b=eb_b, ec_b=ec_b, eb_w=eb_w, ec_w=ec_w, Pw=Pw, Qw=Qw, dA_f=dA_f)
    return out


def _cut_tangents(hull: Hull, Rf: np.ndarray, cut: dict, surface: HeightField | None) -> dict:
    """The pose tangents of :func:`_cut_faces`' rows: the rigid-motion plane sums ``mom``, ``tot``, ``pairs`` and
    ``Z`` (see :func:`_pose_tangent`), the sums' partials in t ``sums_t`` (n, 4, 2), the slots' ``area_t``,
    ``slide`` and ``edges``, and the cut parameters' pose tangents ``dt`` (n, 2, 6)."""
    bi, fi, t1, t2, W, a3r = cut["bi"], cut["fi"], cut["t1"], cut["t2"], cut["W"], cut["a3r"]
    surface = _rows_of(surface, bi)
    a_b, eb_b, ec_b, eb_w, ec_w = cut["a_b"], cut["eb_b"], cut["ec_b"], cut["eb_w"], cut["ec_w"]
    J, planes, pairs = _integrands(cut["px"], cut["py"], cut["pz"], surface, True)
    out = {}
    # rigid motion (t held), from the body midpoints, and the midpoints sliding along AB, AC with t
    W2 = np.broadcast_to(W, cut["px"].shape)                             # (n, triangle, midpoint)
    # (two-operand einsums: sums over the few midpoints of a row are slow as ndarray.sum over small axes)
    T0, Tu, Tv, P1, P2 = (np.einsum("kntq,ntq->kn", planes, W2 * w)
                          for w in (1.0, cut["mu"], cut["mv"], cut["du"], cut["dv"]))   # (planes, n)
    out["mom"] = T0[..., None] * a_b + Tu[..., None] * eb_b + Tv[..., None] * ec_b          # Σ C m (planes, n, 3)
    out["tot"], out["pairs"] = T0, pairs
    Jq = np.einsum("kntq->knt", J)                                        # (4, n, triangle)
    s_t = np.einsum("knt,ntj->knj", Jq, cut["vdfrac"]) * (a3r / 3.0)      # the weights' fractions (4, n, 2)
    for o, c, k in pairs:
        s_t[o, :, 0] += P1[k] * eb_w[:, c]
        s_t[o, :, 1] += P2[k] * ec_w[:, c]
    out["sums_t"] = s_t.transpose(1, 0, 2)
    out["Z"] = (np.einsum("knt,nt->nk", Jq, cut["vfrac"]) / 3.0)[:, :, None] * hull.tables.vec[fi][:, None, :]
    Rb = Rf[bi]
    out["dt"] = np.stack([_cut_tangent(Rb, cut["Pw"], a_b + t1[:, None] * eb_b, eb_w, surface),
                          _cut_tangent(Rb, cut["Qw"], a_b + t2[:, None] * ec_b, ec_w, surface)], axis=1)   # (n, 2, 6)
    # the slots' partials in t: the centroids slide with their corners on P, Q; the area fractions
    n, sp = len(bi), cut["basis"] @ _SLOT_PARTIALS
    out["slide"] = np.stack([sp[:, 8:12], sp[:, 12:16]], axis=-1).reshape(n, 2, 2, 2)
    out["edges"] = np.stack([eb_b, ec_b], axis=1)
    dfrac = np.stack([sp[:, 0:4], sp[:, 4:8]], axis=-1).reshape(n, 2, 2, 2)
    # (a degenerate slot of zero area gets no derivative, as |a| has none at 0)
    out["area_t"] = np.where((cut["frac"] > 0)[..., None], dfrac * cut["dA_f"][..., None], 0.0)
    return out


def _cut_tangent(R: np.ndarray, pw: np.ndarray, pb: np.ndarray, e: np.ndarray,
                 surface: HeightField | None) -> np.ndarray:
    """dt (n, 6) of a cut parameter (implicit function theorem on ψ(t) = h(p) − p_z = 0 at the cut point p =
    R p_b + x, world edge e): at fixed t the cut point moves with the body point p_b, so ∂ψ/∂s = p_b × Rᵀβ and
    ∂ψ/∂x = β with β = (h_x, h_y, −1); ∂ψ/∂t = β·e; zero where ∂ψ/∂t vanishes."""
    beta = np.zeros(pw.shape)
    beta[:, 2] = -1.0
    if surface is not None:
        beta[:, 0], beta[:, 1] = _surface_grad(surface, pw[:, 0], pw[:, 1])
    psi_t = np.einsum("ni,ni->n", beta, e)
    psi_s = _cross(pb, np.matmul(beta[:, None, :], R)[:, 0])
    ok = psi_t != 0
    return np.where(ok[:, None], -np.concatenate([psi_s, beta], axis=-1) / np.where(ok, psi_t, 1.0)[:, None], 0.0)


def _pose_tangent(Rf: np.ndarray, U: np.ndarray, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Pose tangents (nb, 4, 6) of midpoint-rule sums S_o = Σ_q w_q J_o(p_q), w_q = (R a)_z/3, p_q = R m_q + x,
    under the rigid motion R → R cay(s), x → x + δx (m_q, a fixed): with U_oc = Σ_q w_q ∂J_o/∂p_c m_q,
    X_oc = Σ_q w_q ∂J_o/∂p_c and Z_o = Σ (J_o/3) a, ∂S_o/∂s = Z_o × R₃ + Σ_c U_oc × R_c (R_c the rows of R:
    ∂p_c/∂s = m × R_c, ∂(R a)_z/∂s = a × R₃) and ∂S_o/∂x_c = X_oc."""
    rot = _cross(Z, Rf[:, None, 2])
    for c in range(3):
        rot = rot + _cross(U[:, :, c], Rf[:, None, c])
    return np.concatenate([rot, X], axis=-1)


def _pair_sums(pairs: list, mom: np.ndarray, tot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """U (…, 4, 3, 3) and X (…, 4, 3) of :func:`_pose_tangent` from the plane sums Σ C m (…, planes, 3) and Σ C."""
    U, X = np.zeros(mom.shape[:-2] + (4, 3, 3)), np.zeros(mom.shape[:-2] + (4, 3))
    for o, c, k in pairs:
        U[..., o, c, :] += mom[..., k, :]
        X[..., o, c] += tot[..., k]
    return U, X


def clip_split(hull: Hull, R: np.ndarray, x: np.ndarray, surface: WaterSurface | None = None,
               tangents: bool = False, values: ClipSplit | None = None, time: np.ndarray | float | None = None
               ) -> ClipSplit:
    """:func:`clip` (and with ``tangents`` its pose derivatives) in the compact form of :class:`ClipSplit`.

    Work is per pose for the whole faces (the wet faces' volume integrals are sums over every face, masked)
    and per (pose, face) row for the faces the surface cuts; derivatives in forward mode (module docstring),
    gathered as rigid-motion sums (:func:`_pose_tangent`) plus the cut parameters' part. ``values``: an earlier
    split, whose cut faces are reused when it was made of this very hull, surface and poses (byte for byte) —
    the optimiser asks the derivatives at the point whose values it has just evaluated. ``time`` (broadcast to
    the batch): the surface is h(x, y, t), each pose clipped at its own time (module docstring).
    """
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    batch = np.broadcast_shapes(R.shape[:-2], x.shape[:-1])
    nb = int(np.prod(batch, dtype=np.int64))
    Rf = np.broadcast_to(R, batch + (3, 3)).reshape(nb, 3, 3)
    xf = np.broadcast_to(x, batch + (3,)).reshape(nb, 3)
    tab = hull.tables
    key: tuple[object, ...] = (hull, surface, Rf.tobytes(), xf.tobytes())
    if time is not None and surface is not None:
        times = np.broadcast_to(np.asarray(time, dtype=float), batch).reshape(nb).copy()
        key += (times.tobytes(),)
        surface = _AtTimes(surface, times)
    if values is not None and (old := values.stage.get("key")) is not None and old[0] is hull and old[1] is key[1] \
            and old[2:] == key[2:]:
        count, a3, cut = values.stage["count"], values.stage["a3"], values.stage["cut"]
    else:
        Vw = np.matmul(hull.vertices, Rf.transpose(0, 2, 1)) + xf[:, None, :]   # (nb, n, 3)
        phi_v = _height(surface, Vw) - Vw[..., 2]                        # (nb, n) depth below surface
        wet = phi_v[:, hull.faces] > 0                                    # (nb, m, 3)
        count = wet[..., 0].astype(np.int8) + wet[..., 1] + wet[..., 2]
        a3 = Rf[:, 2] @ tab.vec.T                                         # (R a_f)_z = n_z dA (nb, m)
        cut = _cut_faces(hull, Vw, phi_v, wet, count, a3, surface)
    full = count == 3
    if surface is None:   # the wet faces, and those with two corners wet (less their tips: _cut_faces)
        whole, rig = _plane_faces(tab, Rf, xf, count >= 2, a3, tangents)
    else:
        whole, rig = _wet_faces(tab, Rf, xf, full, a3, surface, tangents)
    split = ClipSplit(hull, batch, np.zeros(nb), np.zeros((nb, 3)), xf, full, count == 0, cut["bi"], cut["fi"],
                      cut["area"][:, 0], cut["position"][:, 0], cut["area"][:, 1], cut["position"][:, 1],
                      stage={"key": key, "count": count, "a3": a3, "cut": cut})
    sums = whole + split.row_sum(cut["sums"])                             # (nb, 4): V, V x̄
    vol = sums[:, 0]
    pos_ok = vol > 0
    fields = {"volume": np.maximum(vol, 0.0), "moment": np.where(pos_ok[:, None], sums[:, 1:], 0.0),
              "centroid": np.where(pos_ok[:, None], sums[:, 1:] / np.where(pos_ok, vol, 1.0)[:, None], xf)}
    if tangents:
        cut = _cut_tangents(hull, Rf, cut, surface)
        Ur, Xr = _pair_sums(cut["pairs"], split.row_sum(cut["mom"].transpose(1, 0, 2)), split.row_sum(cut["tot"].T))
        U, X, Z = rig[0] + Ur, rig[1] + Xr, rig[2] + split.row_sum(cut["Z"])
        d = _pose_tangent(Rf, U, X, Z) + split.row_sum(cut["sums_t"] @ cut["dt"])
        d = np.where(pos_ok[:, None, None], d, 0.0)
        fields.update(d_volume=d[:, 0], d_moment=d[:, 1:], submerged_area_t=cut["area_t"][:, 0],
                      submerged_slide=cut["slide"][:, 0], emerged_area_t=cut["area_t"][:, 1],
                      emerged_slide=cut["slide"][:, 1], edges=cut["edges"], dt=cut["dt"])
    return replace(split, **fields)


__all__ = ["Hull", "HullTables", "HeightField", "Clipped", "ClippedTangent", "ClipSplit", "clip_split",
           "clip_jacobian", "validate_mesh", "mesh_volume",
           "face_areas_normals", "mesh_inertia", "MeshRepair", "repair_mesh", "convex_hull_mesh",
           "from_mesh", "box_hull", "default_hull", "icosphere", "subdivide", "clip"]
