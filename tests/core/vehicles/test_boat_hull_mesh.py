"""A boat floating on its own mesh: ``[vehicle] hull_vertices`` / ``hull_faces`` (core.scenario.boat).

References: a box of L × B × H and mass m floats at the draft d = m / (ρ L B) (Archimedes); a
polygonal cylinder (axis along x) at the depth where L · (area of its cross-section below the water)
· ρ = m, from an independent 2-D polygon clip; the uniform-solid inertia of a box m/12 (b² + h², …).
The default hull is unchanged when no mesh is given.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from core.errors import ScenarioError
from core.integrators.common import RigidState
from core.scenario import Table
from core.scenario.boat import read_boat
from core.vehicles import hull as H
from core.vehicles.boat import Boat, box_inertia, default_thrusters
from core.vehicles.water import RHO_WATER


def boat_table(**keys) -> Table:
    return Table({"vehicle": {"type": "boat", **keys}}).table("vehicle")


def read(**keys) -> Boat:
    t = boat_table(**keys)
    t.string("type")
    boat = read_boat(t)
    t.finish()
    return boat


def box_mesh(L: float, B: float, Hh: float, center=(0.0, 0.0, 0.0)) -> tuple[list, list]:
    """8 vertices, 12 outward triangles (the box hull's own mesh, as plain lists)."""
    b = H.box_hull((L, B, Hh), center)
    return b.vertices.tolist(), b.faces.tolist()


def cylinder_mesh(radius: float, length: float, sides: int) -> tuple[np.ndarray, np.ndarray]:
    """A regular polygonal prism along x (circumradius ``radius``), end caps fanned from their centres."""
    a = 2 * np.pi * np.arange(sides) / sides - np.pi / 2 + np.pi / sides   # a flat bottom edge
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], -1)          # (y, z) counter-clockwise
    v = np.concatenate([np.column_stack([np.full(sides, x), ring]) for x in (-length / 2, length / 2)]
                       + [[[-length / 2, 0, 0], [length / 2, 0, 0]]])
    j = np.arange(sides)
    k = (j + 1) % sides
    side = np.concatenate([np.stack([j, k + sides, j + sides], -1), np.stack([j, k, k + sides], -1)])
    caps = np.concatenate([np.stack([np.full(sides, 2 * sides), k, j], -1),
                           np.stack([np.full(sides, 2 * sides + 1), j + sides, k + sides], -1)])
    return v, np.concatenate([side, caps])


def polygon_area_below(poly: np.ndarray, level: float) -> float:
    """Area of the 2-D polygon (y, z) below z = level (Sutherland–Hodgman clip, shoelace)."""
    out = []
    for p, q in zip(poly, np.roll(poly, -1, axis=0)):
        pin, qin = p[1] <= level, q[1] <= level
        if pin:
            out.append(p)
        if pin != qin:
            t = (level - p[1]) / (q[1] - p[1])
            out.append(p + t * (q - p))
    if len(out) < 3:
        return 0.0
    y, z = np.array(out).T
    return 0.5 * abs(np.dot(y, np.roll(z, -1)) - np.dot(z, np.roll(y, -1)))


# ---------------------------------------------------------------------------------------------
# floating on the mesh
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mass", [800.0, 3000.0])
def test_box_hull_floats_at_archimedes_draft(mass):
    L, B, Hh = 5.0, 2.0, 0.8
    v, f = box_mesh(L, B, Hh)
    boat = read(mass=mass, hull_vertices=v, hull_faces=f)
    draft = mass / (RHO_WATER * L * B)
    assert boat.float_height() == pytest.approx(Hh / 2 - draft, abs=1e-12)
    # the default inertia is the uniform box's, the thrusters at the transom near the keel
    assert boat.inertia == pytest.approx(box_inertia(mass, L, B, Hh), rel=1e-12)
    np.testing.assert_allclose([t[0] for t in boat.thrusters],
                               [[-L / 2, -B / 4, -Hh / 2 + 0.175 * Hh], [-L / 2, B / 4, -Hh / 2 + 0.175 * Hh]],
                               atol=1e-15)
    # and at rest there it stays: 2 s of the variational integrator
    z = boat.float_height()
    traj = boat.simulate(RigidState(np.eye(3), np.array([0.0, 0.0, z]), np.zeros(3), np.zeros(3)),
                         {}, 0.05, 40)
    assert np.max(np.abs(np.asarray(traj.position) - [0.0, 0.0, z])) < 1e-9


