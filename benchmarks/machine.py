"""The machine a benchmark runs on, in the words its page uses: "a 2-core Intel Xeon, shared with
other jobs (load average 1.9 at the start)". Read when the run starts, so the page states where its
times were measured."""
from __future__ import annotations

import os
import platform
import re
from pathlib import Path

BUSY_LOAD = 0.5   # a one-minute load average at least this means other jobs shared the CPU


def cpu_model() -> str:
    """'Intel Xeon': the CPU's model name without trademarks, clock or 'Processor'."""
    info = Path("/proc/cpuinfo")
    lines = info.read_text().splitlines() if info.exists() else []
    name = next((line.split(":", 1)[1] for line in lines if line.startswith("model name")),
                platform.processor() or platform.machine())
    return " ".join(re.sub(r"\((R|TM)\)|\bCPU\b|\bProcessor\b|@.*", " ", name).split())


def measured_on() -> str:
    """'a 2-core Intel Xeon', with ', shared with other jobs (load average …)' when the CPU is busy."""
    text = f"a {os.cpu_count()}-core {cpu_model()}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load >= BUSY_LOAD:
        text += f", shared with other jobs (load average {load:.1f} at the start)"
    return text
