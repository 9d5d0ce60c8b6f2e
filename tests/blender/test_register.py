"""Registration and the property contract of the extension."""
from __future__ import annotations

import math
import pathlib
import subprocess
import sys
import textwrap

import pytest

bpy = pytest.importorskip("bpy")

OPERATORS = ("VEHICLE_MOTION_OT_bake", "VEHICLE_MOTION_OT_clear_bake", "VEHICLE_MOTION_OT_solve_trajectory",
             "VEHICLE_MOTION_OT_simulate", "VEHICLE_MOTION_OT_add_obstacle", "VEHICLE_MOTION_OT_add_constraint")
PANELS = ("VEHICLE_MOTION_PT_vehicle", "VEHICLE_MOTION_PT_parts", "VEHICLE_MOTION_PT_solve",
          "VEHICLE_MOTION_PT_bake", "VEHICLE_MOTION_PT_constraints", "VEHICLE_MOTION_PT_object_role")


def _registered() -> dict[str, bool]:
    from vehicle_motion.addon import properties
    state = {name: hasattr(bpy.types, name) for name in (*OPERATORS, *PANELS)}
    for cls in properties.classes:
        state[cls.__name__] = cls.is_registered
    state["Object.vehicle_motion"] = "vehicle_motion" in bpy.types.Object.bl_rna.properties
    state["Scene.vehicle_motion"] = "vehicle_motion" in bpy.types.Scene.bl_rna.properties
    return state


def test_register_unregister_twice(addon):
    assert all(_registered().values())
    try:
        for _ in range(2):
            addon.unregister()
            assert not any(_registered().values()), _registered()
            addon.register()
            assert all(_registered().values()), _registered()
        addon.register()  # registering again while registered changes nothing
        assert all(_registered().values())
    finally:
        addon.register()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.context.scene.vehicle_motion.frame_start == 1


