"""Live Solve: re-solve a solved vehicle, warm-started, when its keys, constraint empties or obstacles change.

With Scene › Vehicle Motion › Live Solve on, a ``depsgraph_update_post`` handler compares, for every
vehicle of the scene with a solved trajectory stored, a cheap :func:`fingerprint` of what the scene
reader gathers (the vehicle's keys, settings and parts, the constraint empties and obstacles it uses,
the solve settings — no evaluation, no frame change) with the one its last solve read. A change marks
the vehicle, and a ``bpy.app.timers`` timer re-solves it ``DEBOUNCE_S`` after its last change, one
solve at a time (a change during a solve queues another after it). Anything else — a frame change,
a bake, a stored trajectory, a selection — leaves the fingerprint as it is.

A re-solve starts from the last solve of the same vehicle: its solve-space segment trajectories, with
the solver's multipliers (``core.dmoc.warm``), kept here in memory per vehicle name with the problem's
shape (``solving.shape``: the vehicle and each segment's steps). A key or obstacle moved a little
re-solves in a few iterations ("primal-dual" warm start); a problem of another shape starts cold.
Solve Trajectory's own solves are cold, and fill the cache.

A live re-solve stores its result and redraws the path preview, but does not bake: a bake writes new
actions for the vehicle and its parts at every change. The vehicles re-solved live are baked when
Live Solve is turned off (Bake bakes the stored path at any time). A failed or refused re-solve
leaves the stored solution as it was and says so in one line (``Scene.vehicle_motion.last_report``).

Where it runs: on the main thread when the warm start applies and the vehicle's last solve took
under ``MAIN_THREAD_S`` (the viewport waits about as long), otherwise in a ``solving.SolveJob``
worker that the timer polls, so the UI never waits for a long solve.

Headless: :func:`resolve` does the same re-solve synchronously. The cache is cleared on file load
and on unregister. Importing this module imports neither core nor scipy.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

import bpy
import numpy as np

if TYPE_CHECKING:
    from .solving import Outcome

DEBOUNCE_S = 0.2      # s after a vehicle's last change before it is re-solved
MAIN_THREAD_S = 0.3   # s: a re-solve expected to take less runs on the main thread
POLL_S = 0.05         # s between looks at a worker solve

# Scene settings that are not the problem (the UI's state); every other one is.
_SCENE_STATE = frozenset({"rna_type", "last_report", "show_path", "solve_running", "solve_progress",
                          "solve_status", "live_solve"})
_CHANNELS = ("location", "rotation_euler", "rotation_quaternion", "scale", "delta_location",
             "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale")
_SPEED_PATH = "vehicle_motion.speed"


@dataclass
class _Solution:
    shape: tuple          # solving.shape of the problem it solved
    trajectories: list    # solve space, one per segment
    seconds: float        # how long that solve took


@dataclass
class _Running:
    vehicle: str
    scene: str
    job: object           # solving.SolveJob
    print_: tuple
    gather_s: float


_solutions: dict[str, _Solution] = {}          # vehicle name → its last converged solve
_seen: dict[str, tuple] = {}                   # vehicle name → fingerprint its last solve read
_latest: dict[str, tuple] = {}                 # vehicle name → fingerprint at the handler's last look
_dirty: dict[str, tuple[str, float]] = {}      # vehicle name → (scene name, time of its last change)
_live_stored: dict[str, set[str]] = {}         # scene name → vehicles a live re-solve stored (baked on Live off)
_solved_memo: dict[str, tuple[int, bool]] = {}  # vehicle name → (hash of its stored data, was it solved)
_running: _Running | None = None
_busy = False                                  # reading the scene: the handler has nothing to look at


# ----------------------------------------------------------------------------- the fingerprint

def _floats(values) -> tuple:
    return tuple(float(v) for v in values)


def _matrix(m) -> tuple:
    return tuple(float(v) for row in m for v in row)


def _keys(ob) -> tuple:
    """The key values of ob's source action (the artist's keys, also when a bake replaced them)."""
    from . import action_compat, scene_reader
    ref = scene_reader.source_action(ob)
    out = []
    for fc in action_compat.fcurves(ref) if ref is not None else ():
        if fc.mute:
            continue
        co = np.empty(2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        out.append((fc.data_path, fc.array_index, co.tobytes()))
    return tuple(out)


def _unkeyed(ob, keys: tuple) -> tuple:
    """The transform channels no key drives, as the reader takes them (a baked object's from before its bake)."""
    keyed = {(path, index) for path, index, _ in keys}
    s = ob.vehicle_motion
    rest = {"location": s.rest_location, "rotation_quaternion": s.rest_rotation_quaternion,
            "rotation_euler": s.rest_rotation_euler} if s.is_baked else {}
    out: list = [ob.rotation_mode]
    for path in _CHANNELS:
        values = rest.get(path, getattr(ob, path))
        out.extend(float(v) for i, v in enumerate(values) if (path, i) not in keyed)
    return tuple(out)


def _pose(ob) -> tuple:
    """Where ob's pose comes from: its keys (and its parent's) when it is animated — a frame change moves it,
    its keys stay — else its world matrix."""
    from . import scene_reader
    if not scene_reader._is_animated(ob):
        return _matrix(ob.matrix_world)
    keys = _keys(ob)
    parent = None if ob.parent is None else (_pose(ob.parent), _matrix(ob.matrix_parent_inverse))
    return keys, _unkeyed(ob, keys), parent


def _settings(group, names) -> tuple:
    """``(name, value)`` of the named settings of a property group; objects by name."""
    out = []
    for name in names:
        value = getattr(group, name)
        if isinstance(value, bpy.types.ID):
            value = value.name
        elif not isinstance(value, (str, bool, int, float)) and value is not None:
            value = _floats(value)
        out.append((name, value))
    return tuple(out)


def _scene_print(scene) -> tuple:
    s = scene.vehicle_motion
    names = [p.identifier for p in s.bl_rna.properties if p.identifier not in _SCENE_STATE]
    render, units = scene.render, scene.unit_settings
    return (_settings(s, names), render.fps, render.fps_base, units.scale_length, scene.frame_start,
            scene.frame_end)


def _vehicle_print(obj) -> tuple:
    from .properties import CHILD_ROLES, CHILD_ROLES_BY_TYPE, PARAMETERS_BY_TYPE
    s = obj.vehicle_motion
    roles = CHILD_ROLES_BY_TYPE[s.vehicle_type]
    names = ["vehicle_type", "car_geometry", "rotor_geometry", "collision_radius",
             *PARAMETERS_BY_TYPE[s.vehicle_type], *roles, *dict.fromkeys(CHILD_ROLES[r][1] for r in roles)]
    keys = _keys(obj)
    speed = None if any(path == _SPEED_PATH for path, _, _ in keys) else float(s.speed)
    # the parts' placement and meshes (a car's wheels, a helicopter's rotors), not their baked spin
    parts = tuple((p.name, _floats(p.location), _floats(p.scale), _matrix(p.bound_box))
                  for p in (getattr(s, r) for r in roles) if p is not None)
    return _settings(s, names), speed, _pose(obj), _matrix(obj.bound_box), parts


def _empties(scene, obj) -> list:
    """The constraint empties (and other objects set as constraints) that apply to ``obj``."""
    out = []
    for ob in scene.objects:
        s = ob.vehicle_motion
        if s.constraint_kind != "NONE" and ob != obj and s.constraint_vehicle in (None, obj):
            out.append(ob)
    return sorted(out, key=lambda o: o.name)


def _obstacles(scene, obj) -> list:
    """Objects of an Obstacles collection and objects flagged as obstacles, but for ``obj`` and its parts."""
    from . import scene_reader
    found = {}
    for coll in [scene.collection, *scene.collection.children_recursive]:
        if scene_reader._OBSTACLE_COLLECTION_NAME.match(coll.name):
            found.update((ob.name, ob) for ob in coll.all_objects)
    found.update((ob.name, ob) for ob in scene.objects if ob.vehicle_motion.is_obstacle)
    family = {obj.name, *(ob.name for ob in obj.children_recursive)}
    return [found[name] for name in sorted(found) if name not in family]


def _empty_print(ob) -> tuple:
    s = ob.vehicle_motion
    return (ob.name, ob.type, s.constraint_kind, s.constraint_timing, s.constraint_frame, s.speed_limit,
            ob.empty_display_size, _pose(ob))


def _obstacle_print(ob) -> tuple:
    s = ob.vehicle_motion
    return (ob.name, ob.type, s.obstacle_shape, s.obstacle_margin, s.constraint_kind, s.vehicle_type,
            _matrix(ob.bound_box), _pose(ob))


def fingerprint(scene, obj) -> tuple:
    """A cheap summary of what the scene reader gathers to solve ``obj`` in ``scene`` (nothing is evaluated,
    the frame does not move): equal prints, the same problem. Never raises: a scene the reader would
    refuse gives its error as the print."""
    try:
        return (_scene_print(scene), _vehicle_print(obj), tuple(_empty_print(ob) for ob in _empties(scene, obj)),
                tuple(_obstacle_print(ob) for ob in _obstacles(scene, obj)))
    except Exception as exc:  # the reader says what is wrong when it reads it
        return ("unreadable", type(exc).__name__, str(exc))


# ----------------------------------------------------------------------------- the cache

def _is_solved(ob) -> bool:
    """Does ``ob`` keep a solved trajectory (not a simulation)? Decoded once per stored version."""
    s = ob.vehicle_motion
    if not s.has_trajectory or s.vehicle_type in ("NONE", "RIGID_BODY"):
        return False
    key = hash(s.trajectory_data)
    memo = _solved_memo.get(ob.name)
    if memo is None or memo[0] != key:
        from . import storage
        try:
            solved = "backend" in storage.decode(s.trajectory_data).stats
        except Exception:  # damaged: Bake reports it
            solved = False
        memo = _solved_memo[ob.name] = (key, solved)
    return memo[1]


def watched(scene) -> list:
    """The vehicles of ``scene`` that Live Solve follows: those with a solved trajectory stored."""
    return [ob for ob in scene.objects if _is_solved(ob)]


def _settle(name: str, print_: tuple) -> None:
    """``name`` was solved (or refused) from the scene of ``print_``: nothing to do until that changes."""
    _seen[name] = print_
    if _latest.get(name, print_) == print_:
        _dirty.pop(name, None)


def remember(obj, outcome: Outcome, print_: tuple | None = None) -> None:
    """Keep a converged solve's segment trajectories (solve space) for the next live re-solve of ``obj``, and
    the fingerprint of the scene it read. Call it after the trajectory is stored (Solve Trajectory does)."""
    if not outcome.converged or not outcome.segment_trajectories:
        return
    name = obj.name
    _solutions[name] = _Solution(tuple(outcome.shape), list(outcome.segment_trajectories), outcome.wall_time_s)
    _solved_memo[name] = (hash(obj.vehicle_motion.trajectory_data), True)
    if print_ is not None:
        _settle(name, print_)


def _initial(name: str, problem) -> tuple[list | None, bool]:
    """(the trajectories to start ``problem`` from, or None; whether the solve is expected to be quick)."""
    from . import solving
    solution = _solutions.get(name)
    if solution is None or solution.shape != solving.shape(problem):
        return None, False
    return solution.trajectories, solution.seconds < MAIN_THREAD_S


def forget(name: str | None = None) -> None:
    """Drop what is kept for vehicle ``name`` (every vehicle: None)."""
    for table in (_solutions, _seen, _latest, _dirty, _solved_memo):
        if name is None:
            table.clear()
        else:
            table.pop(name, None)


# ----------------------------------------------------------------------------- noticing changes

def check(scene) -> list[str]:
    """Look at the vehicles Live Solve follows in ``scene``; mark those whose fingerprint changed since their
    last solve (a vehicle seen for the first time — solved in an earlier session — is taken as it is) and
    schedule their re-solve. The names marked now."""
    changed = []
    now = time.perf_counter()
    for ob in watched(scene):
        name, print_ = ob.name, fingerprint(scene, ob)
        seen = _seen.setdefault(name, print_)
        if _latest.get(name) == print_:
            continue  # nothing new since the last look (an unrelated update)
        _latest[name] = print_
        if print_ == seen:
            _dirty.pop(name, None)  # moved back to what was solved
        else:
            _dirty[name] = (scene.name, now)
            changed.append(name)
    if changed:
        _schedule()
    return changed


def pending() -> list[str]:
    """Vehicles waiting for a live re-solve."""
    return sorted(_dirty)


@bpy.app.handlers.persistent
def _on_depsgraph_update(scene, depsgraph=None) -> None:
    if _busy:
        return
    try:
        settings = getattr(scene, "vehicle_motion", None)
        if settings is not None and settings.live_solve:
            check(scene)
    except Exception:  # a bug must not break Blender's updates: the console has it
        traceback.print_exc()


@bpy.app.handlers.persistent
def _on_load(*_args) -> None:
    reset()


# ----------------------------------------------------------------------------- re-solving

def _one_line(text: str) -> str:
    return " ".join(str(text).replace("; ", ", ").split())


def _report(scene, text: str) -> str:
    line = _one_line(text)
    try:
        scene.vehicle_motion.last_report = line
    except ReferenceError:  # the scene was deleted
        pass
    return line


def _start_kind(outcome) -> str:
    return {"primal-dual": "warm start", "primal": "warm start, path only", "none": "cold start"}.get(
        outcome.warm_start, f"starts: {outcome.warm_start}")


def _message(outcome) -> str:
    """The one line a live re-solve reports."""
    name = outcome.vehicle
    if outcome.error:
        return f"Live Solve: {outcome.error} — the stored path of '{name}' is unchanged"
    if not outcome.converged:
        return f"Live Solve: '{name}' did not re-solve ({outcome.message}) — its stored path is unchanged"
    count = len(outcome.warnings)
    warned = f", {count} warning{'s' if count > 1 else ''} in the console" if count else ""
    return (f"Live Solve: re-solved '{name}' in {outcome.iterations} iterations, {outcome.wall_time_s:.2f} s "
            f"({_start_kind(outcome)}){warned} — stored, not baked")


def _gather(obj, scene):
    """(problem, fingerprint, seconds) of ``obj`` in ``scene``, or an Outcome saying why it cannot be read."""
    global _busy
    from ..core.errors import VehicleMotionError
    from . import scene_reader, solving
    name = obj.name
    print_ = fingerprint(scene, obj)
    _busy = True
    t0 = time.perf_counter()
    try:
        problem = scene_reader.read_problem(scene, obj)
    except VehicleMotionError as exc:
        _settle(name, print_)  # not again until something changes
        return solving.Outcome(name, error=str(exc))
    except Exception as exc:  # a bug: one line for the report, the traceback for the console
        traceback.print_exc()
        _settle(name, print_)
        return solving.Outcome(name, error=f"Vehicle Motion internal error: {type(exc).__name__}: {exc}")
    finally:
        _busy = False
    return problem, print_, time.perf_counter() - t0


def _solve(problem, initial):
    from . import solving
    try:
        return solving.solve(problem, initial=initial)
    except Exception as exc:  # a bug: one line for the report, the traceback for the console
        traceback.print_exc()
        return solving.Outcome(problem.vehicle, error=f"Vehicle Motion internal error: {type(exc).__name__}: {exc}")


def _apply(obj, scene, outcome, print_: tuple) -> str:
    """Store a converged re-solve (no bake), keep it for the next one, redraw the preview; report one line."""
    from . import preview, solving
    _settle(outcome.vehicle, print_)
    if outcome.cancelled:
        return _report(scene, f"Live Solve of '{outcome.vehicle}' stopped — its stored path is unchanged")
    if outcome.converged:
        try:
            level, message = solving.apply_outcome(obj, outcome, scene, bake=False)
        except Exception as exc:  # a bug: one line for the report, the traceback for the console
            traceback.print_exc()
            level, message = "ERROR", f"Vehicle Motion internal error: {type(exc).__name__}: {exc}"
        if level == "ERROR":
            return _report(scene, f"Live Solve: {message} — the stored path of '{outcome.vehicle}' is unchanged")
        remember(obj, outcome)
        _live_stored.setdefault(scene.name, set()).add(obj.name)
        for warning in outcome.warnings:
            print(f"Vehicle Motion: Live Solve of '{obj.name}': {warning}")
        preview.tag_redraw()
    return _report(scene, _message(outcome))


def _vehicle_name(obj) -> str | None:
    try:
        return obj.name
    except ReferenceError:  # the object was deleted
        return None


def resolve(obj, scene) -> Outcome:
    """Re-solve ``obj`` in ``scene`` now, on this thread, from its last solve when the problem has the same
    shape (else cold), store the result without baking it and redraw the path preview: the
    ``solving.Outcome`` (``warm_start``, ``iterations``, ``wall_time_s`` for the solve, ``gather_time_s``
    for reading and planning the scene). A failed or refused solve leaves the stored solution as it was;
    the scene's ``last_report`` says what happened in one line. Never raises for bad input."""
    from . import solving
    name = _vehicle_name(obj)
    if name is None:
        outcome = solving.Outcome("?", error="the vehicle was deleted before its live solve")
        _report(scene, _message(outcome))
        return outcome
    if solving.running(name):
        outcome = solving.Outcome(name, error=f"'{name}' is being solved, Live Solve waits for it")
        _report(scene, _message(outcome))
        return outcome
    gathered = _gather(obj, scene)
    if isinstance(gathered, solving.Outcome):
        _report(scene, _message(gathered))
        return gathered
    problem, print_, gather_s = gathered
    initial, _quick = _initial(name, problem)
    outcome = _solve(problem, initial)
    outcome.gather_time_s = gather_s
    _apply(obj, scene, outcome, print_)
    return outcome


# ----------------------------------------------------------------------------- the timer

def _schedule() -> None:
    # background mode runs no timers (scripts call tick() or resolve()), and the bpy 4.5 module hangs at exit
    # after a file load with a timer registered
    if not bpy.app.background and not bpy.app.timers.is_registered(tick):
        bpy.app.timers.register(tick, first_interval=DEBOUNCE_S)


def _start(name: str, scene_name: str) -> None:
    """Re-solve vehicle ``name``: on this thread when quick (module doc), else in a worker."""
    global _running
    from . import solving
    scene = bpy.data.scenes.get(scene_name)
    if scene is None or not scene.vehicle_motion.live_solve:
        return
    obj = bpy.data.objects.get(name)
    if obj is None:
        forget(name)
        _report(scene, f"Live Solve: '{name}' was deleted or renamed before its re-solve, nothing solved")
        return
    gathered = _gather(obj, scene)
    if isinstance(gathered, solving.Outcome):
        _report(scene, _message(gathered))
        return
    problem, print_, gather_s = gathered
    initial, quick = _initial(name, problem)
    if quick:
        outcome = _solve(problem, initial)
        outcome.gather_time_s = gather_s
        _apply(obj, scene, outcome, print_)
        return
    _running = _Running(name, scene_name, solving.SolveJob(problem, initial).start(), print_, gather_s)
    _report(scene, f"Live Solve: re-solving '{name}' in the background")


def _finish_worker() -> None:
    global _running
    running, _running = _running, None
    running.job.finish()
    outcome = running.job.outcome
    outcome.gather_time_s = running.gather_s
    scene, obj = bpy.data.scenes.get(running.scene), bpy.data.objects.get(running.vehicle)
    if scene is None:
        return
    if obj is None:
        forget(running.vehicle)
        _report(scene, f"Live Solve: '{running.vehicle}' was deleted or renamed while it was re-solved, "
                       "nothing stored")
        return
    _apply(obj, scene, outcome, running.print_)


def _tick() -> float | None:
    from . import solving
    if _running is not None:
        if not _running.job.done:
            return POLL_S
        _finish_worker()
    if not _dirty:
        return None
    name, (scene_name, changed) = min(_dirty.items(), key=lambda item: item[1][1])
    wait = changed + DEBOUNCE_S - time.perf_counter()
    if wait > 0:
        return wait
    if solving.running(name):  # Solve Trajectory is solving it: after that
        return POLL_S
    del _dirty[name]
    _start(name, scene_name)
    return POLL_S if _running is not None or _dirty else None


def tick() -> float | None:
    """The timer (``bpy.app.timers``): collect a finished worker solve, then start the next re-solve once its
    vehicle has not changed for ``DEBOUNCE_S``. Seconds until it wants to run again; None: nothing left."""
    try:
        return _tick()
    except Exception:  # a bug: the console has it; the timer stops rather than repeat it
        traceback.print_exc()
        return None


def stop(scene_name: str | None = None) -> None:
    """Cancel the worker re-solve and drop the pending ones (of one scene, or all)."""
    global _running
    if _running is not None and scene_name in (None, _running.scene):
        _running.job.cancel()
        _running.job.finish()
        _running = None
    for name, (owner, _) in list(_dirty.items()):
        if scene_name in (None, owner):
            del _dirty[name]


# ----------------------------------------------------------------------------- Live Solve on / off

def _bake_live(scene) -> str | None:
    """Bake the stored paths of the vehicles re-solved live in ``scene``: one line, or None when there were none."""
    from ..core.errors import VehicleMotionError
    from . import baking
    baked, failed = [], []
    for name in sorted(_live_stored.pop(scene.name, ())):
        obj = bpy.data.objects.get(name)
        if obj is None or not obj.vehicle_motion.has_trajectory:
            continue
        try:
            result = baking.bake_stored(obj, scene)
            baked.append(f"'{name}' (frames {result.frames()})")
        except VehicleMotionError as exc:
            failed.append(str(exc))
    if not baked and not failed:
        return None
    text = f"Live Solve off: baked {', '.join(baked)}" if baked else "Live Solve off"
    return text + (f" — not baked: {', '.join(failed)}" if failed else "")


def toggled(scene, on: bool) -> None:
    """Live Solve was turned on or off in ``scene`` (the setting's update). On: follow its solved vehicles (a
    change made since their last solve is re-solved). Off: stop, and bake what was re-solved live."""
    if on:
        vehicles = watched(scene)
        if not vehicles:
            _report(scene, f"Live Solve is on, but no vehicle in '{scene.name}' has a solved trajectory yet: "
                           "solve one (Solve Trajectory) and its changes are re-solved as you make them")
            return
        check(scene)
        names = ", ".join(f"'{ob.name}'" for ob in vehicles)
        # a baked vehicle plays its bake: its own keys (read from the action it had before) are out of reach
        baked = ", ".join(f"'{ob.name}'" for ob in vehicles if ob.vehicle_motion.is_baked)
        hint = f" ({baked} baked: Clear Bake to edit its keys)" if baked else ""
        _report(scene, f"Live Solve follows {names}{hint}: changes are re-solved and stored, and baked when "
                       "Live Solve is turned off")
        return
    stop(scene.name)
    line = _bake_live(scene)
    if line is not None:
        _report(scene, line)


# ----------------------------------------------------------------------------- registration

def reset() -> None:
    """Forget everything (file load, unregister): cancel the worker re-solve, drop the cache."""
    stop()
    forget()
    _live_stored.clear()
    if bpy.app.timers.is_registered(tick):
        bpy.app.timers.unregister(tick)


def _handlers() -> tuple:
    # before a load too: the worker stops and the timer goes before the objects they refer to
    return ((bpy.app.handlers.depsgraph_update_post, _on_depsgraph_update), (bpy.app.handlers.load_pre, _on_load),
            (bpy.app.handlers.load_post, _on_load))


def register() -> None:
    for handlers, function in _handlers():
        if function not in handlers:
            handlers.append(function)


def unregister() -> None:
    for handlers, function in _handlers():
        while function in handlers:
            handlers.remove(function)
    reset()


__all__ = ["fingerprint", "watched", "check", "pending", "remember", "forget", "resolve", "tick", "stop",
           "toggled", "reset", "register", "unregister", "DEBOUNCE_S", "MAIN_THREAD_S"]
