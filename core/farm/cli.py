"""Command lines of the farm tools.

``bundle``: ``python scripts/farm_bundle.py SHOT.blend|FOLDER [...] --out BUNDLE_DIR [options]`` writes an
Open Job Description bundle (:mod:`.bundle`). ``summary``: ``summary OUTPUT_DIR --tasks TASKS.json``, the
job's last step (:mod:`.summary`). Exit status: 0 done, 2 bad input (one line on stderr naming it;
nothing written).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..errors import VehicleMotionError, one_line
from . import bundle, summary

EXIT_OK, EXIT_BAD_INPUT = 0, 2
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit 2, like every other bad input."""

    def error(self, message: str) -> None:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)}\n")


def non_negative(kind):
    """An argparse type: a finite number ≥ 0 of ``kind`` (int or float)."""
    def parse(text: str):
        value = kind(text)
        if not 0 <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be a finite number ≥ 0, not {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


def bundle_parser(prog: str = "farm_bundle") -> argparse.ArgumentParser:
    p = OneLineParser(prog=prog, description="Write an Open Job Description bundle that solves and bakes the vehicles "
                                       "of many shots on a render farm, then summarises the outcomes.")
    p.add_argument("shots", nargs="*", metavar="SHOT", help=".blend files, or folders of them")
    p.add_argument("--out", required=True, metavar="BUNDLE_DIR",
                   help="bundle folder: template.yaml, parameter_values.yaml, asset_references.yaml, tasks.json, "
                        "bake_task.sh, summary_task.sh")
    p.add_argument("--output-dir", metavar="DIR", help="default of the OutputDir job parameter (BUNDLE_DIR/output)")
    p.add_argument("--blender", default="", metavar="EXE", help="default of the Blender job parameter")
    p.add_argument("--python", default="", metavar="EXE", help="default of the Python job parameter")
    p.add_argument("--package", default=PACKAGE_DIR, metavar="DIR",
                   help="default of the VehicleMotion job parameter (this package's folder)")
    p.add_argument("--vehicle", action="append", default=[], metavar="NAME",
                   help="bake only this vehicle (repeat for several); default: every vehicle of each shot")
    p.add_argument("--per-vehicle", action="store_true", help="one task per shot and --vehicle, not per shot")
    p.add_argument("--max-iter", type=non_negative(int), default=0, help="MaxIterations (0: each scene's own)")
    p.add_argument("--time-limit", type=non_negative(float), default=0.0, help="TimeLimit in s (0: each scene's own)")
    p.add_argument("--backend", default="SCIPY", type=str.upper, choices=bundle.BACKENDS, help="SolverBackend")
    p.add_argument("--task-timeout", type=non_negative(int), default=3600, help="TaskTimeout in s")
    p.add_argument("--name", default="", help="the job's name")
    return p


def summary_parser(prog: str = "summary") -> argparse.ArgumentParser:
    p = OneLineParser(prog=prog, description="Gather a farm job's reports into summary.json and summary.txt")
    p.add_argument("output_dir", metavar="OUTPUT_DIR")
    p.add_argument("--tasks", required=True, metavar="TASKS_JSON", help="the job's task list (tasks.json)")
    return p


def run_bundle(argv: Sequence[str], prog: str = "farm_bundle") -> int:
    args = bundle_parser(prog).parse_args(list(argv))
    try:
        if args.task_timeout < 1:
            raise VehicleMotionError("--task-timeout: must be at least 1 s")
        shots = bundle.collect_shots(args.shots)
        tasks = bundle.plan_tasks(shots, args.vehicle, args.per_vehicle)
        settings = bundle.JobSettings(
            package_dir=os.path.abspath(args.package),
            output_dir=os.path.abspath(args.output_dir or os.path.join(args.out, "output")),
            blender=args.blender, python=args.python, max_iter=args.max_iter, time_limit_s=args.time_limit,
            backend=args.backend, task_timeout_s=args.task_timeout, name=args.name, vehicles=list(args.vehicle),
            per_vehicle=args.per_vehicle)
        if not os.path.isfile(os.path.join(settings.package_dir, "addon", "batch.py")):
            raise VehicleMotionError(f"--package: no Vehicle Motion package in {settings.package_dir} "
                                     "(addon/batch.py is missing)")
        written = bundle.write_bundle(args.out, tasks, settings)
    except VehicleMotionError as exc:
        print(f"{prog}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"{prog}: {len(tasks)} tasks over {len({t.shot for t in tasks})} shots; wrote {', '.join(written)}")
    return EXIT_OK


def run_summary(argv: Sequence[str], prog: str = "summary") -> int:
    args = summary_parser(prog).parse_args(list(argv))
    if not os.path.isdir(args.output_dir):
        print(f"{prog}: error: OUTPUT_DIR: no such folder: {args.output_dir}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        tasks = summary.read_tasks(args.tasks)
        entries = summary.gather(args.output_dir, tasks)
        json_path, text_path = summary.write(args.output_dir, entries)
    except (ValueError, VehicleMotionError) as exc:
        print(f"{prog}: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    with open(text_path, encoding="utf-8") as f:
        print(f.read(), end="")
    print(f"{prog}: wrote {json_path} and {text_path}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``bundle …`` or ``summary …`` (the first argument picks the tool)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    tools = {"bundle": run_bundle, "summary": run_summary}
    if not argv or argv[0] not in tools:
        print(f"core.farm: error: the first argument must be one of {', '.join(tools)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return tools[argv[0]](argv[1:], prog=f"core.farm {argv[0]}")


__all__ = ["main", "run_bundle", "run_summary", "bundle_parser", "summary_parser", "OneLineParser", "non_negative",
           "PACKAGE_DIR"]
