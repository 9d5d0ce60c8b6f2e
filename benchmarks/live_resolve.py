"""Live Solve (addon.live): warm re-solves of the car tunnel sample after its goal key or an obstacle moves
0.5 m, against cold solves of the same scene in the same run. In-process, scipy backend.

    OPENBLAS_NUM_THREADS=1 timeout 900 .venv/bin/python benchmarks/live_resolve.py [--fps 24] [--repeats 10]

The scene is samples/build_car_tunnel_scene.py (its defaults: 24 fps, 12 s, the add-on's default Node
Spacing). Solve Trajectory (store only) solves it once, which fills the live cache; then ``repeats`` times
the goal key (its Y location F-curve key, as the Graph Editor moves it) goes 0.5 m across, back and forth,
and ``addon.live.resolve`` re-solves; then the same with the Boulder obstacle moved 0.5 m. Each re-solve is
split into gather + plan (``scene_reader.read_problem``: reading the scene and core.shot's planning), solve
(``solving.solve``) and store (encode and keep the trajectory, ``solving.apply_outcome`` without a bake).
The cold figure: the median of ``--cold`` solves of the moved scene from no start (gather + plan, solve),
after one untimed solve that loads the modules. Also: the fingerprint the depsgraph handler computes at
every update while Live Solve is on (median of 200).

bpy 4.5 hangs at interpreter exit while an operator class is registered: the add-on is unregistered on the
way out (``addon_registered``). Run under ``timeout``.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

import bpy

import build_car_tunnel_scene as sample

MOVE_M = 0.5


def _goal_key(car):
    """The goal key of the car's Y location F-curve (its last key)."""
    from vehicle_motion.addon import action_compat
    for fc in action_compat.fcurves(action_compat.assigned(car)):
        if fc.data_path == "location" and fc.array_index == 1:
            return fc, fc.keyframe_points[-1]
    raise SystemExit("the sample's car has no Y location key")


def _move_goal(car, dy: float) -> None:
    fc, key = _goal_key(car)
    for point in (key.co, key.handle_left, key.handle_right):
        point.y += dy
    fc.update()


def _move_boulder(dy: float) -> None:
    bpy.data.objects["Boulder"].location.y += dy
    bpy.context.view_layer.update()


def _cold(scene, car, runs: int) -> dict:
    from vehicle_motion.addon import scene_reader, solving
    gather, solve, iterations = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        problem = scene_reader.read_problem(scene, car)
        t1 = time.perf_counter()
        outcome = solving.solve(problem)
        t2 = time.perf_counter()
        if not outcome.converged:
            raise SystemExit(f"the cold solve did not converge: {outcome.summary()}")
        gather.append(t1 - t0)
        solve.append(t2 - t1)
        iterations.append(outcome.iterations)
    return {"gather": statistics.median(gather), "solve": statistics.median(solve),
            "iterations": statistics.median(iterations), "steps": solving.shape(problem)[1]}


def _live(scene, car, move, repeats: int) -> dict:
    from vehicle_motion.addon import live
    gather, solve, store, iterations, kinds = [], [], [], [], set()
    for i in range(repeats):
        move(MOVE_M if i % 2 == 0 else -MOVE_M)
        t0 = time.perf_counter()
        outcome = live.resolve(car, scene)
        total = time.perf_counter() - t0
        if not outcome.converged:
            raise SystemExit(f"live re-solve {i + 1} failed: {scene.vehicle_motion.last_report}")
        gather.append(outcome.gather_time_s)
        solve.append(outcome.wall_time_s)
        store.append(total - outcome.gather_time_s - outcome.wall_time_s)
        iterations.append(outcome.iterations)
        kinds.add(outcome.warm_start)
    return {"gather": statistics.median(gather), "solve": statistics.median(solve),
            "store": statistics.median(store), "iterations": statistics.median(iterations),
            "max_iterations": max(iterations), "start": ", ".join(sorted(kinds))}


def _fingerprint_ms(scene, car) -> float:
    from vehicle_motion.addon import live
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        live.fingerprint(scene, car)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fps", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--cold", type=int, default=3)
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:])
    with sample.addon_registered():
        names = sample.build(args.fps)
        scene, car = bpy.context.scene, bpy.data.objects[names["car"]]
        spacing = getattr(scene.vehicle_motion, "node_spacing", "PER_FRAME")
        if bpy.ops.vehicle_motion.solve_trajectory(bake_after_solve=False) != {"FINISHED"}:
            raise SystemExit(f"the sample did not solve: {scene.vehicle_motion.last_report}")
        goal = _live(scene, car, lambda dy: _move_goal(car, dy), args.repeats)
        boulder = _live(scene, car, _move_boulder, args.repeats)
        cold = _cold(scene, car, args.cold)
        print_ms = _fingerprint_ms(scene, car)
    print(f"car tunnel sample, {args.fps} fps, Node Spacing {spacing}: {cold['steps']} steps; "
          f"{platform.processor() or platform.machine()}, Blender {bpy.app.version_string}")
    print(f"{'':28s} {'gather+plan':>12s} {'solve':>9s} {'store':>9s} {'iterations':>11s}  start")
    print(f"{'cold (median of ' + str(args.cold) + ')':28s} {1e3 * cold['gather']:10.1f} ms "
          f"{1e3 * cold['solve']:6.0f} ms {'':>9s} {cold['iterations']:11.0f}  none")
    for label, row in ((f"goal key ±{MOVE_M} m", goal), (f"Boulder ±{MOVE_M} m", boulder)):
        print(f"{label + ' (median of ' + str(args.repeats) + ')':28s} {1e3 * row['gather']:10.1f} ms "
              f"{1e3 * row['solve']:6.0f} ms {1e3 * row['store']:6.1f} ms {row['iterations']:11.0f}  "
              f"{row['start']} (most {row['max_iterations']} iterations)")
    print(f"fingerprint (the depsgraph handler, per update): {print_ms:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
