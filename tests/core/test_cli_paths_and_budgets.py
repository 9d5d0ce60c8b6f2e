"""Every command-line path keeps the contract (exit 2, one line naming the option, nothing written),
runs too large for their output or time are refused up front with the figure, and absurd or
non-positive scenario values are refused naming the key."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from core import simulation
from core.cli import run
from core.errors import ScenarioError
from core.scenario import loads

ROOT = Path(__file__).resolve().parents[2]
CAR = ROOT / "samples" / "car_tunnel.toml"

BOX = """
[vehicle]
type = "rigid_body"
mass = 2.0
inertia = [3.0, 2.0, 1.0]

[integrator]
method = "vi-cay"
dt = 0.01
steps = {steps}

[initial]
angular_velocity = [0.1, 2.0, 0.1]
"""


def _one_line(err: str) -> None:
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err


def _small_car(tmp_path: Path) -> Path:
    """The car-tunnel sample at 20 steps and a few iterations: cheap, and a real solve."""
    text = CAR.read_text().replace("steps = 100", "steps = 20")
    assert "steps = 20" in text
    p = tmp_path / "car.toml"
    p.write_text(text + "\n" if "[solver]" in text else text + "\n[solver]\nmax_iter = 5\n")
    return p


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# -- --out, --plot, --initial -------------------------------------------------------------------

@pytest.mark.parametrize("out,fragment", [
    ("/proc/vm-out.json", "--out: cannot create a file in /proc"),
    ("/sys/vm-out.json", "--out: cannot create a file in /sys"),
    ("", "--out: empty file name"),
    ("   ", "--out: empty file name"),
    ("{tmp}", "--out: is a folder"),
    ("{tmp}/missing/t.json", "--out: folder does not exist"),
])
@pytest.mark.parametrize("command", ["simulate", "solve"])
def test_bad_out_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command, out, fragment):
    scenario = tmp_path / "box.toml"
    scenario.write_text(BOX.format(steps=10))
    if command == "solve":
        scenario = _small_car(tmp_path)
    # before any work: the scenario is never even read
    monkeypatch.setattr("core.scenario.load", lambda path: pytest.fail("read the scenario before --out"))
    before = _listing(tmp_path)
    assert run([command, str(scenario), "--out", out.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert fragment in err
    assert _listing(tmp_path) == before


def test_read_only_folder_is_refused(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(folder, os.W_OK) and os.geteuid() == 0:
            # root writes anywhere a permission bit forbids; /proc and /sys above stand in for a read-only mount
            pytest.skip("running as root: permission bits do not stop writes")
        assert run(["simulate", str(ROOT / "samples" / "tumbling_box.toml"), "--out", str(folder / "t.json")]) == 2
        err = capsys.readouterr().err
        _one_line(err)
        assert "--out: cannot create a file in" in err
    finally:
        folder.chmod(stat.S_IRWXU)


@pytest.mark.parametrize("plot,fragment", [
    ("/proc/vm-plot.png", "--plot: cannot create a file in /proc"),
    ("", "--plot: empty file name"),
    ("{tmp}/missing/p.png", "--plot: folder does not exist"),
    ("{tmp}", "--plot: is a folder"),
    ("{tmp}/p.xyz", "--plot: unknown image type '.xyz'"),
])
def test_bad_plot_is_refused_before_solving_and_nothing_is_written(tmp_path, capsys, monkeypatch, plot, fragment):
    scenario = _small_car(tmp_path)
    monkeypatch.setattr("core.dmoc.solve_scenario", lambda *a, **k: pytest.fail("solved before checking --plot"))
    out = tmp_path / "t.json"
    out.write_text("precious")
    before = _listing(tmp_path)
    assert run(["solve", str(scenario), "--out", str(out), "--plot", plot.format(tmp=tmp_path)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert fragment in err
    assert out.read_text() == "precious" and _listing(tmp_path) == before


def test_a_plot_that_cannot_be_drawn_leaves_no_json(tmp_path, capsys, monkeypatch):
    def broken(traj, setup, path, title=None):
        Path(path).write_bytes(b"half a png")
        raise ValueError("renderer failed")

    monkeypatch.setattr("core.dmoc.plot.plot_solution", broken)
    scenario = _small_car(tmp_path)
    before = _listing(tmp_path)
    code = run(["solve", str(scenario), "--out", str(tmp_path / "t.json"), "--plot", str(tmp_path / "p.png")])
    assert code == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert "--plot: cannot draw" in err and "renderer failed" in err
    assert _listing(tmp_path) == before  # neither the JSON nor a half-written picture nor a temporary file


def test_solve_writes_plot_and_json_with_ordinary_permissions(tmp_path, capsys):
    scenario = _small_car(tmp_path)
    out, png = tmp_path / "t.json", tmp_path / "p.png"
    assert run(["solve", str(scenario), "--out", str(out), "--plot", str(png)]) in (0, 3)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(out.read_text())["vehicle"] == "car"
    umask = os.umask(0)
    os.umask(umask)
    for f in (out, png):
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask
    assert _listing(tmp_path) == ["car.toml", "p.png", "t.json"]


def _initial_cases(tmp_path: Path) -> list[tuple[str, str]]:
    cases = []

    def add(name: str, content: bytes | str, fragment: str) -> None:
        p = tmp_path / name
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        cases.append((str(p), fragment))

    add("broken.json", "{not json", "--initial: not valid JSON")
    add("binary.json", b"\xff\xfe\x00garbage", "--initial: not UTF-8 text")
    add("empty.json", "", "--initial: not valid JSON")
    add("list.json", "[1, 2, 3]", "--initial: not a trajectory")
    add("fields.json", '{"time": [0, 1]}', "--initial: trajectory: missing or malformed field 'position'")
    add("nan.json", '{"time": [0, NaN]}', "--initial: trajectory contains NaN")
    add("ragged.json", json.dumps({"time": [0, 1, 2], "position": [[0, 0, 0]], "orientation": [[1, 0, 0, 0]] * 3,
                                   "angular_velocity": [[0, 0, 0]] * 3, "linear_velocity": [[0, 0, 0]] * 3}),
        "--initial: trajectory: time, position, orientation and velocities must have one entry per node")
    cases.append((str(tmp_path / "absent.json"), "--initial: cannot read: No such file or directory"))
    return cases


def test_bad_initial_is_refused_before_solving(tmp_path, capsys, monkeypatch):
    scenario = _small_car(tmp_path)
    monkeypatch.setattr("core.dmoc.solve.solve", lambda *a, **k: pytest.fail("solved with a bad --initial"))
    out = tmp_path / "t.json"
    for path, fragment in _initial_cases(tmp_path):
        before = _listing(tmp_path)
        assert run(["solve", str(scenario), "--out", str(out), "--initial", path]) == 2, path
        err = capsys.readouterr().err
        _one_line(err)
        assert fragment in err, (path, err)
        assert _listing(tmp_path) == before


def test_initial_of_another_size_or_vehicle_is_named(tmp_path, capsys, monkeypatch):
    scenario = _small_car(tmp_path)
    first = tmp_path / "first.json"
    assert run(["solve", str(scenario), "--out", str(first)]) in (0, 3)
    capsys.readouterr()
    monkeypatch.setattr("core.dmoc.solve.solve", lambda *a, **k: pytest.fail("solved with a bad --initial"))
    longer = tmp_path / "longer.toml"
    longer.write_text(scenario.read_text().replace("steps = 20", "steps = 30"))
    assert run(["solve", str(longer), "--out", str(tmp_path / "t.json"), "--initial", str(first)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert "--initial: must have 31 nodes" in err
    box = tmp_path / "box.json"
    assert run(["simulate", str(ROOT / "samples" / "tumbling_box.toml"), "--out", str(box)]) == 0
    assert run(["solve", str(scenario), "--out", str(tmp_path / "t.json"), "--initial", str(box)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert "--initial: is a rigid body trajectory; this scenario's vehicle is a car" in err
    assert not (tmp_path / "t.json").exists()


# -- sizes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("steps", [10_000_000, 5_000_000])
def test_a_run_whose_output_would_exceed_a_gigabyte_is_refused_with_the_figure(tmp_path, capsys, steps):
    scenario = tmp_path / "box.toml"
    scenario.write_text(BOX.format(steps=steps))
    out = tmp_path / "t.json"
    assert run(["simulate", str(scenario), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert f"[integrator] steps: {steps:,} steps would write about" in err and "GB of JSON" in err
    assert "the limit is 1 GB" in err and "use at most" in err
    assert not out.exists()


def test_the_size_estimate_matches_the_real_output(tmp_path, monkeypatch):
    """The probes' bytes per step against a real run 40× the probe: within 2 %."""
    monkeypatch.setattr(simulation, "PROBE_ABOVE", 1_000)
    monkeypatch.setattr(simulation, "MAX_OUTPUT_BYTES", 10)  # refuse, to read the estimate
    steps = 12_000
    with pytest.raises(ScenarioError) as exc:
        simulation.simulate(loads(BOX.format(steps=steps)))
    estimate = float(exc.value.problem.split("about ")[1].split(" GB")[0]) * 1e9
    monkeypatch.setattr(simulation, "PROBE_ABOVE", 10 ** 9)  # now run it for real
    real = len(simulation.simulate(loads(BOX.format(steps=steps))).to_json())
    assert abs(estimate / real - 1) < 0.02, (estimate, real)


