"""What a baked or simulated shot did, measured in world space from the evaluated scene: positions
over frames, the pose error against a trajectory, and the clearance between a vehicle's meshes and
obstacles over the solve range.
"""
from __future__ import annotations

import math

import bpy
import numpy as np
from scene_kit import world_vertices
from scipy import spatial


def solve_frames(scene) -> range:
    """The frames of the scene's solve range (Vehicle Motion's frame start to end)."""
    vm = scene.vehicle_motion
    return range(vm.frame_start, vm.frame_end + 1)


def world_positions(scene, obj, frames) -> np.ndarray:
    """obj's world translation at each of ``frames``: (len(frames), 3)."""
    out = []
    for f in frames:
        scene.frame_set(f)
        out.append(np.array(obj.matrix_world.translation))
    return np.array(out)


def pose_error(obj, position, quat) -> tuple[float, float]:
    """(translation error, rotation-matrix error) of obj.matrix_world against a pose."""
    from vehicle_motion.core.lie import quaternion
    m = np.array(obj.matrix_world)
    r = m[:3, :3] / np.linalg.norm(m[:3, :3], axis=0)
    return (float(np.max(np.abs(m[:3, 3] - position))),
            float(np.max(np.abs(r - quaternion.to_matrix(quat)))))


def separation(a: np.ndarray, b: np.ndarray, axes: np.ndarray) -> float:
    """Largest gap between the projections of point sets a and b on the unit axes: > 0 proves the
    convex hulls disjoint, and is then a lower bound of their distance (separating axis theorem)."""
    pa, pb = a @ axes.T, b @ axes.T
    return float(np.max(np.maximum(pb.min(axis=0) - pa.max(axis=0), pa.min(axis=0) - pb.max(axis=0))))


def hull_normals(points: np.ndarray) -> np.ndarray:
    """The outward face normals of the convex hull of ``points``."""
    return spatial.ConvexHull(points).equations[:, :3]


def min_clearance(scene, vehicle, obstacle_names) -> tuple[float, tuple | None]:
    """The smallest world-space separation, over every frame of the solve range, between the
    vehicle's meshes (itself and its mesh children) and the named obstacles' convex hulls:
    (gap, (frame, part, obstacle))."""
    obstacles = {}
    for name in obstacle_names:
        points = world_vertices([bpy.data.objects[name]])
        obstacles[name] = (points, hull_normals(points))
    parts = [vehicle, *(ob for ob in vehicle.children_recursive if ob.type == "MESH")]
    worst = (math.inf, None)
    for f in solve_frames(scene):
        scene.frame_set(f)
        for part in parts:
            points = world_vertices([part])
            normals = hull_normals(points)
            for name, (obstacle, obstacle_normals) in obstacles.items():
                gap = separation(points, obstacle, np.concatenate([normals, obstacle_normals]))
                if gap < worst[0]:
                    worst = (gap, (f, part.name, name))
    return worst
