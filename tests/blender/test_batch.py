"""samples/batch_bake.py through the bpy module (a separate process, as a render farm runs it)."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

ROOT = pathlib.Path(__file__).resolve().parents[2]
import build_car_tunnel_scene as sample  # noqa: E402

BATCH = ROOT / "samples" / "batch_bake.py"


def batch(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BATCH), *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_batch_solves_bakes_and_saves(addon, tmp_path):
    sample.build(8)
    shot = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))
    out = tmp_path / "baked.blend"
    done = batch(shot, "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Solved 'Car': cost" in done.stdout and f"batch_bake: saved {out}" in done.stdout
    bpy.ops.wm.open_mainfile(filepath=str(out))
    car = bpy.data.objects["Car"]
    assert car.vehicle_motion.is_baked and car.vehicle_motion.has_trajectory
    scene = bpy.context.scene
    scene.frame_set(97)
    assert np.array(car.matrix_world.translation) == pytest.approx([60.0, 8.0, 0.0], abs=1e-5)
    assert car.vehicle_motion.wheel_rear_left.vehicle_motion.is_baked


def test_batch_failure_is_one_line_and_saves_nothing(addon, tmp_path):
    sample.build(8)
    bpy.data.objects["Car"].animation_data_clear()
    shot = tmp_path / "shot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))
    stamp = shot.stat().st_mtime_ns
    out = tmp_path / "baked.blend"
    done = batch(shot, "--out", out)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.startswith("batch_bake:")]
    assert lines == ["batch_bake: shot.blend: 'Car' has no keyframes: key its location at the start "
                     "and at the goal"], done.stderr[-2000:]
    assert not out.exists() and shot.stat().st_mtime_ns == stamp
