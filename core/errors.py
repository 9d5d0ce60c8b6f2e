"""Errors that callers report as one line (CLI: stderr + exit 2; operators: self.report)."""
from __future__ import annotations


class VehicleMotionError(Exception):
    """Base class of every error the project reports to a user."""


class ScenarioError(VehicleMotionError):
    """Bad input, naming where it is: a key path such as ``[vehicle] mass``."""

    def __init__(self, where: str, problem: str):
        self.where = one_line(where)
        self.problem = one_line(problem)
        super().__init__(f"{self.where}: {self.problem}" if where else self.problem)


def one_line(text: str) -> str:
    """``text`` with control characters (a newline in a quoted TOML key, …) escaped, so that a
    message stays one line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
