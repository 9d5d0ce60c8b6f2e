"""The command line contract under a seeded mutation fuzzer (issue 19): ~300 cases built from the
bundled samples by ``tests/fuzz_scenarios.py`` (wrong types, NaN/inf, huge and tiny numbers, missing
and unknown keys, wrong list lengths, odd strings, bad references, impossible goals, broken files,
bad paths and warm starts), each run through ``core.cli.run`` in a forked child (a segfault is a
failure of its case, not of the session) and checked against the README's contract: exit 0/2
(simulate) or 0/2/3 (solve), no traceback, one line on stderr naming the key for exit 2 with nothing
written, finite JSON otherwise, honest solver stats.

A failure's test id names the case (``NNN-category-sample-mutation``); to see it in full:
``.venv/bin/python tests/fuzz_scenarios.py --seed 2026 --n 300 --only NNN`` (``--dump NNN`` prints
the scenario). Counts per category for any seed: ``tests/fuzz_scenarios.py --seed 1 --n 600``.
"""
from __future__ import annotations

import json
import math
import tomllib

import pytest

from tests import fuzz_scenarios as fz

SEED = 2026
N_CASES = 300          # 199 simulate, 101 solve (each solve capped at 15 iterations / 2 s)
CASES = fz.cases(SEED, N_CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_contract_holds(case, tmp_path):
    res = fz.run_case(case, tmp_path)
    detail = (f"\nargv: {case.argv}\nexpect: {case.expect} {case.reason}\nexit: {res.code} "
              f"({res.seconds:.2f} s)\nstderr: {res.stderr.strip()[:500]!r}")
    assert not res.problems, "\n".join(res.problems) + detail


# -- the fuzzer itself ----------------------------------------------------------------------------------
def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_cases_are_seeded_and_cover_every_sample_and_category():
    assert fz.cases(SEED, N_CASES) == CASES
    assert fz.cases(SEED, 60) == CASES[:60]           # a longer run starts with the same cases
    assert fz.cases(SEED + 1, 60) != CASES[:60]
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.sample for c in CASES} == set(fz.samples())
    assert {c.category for c in CASES} == set(fz.CATEGORIES)
    commands = {name: cmd for name, (cmd, _) in fz.samples().items()}
    assert {"simulate", "solve"} == set(commands.values())
    vehicles = {d["vehicle"]["type"] for _, d in fz.samples().values()}
    assert vehicles == {"rigid_body", "car", "snakeboard", "helicopter", "boat", "chain", "tree"}


def test_writer_round_trips_samples_and_mutations():
    for path in sorted(fz.SAMPLES.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        assert _same(tomllib.loads(fz.dumps(data)), data), path.name
    odd = {"a": {"nan": math.nan, "inf": -math.inf, "s": 'q"\n\\é\x00', "b": [True, 1, 2.5e-300],
                 "t": {"x": [[1, 2], []]}, "aot": [{"k": 1}, {"k": {"deep": [1.0]}}]},
           "key with space": 1, "a.b": 2, "": 3, "mixed": [{"x": 1}, 2]}
    assert _same(tomllib.loads(fz.dumps(odd)), odd)
    for case in CASES:
        if case.category != "broken_file":
            tomllib.loads(case.scenario.decode("utf-8"))   # every mutated scenario is valid TOML


def test_base_scenarios_are_cheap():
    for command, data in fz.samples().values():
        if command == "solve":
            assert data["integrator"]["steps"] <= fz.SOLVE_STEPS
            assert data["solver"]["max_iter"] <= 30 and data["solver"]["time_limit_s"] <= 3
        else:
            assert data["integrator"]["steps"] <= fz.SIM_STEPS


@pytest.mark.parametrize("fake, expected", [
    ("traceback", "traceback: ZeroDivisionError"),
    ("two lines", "not one"),
    ("nan output", "output not finite JSON"),
    ("writes then 2", "--out created"),
    ("exit 7", "exit code 7"),
    ("segfault", "crash: SIGSEGV"),
])
def test_checker_reports_a_broken_contract(monkeypatch, tmp_path, fake, expected):
    """The checker is not vacuous: a CLI that breaks the contract in each way is reported."""
    import os
    import signal
    import sys

    import core.cli

    def run(argv):
        out = argv[argv.index("--out") + 1]
        if fake == "traceback":
            return 1 // 0
        if fake == "two lines":
            print("error: [vehicle] mass: bad\nsecond line", file=sys.stderr)
            return 2
        if fake == "nan output":
            with open(out, "w") as f:
                json.dump({"time": [0.0, float("nan")]}, f)
            return 0
        if fake == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if fake == "writes then 2":
            with open(out, "w") as f:
                f.write("{}")
            print("error: [vehicle] mass: bad", file=sys.stderr)
            return 2
        return 7

    monkeypatch.setattr(core.cli, "run", run)
    case = next(c for c in CASES if c.command == "simulate" and c.category == "wrong_type" and not c.sentinel)
    problems = fz.check_case(case, tmp_path)
    assert any(expected in p for p in problems), problems
