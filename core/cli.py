"""Command line: ``python -m core simulate SCENARIO.toml --out TRAJ.json``.

Exit status: 0 done (a blow-up is reported in ``stats.blew_up``), 2 bad input (one
line on stderr naming the key; no output file created or overwritten).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .errors import ScenarioError, VehicleMotionError

EXIT_OK, EXIT_BAD_INPUT = 0, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="Vehicle Motion: Lie group variational integrators and DMOC.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sim = sub.add_parser("simulate", help="forward-simulate a scenario with given initial state and controls")
    sim.add_argument("scenario", help="scenario file (TOML)")
    sim.add_argument("--out", required=True, help="trajectory output (JSON)")
    return parser


def _check_out(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ScenarioError("--out", f"folder does not exist: {folder}")
    if os.path.isdir(path):
        raise ScenarioError("--out", f"is a folder: {path}")


def run(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_out(args.out)
        if args.command == "simulate":
            from .scenario import load
            from .simulation import simulate

            traj = simulate(load(args.scenario))
            traj.write_json(args.out)
            return EXIT_OK
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except VehicleMotionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_BAD_INPUT


def main() -> None:
    sys.exit(run())
