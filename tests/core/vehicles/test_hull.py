"""Hull meshes and their clipping by the water surface (core.vehicles.hull).

References: closed-form volumes and centroids of clipped boxes (level and tilted), spherical
caps, the whole-mesh signed-tetrahedra volume, plane clipping of a rotated mesh (for tilted
height fields), and ∫∫(h + ½) dx dy for a box under a sine surface.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ScenarioError
from core.lie import so3
from core.vehicles import hull as H
from core.vehicles.water import plane_surface, swell

I3 = np.eye(3)
FAST = settings(max_examples=25, deadline=None, database=None, derandomize=True)


def Rx(t: float) -> np.ndarray:
    return so3.exp(np.array([t, 0.0, 0.0]))


def rotation_to_z(n: np.ndarray) -> np.ndarray:
    """A rotation Q with Q n = e_z (n unit)."""
    axis = np.cross(n, [0.0, 0.0, 1.0])
    s = np.linalg.norm(axis)
    if s < 1e-15:
        return I3.copy()
    return so3.exp(axis / s * math.atan2(s, n[2]))


# -------------------------------------------------------------------------------------------
# whole meshes
# -------------------------------------------------------------------------------------------
def test_box_mesh_volume_centroid_area():
    b = H.box_hull((2.0, 1.0, 0.5), (0.3, -0.2, 0.1), divisions=2)
    assert b.volume == pytest.approx(1.0, rel=1e-14)
    np.testing.assert_allclose(b.centroid, [0.3, -0.2, 0.1], atol=1e-14)
    assert b.area == pytest.approx(2 * (2 * 1 + 2 * 0.5 + 1 * 0.5), rel=1e-14)
    assert len(b.faces) == 6 * 2 * 4


def test_icosphere_volume_approaches_sphere():
    v3, v4 = H.icosphere(1.0, 3).volume, H.icosphere(1.0, 4).volume
    exact = 4 / 3 * math.pi
    assert v3 < v4 < exact
    assert (exact - v4) / exact < 3e-3


def test_subdivide_keeps_solid_and_quadruples_faces():
    h = H.default_hull()
    s = H.subdivide(h, 2)
    assert len(s.faces) == 16 * len(h.faces)
    assert s.volume == pytest.approx(h.volume, rel=1e-13)
    np.testing.assert_allclose(s.centroid, h.centroid, atol=1e-13)
    assert s.area == pytest.approx(h.area, rel=1e-13)


def test_default_hull_size_and_mirror_symmetry():
    h = H.default_hull(5.0, 2.0, 0.8)
    lo, hi = h.vertices.min(axis=0), h.vertices.max(axis=0)
    np.testing.assert_allclose(hi - lo, [5.0, 2.0, 0.8], atol=1e-12)
    assert 200 <= len(h.faces) <= 800
    assert lo[0] == pytest.approx(-H.TRANSOM_FRACTION * 5.0)
    # the mirror image y → −y (faces reversed to stay outward) is the same set of triangles
    def canon(tri: np.ndarray) -> tuple:
        rows = [tuple(r) for r in (np.round(tri, 12) + 0.0).tolist()]
        i = rows.index(min(rows))
        return tuple(rows[i:] + rows[:i])

    mv = h.vertices * [1.0, -1.0, 1.0]
    assert {canon(h.vertices[f]) for f in h.faces} == {canon(mv[f]) for f in h.faces[:, ::-1]}


# -------------------------------------------------------------------------------------------
# mesh validation
# -------------------------------------------------------------------------------------------
def _cube():
    b = H.box_hull()
    return b.vertices.copy(), b.faces.copy()


@pytest.mark.parametrize("mutate, message", [
    (lambda v, f: (v, f[1:]), "not closed"),
    (lambda v, f: (v, np.concatenate([f[:1, ::-1], f[1:]])), "same direction"),
    (lambda v, f: (v, f[:, ::-1]), "volume"),
    (lambda v, f: (v, np.where(f == 0, 99, f)), "out of range"),
    (lambda v, f: (v, f + 0.5), "whole-number"),
    (lambda v, f: (np.where(v == v.max(), np.nan, v), f), "NaN"),
    (lambda v, f: (v, np.concatenate([f, [[0, 0, 1]]])), "repeats a vertex"),
    (lambda v, f: (v[:, :2], f), "vertices must be"),
    (lambda v, f: (v, f[:, :2]), "faces must be"),
    (lambda v, f: (v, np.concatenate([f, f[:1]])), "same direction"),
])
def test_bad_meshes_are_refused(mutate, message):
    v, f = mutate(*_cube())
    with pytest.raises(ScenarioError) as err:
        H.from_mesh(v, f, where="[vehicle] hull")
    assert message in str(err.value)
    assert str(err.value).startswith("[vehicle] hull:")
    assert "\n" not in str(err.value)


# -------------------------------------------------------------------------------------------
# plane clipping against closed forms
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("zc", [-1.0, -0.24, -0.1, 0.0, 0.07, 0.2499, 0.3])
def test_level_box_against_closed_form(zc):
    size = np.array([2.0, 1.0, 0.5])
    b = H.box_hull(size, divisions=1)
    c = H.clip(b, I3, np.array([0.4, -0.3, zc]))
    depth = np.clip(0.25 - zc, 0.0, 0.5)                  # submerged height of the box
    assert c.volume == pytest.approx(2.0 * 1.0 * depth, abs=1e-14)
    if depth > 0:
        np.testing.assert_allclose(c.centroid, [0.4, -0.3, zc - 0.25 + depth / 2], atol=1e-14)
    wet = 2.0 * 1.0 * (int(depth > 0) + int(depth >= 0.5)) + 2 * (2.0 + 1.0) * depth   # bottom, top, sides
    assert c.submerged_area.sum() == pytest.approx(wet, abs=1e-13)
    assert c.submerged_area.sum() + c.emerged_area.sum() == pytest.approx(b.area, abs=1e-13)


@pytest.mark.parametrize("theta, c0", [(0.1, 0.0), (0.3, -0.05), (-0.4, 0.08), (0.5, 0.0), (0.25, -0.12)])
def test_tilted_box_against_closed_form(theta, c0):
    Lx, Ly, Lz = 1.5, 1.0, 0.8
    R = Rx(theta)
    s, co = math.sin(theta), math.cos(theta)
    # waterline ζ(y) = −(c0 + s y)/cos θ must cross both sides: |ζ| < Lz/2 at y = ±Ly/2
    assert abs(c0 / co) + abs(math.tan(theta)) * Ly / 2 < Lz / 2
    area = Ly * (Lz / 2 - c0 / co)
    my = -math.tan(theta) * Ly**3 / 12
    mz = 0.5 * ((c0**2 * Ly + s**2 * Ly**3 / 12) / co**2 - Ly * Lz**2 / 4)
    body_centroid = np.array([0.0, my / area, mz / area])
    c = H.clip(H.box_hull((Lx, Ly, Lz), divisions=2), R, np.array([0.0, 0.0, c0]))
    assert c.volume == pytest.approx(Lx * area, rel=1e-13)
    np.testing.assert_allclose(c.centroid, R @ body_centroid + [0.0, 0.0, c0], atol=1e-13)


@pytest.mark.parametrize("zc", [-0.8, -0.3, 0.0, 0.45, 0.9])
def test_sphere_caps(zc):
    r = 1.0
    s = H.icosphere(r, 4)
    c = H.clip(s, I3, np.array([0.0, 0.0, zc]))
    d = r - zc                                              # depth of the cap below z = 0
    v_cap = math.pi * d * d * (3 * r - d) / 3
    z_cap = zc - 3 * (2 * r - d) ** 2 / (4 * (3 * r - d))   # centroid of a cap of height d
    assert c.volume == pytest.approx(v_cap, rel=6e-3, abs=1e-3)   # inscribed polyhedron
    assert c.centroid[2] == pytest.approx(z_cap, abs=3e-3)
    np.testing.assert_allclose(c.centroid[:2], 0.0, atol=1e-12)


@FAST
@given(st.tuples(*[st.floats(-3.0, 3.0)] * 3), st.floats(-0.5, 0.5))
def test_fully_submerged_and_fully_emerged(rv, shift):
    h = H.default_hull()
    R = so3.exp(np.array(rv))
    radius = np.linalg.norm(h.vertices, axis=1).max()
    down = H.clip(h, R, np.array([shift, 2 * shift, -radius - 0.01]))
    assert down.volume == pytest.approx(h.volume, rel=1e-12)
    np.testing.assert_allclose(down.centroid, R @ h.centroid + [shift, 2 * shift, -radius - 0.01], atol=1e-12)
    assert down.emerged_area.sum() == 0.0
    # a closed wetted surface: Σ n dA = 0, Σ r × n dA = 0
    n_dA = (down.submerged_normal * down.submerged_area[..., None]).reshape(-1, 3)
    np.testing.assert_allclose(n_dA.sum(axis=0), 0.0, atol=1e-12)
    up = H.clip(h, R, np.array([shift, 0.0, radius + 0.01]))
    assert up.volume == 0.0 and up.submerged_area.sum() == 0.0
    assert up.emerged_area.sum() == pytest.approx(h.area, rel=1e-13)


@FAST
@given(st.tuples(*[st.floats(-3.0, 3.0)] * 3), st.floats(-0.6, 0.6))
def test_submerged_plus_emerged_is_whole(rv, zc):
    """The part above z = 0 is the submerged part of the mesh mirrored in z (faces reversed)."""
    h = H.default_hull()
    R = so3.exp(np.array(rv))
    x = np.array([0.2, -0.1, zc])
    below = H.clip(h, R, x)
    Mz = np.diag([1.0, 1.0, -1.0])
    mirrored = H.Hull(h.vertices @ Mz, h.faces[:, ::-1])
    above = H.clip(mirrored, Mz @ R @ Mz, Mz @ x)     # pose of the mirrored mesh in the mirrored world
    assert below.volume + above.volume == pytest.approx(h.volume, rel=1e-12)
    moment = below.volume * below.centroid + above.volume * (Mz @ above.centroid)
    np.testing.assert_allclose(moment, h.volume * (R @ h.centroid + x), atol=1e-12)
    assert below.submerged_area.sum() + below.emerged_area.sum() == pytest.approx(h.area, rel=1e-12)


def test_batched_poses_match_single_poses():
    h = H.default_hull()
    rng = np.random.default_rng(3)
    R = so3.exp(rng.normal(scale=0.4, size=(2, 3, 3)))
    x = rng.normal(scale=0.2, size=(2, 3, 3))
    c = H.clip(h, R, x)
    assert c.volume.shape == (2, 3) and c.submerged_area.shape == (2, 3, len(h.faces), 2)
    for i in range(2):
        for j in range(3):
            one = H.clip(h, R[i, j], x[i, j])
            assert c.volume[i, j] == pytest.approx(float(one.volume), rel=1e-14, abs=1e-15)
            np.testing.assert_allclose(c.centroid[i, j], one.centroid, atol=1e-14)
            np.testing.assert_allclose(c.submerged_position[i, j], one.submerged_position, atol=1e-14)


def _random_poses(seed: int, z0: float, n: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Afloat with small and large attitudes about height z0, plus one pose fully out and one fully under."""
    rng = np.random.default_rng(seed)
    R = np.stack([so3.exp(rng.normal(scale=0.1 if i < n // 2 else 0.6, size=3)) for i in range(n)])
    x = np.column_stack([rng.normal(scale=2.0, size=(n, 2)), z0 + rng.normal(scale=0.1, size=n)])
    x[-2, 2], x[-1, 2] = 5.0, -5.0
    return R, x


HULLS = {"default": H.default_hull, "box": lambda: H.box_hull((2.0, 1.0, 0.6), divisions=3),
         "sphere": lambda: H.icosphere(0.7, 2)}


@pytest.mark.parametrize("name", list(HULLS))
def test_calm_plane_closed_form_matches_the_height_field_path(name):
    """On the calm plane the clipping integrates in closed form (per-face midpoint moments; a cut face's tip A P Q,
    or the face less its tip); a height field h ≡ 0 takes the general path (every wet midpoint, the submerged
    slots): the same clip and the same pose tangents, to round-off."""
    h = HULLS[name]()
    R, x = _random_poses(21, 0.0)
    plane, tp = H.clip_jacobian(h, R, x)
    field, tf = H.clip_jacobian(h, R, x, plane_surface(0.0))
    for f in ("volume", "centroid", "submerged_position", "submerged_area", "emerged_position", "emerged_area"):
        np.testing.assert_allclose(getattr(field, f), getattr(plane, f), rtol=0, atol=1e-12, err_msg=f)
    for f in ("volume", "moment", "submerged_position", "submerged_area", "emerged_position", "emerged_area"):
        a, b = getattr(tf, f), getattr(tp, f)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-11 * (1.0 + np.abs(b).max()), err_msg=f)
    assert np.abs(tp.volume[:-2]).max() > 0.1 and np.abs(tp.volume[-2:]).max() < 1e-12   # out, sunk: V fixed


def test_clip_split_reuses_the_cut_faces_of_the_same_poses_only():
    """``clip_split(…, values=)`` takes the cut faces of an earlier split when hull, surface and poses are the same
    (byte for byte): the same tangents as clipping afresh; other poses or another surface are clipped afresh."""
    h = H.default_hull()
    R, x = _random_poses(22, 0.08)
    values = H.clip_split(h, R, x)
    fresh = H.clip_split(h, R, x, tangents=True)
    again = H.clip_split(h, R, x, tangents=True, values=values)
    assert again.stage["cut"] is values.stage["cut"] and fresh.stage["cut"] is not values.stage["cut"]
    for f in ("volume", "moment", "d_volume", "d_moment", "submerged_area_t", "emerged_slide", "dt"):
        np.testing.assert_array_equal(getattr(again, f), getattr(fresh, f), err_msg=f)
    assert H.clip_split(h, R, x + 1e-9, tangents=True, values=values).stage["cut"] is not values.stage["cut"]
    assert H.clip_split(h, R, x, plane_surface(0.0), True, values).stage["cut"] is not values.stage["cut"]


# -------------------------------------------------------------------------------------------
# height fields
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [-0.2, 0.0, 0.13])
def test_constant_height_field_matches_plane(level):
    h = H.default_hull()
    R = so3.exp(np.array([0.2, -0.1, 0.7]))
    x = np.array([0.3, 0.1, 0.05])
    field = H.clip(h, R, x, lambda X, Y: np.full(np.shape(X), level))
    plane = H.clip(h, R, x - [0.0, 0.0, level])
    assert field.volume == pytest.approx(float(plane.volume), rel=1e-13)
    np.testing.assert_allclose(field.centroid, plane.centroid + [0.0, 0.0, level], atol=1e-13)
    np.testing.assert_allclose(field.submerged_area, plane.submerged_area, atol=1e-13)


@pytest.mark.parametrize("a, b, c", [(0.1, 0.0, 0.0), (-0.05, 0.2, 0.04), (0.3, -0.3, -0.1)])
def test_tilted_plane_height_field_matches_rotated_clip(a, b, c):
    """z < a x + b y + c ⟺ (Q p)_z < c/|N| with N = (−a, −b, 1), Q N̂ = e_z."""
    h = H.default_hull()
    R = so3.exp(np.array([0.1, 0.05, 0.4]))
    x = np.array([0.2, -0.3, 0.05])
    field = H.clip(h, R, x, plane_surface(c, (a, b)))
    N = np.array([-a, -b, 1.0])
    Q = rotation_to_z(N / np.linalg.norm(N))
    off = np.array([0.0, 0.0, c / np.linalg.norm(N)])
    ref = H.clip(h, Q @ R, Q @ x - off)
    assert field.volume == pytest.approx(float(ref.volume), rel=1e-12)
    np.testing.assert_allclose(field.centroid, Q.T @ (ref.centroid + off), atol=1e-12)
    assert field.submerged_area.sum() == pytest.approx(ref.submerged_area.sum(), rel=1e-12)


def test_sine_surface_converges_under_subdivision():
    """Unit box at the origin under h = A sin(k x): V = ∫∫ (h + ½) dx dy, centroid likewise."""
    A, lam = 0.2, 1.3
    k = 2 * math.pi / lam
    surf = swell(A, lam)
    vol = 0.5 + A * (math.cos(-k / 2) - math.cos(k / 2)) / k          # ∫ sin(kx) dx over [−½, ½] = 0
    mx = A * (math.sin(k / 2) / k**2 - math.cos(k / 2) / (2 * k)) * 2  # ∫ x sin(kx) dx over [−½, ½]
    # ∫ (h² − ¼)/2 dx over [−½, ½] (z-moment of the column from −½ to h)
    mz = 0.5 * (A * A * (0.5 - math.sin(k) / (2 * k)) - 0.25)
    errors = []
    for level in range(4):
        c = H.clip(H.box_hull(divisions=2**level), I3, np.zeros(3), surf)
        errors.append(abs(c.volume - vol) + np.abs(c.centroid - [mx / vol, 0.0, mz / vol]).max())
    assert errors[-1] < 2e-3
    assert errors[-1] < errors[0] / 20                                    # second order: ≈ 4× per level


def test_height_field_cut_points_lie_on_the_surface():
    rng = np.random.default_rng(7)
    surf = swell(0.3, 1.7, direction=0.4)
    pa = rng.uniform(-2, 2, size=(200, 3))
    pb = rng.uniform(-2, 2, size=(200, 3))
    fa, fb = surf(pa[:, 0], pa[:, 1]) - pa[:, 2], surf(pb[:, 0], pb[:, 1]) - pb[:, 2]
    crossing = (fa > 0) != (fb > 0)
    sgn = np.where(fa > 0, 1.0, -1.0)
    t = H._cut(pa, pb, fa, fb, sgn, surf)
    p = pa + t[:, None] * (pb - pa)
    phi = surf(p[:, 0], p[:, 1]) - p[:, 2]
    # a bracketed root: every crossing edge has a cut point on the surface
    assert crossing.sum() > 50
    assert np.abs(phi[crossing]).max() < 1e-9
    assert np.all((t >= 0) & (t <= 1))


def test_height_field_clip_is_a_partition_and_converges():
    h = H.subdivide(H.default_hull(), 1)
    surf = swell(0.15, 3.0, direction=0.4)
    x = np.array([0.0, 0.0, 0.05])
    c = H.clip(h, I3, x, surf)
    assert c.submerged_area.sum() + c.emerged_area.sum() == pytest.approx(h.area, rel=1e-12)
    fine = H.clip(H.subdivide(h, 2), I3, x, surf)
    assert c.volume == pytest.approx(float(fine.volume), rel=5e-3)
    np.testing.assert_allclose(c.centroid, fine.centroid, atol=5e-3)
