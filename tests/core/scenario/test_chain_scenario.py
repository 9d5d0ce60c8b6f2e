"""``type = "chain"`` from the command line: the output contract, inputs, and bad chain
descriptions refused with one line naming the entry (exit 2, no output file)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.cli import run as cli_run
from core.scenario import loads
from core.simulation import SIMULATORS, simulate

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "samples" / "chain_three_spheres.toml"

BASE = """
[vehicle]
type = "chain"
base_mass = 10.0
base_inertia = [4.0, 4.0, 4.0]
{vehicle_extra}

[[joints]]
parent = 0
position = [1.0, 0.0, 0.0]
axis = [0.0, 0.0, 1.0]
mass = 10.0
inertia = [4.0, 4.0, 4.0]
offset = [1.0, 0.0, 0.0]

[[joints]]
{joint2}

[integrator]
method = "{method}"
dt = 0.05
steps = 20

[initial]
joint_rates = [0.4, 0.4]
{initial_extra}
{controls}
"""

JOINT2 = """parent = 1
position = [2.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
mass = 10.0
inertia = [4.0, 4.0, 4.0]
offset = [1.0, 0.0, 0.0]"""


def scenario(joint2: str = JOINT2, method: str = "cf4", vehicle_extra: str = "", initial_extra: str = "",
             controls: str = "") -> str:
    return BASE.format(joint2=joint2, method=method, vehicle_extra=vehicle_extra,
                       initial_extra=initial_extra, controls=controls)


def test_registered():
    assert SIMULATORS["chain"] == "chain"


def test_sample_from_the_command_line(tmp_path):
    out = tmp_path / "chain.json"
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(SAMPLE), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["vehicle"] == "chain"
    for key in ("time", "position", "orientation", "angular_velocity", "linear_velocity"):
        assert len(data[key]) == 1001
    assert set(data["shape"]) == {"joint_1", "joint_2"}
    assert set(data["momentum"]) == {"angular", "linear"}
    energy = np.asarray(data["energy"])
    L = np.asarray(data["momentum"]["angular"])
    P = np.asarray(data["momentum"]["linear"])
    assert energy.shape == (1001,)
    # a free chain: conserved to the order of cf4 at h = 0.01 over 10 s
    assert np.max(np.abs(energy - energy[0])) < 1e-8
    assert np.max(np.abs(P - P[0])) < 1e-8 and np.max(np.abs(L - L[0])) < 1e-8
    assert data["stats"]["exp_evaluations_per_step"] == 5
    np.testing.assert_allclose(data["shape"]["joint_1"][1], 0.4 * 0.01, rtol=0.05)
    assert set(data["links"]) == {"link_1", "link_2"}


def test_every_method_and_the_contract_names():
    for method in ("magnus", "cg2", "cg3", "cg4", "cf2", "cf3", "cf4", "mk2", "mk3", "mk4", "rk4"):
        traj = simulate(loads(scenario(method=method)))
        d = traj.to_dict()
        assert d["stats"]["method"] == method
        assert set(d["shape"]) == {"joint_1", "joint_2"}
        assert "energy" in d and set(d["momentum"]) == {"angular", "linear"}


def test_inputs_and_gravity():
    """The [controls] inputs reach the model as held joint torques and body wrenches (at each
    body's centre of mass, body frame): the scenario run matches the model's DOP853 reference fed
    the same arrays directly."""
    controls = """
[controls.torque_1]
offset = 2.0
[controls.torque_2]
amplitude = [1.5]
frequency = [0.5]
[controls.body_0_force_z]
offset = 150.0
[controls.body_2_torque_x]
offset = -0.7
"""
    text = scenario(vehicle_extra="gravity = true", controls=controls)
    pushed = simulate(loads(text))
    free = simulate(loads(scenario(vehicle_extra="gravity = true")))
    from core.scenario.chain import read_chain, read_initial
    root = loads(text)
    chain = read_chain(root, root.table("vehicle"))
    init = read_initial(root, 2)
    steps, dt = 20, 0.05
    t = dt * np.arange(steps)
    torques = np.stack([np.full(steps, 2.0), 1.5 * np.sin(2 * np.pi * 0.5 * t)], axis=-1)
    wrenches = np.zeros((steps, 3, 6))
    wrenches[:, 0, 5] = 150.0
    wrenches[:, 2, 0] = -0.7
    ref = chain.reference(init, dt, steps, torques, wrenches)
    np.testing.assert_allclose(pushed.position, ref.position, atol=3e-4)   # cf4 at h = 0.05
    np.testing.assert_allclose(pushed.shape["joint_2"], ref.shape["joint_2"], atol=3e-4)
    np.testing.assert_allclose(pushed.controls["torque_2"], torques[:, 1], atol=1e-12)
    assert np.max(np.abs(pushed.position - free.position)) > 0.1
    # gravity alone: the whole system (30 kg) falls, dP/dt = total weight
    dPz = free.momentum_linear[:, 2] - free.momentum_linear[0, 2]
    np.testing.assert_allclose(dPz, -30 * 9.81 * free.time, atol=1e-9)


def run_cli(tmp_path, capsys, text: str):
    """The command line in-process (exit status, stderr, output file), as ``python -m core`` runs it."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "out.json"
    capsys.readouterr()
    code = cli_run(["simulate", str(path), "--out", str(out)])
    return code, capsys.readouterr().err, out


def test_bad_chain_from_a_real_process(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(scenario(joint2=JOINT2.replace("parent = 1", "parent = 2")))
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "core", "simulate", str(path), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: [[joints]] #2 parent: must be 0 (the base) or 1 (joint #1): a joint's parent must exist and "
        "come before it, got 2"]
    assert not out.exists()


@pytest.mark.parametrize("joint2, where", [
    (JOINT2.replace("parent = 1", "parent = 2"), "[[joints]] #2 parent"),
    (JOINT2.replace("parent = 1", "parent = 7"), "[[joints]] #2 parent"),
    (JOINT2.replace("parent = 1", "parent = -1"), "[[joints]] #2 parent"),
    (JOINT2.replace("parent = 1", "parent = 1.0"), "[[joints]] #2 parent"),
    (JOINT2.replace("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 0.0, 0.0]"), "[[joints]] #2 axis"),
    (JOINT2.replace("mass = 10.0", "mass = 0.0"), "[[joints]] #2 mass"),
    (JOINT2.replace("mass = 10.0", "mass = -3.0"), "[[joints]] #2 mass"),
    (JOINT2.replace("inertia = [4.0, 4.0, 4.0]", "inertia = [4.0, 0.0, 4.0]"), "[[joints]] #2 inertia[1]"),
    (JOINT2.replace("inertia = [4.0, 4.0, 4.0]", "inertia = [4.0, 4.0]"), "[[joints]] #2 inertia"),
    (JOINT2.replace("position = [2.0, 0.0, 0.0]", "position = [2.0, 0.0]"), "[[joints]] #2 position"),
    (JOINT2.replace("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 1.0, 0.0, 1.0]"), "[[joints]] #2 axis"),
    (JOINT2.replace("offset = [1.0, 0.0, 0.0]", "offset = 1.0"), "[[joints]] #2 offset"),
    (JOINT2.replace("mass = 10.0", ""), "[[joints]] #2 mass"),
    (JOINT2 + "\ncolour = 3", "[[joints]] #2 colour"),
])
def test_bad_chain_descriptions_are_refused(tmp_path, capsys, joint2, where):
    code, err, out = run_cli(tmp_path, capsys, scenario(joint2=joint2))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and where in lines[0], err
    assert not out.exists()


@pytest.mark.parametrize("text, where", [
    (scenario(initial_extra="joint_angles = [0.1]"), "[initial] joint_angles"),
    (scenario().replace("joint_rates = [0.4, 0.4]", "joint_rates = [0.4, 0.4, 0.1]"), "[initial] joint_rates"),
    (scenario(method="vi-cay"), "[integrator] method"),
    (scenario().replace("base_mass = 10.0", "base_mass = 0.0"), "[vehicle] base_mass"),
    (scenario().replace("base_inertia = [4.0, 4.0, 4.0]", "base_inertia = [4.0, 4.0]"), "[vehicle] base_inertia"),
    (scenario(vehicle_extra="gravity = 1"), "[vehicle] gravity"),
    (scenario(controls="[controls.torque_3]\noffset = 1.0"), "[controls.torque_3]"),
    (scenario(vehicle_extra="mass = 3.0"), "[vehicle] mass"),
])
def test_other_bad_input_is_refused(tmp_path, capsys, text, where):
    code, err, out = run_cli(tmp_path, capsys, text)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and where in lines[0], err
    assert not out.exists()


def test_an_existing_output_is_not_clobbered(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("keep")
    path = tmp_path / "bad.toml"
    path.write_text(scenario(joint2=JOINT2.replace("parent = 1", "parent = 2")))
    assert cli_run(["simulate", str(path), "--out", str(out)]) == 2
    assert out.read_text() == "keep"
