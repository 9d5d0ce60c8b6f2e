"""The water a boat floats on, read from the scene: its evaluated heights over the frames of the shot, sampled on a
regular x-y grid — the ``[vehicle.water] grid`` table core reads into a
:class:`core.vehicles.water.SampledSurface` (bilinear in x-y, linear in time, held at the grid's edges).

* Which water: Solve Settings › Water, else the meshes of the collection named ``Water`` (its child collections'
  too), else every object with an Ocean modifier; none: calm water, the plane z = 0 (no table).
* At every frame of the shot from its start (whole frames after it, a sub-frame start included, through the
  first frame at or after its end: equal intervals of 1/fps) the scene is evaluated (modifiers and animation
  applied: an Ocean modifier at its keyed Time, shape keys, a displaced grid), and each water object's evaluated
  mesh in world space gives the height at every grid point: that of its highest triangle over the point, what a
  ray cast straight down meets first (:func:`core.vehicles.water_mesh.mesh_heights`).
* Where: over the region the boat can reach — for Solve the bounding box of its keys and constraint empties
  widened by two boat lengths and a quarter of its size, for Simulate the whole water — within the water's own
  extent. Spacing: the water mesh's own (its median edge), coarsened to at most ``MAX_SIDE`` points a side and
  ``MAX_VALUES`` heights in all. A grid point with no water over it at some frame takes that frame's mean level,
  reported; so is a boat region reaching beyond the water (heights there are held at the edge).
* Units: metres (× Unit Scale, from the solve origin); time from the shot's start frame (``core.shot`` gives each
  later segment its time origin). Water that does not move over the shot is sent as a single frame (frozen).
"""
from __future__ import annotations

import math

import bpy
import numpy as np

from ..core.shot.frames import FrameMap
from ..core.vehicles.water_mesh import mesh_heights
from .scene_geometry import mesh_triangles
from .scene_keys import FrameGuard, SceneError
from .scene_obstacles import MESH_TYPES

WATER_COLLECTION = "Water"
MAX_SIDE = 128              # grid points along x or y
MAX_VALUES = 8_000_000      # heights over all frames (64 MB)


def water_objects(scene, vehicle) -> list:
    """The objects whose surface is the water (module docstring), never the vehicle or its family."""
    setting = scene.vehicle_motion.water
    if setting is not None:
        found = [setting]
    else:
        found = [ob for coll in scene.collection.children_recursive if coll.name == WATER_COLLECTION
                 for ob in coll.all_objects if ob.type in MESH_TYPES]
        if not found:
            found = [ob for ob in scene.objects if any(m.type == "OCEAN" for m in ob.modifiers)]
    out = {}
    for ob in found:
        if ob is vehicle or ob.vehicle_motion.vehicle_type != "NONE" or ob in vehicle.children_recursive:
            raise SceneError(f"'{ob.name}' is a vehicle or part of one: it cannot be the water")
        if ob.type not in MESH_TYPES:
            raise SceneError(f"'{ob.name}' is the water but has no surface (a {ob.type.lower()}): use a mesh")
        out[ob.name] = ob
    return [out[name] for name in sorted(out)]


