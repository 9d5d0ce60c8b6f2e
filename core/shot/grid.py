"""The solve's time grid: how many nodes a shot gets and how far apart (``docs/equations.md``, "Node grid
and the motion between nodes", which gives the bounds and the figures behind them).

Solve Settings › Node Spacing:

* ``AUTOMATIC`` (the default, :func:`automatic`): the step is chosen for the vehicle's dynamics and the
  shot, h = min(h_vehicle, h_clear, h_keys), then fitted to the frames. h_vehicle is
  :data:`VEHICLE_STEP_S`; h_clear keeps the chord between two nodes from cutting into an obstacle's
  corner by more than :func:`allowed_cut`, at the peak speed of :func:`peak_speed` (every obstacle of
  the shot counts, near the path or not); h_keys keeps a key imposed on the chord within half of its
  Key Tolerance of the baked curve (:func:`key_allowance`, :func:`key_step`).
* ``PER_FRAME``: round(frames × Steps per Frame) steps (Simulate and secondary motion always step
  this way).
* ``COUNT``: Node Count nodes over the shot, h = duration / (Node Count − 1).

The integrators and DMOC take one h = T/N for a whole segment, so a finer grid only where a
constraint is active is out of reach: :func:`cut_in` measures the baked motion against the obstacles
at every frame and :func:`refine` gives the finer grid to re-solve with, warm-started by
:func:`resample_trajectory` (the add-on's Solve does it once on an Automatic grid,
``addon/solving.py``). Pure Python; no Blender.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frames import FRAME_EPS, FrameMap, fmt_frame

# s: the largest step per vehicle type whose baked motion stays within 1 cm and 0.6° of the dynamics
# (`benchmarks/node_grid.py --sweep`), the boat's set by its stiff hull's stability; docs/equations.md,
# "Node grid …". Other types: DEFAULT_STEP_S
VEHICLE_STEP_S = {"CAR": 0.2, "HELICOPTER": 0.25, "SNAKEBOARD": 0.1, "BOAT": 0.1}
VEHICLE_WHY = {"CAR": "the car's dynamics", "HELICOPTER": "the helicopter's dynamics",
               "SNAKEBOARD": "the rider's twist", "BOAT": "the boat's stiff hull (heave and roll)"}
DEFAULT_STEP_S = 0.1
DEFAULT_ACCEL = 3.0       # m/s²: the acceleration assumed for a vehicle without a bound (the snakeboard)
CUT_FRACTION = 0.5        # of an obstacle's margin the motion between nodes may cut into it …
CUT_SHARE = 1.0 / 32.0    # … or of the corner radius ρ (a chord of ρ/2 cuts ρ/32), whichever is more
CUT_TOLERANCE_M = 0.01    # m: the least cut allowed
MIN_RHO_M = 0.05          # m: the smallest corner radius the cut is measured with
SPEED_FACTOR = 2.0        # peak speed / average speed between keys, from or to rest (a triangle profile)
CRUISE_FACTOR = 1.25      # the same between keys the vehicle passes moving
KEY_SHARE = 0.5           # of Key Tolerance the curve may leave the chord a key between nodes is imposed on
ALIGNED_SHARE = 0.6       # a step landing on every key is taken down to this share of the bound
REFINE_FACTOR = 2         # a refined grid's steps per coarse step


@dataclass(frozen=True)
class Obstacle:
    """What the rule needs of an obstacle (metres): its name, margin and own corner radius (0: a box)."""
    label: str
    margin: float
    radius: float = 0.0


@dataclass(frozen=True)
class TimedPoint:
    """A key, pass-through, stop or landing: time (s), position (m), its radius (m), whether a key
    between nodes would be imposed on the chord (keys and pass-throughs between the ends) and whether
    the vehicle is at rest there (a stop, a landing, a start or goal keyed at rest)."""
    frame: float
    time: float
    position: np.ndarray
    radius: float = 0.0
    between: bool = False
    at_rest: bool = False


@dataclass(frozen=True)
class Grid:
    """The chosen spacing: frames per step and what set it (for the report)."""
    frames_per_step: float
    reason: str

    def steps(self, frames: float) -> int:
        return max(1, math.ceil(frames / self.frames_per_step - 1e-6))


def peak_speed(points: list[TimedPoint], start_speed: float = 0.0, goal_speed: float = 0.0,
               limit: float | None = None) -> float:
    """m/s: the largest average speed between consecutive timed points (less their radii) times
    SPEED_FACTOR where the stretch starts or ends at rest, else CRUISE_FACTOR; the start and goal speeds
    if larger; at most the speed limit."""
    v = max(abs(start_speed), abs(goal_speed))
    timed = sorted(points, key=lambda p: p.time)
    for a, b in zip(timed, timed[1:]):
        dt = b.time - a.time
        if dt > 1e-9:
            gap = max(float(np.linalg.norm(np.asarray(b.position) - np.asarray(a.position))) - a.radius - b.radius, 0.0)
            v = max(v, (SPEED_FACTOR if a.at_rest or b.at_rest else CRUISE_FACTOR) * gap / dt)
    return min(v, limit) if limit is not None and limit > 0 else v


def corner_radius(sphere_radius: float, margin: float, radius: float = 0.0) -> float:
    """ρ (m): the collision sphere's radius + the obstacle's margin + its own radius (a sphere's or a
    capsule's; 0 at a box's corners), at least MIN_RHO_M."""
    return max(sphere_radius + margin + radius, MIN_RHO_M)


def allowed_cut(margin: float, rho: float) -> float:
    """ε = min(max(margin/2, ρ/32, 1 cm), ρ/2) (m): how far the motion between nodes may cut into an
    obstacle's margin."""
    return min(max(CUT_FRACTION * margin, CUT_SHARE * rho, CUT_TOLERANCE_M), 0.5 * rho)


