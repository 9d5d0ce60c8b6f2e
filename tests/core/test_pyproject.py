"""pyproject.toml states what other files decide: the extension's version and license
(blender_manifest.toml), and the exact tool pins of the venv (requirements.txt)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MANIFEST = tomllib.loads((ROOT / "blender_manifest.toml").read_text(encoding="utf-8"))


def pins(text: str) -> dict[str, str]:
    """name → version of every ``name==version`` line (comments and blanks ignored), names normalised."""
    out = {}
    for line in text.splitlines():
        found = re.match(r"\s*([A-Za-z0-9_.-]+)==([^\s#;]+)", line)
        if found:
            out[re.sub(r"[-_.]+", "-", found[1]).lower()] = found[2]
    return out


def test_version_and_license_are_the_manifests():
    assert PROJECT["project"]["version"] == MANIFEST["version"]
    assert [f"SPDX:{PROJECT['project']['license']}"] == MANIFEST["license"]


def test_exact_pins_are_those_of_requirements_txt():
    venv = pins((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    declared = pins("\n".join(PROJECT["build-system"]["requires"] + PROJECT["project"]["optional-dependencies"]["dev"]
                              + PROJECT["project"]["optional-dependencies"]["bpy"]))
    assert set(declared) >= {"setuptools", "ruff", "mypy", "pre-commit", "bpy"}
    assert {name: venv.get(name) for name in declared} == declared
