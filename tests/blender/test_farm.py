"""Render-farm batches in real bpy: the batch entry addon/batch.py (exit statuses 0 / 3 / 2, its report),
bitwise-identical F-curves from two processes, and the Open Job Description bundle of
scripts/farm_bundle.py checked and run locally by ``openjd`` over three small shots (a car, a helicopter,
and a car whose iteration limit is too small to converge), the bpy-module Python standing in for Blender.

Every batch runs in its own process, as on a farm. Each baked shot is reopened and checked on its
F-curves (frame_set + matrix_world at the keys, and the digest its report gives).
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytest.importorskip("scipy.sparse")

from small_shots import build_car, build_helicopter  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATCH = ROOT / "addon" / "batch.py"
GOALS = {"car": ("Car", 25, (10.0, 2.0, 0.0)), "helicopter": ("Heli", 17, (6.0, 0.0, 5.0))}
FIGURES: dict[str, float] = {}   # measured, printed at the end of the module


@pytest.fixture(scope="module")
def shots(addon, tmp_path_factory) -> pathlib.Path:
    """car.blend, helicopter.blend, stuck.blend (a car with Max Iterations 2), empty.blend (no vehicle)."""
    folder = tmp_path_factory.mktemp("shots")
    build_car(folder / "car.blend")
    build_helicopter(folder / "helicopter.blend")
    build_car(folder / "stuck.blend", max_iter=2)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(folder / "empty.blend"))
    yield folder
    if FIGURES:
        print(f"\nmeasured (bpy {bpy.app.version_string}):",
              ", ".join(f"{k} = {v:.3g}" for k, v in sorted(FIGURES.items())))


def digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def batch(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BATCH), *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=env)


def read_json(path: pathlib.Path):
    return json.loads(path.read_text(encoding="utf-8"))


def keyframes(path: pathlib.Path) -> dict:
    """Every F-curve of every object in the file at ``path``: (object, data path, index) → the float32 bits of
    its keyframes' co, left and right handles."""
    from vehicle_motion.addon import action_compat
    bpy.ops.wm.open_mainfile(filepath=str(path))
    out = {}
    for ob in bpy.data.objects:
        ref = action_compat.assigned(ob)
        for fc in action_compat.fcurves(ref) if ref is not None else ():
            arrays = []
            for prop in ("co", "handle_left", "handle_right"):
                a = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
                fc.keyframe_points.foreach_get(prop, a)
                arrays.append(a.tobytes())
            out[(ob.name, fc.data_path, fc.array_index)] = tuple(arrays)
    return out


def check_baked(path: pathlib.Path, kind: str) -> None:
    """The reopened file's vehicle is baked, starts at its first key and reaches its goal key."""
    vehicle, last, goal = GOALS[kind]
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene, obj = bpy.context.scene, bpy.data.objects[vehicle]
    assert obj.vehicle_motion.is_baked
    scene.frame_set(last)
    assert np.array(obj.matrix_world.translation) == pytest.approx(goal, abs=1e-4)
    scene.frame_set(1)
    assert np.array(obj.matrix_world.translation)[0] == pytest.approx(0.0, abs=1e-4)


# ----------------------------------------------------------------------------- the batch entry

def test_batch_bakes_a_shot_into_a_new_file_with_a_report(shots, tmp_path):
    before = digest(shots / "car.blend")
    done = batch(shots / "car.blend", "--out", tmp_path / "car.blend")
    assert done.returncode == 0, done.stderr[-2000:]
    assert digest(shots / "car.blend") == before   # the input is never written
    rep = read_json(tmp_path / "car.json")
    assert rep["shot"] == str(shots / "car.blend") and rep["output"] == str(tmp_path / "car.blend")
    assert rep["exit_code"] == 0 and rep["blender"] == bpy.app.version_string
    assert rep["settings"] == {"max_iter": 500, "time_limit_s": 60.0, "solver_backend": "SCIPY"}
    (car,) = rep["vehicles"]
    assert car["vehicle"] == "Car" and car["status"] == "baked" and car["message"].startswith("Solved 'Car': cost")
    assert car["iterations"] > 0 and car["max_constraint_violation"] < 1e-6 and car["backend"] == "scipy"
    assert car["solve_time_s"] > 0 and car["output"] == str(tmp_path / "car.blend")
    check_baked(tmp_path / "car.blend", "car")
    from vehicle_motion.addon import batch as entry
    assert entry.fcurve_digest([bpy.data.objects["Car"], *bpy.data.objects["Car"].children_recursive]) == \
        car["fcurves_sha256"]


