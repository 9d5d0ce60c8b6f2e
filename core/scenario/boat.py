"""Scenario reader for ``type = "boat"`` (paper §4.3.2; model in core.vehicles.boat).

``[vehicle]`` keys (SI units; every key optional, defaults of a ~5 m, 800 kg RIB):

* ``mass`` (kg, 800) and ``inertia`` = [J₁, J₂, J₃] (kg m², default that of a uniform box
  hull_length × hull_beam × hull_height of that mass);
* ``hull_length``, ``hull_beam``, ``hull_height`` (m; 5, 2, 0.8): size of the generated default
  hull (core.vehicles.hull.default_hull: flat deck, V bottom, tapered bow). The centre of mass
  is 0.35·length ahead of the transom and 0.375·height above the keel;
* ``hull_vertices`` = [[x, y, z], …] and ``hull_faces`` = [[i, j, k], …] (optional, together; not
  with the three ``hull_*`` sizes): the boat's own hull as a triangle mesh in the body frame (m,
  origin at the centre of mass, x forward, y to port, z up), each face three 0-based vertex indices
  counter-clockwise seen from outside (outward normals). It must be closed — every edge shared by
  exactly two faces that run along it in opposite directions — and enclose a positive volume; a mesh
  whose faces all point inward is turned outward; anything else is refused naming the key. Cost:
  every step clips every triangle, so a solve's time per iteration grows with the face count (the
  default hull has 408; keep a mesh to some hundreds of triangles). With a mesh, the defaults of
  ``inertia`` and ``thrusters`` come from it: the inertia of the mesh as a uniform solid of ``mass``
  about the body origin (its diagonal: products of inertia are dropped), and the two thrusters at
  its transom (the mesh's rearmost x), ∓0.25 × its beam (y extent) off the centreline, 0.175 × its
  height (z extent) above its lowest point — for the default hull's own mesh these equal the
  defaults above. The hydrodynamic damping sums the wet triangles by their centroids, so a mesh
  whose triangulation is not mirror-symmetric port to starboard (a box's quads all split along
  parallel diagonals) drifts slightly sideways under equal thrusts;
* ``thrusters`` = [[cx, cy, cz, dx, dy, dz], …]: body position c_i (m, from the centre of mass;
  x forward, y to port, z up) and direction d_i (normalised) of each thruster. Default: two at the
  transom, [−0.35·L, ∓0.25·B, −0.2·H] pushing along +x (thruster_1 starboard, thruster_2 port);
* ``max_thrust`` (N, 1500): each input is limited to [−max_thrust, max_thrust];
* ``damping``: the hydrodynamic damping matrix E (N·s/m), 3 values (diagonal: surge, sway,
  heave; default [300, 2000, 3000]) or 6 (symmetric, Voigt order E_xx, E_yy, E_zz, E_yz, E_xz,
  E_xy); must be positive definite;
* ``wind`` = [wx, wy, wz] (m/s, world frame; default calm): air velocity; drag ½ ρ_air C_d A_p |v|v
  with ρ_air = 1.225 kg/m³, C_d = 1 on the emerged hull;
* ``current`` = [cx, cy, cz] (m/s, world frame; default still): the water velocity η;
* ``[vehicle.water]``: moving water — regular waves or heights sampled over frames
  (:mod:`core.scenario.water`).

Inputs: ``thruster_1``, ``thruster_2``, … (N, one per thruster, per step). The water surface is
the plane z = 0 unless ``[vehicle.water]`` moves it, water density 1000 kg/m³, gravity 9.81 m/s² along −z.
``[integrator]`` method (default "vi-cay-ln", the paper's Appendix A pairing), dt, steps; ``[initial]`` as for
the rigid body (a boat floating level at rest has its centre of mass a little above z = 0: 0.084 m for the defaults).
"""
from __future__ import annotations

import numpy as np

from ..errors import ScenarioError
from ..integrators import METHODS, VEHICLE_DEFAULT_METHOD
from ..trajectory import Trajectory
from ..vehicles.boat import Boat, default_thrusters
from ..vehicles.boat_spec import BOAT, DEFAULT_BEAM, DEFAULT_HEIGHT, DEFAULT_LENGTH, box_inertia, thruster_bounds
from ..vehicles.hull import Hull, default_hull, mesh_inertia, validate_mesh
from ..vehicles.water import Wind
from . import Table
from .common import read_integrator, read_parameter, read_se3_initial
from .controls import read_controls
from .water import read_water

HULL_SIZE_KEYS = ("hull_length", "hull_beam", "hull_height")