def _frame_mesh(objects, fm: FrameMap) -> tuple[np.ndarray, np.ndarray]:
    """The water's evaluated triangles at the current evaluation: world vertices in metres from the solve
    origin (n, 3), triangles (m, 3)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    verts, tris, base = [], [], 0
    for obj in objects:
        ob = obj.evaluated_get(depsgraph)
        co, t = mesh_triangles(ob)
        m = np.array(ob.matrix_world)
        verts.append(fm.to_solve(co @ m[:3, :3].T + m[:3, 3]))
        tris.append(t + base)
        base += len(co)
    v, t = np.concatenate(verts), np.concatenate(tris)
    if not np.all(np.isfinite(v)):
        raise SceneError(f"the water '{objects[0].name}' has vertices that are not finite numbers")
    return v, t


def _grid(v: np.ndarray, t: np.ndarray, region, frames: int) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """(origin, spacing, (ny, nx)) over ``region`` (x0, x1, y0, y1) ∩ the water's extent, at the mesh's spacing."""
    lo, hi = v[:, :2].min(axis=0), v[:, :2].max(axis=0)
    if region is not None:
        lo, hi = np.maximum(lo, region[[0, 2]]), np.minimum(hi, region[[1, 3]])
    edges = v[t][:, [1, 2, 0], :2] - v[t][:, :, :2]
    spacing = float(np.median(np.hypot(edges[..., 0], edges[..., 1]))) if len(t) else 1.0
    extent = np.maximum(hi - lo, 1e-6)
    side = max(2, min(MAX_SIDE, int(math.sqrt(MAX_VALUES / max(frames, 1)))))
    n = np.clip(np.ceil(extent / max(spacing, 1e-9)).astype(int) + 1, 2, side)
    return lo, extent / (n - 1), (int(n[1]), int(n[0]))


def water_table(scene, vehicle, fm: FrameMap, guard: FrameGuard, warnings: list[str],
                reach: np.ndarray | None = None) -> dict | None:
    """The ``[vehicle.water]`` table of the scene's water over the shot ``fm`` (None: no water, calm).
    ``reach``: the region the boat can reach (x0, x1, y0, y1, metres), None for all the water."""
    objects = water_objects(scene, vehicle)
    if not objects:
        return None
    names = ", ".join(f"'{ob.name}'" for ob in objects)
    count = int(math.ceil(fm.frames - 1e-6)) + 1
    guard.set(fm.frame_start)
    v, t = _frame_mesh(objects, fm)
    if not len(t):
        raise SceneError(f"the water {names} has no faces")
    origin, spacing, shape = _grid(v, t, reach, count)
    if reach is not None:
        lo, hi = v[:, :2].min(axis=0), v[:, :2].max(axis=0)
        beyond = float(max(np.max(lo - reach[[0, 2]]), np.max(reach[[1, 3]] - hi), 0.0))
        if beyond > 0:
            warnings.append(f"the boat's keys reach {beyond:.3g} m beyond the water {names}: its heights are held at "
                            "the water's edge there")
    heights = np.empty((count,) + shape)
    dry = 0
    for i in range(count):
        if i:
            guard.set(fm.frame_start + i)
            v, t = _frame_mesh(objects, fm)
        h = mesh_heights(v, t, tuple(origin), tuple(spacing), shape)
        holes = np.isnan(h)
        if holes.all():
            raise SceneError(f"the water {names} lies under none of the region the boat moves in at frame "
                             f"{fm.frame_start + i:g}")
        dry += int(holes.sum())
        heights[i] = np.where(holes, np.nanmean(h), h)
    if dry:
        warnings.append(f"the water {names} leaves {dry} of {heights.size} sampled points dry (no water over "
                        "them): they take the frame's mean level")
    if np.all(heights == heights[0]):
        heights = heights[:1]
    return {"grid": {"origin": [float(origin[0]), float(origin[1])], "spacing": [float(spacing[0]), float(spacing[1])],
                     "start": 0.0, "interval": 1.0 / fm.fps, "heights": heights}}


def reach_region(positions: list[np.ndarray], fm: FrameMap, spheres: np.ndarray) -> np.ndarray:
    """(x0, x1, y0, y1) metres: the bounding box of the boat's keyed and constrained positions (world, scene
    units), widened by two boat lengths (its collision spheres' (S, 4) extent along the body x, metres; the
    default hull's without them) and a quarter of the box's size (the path bends round obstacles)."""
    from ..core.vehicles.boat_spec import DEFAULT_LENGTH
    length = float(np.ptp(np.concatenate([spheres[:, 0] - spheres[:, 3], spheres[:, 0] + spheres[:, 3]]))) \
        if len(spheres) else DEFAULT_LENGTH
    p = np.array([fm.to_solve(q)[:2] for q in positions])
    lo, hi = p.min(axis=0), p.max(axis=0)
    pad = 2.0 * length + 0.25 * float(np.max(hi - lo))
    return np.array([lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad])


__all__ = ["WATER_COLLECTION", "water_objects", "water_table", "reach_region"]
