"""The checked TOML accessors every scenario reader uses."""
from __future__ import annotations

import numpy as np
import pytest

from core.errors import ScenarioError
from core.scenario import loads
from core.scenario.controls import read_controls


def test_number_vector_and_finish():
    root = loads("[a]\nx = 1\ny = [1.0, 2.0, 3.0]\nz = 5\n")
    a = root.table("a")
    assert a.number("x", positive=True) == 1.0
    assert np.allclose(a.vector("y", 3), [1, 2, 3])
    with pytest.raises(ScenarioError, match=r"\[a\] z: unknown key"):
        a.finish()


def test_defaults_and_nested_paths():
    root = loads("[controls.torque]\noffset = 1\nbogus = 2\n")
    c = root.table("controls").table("torque")
    assert c.number("offset", 0.0) == 1.0
    assert c.number("missing", 7.0) == 7.0
    with pytest.raises(ScenarioError, match=r"\[controls.torque\] bogus: unknown key"):
        c.finish()


def test_array_of_tables_locations():
    root = loads("[[obstacles]]\nradius = 1\n[[obstacles]]\nradius = -1\n")
    obs = root.tables("obstacles")
    assert obs[0].number("radius", positive=True) == 1
    with pytest.raises(ScenarioError, match=r"\[obstacles #2\] radius: must be positive"):
        obs[1].number("radius", positive=True)


def test_controls_values_sinusoids_limits():
    root = loads("""
[controls.torque]
values = [1, 2, 3, 4]
[controls.steer]
offset = 0.5
amplitude = [1.0]
frequency = [0.25]
phase = [0.0]
""")
    c = read_controls(root, ["torque", "steer", "brake"], steps=4, dt=1.0, limits={"steer": (-2, 2)})
    assert np.allclose(c["torque"], [1, 2, 3, 4])
    assert np.allclose(c["steer"], 0.5 + np.sin(2 * np.pi * 0.25 * np.arange(4)))
    assert np.allclose(c["brake"], 0)


@pytest.mark.parametrize("text,fragment", [
    ("[controls.thrust]\nvalues=[1,2]", "[controls.thrust]: unknown input"),
    ("[controls.torque]\nvalues=[1,2]", "[controls.torque] values: must have one value per step (4), got 2"),
    ("[controls.torque]\namplitude=[1.0]\nfrequency=[]", "equal lengths"),
    ("[controls.torque]\nvalues=[1,2,9,4]", "value 9 at step 2 is outside the limit [-5, 5]"),
    ("[controls.torque]\nvalues=[1,2,'a',4]", "[controls.torque] values[2]: must be a number"),
])
def test_controls_errors_name_the_key(text, fragment):
    with pytest.raises(ScenarioError) as exc:
        read_controls(loads(text), ["torque"], steps=4, dt=1.0, limits={"torque": (-5, 5)})
    assert fragment in str(exc.value)
