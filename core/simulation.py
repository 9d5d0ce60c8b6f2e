"""``simulate``: scenario → forward simulation → Trajectory, dispatched on ``[vehicle] type``.

Each vehicle type has a reader module in ``core.scenario`` exposing
``simulate(root: Table) -> Trajectory``; it validates everything it reads (raising
ScenarioError naming the key) before any integration starts.
"""
from __future__ import annotations

import importlib

from .errors import ScenarioError
from .scenario import Table
from .trajectory import Trajectory

# vehicle type → reader module in core.scenario
SIMULATORS: dict[str, str] = {
    "rigid_body": "rigid_body",
    "car": "car",
    "snakeboard": "snakeboard",
    "helicopter": "helicopter",
    "boat": "boat",
    "chain": "chain",
    "tree": "tree",
}


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    kind = vehicle.string("type", choices=sorted(SIMULATORS))
    reader = importlib.import_module(f".scenario.{SIMULATORS[kind]}", __package__)
    return reader.simulate(root)


__all__ = ["simulate", "SIMULATORS", "ScenarioError"]
