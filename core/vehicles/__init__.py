"""Vehicles built on the integrators: each module defines a dataclass of physical parameters
(validated, raising ScenarioError with the scenario key) that builds its system and simulates.

``rigid_body`` (free body, optional gravity), ``helicopter`` and ``boat`` (holonomic, SE(3)),
``car`` and ``snakeboard`` (nonholonomic, SE(2)). Import the module you need, e.g.
``from core.vehicles.rigid_body import RigidBody``. Each vehicle's names, units, presets and limits
are its spec (:mod:`.spec`, ``<vehicle>_spec``), which import no dynamics.
"""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # RigidBody on first use: importing this package (for a spec) must not load the integrators (scipy)
    if name == "RigidBody":
        from .rigid_body import RigidBody
        return RigidBody
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RigidBody"]
