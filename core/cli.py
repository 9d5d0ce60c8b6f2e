"""Command line: ``python -m core simulate SCENARIO.toml --out TRAJ.json`` and
``python -m core solve SCENARIO.toml --out TRAJ.json [--plot PNG] [--backend scipy|ipopt]``.

Exit status of ``simulate``: 0 done (a blow-up is reported in ``stats.blew_up``), 2 bad input (one
line on stderr naming the key; no output file created or overwritten).
Exit status of ``solve``: 0 converged, 3 not converged (the output is still written, with
``stats.converged = false`` and the reason in ``stats.status`` / ``stats.message``, unless the
result is not finite: then nothing is written), 2 bad scenario
(one line naming the key, nothing written).
Every path (``--out``, ``--plot``, ``--initial``) is checked before any work; a bad one is refused
with exit 2 and one line naming the option, and nothing is written.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from typing import Sequence

from .errors import ScenarioError, VehicleMotionError, one_line
from .outputs import check_plot_path, check_writable, commit, staged, write_text

INITIAL_WHERE = "initial trajectory"  # where solve_scenario names a warm start it cannot use

EXIT_OK, EXIT_BAD_INPUT, EXIT_NOT_CONVERGED = 0, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="Vehicle Motion: Lie group variational integrators and DMOC.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sim = sub.add_parser("simulate", help="forward-simulate a scenario with given initial state and controls")
    sim.add_argument("scenario", help="scenario file (TOML)")
    sim.add_argument("--out", required=True, help="trajectory output (JSON)")
    sol = sub.add_parser("solve", help="optimise a trajectory (DMOC): start, goal, obstacles, bounds, cost")
    sol.add_argument("scenario", help="scenario file (TOML)")
    sol.add_argument("--out", required=True, help="trajectory output (JSON) with controls and solver stats")
    sol.add_argument("--plot", help="also draw the solution to this PNG file")
    sol.add_argument("--backend", choices=("scipy", "ipopt"), help="override [solver] backend")
    sol.add_argument("--initial", help="warm start from this trajectory (JSON, same number of steps)")
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        # A run that breaks down numerically says so in its status (simulate: stats.blew_up; solve:
        # numerical_failure), not in numpy's overflow warnings on stderr.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            # Every path is checked before any work: a bad one is refused and nothing is written.
            out = check_writable(args.out, "--out")
            if args.command == "simulate":
                from .scenario import load
                from .simulation import simulate

                traj = simulate(load(args.scenario))
                _write(traj, out)
                return EXIT_OK
            return _solve(args, out)
    except VehicleMotionError as exc:  # ScenarioError included: one line naming the key or option
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _write(traj, out: str, text: str | None = None) -> None:
    write_text(out, traj.to_json() if text is None else text, "--out")


def _solve(args: argparse.Namespace, out: str) -> int:
    from .dmoc import solve_scenario
    from .dmoc.solve import ipopt_available
    from .scenario import load
    from .trajectory import Trajectory

    plot = check_plot_path(args.plot) if args.plot is not None else None
    if args.backend == "ipopt" and not ipopt_available():
        raise ScenarioError("--backend", "ipopt needs cyipopt, which is not installed (scripts/install_ipopt.sh)")
    initial = None
    if args.initial is not None:
        try:
            initial = Trajectory.read_json(args.initial)
        except OSError as exc:
            raise ScenarioError("--initial", f"cannot read: {exc.strerror or exc}") from None
        except VehicleMotionError as exc:
            raise ScenarioError("--initial", str(exc)) from None
    root = load(args.scenario)
    try:
        traj, result, setup = solve_scenario(root, args.backend, initial)
    except ScenarioError as exc:
        if exc.where == INITIAL_WHERE:
            raise ScenarioError("--initial", exc.problem) from None
        raise
    if setup.options.backend == "ipopt" and not ipopt_available():  # pragma: no cover - solve refuses first
        raise ScenarioError("[solver] backend", "ipopt needs cyipopt, which is not installed")
    try:
        text = traj.to_json()  # once: the check for NaN is the serialisation itself
    except VehicleMotionError:  # NaN never reaches a file: a breakdown is a failed solve with nothing written
        print(f"numerical_failure: the optimiser broke down (its result is not finite; {result.status}: "
              f"{one_line(result.message)}); nothing written", file=sys.stderr)
        return EXIT_NOT_CONVERGED
    if plot is None:
        _write(traj, out, text)
    else:
        from .dmoc.plot import plot_solution

        with staged(plot, "--plot") as tmp:  # drawn first: a drawing that fails leaves no JSON either
            try:
                plot_solution(traj, setup, tmp)
            except (OSError, ValueError, RuntimeError) as exc:
                raise ScenarioError("--plot", f"cannot draw {plot}: {exc}") from None
            _write(traj, out, text)
            commit(tmp, plot, "--plot")
    print(f"{result.status}: {result.message} (cost {result.cost:.6g}, max violation "
          f"{result.max_constraint_violation:.2g}, {result.iterations} iterations, "
          f"{result.wall_time_s:.2f} s, {result.backend})", file=sys.stderr)
    return EXIT_OK if result.converged else EXIT_NOT_CONVERGED


def main() -> None:
    sys.exit(run())
