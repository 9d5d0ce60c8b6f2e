"""Frames ↔ trajectory time, scene units ↔ metres, and the frame range a shot spans.

A shot runs from frame ``frame_start`` to ``frame_end`` (sub-frames allowed) at ``fps`` frames a
second (Blender's ``render.fps / render.fps_base``): trajectory time t = (frame − frame_start) / fps.
Positions are world coordinates times the scene's unit scale (metres), relative to ``offset``.
The solve takes equal steps over that time, as Node Spacing says (``core.shot.grid``): per frame,
``steps = round((frame_end − frame_start) × steps_per_frame)`` (nodes on frames when the range is whole
frames; Simulate always steps so), or ``frames_per_step`` frames a step, chosen for the shot (Automatic)
or from Node Count. Keys between nodes are imposed at their own time (exact waypoints). The bake keys
every whole frame of the range and its two ends (``bake_frames``), the motion between nodes on the
C¹ curve of ``core.shot.resample``; after the end the baked action holds the last pose.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import VehicleMotionError

FRAME_EPS = 1e-4   # frames closer than this are the same frame (Blender stores key times as float32)


def scene_fps(fps: int | float, fps_base: float) -> float:
    """Blender's frame rate: ``render.fps / render.fps_base`` (29.97 = 30 / 1.001)."""
    fps_base = float(fps_base) or 1.0
    return float(fps) / fps_base


@dataclass
class FrameMap:
    """Frames ↔ trajectory time, world (scene units) ↔ solve coordinates (metres)."""
    frame_start: float
    frame_end: float
    fps: float
    steps_per_frame: int
    scale: float = 1.0                                          # unit_settings.scale_length
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)        # world point at the solve origin
    # The point the trajectory follows, in the body frame from the object's origin (scene units): a
    # car's rear axle; the bake places the object at trajectory pose × offset⁻¹. With the car's wheels
    # (role → centre, radius, … from core.shot.car_geometry), both go to the trajectory's stats.
    body_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    wheels: dict = field(default_factory=dict)
    key_frames: tuple = ()   # frames of keys and timed empties: the bake keys them too (sub-frames)
    # Node Spacing (core.shot.grid): AUTOMATIC, PER_FRAME or COUNT (node_count nodes); frames_per_step,
    # once chosen (the planner does for AUTOMATIC and COUNT), sets the steps; grid_reason says why.
    spacing: str = "PER_FRAME"
    node_count: int = 0
    frames_per_step: float | None = None
    grid_reason: str = ""

    @property
    def frames(self) -> float:
        return self.frame_end - self.frame_start

    @property
    def steps(self) -> int:
        """⌈frames / frames_per_step⌉ once chosen (at least 2 when Automatic), Node Count − 1, else
        round(frames × steps_per_frame) (per frame, and Automatic before the planner chose)."""
        if self.frames_per_step:
            steps = max(1, math.ceil(self.frames / self.frames_per_step - 1e-6))
            return max(2, steps) if self.spacing == "AUTOMATIC" else steps
        if self.spacing == "COUNT":
            return max(0, int(self.node_count) - 1)
        return max(1, int(round(self.frames * self.steps_per_frame)))

    @property
    def step_frames(self) -> float:
        """Frames between two nodes."""
        return self.frames / max(self.steps, 1)

    @property
    def duration(self) -> float:
        return self.frames / self.fps

    @property
    def dt(self) -> float:
        return self.duration / max(self.steps, 1)

    def time(self, frame: float) -> float:
        return (frame - self.frame_start) / self.fps

    def frame(self, time: float) -> float:
        return self.frame_start + time * self.fps

    def to_solve(self, p) -> np.ndarray:
        return (np.asarray(p, dtype=float) - np.asarray(self.offset)) * self.scale

    def to_world(self, p) -> np.ndarray:
        return np.asarray(p, dtype=float) / self.scale + np.asarray(self.offset)

    def trajectory_to_world(self, trajectory):
        """A copy of a solve-space trajectory in world coordinates (scene units)."""
        from ..trajectory import Trajectory
        t = trajectory
        stats = dict(t.stats)
        stats.update(frame_start=self.frame_start, frame_end=self.frame_end, fps=self.fps,
                     scale_length=self.scale, world_offset=list(self.offset))
        time = np.asarray(t.time, dtype=float)
        if len(time) > 1:  # the grid it was solved on, for the report and the panel
            stats.update(nodes=int(len(time)), node_step_s=float(np.max(np.diff(time))), node_spacing=self.spacing)
            if self.grid_reason:
                stats["node_grid_reason"] = self.grid_reason
        if any(self.body_offset):
            stats["body_offset"] = [float(x) for x in self.body_offset]
        if self.wheels:
            stats["wheels"] = {role: dict(w) for role, w in self.wheels.items()}
        if self.key_frames:
            stats["key_frames"] = [float(f) for f in self.key_frames]
        def scale_or_none(a):
            return None if a is None else np.asarray(a, dtype=float) / self.scale

        return Trajectory(
            time=np.array(t.time, dtype=float), position=self.to_world(t.position),
            orientation=np.array(t.orientation, dtype=float),
            angular_velocity=np.array(t.angular_velocity, dtype=float),
            linear_velocity=np.asarray(t.linear_velocity, dtype=float) / self.scale,
            momentum_angular=t.momentum_angular, momentum_linear=scale_or_none(t.momentum_linear),
            heading=None if t.heading is None else np.array(t.heading, dtype=float),
            shape={k: np.array(v, dtype=float) for k, v in t.shape.items()},
            controls={k: np.array(v, dtype=float) for k, v in t.controls.items()},
            series=dict(t.series), stats=stats, vehicle=t.vehicle)


