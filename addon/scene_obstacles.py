"""Obstacles and constraint empties: what the vehicle must keep out of, and where and when it must be.

* Obstacles: the objects of a collection named ``Obstacles`` and objects flagged as obstacles, each a
  sphere, oriented box or capsule fitted to its evaluated geometry in world space (modifiers, scale,
  rotation, parents and off-centre origins included) — the rule is in :func:`obstacles`.
* Constraint empties (``vehicle_motion.constraint_kind``): Pass Through (radius = display size × world
  scale), Stop Here (at the empty, zero velocity), Land / Dock Here (at the empty, heading along its X
  axis and, for a helicopter or boat, level as the empty: its pose; at rest), Keep Out (a sphere of the
  display size) and Speed Limit, at the frames the empty is keyed at, at a given frame, or over the shot
  (:func:`constraint_empties`).
"""
from __future__ import annotations

import re

import bpy
import numpy as np

from ..core.shot.frames import FrameMap, fmt_frame
from ..core.shot.geometry import MIN_SIZE, ObstacleShape, fit_shape, polar, quaternion_of, yaw
from ..core.shot.plan import KIND_LABELS, TIMED_KINDS, Constraint
from .scene_keys import (MAX_DISTANCE, FrameGuard, Pose, SceneError, check_keys, check_pose, descendants,
                         frames_keyed, is_animated, out_of_range, range_text, source_fcurves)

OBSTACLE_COLLECTION = "Obstacles"
OBSTACLE_COLLECTION_NAME = re.compile(r"^Obstacles(\.\d+)?$")
# The object types whose evaluated geometry Object.to_mesh() converts (bpy 4.5 and 5.0; every
# other type raises "Object does not have geometry data").
MESH_TYPES = frozenset({"MESH", "CURVE", "SURFACE", "FONT", "META"})
# Types with no geometry at all (the rest — hair curves, point clouds, volumes, grease pencil —
# have geometry that to_mesh cannot read: they convert to a mesh with Object › Convert).
NO_GEOMETRY_TYPES = frozenset({"EMPTY", "LIGHT", "CAMERA", "ARMATURE", "LATTICE", "SPEAKER", "LIGHT_PROBE"})
TYPE_LABELS = {"FONT": "text", "META": "metaball", "CURVES": "hair curves object", "POINTCLOUD": "point cloud",
               "GREASEPENCIL": "grease pencil object", "GPENCIL": "grease pencil object",
               "LIGHT_PROBE": "light probe"}


