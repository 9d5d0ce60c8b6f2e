"""`python -m core simulate` for ``type = "car"``: the key contract, presets, and every kind of bad input."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.cli import run
from tests.core.cli_contract import run_simulate
from core.scenario import loads
from core.scenario.car import simulate as simulate_scenario
from core.vehicles import car as C

ROOT = Path(__file__).resolve().parents[3]

GOOD = """
[vehicle]
type = "car"
mass = 1300.0
wheel_inertia = 2.0
yaw_inertia = 1800.0
wheel_radius = 0.31
wheelbase = 2.6
max_steering_angle = 0.6
max_steering_rate = 1.0
max_torque = 1500.0

[integrator]
method = "vi"
dt = 0.02
steps = 100
alpha = 0.5

[initial]
position = [1.0, 2.0]
heading = 0.5
steering_angle = 0.1
wheel_angle = 0.2
wheel_rate = 15.0

[controls.torque]
values = [%s]

[controls.steering_rate]
offset = 0.1
amplitude = [0.4]
frequency = [0.5]
phase = [0.0]
"""
TORQUE = [200.0 * math.sin(0.1 * k) for k in range(100)]


def _good() -> str:
    return GOOD % ", ".join(f"{v:.17g}" for v in TORQUE)


_run = run_simulate


def test_good_scenario(tmp_path, capsys):
    code, err, out = _run(tmp_path, _good(), capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    n = 101
    assert d["vehicle"] == "car"
    assert np.shape(d["position"]) == (n, 3) and np.shape(d["orientation"]) == (n, 4)
    assert np.shape(d["heading"]) == (n,) and np.shape(d["angular_velocity"]) == (n, 3)
    assert set(d["shape"]) == {"wheel_angle", "steering_angle"} and set(d["controls"]) == {"torque", "steering_rate"}
    assert np.shape(d["controls"]["torque"]) == (100,) and np.shape(d["shape"]["wheel_angle"]) == (n,)
    for key in ("wall_time_s", "newton_iterations_mean", "blew_up"):
        assert key in d["stats"]
    # the same run through the library
    car = C.Car(mass=1300.0, wheel_inertia=2.0, yaw_inertia=1800.0, wheel_radius=0.31, wheelbase=2.6,
                max_steering_angle=0.6, max_steering_rate=1.0, max_torque=1500.0)
    t = np.arange(100) * 0.02
    ctrl = {"torque": np.array(TORQUE), "steering_rate": 0.1 + 0.4 * np.sin(2 * np.pi * 0.5 * t)}
    init = C.CarInitial(position=(1.0, 2.0), heading=0.5, steering_angle=0.1, wheel_angle=0.2, wheel_rate=15.0)
    ref = C.simulate(car, init, ctrl, 0.02, 100, 0.5)
    assert np.allclose(d["position"], ref.position, rtol=0, atol=1e-12)
    assert np.allclose(d["controls"]["steering_rate"], ref.controls["steering_rate"], rtol=0, atol=1e-15)


def test_preset_fills_defaults_and_explicit_keys_override():
    text = """
