"""Seeded mutation fuzzer for the ``python -m core`` command line contract (issue 19).

Not a test module: plain functions that ``tests/core/test_fuzz_cli.py`` parametrises over, and a
``__main__`` that counts, per category, the cases whose contract held or broke::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python tests/fuzz_scenarios.py --seed 1 --n 600
    .venv/bin/python tests/fuzz_scenarios.py --seed 2026 --n 300 --show broken   # every broken case
    .venv/bin/python tests/fuzz_scenarios.py --seed 2026 --n 300 --only 17       # one case, in full
    .venv/bin/python tests/fuzz_scenarios.py --seed 2026 --n 300 --dump 17       # its scenario and argv

The contract (README "Command line"): ``simulate`` exits 0 (no NaN/inf in the output) or 2 (bad
input: one line on stderr naming the key, no output created or overwritten); ``solve`` exits 0
(converged), 3 (not converged: the output is still written with ``stats.converged = false`` and a
``stats.status`` of STATUSES) or 2 (bad scenario: one line, neither ``--out`` nor ``--plot``
written). No traceback ever.

How cases are made: every bundled sample (``samples/*.toml``; a sample with ``[time]`` or
``[goal]`` is a solve scenario, any other a simulate scenario) is read with tomllib and made cheap
(simulate: at most SIM_STEPS steps, ``[controls.*] values`` cut to match; solve: at most
SOLVE_STEPS steps, the scipy backend, ``max_iter`` ≤ SOLVE_MAX_ITER, ``time_limit_s`` ≤
SOLVE_TIME_LIMIT_S). A case then mutates that table in one way of one category (CATEGORIES) and
writes it back with the small TOML writer below (``tomli_w`` is not a pinned dependency), or
breaks the file's bytes, or the command line around a good scenario. ``cases(seed, n)`` is
deterministic (one ``random.Random(seed)``) and a prefix of ``cases(seed, m)`` for m > n.

``check_case(case, tmpdir)`` runs the case through ``core.cli.run(argv)`` in a forked child (stderr
and stdout captured, the working directory set to tmpdir, SIGALRM after CASE_TIMEOUT_S, an
address-space cap so that a runaway allocation fails fast; a segfault in a C extension becomes this
case's problem, "crash: SIGSEGV (at core/...)", instead of ending the run) and returns the problems
found (empty: the contract held). An exception escaping ``run`` is a traceback, a broken contract.

Besides the generic contract each case carries ``expect``, the exit codes that are right for that
mutation (e.g. a NaN must be refused, a goal inside an obstacle must not be reported converged),
and ``must_name``, words one of which the one-line error has to contain. RuntimeWarnings count as
stderr lines (``python -m core`` prints them); on exit 0/3 one from core is reported as "warning"
(the test suite's pytest settings, pyproject.toml, make them errors).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import faulthandler
import io
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import time
import tomllib
import traceback
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# cheap base scenarios
SIM_STEPS = 40
SOLVE_STEPS = 20
SOLVE_MAX_ITER = 15
SOLVE_TIME_LIMIT_S = 2.0
# guards
CASE_TIMEOUT_S = 20.0
MEMORY_HEADROOM = 4 << 30          # bytes of address space a case may add before MemoryError
TIME_LIMIT_SLACK_S = 2.0           # solve_time_s may exceed [solver] time_limit_s by this much

STATUSES = ("converged", "infeasible", "iteration_limit", "time_limit", "stalled", "numerical_failure")
SENTINEL = b"SENTINEL: a file that was here before the run; exit 2 must leave it untouched\n"
HUGE_STEPS = 10_000_000            # a trajectory far beyond any sane output size (~1 GB)

CATEGORIES = ("wrong_type", "nonfinite", "extreme", "missing_key", "unknown_key", "list_length",
              "bad_string", "bad_reference", "impossible_goal", "broken_file", "cli")
# relative weights per command (impossible goals are solve-only)
WEIGHTS = {
    "simulate": {"wrong_type": 3, "nonfinite": 2, "extreme": 3, "missing_key": 2, "unknown_key": 2,
                 "list_length": 2, "bad_string": 1, "bad_reference": 1, "broken_file": 2, "cli": 2},
    "solve": {"wrong_type": 2, "nonfinite": 2, "extreme": 5, "missing_key": 2, "unknown_key": 2,
              "list_length": 2, "bad_string": 1, "bad_reference": 1, "impossible_goal": 3,
              "broken_file": 1, "cli": 3},
}

# keys whose lists have a fixed length (a row of collision_spheres/thrusters/directions too)
FIXED_LENGTH_KEYS = {
    "position", "orientation", "inertia", "base_inertia", "angular_velocity", "linear_velocity",
    "velocity", "center", "half_extents", "a", "b", "wind", "current", "damping", "axis", "offset",
    "gravity", "speed", "wheel_angle", "steering_angle", "rotor_angle", "torque", "steering_rate",
    "rotor_torque", "steering_torque", "collective", "yaw", "pitch_tilt", "roll_tilt",
    "values", "amplitude", "frequency", "phase", "joint_angles", "joint_rates",
}
ROW_KEYS = {"collision_spheres", "thrusters", "directions"}
# direct keys of these tables that must be positive (0 or negative is bad input)
POSITIVE_KEYS = {
    "vehicle": {"mass", "base_mass", "hull_length", "hull_beam", "hull_height", "wheel_radius",
                "wheelbase", "half_wheelbase", "rotor_inertia", "wheel_inertia", "yaw_inertia",
                "max_thrust", "max_collective", "max_yaw", "max_tilt", "max_torque", "max_steering_angle",
                "max_steering_rate", "max_wheel_angle", "max_rotor_torque", "max_steering_torque"},
    "integrator": {"dt", "steps"},
    "time": {"duration", "min", "max"},
    "solver": {"max_iter", "time_limit_s", "tol", "constraint_tol"},
}
CHOICE_KEYS = {"type", "method", "transform", "preset", "backend", "hessian"}
TARGET_KEYS = ("steps", "dt", "duration", "mass", "max_iter", "time_limit_s")


# ------------------------------------------------------------------------------------------------
# TOML writer: tables, arrays of tables, arrays, ints, floats incl. nan/inf, strings, bools
# ------------------------------------------------------------------------------------------------
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _is_aot(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON escapes (\", \\, \n, \uXXXX) are valid TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"no TOML for {type(v).__name__}")


def _emit(lines: list[str], path: tuple[str, ...], table: dict[str, Any], header: str | None) -> None:
    if header is not None:
        lines.append("")
        lines.append(header)
    for k, v in table.items():
        if not isinstance(v, dict) and not _is_aot(v):
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in table.items():
        if isinstance(v, dict):
            p = path + (k,)
            _emit(lines, p, v, "[" + ".".join(_key(x) for x in p) + "]")
    for k, v in table.items():
        if _is_aot(v):
            p = path + (k,)
            for item in v:
                _emit(lines, p, item, "[[" + ".".join(_key(x) for x in p) + "]]")


def dumps(data: dict[str, Any]) -> str:
    """TOML text that tomllib reads back as ``data``."""
    lines: list[str] = []
    _emit(lines, (), data, None)
    return "\n".join(lines).lstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------------
# samples
# ------------------------------------------------------------------------------------------------
def sample_command(data: dict[str, Any]) -> str:
    return "solve" if ("time" in data or "goal" in data) else "simulate"


_SAMPLES: dict[str, tuple[str, dict[str, Any]]] | None = None


def samples() -> dict[str, tuple[str, dict[str, Any]]]:
    """name → (command, cheap base table), for every samples/*.toml (sorted by name)."""
    global _SAMPLES
    if _SAMPLES is None:
        out = {}
        for p in sorted(SAMPLES.glob("*.toml")):
            data = tomllib.loads(p.read_text())
            command = sample_command(data)
            out[p.stem] = (command, make_cheap(data, command))
        _SAMPLES = out
    return _SAMPLES


def make_cheap(data: dict[str, Any], command: str) -> dict[str, Any]:
    d = copy.deepcopy(data)
    integ = d.setdefault("integrator", {})
    if command == "simulate":
        steps = min(int(integ.get("steps", SIM_STEPS)), SIM_STEPS)
        integ["steps"] = steps
        for spec in d.get("controls", {}).values():
            if isinstance(spec, dict) and isinstance(spec.get("values"), list):
                spec["values"] = spec["values"][:steps]
    else:
        integ["steps"] = min(int(integ.get("steps", SOLVE_STEPS)), SOLVE_STEPS)
        solver = d.setdefault("solver", {})
        solver["backend"] = "scipy"
        solver["max_iter"] = min(int(solver.get("max_iter", SOLVE_MAX_ITER)), SOLVE_MAX_ITER)
        solver["time_limit_s"] = min(float(solver.get("time_limit_s", SOLVE_TIME_LIMIT_S)), SOLVE_TIME_LIMIT_S)
    return d


# ------------------------------------------------------------------------------------------------
# cases
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    index: int
    category: str
    sample: str
    command: str                      # "simulate" | "solve": the contract that applies
    description: str                  # the mutation, e.g. "vehicle.mass = nan"
    scenario: bytes                   # written to {dir}/scenario.toml
    argv: tuple[str, ...]             # for core.cli.run; "{dir}" is the case's folder
    expect: tuple[int, ...]           # exit codes that are right for this mutation
    reason: str = ""                  # why expect is narrower than the contract
    must_name: tuple[str, ...] = ()   # the one-line error must contain one of these
    sentinel: bool = False            # pre-create --out (and --plot) with SENTINEL
    files: tuple[tuple[str, bytes], ...] = ()   # more files in {dir} ("name/" = a folder)
    initial_from: str | None = None   # --initial {dir}/initial.json made from a base solve: variant
    checks: tuple[str, ...] = ()      # extra checks: "no_numerical_failure"

    @property
    def id(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9_.=+^-]+", "_", self.description.replace(" = ", "=")).strip("_")[:60]
        return f"{self.index:03d}-{self.category}-{self.sample}-{slug}"

    def text(self) -> str:
        return self.scenario.decode("utf-8", "backslashreplace")


KeyPath = tuple  # a path into the table: str keys and int list indices


def _get(d: Any, path: KeyPath) -> Any:
    for p in path:
        d = d[p]
    return d


def _set(d: Any, path: KeyPath, value: Any) -> None:
    _get(d, path[:-1])[path[-1]] = value


def _delete(d: Any, path: KeyPath) -> None:
    del _get(d, path[:-1])[path[-1]]


def _walk(obj: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """Every node below the root, depth first: (path, value)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield path + (k,), v
            yield from _walk(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield path + (i,), v
            yield from _walk(v, path + (i,))


def _show_path(path: KeyPath) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _name(path: KeyPath) -> str:
    """The innermost key of a path (what an error message should name)."""
    return next(p for p in reversed(path) if isinstance(p, str))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _brief(v: Any) -> str:
    """A value for a description (a 401-digit integer as 10^400)."""
    if isinstance(v, int) and not isinstance(v, bool) and len(str(abs(v))) > 20:
        return f"{'-' if v < 0 else ''}10^{len(str(abs(v))) - 1}"
    return _value(v)


def _pick(rng: random.Random, items: list) -> Any:
    return items[rng.randrange(len(items))]


class _Skip(Exception):
    """This mutation does not apply to this sample; the generator draws again."""


@dataclass
class _Draft:
    description: str
    data: dict[str, Any] | None = None
    raw: bytes | None = None
    expect: tuple[int, ...] | None = None
    reason: str = ""
    must_name: str | tuple[str, ...] | None = None
    argv: tuple[str, ...] | None = None   # a whole argv (overrides the usual one)
    files: tuple[tuple[str, bytes], ...] = ()
    initial_from: str | None = None
    checks: tuple[str, ...] = ()
    sentinel_ok: bool = True
    plot_ok: bool = True


def _entries(data: dict[str, Any]) -> list[KeyPath]:
    """Paths of every table entry (key = value, tables, arrays of tables and their items)."""
    return [p for p, _ in _walk(data) if isinstance(p[-1], str)]


def _descend(rng: random.Random, data: dict[str, Any], path: KeyPath, p: float = 0.5) -> KeyPath:
    """Maybe step into a list of numbers/rows: a single element is mutated then."""
    v = _get(data, path)
    while isinstance(v, list) and v and not _is_aot(v) and rng.random() < p:
        path = path + (rng.randrange(len(v)),)
        v = v[path[-1]]
    return path


# -- wrong type --------------------------------------------------------------------------------------
def _m_wrong_type(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    path = _descend(rng, data, _pick(rng, _entries(data)))
    v = _get(data, path)
    if _is_number(v):
        options = [("string", str(v)), ("bool", True), ("list", [v]), ("table", {"value": v})]
    elif isinstance(v, bool):
        options = [("number", 1), ("string", "true"), ("list", [v])]
    elif isinstance(v, str):
        options = [("number", 1.0), ("bool", False), ("list", [v]), ("table", {"name": v})]
    elif isinstance(v, dict):
        options = [("number", 1.0), ("string", "table"), ("list", [1.0]), ("bool", True)]
    elif _is_aot(v):
        options = [("a single table", dict(v[0])), ("number", 1.0), ("string", "tables")]
    else:  # a list
        first = v[0] if v else 1.0
        options = [("number", first if _is_number(first) else 1.0), ("string", json.dumps(v)[:30]),
                   ("bool", True), ("table", {"x": 1.0})]
        if v and all(_is_number(x) for x in v):
            options.append(("list of strings", [str(x) for x in v]))
    kind, new = _pick(rng, options)
    _set(data, path, new)
    return _Draft(f"{_show_path(path)} = {kind} {_value(new)[:24]}", data, expect=(2,),
                  reason="a value of the wrong type is bad input", must_name=_name(path))


# -- NaN / inf ------------------------------------------------------------------------------------------
def _number_paths(data: dict[str, Any]) -> list[KeyPath]:
    return [p for p, v in _walk(data) if _is_number(v)]


def _pick_number(rng: random.Random, data: dict[str, Any], targeted: float = 0.0) -> KeyPath:
    paths = _number_paths(data)
    if not paths:
        raise _Skip
    # a key with a long values list would otherwise take most draws: pick a key first
    by_key: dict[KeyPath, list[KeyPath]] = defaultdict(list)
    for p in paths:
        owner = p
        while isinstance(owner[-1], int):
            owner = owner[:-1]
        by_key[owner].append(p)
    owners = list(by_key)
    if targeted and rng.random() < targeted:
        hits = [o for o in owners if o[-1] in TARGET_KEYS or str(o[-1]).startswith("max_")]
        if hits:
            owners = hits
    return _pick(rng, by_key[_pick(rng, owners)])


def _m_nonfinite(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    path = _pick_number(rng, data, targeted=0.2)
    new = _pick(rng, [math.nan, math.inf, -math.inf])
    _set(data, path, new)
    return _Draft(f"{_show_path(path)} = {_value(new)}", data, expect=(2,),
                  reason="NaN/inf is bad input", must_name=_name(path))


# -- huge / tiny / zero / negative -----------------------------------------------------------------
def _m_extreme(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    if rng.random() < 0.15:
        vectors = [p for p, v in _walk(data) if isinstance(v, list) and v and all(_is_number(x) for x in v)
                   and len(v) <= 6]
        if vectors:
            path = _pick(rng, vectors)
            fill = _pick(rng, [0.0, 1e300, -1e300, 1e-300])
            _set(data, path, [fill] * len(_get(data, path)))
            return _Draft(f"{_show_path(path)} all {_value(fill)}", data,
                          checks=("no_numerical_failure",) if command == "solve" else ())
    path = _pick_number(rng, data, targeted=0.4)
    v = _get(data, path)
    key = path[-1] if isinstance(path[-1], str) else None
    if isinstance(v, int):
        ints = [0, -1, HUGE_STEPS, 2**62, 9223372036854775807, -9223372036854775807, 10**400, -10**400]
        new = _pick(rng, ints if key == "steps" else ints + [10**6])   # 10**6 steps is legal but slow
    else:
        new = _pick(rng, [1e300, -1e300, 1e-300, -1e-300, 0.0, -1.0, 1e20, -1e20, 5e-324, 10**400])
    if key == "steps" and rng.random() < 0.5:
        new = HUGE_STEPS
    _set(data, path, new)
    expect: tuple[int, ...] | None = None
    reason = ""
    must_name = None
    table = path[0] if len(path) == 2 else None
    if key is not None and table in POSITIVE_KEYS and key in POSITIVE_KEYS[table] and new <= 0:
        expect, reason, must_name = (2,), f"{key} must be positive", key
    elif key == "steps" and new >= HUGE_STEPS:
        # (a sample with [controls] values lists is refused for their length instead)
        expect, reason, must_name = (2,), "10 million steps or more: refused up front (output > ~1 GB)", ("steps", "values")
    checks = ("no_numerical_failure",) if command == "solve" else ()
    return _Draft(f"{_show_path(path)} = {_brief(new)}", data, expect=expect, reason=reason,
                  must_name=must_name, checks=checks)


# -- missing keys ----------------------------------------------------------------------------------------
def _m_missing_key(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    entries = _entries(data)
    if rng.random() < 0.3:  # a whole top-level table
        entries = [p for p in entries if len(p) == 1]
    if command == "solve":  # the default budgets would make a case minutes long
        entries = [p for p in entries if p not in (("solver",), ("solver", "max_iter"), ("solver", "time_limit_s"))]
    path = _pick(rng, entries)
    if rng.random() < 0.3 and _is_aot(_get(data, path)) and len(_get(data, path)) > 1:
        i = rng.randrange(len(_get(data, path)))
        del _get(data, path)[i]
        return _Draft(f"del {_show_path(path)}[{i}]", data)
    _delete(data, path)
    return _Draft(f"del {_show_path(path)}", data)


# -- unknown keys -----------------------------------------------------------------------------------------
def _typo(rng: random.Random, key: str) -> str:
    if len(key) < 3:
        return key + "_"
    i = rng.randrange(len(key) - 1)
    return _pick(rng, [key[:i] + key[i + 1:], key[:i] + key[i] + key[i:], key[:i] + key[i + 1] + key[i] + key[i + 2:],
                       key.capitalize(), key + "s"])


def _m_unknown_key(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    tables: list[KeyPath] = [()] + [p for p, v in _walk(data) if isinstance(v, dict)]
    path = _pick(rng, tables)
    table = _get(data, path)
    for _ in range(10):
        if table and rng.random() < 0.5:
            new_key = _typo(rng, _pick(rng, list(table)))
        else:
            new_key = _pick(rng, ["fuzz_extra", "colour", "notes", "Type", "bad\nkey", "bad key", "ключ", "a.b",
                                  "bad\"quote", "bad\u0000nul"])
        if new_key not in table:
            break
    else:
        raise _Skip
    value = _pick(rng, [1.0, "x", True, [1.0, 2.0]]) if path or rng.random() < 0.5 else {"x": 1.0}
    table[new_key] = value
    return _Draft(f"{_show_path(path + (new_key,))} added", data, expect=(2,),
                  reason="every table refuses unknown keys", must_name=re.split(r"[\n\"\x00]", new_key)[0])


# -- list lengths -------------------------------------------------------------------------------------------
def _m_list_length(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    lists = [p for p, v in _walk(data) if isinstance(v, list) and not _is_aot(v)]
    if not lists:
        raise _Skip
    path = _pick(rng, lists)
    v = _get(data, path)
    options = ["empty", "longer"] + (["shorter"] if v else [])
    kind = _pick(rng, options)
    if kind == "empty":
        new = []
    elif kind == "shorter":
        new = v[:-1] if rng.random() < 0.7 else v[: rng.randrange(len(v))]
    else:
        extra = copy.deepcopy(v[-1]) if v else 1.0
        new = v + [extra] * (1 if rng.random() < 0.7 else rng.randint(2, 5))
    _set(data, path, new)
    row = isinstance(path[-1], int) and _name(path) in ROW_KEYS
    fixed = row or (isinstance(path[-1], str) and path[-1] in FIXED_LENGTH_KEYS)
    if isinstance(path[-1], str) and path[-1] in ROW_KEYS and kind == "empty":
        fixed = True   # "a non-empty list of rows"
    if data["vehicle"].get("type") == "boat" and path == ("goal", "position") and len(new) == 2:
        fixed = False  # a boat's goal may fix x, y only
    return _Draft(f"{_show_path(path)} {kind} ({len(v)} -> {len(new)})", data,
                  expect=(2,) if fixed else None, reason="a list of fixed length" if fixed else "",
                  must_name=_name(path) if fixed else None)


# -- odd strings ------------------------------------------------------------------------------------------
def _m_bad_string(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    paths = [p for p, v in _walk(data) if isinstance(v, str)]
    if not paths:
        raise _Skip
    path = _pick(rng, paths)
    v = _get(data, path)
    new = _pick(rng, ["", " ", v + "\n", v + "\nsecond line", v.upper(), f" {v} ", "é" + v, v * 2000,
                      v + "\x00", "\u202e" + v, v + "\t"])
    _set(data, path, new)
    choice = isinstance(path[-1], str) and path[-1] in CHOICE_KEYS and new != v
    bad = choice or new == ""   # (a blank or odd name may be legal; what it breaks is named instead)
    return _Draft(f"{_show_path(path)} = {json.dumps(new)[:30]}", data, expect=(2,) if bad else None,
                  reason="not one of the choices" if choice else "an empty name" if bad else "",
                  must_name=_name(path) if bad else None)


# -- references between entries (tree frames, chain joints, names) -----------------------------------------
def _m_bad_reference(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    kind = data["vehicle"].get("type")
    frames, joints = data.get("frames"), data.get("joints")
    options = []
    if isinstance(frames, list) and frames:
        options += ["self parent", "cycle", "unknown parent", "duplicate name", "unknown constraint frame",
                    "shared variable", "world as name"]
    if isinstance(joints, list) and joints:
        options += ["joint parent self", "joint parent later", "joint parent far"]
    if command == "solve" or "controls" in data:
        options += ["unknown input weight"] if command == "solve" else ["controls of another vehicle"]
    if not options:
        raise _Skip
    what = _pick(rng, options)
    expect: tuple[int, ...] | None = (2,)
    if what == "self parent":
        i = rng.randrange(len(frames))
        frames[i]["parent"] = frames[i]["name"]
        desc = f"frames[{i}].parent = its own name"
    elif what == "cycle":
        if len(frames) < 2:
            raise _Skip
        i, j = rng.sample(range(len(frames)), 2)
        frames[i]["parent"], frames[j]["parent"] = frames[j]["name"], frames[i]["name"]
        desc = f"frames[{i}] and frames[{j}] parents of each other"
    elif what == "unknown parent":
        i = rng.randrange(len(frames))
        frames[i]["parent"] = "no_such_frame"
        desc = f"frames[{i}].parent = no_such_frame"
    elif what == "duplicate name":
        if len(frames) < 2:
            raise _Skip
        i, j = rng.sample(range(len(frames)), 2)
        frames[j]["name"] = frames[i]["name"]
        desc = f"frames[{j}].name = frames[{i}].name"
    elif what == "world as name":
        i = rng.randrange(len(frames))
        frames[i]["name"] = "world"
        desc = f"frames[{i}].name = world"
    elif what == "shared variable":
        var = [i for i, f in enumerate(frames) if "variable" in f]
        if len(var) < 2:
            raise _Skip
        i, j = rng.sample(var, 2)
        frames[j]["variable"] = frames[i]["variable"]
        desc = f"frames[{j}].variable = frames[{i}].variable"
        expect = None  # one variable driving two joints is a legal (coupled) mechanism
    elif what == "unknown constraint frame":
        cons = data.setdefault("constraints", [])
        cons.append({"type": "distance", "a": frames[0]["name"], "b": "no_such_frame", "length": 1.0})
        desc = "constraint to no_such_frame"
    elif what == "joint parent self":
        i = rng.randrange(len(joints))
        joints[i]["parent"] = i + 1
        desc = f"joints[{i}].parent = itself ({i + 1})"
    elif what == "joint parent later":
        i = rng.randrange(len(joints))
        joints[i]["parent"] = len(joints)
        if i + 1 == len(joints):
            joints[i]["parent"] = i + 1
        desc = f"joints[{i}].parent = {joints[i]['parent']} (not earlier)"
    elif what == "joint parent far":
        i = rng.randrange(len(joints))
        joints[i]["parent"] = len(joints) + 5
        desc = f"joints[{i}].parent = {len(joints) + 5}"
    elif what == "unknown input weight":
        cost = data.setdefault("cost", {})
        weights = cost.setdefault("input_weights", {})
        weights["no_such_input"] = 1.0
        desc = "cost.input_weights.no_such_input"
    else:
        others = {"car": "rotor_torque", "snakeboard": "torque", "boat": "collective", "helicopter": "thruster_1",
                  "rigid_body": "torque", "chain": "torque", "tree": "torque"}
        data.setdefault("controls", {})[others.get(kind, "torque")] = {"offset": 0.0}
        desc = f"controls.{others.get(kind, 'torque')} (another vehicle's input)"
    return _Draft(f"{what}: {desc}", data, expect=expect, reason="a reference to nothing/itself is bad input")


# -- impossible goals (solve) ---------------------------------------------------------------------------
def _obstacle_centres(data: dict[str, Any]) -> list[list[float]]:
    out = []
    for ob in data.get("obstacles", []):
        if "center" in ob:
            out.append(list(ob["center"]))
        elif "a" in ob and "b" in ob:
            out.append([(x + y) / 2 for x, y in zip(ob["a"], ob["b"])])
    return out


def _m_impossible_goal(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    if command != "solve":
        raise _Skip
    goal = data.setdefault("goal", {})
    start = data.setdefault("start", {})
    pos = list(goal.get("position", start.get("position", [0.0, 0.0, 0.0])))
    dim = len(pos)
    planar = data["vehicle"].get("type") in ("car", "snakeboard")
    centres = _obstacle_centres(data)
    kind = _pick(rng, ["goal in obstacle", "obstacle on goal", "goal far away", "duration too short",
                       "start in obstacle", "waypoint far away", "speed bound vs goal"])
    if kind in ("goal in obstacle", "start in obstacle") and not centres:
        kind = "obstacle on goal"
    boat = data["vehicle"].get("type") == "boat"

    def at(c: list[float], like: list[float]) -> list[float]:
        """An obstacle centre as a position like ``like`` (2 or 3 entries; a boat keeps its float height)."""
        return c[:2] + like[2:] if boat else c[:len(like)]

    if kind == "goal in obstacle":
        goal["position"] = at(_pick(rng, centres), pos)
        desc = f"goal.position = {goal['position']} (an obstacle's centre)"
    elif kind == "start in obstacle":
        start["position"] = at(_pick(rng, centres), list(start.get("position", [0.0] * dim)))
        desc = f"start.position = {start['position']} (an obstacle's centre)"
    elif kind == "obstacle on goal":
        centre = [pos[0], pos[1], 0.0 if planar or dim == 2 else pos[2]]
        data.setdefault("obstacles", []).append({"type": "sphere", "center": centre, "radius": 4.0})
        desc = f"sphere r=4 at the goal {centre}"
    elif kind == "goal far away":
        pos[0] += 1e5
        goal["position"] = pos
        desc = "goal.position 100 km further"
    elif kind == "duration too short":
        t = data.setdefault("time", {})
        t.pop("min", None)
        t.pop("max", None)
        t["duration"] = 0.01
        data.pop("waypoints", None)
        pos[0] += 50.0
        goal["position"] = pos
        desc = "time.duration = 0.01 with the goal 50 m further"
    elif kind == "waypoint far away":
        T = float(data.get("time", {}).get("duration", 0.0))
        if not T:
            raise _Skip
        wp = {"time": T / 2, "position": [1e4, 0.0] if planar else [1e4, 0.0, 0.0], "radius": 0.5}
        data.setdefault("waypoints", []).append(wp)
        desc = f"waypoint at t={T / 2:g} 10 km away"
    else:  # speed bound vs a far goal
        pos[0] += 1e3
        goal["position"] = pos
        data.setdefault("bounds", {})["speed"] = [0.0, 0.5]
        desc = "bounds.speed = [0, 0.5] with the goal 1 km further"
    return _Draft(f"{kind}: {desc}", data, expect=(2, 3), reason="an impossible goal must not be reported converged")


# -- broken files -------------------------------------------------------------------------------------------
def _m_broken_file(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    text = dumps(data)
    raw = text.encode()
    kind = _pick(rng, ["truncated", "invalid toml", "duplicate key", "duplicate table", "binary garbage",
                       "garbage appended", "empty", "comments only", "latin-1 byte", "utf-16", "nul byte",
                       "utf-8 bom", "crlf", "deep nesting", "missing file", "folder as scenario"])
    expect: tuple[int, ...] | None = (2,)
    argv = None
    lines = text.splitlines(keepends=True)
    if kind == "truncated":
        k = rng.randrange(1, len(raw))
        raw, expect = raw[:k], None
        kind = f"truncated at byte {k} of {len(text)}"
    elif kind == "invalid toml":
        bad = _pick(rng, ["= 1", "[vehicle", "key = ", "x = [1, 2", 'k = "unterminated', "a = 1 2",
                          "x = 1.2.3", "x = tru", "[[]]", "x = {a = 1", "x = 0x", "]"])
        i = rng.randrange(len(lines) + 1)
        raw = "".join(lines[:i] + [bad + "\n"] + lines[i:]).encode()
        kind = f"invalid line {bad!r} at line {i + 1}"
    elif kind == "duplicate key":
        keyed = [i for i, ln in enumerate(lines) if re.match(r"^[A-Za-z0-9_\"-]+ = ", ln)]
        i = _pick(rng, keyed)
        raw = "".join(lines[:i + 1] + [lines[i]] + lines[i + 1:]).encode()
        kind = f"duplicate key line {lines[i].split('=')[0].strip()}"
    elif kind == "duplicate table":
        headers = [i for i, ln in enumerate(lines) if re.match(r"^\[[^\[]", ln)]
        if not headers:
            raise _Skip
        i = _pick(rng, headers)
        raw = (text + "\n" + lines[i]).encode()
        kind = f"duplicate table {lines[i].strip()}"
    elif kind == "binary garbage":
        raw = rng.randbytes(rng.randint(1, 2000))
    elif kind == "garbage appended":
        raw = raw + rng.randbytes(rng.randint(1, 200))
    elif kind == "empty":
        raw = b""
    elif kind == "comments only":
        raw = b"# nothing here\n\n   \n"
    elif kind == "latin-1 byte":
        i = rng.randrange(len(lines) + 1)
        raw = "".join(lines[:i]).encode() + b"# caf\xe9 (latin-1)\n" + "".join(lines[i:]).encode()
    elif kind == "utf-16":
        raw = text.encode("utf-16")
    elif kind == "nul byte":
        k = rng.randrange(len(raw))
        raw = raw[:k] + b"\x00" + raw[k:]
    elif kind == "utf-8 bom":
        raw, expect = b"\xef\xbb\xbf" + raw, None
    elif kind == "crlf":
        raw, expect = text.replace("\n", "\r\n").encode(), None
    elif kind == "deep nesting":
        n = _pick(rng, [2000, 100_000])
        opener, closer = _pick(rng, [("[", "]"), ("{a = ", "}")])
        raw = raw + f"deep = {opener * n}1{closer * n}\n".encode()
        kind = f"deep nesting {opener.strip()}x{n}"
    elif kind == "missing file":
        argv = (command, "{dir}/no_such_scenario.toml", "--out", "{dir}/out.json")
    else:
        argv = (command, "{dir}/afolder", "--out", "{dir}/out.json")
    files = (("afolder/", b""),) if kind == "folder as scenario" else ()
    return _Draft(kind, raw=raw, expect=expect, reason="a broken file is bad input" if expect else "",
                  argv=argv, files=files)


# -- command line -------------------------------------------------------------------------------------------
INITIAL_VARIANTS = ("valid", "one node short", "no shape", "no controls", "nan values", "other vehicle",
                    "no time", "strings for numbers", "deep nesting", "overflowing literal", "huge values",
                    "nested controls")


def _m_cli(rng: random.Random, data: dict[str, Any], command: str) -> _Draft:
    kinds = ["out missing folder", "out in /proc", "out in /sys", "out empty", "out is a folder",
             "out under a file", "out name too long", "out pre-existing", "unknown option", "no --out",
             "no scenario", "bad command"]
    if command == "solve":
        kinds += ["plot in /proc", "plot missing folder", "plot empty", "plot is a folder", "plot ok",
                  "initial not json", "initial binary", "initial empty", "initial json {}", "initial json []",
                  "initial json 42", "initial missing", "initial is a folder", "backend bogus", "backend ipopt"]
        kinds += [f"initial {v}" for v in INITIAL_VARIANTS] * 2
    else:
        kinds += ["simulate with --plot", "simulate with --backend"]
    kind = _pick(rng, kinds)
    base = (command, "{dir}/scenario.toml")
    out = ("--out", "{dir}/out.json")
    d = _Draft(kind, data, expect=(2,), reason="bad command line", sentinel_ok=False, plot_ok=False)
    name = None
    if kind == "out missing folder":
        d.argv, name = base + ("--out", "{dir}/no/such/folder/out.json"), "--out"
    elif kind == "out in /proc":
        d.argv, name = base + ("--out", "/proc/fuzz_out.json"), "--out"
    elif kind == "out in /sys":
        d.argv, name = base + ("--out", "/sys/fuzz_out.json"), "--out"
    elif kind == "out empty":
        d.argv, name = base + ("--out", ""), "--out"
    elif kind == "out is a folder":
        d.argv, d.files, name = base + ("--out", "{dir}/outdir"), (("outdir/", b""),), "--out"
    elif kind == "out under a file":
        d.argv, d.files, name = base + ("--out", "{dir}/afile/out.json"), (("afile", b"a file\n"),), "--out"
    elif kind == "out name too long":
        d.argv, name = base + ("--out", "{dir}/" + "x" * 300 + ".json"), "--out"
    elif kind == "out pre-existing":
        d.argv, d.expect, d.reason, d.sentinel_ok = base + out, None, "", True
    elif kind == "unknown option":
        d.argv = base + out + ("--fuzz-option", "1")
    elif kind == "no --out":
        d.argv = base
    elif kind == "no scenario":
        d.argv = (command,) + out
    elif kind == "bad command":
        d.argv = ("simulatee", "{dir}/scenario.toml") + out
    elif kind == "plot in /proc":
        d.argv, name = base + out + ("--plot", "/proc/fuzz_plot.png"), "--plot"
    elif kind == "plot missing folder":
        d.argv, name = base + out + ("--plot", "{dir}/no/such/plot.png"), "--plot"
    elif kind == "plot empty":
        d.argv, name = base + out + ("--plot", ""), "--plot"
    elif kind == "plot is a folder":
        d.argv, d.files, name = base + out + ("--plot", "{dir}/plotdir"), (("plotdir/", b""),), "--plot"
    elif kind == "plot ok":
        d.argv, d.expect, d.reason = base + out + ("--plot", "{dir}/plot.png"), None, ""
    elif kind == "backend bogus":
        d.argv = base + out + ("--backend", "gurobi")
    elif kind == "backend ipopt":
        d.argv, d.expect, d.reason = base + out + ("--backend", "ipopt"), None, ""
    elif kind == "simulate with --plot":
        d.argv = base + out + ("--plot", "{dir}/plot.png")
    elif kind == "simulate with --backend":
        d.argv = base + out + ("--backend", "scipy")
    elif kind.startswith("initial "):
        what = kind[len("initial "):]
        name = "--initial"
        d.reason = "a bad --initial is bad input"
        static = {"not json": b"this is not JSON\n", "binary": bytes(range(256)), "empty": b"",
                  "json {}": b"{}", "json []": b"[]", "json 42": b"42"}
        if what in static:
            d.argv, d.files = base + out + ("--initial", "{dir}/initial.json"), (("initial.json", static[what]),)
        elif what == "missing":
            d.argv = base + out + ("--initial", "{dir}/no_initial.json")
        elif what == "is a folder":
            d.argv, d.files = base + out + ("--initial", "{dir}/initdir"), (("initdir/", b""),)
        else:
            d.argv, d.initial_from = base + out + ("--initial", "{dir}/initial.json"), what
            name = None  # the error may name the trajectory field rather than the option
            vehicle = data["vehicle"].get("type")
            if what == "valid" or (what == "no shape" and vehicle not in ("car", "snakeboard")):
                d.expect, d.reason = None, ""   # an SE(3) vehicle's warm start needs no shape
            elif what == "huge values":
                d.expect, d.reason = (2, 3), "a warm start far off must not be reported converged"
    d.must_name = name
    return d


MUTATORS: dict[str, Callable[[random.Random, dict[str, Any], str], _Draft]] = {
    "wrong_type": _m_wrong_type, "nonfinite": _m_nonfinite, "extreme": _m_extreme,
    "missing_key": _m_missing_key, "unknown_key": _m_unknown_key, "list_length": _m_list_length,
    "bad_string": _m_bad_string, "bad_reference": _m_bad_reference,
    "impossible_goal": _m_impossible_goal, "broken_file": _m_broken_file, "cli": _m_cli,
}


def _names(x: str | tuple[str, ...] | None) -> tuple[str, ...]:
    return () if x is None else (x,) if isinstance(x, str) else tuple(x)


def cases(seed: int, n: int, simulate_fraction: float = 0.64,
          categories: tuple[str, ...] | None = None) -> list[Case]:
    """n cases, the same for the same seed (and a prefix of a longer run's)."""
    rng = random.Random(seed)
    base = samples()
    by_command = {c: sorted(k for k, (cmd, _) in base.items() if cmd == c) for c in ("simulate", "solve")}
    out: list[Case] = []
    while len(out) < n:
        command = "simulate" if rng.random() < simulate_fraction else "solve"
        weights = {k: w for k, w in WEIGHTS[command].items() if categories is None or k in categories}
        if not weights or not by_command[command]:
            continue
        category = rng.choices(list(weights), weights=list(weights.values()))[0]
        sample = _pick(rng, by_command[command])
        data = copy.deepcopy(base[sample][1])
        try:
            d = MUTATORS[category](rng, data, command)
        except _Skip:
            continue
        contract = (0, 2) if command == "simulate" else (0, 2, 3)
        expect = contract if d.expect is None else tuple(c for c in d.expect if c in contract)
        raw = d.raw if d.raw is not None else dumps(d.data).encode()
        argv = d.argv or (command, "{dir}/scenario.toml", "--out", "{dir}/out.json")
        sentinel = d.sentinel_ok and rng.random() < (1.0 if d.description == "out pre-existing" else 0.25)
        if command == "solve" and d.plot_ok and expect == (2,) and "--plot" not in argv and rng.random() < 0.25:
            argv = argv + ("--plot", "{dir}/plot.png")
        out.append(Case(index=len(out), category=category, sample=sample, command=command,
                        description=d.description, scenario=raw, argv=tuple(argv), expect=expect,
                        reason=d.reason, must_name=_names(d.must_name), sentinel=sentinel, files=d.files,
                        initial_from=d.initial_from, checks=d.checks))
    return out


# ------------------------------------------------------------------------------------------------
# --initial trajectories made from a base solve (cached per process)
# ------------------------------------------------------------------------------------------------
_BASE_SOLUTIONS: dict[str, dict[str, Any] | str] = {}


def base_solution(sample: str) -> dict[str, Any]:
    """The JSON a (cheap) solve of ``sample`` writes; raises RuntimeError if it writes none."""
    if sample not in _BASE_SOLUTIONS:
        from core.cli import run

        with tempfile.TemporaryDirectory() as d:
            scenario = os.path.join(d, "scenario.toml")
            with open(scenario, "w") as f:
                f.write(dumps(samples()[sample][1]))
            out = os.path.join(d, "out.json")
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    code = run(["solve", scenario, "--out", out])
                except BaseException as exc:  # noqa: BLE001 - reported below
                    code = repr(exc)
            if os.path.exists(out):
                with open(out) as f:
                    _BASE_SOLUTIONS[sample] = json.load(f)
            else:
                _BASE_SOLUTIONS[sample] = f"exit {code}: {err.getvalue().strip()}"
    got = _BASE_SOLUTIONS[sample]
    if isinstance(got, str):
        raise RuntimeError(f"the base solve of {sample} wrote no trajectory ({got})")
    return copy.deepcopy(got)


def _other_solve_sample(sample: str) -> str:
    names = [k for k, (cmd, d) in samples().items() if cmd == "solve"]
    kind = samples()[sample][1]["vehicle"].get("type")
    others = [k for k in names if samples()[k][1]["vehicle"].get("type") != kind]
    return others[0] if others else names[0]


def initial_json(sample: str, variant: str) -> bytes:
    if variant == "other vehicle":
        d = base_solution(_other_solve_sample(sample))
    else:
        d = base_solution(sample)
    if variant == "one node short":
        for k in ("time", "position", "orientation", "angular_velocity", "linear_velocity", "heading"):
            if isinstance(d.get(k), list):
                d[k] = d[k][:-1]
        for group in ("shape", "controls"):
            for k, v in d.get(group, {}).items():
                d[group][k] = v[:-1]
    elif variant == "no shape":
        d.pop("shape", None)
        d.pop("heading", None)
    elif variant == "no controls":
        d.pop("controls", None)
    elif variant == "nan values":
        d["position"][len(d["position"]) // 2][0] = math.nan
        d["linear_velocity"][1][0] = math.inf
    elif variant == "no time":
        d.pop("time", None)
    elif variant == "strings for numbers":
        d["position"] = [["x" for x in row] for row in d["position"]]
    elif variant == "huge values":
        d["position"] = [[x * 1e300 + 1e300 for x in row] for row in d["position"]]
    elif variant == "nested controls":
        d["controls"] = {k: [[x] for x in v] for k, v in d.get("controls", {}).items()}
    text = json.dumps(d)  # allow_nan: NaN/Infinity literals, as a careless tool writes them
    if variant == "deep nesting":
        text = text[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    elif variant == "overflowing literal":  # a number json reads as inf without any NaN/Infinity token
        mid = len(d["position"]) // 2
        d["position"][mid][0] = 1e400   # json.dumps writes it as Infinity: put the literal back
        text = json.dumps(d).replace("Infinity", "1e400")
    return text.encode()  # allow_nan: NaN/Infinity literals, as a careless tool writes them


# ------------------------------------------------------------------------------------------------
# the checker
# ------------------------------------------------------------------------------------------------
class CaseTimeout(BaseException):
    """Raised by SIGALRM in a case that did not finish in time (a BaseException: nothing catches it)."""


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield  # no guard off the main thread
        return

    def handler(signum, frame):
        raise CaseTimeout(f"no exit within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _memory_cap(headroom: int) -> Iterator[None]:
    try:
        import resource

        with open("/proc/self/status") as f:
            vm = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmSize:"))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = vm + headroom
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY:
            cap = min(cap, soft)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, OSError, StopIteration, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


_WHERE_PROBLEM = re.compile(r"^(error: \S.*?: \S|python -m core( \w+)?: error: \S)")  # ours | argparse's
_HIDDEN_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass
class Outcome:
    code: int | None = None
    stderr: str = ""
    exception: str = ""
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _option(argv: list[str], name: str) -> str | None:
    value = None
    for i, a in enumerate(argv[:-1]):
        if a == name:
            value = argv[i + 1]
    return value


def _finite_json(text: str) -> str | None:
    """None if ``text`` is JSON without NaN/Infinity (also not as overflowing literals), else why not."""
    def constant(name: str) -> float:
        raise ValueError(f"{name} in the output")
    try:
        doc = json.loads(text, parse_constant=constant)
    except ValueError as exc:
        return str(exc)
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return "an overflowing number in the output"
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for p in folder.rglob("*"):
        rel = str(p.relative_to(folder))
        out[rel] = None if p.is_dir() else p.read_bytes()
    return out


def _exception_text(exc: BaseException) -> str:
    """``Type: message (at core/file.py:line)``: the innermost frame in core (or "in tomllib")."""
    where = ""
    for fr in reversed(traceback.extract_tb(exc.__traceback__)):
        if "/core/" in fr.filename:
            where = f" (at {os.path.relpath(fr.filename, ROOT)}:{fr.lineno})"
            break
        if "/tomllib/" in fr.filename and not where:
            where = " (in tomllib)"
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg[:200]}{where}"


def run_case(case: Case, tmpdir: str | os.PathLike, isolate: bool = True) -> Outcome:
    """Run one case in tmpdir and check the contract; the outcome's ``problems`` are what broke.

    ``isolate``: run ``core.cli.run`` in a forked child (where there is fork), so that a crash in a
    C extension or a runaway case is reported as this case's problem instead of ending the run."""
    tmp = Path(tmpdir)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "scenario.toml").write_bytes(case.scenario)
    for name, content in case.files:
        if name.endswith("/"):
            (tmp / name).mkdir(parents=True, exist_ok=True)
        else:
            (tmp / name).write_bytes(content)
    res = Outcome()
    if case.initial_from:
        try:
            (tmp / "initial.json").write_bytes(initial_json(case.sample, case.initial_from))
        except RuntimeError as exc:
            res.problems.append(f"setup: {exc}")
            return res
    argv = [a.replace("{dir}", str(tmp)) for a in case.argv]
    out, plot = _option(argv, "--out"), _option(argv, "--plot")
    if case.sentinel:
        for p in (out, plot):
            if inside_dir(p, tmp) and os.path.isdir(os.path.dirname(p)) and not os.path.isdir(p):
                Path(p).write_bytes(SENTINEL)
    before = _snapshot(tmp)
    got = _run_forked(argv, tmp) if isolate and hasattr(os, "fork") else _run_here(argv, tmp)
    res.code, res.stderr, res.exception = got.get("code"), got.get("stderr", ""), got.get("exception", "")
    res.seconds, res.warnings = got.get("seconds", 0.0), got.get("warnings", [])
    res.problems += _judge(case, res, tmp, out, plot, before)
    return res


def _run_here(argv: list[str], tmp: Path) -> dict[str, Any]:
    """``core.cli.run(argv)`` in this process, in ``tmp``, stderr/stdout captured, with the guards."""
    from core.cli import run

    got: dict[str, Any] = {"code": None, "exception": ""}
    err, std = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os.chdir(tmp)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
                with _memory_cap(MEMORY_HEADROOM), _alarm(CASE_TIMEOUT_S):
                    got["code"] = run(argv)
        except SystemExit as exc:  # argparse: how `python -m core` exits, no traceback
            got["code"] = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int) and exc.code is not None:
                err.write(f"{exc.code}\n")
        except CaseTimeout as exc:
            got["exception"] = f"hang: {exc}"
        except BaseException as exc:  # noqa: BLE001 - an exception escaping run() is a traceback
            got["exception"] = _exception_text(exc)
        finally:
            os.chdir(cwd)
    got["seconds"] = time.perf_counter() - t0
    got["stderr"] = err.getvalue()
    seen, shown = set(), []
    for w in caught:  # the ones `python -m core` would print (default filters: once per location)
        if issubclass(w.category, _HIDDEN_WARNINGS) or (w.filename, w.lineno) in seen:
            continue
        seen.add((w.filename, w.lineno))
        shown.append(f"{w.category.__name__}: {w.message} (at {os.path.relpath(w.filename, ROOT)}:{w.lineno})")
    got["warnings"] = shown
    return got


_WARM = False


def _warm() -> None:
    """Import what the cases use once, before forking, so that each child does not import it again."""
    global _WARM
    if _WARM:
        return
    _WARM = True
    import importlib

    for name in ("core.cli", "core.scenario", "core.simulation", "core.trajectory", "core.dmoc",
                 "core.dmoc.scenario", "core.dmoc.solve", "core.dmoc.plot", "matplotlib.pyplot"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(ImportError):
        from core.dmoc.models import MODELS
        from core.simulation import SIMULATORS

        for mod in SIMULATORS.values():
            importlib.import_module(f"core.scenario.{mod}")
        for mod in MODELS.values():
            importlib.import_module(f"core.dmoc.models.{mod}")


def _run_forked(argv: list[str], tmp: Path) -> dict[str, Any]:
    """``_run_here`` in a forked child; a child killed by a signal (a segfault in a C extension) or
    one that outlives the alarm is reported as ``crash`` / ``hang`` with where it was."""
    import pickle
    import select

    _warm()
    fd, crash_log = tempfile.mkstemp(prefix="fuzz-crash-", suffix=".txt")
    os.close(fd)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller (pytest, main)
        try:
            os.close(r)
            with open(crash_log, "w") as log:
                faulthandler.enable(file=log)
                data = pickle.dumps(_run_here(argv, tmp))
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(w)
    chunks, timed_out = [], False
    deadline = time.monotonic() + CASE_TIMEOUT_S + 10.0
    t0 = time.perf_counter()
    try:
        while True:
            ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                timed_out = True
                break
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
        with open(crash_log) as f:
            log_text = f.read()
        os.unlink(crash_log)
    seconds = time.perf_counter() - t0
    if timed_out:
        return {"exception": f"hang: no exit within {CASE_TIMEOUT_S + 10:g} s (killed)", "seconds": seconds}
    if os.WIFSIGNALED(status) or not chunks:
        how = (signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)} without a result")
        where = re.search(r'File "([^"]*/core/[^"]*)", line (\d+)', log_text)
        at = f" (at {os.path.relpath(where.group(1), ROOT)}:{where.group(2)})" if where else ""
        return {"exception": f"crash: {how}{at}", "seconds": seconds}
    return pickle.loads(b"".join(chunks))


def check_case(case: Case, tmpdir: str | os.PathLike) -> list[str]:
    """The problems found running ``case`` in ``tmpdir`` (empty: the contract held)."""
    return run_case(case, tmpdir).problems


def _judge(case: Case, res: Outcome, tmp: Path, out: str | None, plot: str | None,
           before: dict[str, bytes | None]) -> list[str]:
    problems: list[str] = []
    if res.exception:
        problems.append(res.exception if res.exception.startswith(("hang", "crash")) else f"traceback: {res.exception}")
    code = res.code
    contract = (0, 2) if case.command == "simulate" else (0, 2, 3)
    lines = [ln for ln in res.stderr.splitlines()]
    # warnings go to stderr in the real CLI (RuntimeWarnings from core are errors in the test suite)
    core_warnings = [w for w in res.warnings if "(at core/" in w]
    if code is not None:
        if code not in contract:
            problems.append(f"exit code {code}: not one of {contract}")
        elif code not in case.expect:
            why = f" ({case.reason})" if case.reason else ""
            problems.append(f"exit {code}, expected {'/'.join(map(str, case.expect))}{why}"
                            + (f"; stderr: {lines[-1][:200]}" if lines else ""))
    if code == 2:
        shown = lines + list(res.warnings)
        text = " ".join(ln.strip() for ln in lines)   # (a line broken by a newline in a key is judged once)
        if len(shown) != 1:
            problems.append(f"stderr for exit 2 is {len(shown)} lines, not one: {shown[:3]!r}"[:300])
        if not text:
            problems.append("stderr for exit 2 is empty")
        elif "error:" not in text:
            problems.append(f"stderr for exit 2 has no 'error:': {text[:200]!r}")
        elif not _WHERE_PROBLEM.match(text):
            problems.append(f"exit 2 error names no key or option (not 'error: <where>: <problem>'): {text[:200]!r}")
        elif case.must_name and not any(n in text for n in case.must_name):
            problems.append(f"error does not name {' or '.join(map(repr, case.must_name))}: {text[:200]!r}")
    elif core_warnings:
        problems.append(f"warning: {core_warnings[0]}")
    # files: what exit 2 (or a crash) must leave alone, what exit 0/3 must write
    for label, p in (("--out", out), ("--plot", plot)):
        if not inside_dir(p, tmp):
            continue
        rel = os.path.relpath(p, tmp)
        was = before.get(rel, "absent")
        now: Any = "absent"
        if os.path.isdir(p):
            now = None
        elif os.path.exists(p):
            now = Path(p).read_bytes()
        if code == 2 or code is None:
            if was != now and not (was is None and now is None):
                what = "overwritten" if was not in ("absent", None) else "created"
                problems.append(f"{label} {what} although the run {'exited 2' if code == 2 else 'crashed'}")
        elif code in (0, 3):
            if label == "--out":
                if not isinstance(now, bytes) or now == SENTINEL:
                    problems.append(f"exit {code} but --out was not written")
                else:
                    why = _finite_json(now.decode("utf-8", "replace"))
                    if why:
                        problems.append(f"output not finite JSON: {why}")
                    elif case.command == "solve":
                        problems += _judge_solve(case, code, json.loads(now))
            elif label == "--plot" and case.command == "solve":
                if not isinstance(now, bytes) or not now.startswith(b"\x89PNG"):
                    problems.append(f"exit {code} but --plot is not a PNG")
    # stray files (e.g. the atomic writer's .traj-*.json temporaries)
    after = _snapshot(tmp)
    known = {os.path.relpath(p, tmp) for p in (out, plot) if inside_dir(p, tmp)}
    stray = sorted(k for k in set(after) - set(before) - known)
    if stray:
        problems.append(f"stray files left: {stray[:3]}")
    return problems


def inside_dir(p: str | None, folder: Path) -> bool:
    return bool(p) and os.path.abspath(p).startswith(str(folder) + os.sep)


def _scenario_value(case: Case, *path: str) -> Any:
    try:
        d: Any = tomllib.loads(case.scenario.decode("utf-8"))
        for k in path:
            d = d[k]
        return d
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return None


def _judge_solve(case: Case, code: int, doc: dict[str, Any]) -> list[str]:
    problems = []
    stats = doc.get("stats") if isinstance(doc, dict) else None
    if not isinstance(stats, dict):
        return ["solve output has no stats"]
    conv, status = stats.get("converged"), stats.get("status")
    if not isinstance(conv, bool) or conv != (code == 0):
        problems.append(f"stats.converged = {conv!r} with exit {code}")
    if status not in STATUSES or (status == "converged") != (code == 0):
        problems.append(f"stats.status = {status!r} with exit {code}")
    if "no_numerical_failure" in case.checks and status == "numerical_failure":
        problems.append(f"numerical_failure on input the reader accepted: {str(stats.get('message'))[:160]}")
    max_iter = _scenario_value(case, "solver", "max_iter")
    iters = stats.get("iterations")
    if isinstance(max_iter, int) and not isinstance(max_iter, bool) and isinstance(iters, int) and iters > max_iter:
        problems.append(f"budget: {iters} iterations with max_iter = {max_iter}")
    limit = _scenario_value(case, "solver", "time_limit_s")
    spent = stats.get("solve_time_s", stats.get("wall_time_s"))
    if _is_number(limit) and _is_number(spent) and math.isfinite(limit) and spent > limit + TIME_LIMIT_SLACK_S:
        problems.append(f"budget: solve took {spent:.1f} s with time_limit_s = {limit:g}")
    return problems


# ------------------------------------------------------------------------------------------------
# counting main
# ------------------------------------------------------------------------------------------------
def problem_kind(problem: str) -> str:
    """A coarse label for grouping problems: the exception type and where it was raised, the exit
    codes, or the text up to the first detail."""
    if problem.startswith(("crash: ", "hang: ")):
        return problem
    if problem.startswith("traceback: "):
        m = re.match(r"traceback: (\w+).*?(\(at [^)]*\))?$", problem)
        return f"traceback {m.group(1)} {m.group(2) or ''}".strip() if m else "traceback"
    return re.sub(r"is \d+ lines", "is N lines", re.split(r" \(|;|: ", problem, maxsplit=1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--simulate-fraction", type=float, default=0.64)
    ap.add_argument("--category", action="append", choices=CATEGORIES, help="only these categories")
    ap.add_argument("--only", type=int, action="append", help="run only the case with this index (repeatable)")
    ap.add_argument("--show", choices=("none", "broken", "all"), default="none", help="print cases as they run")
    ap.add_argument("--in-process", action="store_true", help="no fork per case (a crash ends the run)")
    ap.add_argument("--dump", metavar="INDEX", type=int, help="print that case's scenario text and argv, do not run")
    args = ap.parse_args(argv)
    faulthandler.enable()  # a crash in a C extension (a fuzz find too) shows where it happened
    all_cases = cases(args.seed, args.n, args.simulate_fraction, tuple(args.category) if args.category else None)
    if args.dump is not None:
        c = all_cases[args.dump]
        print(c.id, c.argv, f"expect {c.expect}", c.reason, sep="\n")
        print(c.text())
        return 0
    if args.only:
        all_cases = [c for c in all_cases if c.index in set(args.only)]
    held: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    kinds: dict[str, list[str]] = defaultdict(list)
    examples: dict[str, str] = {}
    t0 = time.perf_counter()
    for c in all_cases:
        if args.show == "all":
            print(f"...... {c.id}", end="\r", flush=True)
        with tempfile.TemporaryDirectory(prefix="fuzz-") as d:
            res = run_case(c, d, isolate=not args.in_process)
        (broken if res.problems else held)[c.category] += 1
        for p in res.problems:
            k = problem_kind(p)
            kinds[k].append(c.id)
            examples.setdefault(k, f"{c.id}: {p}")
        if args.show == "all" or (args.show == "broken" and res.problems) or args.only:
            print(f"{'BROKEN' if res.problems else 'held  '} {c.id} exit={res.code} {res.seconds:.2f}s")
            for p in res.problems:
                print(f"    {p}")
            if args.only:
                print(f"    argv: {c.argv}\n    stderr: {res.stderr.strip()!r}\n    warnings: {res.warnings}")
    print(f"\n{len(all_cases)} cases, seed {args.seed}, {time.perf_counter() - t0:.1f} s")
    print(f"{'category':18s} {'held':>5s} {'broken':>7s}")
    for cat in CATEGORIES:
        if held[cat] or broken[cat]:
            print(f"{cat:18s} {held[cat]:5d} {broken[cat]:7d}")
    print(f"{'total':18s} {sum(held.values()):5d} {sum(broken.values()):7d}")
    if kinds:
        print("\nproblems by kind (cases; an example):")
        for k, ids in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(ids):4d}  {k}\n        e.g. {examples[k][:300]}")
            print("        cases: " + ", ".join(i.split("-")[0] for i in ids))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