def test_box_hull_off_centre_origin_keeps_its_draft():
    """The origin is the centre of mass wherever the mesh lies: a box whose centre is 1 m behind and
    0.1 m below the origin still floats with its bottom at −d, and trims bow down (the mass sits 1 m
    ahead of the buoyancy)."""
    L, B, Hh, mass = 5.0, 2.0, 0.8, 800.0
    v, f = box_mesh(L, B, Hh, center=(-1.0, 0.0, -0.1))
    boat = read(mass=mass, hull_vertices=v, hull_faces=f)
    draft = mass / (RHO_WATER * L * B)
    assert boat.float_height() == pytest.approx(Hh / 2 + 0.1 - draft, abs=1e-12)
    z, pitch = boat.equilibrium()
    assert pitch > 1e-3                                   # θ > 0: bow down


def test_cylinder_hull_floats_at_its_section_draft():
    r, length, sides, mass = 0.6, 4.0, 24, 1500.0
    v, f = cylinder_mesh(r, length, sides)
    boat = read(mass=mass, hull_vertices=v.tolist(), hull_faces=f.tolist())
    section = v[:sides, 1:]
    # theory: the depth of the water plane in the body frame at which L · A_below · ρ = m
    level = brentq(lambda s: length * polygon_area_below(section, s) * RHO_WATER - mass, -r, r, xtol=1e-14)
    assert boat.float_height() == pytest.approx(-level, abs=1e-10)
    # and close to a true circle's: L ρ r² (θ − sin θ)/2 = m, draft r (1 − cos θ/2)
    theta = brentq(lambda t: length * RHO_WATER * r**2 * (t - math.sin(t)) / 2 - mass, 1e-9, 2 * math.pi)
    draft_circle = r * (1 - math.cos(theta / 2))
    apothem = r * math.cos(math.pi / sides)
    assert (apothem - boat.float_height()) == pytest.approx(draft_circle, rel=0.02)
    # the default inertia: a uniform cylinder's, within the polygon's deficit
    Jx, Jy, Jz = boat.inertia
    assert Jx == pytest.approx(mass * r**2 / 2, rel=0.02)
    assert Jy == pytest.approx(Jz, rel=1e-12)
    assert Jy == pytest.approx(mass * (3 * r**2 + length**2) / 12, rel=0.01)


def test_inward_mesh_is_turned_outward():
    v, f = box_mesh(4.0, 2.0, 1.0)
    out = read(mass=900.0, hull_vertices=v, hull_faces=f)
    inward = read(mass=900.0, hull_vertices=v, hull_faces=[row[::-1] for row in f])
    assert inward.hull.volume == pytest.approx(8.0, rel=1e-14)
    assert inward.float_height() == pytest.approx(out.float_height(), abs=1e-13)


# ---------------------------------------------------------------------------------------------
# refusals name the key
# ---------------------------------------------------------------------------------------------
def _refused(fragment: str, **keys) -> None:
    with pytest.raises(ScenarioError) as exc:
        read(**keys)
    assert fragment in str(exc.value), str(exc.value)


def test_open_mesh_is_refused_naming_hull_faces():
    v, f = box_mesh(4.0, 2.0, 1.0)
    _refused("[vehicle] hull_faces: mesh is not closed: edge", hull_vertices=v, hull_faces=f[:-1])


def test_inconsistent_faces_are_refused_naming_hull_faces():
    v, f = box_mesh(4.0, 2.0, 1.0)
    f = [row[::-1] if i == 3 else row for i, row in enumerate(f)]
    _refused("[vehicle] hull_faces: edge", hull_vertices=v, hull_faces=f)


def test_bad_indices_are_refused_naming_the_entry():
    v, f = box_mesh(4.0, 2.0, 1.0)
    f[3] = [f[3][0], 8, f[3][2]]
    _refused("[vehicle] hull_faces[3][1]: vertex index 8 is out of range 0..7", hull_vertices=v, hull_faces=f)
    f[3] = [f[3][0], -1, f[3][2]]
    _refused("[vehicle] hull_faces[3][1]: vertex index -1 is out of range 0..7", hull_vertices=v, hull_faces=f)
    f[3] = [f[3][0], 1.5, f[3][2]]
    _refused("[vehicle] hull_faces[3][1]: must be a whole-number vertex index", hull_vertices=v, hull_faces=f)
    f[3] = [0, 1]
    _refused("[vehicle] hull_faces[3]: must be three vertex indices", hull_vertices=v, hull_faces=f)
    _refused("[vehicle] hull_faces: must be a non-empty list", hull_vertices=v, hull_faces=[])


def test_bad_vertices_are_refused_naming_hull_vertices():
    v, f = box_mesh(4.0, 2.0, 1.0)
    v[2] = [0.0, float("nan"), 0.0]
    _refused("[vehicle] hull_vertices[2][1]: must be finite", hull_vertices=v, hull_faces=f)
    v[2] = [0.0, 1.0, 0.0]
    _refused("[vehicle] hull_vertices: a closed mesh needs at least 4 vertices", hull_vertices=v[:3],
             hull_faces=[[0, 1, 2]])
    v[2] = [0.0, 1.0]
    _refused("[vehicle] hull_vertices[2]: must have 3 entries", hull_vertices=v, hull_faces=f)


