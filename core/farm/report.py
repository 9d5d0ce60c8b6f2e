"""The batch entry's report: one JSON file per baked .blend, one entry per vehicle.

``{"shot", "output", "exit_code", "wall_time_s", "open_time_s", "save_time_s", "blender",
"vehicle_motion", "settings", "notes", "vehicles": [entry, …]}``, each entry ``{"vehicle", "status",
"message", "output", …figures}`` with ``status`` one of :data:`STATUSES`. A shot that could not be
baked at all (the file cannot be opened, it has no vehicle) has one entry whose ``vehicle`` is empty.
Numbers that are not finite (the cost of a solve that never ran) are written as null: the report is
strict JSON.
"""
from __future__ import annotations

import json
import math

from ..outputs import write_text

BAKED, NOT_CONVERGED, ERROR = "baked", "not_converged", "error"
STATUSES = (BAKED, NOT_CONVERGED, ERROR)
EXIT_OK, EXIT_BAD_INPUT, EXIT_NOT_CONVERGED = 0, 2, 3
FIGURES = ("cost", "max_constraint_violation", "iterations", "segments", "read_time_s", "solve_time_s",
           "bake_time_s")


def finite(value):
    """``value`` as a JSON number, or None when it is not a finite one."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    value = float(value)
    return value if math.isfinite(value) else None


def entry(vehicle: str, status: str, message: str, output: str = "", **figures) -> dict:
    """One vehicle's line of a report (``figures``: any of :data:`FIGURES`, ``backend``, ``warnings``,
    ``detail``, ``fcurves_sha256``)."""
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    out = {"vehicle": vehicle, "status": status, "message": message, "output": output}
    for key, value in figures.items():
        out[key] = value if isinstance(value, (str, list)) else finite(value)
    return out


def exit_code(entries: list[dict]) -> int:
    """0 every vehicle baked, 2 one of them is an error (bad input), else 3 (one did not converge)."""
    statuses = {e["status"] for e in entries}
    if not entries or ERROR in statuses:
        return EXIT_BAD_INPUT
    return EXIT_NOT_CONVERGED if NOT_CONVERGED in statuses else EXIT_OK


def dumps(report: dict) -> str:
    return json.dumps(report, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def write(path: str, report: dict, option: str = "--report") -> None:
    """``report`` into ``path``, whole or not at all."""
    write_text(path, dumps(report), option)


def read(path: str) -> dict:
    """A report written by :func:`write`; ValueError (one line) when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"unreadable report {path}: {exc}") from None
    vehicles = data.get("vehicles") if isinstance(data, dict) else None
    if not isinstance(vehicles, list) or not all(
            isinstance(v, dict) and v.get("status") in STATUSES for v in vehicles):
        raise ValueError(f"not a Vehicle Motion batch report: {path}")
    return data


__all__ = ["BAKED", "NOT_CONVERGED", "ERROR", "STATUSES", "EXIT_OK", "EXIT_BAD_INPUT", "EXIT_NOT_CONVERGED",
           "FIGURES", "finite", "entry", "exit_code", "dumps", "write", "read"]
