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
def validate_mesh(vertices: np.ndarray, faces: np.ndarray, where: str = "hull") -> tuple[np.ndarray, np.ndarray]:
    """Check a closed, consistently oriented, positive-volume triangle mesh; return float/int copies.

    Raises ScenarioError(where, problem) for: wrong shapes, non-finite vertices, indices out of
    range or not whole numbers, degenerate faces (a repeated vertex), an edge used by one face
    only (open mesh) or twice in the same direction (inconsistent orientation or non-manifold),
    and a non-positive enclosed volume (inside-out mesh).
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


def _take(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per-row gather: a (…, K, d), idx (…, j) integer → (…, j, d) with out[..., i, :] = a[..., idx[..., i], :]."""
    lead = np.broadcast_shapes(a.shape[:-2], idx.shape[:-1])
    a = np.broadcast_to(a, lead + a.shape[-2:]).reshape(-1, a.shape[-2], a.shape[-1])
    idx = np.broadcast_to(idx, lead + idx.shape[-1:]).reshape(-1, idx.shape[-1])
    flat = idx + (np.arange(len(a)) * a.shape[1])[:, None]
    return a.reshape(-1, a.shape[-1])[flat].reshape(lead + (idx.shape[-1], a.shape[-1]))


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
    R = np.asarray(R, dtype=float)
    x = np.asarray(x, dtype=float)
    batch = np.broadcast_shapes(R.shape[:-2], x.shape[:-1])
    Vb = hull.vertices                                                   # (n, 3)
    Vw = np.einsum("...ij,nj->...ni", R, Vb) + x[..., None, :]           # (…, n, 3)
    Vw = np.broadcast_to(Vw, batch + Vw.shape[-2:])
    phi_v = _height(surface, Vw) - Vw[..., 2]                            # (…, n) depth below surface
    F = hull.faces
    m = len(F)
    phi = phi_v[..., F]                                                   # (…, m, 3)
    wet = phi > 0
    count = wet.sum(axis=-1)
    odd = np.where(count == 1, np.argmax(wet, axis=-1), np.where(count == 2, np.argmin(wet, axis=-1), 0))
    rolled = F[np.arange(m)[:, None], _ROLL[odd]]                         # (…, m, 3) vertex indices
    # one gather of world position | body position | φ for the rolled corners (A odd, then B, C)
    table = np.concatenate([Vw, np.broadcast_to(Vb, Vw.shape), phi_v[..., None]], axis=-1)  # (…, n, 7)
    corners = _take(table, rolled.reshape(batch + (3 * m,))).reshape(batch + (m, 3, 7))
    A, B, C = corners[..., 0, :6], corners[..., 1, :6], corners[..., 2, :6]
    ph = corners[..., 6]
    # cut points P on AB and Q on AC (the odd vertex A is alone on its side of the surface)
    sgn = np.where(count == 1, 1.0, -1.0)
    s_ab = _cut(A[..., :3], B[..., :3], ph[..., 0], ph[..., 1], sgn, surface)[..., None]
    s_ac = _cut(A[..., :3], C[..., :3], ph[..., 0], ph[..., 2], sgn, surface)[..., None]
    P, Q = A + s_ab * (B - A), A + s_ac * (C - A)
    bank = np.stack([A, B, C, P, Q], axis=-2)                             # (…, m, 5, 6)
    # the quad PBCQ is split along its shorter diagonal (a mirror-invariant choice)
    cp, bq = C[..., :3] - P[..., :3], B[..., :3] - Q[..., :3]
    long_pc = (cp * cp).sum(axis=-1) > (bq * bq).sum(axis=-1)
    sel = _SLOTS[:, count, long_pc.astype(np.intp)]                       # (2, …, m, 2, 3)
    sel = np.moveaxis(sel, 0, -3).reshape(batch + (m, 12))
    parts = _take(bank, sel).reshape(batch + (m, 2, 2, 3, 6))             # side, slot, corner
    sub_w, sub_b = parts[..., 0, :, :, :3], parts[..., 0, :, :, 3:]
    emr_b = parts[..., 1, :, :, 3:]

    # volume integrals over the submerged triangles (three-edge-midpoint rule)
    area_vec = 0.5 * _cross(sub_w[..., 1, :] - sub_w[..., 0, :], sub_w[..., 2, :] - sub_w[..., 0, :])
    nz_dA = area_vec[..., 2]                                               # (…, m, 2)
    mids = 0.5 * (sub_w + sub_w[..., _NEXT, :])                            # (…, m, 2, 3, 3)
    h_mid = _height(surface, mids)
    g = mids[..., 2] - h_mid
    w = nz_dA[..., None] / 3.0                                             # midpoint-rule weights
    vol = np.einsum("...fsq,...fsq->...", w, g)
    integrands = np.stack([mids[..., 0] * g, mids[..., 1] * g, 0.5 * (mids[..., 2] ** 2 - h_mid**2)], axis=-1)
    mom = np.einsum("...fsq,...fsqk->...k", w, integrands)
    pos_ok = vol > 0
    centroid = np.where(pos_ok[..., None], mom / np.where(pos_ok, vol, 1.0)[..., None],
                        np.asarray(x, float) + np.zeros(batch + (3,)))
    vol = np.maximum(vol, 0.0)

    normal = np.broadcast_to(hull.face_normal[:, None, :], sub_b.shape[:-2] + (3,))
    sub_area = np.sqrt((area_vec * area_vec).sum(axis=-1))               # rotation keeps areas
    emr_vec = _cross(emr_b[..., 1, :] - emr_b[..., 0, :], emr_b[..., 2, :] - emr_b[..., 0, :])
    emr_area = 0.5 * np.sqrt((emr_vec * emr_vec).sum(axis=-1))
    return Clipped(vol, centroid, sub_b.sum(axis=-2) / 3.0, normal, sub_area,
                   emr_b.sum(axis=-2) / 3.0, normal, emr_area)


__all__ = ["Hull", "HeightField", "Clipped", "validate_mesh", "mesh_volume", "face_areas_normals",
           "from_mesh", "box_hull", "default_hull", "icosphere", "subdivide", "clip"]
