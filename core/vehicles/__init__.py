"""Vehicles built on the integrators: each module defines a dataclass of physical parameters
(validated, raising ScenarioError with the scenario key) that builds its system and simulates.

``rigid_body`` (free body, optional gravity), ``helicopter`` and ``boat`` (holonomic, SE(3)),
``car`` and ``snakeboard`` (nonholonomic, SE(2)). Import the module you need, e.g.
``from core.vehicles.rigid_body import RigidBody``.
"""
from __future__ import annotations

from .rigid_body import RigidBody

__all__ = ["RigidBody"]
