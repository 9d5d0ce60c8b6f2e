"""The extension manifest and package, checked with Blender's own extension command line."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap
import tomllib
import zipfile

import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
import build_extension  # noqa: E402

BLENDER_EXT = build_extension.blender_ext_path()


def blender_ext(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BLENDER_EXT), *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def test_manifest_fields():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert manifest["schema_version"] == "1.0.0"
    assert (manifest["id"], manifest["version"], manifest["name"]) == ("vehicle_motion", "0.1.0", "Vehicle Motion")
    assert manifest["type"] == "add-on" and manifest["blender_version_min"] == "4.2.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert len(manifest["tagline"]) <= 64 and not manifest["tagline"].endswith(".")
    assert "wheels" not in manifest  # added by scripts/build_extension.py to a staged copy only


def test_blender_validates_manifest():
    done = blender_ext("validate", ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def plain_package(tmp_path_factory) -> pathlib.Path:
    """The package built from the checkout without wheels (no network)."""
    out = tmp_path_factory.mktemp("build") / "vehicle_motion.zip"
    done = blender_ext("build", "--source-dir", ROOT, "--output-filepath", out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_build_contains_package_and_excludes_development_files(plain_package):
    names = zipfile.ZipFile(plain_package).namelist()
    for required in ("blender_manifest.toml", "__init__.py", "core/__init__.py", "core/trajectory.py",
                     "core/lie/quaternion.py", "addon/__init__.py", "addon/baking.py",
                     "operators/bake.py", "panels/vehicle_panel.py"):
        assert required in names, required
    top = {name.split("/")[0] for name in names}
    for excluded in ("tests", "samples", "benchmarks", "docs", "scripts", "out", "wheels", ".ci", ".git",
                     ".venv", ".venv-bpy50", ".gitignore", ".pre-commit-config.yaml", "pyproject.toml",
                     "requirements.txt"):
        assert excluded not in top, excluded
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".md", ".sh"))]
    done = blender_ext("validate", plain_package)
    assert done.returncode == 0, done.stdout + done.stderr


def test_built_package_registers(plain_package, tmp_path):
    """Unpacked as Blender installs it, the package imports and registers on its own (the script's folder,
    first on sys.path, holds the package as Blender's extension folder does)."""
    target = tmp_path / "vehicle_motion"
    zipfile.ZipFile(plain_package).extractall(target)
    script = tmp_path / "register_built.py"
    script.write_text(textwrap.dedent('''
        import sys, importlib
        import bpy
        package = importlib.import_module("vehicle_motion")
        assert package.__file__.startswith(sys.argv[1]), package.__file__
        package.register()
        try:
            assert bpy.ops.vehicle_motion.bake.get_rna_type().identifier == "VEHICLE_MOTION_OT_bake"
        finally:
            package.unregister()
        print("BUILT PACKAGE REGISTERED")
    '''))
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "BUILT PACKAGE REGISTERED" in done.stdout


def test_staged_manifest_lists_wheels_before_tables():
    text = (ROOT / "blender_manifest.toml").read_text()
    wheels = ["./wheels/scipy-1.17.1-cp311-cp311-win_amd64.whl",
              "./wheels/scipy-1.17.1-cp311-cp311-macosx_12_0_arm64.whl"]
    staged = tomllib.loads(build_extension.manifest_with_wheels(text, wheels, ["macos-arm64", "windows-x64"]))
    assert staged["wheels"] == wheels and staged["platforms"] == ["macos-arm64", "windows-x64"]
    assert staged["build"] == tomllib.loads(text)["build"]
    assert build_extension.blender_platform(
        "scipy-1.17.1-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl") == "linux-x64"
    assert build_extension.blender_platform("scipy-1.17.1-cp311-cp311-macosx_12_0_arm64.whl") == "macos-arm64"


WHEELS = build_extension.existing_wheels(ROOT / "wheels")


@pytest.mark.skipif(not WHEELS, reason="no scipy wheels in wheels/ (run scripts/build_extension.py)")
def test_full_build_with_wheels(tmp_path):
    """Per-platform packages, each with its own scipy wheels, accepted by validate."""
    built = build_extension.build(BLENDER_EXT, WHEELS, tmp_path, split=True)
    platforms = {build_extension.blender_platform(w.name) for w in WHEELS}
    assert len(built) == len(platforms)
    for archive in built:
        platform = archive.stem.rsplit("-", 1)[-1].replace("_", "-")
        assert platform in platforms, archive.name
        names = zipfile.ZipFile(archive).namelist()
        packed = [n for n in names if n.startswith("wheels/")]
        assert packed and all(build_extension.blender_platform(n) == platform for n in packed), packed
        assert "core/trajectory.py" in names and "tests/" not in {n[:6] for n in names}
