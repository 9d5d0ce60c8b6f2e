"""The add-on reads every vehicle through core's specs (core.vehicles.spec): its settings and presets, the
parts it bakes, the control channels it samples. Each check compares what Blender registered or the reader
did with the spec, so a setting, preset or channel that drifts from the spec fails here."""
from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")


def _specs():
    from vehicle_motion.core.vehicles.spec import vehicle_specs
    return vehicle_specs()


def _settings():
    return bpy.types.Object.bl_rna.properties["vehicle_motion"].fixed_type.properties


def test_every_parameter_is_a_setting_as_its_spec_says(empty_scene):
    from vehicle_motion.addon.properties import PARAMETERS_BY_TYPE
    props = _settings()
    seen = set()
    for spec in _specs():
        assert PARAMETERS_BY_TYPE[spec.name.upper()] == spec.parameter_names
        for p in spec.parameters:
            prop = props[p.name]
            assert prop.name == (f"{p.label} (m)" if p.is_length else p.label), p.name
            if p.kind == "switch":
                assert prop.type == "BOOLEAN"
                continue
            assert prop.type == "FLOAT" and prop.hard_min == pytest.approx(p.minimum), p.name
            assert (prop.subtype == "ANGLE") == (p.unit == "rad"), p.name
            # lengths are metres whatever the Unit Scale: no LENGTH unit (which Blender scales)
            assert prop.unit == {"kg": "MASS", "rad": "ROTATION"}.get(p.unit, "NONE"), p.name
            assert (prop.array_length == 3) == (p.kind == "vector"), p.name
            if p.name in seen or not spec.presets:
                continue
            seen.add(p.name)  # the first vehicle with the setting gives its default: its first preset's value
            default = spec.presets[0].values[p.name]
            got = list(prop.default_array) if p.kind == "vector" else prop.default
            assert got == pytest.approx(default, rel=1e-6), p.name


def test_every_preset_fills_its_vehicle_and_is_recognised(empty_scene):
    from vehicle_motion.addon.properties import preset_id
    ob = bpy.data.objects.new("Probe", None)
    s = ob.vehicle_motion
    for spec in _specs():
        for preset in spec.presets:
            s.preset = preset_id(preset)
            assert s.vehicle_type == spec.name.upper() and s.preset == preset_id(preset)
            for key, value in preset.values.items():
                got = list(getattr(s, key)) if isinstance(value, tuple) else getattr(s, key)
                assert got == pytest.approx(value, rel=1e-6), (preset.name, key)
    s.mass *= 1.5
    assert s.preset == "CUSTOM"


def test_every_part_is_a_role_with_an_axis(empty_scene):
    from vehicle_motion.addon.properties import CHILD_ROLES, CHILD_ROLES_BY_TYPE
    props = _settings()
    for spec in _specs():
        assert CHILD_ROLES_BY_TYPE[spec.name.upper()] == tuple(p.role for p in spec.parts)
        for part in spec.parts:
            label, axis = CHILD_ROLES[part.role]
            assert props[part.role].fixed_type.identifier == "Object" and props[part.role].name == label
            assert props[axis].type == "ENUM"


def _trajectory(name: str):
    """A short core simulation of ``name`` at its default (or first) preset, with its inputs at a tenth of
    their upper limits so that every shape channel moves."""
    from vehicle_motion.core.scenario import Table
    from vehicle_motion.core.simulation import simulate
    spec = next(s for s in _specs() if s.name == name)
    values = spec.preset(spec.default_preset or spec.preset_names[0]).values
    vehicle = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if spec.parameter(k).scenario}
    steps = 6
    controls = {i.name: {"values": [0.1 * values[i.limit]] * steps} for i in spec.inputs}
    initial = {"position": [0.0, 0.0]} if spec.planar else {"position": [0.0, 0.0, 0.0]}
    integrator = {"dt": 0.01, "steps": steps}
    if not spec.planar:
        integrator["method"] = "vi-cay"
    return simulate(Table({"vehicle": {"type": name, **vehicle}, "integrator": integrator, "initial": initial,
                           "controls": controls}))


@pytest.mark.parametrize("name", ["car", "helicopter", "boat", "snakeboard"])
def test_every_bake_channel_is_one_the_bake_has(empty_scene, name):
    """Each channel a part of the spec lists is in the shape the bake turns parts with (a car's per-wheel
    spins when the trajectory knows its wheels, its front wheel roll), for a real trajectory of the vehicle."""
    from vehicle_motion.addon import baking
    spec = next(s for s in _specs() if s.name == name)
    traj = _trajectory(name)
    if name == "car":
        traj.stats["wheels"] = {f"wheel_{w}": {"centre": [2.55 if w.startswith("front") else 0.0,
                                                          0.8 if w.endswith("left") else -0.8, 0.3],
                                               "radius": 0.3, "spin_sign": 1.0, "steered": w.startswith("front")}
                                for w in ("rear_left", "rear_right", "front_left", "front_right")}
    shape = baking.wheel_shapes(name.upper(), traj)
    n = len(traj.time)
    for part in spec.parts:
        for channel in part.channels:
            series = baking._shape_series(shape, channel)
            assert series is not None and len(series) == n and np.all(np.isfinite(series)), (part.role, channel)
        for channel in part.tilts_with:
            assert len(shape[channel]) == n, (part.role, channel)


@pytest.mark.parametrize("name", ["car", "helicopter", "boat", "snakeboard"])
def test_control_channels_are_the_specs_inputs_within_its_limits(empty_scene, name):
    """Simulate samples one custom property per input of the spec and refuses a value beyond its bound."""
    from small_shots import add_object
    from vehicle_motion.addon import scene_reader
    from vehicle_motion.addon.properties import preset_id
    spec = next(s for s in _specs() if s.name == name)
    ob = add_object("Vehicle")
    ob.vehicle_motion.preset = preset_id(spec.presets[0])
    s = ob.vehicle_motion
    for inp in spec.inputs:
        ob[inp.name] = 0.5 * inp.bound(s)
    problem = scene_reader.read_simulation(empty_scene, ob)
    assert set(problem.scenario["controls"]) == set(spec.input_names)
    for inp in spec.inputs:
        lo, hi = inp.bounds(s)
        ob[inp.name] = hi * 1.01
        pattern = rf"'Vehicle' control '{inp.name}' is .* outside its limits \[{lo:.6g}, {hi:.6g}\]$"
        with pytest.raises(scene_reader.SceneError, match=pattern):
            scene_reader.read_simulation(empty_scene, ob)
        ob[inp.name] = 0.5 * hi
    assert math.isfinite(problem.frame_map.dt)
