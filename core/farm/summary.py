"""The Summary step: every task's report gathered into one list, as JSON and as a table.

One entry per shot and vehicle, in task order: ``shot``, ``vehicle``, ``status`` (``baked``,
``not_converged`` or ``error``), ``message``, ``output`` (the baked .blend, empty when nothing was
written for it), the figures the report has (iterations, cost, constraint violation, solve times), and
``task_time_s`` (the batch process's wall time, Blender's start-up included) and ``batch_time_s`` (from
opening the shot to saving it: the time of all its vehicles when a task bakes a whole shot). A task
that left no report (its process crashed, timed out or never started) is an ``error`` entry saying so,
from the record its task script wrote (:mod:`.layout`): the summary lists every task of the job, not
only those that reported.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from ..outputs import write_text
from . import layout, report

_FIELDS = ("iterations", "cost", "max_constraint_violation", "solve_time_s", "read_time_s", "bake_time_s",
           "backend", "fcurves_sha256")
TIMED_OUT = (124, 137)   # coreutils timeout: the limit passed (137: killed after the grace period)


@dataclass
class Record:
    """A Bake task script's record (:data:`.task_scripts.BAKE`)."""
    status: str            # the batch's exit status, or "running"
    limit: str             # the task's time limit (s)
    message: str           # why the batch did not run, or empty
    seconds: float | None  # the task's wall time: the batch process from start to end, Blender's start-up included


def _seconds(started: str, ended: str) -> float | None:
    try:   # bash's EPOCHREALTIME follows the locale's decimal separator
        return float(ended.replace(",", ".")) - float(started.replace(",", "."))
    except ValueError:
        return None


def read_record(output_dir: str, name: str) -> Record | None:
    """The record of task ``name``, or None when it has none."""
    try:
        with open(layout.record_path(output_dir, name), encoding="utf-8") as f:
            lines = [line.strip() for line in f.read().split("\n")] + [""] * 5
    except (OSError, UnicodeDecodeError):
        return None
    return Record(lines[0], lines[1], lines[2], _seconds(lines[3], lines[4]) if lines[0] != "running" else None)


def _no_report(found: Record | None) -> str:
    """Why a task with the record ``found`` has no report, in one line."""
    if found is None:
        return "the task did not run: it left no report and no record"
    status, limit, message = found.status, found.limit, found.message
    if message:
        return message
    if status == "running":
        return "the task was stopped before the batch finished (no report)"
    if status.isdigit() and int(status) in TIMED_OUT:
        return f"the batch was stopped at the task time limit ({limit or '?'} s, TaskTimeout); no report"
    if status == "127":
        return "the Blender or Python executable was not found (exit status 127); no report"
    return f"the batch ended with exit status {status} without a report; see the task's log"


def entries_for(task: layout.Task, output_dir: str) -> list[dict]:
    """The summary entries of one task: one per vehicle of its report, or one error entry."""
    path = layout.report_path(output_dir, task.name)
    found = read_record(output_dir, task.name)
    base = {"shot": task.shot, "vehicle": task.vehicle}
    times = {"task_time_s": found.seconds if found is not None else None}
    if not os.path.exists(path):
        return [{**base, "status": report.ERROR, "message": _no_report(found), "output": "", **times}]
    try:
        data = report.read(path)
    except ValueError as exc:
        return [{**base, "status": report.ERROR, "message": str(exc), "output": "", **times}]
    out = []
    for v in data["vehicles"] or [{"vehicle": task.vehicle, "status": report.ERROR,
                                   "message": "the report lists no vehicle", "output": ""}]:
        e = {"shot": task.shot, "vehicle": v.get("vehicle") or task.vehicle, "status": v["status"],
             "message": str(v.get("message", "")), "output": str(v.get("output", ""))}
        e.update({k: v[k] for k in _FIELDS if k in v})
        e["batch_time_s"] = report.finite(data.get("wall_time_s"))   # open, solve every vehicle, bake, save
        e.update(times)
        e["exit_code"] = data.get("exit_code")
        out.append(e)
    return out


def gather(output_dir: str, tasks: list[layout.Task]) -> list[dict]:
    return [e for task in tasks for e in entries_for(task, output_dir)]


def _cell(value, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(entries: list[dict]) -> str:
    """The entries as a fixed-width table with a closing count line."""
    head = ("shot", "vehicle", "status", "iterations", "solve s", "task s", "message")
    rows = [(os.path.basename(e["shot"]), e["vehicle"] or "-", e["status"], _cell(e.get("iterations")),
             _cell(e.get("solve_time_s")), _cell(e.get("task_time_s")), e["message"]) for e in entries]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    right = (3, 4, 5)   # numbers right-aligned

    def line(row) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells + [row[-1]]).rstrip()

    counts = {s: sum(e["status"] == s for e in entries) for s in report.STATUSES}
    total = (f"{len(entries)} vehicles in {len({e['shot'] for e in entries})} shots: "
             + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items()))
    return "\n".join([line(head), *(line(r) for r in rows), total]) + "\n"


def write(output_dir: str, entries: list[dict]) -> tuple[str, str]:
    """summary.json and summary.txt in ``output_dir``: their paths."""
    json_path = os.path.join(output_dir, layout.SUMMARY_JSON)
    text_path = os.path.join(output_dir, layout.SUMMARY_TEXT)
    write_text(json_path, report.dumps(entries), "OutputDir")
    write_text(text_path, table(entries), "OutputDir")
    return json_path, text_path


def read_tasks(path: str) -> list[layout.Task]:
    """The job's task list (the bundle's ``tasks.json``: ``[{"shot", "vehicle", "name"}, …]``)."""
    try:
        with open(path, encoding="utf-8") as f:
            items = json.load(f)
        return [layout.Task(str(t["shot"]), str(t.get("vehicle", "")), str(t["name"])) for t in items]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"unreadable task list {path}: {type(exc).__name__}: {exc}") from None


__all__ = ["gather", "entries_for", "table", "write", "read_tasks", "read_record", "Record", "TIMED_OUT"]
