"""Scenario files (TOML) → validated values. Every error names its key.

A scenario is read through :class:`Table` wrappers that check type, finiteness, magnitude
(at most ``MAX_MAGNITUDE``) and range, and record which keys were read, so that :meth:`Table.finish` can refuse
unknown keys (a typo must never be silently ignored). Errors are
:class:`~core.errors.ScenarioError` with a location such as ``[vehicle] mass``.
"""
from __future__ import annotations

import math
import tomllib
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import ScenarioError

REQUIRED = object()
MAX_MAGNITUDE = 1e15  # no quantity of a vehicle shot comes near this; beyond it squares overflow soon
# [integrator] steps: a simulation runs at most MAX_STEPS; a solve (an NLP) with more than MAX_SOLVE_STEPS
# is not a sensible request. Here, not beside the readers, so the add-on reads them without the integrators.
MAX_STEPS = 10_000_000
MAX_SOLVE_STEPS = 20_000


class Table:
    """A TOML table with checked accessors; ``path`` is its dotted name ('' for the root)."""

    def __init__(self, data: dict[str, Any], path: str = ""):
        if not isinstance(data, dict):
            raise ScenarioError(f"[{path}]" if path else "scenario", "must be a table")
        self.data = data
        self.path = path
        self._used: set[str] = set()

    # -- locations -------------------------------------------------------------
    def where(self, key: str | None = None) -> str:
        if not self.path:
            return f"[{key}]" if key else "scenario"
        return f"[{self.path}] {key}" if key else f"[{self.path}]"

    def error(self, key: str | None, problem: str) -> ScenarioError:
        return ScenarioError(self.where(key), problem)

    # -- presence ----------------------------------------------------------------
    def has(self, key: str) -> bool:
        return key in self.data

    def _get(self, key: str, default: Any) -> Any:
        self._used.add(key)
        if key not in self.data:
            if default is REQUIRED:
                raise self.error(key, "missing")
            return default
        return self.data[key]

    def keys(self) -> Iterable[str]:
        return self.data.keys()

    # -- scalars -------------------------------------------------------------------
    def number(self, key: str, default: Any = REQUIRED, *, positive: bool = False,
               nonnegative: bool = False, low: float | None = None, high: float | None = None,
               integer: bool = False) -> Any:
        if key not in self.data and default is not REQUIRED:
            self._used.add(key)
            return default
        value = self._get(key, default)
        return check_number(value, self.where(key), positive=positive, nonnegative=nonnegative,
                            low=low, high=high, integer=integer)

    def boolean(self, key: str, default: Any = REQUIRED) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {_show(value)}")
        return value

    def string(self, key: str, default: Any = REQUIRED, choices: Sequence[str] | None = None) -> str:
        value = self._get(key, default)
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {_show(value)}")
        if choices is not None and value not in choices:
            raise self.error(key, f"unknown value {value!r}; expected one of: {', '.join(choices)}")
        return value

    def vector(self, key: str, n: int | None = None, default: Any = REQUIRED, *,
               positive: bool = False, nonnegative: bool = False) -> np.ndarray:
        if key not in self.data and default is not REQUIRED:
            self._used.add(key)
            return np.asarray(default, dtype=float)
        value = self._get(key, default)
        return check_vector(value, self.where(key), n, positive=positive, nonnegative=nonnegative)

    def quaternion(self, key: str, default: Any = REQUIRED) -> np.ndarray:
        """A unit quaternion (w, x, y, z); refuses one whose norm is off by more than 1e-6."""
        q = self.vector(key, 4, default)
        norm = float(np.linalg.norm(q))
        if abs(norm - 1.0) > 1e-6:
            raise self.error(key, f"must be a unit quaternion (w, x, y, z), norm is {norm:.9g}")
        return q / norm

    def rows(self, key: str, width: int, default: Any = REQUIRED) -> np.ndarray:
        """A list of equal-length numeric rows, e.g. collision_spheres = [[x, y, z, r], ...]."""
        value = self._get(key, default)
        if not isinstance(value, list) or not value:
            raise self.error(key, f"must be a non-empty list of [{width} numbers] rows")
        return np.stack([check_vector(r, f"{self.where(key)}[{i}]", width) for i, r in enumerate(value)])

    # -- sub-tables ----------------------------------------------------------------------
    def table(self, key: str, required: bool = False) -> "Table":
        if key not in self.data:
            self._used.add(key)
            if required:
                raise ScenarioError(f"[{self._child(key)}]", "missing table")
            return Table({}, self._child(key))
        value = self._get(key, REQUIRED)
        if not isinstance(value, dict):
            raise ScenarioError(f"[{self._child(key)}]", f"must be a table, got {_show(value)}")
        return Table(value, self._child(key))

    def tables(self, key: str) -> list["Table"]:
        """An array of tables ([[waypoints]]); missing means empty."""
        value = self._get(key, [])
        if isinstance(value, dict) or not isinstance(value, list):
            raise ScenarioError(f"[[{self._child(key)}]]", "must be an array of tables ([[...]])")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise ScenarioError(f"[[{self._child(key)}]] #{i + 1}", "must be a table")
            out.append(Table(item, f"{self._child(key)} #{i + 1}"))
        return out

    def _child(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def finish(self, allowed_extra: Iterable[str] = ()) -> None:
        """Refuse keys nobody read (typos, keys of another vehicle type)."""
        extra = set(self.data) - self._used - set(allowed_extra)
        if extra:
            key = sorted(extra)[0]
            if not self.path and isinstance(self.data[key], dict):
                raise ScenarioError(f"[{key}]", "unknown table")
            raise self.error(key, "unknown key")


def check_number(value: Any, where: str, *, positive: bool = False, nonnegative: bool = False,
                 low: float | None = None, high: float | None = None, integer: bool = False) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError(where, f"must be a number, got {_show(value)}")
    if integer and not isinstance(value, int):
        raise ScenarioError(where, f"must be a whole number, got {_show(value)}")
    if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:  # TOML integers are unbounded in tomllib
        raise ScenarioError(where, f"{_show(value)} is out of range (at most {MAX_MAGNITUDE:g} in magnitude)")
    if not math.isfinite(value):
        raise ScenarioError(where, f"must be finite, got {value}")
    if positive and value <= 0:
        raise ScenarioError(where, f"must be positive, got {value}")
    if nonnegative and value < 0:
        raise ScenarioError(where, f"must not be negative, got {value}")
    if low is not None and value < low:
        raise ScenarioError(where, f"must be at least {_plain_number(low)}, got {_plain_number(value)}")
    if high is not None and value > high:
        raise ScenarioError(where, f"must be at most {_plain_number(high)}, got {_plain_number(value)}")
    if abs(value) > MAX_MAGNITUDE:
        raise ScenarioError(where, f"{value:g} is out of range (at most {MAX_MAGNITUDE:g} in magnitude)")
    return int(value) if integer else float(value)


def check_vector(value: Any, where: str, n: int | None = None, *, positive: bool = False,
                 nonnegative: bool = False) -> np.ndarray:
    if not isinstance(value, list):
        size = f"{n} numbers" if n else "numbers"
        raise ScenarioError(where, f"must be a list of {size}, got {_show(value)}")
    if n is not None and len(value) != n:
        raise ScenarioError(where, f"must have {n} entries, got {len(value)}")
    for i, v in enumerate(value):
        check_number(v, f"{where}[{i}]", positive=positive, nonnegative=nonnegative)
    return np.asarray(value, dtype=float)


def _plain_number(x: float) -> str:
    """86400, 10000000, 1.5, 1e+300: whole numbers without an exponent while they are exact."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def loads(text: str, source: str = "scenario") -> Table:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(source, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(source, "not a scenario (nested too deeply)") from None
    return Table(data)


def load(path: str) -> Table:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(str(path), "not UTF-8 text") from None
    return loads(text, str(path))
