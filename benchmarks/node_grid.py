"""Node grid (issue 24 item 1): how many nodes Solve plans a shot at, what it costs, and how far the baked
frames depart from the vehicle's dynamics.

    timeout 3000 .venv/bin/python benchmarks/node_grid.py [--only car,helicopter,boat,snakeboard] [--fps 24]
    timeout 3000 .venv/bin/python benchmarks/node_grid.py --sweep [--only car_tunnel,…]

Default: the Blender sample scenes (``samples/build_*_scene.py``: car tunnel 12 s, helicopter between walls
to a landing 6 s, boat docking 3 s, snakeboard 5 s) built at ``--fps`` (24) with two steps a frame, each
solved by ``addon.solving.solve`` (scipy) twice — Node Spacing Automatic (``core.shot.grid``) and Per
Frame (Steps per Frame 2, the grid before) — and measured:

* nodes and step, and the solve's wall time, for both grids;
* departure: the baked motion (``core.shot.resample``, as the bake evaluates it) against the vehicle's
  dynamics re-simulated at the frame rate (``core.vehicles``' own simulators, the solve's control of each
  step held over it) from every node over its step: the largest distance (m) and angle (°) of the planned
  point's pose over every frame. It bounds what the bake adds to the discrete solution: the
  interpolant's own error and the coarse step's discretisation error together;
* keys: the baked pose's largest miss of a key (m) at its frame, against Key Tolerance;
* cut: the baked collision spheres' deepest cut into an obstacle's margin over every frame
  (``core.shot.grid.cut_in``) against what the grid allows; beyond it, the finer grid of
  ``core.shot.grid.refine`` solved again, warm-started from the coarse solution
  (``core.shot.grid.resample_trajectory``).

``--sweep``: the core samples (``samples/*.toml``: car tunnel, helicopter canyon, snakeboard gait, boat
docking) solved at several steps h, each with its departure at 24 fps and its distance from the finest
solution (poses at every frame): how the per-vehicle steps of ``core.shot.grid.VEHICLE_STEP_S`` were
chosen. No Blender.

bpy 4.5 hangs at interpreter exit while an operator class is registered: the add-on is unregistered in a
``finally``. Run under ``timeout``.
"""
from __future__ import annotations

import argparse
import copy
import math
import pathlib
import sys
import time
import tomllib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
_CORE = ["core"]   # the package core is imported as: "core" (--sweep), "vehicle_motion.core" (in Blender)


def _core(name: str):
    """core.<name> as the running mode imports it (one copy of its classes)."""
    import importlib
    return importlib.import_module(f"{_CORE[0]}.{name}")


# ----------------------------------------------------------------------------- departure (core only)

def _vehicle(kind: str, table: dict):
    """The vehicle of a scenario's [vehicle] table, read as the simulators read it."""
    Table = _core("scenario").Table
    values = {k: v for k, v in table.items() if k not in ("collision_spheres", "collision_radius")}
    t = Table(dict(values), "vehicle")
    if kind == "car":
        read_car = _core("scenario.car").read_car
        return read_car(t)
    if kind == "snakeboard":
        read_board = _core("scenario.snakeboard").read_board
        return read_board(t)
    if kind == "helicopter":
        read_helicopter = _core("scenario.helicopter").read_helicopter
        return read_helicopter(t)
    if kind == "boat":
        read_boat = _core("scenario.boat").read_boat
        return read_boat(t)
    raise ValueError(f"no simulator for a {kind}")


