"""The `python -m core simulate` contract for rigid bodies: output keys, and every kind of bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.cli import run
from tests.core.cli_contract import run_simulate

ROOT = Path(__file__).resolve().parents[3]

GOOD = """
[vehicle]
type = "rigid_body"
mass = 2.0
inertia = [3.0, 2.0, 1.0]
gravity = false

[integrator]
method = "vi-cay"
dt = 0.01
steps = 50

[initial]
position = [1.0, 2.0, 3.0]
orientation = [1.0, 0.0, 0.0, 0.0]
angular_velocity = [0.1, 2.0, 0.1]
linear_velocity = [1.0, 0.0, 0.0]
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "scenario.toml"
    p.write_text(text)
    return p


_run = run_simulate


def test_good_scenario_writes_every_contract_key(tmp_path, capsys):
    code, err, out = _run(tmp_path, GOOD, capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    n = 51
    assert np.shape(d["time"]) == (n,)
    assert np.shape(d["position"]) == (n, 3)
    assert np.shape(d["orientation"]) == (n, 4)
    assert np.shape(d["angular_velocity"]) == (n, 3)
    assert np.shape(d["linear_velocity"]) == (n, 3)
    assert np.shape(d["momentum"]["angular"]) == (n, 3)
    assert np.shape(d["momentum"]["linear"]) == (n, 3)
    for key in ("wall_time_s", "newton_iterations_mean", "blew_up"):
        assert key in d["stats"]
    assert d["stats"]["blew_up"] is False
    assert np.allclose(d["position"][0], [1, 2, 3])
    assert np.allclose(d["angular_velocity"][0], [0.1, 2.0, 0.1])
    assert np.allclose(np.linalg.norm(d["orientation"], axis=1), 1.0, atol=1e-12)
    # free flight: the discrete linear momentum stays (2, 0, 0) kg·m/s to round-off, and the
    # centre of mass follows the straight line at 1 m/s along world x to the scheme's O(h²)
    assert np.allclose(d["momentum"]["linear"], [[2.0, 0.0, 0.0]] * n, atol=1e-12)
    assert np.allclose(np.asarray(d["position"])[-1], [1.5, 2, 3], atol=1e-4)


def test_bundled_sample_runs(tmp_path):
    out = tmp_path / "box.json"
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(ROOT / "samples/tumbling_box.toml"),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    assert len(d["time"]) == 2001 and not d["stats"]["blew_up"]


BAD = [
    # (description, edit to GOOD, fragment the one-line error must contain)
    ("unknown key", GOOD.replace("gravity = false", "gravity = false\ncolour = 1"), "[vehicle] colour: unknown key"),
    ("unknown table", GOOD + "\n[extra]\na = 1\n", "[extra]"),
    ("wrong type", GOOD.replace("mass = 2.0", 'mass = "heavy"'), "[vehicle] mass: must be a number"),
    ("bool as number", GOOD.replace("mass = 2.0", "mass = true"), "[vehicle] mass: must be a number"),
    ("non-finite", GOOD.replace("mass = 2.0", "mass = inf"), "[vehicle] mass: must be finite"),
    ("nan", GOOD.replace("dt = 0.01", "dt = nan"), "[integrator] dt: must be finite"),
    ("non-positive mass", GOOD.replace("mass = 2.0", "mass = -1.0"), "[vehicle] mass: must be positive"),
    ("zero mass", GOOD.replace("mass = 2.0", "mass = 0"), "[vehicle] mass: must be positive"),
    ("non-positive inertia", GOOD.replace("[3.0, 2.0, 1.0]", "[3.0, 0.0, 1.0]"), "[vehicle] inertia[1]: must be positive"),
    ("inertia length", GOOD.replace("[3.0, 2.0, 1.0]", "[3.0, 2.0]"), "[vehicle] inertia: must have 3 entries"),
    ("dt zero", GOOD.replace("dt = 0.01", "dt = 0.0"), "[integrator] dt: must be positive"),
    ("dt negative", GOOD.replace("dt = 0.01", "dt = -0.1"), "[integrator] dt: must be positive"),
    ("steps zero", GOOD.replace("steps = 50", "steps = 0"), "[integrator] steps: must be at least 1"),
    ("steps fractional", GOOD.replace("steps = 50", "steps = 2.5"), "[integrator] steps: must be a whole number"),
    ("unknown method", GOOD.replace('"vi-cay"', '"euler"'), "[integrator] method: unknown value 'euler'"),
    ("non-unit quaternion", GOOD.replace("[1.0, 0.0, 0.0, 0.0]", "[1.0, 0.0, 0.0, 0.01]"),
     "[initial] orientation: must be a unit quaternion"),
    ("velocity length", GOOD.replace("[1.0, 0.0, 0.0]\n", "[1.0, 0.0]\n"), "[initial] linear_velocity: must have 3 entries"),
    ("unknown vehicle type", GOOD.replace('"rigid_body"', '"zeppelin"'), "[vehicle] type: unknown value 'zeppelin'"),
    ("missing vehicle", GOOD.replace("[vehicle]\ntype", "[vehicle_]\ntype"), "[vehicle]: missing table"),
    ("missing mass", GOOD.replace("mass = 2.0\n", ""), "[vehicle] mass: missing"),
    ("missing integrator", GOOD.replace("[integrator]", "[integrater]"), "[integrator]: missing table"),
    ("bad toml", GOOD.replace("mass = 2.0", "mass = = 2"), "not valid TOML"),
]


@pytest.mark.parametrize("desc,text,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, desc, text, fragment):
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 2
    assert fragment in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_bad_input_does_not_overwrite_existing_output(tmp_path, capsys):
    out = tmp_path / "traj.json"
    out.write_text("precious")
    code = run(["simulate", str(_write(tmp_path, GOOD.replace("mass = 2.0", "mass = -2"))), "--out", str(out)])
    assert code == 2
    assert out.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["scenario.toml", "traj.json"]


def test_missing_scenario_file_and_output_folder(tmp_path, capsys):
    assert run(["simulate", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "t.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    p = _write(tmp_path, GOOD)
    assert run(["simulate", str(p), "--out", str(tmp_path / "missing" / "t.json")]) == 2
    assert "--out: folder does not exist" in capsys.readouterr().err


def test_command_line_usage_errors_exit_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "core", "simulate"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", "x.toml", "--out", "/nonexistent-dir/t.json"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_blow_up_is_reported_and_output_is_finite(tmp_path, capsys):
    # An absurd spin at a huge step: either bounded or flagged, never NaN in the file.
    text = GOOD.replace("[0.1, 2.0, 0.1]", "[1e6, 3e6, 2e6]").replace("dt = 0.01", "dt = 10.0").replace(
        '"vi-cay"', '"rk4"')
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 0, err
    d = json.loads(out.read_text())  # json.loads refuses nothing, so check finiteness explicitly
    assert np.all(np.isfinite(np.asarray(d["position"], dtype=float)))
    assert d["stats"]["blew_up"] is True
    assert len(d["time"]) < 51