def test_a_run_whose_time_would_be_absurd_is_refused_with_the_figure(monkeypatch):
    monkeypatch.setattr(simulation, "PROBE_ABOVE", 1_000)
    monkeypatch.setattr(simulation, "MAX_RUN_SECONDS", 1e-3)
    with pytest.raises(ScenarioError) as exc:
        simulation.simulate(loads(BOX.format(steps=50_000)))
    assert exc.value.where == "[integrator] steps"
    assert "50,000 steps would take about" in exc.value.problem and "ms per step here" in exc.value.problem


def test_probes_do_not_hide_a_control_series_of_the_wrong_length(monkeypatch):
    monkeypatch.setattr(simulation, "PROBE_ABOVE", 100)
    text = (ROOT / "samples" / "car_sine.toml").read_text()
    root = loads(text)
    steps = root.data["integrator"]["steps"]
    root.data["controls"] = {"torque": {"values": [0.0] * (steps - 1)}}
    with pytest.raises(ScenarioError) as exc:
        simulation.simulate(root)
    assert exc.value.where == "[controls.torque] values" and f"({steps})" in exc.value.problem


def test_a_large_run_within_budget_still_runs(monkeypatch):
    monkeypatch.setattr(simulation, "PROBE_ABOVE", 1_000)
    traj = simulation.simulate(loads(BOX.format(steps=3_000)))
    assert len(traj.time) == 3_001