def a_or_an(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def type_label(ob) -> str:
    return TYPE_LABELS.get(ob.type, ob.type.lower().replace("_", " "))


def _vector_text(v) -> str:
    return "(" + ", ".join(f"{float(x):g}" for x in v) + ")"


def world_vertices(obj, depsgraph) -> np.ndarray:
    """Vertices of obj's evaluated geometry in world space (N, 3)."""
    ob = obj.evaluated_get(depsgraph)
    mesh = ob.to_mesh()
    try:
        if mesh is None or len(mesh.vertices) == 0:
            return np.zeros((0, 3))
        co = np.empty(3 * len(mesh.vertices))
        mesh.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
    finally:
        ob.to_mesh_clear()
    m = np.array(ob.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def _applies_to(ob, vehicle) -> bool:
    """ob is a constraint on ``vehicle``: it names it, or no vehicle (every vehicle)."""
    s = ob.vehicle_motion
    if s.constraint_kind == "NONE" or ob is vehicle:
        return False
    return s.constraint_vehicle is None or s.constraint_vehicle == vehicle


# ----------------------------------------------------------------------------- constraint empties

def constraint_empties(scene, vehicle, fm: FrameMap, guard: FrameGuard, scale: float,
                       warnings: list[str]) -> list[Constraint]:
    """The constraints on ``vehicle`` at their frames inside the range (the rest are warned about)."""
    out: list[Constraint] = []
    fs, fe = fm.frame_start, fm.frame_end
    for ob in sorted(scene.objects, key=lambda o: o.name):
        if not _applies_to(ob, vehicle):
            continue
        s = ob.vehicle_motion
        kind = s.constraint_kind
        if ob.type != "EMPTY":
            warnings.append(f"'{ob.name}' is a {ob.type.lower()}, not an empty: its "
                            f"{KIND_LABELS[kind]} constraint is ignored")
            continue
        label = KIND_LABELS[kind]
        own = sorted(frames_keyed([fc for fc in source_fcurves(ob) if not fc.mute]))
        if s.constraint_timing == "FRAME":
            frames: list[float | None] = [float(s.constraint_frame)]
        elif s.constraint_timing == "SHOT":
            frames = [None]
        else:
            frames = list(own) if own else [None]
        if kind in TIMED_KINDS and None in frames:
            why = "has no keyframe" if s.constraint_timing == "AUTO" else "is set to the whole shot"
            raise SceneError(f"{label} '{ob.name}' {why}: key it at the frame the vehicle must be there, "
                             "or set its When to a frame")
        if kind in ("KEEP_OUT", "SPEED_LIMIT") and frames != [None]:
            warnings.append(f"{label} '{ob.name}' holds over the whole shot (the solver has no "
                            f"time windows); its frame is not used")
            frames = [frames[0]]
        check_keys(ob, [fc for fc in source_fcurves(ob) if not fc.mute], scale)
        if kind == "SPEED_LIMIT" and out_of_range(float(s.speed_limit), "m/s", scale):
            raise SceneError(f"speed limit '{ob.name}' is {float(s.speed_limit) * scale:.3g} m/s, out of "
                             f"range ({range_text('m/s')}): lower it (Constraint / Obstacle panel)")
        pose = Pose(ob, guard)
        for frame in frames:
            if frame is not None and (frame < fs - 1e-6 or frame > fe + 1e-6):
                warnings.append(f"{label} '{ob.name}' at frame {fmt_frame(frame)} is outside frames "
                                f"{fmt_frame(fs)}–{fmt_frame(fe)} and ignored")
                continue
            m = pose.world(fs if frame is None else frame)
            check_pose(ob, m, frame, scale)
            out.append(_constraint(ob, kind, frame, m, scale))
    return out


def _constraint(ob, kind: str, frame: float | None, m: np.ndarray, scale: float) -> Constraint:
    """The constraint of empty ob at world matrix m; its radius is the display size × world scale."""
    label = KIND_LABELS[kind]
    size = ob.empty_display_size * float(np.max(np.linalg.norm(m[:3, :3], axis=0)))
    if size * scale > MAX_DISTANCE:
        raise SceneError(f"{label} '{ob.name}' has a radius of {size * scale:.3g} m, out of range "
                         f"({range_text('m')}): lower its display size or scale")
    if kind == "KEEP_OUT" and size * scale < MIN_SIZE:
        raise SceneError(f"{label} '{ob.name}' has no size (radius {size * scale:.3g} m; its "
                         f"display size is {ob.empty_display_size:g}, its world scale "
                         f"{_vector_text(np.linalg.norm(m[:3, :3], axis=0))}): give it a size")
    c = Constraint(ob.name, kind, None if kind in ("KEEP_OUT", "SPEED_LIMIT") else frame,
                   position=m[:3, 3].copy(), radius=size)
    c.forward = polar(m[:3, :3])[:, 0]
    if kind == "LAND":  # the vehicle's pose on landing: heading along X, level as the empty
        c.heading = yaw(polar(m[:3, :3]))
        c.orientation = tuple(quaternion_of(polar(m[:3, :3])))
        c.speed = 0.0
    elif kind == "STOP":
        c.speed = 0.0
    elif kind == "SPEED_LIMIT":
        c.speed_limit = float(ob.vehicle_motion.speed_limit)
    return c


# ----------------------------------------------------------------------------- obstacles

def obstacle_objects(scene, vehicle, warnings: list[str]) -> list:
    """The objects that are obstacles to ``vehicle``, by name (its own parts and other vehicles are not)."""
    family = {vehicle, *descendants(vehicle)}
    found = {}
    for coll in [scene.collection, *scene.collection.children_recursive]:
        if OBSTACLE_COLLECTION_NAME.match(coll.name):
            for ob in coll.all_objects:
                found[ob.name] = ob
    for ob in scene.objects:
        if ob.vehicle_motion.is_obstacle:
            found[ob.name] = ob
    out = []
    for name in sorted(found):
        ob = found[name]
        if ob in family:
            warnings.append(f"'{ob.name}' is part of '{vehicle.name}' and not an obstacle to it")
            continue
        if ob.vehicle_motion.constraint_kind != "NONE":
            continue  # a constraint empty inside the collection: read as a constraint
        if ob.vehicle_motion.vehicle_type != "NONE":
            warnings.append(f"vehicle '{ob.name}' is not an obstacle (vehicles move); ignored")
            continue
        out.append(ob)
    return out


def obstacles(scene, vehicle, fm: FrameMap, guard: FrameGuard, scale: float,
              warnings: list[str]) -> list[ObstacleShape]:
    """One shape per obstacle object. The rule: an obstacle is its evaluated geometry in world
    space — the vertices ``evaluated_get(depsgraph).to_mesh()`` gives (modifiers, parents and
    the object's scale applied; a negative scale mirrors and is fine) — and the fitted sphere,
    box or capsule holds every one of them.

    * Objects with geometry are obstacles: meshes, text, curves (a curve without bevel or
      extrude is its wire: a line or flat obstacle along it), surfaces and metaballs (a
      metaball whose surface melts into its family's base, e.g. 'Blob.001' into 'Blob', is
      covered by the base's shape). Objects without geometry (camera, light, empty, armature,
      lattice, speaker, light probe) or with geometry to_mesh cannot read (hair curves, point
      clouds, volumes, grease pencil) are refused, naming the object and its type.
    * Flat geometry — a plane, a scale of 0 on one or two axes: a wall, a sheet, a pole —
      is an obstacle of zero thickness along those axes; its box or capsule is given a half
      thickness of ``MIN_SIZE`` = 1e-6 m (1 µm) there, so distances stay finite.
    * Geometry spanning less than ``MIN_SIZE`` in every direction (the diagonal of its
      bounding box: a point, a scale of 0 or 1e-30 on every axis) has no size and is refused,
      as is geometry with vertices that are not finite numbers or beyond ``MAX_DISTANCE``
      (1000 km) from the world origin, and a margin beyond ``MAX_DISTANCE``.
    """
    objects = obstacle_objects(scene, vehicle, warnings)
    if any(is_animated(ob) for ob in objects):
        guard.set(fm.frame_start)
        for ob in objects:
            if is_animated(ob):
                warnings.append(f"obstacle '{ob.name}' is animated: its pose at frame "
                                f"{fmt_frame(fm.frame_start)} is used for the whole shot")
    depsgraph = bpy.context.evaluated_depsgraph_get()
    shapes = []
    for ob in objects:
        check_obstacle_type(ob)
    for ob in objects:
        v = world_vertices(ob, depsgraph)
        if len(v) == 0:
            if ob.type == "META" and melts_into_obstacle(scene, ob, objects):
                continue
            raise SceneError(f"obstacle '{ob.name}' ({a_or_an(type_label(ob))}) has no geometry (no vertices "
                             "after modifiers): give it some, or remove it from the "
                             f"{OBSTACLE_COLLECTION} collection")
        m = np.array(ob.evaluated_get(depsgraph).matrix_world)
        check_obstacle_size(ob, v, m, scale)
        s = ob.vehicle_motion
        margin = float(s.obstacle_margin)
        if not margin * scale <= MAX_DISTANCE:
            raise SceneError(f"obstacle '{ob.name}' has a margin of {margin * scale:.3g} m, out of range "
                             f"({range_text('m')}): lower its Margin (Constraint / Obstacle panel)")
        shapes.append(fit_shape(ob.name, v, s.obstacle_shape, polar(m[:3, :3]), margin,
                                min_half=MIN_SIZE / scale))
    return shapes


def check_obstacle_type(ob) -> None:
    """Refuse an obstacle without geometry to_mesh can read, saying how to fix it."""
    if ob.type in MESH_TYPES:
        return
    what = f"obstacle '{ob.name}' is {a_or_an(type_label(ob))}"
    remove = f"remove it from the {OBSTACLE_COLLECTION} collection"
    if not any(OBSTACLE_COLLECTION_NAME.match(c.name) for c in ob.users_collection):
        remove = "untick its Obstacle setting (Constraint / Obstacle panel)"  # flagged, not in the collection
    if ob.type == "EMPTY":
        if remove.startswith("untick"):  # the panel shows an empty's Constraint, not its Obstacle flag
            remove = "clear its Obstacle flag (vehicle_motion.is_obstacle)"
        raise SceneError(f"{what}, which has no geometry: set its Constraint to Keep Out to keep the vehicle "
                         f"out of a sphere (Constraint / Obstacle panel), or {remove}")
    if ob.type in NO_GEOMETRY_TYPES:
        raise SceneError(f"{what}, which has no geometry: {remove}")
    raise SceneError(f"{what}, whose geometry Vehicle Motion cannot read: convert it to a mesh "
                     f"(Object › Convert › Mesh), or {remove}")


def melts_into_obstacle(scene, ob, objects) -> bool:
    """Whether metaball ob (no vertices of its own) melts into the base of its family (the
    metaball of the same name without, or with the lowest, number) and that base is an
    obstacle too: its shape covers ob's surface. Refused when the base is not an obstacle."""
    def family(o):
        stem, dot, number = o.name.rpartition(".")
        return (stem, int(number)) if dot and number.isdigit() else (o.name, 0)
    stem = family(ob)[0]
    members = [o for o in scene.objects if o.type == "META" and family(o)[0] == stem]
    base = min(members, key=lambda o: family(o)[1])
    if base is ob:
        return False
    if base in objects:
        return True
    raise SceneError(f"obstacle '{ob.name}' is a metaball that melts into '{base.name}', which holds the "
                     f"surface: put '{base.name}' in the {OBSTACLE_COLLECTION} collection too")


def check_obstacle_size(ob, v: np.ndarray, m: np.ndarray, scene_scale: float) -> None:
    """Refuse vertices that are not finite, reach beyond ``MAX_DISTANCE``, or span less than
    ``MIN_SIZE`` (no size); the message shows the scale behind it."""
    local = ob.parent is None and tuple(ob.delta_scale) == (1.0, 1.0, 1.0)
    scale = _vector_text(ob.scale if local else np.linalg.norm(m[:3, :3], axis=0))
    scale = f"its {'' if local else 'world '}scale is {scale}"
    if not np.all(np.isfinite(v)):
        raise SceneError(f"obstacle '{ob.name}' has vertices that are not finite numbers ({scale}): fix its "
                         f"scale and location{' or its parent' if ob.parent is not None else ''}")
    far = float(np.max(np.linalg.norm(v, axis=1))) * scene_scale
    if far > MAX_DISTANCE:
        raise SceneError(f"obstacle '{ob.name}' reaches {far:.3g} m from the world origin, out of range "
                         f"({range_text('m')}; {scale}): fix its scale or location")
    span = float(np.linalg.norm(v.max(axis=0) - v.min(axis=0))) * scene_scale
    if span < MIN_SIZE:
        raise SceneError(f"obstacle '{ob.name}' has no size (it spans {span:.3g} m; {scale}): give it a size "
                         f"along at least one axis, or remove it from the {OBSTACLE_COLLECTION} collection")


# ----------------------------------------------------------------------------- the panel's list

def scene_constraints(scene, vehicle) -> list[tuple[str, str, str]]:
    """(object, kind, when) of every constraint on ``vehicle``, without evaluating anything
    (for the panel: cheap, never raises)."""
    out: list[tuple[str, str, str]] = []
    try:
        frames = sorted(frames_keyed([fc for fc in source_fcurves(vehicle) if not fc.mute]))
    except Exception:
        frames = []
    if frames:
        out.append((vehicle.name, "keys", ", ".join(fmt_frame(f) for f in frames[:8])
                    + (" …" if len(frames) > 8 else "")))
    for ob in sorted(scene.objects, key=lambda o: o.name):
        if not _applies_to(ob, vehicle):
            continue
        s = ob.vehicle_motion
        if s.constraint_timing == "FRAME":
            when = f"frame {s.constraint_frame}"
        elif s.constraint_timing == "SHOT" or s.constraint_kind in ("KEEP_OUT", "SPEED_LIMIT"):
            when = "whole shot"
        else:
            own = sorted(frames_keyed(source_fcurves(ob)))
            when = ("frame " + ", ".join(fmt_frame(f) for f in own)) if own else "no keyframe"
        out.append((ob.name, KIND_LABELS[s.constraint_kind], when))
    count = 0
    for coll in [scene.collection, *scene.collection.children_recursive]:
        if OBSTACLE_COLLECTION_NAME.match(coll.name):
            count += sum(1 for ob in coll.all_objects if ob.vehicle_motion.constraint_kind == "NONE")
    count += sum(1 for ob in scene.objects if ob.vehicle_motion.is_obstacle
                 and not any(OBSTACLE_COLLECTION_NAME.match(c.name) for c in ob.users_collection))
    if count:
        out.append((f"{count} object{'s' if count != 1 else ''}", "obstacles", "whole shot"))
    return out
