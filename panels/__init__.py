"""Panels: draw only."""
from __future__ import annotations

from . import vehicle_panel

classes = vehicle_panel.classes
