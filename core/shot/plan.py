"""A shot, from plain data gathered from the scene, to the ``solve`` scenarios of ``core.dmoc``.

Input (:class:`ShotInput`): the vehicle's keys (frame, world pose, keyed speed), the constraint
empties, the fitted obstacles, the vehicle's collision spheres and ``[vehicle]`` table, and the
solve settings, in scene units; the frame map says how frames and scene units become seconds and
metres. Output (:class:`Problem`): one scenario per segment (a stop or landing between the first
and last frame splits the shot; each later segment starts from the previous one's end state).

What a key means: the first key is the start state (pose, speed); the last key at the end of the
range is the goal; keys in between are poses to pass within Key Tolerance at their own time (exact
waypoints, sub-frames included), with the heading where a rotation is keyed; a Land / Dock empty
at the end of the range is the goal by itself (its position, heading and — helicopter, boat — its
orientation, at rest). Every keyed pose (keys, landings) must clear the obstacles: by the collision
spheres, or by the real geometry within 1 cm — a contact, for which the solver's clearance floor
is lowered around that time (``core.shot.contacts``). Problems are a :class:`ShotError`, one line
naming the object or frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import VehicleMotionError
from ..lie import quaternion
from ..scenario import MAX_SOLVE_STEPS as MAX_STEPS
from . import contacts, feasibility, grid
from .contacts import Contact
from .frames import FrameMap, fmt_frame, same_frame
from .geometry import ObstacleShape, floats, quaternion_of, yaw

KIND_LABELS = {"PASS_THROUGH": "pass-through", "STOP": "stop", "LAND": "landing",
               "KEEP_OUT": "keep-out", "SPEED_LIMIT": "speed limit", "KEY": "key"}
TIMED_KINDS = frozenset({"PASS_THROUGH", "STOP", "LAND"})
MIN_STEPS = 2


class ShotError(VehicleMotionError):
    """The shot cannot become a problem; the message names the object or frame."""


@dataclass
class Constraint:
    """One requirement found in the scene (for the panel list, messages and checks)."""
    name: str                   # the object it comes from
    kind: str                   # KEY, PASS_THROUGH, STOP, LAND, KEEP_OUT, SPEED_LIMIT
    frame: float | None         # None: whole shot
    position: np.ndarray | None = None   # world
    radius: float = 0.0                  # world units
    heading: float | None = None
    orientation: tuple | None = None     # (w, x, y, z) for SE(3) keys
    speed: float | None = None           # world units / s
    speed_limit: float | None = None
    forward: np.ndarray | None = None    # world direction of the body X axis (velocity direction)
    euler_heading: float | None = None   # a key's keyed Euler Z angle, when it is the heading
    origin: np.ndarray | None = None     # a key's object origin (world), when position is the planned point

    def describe(self) -> str:
        what = KIND_LABELS.get(self.kind, self.kind.lower())
        when = "whole shot" if self.frame is None else f"frame {fmt_frame(self.frame)}"
        if self.kind == "KEY":
            return f"key of '{self.name}' at {when}"
        return f"{what} '{self.name}' ({when})"


@dataclass
class KeyPose:
    """The vehicle at one keyed frame (world pose, scene units)."""
    frame: float
    position: np.ndarray
    rotation: np.ndarray                 # 3×3, a proper rotation
    rotation_keyed: bool = False
    speed: float | None = None           # keyed speed (scene units / s); the start's is always given
    euler_heading: float | None = None   # the keyed Euler Z angle when it is the heading
    origin: np.ndarray | None = None     # the object's origin, when ``position`` is the planned point's


@dataclass
class ShotSettings:
    key_tolerance: float                 # scene units
    weights: dict[str, float]            # effort, path_length, hazard, smoothness
    weight_duration: float = 0.0
    solver: dict = field(default_factory=dict)
    time_limit_s: float = 60.0


@dataclass
class ShotInput:
    vehicle: str
    vehicle_type: str                    # CAR, SNAKEBOARD, HELICOPTER, BOAT
    core_type: str                       # the scenario's [vehicle] type
    frame_map: FrameMap
    keys: list[KeyPose]                  # time order; the first at frame_start
    empties: list[Constraint]
    obstacles: list[ObstacleShape]
    spheres: np.ndarray                  # (S, 4) body frame, metres
    parameters: dict                     # the [vehicle] table (without collision spheres)
    input_limits: dict[str, float]       # |input| limits: effort weights 1/limit²
    settings: ShotSettings
    warnings: list[str] = field(default_factory=list)
    # The point the solve plans, in the body frame (scene units) from the object's origin: a car's rear
    # axle (core.shot.car_geometry). Keys are moved to it, spheres taken relative to it, and the bake
    # puts the object back (FrameMap.body_offset → trajectory stats).
    body_offset: np.ndarray | None = None
    wheels: dict = field(default_factory=dict)   # role → wheel table (car_geometry), for the bake
    # The vehicle's real geometry: its evaluated mesh vertices (V, 3) in the body frame, metres (spinning
    # rotors swept over a turn); None without meshes. Keys touching an obstacle are measured with it.
    vertices: np.ndarray | None = None

    @property
    def planar(self) -> bool:
        return self.vehicle_type in ("CAR", "SNAKEBOARD")


@dataclass
class Segment:
    """One solve: frames [frame_start, frame_end] and its scenario (``start`` of a segment after the
    first is filled from the previous segment's end state when it is solved)."""
    frame_start: float
    frame_end: float
    scenario: dict
    waypoint_labels: list[str] = field(default_factory=list)
    continues: bool = False


@dataclass
class Problem:
    vehicle: str
    vehicle_type: str
    core_type: str
    frame_map: FrameMap
    segments: list[Segment]
    constraints: list[Constraint]
    obstacles: list[ObstacleShape]
    spheres: np.ndarray                 # (S, 4) body frame, metres
    warnings: list[str] = field(default_factory=list)
    time_limit_s: float = 60.0
    vertices: np.ndarray | None = None  # (V, 3) body frame, metres: the real geometry
    contacts: list[Contact] = field(default_factory=list)   # keyed poses touching an obstacle
    source: ShotInput | None = None     # the shot it was planned from (a finer grid re-plans it)

    @property
    def scenario(self) -> dict:
        """The scenario of a problem that is one segment."""
        return self.segments[0].scenario

    def describe(self, message: str, segment: Segment | None = None) -> str:
        from .messages import relabel
        return relabel(self, message, segment or self.segments[0])


def check_steps(fm: FrameMap, what: str = "") -> None:
    """At least MIN_STEPS and at most MAX_STEPS steps; a one-line ShotError naming the setting that sets
    them (Steps per Frame, Node Count, or Node Spacing Automatic's reason) otherwise."""
    frames = f"frames {fmt_frame(fm.frame_start)}–{fmt_frame(fm.frame_end)}{what}"
    if fm.spacing == "COUNT":
        count = int(fm.node_count)
        if not what and not MIN_STEPS + 1 <= count <= MAX_STEPS + 1:
            raise ShotError(f"Solve Settings › Node Count is {count}: a solve takes from {MIN_STEPS + 1} to "
                            f"{MAX_STEPS + 1} nodes")
        if fm.steps < MIN_STEPS:
            raise ShotError(f"{frames} get {fm.steps} step at Node Count {count} ({fm.step_frames:.3g} frames a "
                            f"step): raise Solve Settings › Node Count or key the stop later (at least {MIN_STEPS} "
                            "steps)")
        if fm.steps > MAX_STEPS:
            raise ShotError(f"{frames} get {fm.steps} steps at Node Count {count}; the most a solve takes is "
                            f"{MAX_STEPS}: lower Solve Settings › Node Count")
        return
    if fm.spacing == "AUTOMATIC" and fm.frames_per_step:
        if fm.steps > MAX_STEPS:
            raise ShotError(f"{frames} need {fm.steps} steps of {fm.dt:.3g} s (Solve Settings › Node Spacing "
                            f"Automatic: {fm.grid_reason}); the most a solve takes is {MAX_STEPS}: set Node Spacing "
                            "to Node Count, or shorten the shot")
        return
    if fm.steps < MIN_STEPS:
        raise ShotError(f"{frames} give {fm.steps} "
                        "step; raise Steps per Frame or key the goal later (at least 2 steps)")
    if fm.steps > MAX_STEPS:
        raise ShotError(f"{frames} × "
                        f"{fm.steps_per_frame} steps per frame = {fm.steps} steps; the most a solve takes is "
                        f"{MAX_STEPS}")


class Planner:
    """Builds the :class:`Problem` of a :class:`ShotInput` (the planning half of Solve)."""

    def __init__(self, shot: ShotInput):
        self.source = replace(shot, warnings=list(shot.warnings))   # as given: a finer grid re-plans it
        shot = at_body_offset(shot)
        self.shot = shot
        self.fm = shot.frame_map
        self.scale = shot.frame_map.scale
        self.planar = shot.planar
        self.warnings = shot.warnings
        self.name = shot.vehicle
        self.contacts: list[Contact] = []
        self.accel = grid.DEFAULT_ACCEL   # m/s²: the bound keys between nodes are allowed for (grid.key_allowance)

    # -- checks -----------------------------------------------------------------------------
    def sphere_centres(self, position: np.ndarray, r: np.ndarray) -> np.ndarray:
        return position + (self.shot.spheres[:, :3] / self.scale) @ r.T

    def check_pose_clear(self, what: str, position, r, obstacles, frame: float | None = None) -> None:
        """A keyed pose against the obstacles: the collision spheres clear each by its margin, or the real
        geometry (mesh vertices) is at most ``contacts.TOLERANCE`` inside it — a contact at ``frame``,
        recorded with the spheres' clearance there — or the pose is refused (core.shot.contacts)."""
        spheres = self.shot.spheres
        if not len(spheres):
            return
        centres = self.sphere_centres(np.asarray(position), r)
        radii = spheres[:, 3] / self.scale
        vertices = self.shot.vertices
        for i, ob in enumerate(obstacles):
            clearance = float(np.min(ob.distance(centres) - radii))
            if clearance >= ob.margin - 1e-9:
                continue
            shown = clearance * self.scale
            if vertices is not None and len(vertices):
                shown = contacts.real_clearance(ob, vertices, position, r, self.scale)
                if shown >= -contacts.TOLERANCE and frame is not None:
                    self.contacts.append(contacts.Contact(i, ob.label(), frame, clearance * self.scale - contacts.SLACK,
                                                          shown, 0.0, what))
                    continue
            inside = "inside" if shown < 0 else "closer than its margin to"
            raise ShotError(f"{what} is {inside} {ob.label()} (clearance {shown:.3g} m, "
                            f"margin {ob.margin * self.scale:.3g} m): move the key or the obstacle")

    def check_contradictions(self, points: list[Constraint], limit: float | None, start_speed: float,
                             goal_speed: float | None, obstacles) -> None:
        timed = sorted((c for c in points if c.frame is not None), key=lambda c: c.frame)
        dims = slice(0, 2) if self.planar else slice(0, 3)  # a car drives in its plane: heights do not count
        for i, a in enumerate(timed):
            for b in timed[i + 1:]:
                if not same_frame(a.frame, b.frame):
                    break
                gap = float(np.linalg.norm(a.position[dims] - b.position[dims]))
                if gap > a.radius + b.radius + 1e-9:
                    raise ShotError(f"contradictory constraints at frame {fmt_frame(a.frame)}: {a.describe()} and "
                                    f"{b.describe()} are {gap * self.scale:.3g} m apart")
                if a.heading is not None and b.heading is not None and \
                        abs(math.remainder(a.heading - b.heading, math.tau)) > 1e-3:
                    raise ShotError(f"contradictory constraints at frame {fmt_frame(a.frame)}: {a.describe()} and "
                                    f"{b.describe()} ask for different headings")
        for c in timed:
            if c.kind == "KEY":
                continue
            for ob in obstacles:
                d = float(ob.distance(c.position[None])[0])
                if d < -c.radius:
                    raise ShotError(f"contradictory constraints: {c.describe()} lies inside {ob.label()}")
        if limit is None:
            return
        if abs(start_speed) > limit + 1e-9:
            raise ShotError(f"contradictory constraints: '{self.name}' starts at "
                            f"{start_speed * self.scale:.3g} m/s but the speed limit is {limit * self.scale:.3g} m/s")
        if goal_speed is not None and abs(goal_speed) > limit + 1e-9:
            raise ShotError(f"contradictory constraints: '{self.name}' is keyed to {goal_speed * self.scale:.3g} "
                            f"m/s at the goal but the speed limit is {limit * self.scale:.3g} m/s")
        for a, b in zip(timed, timed[1:]):
            dt = (b.frame - a.frame) / self.fm.fps
            if dt <= 0:
                continue
            need = (float(np.linalg.norm(b.position[dims] - a.position[dims])) - a.radius - b.radius) / dt
            if need > limit + 1e-9:
                raise ShotError(f"contradictory constraints: from {a.describe()} to {b.describe()} needs at least "
                                f"{need * self.scale:.3g} m/s, over the speed limit of {limit * self.scale:.3g} m/s")

    # -- the problem ------------------------------------------------------------------------
    def problem(self) -> Problem:
        shot, fm = self.shot, self.fm
        fs, fe = fm.frame_start, fm.frame_end
        if fm.spacing == "COUNT" and not fm.frames_per_step:
            check_steps(fm)
            fm.frames_per_step = fm.frames / (int(fm.node_count) - 1)
        if fm.spacing != "AUTOMATIC" or fm.frames_per_step:
            check_steps(fm)
        if not shot.keys or not same_frame(shot.keys[0].frame, fs):
            raise ShotError(f"'{self.name}' has no pose at the start frame {fmt_frame(fs)}")
        start_pose = shot.keys[0]
        if self.planar:
            fm.offset = (0.0, 0.0, float(start_pose.position[2]))
            tilt = math.degrees(math.acos(max(-1.0, min(1.0, start_pose.rotation[2, 2]))))
            if tilt > 0.5:
                self.warnings.append(f"'{self.name}' is tilted {tilt:.1f}° at frame {fmt_frame(fs)}; a "
                                     f"{shot.vehicle_type.lower()} moves flat, so only its heading is used")
        empties = shot.empties
        keep_out = [ObstacleShape(c.name, "sphere", c.position, radius=c.radius, source="keep-out")
                    for c in empties if c.kind == "KEEP_OUT"]
        all_obstacles = shot.obstacles + keep_out
        limits = [c.speed_limit for c in empties if c.kind == "SPEED_LIMIT"]
        limit = min(limits) if limits else None

        keys = self.key_constraints(all_obstacles)
        start = keys[0]
        self.unwrap_headings(keys, empties)
        goal_key = keys[-1] if same_frame(keys[-1].frame, fe) and len(keys) > 1 else None
        timed = [c for c in empties if c.kind in TIMED_KINDS]
        fm.key_frames = tuple(sorted({float(c.frame) for c in keys + timed if c.frame is not None}))
        self.check_contradictions(keys + timed, limit, start.speed or 0.0,
                                  goal_key.speed if goal_key is not None else None, all_obstacles)
        for c in timed:  # constraints at the start frame must agree with the start
            if same_frame(c.frame, fs) and c.speed == 0.0 and abs(start.speed or 0.0) > 1e-9:
                raise ShotError(f"contradictory constraints: {c.describe()} asks '{self.name}' to be at rest at "
                                f"the start, but it starts at {start.speed * self.scale:.3g} m/s")
        for c in timed:  # a landing is a keyed pose too: clear of the obstacles, or touching one
            if c.kind == "LAND" and c.frame is not None and fs - 1e-6 <= c.frame <= fe + 1e-6:
                self.check_pose_clear(c.describe(), c.position, self.landing_rotation(c), all_obstacles,
                                      frame=c.frame)
        self.check_feasible(keys + timed, start, limit)
        self.contact_spans(all_obstacles)

        # stops and landings between start and goal split the shot
        cuts = sorted({c.frame for c in timed if c.kind in ("STOP", "LAND") and fs + 1e-6 < c.frame < fe - 1e-6})
        bounds = [fs, *cuts, fe]
        self.choose_grid(keys + timed, cuts, start, goal_key, limit, all_obstacles)
        base = self.base_tables(all_obstacles, limit)
        segments = [self.segment(i, a, b, base, start, keys, timed, goal_key)
                    for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        return Problem(self.name, shot.vehicle_type, shot.core_type, fm, segments, keys + empties, all_obstacles,
                       shot.spheres, self.warnings, float(shot.settings.time_limit_s), vertices=shot.vertices,
                       contacts=list(self.contacts), source=self.source)

    def choose_grid(self, timed: list[Constraint], cuts: list[float], start: Constraint, goal_key: Constraint | None,
                    limit: float | None, obstacles: list[ObstacleShape]) -> None:
        """The vehicle's acceleration bound for keys between nodes, and — Node Spacing Automatic, not chosen
        yet — the grid of ``core.shot.grid.automatic`` (solve units: metres, seconds), then checked."""
        shot, fm = self.shot, self.fm
        fs, fe, scale = fm.frame_start, fm.frame_end, self.scale
        dims = slice(0, 2) if self.planar else slice(0, 3)
        points = [grid.TimedPoint(c.frame, fm.time(c.frame), fm.to_solve(c.position)[dims], c.radius * scale,
                                  c.kind in ("KEY", "PASS_THROUGH") and fs + 1e-6 < c.frame < fe - 1e-6
                                  and not any(same_frame(c.frame, f) for f in cuts),
                                  c.kind in ("STOP", "LAND") or (c.speed is not None and abs(c.speed) < 1e-9))
                  for c in timed if c.frame is not None and c.position is not None]
        v_limit = None if limit is None else limit * scale
        start_speed = abs(start.speed or 0.0) * scale
        goal_speed = abs(goal_key.speed or 0.0) * scale if goal_key is not None else 0.0
        limits = feasibility.vehicle_limits(shot.vehicle_type, shot.parameters, shot.input_limits)
        if limits is not None:
            self.accel = limits.accel
            if limits.min_turn_radius and math.isfinite(limits.min_turn_radius):  # a car turning at its peak speed
                v = grid.peak_speed(points, start_speed, goal_speed, v_limit)
                self.accel = math.hypot(limits.accel, v * v / limits.min_turn_radius)
        if fm.spacing != "AUTOMATIC" or fm.frames_per_step:
            return
        spheres = np.asarray(shot.spheres, dtype=float).reshape(-1, 4)
        shapes = [grid.Obstacle(ob.label(), ob.margin * scale, ob.radius * scale if ob.kind in ("sphere", "capsule")
                                else 0.0) for ob in obstacles]
        offsets = sorted({round(p.frame - fs, 6) for p in points} | {round(f - fs, 6) for f in cuts} | {fe - fs})
        chosen = grid.automatic(shot.vehicle_type, fm.frames, fm.fps, points, shapes,
                                float(spheres[:, 3].min()) if len(spheres) else 0.0, self.accel, start_speed,
                                goal_speed, v_limit, [o for o in offsets if o > 0])
        fm.frames_per_step, fm.grid_reason = chosen.frames_per_step, chosen.reason
        check_steps(fm)

    def landing_rotation(self, c: Constraint) -> np.ndarray:
        """The vehicle's rotation on a landing: the empty's (SE(3) vehicles), or its heading (planar)."""
        if c.orientation is not None and not self.planar:
            return quaternion.to_matrix(np.asarray(c.orientation, dtype=float))
        h = float(c.heading or 0.0)
        return np.array([[math.cos(h), -math.sin(h), 0.0], [math.sin(h), math.cos(h), 0.0], [0.0, 0.0, 1.0]])

    def contact_spans(self, obstacles) -> None:
        """One contact per obstacle and frame (the lowest floor), each with the span its floor takes to
        rise back to the margin (``contacts.span_for``, from the vehicle's acceleration)."""
        shot = self.shot
        limits = feasibility.vehicle_limits(shot.vehicle_type, shot.parameters, shot.input_limits)
        accel = limits.accel if limits is not None else None
        best: dict = {}
        for c in self.contacts:
            key = (c.obstacle, round(c.frame, 4))
            if key not in best or c.allowance < best[key].allowance:
                best[key] = c
        self.contacts = sorted(best.values(), key=lambda c: (c.frame, c.obstacle))
        for c in self.contacts:
            c.span = contacts.span_for(obstacles[c.obstacle].margin * self.scale, c.allowance, accel)

    def check_feasible(self, timed: list[Constraint], start: Constraint, limit: float | None) -> None:
        """Refuse a stretch the vehicle's limits cannot cover (core.shot.feasibility), before solving."""
        shot, fm = self.shot, self.fm
        limits = feasibility.vehicle_limits(shot.vehicle_type, shot.parameters, shot.input_limits)
        points = [feasibility.Point(c.frame, fm.time(c.frame), fm.to_solve(c.position), c.radius * self.scale,
                                    c.heading, c.speed == 0.0 and c.frame > fm.frame_start + 1e-6, c.describe())
                  for c in timed if c.frame is not None]
        problem = feasibility.check(self.name, shot.vehicle_type, limits, points,
                                    float(start.speed or 0.0) * self.scale, fm.fps,
                                    None if limit is None else limit * self.scale, self.planar)
        if problem:
            raise ShotError(problem)
        if shot.vehicle_type == "BOAT":
            self.warn_off_waterline([c for c in timed if c.speed == 0.0 and c.frame is not None
                                     and c.frame > fm.frame_start + 1e-6])

    def warn_off_waterline(self, at_rest: list[Constraint]) -> None:
        """A boat held at rest where it does not float (its thrusters push sideways, not up) cannot stay
        there: warn with its floating height (warn, don't refuse: the solve may still find a compromise)."""
        from ..scenario import Table
        from ..scenario.boat import read_boat
        fm = self.fm
        try:
            boat = read_boat(Table(dict(self.shot.parameters), "vehicle"))
        except VehicleMotionError:
            return  # the solve names the bad key
        if boat.moving:
            return  # on waves a boat heaves wherever it is held
        for c in at_rest:
            r = quaternion.to_matrix(np.asarray(c.orientation, dtype=float)) if c.orientation is not None else None
            z = float(fm.to_solve(c.position)[2])
            off = z - boat.float_height(r)
            if abs(off) > max(0.05, c.radius * self.scale):
                self.warnings.append(f"'{self.name}' is held at rest at frame {fmt_frame(c.frame)} "
                                     f"{abs(off):.2g} m {'above' if off > 0 else 'below'} where it floats "
                                     f"({c.describe()}): it cannot stay there; key it {abs(off):.2g} m "
                                     f"{'lower' if off > 0 else 'higher'}")

    def key_constraints(self, obstacles) -> list[Constraint]:
        """The vehicle's keys as constraints: the start (full state), the goal at the end of the range
        (exact), and poses in between within Key Tolerance."""
        shot, fm = self.shot, self.fm
        fs, fe = fm.frame_start, fm.frame_end
        tol = shot.settings.key_tolerance
        start_z = float(shot.keys[0].position[2])
        keys: list[Constraint] = []
        for k in shot.keys:
            f, p, r = k.frame, k.position, k.rotation
            ends = same_frame(f, fs) or same_frame(f, fe)
            c = Constraint(self.name, "KEY", f, position=p, radius=0.0 if ends else tol, forward=r[:, 0],
                           euler_heading=k.euler_heading, origin=k.origin)
            if k.rotation_keyed or same_frame(f, fs):
                c.heading = yaw(r)
                c.orientation = tuple(quaternion_of(r))
            c.speed = k.speed
            if self.planar and abs(p[2] - start_z) > tol and "terrain" not in shot.parameters:  # a Ground sets it
                self.warnings.append(f"'{self.name}' is keyed at height {p[2]:.3g} at frame {fmt_frame(f)}; a "
                                     f"{shot.vehicle_type.lower()} drives at its start height {start_z:.3g}")
            self.check_pose_clear(f"'{self.name}' at frame {fmt_frame(f)}", p, r, obstacles, frame=f)
            keys.append(c)
        for c in keys[1:]:
            if c.speed is not None and c.frame < fe - 1e-6:
                self.warnings.append(f"the speed keyed on '{self.name}' at frame {fmt_frame(c.frame)} is not "
                                     "imposed (only at the start and the goal; use a Stop Here empty to stop)")
                c.speed = None
            if c.orientation is not None and not self.planar and c.frame < fe - 1e-6:
                self.warnings.append(f"only the heading of the rotation keyed on '{self.name}' at frame "
                                     f"{fmt_frame(c.frame)} is imposed")
        return keys

    @staticmethod
    def unwrap_headings(keys: list[Constraint], empties: list[Constraint]) -> None:
        """Headings in time order, each within π of the one before (or the keyed Euler angle)."""
        items = sorted([c for c in keys + empties if c.heading is not None and c.frame is not None],
                       key=lambda c: c.frame)
        previous = None
        for c in items:
            keyed = c.euler_heading if c.kind == "KEY" else None
            if keyed is not None and abs(math.remainder(keyed - c.heading, math.tau)) < 1e-6:
                c.heading = keyed
            elif previous is not None:
                c.heading = previous + math.remainder(c.heading - previous, math.tau)
            previous = c.heading

    def base_tables(self, obstacles: list[ObstacleShape], limit: float | None) -> dict:
        shot, fm = self.shot, self.fm
        s = shot.settings
        vehicle = dict(shot.parameters)
        if len(shot.spheres):
            vehicle["collision_spheres"] = [floats(row) for row in shot.spheres]
        else:
            vehicle["collision_radius"] = 0.0
        integrator: dict = {"steps": 0}
        if shot.vehicle_type in ("HELICOPTER", "BOAT"):
            integrator["method"] = "vi-cay"
        if s.weight_duration > 0:
            self.warnings.append("the Duration weight is not used: the keys fix the duration")
        if not any(w > 0 for w in s.weights.values()):
            raise ShotError("every cost weight is zero (Solve Settings › Cost Weights): nothing to minimise")
        cost: dict = {k: float(v) for k, v in s.weights.items() if v > 0}
        cost["input_weights"] = {k: (1.0 / float(v) ** 2 if v > 0 else 1.0) for k, v in shot.input_limits.items()}
        bounds: dict = {}
        if limit is not None:
            v = limit * self.scale
            bounds["speed"] = [-v, v] if self.planar else [0.0, v]
            if v <= 0:
                raise ShotError("a speed limit of zero leaves the vehicle no motion")
        return {"vehicle": vehicle, "integrator": integrator, "obstacles": [o.table(fm) for o in obstacles],
                "bounds": bounds, "cost": cost, "solver": dict(s.solver)}

    def state_table(self, c: Constraint, full: bool) -> dict:
        """A [start] (full) or [goal] table from a constraint, in solve coordinates."""
        p = self.fm.to_solve(c.position)
        out: dict = {}
        if self.planar:
            out["position"] = floats(p[:2])
            if c.heading is not None:
                out["heading"] = float(c.heading)
            if c.speed is not None:
                out["speed"] = float(c.speed) * self.scale
            return out
        out["position"] = floats(p)
        if full or (c.orientation is not None and c.kind in ("KEY", "LAND")):
            out["orientation"] = list(c.orientation)
        elif c.heading is not None:
            out["heading"] = float(c.heading)
        if c.speed is not None:
            forward = c.forward if c.forward is not None else np.array([1.0, 0.0, 0.0])
            out["velocity"] = floats(forward * float(c.speed) * self.scale)
            if c.speed == 0.0 and not full:
                out["angular_velocity"] = [0.0, 0.0, 0.0]
        return out

    def segment(self, index: int, a: float, b: float, base: dict, start: Constraint, keys: list[Constraint],
                timed: list[Constraint], goal_key: Constraint | None) -> Segment:
        fm = self.fm
        seg_map = FrameMap(a, b, fm.fps, fm.steps_per_frame, fm.scale, fm.offset, spacing=fm.spacing,
                           node_count=fm.node_count, frames_per_step=fm.frames_per_step, grid_reason=fm.grid_reason)
        check_steps(seg_map, "" if (a, b) == (fm.frame_start, fm.frame_end) else " (between stops)")
        scenario = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in base.items()}
        scenario["vehicle"] = dict(base["vehicle"])
        if "water" in scenario["vehicle"]:   # a boat's sampled water runs on the shot's clock: this segment's start
            scenario["vehicle"]["water"] = dict(scenario["vehicle"]["water"], time_origin=fm.time(a))
        scenario["integrator"] = dict(base["integrator"], steps=seg_map.steps)
        scenario["time"] = {"duration": seg_map.duration}
        scenario["start"] = self.state_table(start, full=True) if index == 0 else {}
        # the goal: a stop or landing at b, else the vehicle's key at the end, else free
        at_b = [c for c in timed if same_frame(c.frame, b) and c.kind in ("STOP", "LAND")]
        goal: dict = {}
        if at_b:
            c = at_b[0]
            goal = self.state_table(c, full=False)
            if goal_key is not None and same_frame(b, fm.frame_end) and goal_key.heading is not None \
                    and c.heading is None:
                goal.update({k: v for k, v in self.state_table(goal_key, full=False).items()
                             if k in ("heading", "orientation")})
        elif same_frame(b, fm.frame_end) and goal_key is not None:
            goal = self.state_table(goal_key, full=False)
        scenario["goal"] = goal
        # waypoints: keys and pass-throughs strictly inside (a, b], except the goal itself
        waypoints, labels = [], []
        items = [k for k in keys if a + 1e-6 < k.frame <= b + 1e-6 and not (k is goal_key and not at_b)]
        items += [c for c in timed if c.kind == "PASS_THROUGH" and a + 1e-6 < c.frame <= b + 1e-6]
        for c in sorted(items, key=lambda c: (c.frame, c.name)):
            if c.kind == "KEY" and same_frame(c.frame, b) and at_b:
                continue  # the stop/landing at b fixes the position already (checked to agree)
            # a key holds the object's origin, where the artist keyed it (the planned point may lie
            # elsewhere on the body: a car's rear axle, a boat's centre of mass)
            keyed_origin = c.kind == "KEY" and c.origin is not None and any(fm.body_offset)
            p = fm.to_solve(c.origin if keyed_origin else c.position)
            # between nodes the key is imposed on the chord, the bake follows the curve: its departure is
            # taken off the radius (core.shot.grid.key_allowance)
            at = (c.frame - a) / seg_map.step_frames
            radius = grid.key_allowance(c.radius * self.scale, self.accel, seg_map.dt, at - math.floor(at))
            wp = {"time": (c.frame - a) / fm.fps, "position": floats(p[:2] if self.planar else p),
                  "radius": max(radius, 1e-4), "exact": True}
            if keyed_origin:
                point = -np.asarray(fm.body_offset, dtype=float) * self.scale
                wp["point"] = floats(point * ([1.0, 1.0, 0.0] if self.planar else 1.0))
            if c.heading is not None and (c.kind == "KEY" or c.kind == "LAND"):
                wp["heading"] = float(c.heading)
            waypoints.append(wp)
            labels.append(c.describe())
        if waypoints:
            scenario["waypoints"] = waypoints
        for c in self.contacts:  # an obstacle touched in this segment: its floor is lowered around the contact
            if a - 1e-6 <= c.frame <= b + 1e-6:
                table = scenario["obstacles"][c.obstacle] = dict(scenario["obstacles"][c.obstacle])
                when = min(max((c.frame - a) / fm.fps, 0.0), seg_map.duration)
                table["contact"] = [*table.get("contact", []), c.table(when)]
        if not scenario["obstacles"]:
            del scenario["obstacles"]
        if not scenario["bounds"]:
            del scenario["bounds"]
        return Segment(a, b, scenario, labels, continues=index > 0)


def at_body_offset(shot: ShotInput) -> ShotInput:
    """The shot of the point the solve plans (``shot.body_offset`` from the object's origin, body frame):
    each key's position moved by its rotation × offset, the collision spheres taken relative to it,
    and the offset and wheels put on the frame map (for the trajectory's stats and the bake). A Land /
    Dock Here empty marks where the object's origin comes to rest, in the empty's pose: it is moved by
    that rotation × offset too (other empties, whose pose of the vehicle is not known, hold the planned
    point: a boat's centre of mass, a car's rear axle)."""
    fm = shot.frame_map
    offset = np.zeros(3) if shot.body_offset is None else np.asarray(shot.body_offset, dtype=float)
    fm.body_offset = tuple(float(x) for x in offset)
    fm.wheels = dict(shot.wheels)
    if not np.any(offset):
        return shot
    keys = [replace(k, position=np.asarray(k.position, dtype=float) + np.asarray(k.rotation) @ offset,
                    origin=np.asarray(k.position, dtype=float)) for k in shot.keys]
    spheres = np.array(shot.spheres, dtype=float).reshape(-1, 4)
    if len(spheres):
        spheres[:, :3] -= offset * fm.scale
    vertices = None if shot.vertices is None else np.asarray(shot.vertices, dtype=float) - offset * fm.scale
    empties = []
    for c in shot.empties:
        if c.kind == "LAND" and c.position is not None:
            if c.orientation is not None and not shot.planar:
                rot = quaternion.to_matrix(np.asarray(c.orientation, dtype=float))
            else:
                h = float(c.heading or 0.0)
                rot = np.array([[math.cos(h), -math.sin(h), 0.0], [math.sin(h), math.cos(h), 0.0], [0.0, 0.0, 1.0]])
            c = replace(c, position=np.asarray(c.position, dtype=float) + rot @ offset)
        empties.append(c)
    return replace(shot, keys=keys, spheres=spheres, vertices=vertices, empties=empties)


def plan(shot: ShotInput) -> Problem:
    """The problem of a shot; raises ShotError."""
    return Planner(shot).problem()


def refined_problem(problem: Problem, factor: int) -> Problem:
    """``problem`` re-planned with ``factor`` times as many steps in every segment (same shot, same
    spacing; ``core.shot.grid.refine``); raises ShotError above MAX_STEPS."""
    if problem.source is None:
        raise ShotError("this problem cannot be re-planned on a finer grid (it was not planned from a shot)")
    fm = problem.frame_map
    finer = replace(problem.source.frame_map, frames_per_step=fm.step_frames / factor,
                    grid_reason=f"{fm.grid_reason + ', ' if fm.grid_reason else ''}refined {factor}× "
                                "(the motion between nodes came too close to an obstacle)")
    return plan(replace(problem.source, frame_map=finer, warnings=list(problem.source.warnings)))


__all__ = ["ShotInput", "ShotSettings", "KeyPose", "Constraint", "Segment", "Problem", "Planner", "plan",
           "at_body_offset", "refined_problem", "MIN_STEPS",
           "ShotError", "KIND_LABELS", "TIMED_KINDS", "MAX_STEPS", "check_steps"]
