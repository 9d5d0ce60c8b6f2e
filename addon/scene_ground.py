"""The ground of a scene: the terrain ground vehicles drive on, read from the scene's meshes.

Which objects: those of the collection set as the scene's Ground (``Scene.vehicle_motion.ground``,
Solve Settings) or, when none is set, of every collection named ``Ground`` (``Ground.001``, …) —
their child collections included. Each is read as an obstacle is (:mod:`.scene_obstacles`): its
evaluated geometry, modifiers, parents, rotation and scale applied (a negative scale too), split
into triangles (``loop_triangles``), in world space times the Unit Scale (metres). Together they are
one ``core.terrain.mesh.MeshTerrain``: the highest face under a point is the ground there.

* Meshes, and curves, surfaces, text and metaballs with faces, are ground. Objects hidden with the eye
  are ground too (a hidden proxy mesh is a common ground); objects disabled in viewports, or in a
  collection disabled or excluded from the view layer, are not evaluated by Blender and are left out
  with a warning.
* Empties are left out quietly (they often parent the ground's pieces). Lights, cameras and other
  objects without a surface, vehicles and their parts (they move) and objects with no faces after
  their modifiers (a curve without bevel, loose edges) are left out with a warning.
* An animated ground object is read at the current frame, for the whole shot (a warning says so).
* No faces at all: no terrain (the vehicles move on flat ground), with a warning when a ground
  collection was set or found.

Vertices that are not finite or reach beyond ``MAX_DISTANCE`` from the world origin, and a ground whose
every face is vertical, are a SceneError naming the object or the ground. Off the ground's footprint the
terrain continues at its nearest edge's height; :func:`off_ground` words the warning for a path that
goes there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import bpy
import numpy as np

from ..core.errors import VehicleMotionError
from ..core.shot.frames import fmt_frame
from .scene_geometry import mesh_triangles
from .scene_keys import MAX_DISTANCE, SceneError, descendants, is_animated, range_text
from .scene_obstacles import MESH_TYPES, NO_GEOMETRY_TYPES, a_or_an, type_label

if TYPE_CHECKING:
    from ..core.terrain.mesh import MeshTerrain

GROUND_COLLECTION = "Ground"
GROUND_COLLECTION_NAME = re.compile(r"^Ground(\.\d+)?$")


@dataclass(frozen=True)
class SceneGround:
    """The terrain (world metres), the collections it came from as a message shows them ("'Ground'"),
    and the objects whose faces it holds."""

    terrain: "MeshTerrain"
    label: str
    objects: tuple[str, ...]
    vertices: np.ndarray      # (V, 3) world metres: what a scenario's [vehicle.terrain] takes
    triangles: np.ndarray     # (T, 3) vertex indices


def ground_collections(scene) -> list:
    """The scene's Ground setting, or every collection in the scene named Ground (Ground.001, …)."""
    chosen = scene.vehicle_motion.ground
    if chosen is not None:
        return [chosen]
    return [c for c in scene.collection.children_recursive if GROUND_COLLECTION_NAME.match(c.name)]


def ground_objects(scene, collections, warnings: list[str]) -> list:
    """The objects of ``collections`` that can be ground, by name; the rest warned about (module docstring)."""
    found = {ob.name: ob for coll in collections for ob in coll.all_objects}
    vehicles = [ob for ob in scene.objects if ob.vehicle_motion.vehicle_type != "NONE"]
    moving = {part for vehicle in vehicles for part in (vehicle, *descendants(vehicle))}
    out = []
    for name in sorted(found):
        ob = found[name]
        if ob in moving:
            what = "a vehicle" if ob.vehicle_motion.vehicle_type != "NONE" else "part of a vehicle"
            warnings.append(f"'{ob.name}' is {what} and moves: it is not part of the ground")
        elif ob.type == "EMPTY":
            continue
        elif ob.type in NO_GEOMETRY_TYPES:
            warnings.append(f"'{ob.name}' is {a_or_an(type_label(ob))}, which has no surface: it is not part "
                            "of the ground")
        elif ob.type not in MESH_TYPES:
            warnings.append(f"'{ob.name}' is {a_or_an(type_label(ob))}, whose geometry Vehicle Motion cannot "
                            "read: convert it to a mesh (Object › Convert › Mesh) to make it ground")
        else:
            out.append(ob)
    return out


