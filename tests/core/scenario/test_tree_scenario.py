"""The `python -m core simulate` contract for ``type = "tree"``: output keys and shapes, the
bundled samples, and every kind of bad description refused with one line, exit 2, no file."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.core.cli_contract import run_simulate

ROOT = Path(__file__).resolve().parents[3]

GOOD = """
[vehicle]
type = "tree"
gravity = [0.0, 0.0, -9.81]

[[frames]]
name = "cart"
transform = "tx"
variable = "x"
kinematic = true

[[frames]]
name = "crank"
parent = "cart"
transform = "ry"
variable = "q1"

[[frames]]
name = "crank.c"
parent = "crank"
transform = "tz"
value = -0.3
mass = 0.6
inertia = [0.02, 0.02, 0.0]

[[frames]]
name = "crank.e"
parent = "crank"
transform = "tz"
value = -0.6

[[frames]]
name = "coupler"
parent = "crank.e"
transform = "ry"
variable = "q2"

[[frames]]
name = "coupler.e"
parent = "coupler"
transform = "tz"
value = -1.2
mass = 1.2

[[frames]]
name = "base"
parent = "cart"
transform = "fixed"
position = [1.0, 0.0, 0.0]
orientation = [1.0, 0.0, 0.0, 0.0]

[[frames]]
name = "rocker"
parent = "base"
transform = "ry"
variable = "q3"

[[frames]]
name = "rocker.e"
parent = "rocker"
transform = "tz"
value = -1.0
mass = 1.0

[[constraints]]
type = "point_to_point"
a = "coupler.e"
b = "rocker.e"
directions = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]

[[springs]]
a = "world"
b = "rocker.e"
stiffness = 2.0
rest_length = 0.5

[[dampers]]
variable = "q1"
coefficient = 0.01

[[forces]]
variable = "q3"
value = 0.1

[[wrenches]]
frame = "coupler.e"
torque = [0.0, 0.05, 0.0]

[prescribed]
x = { time = [0.0, 0.5, 1.0], value = [0.0, 0.05, 0.0] }

[initial]
q = { q1 = 0.3, q2 = -1.22, q3 = 0.0 }
dq = { q1 = 0.5 }

