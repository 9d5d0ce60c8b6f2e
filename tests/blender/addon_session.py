"""The extension imported as Blender imports it: the repository root as the package ``vehicle_motion``.

Used by conftest.py (the session's ``addon`` fixture registers it) and by scene_fuzz.py run as a
script. Imported by bare name: tests/blender is on sys.path for its test modules (pytest's default
import mode) and for a script run from it.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = "vehicle_motion"


def import_package() -> types.ModuleType:
    """The repository as the package ``vehicle_motion`` (imported once; later calls return it)."""
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    return module