# -- absurd and non-positive values ------------------------------------------------------------------

@pytest.mark.parametrize("sample,key,value,fragment", [
    ("helicopter_hover.toml", "max_tilt", "0.0", "[vehicle] max_tilt: must be positive, got 0.0"),
    ("helicopter_hover.toml", "max_yaw", "0.0", "[vehicle] max_yaw: must be positive, got 0.0"),
    ("helicopter_hover.toml", "max_collective", "0.0", "[vehicle] max_collective: must be positive, got 0.0"),
    ("boat_wind.toml", "max_thrust", "0.0", "[vehicle] max_thrust: must be positive, got 0.0"),
    ("car_sine.toml", "max_torque", "0.0", "[vehicle] max_torque: must be positive, got 0.0"),
    ("snakeboard_twist.toml", "max_rotor_torque", "0.0", "[vehicle] max_rotor_torque: must be positive, got 0.0"),
    ("boat_wind.toml", "max_thrust", "-5.0", "[vehicle] max_thrust: must be positive, got -5.0"),
    ("helicopter_hover.toml", "mass", "1e300", "[vehicle] mass: 1e+300 is out of range"),
])
def test_every_vehicle_limit_follows_one_rule(tmp_path, capsys, sample, key, value, fragment):
    """Every ``max_*`` limit must be positive (a zero limit would remove an input); absurd magnitudes
    are refused naming the key."""
    import tomllib

    data = tomllib.loads((ROOT / "samples" / sample).read_text())
    data["vehicle"][key] = float(value)
    lines = [line for line in (ROOT / "samples" / sample).read_text().splitlines()
             if not line.strip().startswith(f"{key} ") and not line.strip().startswith(f"{key}=")]
    text = "\n".join(lines).replace("[vehicle]\n", f"[vehicle]\n{key} = {value}\n", 1)
    p = tmp_path / sample
    p.write_text(text)
    out = tmp_path / "t.json"
    assert run(["simulate", str(p), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert fragment in err, err
    assert not out.exists()


@pytest.mark.parametrize("line,fragment", [
    ("duration = 1e300", "[time] duration: must be at most 86400, got 1e+300"),
    ("duration = 1e6", "[time] duration: must be at most 86400, got 1000000"),
    ("min = 1.0\nmax = 1e300", "[time] max: must be at most 86400, got 1e+300"),
])
def test_absurd_durations_are_refused_naming_the_key(tmp_path, capsys, line, fragment):
    import re

    text = re.sub(r"\[time\][^\[]*", f"[time]\n{line}\n\n", CAR.read_text(), count=1)
    p = tmp_path / "car.toml"
    p.write_text(text)
    assert run(["solve", str(p), "--out", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert fragment in err, err
    assert not (tmp_path / "t.json").exists()


def test_the_command_line_runs_as_a_process_without_a_traceback(tmp_path):
    """The same contract through ``python -m core`` itself (one case; the rest run in process)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(ROOT / "samples" / "tumbling_box.toml"),
                           "--out", "/proc/vm.json"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    _one_line(proc.stderr)
