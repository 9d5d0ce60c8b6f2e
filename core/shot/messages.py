"""Solver messages in the artist's terms: scenario labels become object names and frames."""
from __future__ import annotations

import re

from .frames import fmt_frame


def relabel(problem, message: str, segment) -> str:
    """``message`` of core with its scenario labels (obstacle #i, waypoint #i, node/step k) turned into
    the objects and frames of ``problem``'s ``segment``."""
    spf = problem.frame_map.steps_per_frame
    steps = segment.scenario.get("integrator", {}).get("steps") or 1
    frames_per_step = (segment.frame_end - segment.frame_start) / steps if steps else 1.0 / spf

    def obstacle(m):
        i = int(m.group(1)) - 1
        return problem.obstacles[i].label() if 0 <= i < len(problem.obstacles) else m.group(0)

    def waypoint(m):
        i = int(m.group(1)) - 1
        labels = segment.waypoint_labels
        return labels[i] if 0 <= i < len(labels) else m.group(0)

    def node(m):
        return f"frame {fmt_frame(round(segment.frame_start + float(m.group(2)) * frames_per_step, 3))}"

    message = re.sub(r"obstacle #(\d+) \(\w+\)", obstacle, message)
    message = re.sub(r"waypoint #(\d+)", waypoint, message)
    message = re.sub(r"\b(node|step) (\d+(?:\.\d+)?)", node, message)
    return message


__all__ = ["relabel"]
