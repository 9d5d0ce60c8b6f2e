"""The boat's cost per optimiser iteration (issue 24, item 2): the clipped-hull external wrench and its Jacobian.

    .venv/bin/python benchmarks/boat_speed.py [--steps 30 60 120 240] [--iterations 8] [--solve-steps 120]
                                              [--baseline REV] [--repeats 5]

The shot: samples/boat_docking.toml (a dock and a buoy) stretched to 12 s, N steps (h = 12 s / N), scipy backend.
Per N: ms per call of ``Boat.external_wrench`` and ``Boat.external_wrench_jacobian`` over the N − 1 steps of the
momentum equations (the initial guess's poses with ~2° attitude noise, as an iterate; the Jacobian right after the
values at the same poses — as the optimiser asks it — and cold, after values elsewhere), best of --repeats; then
ms per iteration of the first --iterations iterations of the scipy solve. Last, the full scipy solve at
--solve-steps: iterations, cost, solve and total seconds (acceptance: well under 20 s at N = 120).

--baseline REV measures the code at git revision REV the same way in the same run (its core/ exported with
``git archive`` to a temporary directory, each tree in its own process; the scenario is this tree's sample) and
prints the ratios baseline / current. Wall-clock times: on a busy machine compare the ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def scenario(steps: int, max_iter: int | None = None) -> str:
    """The docking sample at 12 s and ``steps`` steps on the scipy backend (optionally at most ``max_iter``)."""
    text = (ROOT / "samples" / "boat_docking.toml").read_text()
    text = re.sub(r"(?m)^steps = \d+", f"steps = {steps}", text)
    text = re.sub(r"(?m)^duration = [\d.]+", "duration = 12.0", text)
    text = re.sub(r'(?m)^backend = "\w+"', 'backend = "scipy"', text)
    if max_iter is not None:
        text = re.sub(r"(?m)^max_iter = \d+", f"max_iter = {max_iter}", text)
    return text


def best_ms(call, repeats: int, before=None) -> float:
    """Best wall time of ``call`` in ms over ``repeats`` runs (``before`` runs untimed ahead of each)."""
    best = float("inf")
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best


def call_figures(steps: int, repeats: int) -> dict:
    """ms per external_wrench / external_wrench_jacobian call over the momentum steps of the N-step shot."""
    import numpy as np

    from core.dmoc.initial_guess import initial_guess
    from core.dmoc.scenario import read
    from core.lie import so3
    from core.scenario import loads

    setup = read(loads(scenario(steps)))
    model = setup.model
    y = initial_guess(model, setup.spec)
    rng = np.random.default_rng(0)
    n = steps - 1
    R = model.rotations(y)[1:steps] @ so3.exp(rng.normal(scale=0.03, size=(n, 3)))
    x = y[model.x][1:steps] + np.column_stack([np.zeros((n, 2)), rng.normal(scale=0.01, size=n)])
    xi = y[model.xi][:n] + rng.normal(scale=0.1, size=(n, 6))
    boat = model.boat
    elsewhere = x + [0.0, 0.0, 1e-3]
    return {"values_ms": best_ms(lambda: boat.external_wrench(R, x, xi), repeats),
            "jacobian_ms": best_ms(lambda: boat.external_wrench_jacobian(R, x, xi), repeats,
                                   before=lambda: boat.external_wrench(R, x, xi)),
            "jacobian_cold_ms": best_ms(lambda: boat.external_wrench_jacobian(R, x, xi), repeats,
                                        before=lambda: boat.external_wrench(R, elsewhere, xi))}


def solve_figures(steps: int, max_iter: int | None) -> dict:
    """Iterations, cost and times of the scipy solve of the N-step shot (at most ``max_iter`` iterations)."""
    from core.dmoc import solve_scenario
    from core.scenario import loads

    t0 = time.perf_counter()
    traj, result, _ = solve_scenario(loads(scenario(steps, max_iter)))
    total = time.perf_counter() - t0
    solve = float(traj.stats["solve_time_s"])
    return {"iterations": int(result.iterations), "cost": float(traj.stats["cost"]), "status": result.status,
            "solve_s": solve, "total_s": total, "ms_per_iteration": 1e3 * solve / max(result.iterations, 1)}


def worker(args: argparse.Namespace) -> None:
    """Measure this process's ``core`` (that of the tree on PYTHONPATH) and print the figures as JSON."""
    figures = {"steps": {}}
    for steps in args.steps:
        figures["steps"][steps] = {**call_figures(steps, args.repeats),
                                   **{"first": solve_figures(steps, args.iterations)}}
    if args.solve_steps:
        figures["solve"] = solve_figures(args.solve_steps, None)
    print(json.dumps(figures))


def measure(tree: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker", "--steps", *map(str, args.steps),
           "--iterations", str(args.iterations), "--solve-steps", str(args.solve_steps), "--repeats", str(args.repeats)]
    # PYTHONPATH comes before the venv's own (editable) core on sys.path.
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tree, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def exported(rev: str, into: str) -> str:
    """``core`` at git revision ``rev`` exported under ``into`` (a read-only use of the repository)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "core"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def cell(new: float, base: float | None, fmt: str = "{:8.1f}") -> str:
    if base is None:
        return fmt.format(new)
    return f"{fmt.format(new)} / {fmt.format(base).strip()} (x{base / new:4.1f})"


def report(cur: dict, base: dict | None, args: argparse.Namespace) -> None:
    print(f"Boat, 12 s docking shot (samples/boat_docking.toml), scipy backend; ms per call over the N − 1 momentum "
          f"steps, ms per iteration over the first {args.iterations} iterations"
          + ("; current / baseline (xratio)" if base else ""))
    print(f"{'N':>5}  {'external_wrench':>30}  {'jacobian (after values)':>30}  {'jacobian (cold)':>30}  "
          f"{'ms per iteration':>30}")
    for steps in map(str, args.steps):
        c, b = cur["steps"][steps], (base["steps"][steps] if base else None)
        row = [cell(c[k], b[k] if b else None) for k in ("values_ms", "jacobian_ms", "jacobian_cold_ms")]
        row.append(cell(c["first"]["ms_per_iteration"], b["first"]["ms_per_iteration"] if b else None))
        print(f"{steps:>5}  " + "  ".join(f"{r:>30}" for r in row))
    if args.solve_steps:
        for name, fig in (("current", cur["solve"]), ("baseline", base["solve"] if base else None)):
            if fig is None:
                continue
            print(f"full scipy solve, N = {args.solve_steps} ({name}): {fig['status']}, {fig['iterations']} iterations, "
                  f"cost {fig['cost']:.8g}, solve {fig['solve_s']:.2f} s ({fig['ms_per_iteration']:.0f} ms per "
                  f"iteration), total {fig['total_s']:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[30, 60, 120, 240])
    parser.add_argument("--iterations", type=int, default=8, help="iterations timed per N")
    parser.add_argument("--solve-steps", type=int, default=120, help="N of the full solve (0: none)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", help="git revision to compare against, in the same run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = measure(exported(args.baseline, tmp), args) if args.baseline else None
        cur = measure(str(ROOT), args)
    report(cur, base, args)


if __name__ == "__main__":
    main()
