"""The vehicle's measured geometry, read at the current evaluation (its parts sit rigidly on the body, so
every frame gives the same layout, and the scene is not moved to another frame, which would drop unkeyed
edits):

* its collision spheres and real geometry (:func:`vehicle_geometry`: its evaluated mesh vertices in the
  body frame, a rotor swept over a turn; a key touching an obstacle is measured with them,
  ``core.shot.contacts``);
* a car's geometry from its wheel objects (:func:`measure_car`, the rule in ``core.shot.car_geometry``):
  the rear axle it drives (midway between the rear wheels, on the ground), its wheelbase and each wheel's
  radius — its origin may be anywhere: keys are moved to the rear axle and the bake puts the object back
  (``FrameMap.body_offset``); Geometry › Typed Values uses Wheel Radius and Wheelbase instead;
* a boat's hull: its own evaluated mesh when it is closed (else the default hull, with a warning), centred
  on its volume centroid — the centre of mass the solve plans, the origin may be anywhere
  (:func:`boat_hull`);
* a helicopter's rotor hubs from its rotor objects (:func:`measure_rotors`).

Dimensions are metres whatever the Unit Scale.
"""
from __future__ import annotations

import math

import bpy
import numpy as np

from ..core.shot import car_geometry
from ..core.shot.geometry import fit_spheres, floats, polar, rotor_disc, swept
from .properties import CHILD_ROLES
from .scene_keys import MAX_DISTANCE, SceneError, check_pose, descendants, range_text
from .scene_obstacles import MESH_TYPES, a_or_an, type_label, world_vertices

WHEEL_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0),   # Wheel Axis → local vector
              "NEG_X": (-1.0, 0.0, 0.0), "NEG_Y": (0.0, -1.0, 0.0), "NEG_Z": (0.0, 0.0, -1.0)}
BOAT_HULL_FACES = 1000  # a boat mesh with more triangles floats on its convex hull of at most this many


def _metres(x: float) -> str:
    """A distance for a message: 3 significant digits, 0 below a micrometre (round-off)."""
    return f"{x:.3g}" if abs(x) >= 1e-6 else "0"


