"""Render-farm batches in plain Python (no bpy): Open Job Description bundles and their summaries.

:mod:`.bundle` writes a job bundle (``template.yaml`` and ``parameter_values.yaml``) whose tasks run
the batch entry ``addon/batch.py`` on each shot; :mod:`.report` is the format of the batch's per-shot
report; :mod:`.summary` gathers the reports in the job's last step; :mod:`.layout` says where the
files go; :mod:`.task_scripts` holds the job's two bash scripts; :mod:`.yaml_text` writes the YAML;
:mod:`.cli` is the command lines (``scripts/farm_bundle.py``, ``python -m core.farm``). The Blender
side (opening, solving, baking, saving) is ``addon.batch``.
"""
from __future__ import annotations

from . import bundle, layout, report, summary, yaml_text

__all__ = ["bundle", "layout", "report", "summary", "yaml_text"]
