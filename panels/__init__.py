"""Panels: draw only."""
from __future__ import annotations

from . import articulation_panel, vehicle_panel

classes = (*vehicle_panel.classes, *articulation_panel.classes)
