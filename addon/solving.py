"""Problem → solve → trajectory: runs core on the scenario tables of addon.scene_reader.

Core is reached only through its contracts: ``core.dmoc.solve_scenario(Table(dict))`` for
Solve and ``core.simulation.simulate(Table(dict))`` for Simulate. A problem of several
segments (a stop or landing between start and goal) is solved segment after segment, each
starting from the end state of the one before, and the pieces are joined into one
trajectory, which is then mapped to world coordinates (Blender units).

``SolveJob`` runs a solve in a worker thread for the UI: ``progress()`` says how far it
is — the segment, the solver iteration k of the iteration limit and the current constraint
violation (``core.dmoc.solve_scenario``'s ``callback``), and the share of the time budget
used — and ``cancel()`` stops it by raising :class:`SolveCancelled` inside the worker (from
the iteration callback, or asynchronously between iterations). The worker touches no
Blender data; ``apply_outcome`` (main thread) stores and bakes.
"""
from __future__ import annotations

import copy
import ctypes
import threading
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import VehicleMotionError

_JOBS: dict[str, "SolveJob"] = {}   # vehicle name → running job (one solve per vehicle)


class SolveCancelled(BaseException):
    """Raised inside the worker thread by SolveJob.cancel (BaseException: nothing swallows it)."""


@dataclass
class Outcome:
    vehicle: str
    trajectory: object | None = None      # core Trajectory in world coordinates, or None
    converged: bool = False
    status: str = ""
    message: str = ""
    cost: float = float("nan")
    max_violation: float = float("nan")
    iterations: int = 0
    wall_time_s: float = 0.0
    backend: str = ""
    segments: int = 1
    solved_segments: int = 0
    cancelled: bool = False
    error: str = ""                       # the scenario was refused or core failed: nothing to bake
    warnings: list[str] = field(default_factory=list)
    detail: str = ""                      # a failed solve in the solver's words (the console's)
    # For a warm re-solve (addon.live): each segment's solve-space trajectory (multipliers included when it
    # converged), the problem's shape they fit (shape()), and how each segment started ("primal-dual",
    # "primal" or "none": core.dmoc.solve_scenario's stats["warm_start"]).
    segment_trajectories: list = field(default_factory=list)
    shape: tuple = ()
    warm_starts: list[str] = field(default_factory=list)
    gather_time_s: float = 0.0            # reading and planning the scene, when the caller timed it

    @property
    def warm_start(self) -> str:
        """How the solve started: one kind when every segment started alike, else one per segment."""
        kinds = list(dict.fromkeys(self.warm_starts))
        return kinds[0] if len(kinds) == 1 else ", ".join(self.warm_starts)

    def figures(self) -> str:
        seg = f", {self.segments} segments" if self.segments > 1 else ""
        return (f"cost {self.cost:.6g}, max constraint violation {self.max_violation:.2g}, "
                f"{self.iterations} iterations, {self.wall_time_s:.1f} s ({self.backend}{seg})")

    def summary(self) -> str:
        if self.cancelled:
            return f"Solve of '{self.vehicle}' cancelled after {self.wall_time_s:.1f} s; nothing changed"
        if self.error:
            return f"'{self.vehicle}': {self.error}"
        if self.converged:
            return f"Solved '{self.vehicle}': {self.figures()}"
        return f"{self.message} (did not converge: {self.status.replace('_', ' ')}; details in the console)"


# ----------------------------------------------------------------------------- segments

def continue_from(trajectory, problem) -> dict:
    """The [start] table of the next segment: the end state of ``trajectory`` (solve space)."""
    from .properties import SPECS
    t = trajectory
    if SPECS[problem.vehicle_type].planar:
        heading = float(t.heading[-1]) if t.heading is not None else \
            float(2.0 * np.arctan2(t.orientation[-1][3], t.orientation[-1][0]))
        out = {"position": [float(t.position[-1][0]), float(t.position[-1][1])], "heading": heading,
               "speed": float(t.linear_velocity[-1][0])}
        for name, series in t.shape.items():
            out[name] = float(np.asarray(series)[-1])
        return out
    from ..core.lie import quaternion
    q = np.asarray(t.orientation[-1], dtype=float)
    q = q / np.linalg.norm(q)
    r = quaternion.to_matrix(q)
    return {"position": [float(x) for x in t.position[-1]], "orientation": [float(x) for x in q],
            "velocity": [float(x) for x in r @ np.asarray(t.linear_velocity[-1], dtype=float)],
            "angular_velocity": [float(x) for x in t.angular_velocity[-1]]}


_RESTARTING_SHAPES = ("rotor_angle", "tail_rotor_angle")