def test_register_without_scipy(tmp_path):
    """register() must work before the scipy wheel is installed: import it nowhere."""
    root = pathlib.Path(__file__).resolve().parents[2]
    script = tmp_path / "register_no_scipy.py"
    script.write_text(textwrap.dedent('''
        import importlib.abc, importlib.util, sys

        class NoScipy(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "scipy" or name.startswith("scipy."):
                    raise ImportError("scipy is not installed (blocked by the test)")
                return None

        sys.meta_path.insert(0, NoScipy())
        import bpy
        root = sys.argv[1]
        spec = importlib.util.spec_from_file_location(
            "vehicle_motion", root + "/__init__.py", submodule_search_locations=[root])
        package = importlib.util.module_from_spec(spec)
        sys.modules["vehicle_motion"] = package
        spec.loader.exec_module(package)
        package.register()
        try:
            bpy.ops.wm.read_homefile(use_empty=True)
            obj = bpy.data.objects.new("Car", None)
            bpy.context.scene.collection.objects.link(obj)
            obj.vehicle_motion.preset = "HATCHBACK"
            assert obj.vehicle_motion.vehicle_type == "CAR"
            assert not bpy.ops.vehicle_motion.bake.poll()
            assert not any(m == "scipy" or m.startswith("scipy.") for m in sys.modules)
        finally:
            package.unregister()
        print("REGISTERED WITHOUT SCIPY")
    '''))
    done = subprocess.run([sys.executable, str(script), str(root)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "REGISTERED WITHOUT SCIPY" in done.stdout


def _enum_ids(struct, name) -> list[str]:
    return [item.identifier for item in struct.bl_rna.properties[name].enum_items]


def test_object_properties_contract(empty_scene):
    from vehicle_motion.addon import properties as p
    settings = bpy.types.Object.bl_rna.properties["vehicle_motion"].fixed_type
    props = settings.properties
    obj = bpy.data.objects.new("Probe", None)
    s = obj.vehicle_motion
    assert _enum_ids(s, "vehicle_type") == ["NONE", "CAR", "HELICOPTER", "BOAT", "SNAKEBOARD", "RIGID_BODY"]
    assert list(p.VEHICLE_TYPES) == _enum_ids(s, "vehicle_type")
    assert _enum_ids(s, "preset") == ["CUSTOM", "HATCHBACK", "PICKUP_TRUCK", "LIGHT_HELICOPTER",
                                      "RIB_BOAT", "SNAKEBOARD"]
    assert set(p.PARAMETERS_BY_TYPE) == set(p.VEHICLE_TYPES) == set(p.CHILD_ROLES_BY_TYPE)
    for vehicle_type, names in p.PARAMETERS_BY_TYPE.items():
        for name in names:
            assert name in props, (vehicle_type, name)
    for role, (_, axis) in p.CHILD_ROLES.items():
        assert props[role].type == "POINTER" and props[role].fixed_type.identifier == "Object"
        assert _enum_ids(s, axis) == ["X", "Y", "Z", "NEG_X", "NEG_Y", "NEG_Z"]
    for roles in p.CHILD_ROLES_BY_TYPE.values():
        assert set(roles) <= set(p.CHILD_ROLES)
    for role in ("wheel_rear_left", "wheel_rear_right", "wheel_front_left", "wheel_front_right",
                 "knuckle_front_left", "knuckle_front_right", "main_rotor", "tail_rotor", "rudder", "rider"):
        assert role in p.CHILD_ROLES
    for name in ("has_trajectory", "is_baked"):
        assert props[name].type == "BOOLEAN"
    assert props["original_action"].fixed_type.identifier == "Action"
    # SI units where Blender has them
    assert props["mass"].unit == "MASS"
    # vehicle dimensions are metres whatever the scene's Unit Scale: no LENGTH unit (which Blender scales)
    assert props["wheel_radius"].unit == "NONE" and props["wheel_radius"].name == "Wheel Radius (m)"
    assert props["max_steering_angle"].subtype == "ANGLE"
    other = bpy.data.objects.new("Wheel", None)
    assert p._not_self(s, other) and not p._not_self(s, obj)  # the picker hides the vehicle
    s.wheel_rear_left = other
    assert s.wheel_rear_left == other
    bpy.data.objects.remove(obj)
    bpy.data.objects.remove(other)


def test_scene_properties_contract(empty_scene):
    from vehicle_motion.addon import properties as p
    s = empty_scene.vehicle_motion
    props = type(s).bl_rna.properties
    expected = {
        "frame_start": "INT", "frame_end": "INT", "steps_per_frame": "INT", "integrator": "ENUM",
        "weight_effort": "FLOAT", "weight_duration": "FLOAT", "weight_path_length": "FLOAT",
        "weight_hazard": "FLOAT", "weight_smoothness": "FLOAT", "solver_backend": "ENUM",
        "max_iter": "INT", "tol": "FLOAT", "time_limit_s": "FLOAT", "last_report": "STRING",
    }
    for name, kind in expected.items():
        assert props[name].type == kind, name
    assert _enum_ids(s, "integrator") == list(p.INTEGRATORS)
    assert _enum_ids(s, "solver_backend") == list(p.SOLVER_BACKENDS)
    assert s.frame_end > s.frame_start and s.steps_per_frame >= 1 and s.max_iter >= 1 and 0 < s.tol < 1


def test_preset_fills_parameters(empty_scene):
    obj = bpy.data.objects.new("Truck", None)
    s = obj.vehicle_motion
    s.preset = "PICKUP_TRUCK"
    assert s.vehicle_type == "CAR"
    assert s.mass == pytest.approx(2200.0) and s.wheelbase == pytest.approx(3.30)
    assert s.max_steering_angle == pytest.approx(math.radians(33.0), rel=1e-6)
    assert s.preset == "PICKUP_TRUCK"
    s.mass = 2300.0
    assert s.preset == "CUSTOM"
    s.preset = "LIGHT_HELICOPTER"
    assert s.vehicle_type == "HELICOPTER" and tuple(s.inertia) == pytest.approx((300.0, 850.0, 700.0))
    assert s.preset == "LIGHT_HELICOPTER"
    s.preset = "CUSTOM"  # choosing Custom keeps the values
    assert s.preset == "LIGHT_HELICOPTER" and s.mass == pytest.approx(600.0)
    bpy.data.objects.remove(obj)


def test_panels_in_vehicle_tab():
    for name in PANELS:
        panel = getattr(bpy.types, name)
        assert (panel.bl_space_type, panel.bl_region_type, panel.bl_category) == ("VIEW_3D", "UI", "Vehicle")