def mesh_triangles(ob) -> tuple[np.ndarray, np.ndarray]:
    """Local vertices (N, 3) and triangles (M, 3) of an evaluated object's geometry: quads and n-gons split
    (``loop_triangles``); empty arrays without geometry."""
    mesh = ob.to_mesh()
    try:
        if mesh is None or not len(mesh.vertices):
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        mesh.calc_loop_triangles()
        tris = np.empty(3 * len(mesh.loop_triangles), dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        ob.to_mesh_clear()
    return co.reshape(-1, 3), tris.reshape(-1, 3).astype(np.int64)


def vehicle_geometry(scene, obj, scale: float) -> tuple[np.ndarray, np.ndarray | None]:
    """(collision spheres, real geometry) of the vehicle at the current evaluation, both in the body frame,
    metres. The spheres (the rule is core.shot.geometry.fit_spheres): a row along the body covering the
    bounding box of the body and its parts, except a helicopter's main rotor, whose swept disc gets spheres
    that reach no lower than the body. The real geometry: the evaluated mesh vertices (spinning rotors
    swept over a turn), for the clearance of keys touching an obstacle; None without meshes."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    m = np.array(obj.evaluated_get(depsgraph).matrix_world)
    check_pose(obj, m, scene.frame_current, scale)
    r = polar(m[:3, :3])
    s = obj.vehicle_motion
    rotors = {}  # role → (the rotor and its descendants, the spin axis in world)
    for role in ("main_rotor", "tail_rotor") if s.vehicle_type == "HELICOPTER" else ():
        rotor = getattr(s, role)
        if rotor is not None:
            rm = np.array(rotor.evaluated_get(depsgraph).matrix_world)
            axis = rm[:3, :3] @ np.array(WHEEL_AXES[getattr(s, CHILD_ROLES[role][1])])
            rotors[role] = ({rotor, *descendants(rotor)}, rm[:3, 3].copy(), axis)
    in_rotor = {ob: role for role, (family, _, _) in rotors.items() for ob in family}
    parts = [ob for ob in [obj, *descendants(obj)] if ob.type in MESH_TYPES]
    groups: dict[str | None, list[np.ndarray]] = {}
    for ob in parts:
        v = world_vertices(ob, depsgraph)
        if len(v):
            groups.setdefault(in_rotor.get(ob), []).append(v)
    everything = [v for vs in groups.values() for v in vs]
    if everything:
        verts = np.concatenate(everything)
        if not np.all(np.isfinite(verts)) or \
                float(np.max(np.linalg.norm(verts, axis=1))) * scale > MAX_DISTANCE:
            raise SceneError(f"'{obj.name}' (its meshes and parts) reaches beyond {MAX_DISTANCE:g} m from the "
                             f"world origin at frame {scene.frame_current}, out of range "
                             f"({range_text('m')}): fix its scale and location")

    def body_frame(v):
        return (np.asarray(v, dtype=float).reshape(-1, 3) - m[:3, 3]) @ r * scale

    body = body_frame(np.concatenate(groups[None])) if None in groups else np.zeros((0, 3))
    real = [body]
    disc = None
    for role, (_, origin, axis) in rotors.items():
        if role not in groups:
            continue
        points, o, a = body_frame(np.concatenate(groups[role])), body_frame(origin)[0], r.T @ axis
        sweep = swept(points, o, a)
        real.append(sweep)
        if role == "main_rotor":
            disc = rotor_disc(points, o, a)
        else:  # the tail rotor's disc is small and beside the tail: part of the body's row
            body = np.concatenate([body, sweep])
    radius = s.collision_radius * scale
    spheres = fit_spheres(body, radius, disc)
    vertices = np.concatenate(real)
    if len(vertices):  # the same point twice (shared by parts, swept) once: within 0.1 mm
        vertices = np.unique(np.round(vertices, 4), axis=0)
    return spheres, (vertices if len(vertices) else None)


def measure_car(scene, obj, scale: float, warnings: list[str]) -> car_geometry.CarGeometry | None:
    """A car's rear axle (the body offset), wheelbase and wheel radii from its wheel objects'
    evaluated world geometry relative to its body (the rule is in core.shot.car_geometry); None for
    other vehicles. Wheels that are empties give their centres only (their radius is the typed one).

    The layout is read from the current evaluation, as the collision spheres are: the wheels sit
    rigidly on the body (they spin about their centres and steer about their knuckles), so every
    frame gives the same layout, and the scene is not moved to another frame (which would drop
    unkeyed edits)."""
    if obj.vehicle_motion.vehicle_type != "CAR":
        return None
    s = obj.vehicle_motion
    roles = [role for role in (*car_geometry.REAR, *car_geometry.FRONT) if getattr(s, role) is not None]
    frame = scene.frame_current
    depsgraph = bpy.context.evaluated_depsgraph_get()
    body = np.array(obj.evaluated_get(depsgraph).matrix_world)
    check_pose(obj, body, frame, scale)
    local = WHEEL_AXES[s.wheel_axis]
    wheels = {}
    for role in roles:
        ob = getattr(s, role)
        m = np.array(ob.evaluated_get(depsgraph).matrix_world)
        check_pose(ob, m, frame, scale)
        own = np.array(ob.scale) * np.array(ob.delta_scale)
        vertices = world_vertices(ob, depsgraph) if ob.type in MESH_TYPES else None
        wheels[role] = car_geometry.WheelInput(ob.name, m[:3, 3].copy(),
                                               car_geometry.spin_axis(m[:3, :3], own, local), vertices)
    try:
        geometry = car_geometry.measure(obj.name, body, wheels, scale=scale,
                                        typed_radius=float(s.wheel_radius), typed_wheelbase=float(s.wheelbase),
                                        use_typed=s.car_geometry == "TYPED")
    except car_geometry.CarGeometryError as exc:
        raise SceneError(str(exc)) from None
    warnings.extend(geometry.warnings)
    return geometry


def boat_hull(scene, obj, scale: float, warnings: list[str]) -> tuple[dict, np.ndarray] | None:
    """A boat's hull from its own evaluated mesh: ([vehicle] hull keys, body offset), or None (the default
    hull, with a warning naming the object) for other vehicles, a proxy (no mesh) or a mesh that is not
    closed. The rule:

    * the body object's evaluated mesh at the current evaluation (modifiers, scale and a negative scale
      applied; its children — a rudder, an outboard — are not part of the hull), triangulated
      (``loop_triangles``: quads and n-gons split), in the body frame (the object's origin and rotation),
      metres; coincident vertices welded and each closed piece oriented outward (core.vehicles.hull.
      repair_mesh);
    * closed — every edge shared by exactly two faces — or the default hull: "'Boat' mesh is not closed
      (12 open edges): it floats on a default 5 × 2 × 0.8 m hull";
    * the centre of mass is its volume centroid (a uniform solid), so the origin may be anywhere: the hull
      goes to core relative to it, and the centroid from the origin (body frame, scene units) is the
      **body offset** the solve plans and the bake puts back (as a car's rear axle: keys moved by
      rotation × offset, the object baked at trajectory pose × offset⁻¹);
    * more than ``BOAT_HULL_FACES`` triangles (every solve step clips every one): its convex hull of at
      most that many, with a warning giving the volume kept;
    * a mesh that displaces less water than the Mass is refused: the boat would sink.
    """
    if obj.vehicle_motion.vehicle_type != "BOAT":
        return None
    from ..core.vehicles import hull as hulls
    from ..core.vehicles.boat_spec import DEFAULT_BEAM, DEFAULT_HEIGHT, DEFAULT_LENGTH
    from ..core.vehicles.water import RHO_WATER
    default = f"it floats on a default {DEFAULT_LENGTH:g} × {DEFAULT_BEAM:g} × {DEFAULT_HEIGHT:g} m hull"
    if obj.type not in MESH_TYPES:
        warnings.append(f"'{obj.name}' has no mesh ({a_or_an(type_label(obj))}, a proxy): {default}")
        return None
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob = obj.evaluated_get(depsgraph)
    m = np.array(ob.matrix_world)
    check_pose(obj, m, scene.frame_current, scale)
    co, tris = mesh_triangles(ob)
    if not len(tris):
        warnings.append(f"'{obj.name}' mesh has no faces: {default}")
        return None
    if not np.all(np.isfinite(co)):
        raise SceneError(f"'{obj.name}' mesh has vertices that are not finite numbers: fix its scale")
    r = polar(m[:3, :3])
    body = (co @ m[:3, :3].T) @ r * scale          # the origin's body frame, metres
    fixed = hulls.repair_mesh(body, tris)
    if not fixed.closed:
        why = []
        if fixed.open_edges:
            why.append(f"{fixed.open_edges} open edge{'s' if fixed.open_edges != 1 else ''}")
        if fixed.nonmanifold_edges:
            why.append(f"{fixed.nonmanifold_edges} edge{'s' if fixed.nonmanifold_edges != 1 else ''} shared by "
                       "more than two faces or wound inconsistently")
        if not why:
            why.append("it encloses no volume")
        warnings.append(f"'{obj.name}' mesh is not closed ({', '.join(why)}): {default}")
        return None
    v, f = fixed.vertices, fixed.faces
    if len(f) > BOAT_HULL_FACES:
        v, f = hulls.convex_hull_mesh(v, BOAT_HULL_FACES)
        kept = hulls.mesh_volume(v, f)[0]
        warnings.append(f"'{obj.name}' mesh has {len(fixed.faces)} triangles: it floats on its convex hull "
                             f"of {len(f)} (at most {BOAT_HULL_FACES}, for the solver's speed; "
                             f"{kept:.3g} m³ against the mesh's {fixed.volume:.3g} m³)")
    volume, centroid = hulls.mesh_volume(v, f)
    mass = float(obj.vehicle_motion.mass)
    if RHO_WATER * volume <= mass:
        raise SceneError(f"'{obj.name}' sinks: its mesh displaces at most {RHO_WATER * volume:.4g} kg of "
                         f"water ({volume:.4g} m³) and its Mass is {mass:g} kg: lower the Mass or scale the "
                         "mesh up")
    keys = {"hull_vertices": [floats(row) for row in v - centroid],
            "hull_faces": [[int(i) for i in row] for row in f]}
    return keys, centroid / scale


def measure_rotors(scene, obj, scale: float, warnings: list[str]) -> tuple[dict, np.ndarray] | None:
    """A helicopter's rotor hubs from its Main Rotor / Tail Rotor objects (Rotor Hubs: From the Parts):
    ({main_rotor_offset, tail_rotor_offset} of the rotors present, body offset of the centre of mass),
    or None — other vehicles, Rotor Hubs: Typed Values, no rotor objects — when the typed values hold
    and the origin is the centre of mass. The rule:

    * the centre of mass is the volume centroid of the body object's closed evaluated mesh (a uniform
      solid; core.vehicles.hull.repair_mesh), or its origin for a proxy (an empty) or an open mesh; its
      position from the origin (body frame, scene units) is the body offset the solve plans and the
      bake puts back (as a boat's, a car's rear axle);
    * a hub is its rotor object's evaluated origin, in the body frame (the body's origin and rotation),
      metres, from the centre of mass: main_rotor_offset is its height (body Z) — a hub off that
      vertical by more than a tenth of its height is warned about (the model puts it straight above) —
      and tail_rotor_offset the tail hub's distance behind (body −X); a main rotor not above, or a tail
      rotor not behind, the centre of mass (a placeholder, an origin off the hub) keeps its typed value,
      with a warning, and without any measured hub the origin stays the centre of mass;
    * read at the current evaluation, as the collision spheres are: the rotors sit rigidly on the body
      (they spin and tilt about their hubs), so every frame gives the same layout.
    """
    if obj.vehicle_motion.vehicle_type != "HELICOPTER":
        return None
    s = obj.vehicle_motion
    rotors = {role: getattr(s, role) for role in ("main_rotor", "tail_rotor") if getattr(s, role) is not None}
    if s.rotor_geometry == "TYPED" or not rotors:
        return None
    from ..core.vehicles import hull as hulls
    frame = scene.frame_current
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob = obj.evaluated_get(depsgraph)
    m = np.array(ob.matrix_world)
    check_pose(obj, m, frame, scale)
    r = polar(m[:3, :3])
    centre = np.zeros(3)
    if obj.type in MESH_TYPES:
        co, tris = mesh_triangles(ob)
        if len(tris) and np.all(np.isfinite(co)):
            fixed = hulls.repair_mesh((co @ m[:3, :3].T) @ r * scale, tris)
            if fixed.closed:
                centre = hulls.mesh_volume(fixed.vertices, fixed.faces)[1]
    out = {}
    for role, rotor in rotors.items():
        rm = np.array(rotor.evaluated_get(depsgraph).matrix_world)
        check_pose(rotor, rm, frame, scale)
        hub = (rm[:3, 3] - m[:3, 3]) @ r * scale - centre
        what = f"'{rotor.name}' ({CHILD_ROLES[role][0].lower()} of '{obj.name}')"
        if role == "main_rotor":
            height = float(hub[2])
            if height < 1e-3:  # a placeholder, or its origin is not at its hub
                warnings.append(f"{what} has its origin {_metres(abs(height))} m "
                                     f"{'below' if height < -1e-6 else 'at the height of'} the centre of mass, not "
                                     f"above it: the typed Main Rotor Height ({s.main_rotor_offset:g} m) holds "
                                     "(put the rotor's origin at its hub)")
                continue
            side = math.hypot(hub[0], hub[1])
            if side > 0.1 * height:
                warnings.append(f"{what} has its hub {side:.3g} m off the vertical through the centre of "
                                     f"mass: the model puts it straight above, at {height:.3g} m")
            out["main_rotor_offset"] = height
        else:
            arm = float(-hub[0])
            if arm < 1e-3:
                warnings.append(f"{what} has its origin {_metres(abs(arm))} m "
                                     f"{'ahead of' if arm < -1e-6 else 'level with'} the centre of mass, not "
                                     f"behind it: the typed Tail Rotor Arm ({s.tail_rotor_offset:g} m) holds (put "
                                     "the rotor's origin at its hub)")
                continue
            out["tail_rotor_offset"] = arm
    if not out:
        return None
    return out, centre / scale

# -- keys --------------------------------------------------------------------------------