def join(pieces: list) -> object:
    """One trajectory from consecutive segment trajectories (each starting where the last ended)."""
    from ..core.trajectory import Trajectory
    if len(pieces) == 1:
        return pieces[0]
    first = pieces[0]

    def cat(name):
        arrays = [np.asarray(getattr(p, name), dtype=float) for p in pieces]
        return np.concatenate([arrays[0]] + [a[1:] for a in arrays[1:]])

    t0, times = 0.0, []
    for i, p in enumerate(pieces):
        t = np.asarray(p.time, dtype=float) - float(p.time[0]) + t0
        times.append(t if i == 0 else t[1:])
        t0 = float(t[-1])
    shape = {}
    for name in first.shape:
        if not all(name in p.shape for p in pieces):
            continue
        parts, last = [], None
        for i, p in enumerate(pieces):
            a = np.asarray(p.shape[name], dtype=float)
            if last is not None and name in _RESTARTING_SHAPES:
                a = a - a[0] + last
            parts.append(a if i == 0 else a[1:])
            last = float(parts[-1][-1])
        shape[name] = np.concatenate(parts)
    controls = {name: np.concatenate([np.asarray(p.controls[name], dtype=float) for p in pieces])
                for name in first.controls if all(name in p.controls for p in pieces)}
    n = sum(len(t) for t in times)
    series = {}
    for name, value in first.series.items():
        if isinstance(value, dict):   # per-solve data (core.dmoc.warm's multipliers), not a series over nodes
            continue
        arrays = [np.asarray(p.series.get(name, []), dtype=float) for p in pieces]
        if all(a.ndim >= 1 and len(a) == len(p.time) for a, p in zip(arrays, pieces)):
            series[name] = np.concatenate([arrays[0]] + [a[1:] for a in arrays[1:]])
    momentum = first.momentum_angular is not None and all(p.momentum_angular is not None for p in pieces)
    out = Trajectory(
        time=np.concatenate(times), position=cat("position"), orientation=cat("orientation"),
        angular_velocity=cat("angular_velocity"), linear_velocity=cat("linear_velocity"),
        momentum_angular=cat("momentum_angular") if momentum else None,
        momentum_linear=cat("momentum_linear") if momentum else None,
        heading=cat("heading") if all(p.heading is not None for p in pieces) else None,
        shape=shape, controls=controls, series=series, stats=dict(first.stats), vehicle=first.vehicle)
    assert len(out.time) == n
    return out


# ----------------------------------------------------------------------------- solving

def _explain(problem, segment, trajectory, result) -> str:
    """A failed segment in the artist's terms (core.shot.explain), from the solver's structured failure."""
    from ..core.shot.explain import Failure, explain
    f = result.failure
    failure = None if f is None else Failure(f["group"], f["instance"], f["node"], f["value"])
    return explain(problem.vehicle, failure, segment, problem, trajectory, result.status)


def _frames(segment) -> str:
    from ..core.shot.frames import fmt_frame
    return f"{fmt_frame(segment.frame_start)}–{fmt_frame(segment.frame_end)}"


def shape(problem) -> tuple:
    """What a warm start must match: the vehicle and each segment's number of steps."""
    return (problem.core_type, tuple(int(s.scenario.get("integrator", {}).get("steps", 0))
                                     for s in problem.segments))


def _solve_segment(solve_scenario, scenario: dict, initial, callback):
    """``solve_scenario`` warm from ``initial`` (a solve-space trajectory) when core takes it, else cold:
    a refused warm start (another step count, another vehicle) is no error."""
    from ..core.errors import ScenarioError
    from ..core.scenario import Table
    if initial is not None:
        try:
            return solve_scenario(Table(copy.deepcopy(scenario)), initial=initial, callback=callback)
        except ScenarioError as exc:
            if exc.where != "initial trajectory":
                raise
    return solve_scenario(Table(scenario), callback=callback)