def test_batch_default_names_and_a_file_already_open(shots, tmp_path):
    """``blender -b SHOT --python batch.py -- [options]``: no SHOT argument bakes the open file; the output
    defaults to SHOT_baked.blend beside it and the report to its .json."""
    from vehicle_motion.addon import batch as entry
    shutil.copy(shots / "car.blend", tmp_path / "shot.blend")
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))
    assert entry.main([]) == 0
    assert (tmp_path / "shot_baked.blend").is_file()
    assert read_json(tmp_path / "shot_baked.json")["vehicles"][0]["status"] == "baked"


def test_batch_not_converged_is_exit_3_and_writes_no_blend(shots, tmp_path):
    done = batch(shots / "stuck.blend", "--out", tmp_path / "stuck.blend")
    assert done.returncode == 3, done.stderr[-2000:]
    (car,) = read_json(tmp_path / "stuck.json")["vehicles"]
    assert car["status"] == "not_converged" and car["solver_status"] == "iteration_limit"
    assert car["iterations"] == 2 and car["output"] == "" and "ran out of iterations" in car["message"]
    assert not (tmp_path / "stuck.blend").exists()
    assert f"batch: stuck.blend: {car['message']}" in done.stderr.splitlines()


@pytest.mark.parametrize("case", ["missing", "no_vehicle", "unknown_vehicle", "overwrite", "bad_option"])
def test_batch_bad_input_is_exit_2(shots, tmp_path, case):
    car = shots / "car.blend"
    before = digest(car)
    args, message = {
        "missing": ([tmp_path / "nope.blend", "--report", tmp_path / "r.json"], f"{tmp_path / 'nope.blend'}: no such file"),
        "no_vehicle": ([shots / "empty.blend", "--out", tmp_path / "e.blend", "--report", tmp_path / "r.json"],
                       "no vehicle Solve plans in empty.blend (set an object's Vehicle type)"),
        "unknown_vehicle": ([car, "--vehicle", "Car", "--vehicle", "Bus", "--out", tmp_path / "c.blend",
                             "--report", tmp_path / "r.json"], "'Bus': no object of that name in the scene"),
        "overwrite": ([car, "--out", car, "--report", tmp_path / "r.json"],
                      f"--out: {car} is the input file; give --overwrite to replace it"),
        "bad_option": ([car, "--max-iter", "-3"], "argument --max-iter: must be a finite number ≥ 0, not -3"),
    }[case]
    done = batch(*args)
    assert done.returncode == 2, done.stderr[-2000:]
    assert message in done.stderr
    assert digest(car) == before
    if case == "bad_option":
        assert done.stderr.strip().splitlines()[-1] == f"batch: error: {message}"
        return
    rep = read_json(tmp_path / "r.json")
    assert rep["exit_code"] == 2 and message in [v["message"] for v in rep["vehicles"]]
    if case == "unknown_vehicle":   # the vehicle that exists is still baked and saved
        assert [v["status"] for v in rep["vehicles"]] == ["error", "baked"]
        check_baked(tmp_path / "c.blend", "car")


@pytest.mark.parametrize("kind, backend", [("car", "scipy"), ("helicopter", "scipy"), ("car", "ipopt")])
def test_two_processes_bake_bitwise_identical_fcurves(shots, tmp_path, kind, backend):
    """The same shot baked by two processes: the same keyframes, bit for bit, and the same digest."""
    if backend == "ipopt":
        from vehicle_motion.core.dmoc.solve import ipopt_available
        if not ipopt_available():
            pytest.skip("cyipopt is not installed in this environment")
    for run in (1, 2):
        done = batch(shots / f"{kind}.blend", "--out", tmp_path / f"{run}.blend", "--backend", backend)
        assert done.returncode == 0, done.stderr[-2000:]
    first, second = keyframes(tmp_path / "1.blend"), keyframes(tmp_path / "2.blend")
    vehicle = GOALS[kind][0]
    assert any(key[0] == vehicle for key in first) and first == second
    reports = [read_json(tmp_path / f"{run}.json")["vehicles"][0] for run in (1, 2)]
    assert reports[0]["fcurves_sha256"] == reports[1]["fcurves_sha256"] and reports[0]["backend"] == backend


# ----------------------------------------------------------------------------- the farm job, run by openjd