def _step(kind: str, vehicle, trajectory, k: int, n: int, dt: float, method: str, alpha: float):
    """The dynamics from node k over n steps of dt with step k's controls (a core Trajectory)."""
    quaternion = _core("lie.quaternion")
    u = {name: np.full(n, float(np.asarray(v)[k])) for name, v in trajectory.controls.items()}
    if kind == "car":
        car = _core("vehicles.car")
        CarInitial, simulate = car.CarInitial, car.simulate
        start = CarInitial(position=(float(trajectory.position[k, 0]), float(trajectory.position[k, 1])),
                           heading=float(trajectory.heading[k]),
                           steering_angle=float(trajectory.shape["steering_angle"][k]),
                           wheel_angle=float(trajectory.shape["wheel_angle"][k]),
                           wheel_rate=float(trajectory.linear_velocity[k, 0]) / vehicle.wheel_radius)
        return simulate(vehicle, start, u, dt, n, alpha)
    if kind == "snakeboard":
        board = _core("vehicles.snakeboard")
        SnakeboardState, simulate = board.SnakeboardState, board.simulate
        s = trajectory.series
        start = SnakeboardState(heading=float(trajectory.heading[k]), x=float(trajectory.position[k, 0]),
                                y=float(trajectory.position[k, 1]),
                                rotor_angle=float(trajectory.shape["rotor_angle"][k]),
                                wheel_angle=float(trajectory.shape["wheel_angle"][k]),
                                rotor_rate=float(np.asarray(s["rotor_rate"])[k]),
                                wheel_rate=float(np.asarray(s["wheel_rate"])[k]),
                                momentum=float(np.asarray(s["nonholonomic_momentum"])[k]))
        return simulate(vehicle, start, u, dt, n, alpha)
    RigidState = _core("integrators.common").RigidState
    R = quaternion.to_matrix(quaternion.normalize(np.asarray(trajectory.orientation[k], dtype=float)))
    start = RigidState(R=R, x=np.array(trajectory.position[k], dtype=float),
                       omega=np.array(trajectory.angular_velocity[k], dtype=float),
                       v=np.array(trajectory.linear_velocity[k], dtype=float))
    return vehicle.simulate(start, u, dt, n, method)


