"""Where a farm job keeps its files, and the name of each task.

Under the job's output folder: ``baked/NAME.blend`` (the baked shot), ``reports/NAME.json`` (the batch
entry's report), ``reports/NAME.task`` (the task script's record: the batch's exit status, the task's time
limit, its start and end), and ``summary.json`` / ``summary.txt`` (the Summary step). NAME is the shot's file name
without ``.blend``, followed by ``__VEHICLE`` when a task bakes one vehicle, with every character that
is not a letter, a digit, ``.``, ``_`` or ``-`` replaced by ``_`` so that it is a file name on every
platform.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
BAKED, REPORTS = "baked", "reports"
SUMMARY_JSON, SUMMARY_TEXT = "summary.json", "summary.txt"


@dataclass(frozen=True)
class Task:
    """One farm task: bake ``shot`` (all its vehicles, or ``vehicle``), its files named ``name``."""
    shot: str
    vehicle: str
    name: str


def task_name(shot: str, vehicle: str = "") -> str:
    stem = os.path.basename(shot)
    if stem.lower().endswith(".blend"):
        stem = stem[:-len(".blend")]
    name = _UNSAFE.sub("_", stem) + (("__" + _UNSAFE.sub("_", vehicle)) if vehicle else "")
    return name if name.strip("._") else "_" + name


def baked_path(output_dir: str, name: str) -> str:
    return os.path.join(output_dir, BAKED, name + ".blend")


def report_path(output_dir: str, name: str) -> str:
    return os.path.join(output_dir, REPORTS, name + ".json")


def record_path(output_dir: str, name: str) -> str:
    return os.path.join(output_dir, REPORTS, name + ".task")


__all__ = ["Task", "task_name", "baked_path", "report_path", "record_path", "BAKED", "REPORTS",
           "SUMMARY_JSON", "SUMMARY_TEXT"]