def read_hull_mesh(vehicle: Table) -> Hull | None:
    """The boat's own hull from ``hull_vertices`` and ``hull_faces`` (None when neither is given);
    every problem is refused naming the key."""
    has_v, has_f = vehicle.has("hull_vertices"), vehicle.has("hull_faces")
    if not (has_v or has_f):
        return None
    if not (has_v and has_f):
        given, missing = ("hull_vertices", "hull_faces") if has_v else ("hull_faces", "hull_vertices")
        raise vehicle.error(given, f"needs {missing} too (the hull is a triangle mesh: vertices and faces)")
    sizes = [k for k in HULL_SIZE_KEYS if vehicle.has(k)]
    if sizes:
        raise vehicle.error(sizes[0], "sizes the generated default hull; with hull_vertices and hull_faces "
                            "the mesh is the hull: remove it")
    v = vehicle.rows("hull_vertices", 3)
    if len(v) < 4:
        raise vehicle.error("hull_vertices", f"a closed mesh needs at least 4 vertices, got {len(v)}")
    raw = vehicle._get("hull_faces", None)
    where = vehicle.where("hull_faces")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(where, "must be a non-empty list of [i, j, k] rows of vertex indices")
    n = len(v)
    for i, row in enumerate(raw):
        if not isinstance(row, list) or len(row) != 3:
            raise ScenarioError(f"{where}[{i}]", "must be three vertex indices [i, j, k] (a triangle)")
        for j, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, int):
                raise ScenarioError(f"{where}[{i}][{j}]", f"must be a whole-number vertex index, got {x!r}")
            if not 0 <= x < n:
                raise ScenarioError(f"{where}[{i}][{j}]", f"vertex index {x} is out of range 0..{n - 1} "
                                    f"(hull_vertices has {n} rows)")
    f = np.array(raw, dtype=np.int64)
    v, f = validate_mesh(v, f, where, allow_inward=True)
    return Hull(v, f)


def mesh_thrusters(hull: Hull) -> tuple:
    """Two thrusters at the transom of a mesh hull: (x_min, ∓0.25·beam, z_min + 0.175·height), along +x —
    :func:`default_thrusters` for the default hull (its transom is 0.35·L behind, keel 0.375·H below)."""
    lo, hi = hull.vertices.min(axis=0), hull.vertices.max(axis=0)
    beam, height = hi[1] - lo[1], hi[2] - lo[2]
    d = np.array([1.0, 0.0, 0.0])
    return tuple((np.array([lo[0], s * 0.25 * beam, lo[2] + 0.175 * height]), d.copy()) for s in (-1.0, 1.0))


def mesh_default_inertia(hull: Hull, mass: float) -> tuple[float, float, float]:
    """The diagonal of the mesh's inertia as a uniform solid of ``mass`` about the body origin."""
    return tuple(float(j) for j in np.diag(mesh_inertia(hull.vertices, hull.faces, mass)))


def read_boat(vehicle: Table) -> Boat:
    """The spec's parameters (mass and max_thrust default to the preset's, the inertia to the hull's) and the
    hull, thrusters and water of this module's docstring."""
    defaults = BOAT.defaults()
    mass = read_parameter(vehicle, BOAT.parameter("mass"), defaults["mass"])
    mesh = read_hull_mesh(vehicle)
    if mesh is None:
        length = vehicle.number("hull_length", DEFAULT_LENGTH, positive=True)
        beam = vehicle.number("hull_beam", DEFAULT_BEAM, positive=True)
        height = vehicle.number("hull_height", DEFAULT_HEIGHT, positive=True)
        hull = default_hull(length, beam, height)
        inertia = read_parameter(vehicle, BOAT.parameter("inertia"), box_inertia(mass, length, beam, height))
    else:
        hull = mesh
        inertia = read_parameter(vehicle, BOAT.parameter("inertia"), mesh_default_inertia(hull, mass))
    if vehicle.has("thrusters"):
        rows = vehicle.rows("thrusters", 6)
        thrusters = tuple((r[:3], r[3:]) for r in rows)
    elif mesh is None:
        thrusters = default_thrusters(length, beam, height)
    else:
        thrusters = mesh_thrusters(hull)
    damping = vehicle.vector("damping", None, [300.0, 2000.0, 3000.0])
    if len(damping) not in (3, 6):
        raise vehicle.error("damping", f"must have 3 (diagonal) or 6 (symmetric) values, got {len(damping)}")
    wind = vehicle.vector("wind", 3, [0.0, 0.0, 0.0])
    current = vehicle.vector("current", 3, [0.0, 0.0, 0.0])
    max_thrust = read_parameter(vehicle, BOAT.parameter("max_thrust"), defaults["max_thrust"])
    surface, orbital = read_water(vehicle)
    return Boat(mass=mass, inertia=tuple(inertia), hull=hull,
                thrusters=thrusters, damping=damping, wind=Wind(wind), current=current,
                max_thrust=max_thrust, surface=surface, orbital=orbital)


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    vehicle.string("type")
    boat = read_boat(vehicle)
    vehicle.finish()
    settings = read_integrator(root, METHODS, default_method=VEHICLE_DEFAULT_METHOD)
    initial = read_se3_initial(root)
    names = boat.input_names
    controls = read_controls(root, names, settings.steps, settings.dt, thruster_bounds(boat, names))
    root.finish()
    return boat.simulate(initial, controls, settings.dt, settings.steps, settings.method)
