"""``simulate``: scenario → forward simulation → Trajectory, dispatched on ``[vehicle] type``.

Each vehicle type has a reader module in ``core.scenario`` exposing
``simulate(root: Table) -> Trajectory``; it validates everything it reads (raising
ScenarioError naming the key) before any integration starts.

Budget: a run of more than ``PROBE_ABOVE`` steps is first measured on two short probes of the same
scenario (their difference removes the fixed start-up cost); it is refused, at ``[integrator] steps``
with the figures, when its JSON would exceed ``MAX_OUTPUT_BYTES`` or its integration
``MAX_RUN_SECONDS`` on this machine.
"""
from __future__ import annotations

import copy
import importlib
import time

from .errors import ScenarioError
from .scenario import Table
from .scenario.common import MAX_STEPS
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


MAX_OUTPUT_BYTES = 1_000_000_000    # 1 GB of trajectory JSON
MAX_RUN_SECONDS = 3600.0            # one hour of integration
PROBE_ABOVE = 20_000                # steps; smaller runs start at once
PROBE_STEPS = (100, 300)


def simulate(root: Table) -> Trajectory:
    vehicle = root.table("vehicle", required=True)
    kind = vehicle.string("type", choices=sorted(SIMULATORS))
    reader = importlib.import_module(f".scenario.{SIMULATORS[kind]}", __package__)
    steps = _requested_steps(root.data)
    if steps is not None and steps > PROBE_ABOVE:
        check_budget(reader, root.data, steps)
    return reader.simulate(root)


def check_budget(reader, data: dict, steps: int) -> None:
    """Refuse a run whose output or integration time would be absurd, from two probe runs."""
    runs = []
    for n in PROBE_STEPS:
        probe = _with_steps(data, steps, n)
        if probe is None:
            return  # a per-step series of another length: the reader names it
        t0 = time.perf_counter()
        traj = reader.simulate(Table(probe))
        seconds = time.perf_counter() - t0
        if traj.stats.get("blew_up") or len(traj.time) != n + 1:
            return  # the real run stops at the same step
        runs.append((seconds, len(traj.to_json())))
    (t_a, b_a), (t_b, b_b) = runs
    extra = PROBE_STEPS[1] - PROBE_STEPS[0]
    per_step_s = max(t_b - t_a, 0.0) / extra
    per_step_b = max(b_b - b_a, 1) / extra
    size = b_a + per_step_b * (steps - PROBE_STEPS[0])
    seconds = per_step_s * steps
    most = int(min(MAX_OUTPUT_BYTES / per_step_b, MAX_RUN_SECONDS / max(per_step_s, 1e-12)))
    if size > MAX_OUTPUT_BYTES:
        raise ScenarioError("[integrator] steps", f"{steps:,} steps would write about {size / 1e9:.3g} GB of "
                            f"JSON ({per_step_b:.0f} bytes per step; the limit is {MAX_OUTPUT_BYTES / 1e9:g} GB): "
                            f"use at most {most:,} steps, or a larger dt")
    if seconds > MAX_RUN_SECONDS:
        raise ScenarioError("[integrator] steps", f"{steps:,} steps would take about {seconds / 3600:.3g} h "
                            f"({per_step_s * 1e3:.3g} ms per step here; the limit is "
                            f"{MAX_RUN_SECONDS / 3600:g} h): use at most {most:,} steps, or a larger dt")


def _requested_steps(data: dict) -> int | None:
    integrator = data.get("integrator")
    steps = integrator.get("steps") if isinstance(integrator, dict) else None
    return steps if isinstance(steps, int) and not isinstance(steps, bool) and steps <= MAX_STEPS else None


def _with_steps(data: dict, steps: int, n: int) -> dict | None:
    """A copy of the scenario with ``n`` steps, its per-step control values cut to match; None when a
    control's values do not have one value per step (the real run refuses that)."""
    probe = copy.deepcopy(data)
    probe["integrator"]["steps"] = n
    controls = probe.get("controls")
    if isinstance(controls, dict):
        for spec in controls.values():
            if isinstance(spec, dict) and "values" in spec:
                values = spec["values"]
                if not isinstance(values, list) or len(values) != steps:
                    return None
                spec["values"] = values[:n]
    return probe


__all__ = ["simulate", "check_budget", "SIMULATORS", "ScenarioError", "MAX_OUTPUT_BYTES", "MAX_RUN_SECONDS"]