def solve(problem, progress=None, iteration=None, initial: list | None = None) -> Outcome:
    """Solve ``problem`` (:func:`solve_segments`). On an Automatic grid, a converged motion whose collision
    spheres come into an obstacle's margin between nodes by more than the grid allows
    (``core.shot.grid.refine``, measured at every baked frame) is solved once more on a grid twice as fine,
    warm-started from it (``grid.resample_trajectory``); a warning says so. If that re-solve fails, the
    first motion stands, with a warning naming the cut."""
    out = solve_segments(problem, progress, iteration, initial)
    if not out.converged or out.trajectory is None or problem.frame_map.spacing != "AUTOMATIC":
        return out
    from ..core.shot import grid
    from ..core.shot.plan import ShotError
    try:
        found = grid.refine(problem, out.trajectory)
    except ShotError as exc:
        out.warnings.append(f"the motion between nodes comes close to an obstacle, but a finer grid is refused: {exc}")
        return out
    if found is None:
        return out
    finer, cut = found
    warm = [grid.resample_trajectory(t, int(seg.scenario["integrator"]["steps"]))
            for t, seg in zip(out.segment_trajectories, finer.segments)]
    again = solve_segments(finer, progress, iteration, warm)
    if not again.converged:
        out.warnings.append(f"{cut.describe()}; the re-solve on twice the nodes did not converge "
                            f"({again.error or again.message}): the first motion is kept")
        return out
    again.warnings.append(f"{cut.describe()}: solved again on twice the nodes")
    again.iterations += out.iterations
    again.wall_time_s += out.wall_time_s
    return again


def solve_segments(problem, progress=None, iteration=None, initial: list | None = None) -> Outcome:
    """Solve every segment of ``problem`` in turn (synchronously). ``progress(i, n)`` is called
    as segment i of n starts, ``iteration(k, max_violation)`` as the solver reports iteration k
    of that segment (``core.dmoc.solve_scenario``'s callback). ``initial``: per segment, a
    solve-space trajectory to start from (``Outcome.segment_trajectories`` of an earlier solve;
    None or a shorter list: cold for the rest). Never raises for a failed solve
    (what the callbacks raise propagates); a refused scenario is ``Outcome.error``. The
    trajectory is in world coordinates."""
    from ..core.errors import ScenarioError
    try:
        from ..core.dmoc import solve_scenario
    except ImportError as exc:
        return Outcome(problem.vehicle, error=f"the optimiser cannot be loaded ({exc})",
                       segments=len(problem.segments))
    fm = problem.frame_map
    pieces, out = [], Outcome(problem.vehicle, segments=len(problem.segments), warnings=list(problem.warnings))
    out.shape = shape(problem)
    starts = list(initial or ())
    out.cost, out.max_violation = 0.0, 0.0
    t0 = time.perf_counter()
    previous = None
    all_converged = True
    for i, segment in enumerate(problem.segments):
        if progress is not None:
            progress(i, len(problem.segments))
        scenario = copy.deepcopy(segment.scenario)
        if segment.continues:
            scenario["start"] = continue_from(previous, problem)
        try:
            start = starts[i] if i < len(starts) else None
            trajectory, result, _setup = _solve_segment(solve_scenario, scenario, start, iteration)
        except ScenarioError as exc:
            out.error = f"the solver refused the problem: {problem.describe(str(exc), segment)}"
            break
        except ImportError as exc:  # every solvable type has a model: only a broken install gets here
            out.error = f"the optimiser cannot load a module it needs ({exc})"
            break
        except Exception as exc:  # a bug in core: one line for the report, the traceback for the console
            traceback.print_exc()
            where = "" if len(problem.segments) == 1 else f" in frames {_frames(segment)}"
            out.error = (f"the optimiser failed{where} (internal error "
                         f"{type(exc).__name__}{': ' + str(exc) if str(exc) else ''}); nothing changed")
            break
        out.backend = result.backend
        out.iterations += int(result.iterations)
        out.cost += float(result.cost)
        out.max_violation = max(out.max_violation, float(result.max_constraint_violation))
        pieces.append(trajectory)
        out.warm_starts.append(str(trajectory.stats.get("warm_start", "none")))
        previous = trajectory
        out.solved_segments = i + 1
        if not result.converged:
            all_converged = False
            out.status = result.status
            out.message = _explain(problem, segment, trajectory, result)
            out.detail = problem.describe(result.message, segment)
            print(f"Vehicle Motion: '{problem.vehicle}', frames {_frames(segment)}: {result.status}: {out.detail} "
                  f"(cost {result.cost:.6g}, max constraint violation {result.max_constraint_violation:.2g}, "
                  f"{result.iterations} iterations, {result.wall_time_s:.2f} s, {result.backend})")  # for the console
            break
    out.wall_time_s = time.perf_counter() - t0
    if out.error:
        return out
    out.converged = all_converged and out.solved_segments == len(problem.segments)
    if out.converged:
        out.status, out.message = "converged", "converged"
    if pieces:
        out.segment_trajectories = list(pieces)
        joined = join(pieces)
        joined.stats.update(converged=out.converged, status=out.status, message=out.message, cost=out.cost,
                            max_constraint_violation=out.max_violation, iterations=out.iterations,
                            wall_time_s=out.wall_time_s, backend=out.backend, segments=out.segments,
                            warm_start=out.warm_start)
        out.trajectory = fm.trajectory_to_world(joined)
        # the multipliers stay with segment_trajectories (addon.live's warm start); stored with the object
        # they would make its trajectory about 6× larger and slower to store
        from ..core.dmoc.warm import KEY
        out.trajectory.series.pop(KEY, None)
        if out.converged:  # near a contact the spheres may reach in: the real geometry must not
            from ..core.shot.contacts import check_motion
            out.warnings.extend(check_motion(problem, out.trajectory))
    return out


