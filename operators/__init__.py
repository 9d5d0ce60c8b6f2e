"""Operators: thin (poll, gather settings, call addon/, report)."""
from __future__ import annotations

from . import bake, scene_setup, secondary, simulate, solve

classes = (bake.VEHICLE_MOTION_OT_bake, bake.VEHICLE_MOTION_OT_clear_bake,
           *solve.classes, *simulate.classes, *scene_setup.classes, *secondary.classes)