def world_triangles(ob, depsgraph, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (N, 3) in world metres and triangles (M, 3) of ob's evaluated geometry; SceneError for
    vertices that are not finite or beyond ``MAX_DISTANCE``."""
    evaluated = ob.evaluated_get(depsgraph)
    local, triangles = mesh_triangles(evaluated)
    m = np.array(evaluated.matrix_world)
    v = (local @ m[:3, :3].T + m[:3, 3]) * scale
    if not np.all(np.isfinite(v)):
        raise SceneError(f"ground object '{ob.name}' has vertices that are not finite numbers: fix its scale "
                         "and location")
    if len(v) and float(np.max(np.linalg.norm(v, axis=1))) > MAX_DISTANCE:
        far = float(np.max(np.linalg.norm(v, axis=1)))
        raise SceneError(f"ground object '{ob.name}' reaches {far:.3g} m from the world origin, out of range "
                         f"({range_text('m')}): fix its scale or location")
    return v, triangles


def scene_ground(scene, warnings: list[str]) -> SceneGround | None:
    """The scene's ground at the current evaluation (module docstring); None without ground faces."""
    collections = ground_collections(scene)
    if not collections:
        return None
    label = ", ".join(f"'{c.name}'" for c in collections)
    objects = ground_objects(scene, collections, warnings)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    scale = float(scene.unit_settings.scale_length) or 1.0
    vertices, triangles, names, count = [], [], [], 0
    for ob in objects:
        if not ob.evaluated_get(depsgraph).is_evaluated:
            warnings.append(f"'{ob.name}' is disabled in viewports (or its collection is disabled or excluded "
                            "from the view layer): Blender does not evaluate it, so it is not part of the ground")
            continue
        v, t = world_triangles(ob, depsgraph, scale)
        if not len(t):
            warnings.append(f"'{ob.name}' ({a_or_an(type_label(ob))}) has no faces after its modifiers: it is "
                            "not part of the ground")
            continue
        if is_animated(ob):
            warnings.append(f"ground object '{ob.name}' is animated: its shape at frame "
                            f"{fmt_frame(scene.frame_current)} is used for the whole shot")
        vertices.append(v)
        triangles.append(t + count)
        names.append(ob.name)
        count += len(v)
    if not triangles:
        warnings.append(f"the ground {label} has no faces: the vehicles move on flat ground")
        return None
    from ..core.terrain.mesh import MeshTerrain   # imports scipy: only once there is a ground to read
    vertices, triangles = np.concatenate(vertices), np.concatenate(triangles)
    try:
        terrain = MeshTerrain.from_arrays(vertices, triangles, name=f"the ground {label}")
    except VehicleMotionError as exc:
        raise SceneError(str(exc)) from None
    return SceneGround(terrain=terrain, label=label, objects=tuple(names), vertices=vertices, triangles=triangles)


def off_ground(ground: SceneGround, points: np.ndarray, frames: Sequence[float]) -> str | None:
    """The warning for a path whose ``points`` (F, …, 2: world metres, one row a frame, e.g. its wheels)
    leave the ground's footprint at some of ``frames``; None when every point is on it."""
    p = np.asarray(points, dtype=float).reshape(len(frames), -1, 2)
    on = np.all(ground.terrain.covered(p[..., 0], p[..., 1]), axis=1)
    if np.all(on):
        return None
    off = np.flatnonzero(~on)
    return (f"the path leaves the ground {ground.label} at frame {fmt_frame(frames[off[0]])} ({len(off)} of "
            f"{len(frames)} frames off it): there the ground continues at the height of its nearest edge")


__all__ = ["SceneGround", "GROUND_COLLECTION", "ground_collections", "ground_objects", "world_triangles",
           "scene_ground", "off_ground"]