def simulate(sim_problem):
    """Forward simulation of a SimulationProblem → Trajectory in world coordinates.
    Raises VehicleMotionError (core's ScenarioError names the key) for bad input."""
    from ..core.scenario import Table
    from ..core.simulation import simulate as core_simulate
    trajectory = core_simulate(Table(copy.deepcopy(sim_problem.scenario)))
    if len(trajectory.time) < 2:
        raise VehicleMotionError(f"'{sim_problem.vehicle}': the simulation stopped at once")
    blew_up = trajectory.stats.get("blew_up")
    world = sim_problem.frame_map.trajectory_to_world(trajectory)
    if blew_up:
        n = len(trajectory.time) - 1
        world.stats["note"] = f"blew up after {n} steps"
    return world


# ----------------------------------------------------------------------------- the worker

class SolveJob:
    """A solve in a worker thread: start(), progress(), cancel(), done, outcome."""

    def __init__(self, problem, initial=None):
        self.problem = problem
        self.initial = initial            # per segment, a trajectory to start from (solve())
        self.outcome: Outcome | None = None
        self.segment, self.segments = 0, len(problem.segments)
        self.segment_started = self.started = time.perf_counter()
        self.iteration, self.violation = 0, float("nan")     # of the current segment, from the solver
        self.max_iter = max((int(s.scenario.get("solver", {}).get("max_iter", 0)) for s in problem.segments),
                            default=0)
        self._in_core = threading.Event()
        self._cancel = threading.Event()
        self._lock = threading.Lock()     # orders cancel()'s asynchronous raise against leaving core
        self._posted = False              # the asynchronous SolveCancelled was sent (at most once)
        self.thread = threading.Thread(target=self._run, name=f"Vehicle Motion solve {problem.vehicle}",
                                       daemon=True)

    def start(self) -> "SolveJob":
        _JOBS[self.problem.vehicle] = self
        self.thread.start()
        return self

    def _progress(self, i: int, n: int) -> None:
        self.segment, self.segments = i, n
        self.segment_started = time.perf_counter()
        self.iteration, self.violation = 0, float("nan")
        if self._cancel.is_set():
            raise SolveCancelled()

    def _iteration(self, k: int, violation: float) -> None:
        self.iteration, self.violation = int(k), float(violation)
        if self._cancel.is_set():
            raise SolveCancelled()

    def _leave_core(self) -> None:
        """No asynchronous SolveCancelled after this: none is sent any more, and one sent but not yet
        delivered is withdrawn (a cancel can be raised both by a callback and asynchronously)."""
        with self._lock:
            self._in_core.clear()
            if self._posted:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread.ident), None)

    def _run(self) -> None:
        try:
            try:
                self._in_core.set()
                outcome = solve(self.problem, self._progress, self._iteration, initial=self.initial)
            finally:
                self._leave_core()
        except SolveCancelled:
            outcome = Outcome(self.problem.vehicle, cancelled=True, wall_time_s=time.perf_counter() - self.started)
        except BaseException as exc:  # a bug: one line for the user, the traceback for the console
            traceback.print_exc()
            outcome = Outcome(self.problem.vehicle,
                              error=f"Vehicle Motion internal error: {type(exc).__name__}: {exc}")
        self.outcome = outcome

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def progress(self) -> tuple[float, str]:
        """(fraction of the budget used, a short status line naming the iteration and the constraint
        violation). Within a segment the fraction is the larger of the shares of the time limit and
        of the iteration limit used."""
        elapsed = time.perf_counter() - self.segment_started
        limit = max(self.problem.time_limit_s, 1e-3)
        k, violation = self.iteration, self.violation
        share = min(max(elapsed / limit, k / self.max_iter if self.max_iter else 0.0), 0.99)
        fraction = (self.segment + share) / max(self.segments, 1)
        seg = f"segment {self.segment + 1}/{self.segments}, " if self.segments > 1 else ""
        it = f"iteration {k} of {self.max_iter}" if self.max_iter else f"iteration {k}"
        viol = f", constraint violation {violation:.1e}" if violation == violation else ""
        return fraction, (f"Solving '{self.problem.vehicle}': {seg}{it}{viol}, "
                          f"{time.perf_counter() - self.started:.0f} s (limit {limit:.0f} s) — Esc to cancel")

    def cancel(self, wait: float = 5.0) -> None:
        """Stop the worker: its next iteration callback raises SolveCancelled, and so, at once, does
        its next Python instruction (an asynchronous exception: core may be between callbacks)."""
        self._cancel.set()
        with self._lock:
            if self.thread.is_alive() and self._in_core.is_set() and not self._posted:
                self._posted = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread.ident),
                                                           ctypes.py_object(SolveCancelled))
        self.thread.join(wait)

    def finish(self) -> None:
        if _JOBS.get(self.problem.vehicle) is self:
            del _JOBS[self.problem.vehicle]