def departure(kind: str, vehicle_table: dict, trajectory, fps: float, method: str = "vi-cay",
              alpha: float = 0.5) -> tuple[float, float]:
    """(m, °): the largest distance and angle between the baked pose (core.shot.resample) and the vehicle's
    dynamics re-simulated at the frame rate from the node before, over every frame of every step.
    ``trajectory`` in solve space (metres, seconds)."""
    quaternion, resample = _core("lie.quaternion"), _core("shot.resample")
    vehicle = _vehicle(kind, vehicle_table)
    t = np.asarray(trajectory.time, dtype=float)
    worst_m = worst_deg = 0.0
    for k in range(len(t) - 1):
        h = t[k + 1] - t[k]
        n = max(1, math.ceil(h * fps - 1e-9))
        sim = _step(kind, vehicle, trajectory, k, n, h / n, method, alpha)
        baked = resample.sample(trajectory, t[k] + np.arange(1, n + 1) * (h / n))
        pos = np.asarray(sim.position, dtype=float)[1:n + 1]
        rot = quaternion.to_matrix(quaternion.normalize(np.asarray(sim.orientation, dtype=float)[1:n + 1]))
        worst_m = max(worst_m, float(np.max(np.linalg.norm(pos - baked.position, axis=1))))
        rel = np.einsum("kji,kjl->kil", rot, baked.rotation)
        cos = np.clip((np.trace(rel, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
        worst_deg = max(worst_deg, float(np.degrees(np.max(np.arccos(cos)))))
    return worst_m, worst_deg


def _angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rel = np.einsum("kji,kjl->kil", a, b)
    return np.degrees(np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)))


# ----------------------------------------------------------------------------- the sweep (core samples)

SWEEP = {"car_tunnel": (28, 56, 70, 100, 200), "helicopter_canyon": (60, 90, 144, 288),
         "snakeboard_gait": (25, 50, 100, 200), "boat_docking": (67, 100, 200)}


def sweep(only: list[str] | None, fps: float = 24.0) -> None:
    solve_scenario, Table = _core("dmoc").solve_scenario, _core("scenario").Table
    resample = _core("shot.resample")
    print("| sample | steps | h (s) | converged | solve (s) | departure (m / °) | from the finest (m / °) |")
    print("|---|---|---|---|---|---|---|")
    for name, counts in SWEEP.items():
        if only and name not in only:
            continue
        data = tomllib.loads((ROOT / "samples" / f"{name}.toml").read_text())
        solver = data.setdefault("solver", {})
        solver.update(backend="scipy", time_limit_s=1200.0, max_iter=max(int(solver.get("max_iter", 500)), 1000))
        kind, duration = data["vehicle"]["type"], float(data["time"]["duration"])
        rows, solved = [], {}
        for steps in counts:
            scenario = copy.deepcopy(data)
            scenario["integrator"]["steps"] = steps
            started = time.perf_counter()
            traj, result, _ = solve_scenario(Table(scenario))
            seconds = time.perf_counter() - started
            dep = departure(kind, data["vehicle"], traj, fps, scenario["integrator"].get("method", "vi-cay"),
                            scenario["integrator"].get("alpha", 0.5))
            solved[steps] = traj
            rows.append((steps, result.converged, seconds, dep))
        frames = np.arange(0.0, duration * fps + 1e-9) / fps
        finest = resample.sample(solved[max(counts)], frames)
        for steps, converged, seconds, dep in rows:
            s = resample.sample(solved[steps], frames)
            gap_m = float(np.max(np.linalg.norm(s.position - finest.position, axis=1)))
            gap_deg = float(np.max(_angle_deg(s.rotation, finest.rotation)))
            print(f"| {name} | {steps} | {duration / steps:.4g} | {'yes' if converged else 'no'} | {seconds:.1f} | "
                  f"{dep[0]:.4f} / {dep[1]:.3f} | {gap_m:.3f} / {gap_deg:.2f} |", flush=True)


# ----------------------------------------------------------------------------- the Blender samples

SCENES = {
    "car": ("build_car_tunnel_scene", "car tunnel, 12 s"),
    "helicopter": ("build_helicopter_scene", "helicopter between walls to a landing, 6 s"),
    "boat": ("build_boat_scene", "boat docking, 3 s"),
    "snakeboard": ("build_snakeboard_scene", "snakeboard past a cone, 5 s"),
}


def solve_space(problem, world):
    """A world trajectory (scene units) back in solve space (metres from the solve origin)."""
    from dataclasses import replace
    fm = problem.frame_map
    return replace(world, position=fm.to_solve(world.position),
                   linear_velocity=np.asarray(world.linear_velocity, dtype=float) * fm.scale)


def keys_miss(problem, world) -> tuple[float, float]:
    """(m, Key Tolerance m): the baked planned point's largest distance from a key at its frame."""
    resample = _core("shot.resample")
    fm = problem.frame_map
    keys = [c for c in problem.constraints if c.kind == "KEY" and c.frame is not None]
    if not keys:
        return 0.0, 0.0
    t = np.asarray(world.time, dtype=float)
    smp = resample.sample(world, np.clip([fm.time(c.frame) for c in keys], t[0], t[-1]))
    dims = slice(0, 2) if problem.vehicle_type in ("CAR", "SNAKEBOARD") else slice(0, 3)
    miss = [float(np.linalg.norm((smp.position[i] - c.position)[dims])) * fm.scale for i, c in enumerate(keys)]
    return max(miss), max(c.radius for c in keys) * fm.scale


def measure(kind: str, problem, outcome, fps: float) -> dict:
    grid = _core("shot.grid")
    scenario = problem.segments[0].scenario
    world = outcome.trajectory
    dep = departure(kind, scenario["vehicle"], solve_space(problem, world), fps,
                    scenario["integrator"].get("method", "vi-cay"), scenario["integrator"].get("alpha", 0.5))
    cut = grid.cut_in(problem, world)
    return {"nodes": len(world.time), "step": float(np.max(np.diff(world.time))), "seconds": outcome.wall_time_s,
            "converged": outcome.converged, "departure": dep, "keys": keys_miss(problem, world), "cut": cut,
            "reason": problem.frame_map.grid_reason}


def refine_and_solve(problem, outcome) -> str:
    """The finer grid's re-solve (warm start) when the baked motion cuts too deep; what happened."""
    solve_scenario, Table = _core("dmoc").solve_scenario, _core("scenario").Table
    grid = _core("shot.grid")
    found = grid.refine(problem, outcome.trajectory)
    if found is None:
        return "no refinement needed"
    finer, cut = found
    if len(finer.segments) != 1:
        return f"{cut.describe()}: refinement of a shot with stops not run here"
    coarse = solve_space(problem, outcome.trajectory)
    steps = finer.segments[0].scenario["integrator"]["steps"]
    started = time.perf_counter()
    traj, result, _ = solve_scenario(Table(finer.segments[0].scenario), initial=grid.resample_trajectory(coarse, steps))
    seconds = time.perf_counter() - started
    world = finer.frame_map.trajectory_to_world(traj)
    after = grid.cut_in(finer, world)
    state = "converged" if result.converged else "not converged"
    return (f"{cut.describe()}; refined to {steps + 1} nodes, warm-started: {state} in {seconds:.1f} s, cut "
            f"{after.depth * 100:.3g} cm (allowed {after.allowed * 100:.3g} cm)")


def scenes(only: list[str] | None, fps: int) -> None:
    import importlib

    import bpy

    from build_car_tunnel_scene import addon_registered
    rows = []
    with addon_registered():
        from vehicle_motion.addon import scene_reader, solving
        _CORE[0] = "vehicle_motion.core"
        for kind, (module, label) in SCENES.items():
            if only and kind not in only:
                continue
            builder = importlib.import_module(module)
            names = builder.build(fps=fps, steps_per_frame=2, time_limit_s=1800.0, max_iter=3000)
            scene = bpy.context.scene
            obj = bpy.data.objects[names.get("vehicle") or names.get("car")]
            row = {"kind": kind, "label": label}
            for spacing in ("AUTOMATIC", "PER_FRAME"):
                scene.vehicle_motion.node_spacing = spacing
                problem = scene_reader.read_problem(scene, obj)
                outcome = solving.solve(problem)
                if outcome.trajectory is None:
                    row[spacing] = {"error": outcome.error or outcome.status}
                    continue
                row[spacing] = measure(kind, problem, outcome, float(fps))
                if spacing == "AUTOMATIC":
                    row["refine"] = refine_and_solve(problem, outcome)
                print(f"{kind} {spacing}: {row[spacing]}", flush=True)
            rows.append(row)
    print()
    print("| sample | grid | nodes (step) | solve (s) | departure (m / °) | keys miss (m, tolerance) | "
          "cut into a margin (cm, allowed) |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        for spacing in ("AUTOMATIC", "PER_FRAME"):
            m = row.get(spacing, {})
            if "error" in m or not m:
                print(f"| {row['label']} | {spacing.lower()} | failed: {m.get('error', '—')} | | | | |")
                continue
            cut = m["cut"]
            cut_text = "—" if cut is None else f"{cut.depth * 100:.3g} ({cut.allowed * 100:.3g})"
            print(f"| {row['label']} | {spacing.replace('_', ' ').lower()} | {m['nodes']} ({m['step']:.3g} s) | "
                  f"{m['seconds']:.1f}{'' if m['converged'] else ' (not converged)'} | "
                  f"{m['departure'][0]:.4f} / {m['departure'][1]:.3f} | {m['keys'][0]:.4f} ({m['keys'][1]:.3g}) | "
                  f"{cut_text} |")
    for row in rows:
        print(f"* {row['label']}: automatic grid: {row.get('AUTOMATIC', {}).get('reason', '')}; "
              f"{row.get('refine', '')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="the core samples at several steps (no Blender)")
    parser.add_argument("--only", help="comma-separated samples")
    parser.add_argument("--fps", type=int, default=24)
    args = parser.parse_args()
    only = args.only.split(",") if args.only else None
    if args.sweep:
        sweep(only, float(args.fps))
    else:
        scenes(only, args.fps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