def test_mesh_keys_come_together_and_replace_the_sizes():
    v, f = box_mesh(4.0, 2.0, 1.0)
    _refused("[vehicle] hull_vertices: needs hull_faces too", hull_vertices=v)
    _refused("[vehicle] hull_faces: needs hull_vertices too", hull_faces=f)
    _refused("[vehicle] hull_length: sizes the generated default hull", hull_vertices=v, hull_faces=f,
             hull_length=4.0)
    _refused("[vehicle] mass: 9000 kg sinks", mass=9000.0, hull_vertices=v, hull_faces=f)


def test_degenerate_and_flat_meshes_are_refused():
    v, f = box_mesh(4.0, 2.0, 1.0)
    f[0] = [f[0][0], f[0][0], f[0][2]]
    _refused("[vehicle] hull_faces: face 0 repeats a vertex", hull_vertices=v, hull_faces=f)


# ---------------------------------------------------------------------------------------------
# the default hull is unchanged without a mesh
# ---------------------------------------------------------------------------------------------
def test_default_hull_unchanged_without_mesh():
    boat = read()
    ref = H.default_hull()
    np.testing.assert_array_equal(boat.hull.vertices, ref.vertices)
    np.testing.assert_array_equal(boat.hull.faces, ref.faces)
    assert boat.inertia == box_inertia(800.0, 5.0, 2.0, 0.8)
    for (c, d), (c0, d0) in zip(boat.thrusters, default_thrusters()):
        np.testing.assert_array_equal(c, c0)
        np.testing.assert_array_equal(d, d0)
    assert boat.float_height() == Boat().float_height()


def test_default_hull_as_a_mesh_floats_the_same():
    """The default hull's own mesh given as keys: the same hull, thrusters and float height (the inertia
    default is then the mesh's as a uniform solid)."""
    ref = H.default_hull()
    boat = read(hull_vertices=ref.vertices.tolist(), hull_faces=ref.faces.tolist())
    assert boat.float_height() == pytest.approx(Boat().float_height(), abs=1e-13)
    for (c, _), (c0, _) in zip(boat.thrusters, default_thrusters()):
        np.testing.assert_allclose(c, c0, atol=1e-15)
    J = H.mesh_inertia(ref.vertices, ref.faces, 800.0)
    assert boat.inertia == pytest.approx(tuple(np.diag(J)), rel=1e-14)


def test_dmoc_model_reads_the_mesh():
    from core.dmoc.models.boat import read_model

    v, f = box_mesh(4.0, 2.0, 1.0)
    root = Table({"vehicle": {"type": "boat", "hull_vertices": v, "hull_faces": f},
                  "integrator": {"steps": 10}})
    vehicle = root.table("vehicle")
    vehicle.string("type")
    model = read_model(root, vehicle)
    assert len(model.boat.hull.faces) == 12
    assert model.boat.float_height() == pytest.approx(0.5 - 800.0 / 8000.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# meshes from elsewhere (the add-on's Blender objects): repair, inertia, convex hull
# ---------------------------------------------------------------------------------------------
def test_repair_mesh_welds_orients_and_counts_open_edges():
    ref = H.default_hull()
    rng = np.random.default_rng(0)
    f = ref.faces.copy()
    flip = rng.random(len(f)) < 0.3
    f[flip] = f[flip][:, ::-1]
    soup = ref.vertices[f].reshape(-1, 3)                      # every triangle its own three vertices
    r = H.repair_mesh(soup, np.arange(len(soup)).reshape(-1, 3))
    assert r.closed and r.flipped == int(flip.sum()) and r.welded == len(soup) - len(ref.vertices)
    assert H.Hull(r.vertices, r.faces).volume == pytest.approx(ref.volume, rel=1e-13)
    inside_out = H.repair_mesh(ref.vertices, ref.faces[:, ::-1])
    assert inside_out.closed and inside_out.flipped == len(ref.faces)
    opened = H.repair_mesh(ref.vertices, ref.faces[1:])
    assert not opened.closed and opened.open_edges == 3
    doubled = H.repair_mesh(ref.vertices, np.concatenate([ref.faces, ref.faces[:1]]))
    assert not doubled.closed and doubled.nonmanifold_edges == 3


def test_convex_hull_mesh_bounds_the_face_count():
    ball = H.icosphere(1.0, 4)                                 # 5120 triangles
    v, f = H.convex_hull_mesh(ball.vertices)
    assert H.Hull(v, f).volume == pytest.approx(ball.volume, rel=1e-12)
    v, f = H.convex_hull_mesh(ball.vertices, max_faces=400)
    small = H.Hull(v, f)
    assert len(f) <= 400 and small.volume < ball.volume and small.volume > 0.95 * ball.volume