def openjd() -> str:
    """The openjd command: next to this Python, else the project's .venv's (it runs any Python's tasks)."""
    found = shutil.which("openjd", path=os.pathsep.join([os.path.dirname(sys.executable), str(ROOT / ".venv" / "bin")]))
    if found is None:
        pytest.skip("openjd-cli is not installed (a test dependency of .venv: bash scripts/ensure_env.sh)")
    return found


@pytest.fixture(scope="module")
def bundle(shots, tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("farm")
    for name in ("car", "helicopter", "stuck"):
        shutil.copy(shots / f"{name}.blend", folder / f"{name}.blend")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "farm_bundle.py"), folder / "car.blend",
                           folder / "helicopter.blend", folder / "stuck.blend", "--out", folder / "bundle"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return folder


def test_openjd_check_accepts_the_template(bundle):
    done = subprocess.run([openjd(), "check", str(bundle / "bundle" / "template.yaml")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passes validation checks" in done.stdout


def test_openjd_run_bakes_every_shot_and_summarises_the_failure(bundle, tmp_path):
    tool = openjd()
    inputs = {name: digest(bundle / f"{name}.blend") for name in ("car", "helicopter", "stuck")}
    out = tmp_path / "out"
    started = time.perf_counter()
    done = subprocess.run([tool, "run", str(bundle / "bundle" / "template.yaml"), "--step", "Summary",
                           "--run-dependencies", "-p", f"Python={sys.executable}", "-p", f"OutputDir={out}"],
                          capture_output=True, text=True, timeout=900)
    FIGURES["openjd_run_3_shots_wall_s"] = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Session ended successfully" in done.stdout and "Chunks run: 4" in done.stdout
    entries = read_json(out / "summary.json")
    assert [(pathlib.Path(e["shot"]).name, e["vehicle"], e["status"]) for e in entries] == [
        ("car.blend", "Car", "baked"), ("helicopter.blend", "Heli", "baked"), ("stuck.blend", "Car", "not_converged")]
    for e in entries:
        for figure in ("task", "batch", "solve"):
            FIGURES[f"{pathlib.Path(e['shot']).stem}_{figure}_s"] = e[f"{figure}_time_s"]
        assert e["task_time_s"] > e["batch_time_s"] > e["solve_time_s"] > 0
    stuck = entries[2]
    assert stuck["output"] == "" and "ran out of iterations" in stuck["message"] and stuck["exit_code"] == 3
    assert not (out / "baked" / "stuck.blend").exists()
    table = (out / "summary.txt").read_text(encoding="utf-8")
    assert "stuck.blend       Car      not_converged" in table and table.endswith(
        "3 vehicles in 3 shots: 2 baked, 1 not converged, 0 error\n")
    for e, kind in zip(entries[:2], ("car", "helicopter")):
        assert e["output"] == str(out / "baked" / f"{kind}.blend")
        check_baked(pathlib.Path(e["output"]), kind)
        from vehicle_motion.addon import batch as entry
        obj = bpy.data.objects[GOALS[kind][0]]
        assert entry.fcurve_digest([obj, *obj.children_recursive]) == e["fcurves_sha256"]
    assert {name: digest(bundle / f"{name}.blend") for name in inputs} == inputs   # the shots are untouched
    assert sorted(p.name for p in out.iterdir()) == ["baked", "reports", "summary.json", "summary.txt"]


def test_openjd_run_one_task_per_shot_and_vehicle(bundle, tmp_path):
    """``--per-vehicle``: a task per shot and named vehicle; a shot without that vehicle is an error entry of
    its own, and the other task still bakes."""
    tool = openjd()
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "farm_bundle.py"), bundle / "car.blend",
                           bundle / "helicopter.blend", "--vehicle", "Car", "--per-vehicle", "--out", tmp_path / "b",
                           "--python", sys.executable], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    done = subprocess.run([tool, "run", str(tmp_path / "b" / "template.yaml"), "--step", "Summary", "--run-dependencies",
                           "-p", f"OutputDir={out}"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    entries = read_json(out / "summary.json")
    assert [(pathlib.Path(e["shot"]).name, e["vehicle"], e["status"], e["message"]) for e in entries][1] == (
        "helicopter.blend", "Car", "error", "'Car': no object of that name in the scene")
    assert entries[0]["status"] == "baked" and entries[0]["output"] == str(out / "baked" / "car__Car.blend")
    check_baked(out / "baked" / "car__Car.blend", "car")
    assert not (out / "baked" / "helicopter__Car.blend").exists()