def clearance_step(speed: float, obstacles: list[Obstacle], sphere_radius: float) -> tuple[float, str]:
    """(h_clear s, the obstacle that sets it): h = √(8ρε)/v, so the chord between nodes, which cuts a
    corner of radius ρ by at most L²/(8ρ), cuts at most ε into each; inf without obstacles or motion."""
    best, why = math.inf, ""
    if speed <= 0:
        return best, why
    for ob in obstacles:
        rho = corner_radius(sphere_radius, ob.margin, ob.radius)
        h = math.sqrt(8.0 * rho * allowed_cut(ob.margin, rho)) / speed
        if h < best:
            best, why = h, ob.label
    return best, why


def key_step(accel: float, radius: float) -> float:
    """h_keys = √(4r/a): the curve leaves the chord by at most a h²/8 ≤ r/2 (inf without acceleration)."""
    if not accel > 0 or not radius > 0:
        return math.inf
    return math.sqrt(8.0 * KEY_SHARE * radius / accel)


def key_allowance(radius: float, accel: float, h: float, s: float) -> float:
    """The radius (m) to impose a key on the chord with, s ∈ (0, 1) its place between nodes h apart: the
    curve's departure a h² s(1 − s)/2 taken off, at most KEY_SHARE of the radius."""
    if not accel > 0 or s <= 1e-9 or s >= 1 - 1e-9:
        return radius
    return radius - min(0.5 * accel * h * h * s * (1.0 - s), KEY_SHARE * radius)


