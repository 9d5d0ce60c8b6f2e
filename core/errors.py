"""Errors that callers report as one line (CLI: stderr + exit 2; operators: self.report)."""
from __future__ import annotations


class VehicleMotionError(Exception):
    """Base class of every error the project reports to a user."""


class ScenarioError(VehicleMotionError):
    """Bad input, naming where it is: a key path such as ``[vehicle] mass``."""

    def __init__(self, where: str, problem: str):
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}" if where else problem)