def fmt_frame(frame: float) -> str:
    """60, 60.5, 120.25: whole frames without a decimal point."""
    return f"{frame:g}" if abs(frame - round(frame)) > 1e-6 else str(int(round(frame)))


def same_frame(a: float, b: float) -> bool:
    return abs(a - b) < FRAME_EPS


def check_range(start: float, end: float, where: str) -> tuple[float, float]:
    """(start, end) as floats; a range whose End is not after its Start is a VehicleMotionError naming
    ``where`` it is set."""
    if end <= start:
        raise VehicleMotionError(f"the frame range is empty: Start {fmt_frame(start)}, End {fmt_frame(end)} "
                                 f"({where}): End must be after Start")
    return float(start), float(end)


def shot_range(key_frames: list[float], scene_range: tuple[int, int],
               override: tuple[int, int] | None = None,
               goal_frames: list[float] = ()) -> tuple[float, float, list[str]]:
    """(start, end, warnings): the frames a shot spans.

    By default the vehicle's first to last keyed frame, clipped to the scene's frame range, with a
    warning naming the keys outside it; a goal given otherwise (``goal_frames``: the frames of Land /
    Dock empties) counts as a key after the first one, so a start key and a landing make a shot
    that ends at the landing. With ``override`` (the add-on's own Start/End), that range.
    Raises VehicleMotionError when fewer than two keyed frames are left."""
    warnings: list[str] = []
    s0, s1 = float(scene_range[0]), float(scene_range[1])
    if override is not None:
        start, end = check_range(override[0], override[1], "Vehicle Motion › Frame Range")
        return start, end, warnings
    frames = sorted(key_frames)
    inside = [f for f in frames if s0 - FRAME_EPS <= f <= s1 + FRAME_EPS]
    outside = [f for f in frames if f not in inside]
    if outside:
        warnings.append(f"keys at frames {', '.join(fmt_frame(f) for f in outside)} are outside the scene's "
                        f"frame range {fmt_frame(s0)}–{fmt_frame(s1)} and ignored")
    goals = [float(f) for f in goal_frames if inside and inside[0] + FRAME_EPS < f <= s1 + FRAME_EPS]
    if len(inside) < 2 and not goals:
        raise VehicleMotionError(
            f"fewer than two keys inside the scene's frame range {fmt_frame(s0)}–{fmt_frame(s1)} (keys at "
            f"frames {', '.join(fmt_frame(f) for f in frames)}): key a start and a goal pose inside it")
    return inside[0], max([inside[-1], *goals]), warnings


def bake_frames(start: float, end: float, keyed=()) -> np.ndarray:
    """The frames a bake keys: every whole frame within [start, end], the two ends, and the keyed
    frames within it (so a key on sub-frame 60.5 or 120.25 is met where it was keyed)."""
    first, last = math.ceil(start - FRAME_EPS), math.floor(end + FRAME_EPS)
    whole = np.arange(first, last + 1, dtype=float)
    inside = [float(f) for f in keyed if start - FRAME_EPS <= f <= end + FRAME_EPS]
    frames = np.concatenate([[start], whole, inside, [end]])
    frames = np.unique(np.round(frames, 6))
    keep = np.concatenate([[True], np.diff(frames) > FRAME_EPS])
    return frames[keep]


__all__ = ["FrameMap", "scene_fps", "check_range", "shot_range", "bake_frames", "fmt_frame", "same_frame", "FRAME_EPS"]