def _aligned(offsets: list[float], bound_frames: float) -> int:
    """The largest whole number of frames m ≤ bound that puts every offset (frames from the start) on a
    node — a divisor of their greatest common divisor —; 0 when none does (an offset on a sub-frame)."""
    whole = [int(round(o)) for o in offsets]
    if not whole or any(abs(o - w) >= FRAME_EPS or w <= 0 for o, w in zip(offsets, whole)):
        return 0
    common = 0
    for w in whole:
        common = math.gcd(common, w)
    limit = int(math.floor(bound_frames + 1e-9))
    best = 0
    for d in range(1, math.isqrt(common) + 1):
        if common % d == 0:
            for m in (d, common // d):
                if best < m <= limit:
                    best = m
    return best


def automatic(vehicle_type: str, frames: float, fps: float, points: list[TimedPoint], obstacles: list[Obstacle],
              sphere_radius: float, accel: float, start_speed: float = 0.0, goal_speed: float = 0.0,
              limit: float | None = None, offsets: list[float] = ()) -> Grid:
    """The AUTOMATIC spacing of a shot of ``frames`` frames at ``fps`` (module doc). ``points``: the timed
    points (solve space); ``offsets``: frames from the start that should fall on nodes (keys, stops, the
    end); ``accel``: the vehicle's acceleration bound (m/s²) for keys between nodes."""
    h_vehicle = VEHICLE_STEP_S.get(vehicle_type, DEFAULT_STEP_S)
    why = f"{VEHICLE_WHY.get(vehicle_type, 'the vehicle')} (at most {h_vehicle:g} s)"
    v = peak_speed(points, start_speed, goal_speed, limit)
    h_clear, near = clearance_step(v, obstacles, sphere_radius)
    h = h_vehicle
    if h_clear < h:
        h, why = h_clear, f"{near} at up to {v:.3g} m/s"
    bound = h * fps
    m = _aligned(list(offsets), bound)
    if m >= 1 and m >= ALIGNED_SHARE * bound:
        return Grid(float(m), why + ", every key on a node")
    radii = [p.radius for p in points if p.between and p.radius > 0]
    h_keys = key_step(accel, min(radii)) if radii else math.inf
    if h_keys < h:
        h, why = h_keys, f"keys between nodes within half of {min(radii):.3g} m"
        bound = h * fps
        m = _aligned(list(offsets), bound)
        if m >= 1 and m >= ALIGNED_SHARE * bound:
            return Grid(float(m), why + ", every key on a node")
    if bound >= 1.0:
        steps = max(1, math.ceil(frames / bound - 1e-9))
        return Grid(frames / steps, why)
    return Grid(1.0 / math.ceil(1.0 / bound - 1e-9), why)


def describe(fm: FrameMap, nodes: int | None = None) -> str:
    """'121 nodes, 0.1 s apart' of a frame map (or of ``nodes`` over its duration)."""
    steps = fm.steps if nodes is None else max(nodes - 1, 1)
    return f"{steps + 1} nodes, {fm.duration / steps:.3g} s apart"


# ----------------------------------------------------------------------------- after the solve

@dataclass
class CutIn:
    """The baked motion's worst cut into an obstacle's margin between nodes (metres, world frames)."""
    depth: float          # m: how far into the margin (margin − clearance); ≤ 0: clear
    allowed: float        # m: the cut the grid allows there (allowed_cut)
    frame: float
    obstacle: str

    @property
    def too_deep(self) -> bool:
        return self.depth > self.allowed + 1e-9

    def describe(self) -> str:
        return (f"between nodes the motion comes {self.depth * 100:.3g} cm into the margin of {self.obstacle} "
                f"at frame {fmt_frame(self.frame)} (allowed {self.allowed * 100:.3g} cm)")


def cut_in(problem, trajectory, frames=None) -> CutIn | None:
    """The deepest cut of the collision spheres into an obstacle's margin over the baked frames (the
    Hermite motion of ``core.shot.resample``) — keys touching an obstacle (contacts) excepted within their
    span; None without obstacles. ``trajectory``: the solved motion in world coordinates (scene units)."""
    from .frames import bake_frames
    from .resample import sample
    fm = problem.frame_map
    spheres = np.asarray(problem.spheres, dtype=float).reshape(-1, 4)
    if not problem.obstacles or not len(spheres):
        return None
    if frames is None:
        frames = bake_frames(fm.frame_start, fm.frame_end, fm.key_frames)
    frames = np.asarray(frames, dtype=float)
    t = np.asarray(trajectory.time, dtype=float)
    times = np.clip((frames - fm.frame_start) / fm.fps, t[0], t[-1])
    smp = sample(trajectory, times)
    centres = smp.position[:, None, :] + np.einsum("kij,sj->ksi", smp.rotation, spheres[:, :3] / fm.scale)
    radii = spheres[:, 3] / fm.scale
    worst = None
    for i, ob in enumerate(problem.obstacles):
        clearance = (ob.distance(centres) - radii).min(axis=1) * fm.scale           # m, per frame
        excused = np.zeros(len(frames), dtype=bool)
        for c in getattr(problem, "contacts", ()):
            if c.obstacle == i:
                excused |= np.abs(frames - c.frame) <= c.span * fm.fps + 1e-6
        margin = ob.margin * fm.scale
        depth = np.where(excused, -np.inf, margin - clearance)
        j = int(np.argmax(depth))
        own = ob.radius * fm.scale if ob.kind in ("sphere", "capsule") else 0.0
        allowed = allowed_cut(margin, corner_radius(float(radii.min()) * fm.scale, margin, own))
        found = CutIn(float(depth[j]), allowed, float(frames[j]), ob.label())
        if worst is None or found.depth - found.allowed > worst.depth - worst.allowed:
            worst = found
    return worst


def refine(problem, trajectory) -> "tuple[object, CutIn] | None":
    """(the problem re-planned on a grid REFINE_FACTOR times finer, the cut that asks for it) when the
    baked motion cuts into an obstacle's margin by more than the grid allows (:func:`cut_in`); None
    when it does not. The finer problem is the same shot with more steps in every segment (its
    waypoints, obstacles and contacts are in seconds, so only the steps change); it is refused like any
    shot above ``plan.MAX_STEPS``."""
    from .plan import refined_problem
    cut = cut_in(problem, trajectory)
    if cut is None or not cut.too_deep:
        return None
    return refined_problem(problem, REFINE_FACTOR), cut


def resample_trajectory(trajectory, steps: int):
    """A warm start on a grid of ``steps`` equal steps over the same duration: poses and velocities on the
    Lie group Hermite curve, shape channels and per-node series by the monotone cubic, controls held
    over the coarse step they fall in (``core.dmoc.solve_scenario(…, initial=…)`` takes it)."""
    from ..trajectory import Trajectory
    from .resample import intervals, pchip, sample
    t = np.asarray(trajectory.time, dtype=float)
    times = np.linspace(t[0], t[-1], steps + 1)
    smp = sample(trajectory, times)
    mid, _ = intervals(t, 0.5 * (times[1:] + times[:-1]))
    controls = {k: np.asarray(v, dtype=float)[np.minimum(mid, len(v) - 1)] for k, v in trajectory.controls.items()
                if np.asarray(v).ndim == 1 and len(v)}
    series = {}
    for k, v in trajectory.series.items():
        a = np.asarray(v) if not isinstance(v, dict) else None
        if a is not None and a.dtype.kind == "f" and a.ndim >= 1 and len(a) == len(t):
            series[k] = pchip(t, a, times)
    heading = smp.heading if trajectory.heading is not None else None
    return Trajectory(time=times, position=smp.position, orientation=smp.orientation,
                      angular_velocity=smp.angular_velocity, linear_velocity=smp.linear_velocity,
                      heading=heading, shape=dict(smp.shape), controls=controls, series=series,
                      stats=dict(trajectory.stats), vehicle=trajectory.vehicle)


__all__ = ["VEHICLE_STEP_S", "DEFAULT_STEP_S", "DEFAULT_ACCEL", "Grid", "Obstacle", "TimedPoint",
           "automatic", "peak_speed", "corner_radius", "allowed_cut", "clearance_step", "key_step", "key_allowance",
           "describe", "CutIn", "cut_in", "refine", "resample_trajectory", "REFINE_FACTOR"]
