"""``[vehicle.terrain]``: the ground a car drives on (:mod:`core.terrain`), read from a scenario.

    [vehicle.terrain]             # a plane h = level + slope_x x + slope_y y ...
    level = 0.0                   # m
    slope = [0.0, 0.0]            # dh/dx, dh/dy (0.08 = an 8 % grade)

    [vehicle.terrain]             # ... or a triangle mesh (the add-on's Ground collection)
    vertices = [[x, y, z], ...]   # m, world frame
    triangles = [[i, j, k], ...]  # 0-based vertex indices
    smoothing = 0.5               # m: the drive feels the bicubic spline through the mesh's heights
                                  # sampled this far apart (core.terrain.smooth), not its facets

A plane or a mesh, not both. Without ``[vehicle.terrain]`` the ground is flat and the car's
figures are those of the plane model.
"""
from __future__ import annotations

import numpy as np

from ..terrain.surface import SMOOTHING, PlaneTerrain, Terrain
from . import Table


def read_terrain(vehicle: Table) -> Terrain | None:
    """The ground of ``[vehicle.terrain]`` (None: flat)."""
    if not vehicle.has("terrain"):
        return None
    t = vehicle.table("terrain")
    plane = t.has("level") or t.has("slope")
    mesh = t.has("vertices") or t.has("triangles")
    if plane and mesh:
        raise t.error("vertices", "give a plane (level, slope) or a mesh (vertices, triangles), not both")
    if t.has("smoothing") and not mesh:
        raise t.error("smoothing", "smooths a mesh (vertices, triangles); a plane is smooth already")
    if mesh:
        vertices, triangles = _rows(t, "vertices"), _rows(t, "triangles")
        spacing = t.number("smoothing", SMOOTHING, positive=True)
        if not np.all(triangles == np.round(triangles)):
            raise t.error("triangles", "must be whole vertex indices")
        t.finish()
        from ..terrain.mesh import MeshTerrain   # scipy: only for a mesh
        from ..terrain.smooth import SplineTerrain
        mesh = MeshTerrain.from_arrays(vertices, triangles.astype(np.int64), name=t.where())
        return SplineTerrain.of(mesh, *mesh.bounds, spacing=spacing)
    level = t.number("level", 0.0)
    slope = t.vector("slope", 2, [0.0, 0.0])
    t.finish()
    return PlaneTerrain(level, (float(slope[0]), float(slope[1])))


def _rows(t: Table, key: str) -> np.ndarray:
    """(n, 3) rows: lists from a scenario file, or the arrays the add-on hands over as they are."""
    value = t.data.get(key)
    if isinstance(value, np.ndarray) and value.ndim == 2 and value.shape[1] == 3 and len(value):
        t._get(key, None)
        if not np.all(np.isfinite(value)):
            raise t.error(key, "must be finite numbers")
        return value.astype(float)
    return t.rows(key, 3)


__all__ = ["read_terrain"]