[integrator]
method = "variational"
dt = 0.01
steps = 60
"""


_run = run_simulate


def test_good_scenario_writes_the_contract(tmp_path, capsys):
    code, err, out = _run(tmp_path, GOOD, capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    n = 61
    assert d["vehicle"] == "tree"
    for key in ("time", "q", "dq", "energy", "constraint_residual", "frames", "position", "orientation", "stats"):
        assert key in d
    assert np.shape(d["time"]) == (n,) and np.shape(d["energy"]) == (n,)
    assert np.shape(d["constraint_residual"]) == (n,)
    assert sorted(d["q"]) == sorted(d["dq"]) == ["q1", "q2", "q3", "x"]
    assert all(np.shape(v) == (n,) for v in d["q"].values())
    assert sorted(d["frames"]) == ["coupler.e", "crank.c", "rocker.e"]
    assert all(np.shape(v) == (n, 3) for v in d["frames"].values())
    assert np.shape(d["position"]) == (n, 3) and np.shape(d["orientation"]) == (n, 4)
    assert max(d["constraint_residual"]) <= 1e-10
    st = d["stats"]
    assert st["root_frame"] == "crank.c" and st["blew_up"] is False and st["method"] == "variational"
    assert st["initial_projection"] > 1e-3          # the rough initial q was made consistent
    # the root pose is the first massive frame's, the frames' positions the tree's
    assert np.allclose(d["position"], d["frames"]["crank.c"])
    # the kinematic variable follows its samples (not-a-knot through 3 points: a parabola)
    t = np.asarray(d["time"])
    assert np.allclose(d["q"]["x"], 0.2 * t * (1 - t), atol=1e-12)
    assert np.allclose(d["dq"]["x"], 0.2 * (1 - 2 * t), atol=1e-12)


def test_rk4_method(tmp_path, capsys):
    code, err, out = _run(tmp_path, GOOD.replace('method = "variational"', 'method = "rk4"'), capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    assert d["stats"]["method"] == "rk4" and len(d["time"]) == 61
    assert 0 < max(d["constraint_residual"]) < 1e-6     # index-reduced: small but not exact


def test_variational4_method(tmp_path, capsys):
    """The triple-jump composition: constraints exact at the nodes, and closer to a fine
    midpoint run than the midpoint VI at the same step."""
    runs = {}
    for method, dt, steps in (("variational", 0.01, 60), ("variational4", 0.01, 60), ("variational", 0.00125, 480)):
        text = GOOD.replace('method = "variational"', f'method = "{method}"').replace(
            "dt = 0.01\nsteps = 60", f"dt = {dt}\nsteps = {steps}")
        code, err, out = _run(tmp_path, text, capsys)
        assert code == 0, err
        runs[(method, steps)] = json.loads(out.read_text())
    d4 = runs[("variational4", 60)]
    assert d4["stats"]["method"] == "variational-triple_jump" and len(d4["time"]) == 61
    assert max(d4["constraint_residual"]) <= 1e-10
    fine = np.array(runs[("variational", 480)]["q"]["q1"])[-1]
    err2 = abs(runs[("variational", 60)]["q"]["q1"][-1] - fine)
    err4 = abs(d4["q"]["q1"][-1] - fine)
    assert err4 < 0.2 * err2, (err4, err2)


@pytest.mark.parametrize("sample,steps,massive", [("tree_double_pendulum.toml", 2000, 2),
                                                   ("tree_scissor_lift.toml", 1000, 11)])
def test_bundled_samples_run(tmp_path, capsys, sample, steps, massive):
    text = (ROOT / "samples" / sample).read_text()
    assert f"steps = {steps}" in text
    code, err, out = _run(tmp_path, text.replace(f"steps = {steps}", "steps = 40"), capsys)
    assert code == 0, err
    d = json.loads(out.read_text())
    assert len(d["time"]) == 41 and len(d["frames"]) == massive
    assert max(d["constraint_residual"]) <= 1e-10 and not d["stats"]["blew_up"]


def _edit(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


BAD = [
    ("cycle", _edit('name = "cart"\ntransform = "tx"', 'name = "cart"\nparent = "rocker.e"\ntransform = "tx"'),
     "[frames #1] parent", "cycle"),
    ("unknown parent", _edit('parent = "cart"\ntransform = "ry"', 'parent = "kart"\ntransform = "ry"'),
     "[frames #2] parent", "unknown frame 'kart'"),
    ("variable twice", _edit('variable = "q2"', 'variable = "q1"'), "[frames #5] variable", "already used"),
    ("constraint frame", _edit('a = "coupler.e"', 'a = "coupler.x"'), "[constraints #1] a", "unknown frame"),
    ("unknown transform", _edit('transform = "tx"', 'transform = "slide"'), "[frames #1] transform", "unknown value"),
    ("non-positive mass", _edit("mass = 0.6", "mass = -0.6"), "[frames #3] mass", "must be positive"),
    ("zero mass", _edit("mass = 1.2", "mass = 0"), "[frames #6] mass", "must be positive"),
    ("negative inertia", _edit("[0.02, 0.02, 0.0]", "[0.02, -0.02, 0.0]"), "[frames #3] inertia[1]", "negative"),
    ("inertia without mass", _edit('value = -0.6\n', 'value = -0.6\ninertia = [1.0, 1.0, 1.0]\n'),
     "[frames #4] inertia", "needs a mass"),
    ("variable and value", _edit('variable = "q1"', 'variable = "q1"\nvalue = 0.2'), "[frames #2] value", "not both"),
    ("neither", _edit('transform = "ry"\nvariable = "q1"', 'transform = "ry"'), "[frames #2] variable", "missing"),
    ("fixed with variable", _edit('position = [1.0, 0.0, 0.0]', 'variable = "z"\nposition = [1.0, 0.0, 0.0]'),
     "[frames #7] variable", "fixed frame"),
    ("position on a primitive", _edit("value = -0.6\n", "value = -0.6\nposition = [0.0, 0.0, 1.0]\n"),
     "[frames #4] position", "only a fixed frame"),
    ("bad quaternion", _edit("orientation = [1.0, 0.0, 0.0, 0.0]", "orientation = [1.0, 0.0, 0.5, 0.0]"),
     "[frames #7] orientation", "unit quaternion"),
    ("duplicate frame", _edit('name = "base"', 'name = "crank"'), "[frames #7] name", "defined twice"),
    ("world as a name", _edit('name = "base"', 'name = "world"'), "[frames #7] name", "reserved"),
    ("unknown frame key", _edit("mass = 1.2", "mass = 1.2\ncolour = 3"), "[frames #6] colour", "unknown key"),
    ("no frames", GOOD[: GOOD.index("[[frames]]")] + "[integrator]\ndt = 0.01\nsteps = 2\n", "[[frames]]", "missing"),
    ("no mass", GOOD.replace("mass = 0.6\ninertia = [0.02, 0.02, 0.0]\n", "").replace("mass = 1.2\n", "")
     .replace('value = -1.0\nmass = 1.0', 'value = -1.0'), "[frames]", "no frame has a mass"),
    ("unknown constraint type", _edit('type = "point_to_point"', 'type = "glue"'), "[constraints #1] type", "unknown value"),
    ("zero distance", _edit('type = "point_to_point"\na = "coupler.e"\nb = "rocker.e"\ndirections = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]',
                            'type = "distance"\na = "coupler.e"\nb = "rocker.e"\nlength = 0.0'),
     "[constraints #1] length", "must be positive"),
    ("redundant constraint", _edit("directions = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]\n", ""),
     "[constraints #1]", "redundant"),
    ("impossible constraint", _edit('type = "point_to_point"\na = "coupler.e"\nb = "rocker.e"\n'
                                    'directions = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]',
                                    'type = "distance"\na = "coupler.e"\nb = "rocker.e"\nlength = 40.0'),
     "[initial] q", "cannot satisfy"),
    ("spring frame", _edit('b = "rocker.e"\nstiffness', 'b = "rocker.f"\nstiffness'), "[springs #1] b", "unknown frame"),
    ("negative stiffness", _edit("stiffness = 2.0", "stiffness = -2.0"), "[springs #1] stiffness", "negative"),
    ("damper variable", _edit('variable = "q1"\ncoefficient', 'variable = "q9"\ncoefficient'),
     "[dampers #1] variable", "unknown variable 'q9'"),
    ("wrench frame", _edit('frame = "coupler.e"', 'frame = "nowhere"'), "[wrenches #1] frame", "unknown frame"),
    ("initial unknown variable", _edit("q = { q1 = 0.3,", "q = { q7 = 1.0, q1 = 0.3,"), "[initial.q] q7", "unknown variable"),
    ("initial and prescribed", _edit("dq = { q1 = 0.5 }", "dq = { q1 = 0.5, x = 1.0 }"), "[initial.dq] x", "prescribed"),
    ("prescribed dynamic", _edit("x = { time", "q1 = { time = [0.0, 1.0], value = [0.0, 1.0] }\nx = { time"),
     "[prescribed] q1", "not kinematic"),
    ("prescribed unknown", _edit("x = { time", "y = { time = [0.0, 1.0], value = [0.0, 1.0] }\nx = { time"),
     "[prescribed] y", "unknown variable"),
    ("prescribed times", _edit("time = [0.0, 0.5, 1.0]", "time = [0.0, 1.0, 0.5]"), "[prescribed] x", "increasing"),
    ("kinematic constant", _edit('transform = "tz"\nvalue = -0.6', 'transform = "tz"\nvalue = -0.6\nkinematic = true'),
     "[frames #4] kinematic", "variable"),
    ("massless variable", _edit('name = "cart"\ntransform = "tx"\nvariable = "x"\nkinematic = true',
                                'name = "cart"\ntransform = "tx"\nvariable = "x"').replace(
        'x = { time = [0.0, 0.5, 1.0], value = [0.0, 0.05, 0.0] }\n', "").replace(
        'name = "crank.c"', 'name = "spinner"\nparent = "world"\ntransform = "rz"\nvariable = "free"\n\n[[frames]]\nname = "crank.c"'),
     "[frames]", "moves no mass"),
    ("unknown method", _edit('method = "variational"', 'method = "euler"'), "[integrator] method", "unknown value"),
    ("alpha range", _edit("steps = 60", "steps = 60\nalpha = 1.5"), "[integrator] alpha", "at most 1"),
    ("composed with alpha", _edit('method = "variational"\ndt = 0.01\nsteps = 60',
                                  'method = "variational4"\ndt = 0.01\nsteps = 60\nalpha = 0.3'),
     "[integrator] alpha", "must be 0.5"),
    ("unknown table", GOOD + "\n[extra]\na = 1\n", "[extra]", "unknown table"),
    ("gravity length", _edit("gravity = [0.0, 0.0, -9.81]", "gravity = [0.0, -9.81]"), "[vehicle] gravity", "3 entries"),
]


@pytest.mark.parametrize("desc,text,where,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_description_is_one_line_exit_2_and_no_file(tmp_path, capsys, desc, text, where, fragment):
    code, err, out = _run(tmp_path, text, capsys)
    assert code == 2, err
    assert err.startswith(f"error: {where}:"), err
    assert fragment in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["scenario.toml"]