[vehicle]
type = "car"
preset = "pickup"
mass = 2500.0
[integrator]
dt = 0.05
steps = 40
[initial]
wheel_rate = 10.0
[controls.torque]
offset = 500.0
"""
    traj = simulate_scenario(loads(text))
    car = C.Car.preset("pickup", mass=2500.0)
    ref = C.simulate(car, C.CarInitial(wheel_rate=10.0), {"torque": np.full(40, 500.0)}, 0.05, 40, 0.5)
    assert np.array_equal(traj.position, ref.position) and traj.stats["method"] == "vi"
    assert traj.stats["alpha"] == 0.5                                  # default α
    other = C.simulate(C.Car.preset("pickup"), C.CarInitial(wheel_rate=10.0), {"torque": np.full(40, 500.0)},
                       0.05, 40, 0.5)
    assert not np.allclose(traj.position, other.position)              # the override mattered


def test_bundled_sample_runs(tmp_path):
    out = tmp_path / "car.json"
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(ROOT / "samples/car_sine.toml"),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    assert len(d["time"]) == 1501 and not d["stats"]["blew_up"] and d["stats"]["steering_saturated_steps"] == 0
    assert np.max(np.abs(d["shape"]["steering_angle"])) > 0.2


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


BAD = [
    # (edit: old → new, the key the one-line error must name)
    ("mass = 1300.0", "mass = 1300.0\nmasss = 1.0", "[vehicle] masss"),
    ("dt = 0.02", "dt = 0.02\nsubsteps = 2", "[integrator] substeps"),
    ("wheel_rate = 15.0", "wheel_rate = 15.0\nspeed = 3.0", "[initial] speed"),
    ("[integrator]", "[wheels]\ncount = 4\n\n[integrator]", "[wheels]"),
    ("offset = 0.1", "offset = 0.1\nscale = 2.0", "[controls.steering_rate] scale"),
    ("mass = 1300.0", 'mass = "heavy"', "[vehicle] mass"),
    ("position = [1.0, 2.0]", "position = 3.0", "[initial] position"),
    ("position = [1.0, 2.0]", "position = [1.0, 2.0, 0.0]", "[initial] position"),
    ("steps = 100", "steps = 100.5", "[integrator] steps"),
    ("mass = 1300.0", "mass = nan", "[vehicle] mass"),
    ("wheelbase = 2.6", "wheelbase = inf", "[vehicle] wheelbase"),
    ("heading = 0.5", "heading = nan", "[initial] heading"),
    ("mass = 1300.0", "mass = 0.0", "[vehicle] mass"),
    ("yaw_inertia = 1800.0", "yaw_inertia = -5.0", "[vehicle] yaw_inertia"),
    ("max_steering_angle = 0.6", "max_steering_angle = 2.0", "[vehicle] max_steering_angle"),
    ("wheelbase = 2.6\n", "", "[vehicle] wheelbase"),
    ('type = "car"', 'type = "car"\npreset = "limousine"', "[vehicle] preset"),
    ("dt = 0.02", "dt = 0.0", "[integrator] dt"),
    ("dt = 0.02", "dt = -0.01", "[integrator] dt"),
    ("steps = 100", "steps = 0", "[integrator] steps"),
    ("alpha = 0.5", "alpha = 1.5", "[integrator] alpha"),
    ('method = "vi"', 'method = "rk4"', "[integrator] method"),
    ("steering_angle = 0.1", "steering_angle = 0.7", "[initial] steering_angle"),
    ("[controls.steering_rate]", "[controls.throttle]\noffset = 1.0\n\n[controls.steering_rate]", "[controls.throttle]"),
    ("values = [", "values = [1.0, ", "[controls.torque] values"),
    ("values = [", "values = [1e9, ", "[controls.torque] values"),   # wrong length is found first
    ("offset = 0.1", "offset = 0.9", "[controls.steering_rate]"),     # 0.9 + 0.4 sin > 1.0 limit
]


@pytest.mark.parametrize("old,new,where", BAD, ids=[b[2] + " " + b[1][:20] for b in BAD])
def test_bad_input_is_one_line_naming_the_key_and_writes_nothing(tmp_path, capsys, old, new, where):
    code, err, out = _run(tmp_path, _edit(_good(), old, new), capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert where in lines[0], (where, lines[0])
    assert not out.exists()


def test_torque_outside_its_limit(tmp_path, capsys):
    values = list(TORQUE)
    values[37] = 1600.0                                                   # max_torque = 1500
    text = GOOD % ", ".join(f"{v:.17g}" for v in values)
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 2 and "[controls.torque]" in err and "step 37" in err and not out.exists()


def test_an_existing_output_is_not_clobbered_by_bad_input(tmp_path, capsys):
    out = tmp_path / "traj.json"
    out.write_text("previous")
    scenario = tmp_path / "car.toml"
    scenario.write_text(_edit(_good(), "mass = 1300.0", "mass = -1.0"))
    assert run(["simulate", str(scenario), "--out", str(out)]) == 2
    assert out.read_text() == "previous"
