#!/usr/bin/env python3
"""Write an Open Job Description bundle that solves and bakes many shots on a render farm.

    python scripts/farm_bundle.py SHOT.blend [SHOT.blend …] --out BUNDLE_DIR
    python scripts/farm_bundle.py shots/ --out BUNDLE_DIR --python /path/to/python-with-bpy

writes BUNDLE_DIR/template.yaml (jobtemplate-2023-09) and BUNDLE_DIR/parameter_values.yaml (the AWS
Deadline Cloud bundle layout), with asset_references.yaml, tasks.json and the two task scripts
(bake_task.sh, summary_task.sh, for other farm managers). Run it locally with
``openjd run BUNDLE_DIR/template.yaml --step Summary --run-dependencies -p Python=… -p OutputDir=…``
or submit it with ``deadline bundle submit BUNDLE_DIR``. Options: ``--help``; the job: core/farm/bundle.py.
Exit status 0, or 2 with one line on stderr for bad input (nothing written).
"""
from __future__ import annotations

import pathlib
import sys

# Run by any Python 3.11 (a pipeline's own, without this project's venv; core.farm needs only the
# standard library): the repository root, for core.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from core.farm.cli import run_bundle

if __name__ == "__main__":
    sys.exit(run_bundle(sys.argv[1:]))
