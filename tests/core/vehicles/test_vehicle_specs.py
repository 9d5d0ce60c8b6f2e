"""The vehicle specs (core.vehicles.spec): consistent in themselves, and what the readers, the vehicles and
the DMOC models use — a spec that says one thing while a reader does another fails here."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from core.dmoc.models import MODELS
from core.errors import ScenarioError
from core.integrators.common import GRAVITY
from core.scenario import Table
from core.simulation import simulate
from core.vehicles.boat import Boat
from core.vehicles.car import Car
from core.vehicles.helicopter import Helicopter
from core.vehicles.rigid_body import RigidBody
from core.vehicles.snakeboard import Snakeboard
from core.vehicles.spec import KINDS, UNITS, vehicle_specs

SPECS = {spec.name: spec for spec in vehicle_specs()}
VEHICLES = {"car": Car, "helicopter": Helicopter, "boat": Boat, "snakeboard": Snakeboard, "rigid_body": RigidBody}
SE3 = {"position": [0.0, 0.0, 0.0]}
INITIAL = {"car": {"position": [0.0, 0.0]}, "snakeboard": {"position": [0.0, 0.0]}}
INTEGRATOR = {"car": {"method": "vi"}, "snakeboard": {}, "helicopter": {"method": "vi-cay"},
              "boat": {"method": "vi-cay"}, "rigid_body": {"method": "vi-cay"}}
ALL = pytest.mark.parametrize("name", list(SPECS))


def _scenario(name: str, steps: int = 2, **vehicle) -> dict:
    """A scenario simulating ``name`` for ``steps`` steps: its default preset, or the first preset, or (a rigid
    body) a unit cube, with ``vehicle`` overriding."""
    spec = SPECS[name]
    values = dict(spec.presets[0].values) if spec.presets else {"mass": 1.0, "inertia": [1.0, 1.0, 1.0]}
    table = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()
             if spec.parameter(k).scenario}
    table.update(vehicle, type=name)
    return {"vehicle": table, "integrator": {"dt": 0.01, "steps": steps, **INTEGRATOR[name]},
            "initial": INITIAL.get(name, SE3)}


def test_the_registry_lists_every_simulated_vehicle_once_in_panel_order():
    assert list(SPECS) == ["car", "helicopter", "boat", "snakeboard", "rigid_body"]
    assert {name for name, spec in SPECS.items() if spec.solvable} == set(MODELS)


@ALL
def test_units_kinds_and_names(name):
    spec = SPECS[name]
    for p in spec.parameters:
        assert p.unit in UNITS and p.kind in KINDS, p
        assert p.is_length == (p.unit == "m"), p          # a length is metres whatever the scene's unit scale
        assert (p.kind == "switch") == isinstance(p.default, bool) or p.default is None, p
        assert p.label and p.description and p.minimum >= 0.0, p
    for item in spec.inputs + spec.shape + spec.derived:
        assert item.unit in UNITS and item.description, item
    for names in (spec.parameter_names, spec.input_names, spec.shape_names + tuple(c.name for c in spec.derived),
                  tuple(p.role for p in spec.parts), spec.preset_names):
        assert len(set(names)) == len(names), names


@ALL
def test_every_preset_gives_every_parameter_a_valid_value(name):
    spec = SPECS[name]
    for preset in spec.presets:
        assert set(preset.values) == set(spec.parameter_names), preset.name
        for p in spec.parameters:
            value = preset.values[p.name]
            numbers = list(value) if p.kind == "vector" else [value]
            assert len(numbers) == (3 if p.kind == "vector" else 1)
            assert all(math.isfinite(x) and x >= p.minimum for x in numbers), (preset.name, p.name)
            assert not p.positive or all(x > 0 for x in numbers), (preset.name, p.name)
            assert p.upper is None or value <= p.upper, (preset.name, p.name)
        VEHICLES[name](**dict(preset.values))   # the vehicle's own checks accept it
    assert spec.default_preset is None or spec.default_preset in spec.preset_names
    assert set(spec.defaults()) <= set(spec.parameter_names)


@ALL
def test_limits_name_parameters_and_bound_a_nonempty_range(name):
    spec = SPECS[name]
    for item in spec.inputs + tuple(c for c in spec.shape if c.limit):
        assert item.limit in spec.parameter_names and spec.parameter(item.limit).positive, item
    for preset in spec.presets:
        vehicle = VEHICLES[name](**dict(preset.values))
        for lo, hi in spec.input_bounds(vehicle).values():
            assert lo < hi
        for channel in spec.shape:
            if channel.limit:
                lo, hi = channel.bounds(vehicle)
                assert lo < hi


@ALL
def test_parts_are_turned_by_channels_the_vehicle_has(name):
    spec = SPECS[name]
    channels = set(spec.shape_names) | {c.name for c in spec.derived}
    for part in spec.parts:
        assert {c.lstrip("-") for c in part.channels} <= channels, part
        assert set(part.tilts_with) <= set(spec.shape_names) and len(part.tilts_with) in (0, 2), part
    assert not spec.derived or spec.parts   # a derived channel turns some part


@ALL
def test_a_simulated_trajectory_has_the_specs_inputs_and_shape(name):
    traj = simulate(Table(_scenario(name)))
    spec = SPECS[name]
    assert traj.vehicle == name
    assert set(traj.shape) == set(spec.shape_names)
    assert set(traj.controls) == set(spec.input_names)


@pytest.mark.parametrize("name", [n for n, s in SPECS.items() if s.solvable])
def test_the_dmoc_model_uses_the_specs_inputs_and_bounds(name):
    from core.dmoc.scenario import read
    spec = SPECS[name]
    preset = spec.preset(spec.default_preset or spec.preset_names[0])
    vehicle = {"type": name, "collision_radius": 0.5}
    if name == "car":
        vehicle["preset"] = preset.name
    planar = {"position": [0.0, 0.0]}
    spatial = {"position": [0.0, 0.0, 0.0]}
    ends = planar if spec.planar else spatial
    goal = {"position": [3.0, 0.0] if spec.planar else [3.0, 0.0, 0.0]}
    data = {"vehicle": vehicle, "integrator": {"steps": 4}, "time": {"duration": 2.0}, "start": ends, "goal": goal}
    model = read(Table(data)).model
    assert tuple(model.inputs) == spec.input_names
    assert model.se3 == (not spec.planar)
    vehicle_object = VEHICLES[name](**dict(preset.values))
    for j, (lo, hi) in enumerate(spec.input_bounds(vehicle_object).values()):
        idx = model.control_idx[:, j]
        np.testing.assert_array_equal(model.lo[idx], lo)
        np.testing.assert_array_equal(model.hi[idx], hi)


@ALL
def test_the_reader_refuses_a_parameter_the_spec_says_must_be_positive(name):
    spec = SPECS[name]
    for p in spec.scenario_parameters:
        if not p.positive:
            continue
        bad = [0.0, 1.0, 1.0] if p.kind == "vector" else 0.0
        with pytest.raises(ScenarioError, match=rf"^\[vehicle\] {p.name}"):
            simulate(Table(_scenario(name, **{p.name: bad})))


@ALL
def test_the_reader_takes_missing_parameters_from_the_spec(name):
    """A scenario without [vehicle] parameters gets the spec's defaults (the default preset's values), or is
    refused naming the first parameter without one."""
    spec = SPECS[name]
    data = _scenario(name)
    data["vehicle"] = {"type": name}
    required = [p.name for p in spec.scenario_parameters if p.name not in spec.defaults()]
    if required:
        with pytest.raises(ScenarioError, match=rf"^\[vehicle\] {required[0]}: missing$"):
            simulate(Table(data))
    else:
        np.testing.assert_array_equal(simulate(Table(data)).position, simulate(Table(_scenario(name))).position)


@pytest.mark.parametrize("name", [n for n, s in SPECS.items() if s.inputs])
def test_the_reader_bounds_each_input_as_the_spec_says(name):
    spec = SPECS[name]
    preset = spec.preset(spec.default_preset or spec.preset_names[0])
    vehicle = VEHICLES[name](**dict(preset.values))
    for inp in spec.inputs:
        lo, hi = inp.bounds(vehicle)
        for beyond in (hi * (1 + 1e-6) + 1e-9, lo - 1e-6 * (1 + abs(lo))):
            data = _scenario(name)
            data["controls"] = {inp.name: {"values": [beyond, 0.0]}}
            with pytest.raises(ScenarioError, match=rf"^\[controls\.{inp.name}\]: .*outside the limit"):
                simulate(Table(data))
        data = _scenario(name)
        data["controls"] = {inp.name: {"values": [lo, hi]}}
        simulate(Table(data))   # the bounds themselves are allowed


def test_the_helicopter_preset_lifts_one_point_six_times_its_weight():
    """The preset's collective limit is 1.6 m g, as a scenario that changes the mass gets it (the spec states g
    without importing the integrators)."""
    from core.scenario.helicopter import read_helicopter
    light = SPECS["helicopter"].preset("light helicopter").values
    assert light["max_collective"] == 1.6 * light["mass"] * GRAVITY
    assert read_helicopter(Table({"mass": 900.0})).max_collective == 1.6 * 900.0 * GRAVITY


def test_reading_a_spec_loads_no_dynamics():
    """The add-on builds its settings from the specs when it registers, before scipy may load."""
    code = ("import sys; from core.vehicles.spec import vehicle_specs; vehicle_specs(); "
            "print(sorted(m for m in ('scipy', 'core.integrators', 'core.vehicles.car') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