def running(vehicle_name: str | None = None) -> bool:
    """Is a solve running (for this vehicle, or any)?"""
    jobs = [j for j in _JOBS.values() if not j.done] if vehicle_name is None else \
        [j for n, j in _JOBS.items() if n == vehicle_name and not j.done]
    return bool(jobs)


def cancel_all() -> None:
    """Cancel every running solve (on unregister)."""
    for job in list(_JOBS.values()):
        job.cancel()
        job.finish()


# ----------------------------------------------------------------------------- applying

def apply_outcome(obj, outcome: Outcome, scene, *, bake: bool = True, bake_best_attempt: bool = False,
                  frame_start: int | None = None) -> tuple[str, str]:
    """Store (and bake) a solve's trajectory on ``obj``: (report level, message).

    Converged: bake (unless ``bake`` is False) then store — the trajectory is encoded and the bake
    checks everything before either changes the scene, so an error leaves it unchanged. Not converged: nothing changes
    unless ``bake_best_attempt``. Cancelled or refused: nothing changes."""
    from . import baking, storage
    if outcome.cancelled:
        return "WARNING", outcome.summary()
    if outcome.error:
        return "ERROR", outcome.summary()
    trajectory = outcome.trajectory
    if not outcome.converged and (not bake_best_attempt or trajectory is None):
        return "ERROR", outcome.summary() + "; nothing stored or baked (enable Bake Best Attempt to keep it)"
    if frame_start is not None:
        trajectory.stats["frame_start"] = float(frame_start)
    try:  # refused here, before the bake changes anything, rather than half-way when it is stored
        text = storage.encode(trajectory)
    except VehicleMotionError:
        return "ERROR", (f"'{obj.name}': the {'best attempt' if not outcome.converged else 'solution'} is not "
                         "finite (the optimiser broke down); nothing stored or baked")
    message = outcome.summary()
    if bake:
        result = baking.bake_trajectory(obj, trajectory, scene)
        message += f"; baked frames {result.frames()} onto {len(result.objects)} objects"
        outcome.warnings.extend(result.warnings)
    else:
        message += "; stored (not baked)"
    storage.store(obj, trajectory, text)
    if outcome.warnings:
        message += "; " + "; ".join(outcome.warnings)
    level = "INFO" if outcome.converged and not outcome.warnings else "WARNING"
    return level, message


def simulate_and_apply(obj, scene, *, bake: bool = True) -> tuple[str, str]:
    """Simulate ``obj`` from its keyed control channels (scene_reader.read_simulation), bake
    (unless ``bake`` is False) and store: (report level, message). Raises VehicleMotionError,
    with the scene unchanged, for bad input."""
    from ..core.shot.frames import fmt_frame
    from . import baking, scene_reader, storage
    problem = scene_reader.read_simulation(scene, obj)
    trajectory = simulate(problem)
    fm = problem.frame_map
    steps = len(trajectory.time) - 1
    message = (f"Simulated '{obj.name}': {steps} steps of {fm.dt:.4g} s from frame {fmt_frame(fm.frame_start)} "
               f"({trajectory.stats.get('method', 'variational')})")
    warnings = list(problem.warnings)
    if "note" in trajectory.stats:
        warnings.append(f"the simulation {trajectory.stats['note']}")
    if bake:
        result = baking.bake_trajectory(obj, trajectory, scene)
        message += f"; baked frames {result.frames()}"
        warnings.extend(result.warnings)
    else:
        message += "; stored (not baked)"
    storage.store(obj, trajectory)
    if warnings:
        message += "; " + "; ".join(warnings)
    return ("WARNING" if warnings else "INFO"), message


__all__ = ["Outcome", "SolveJob", "SolveCancelled", "solve", "simulate", "simulate_and_apply", "join",
           "continue_from", "apply_outcome", "running", "cancel_all", "shape"]
