#!/usr/bin/env python3
"""Build the Blender extension with scipy bundled as wheels, one package per platform.

    .venv/bin/python scripts/build_extension.py            # download wheels, build, validate
    .venv/bin/python scripts/build_extension.py --check    # only say which scipy wheels exist
    .venv/bin/python scripts/build_extension.py --no-download   # use the wheels in wheels/

Steps: download scipy wheels into wheels/ (``pip download --only-binary=:all: --no-deps``
for each platform and Python version); build the plain package from the repository with
Blender's own ``blender_ext.py build`` (the manifest's [build] excludes apply); unpack it
into a staging folder, add the wheels and a manifest copy listing ``wheels`` and
``platforms``; build again from there with ``--split-platforms``; validate every archive.
The repository's blender_manifest.toml is never modified. Needs ``bpy`` in the running
interpreter (for blender_ext.py) or ``--blender-ext PATH``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCIPY = "scipy==1.17.1"
PYTHONS = ("3.11", "3.13")  # Blender 4.2–5.0 run Python 3.11, Blender 5.1+ Python 3.13
# pip platform tags (Blender platform in the comment). scipy 1.17.1 has no manylinux_2_17 wheel (its Linux
# wheels are manylinux_2_27/2_28), macOS arm64 wheels need macOS 12 (OpenBLAS build; the
# 14.0 ones use Accelerate), macOS x86_64 ones 10.14.
PLATFORMS = (
    "manylinux_2_28_x86_64",  # linux-x64
    "win_amd64",              # windows-x64
    "macosx_12_0_arm64",      # macos-arm64
    "macosx_10_14_x86_64",    # macos-x64
)


def blender_ext_path() -> pathlib.Path:
    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        raise SystemExit("build_extension: bpy is not installed here; pass --blender-ext PATH")
    found = sorted(pathlib.Path(spec.origin).parent.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        raise SystemExit("build_extension: blender_ext.py not found in the bpy package")
    return found[-1]


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def pip_args(python: str, platform: str) -> list[str]:
    return ["--only-binary=:all:", "--no-deps", "--python-version", python, "--platform", platform,
            "--implementation", "cp", SCIPY]


def check_wheels() -> dict[tuple[str, str], str | None]:
    """(python, platform) → the wheel file pip would pick, or None; downloads nothing big."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for platform in PLATFORMS:
            for python in PYTHONS:
                report = pathlib.Path(tmp) / "report.json"
                done = subprocess.run(
                    [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
                     "--target", str(pathlib.Path(tmp) / "target"), "--report", str(report),
                     *pip_args(python, platform)], capture_output=True, text=True)
                name = None
                if done.returncode == 0:
                    items = json.loads(report.read_text())["install"]
                    name = items[0]["download_info"]["url"].rsplit("/", 1)[-1] if items else None
                found[python, platform] = name
    return found


def download_wheels(wheel_dir: pathlib.Path) -> list[pathlib.Path]:
    wheel_dir.mkdir(parents=True, exist_ok=True)
    for platform in PLATFORMS:
        for python in PYTHONS:
            run([sys.executable, "-m", "pip", "download", "--quiet", "-d", wheel_dir, *pip_args(python, platform)])
    return existing_wheels(wheel_dir)


def existing_wheels(wheel_dir: pathlib.Path) -> list[pathlib.Path]:
    version = SCIPY.split("==")[1]
    return sorted(wheel_dir.glob(f"scipy-{version}-*.whl"))


def manifest_with_wheels(text: str, wheels: list[str], platforms: list[str]) -> str:
    """The manifest text with top-level ``platforms`` and ``wheels`` (before the first table)."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    extra = ["# Added by scripts/build_extension.py for this build:",
             "platforms = [" + ", ".join(json.dumps(p) for p in platforms) + "]",
             "wheels = [", *(f"  {json.dumps(w)}," for w in wheels), "]", ""]
    return "\n".join(lines[:at] + extra + lines[at:]) + "\n"


def blender_platform(wheel_name: str) -> str:
    """Blender's platform name for a wheel file (its last dash-separated tag)."""
    tag = wheel_name.removesuffix(".whl").split("-")[-1]
    for system, blender_system in (("manylinux", "linux"), ("win", "windows"), ("macosx", "macos")):
        if tag.startswith(system):
            machine = "arm64" if tag.endswith("arm64") or tag.endswith("aarch64") else "x64"
            return f"{blender_system}-{machine}"
    raise SystemExit(f"build_extension: unknown wheel platform in {wheel_name}")


def build(blender_ext: pathlib.Path, wheels: list[pathlib.Path], out_dir: pathlib.Path,
          split: bool) -> list[pathlib.Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [*out_dir.glob("vehicle_motion*.zip")]:
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        plain = tmp / "plain.zip"
        run([sys.executable, blender_ext, "build", "--source-dir", ROOT, "--output-filepath", plain])
        if not wheels:
            target = out_dir / "vehicle_motion.zip"
            shutil.copy(plain, target)
            built = [target]
        else:
            stage = tmp / "stage"
            with zipfile.ZipFile(plain) as z:
                z.extractall(stage)
            (stage / "wheels").mkdir()
            for wheel in wheels:
                shutil.copy(wheel, stage / "wheels" / wheel.name)
            platforms = sorted({blender_platform(w.name) for w in wheels})
            manifest = stage / "blender_manifest.toml"
            manifest.write_text(manifest_with_wheels(
                (ROOT / "blender_manifest.toml").read_text(), [f"./wheels/{w.name}" for w in wheels], platforms))
            run([sys.executable, blender_ext, "build", "--source-dir", stage, "--output-dir", out_dir,
                 *(["--split-platforms"] if split else [])])
            built = sorted(out_dir.glob("vehicle_motion-*.zip"))
    for archive in built:
        run([sys.executable, blender_ext, "validate", archive])
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list which scipy wheels exist")
    parser.add_argument("--no-download", action="store_true", help="use the wheels already in --wheel-dir")
    parser.add_argument("--no-wheels", action="store_true", help="build without scipy (it must be installed)")
    parser.add_argument("--no-split", action="store_true", help="one archive for every platform")
    parser.add_argument("--wheel-dir", type=pathlib.Path, default=ROOT / "wheels")
    parser.add_argument("--out-dir", type=pathlib.Path, default=ROOT / "out" / "extension")
    parser.add_argument("--blender-ext", type=pathlib.Path, help="path of Blender's blender_ext.py")
    args = parser.parse_args(argv)

    if args.check:
        missing = 0
        for (python, platform), name in check_wheels().items():
            print(f"{SCIPY} Python {python} {platform}: {name or 'NOT AVAILABLE'}")
            missing += name is None
        return 1 if missing else 0

    blender_ext = args.blender_ext or blender_ext_path()
    if args.no_wheels:
        wheels = []
    elif args.no_download:
        wheels = existing_wheels(args.wheel_dir)
        if not wheels:
            raise SystemExit(f"build_extension: no {SCIPY} wheels in {args.wheel_dir}")
    else:
        wheels = download_wheels(args.wheel_dir)
    for archive in build(blender_ext, wheels, args.out_dir, split=not args.no_split):
        print(f"built {archive} ({archive.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
