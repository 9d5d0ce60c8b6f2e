"""The farm job run locally by ``openjd`` (Open Job Description's reference runner): its wall time over
the three small shots of tests/blender/test_farm.py, and its throughput with one and with two runs at
once (two farm workers on this machine).

    timeout 1800 .venv/bin/python benchmarks/farm_scaling.py [--repeat 1] [--keep DIR]

1. Three shots (a car, a helicopter, a car whose Max Iterations of 2 cannot converge): one bundle from
   scripts/farm_bundle.py, ``openjd run … --step Summary --run-dependencies``: the wall time, each
   shot's task time (its process), batch time (open → save) and solve time, and the summary table.
2. Six shots (two cars, four helicopters): the Bake step over all six tasks in one ``openjd run``, then
   as two runs at once over three tasks each (``--tasks``, each half a car and two helicopters):
   shots per second of each, their ratio (2 on a machine with two free cores and no other cost), the
   CPU time used (the same work both ways) and the load average before (other processes' share).

Each Bake task is its own process (the Python with bpy standing in for Blender), as on a farm; the
figures include its start-up (importing bpy, opening and saving the .blend). ``--repeat N``: the median
of N runs of each measurement. Needs openjd-cli (a test dependency of .venv: scripts/ensure_env.sh).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import resource
import tempfile
import time

import bpy  # noqa: F401  (the shots are built here, with this Python's bpy)
from build_car_tunnel_scene import addon_registered
from small_shots import build_car, build_helicopter  # the shots of tests/blender/test_farm.py

ROOT = pathlib.Path(__file__).resolve().parents[1]


def openjd() -> str:
    found = shutil.which("openjd", path=os.pathsep.join([os.path.dirname(sys.executable), str(ROOT / ".venv" / "bin")]))
    if found is None:
        raise SystemExit("farm_scaling: openjd is not installed (bash scripts/ensure_env.sh)")
    return found


def make_bundle(shots: list[pathlib.Path], bundle: pathlib.Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "scripts" / "farm_bundle.py"), *map(str, shots), "--out", str(bundle),
                    "--python", sys.executable], check=True, capture_output=True, text=True)


def run(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([openjd(), "run", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def cpu_seconds() -> float:
    """User and system time of the finished child processes (every task's process included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(*runs: list[str]) -> tuple[float, float]:
    """Start every ``openjd run`` at once: (the wall time until the last ends, the CPU time they used). Each
    must succeed."""
    t0, c0 = time.perf_counter(), cpu_seconds()
    procs = [run(a) for a in runs]
    outputs = [p.communicate(timeout=1800)[0] for p in procs]
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    for p, out in zip(procs, outputs):
        if p.returncode != 0 or "Session ended successfully" not in out:
            raise SystemExit(f"farm_scaling: openjd run failed:\n{out[-3000:]}")
    return wall, cpu


def three_shots(work: pathlib.Path, repeat: int) -> None:
    shots = [work / "car.blend", work / "helicopter.blend", work / "stuck.blend"]
    make_bundle(shots, work / "bundle3")
    walls = []
    for i in range(repeat):
        out = work / f"out3-{i}"
        walls.append(timed([str(work / "bundle3" / "template.yaml"), "--step", "Summary", "--run-dependencies",
                            "-p", f"OutputDir={out}"])[0])
    entries = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    print(f"three shots, openjd run --step Summary --run-dependencies: wall {statistics.median(walls):.2f} s "
          f"(runs: {', '.join(f'{w:.2f}' for w in walls)})")
    for e in entries:
        print(f"  {pathlib.Path(e['shot']).name:18s} {e['status']:14s} task {e['task_time_s']:.2f} s (process), "
              f"batch {e['batch_time_s']:.2f} s (open → save), solve {e['solve_time_s']:.2f} s, "
              f"{e['iterations']} iterations")
    print("  summary.txt:")
    for line in (out / "summary.txt").read_text(encoding="utf-8").splitlines():
        print("    " + line)


def scaling(work: pathlib.Path, repeat: int) -> None:
    names = ["car-a", "heli-a", "heli-b", "car-b", "heli-c", "heli-d"]
    for name in names:
        shutil.copy(work / ("car.blend" if name.startswith("car") else "helicopter.blend"), work / f"{name}.blend")
    make_bundle([work / f"{n}.blend" for n in names], work / "bundle6")
    template = str(work / "bundle6" / "template.yaml")
    halves = []
    for k, part in enumerate((names[:3], names[3:])):
        path = work / f"half{k}.json"
        path.write_text(json.dumps([{"Shot": str(work / f"{n}.blend"), "Name": n} for n in part]))
        halves.append(f"file://{path}")
    one, two = [], []
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    for i in range(repeat):
        one.append(timed([template, "--step", "Bake", "-p", f"OutputDir={work / f'out6-one-{i}'}"]))
        two.append(timed(*([template, "--step", "Bake", "--tasks", h, "-p", f"OutputDir={work / f'out6-two-{i}'}"]
                            for h in halves)))
    (t1, c1), (t2, c2) = ((statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
                          for runs in (one, two))
    print(f"six shots on {os.cpu_count()} cores (load average before: {load}): one run {t1:.2f} s "
          f"({6 / t1:.3f} shots/s, {c1:.1f} s CPU), two runs at once {t2:.2f} s ({6 / t2:.3f} shots/s, "
          f"{c2:.1f} s CPU): throughput ratio {t1 / t2:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description="openjd run over the farm bundle: wall time and scaling")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement (the median)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    args = parser.parse_args()
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="farm_scaling_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        with addon_registered():   # bpy 4.5 hangs at exit with an operator class registered: unregistered here
            build_car(work / "car.blend")
            build_helicopter(work / "helicopter.blend")
            build_car(work / "stuck.blend", max_iter=2)
        three_shots(work, max(1, args.repeat))
        scaling(work, max(1, args.repeat))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
