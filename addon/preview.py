"""Viewport preview of solved paths: a line through the stored trajectory of every vehicle
(brighter for the active one), drawn with the gpu module in the 3D viewport.

Only the UI draws: in background mode (no GPU context) ``register`` does nothing. The
points come from the trajectory stored with each object (addon.storage), decoded once per
stored version; ``path_points`` is plain data and works headless.
"""
from __future__ import annotations

import bpy
import numpy as np

_handle = None
_cache: dict[str, tuple[int, np.ndarray]] = {}

ACTIVE_COLOR = (1.0, 0.55, 0.1, 0.95)
OTHER_COLOR = (0.3, 0.75, 1.0, 0.6)


def path_points(obj) -> np.ndarray | None:
    """World positions (K, 3) of the path of the trajectory stored with obj (every frame and node), or None."""
    s = obj.vehicle_motion
    if not s.has_trajectory or not s.trajectory_data:
        return None
    key = hash(s.trajectory_data)
    cached = _cache.get(obj.name)
    if cached is not None and cached[0] == key:
        return cached[1]
    from . import storage
    try:
        trajectory = storage.decode(s.trajectory_data)
    except Exception:  # damaged data: nothing to draw (Bake reports it)
        return None
    points = np.asarray(_curve(trajectory), dtype=np.float32).reshape(-1, 3)
    _cache[obj.name] = (key, points)
    return points


def _curve(trajectory) -> np.ndarray:
    """The path as the bake places it: the curve between nodes (core.shot.resample) at every frame of
    the stored frame rate and at every node; the nodes alone when the trajectory has no frame rate."""
    t = np.asarray(trajectory.time, dtype=float)
    fps = float(trajectory.stats.get("fps") or 0.0)
    if len(t) < 2 or not np.isfinite(fps) or fps <= 0.0:
        return np.asarray(trajectory.position, dtype=float)
    from ..core.shot.resample import sample
    times = np.union1d(t, np.arange(t[0], t[-1], 1.0 / fps))
    return sample(trajectory, times).position


def _segments(points: np.ndarray) -> np.ndarray:
    """LINES vertex pairs of a polyline."""
    out = np.empty((2 * (len(points) - 1), 3), dtype=np.float32)
    out[0::2], out[1::2] = points[:-1], points[1:]
    return out


def _draw() -> None:
    import gpu
    from gpu_extras.batch import batch_for_shader
    context = bpy.context
    scene, region, view_layer = context.scene, context.region, context.view_layer
    if scene is None or region is None or view_layer is None or not scene.vehicle_motion.show_path:
        return
    shader = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    shader.bind()
    shader.uniform_float("viewportSize", (region.width, region.height))
    active = view_layer.objects.active
    for ob in view_layer.objects:
        points = path_points(ob)
        if points is None or len(points) < 2:
            continue
        shader.uniform_float("lineWidth", 3.0 if ob == active else 1.5)
        shader.uniform_float("color", ACTIVE_COLOR if ob == active else OTHER_COLOR)
        batch_for_shader(shader, "LINES", {"pos": _segments(points)}).draw(shader)
    gpu.state.depth_test_set("NONE")
    gpu.state.blend_set("NONE")


def tag_redraw() -> None:
    """Ask every 3D viewport to redraw (after a solve or bake changed the stored paths)."""
    if bpy.app.background:
        return
    wm = bpy.context.window_manager
    for window in wm.windows if wm else ():
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def register() -> None:
    global _handle
    if bpy.app.background or _handle is not None:
        return
    _handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")


def unregister() -> None:
    global _handle
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None
    _cache.clear()


__all__ = ["path_points", "register", "unregister", "tag_redraw"]
