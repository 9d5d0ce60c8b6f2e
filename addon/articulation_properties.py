"""Settings of a vehicle's articulated parts: ``Object.vehicle_motion_parts``.

One entry per part (a child object that turns on a joint: a cable link, a load's sling, a
trailer, a crane arm). The part object's origin is the joint; its parent object (the
vehicle or another part) is what it hangs from; its End object (the next link, the load, a
trailer's axle — a descendant of the part) places the link's far end, where its mass sits,
so link lengths come from where the objects are. The same entries serve both engines:
Secondary Motion (the vehicle's own motion drives the parts; core.parts.secondary) and
Articulated (the vehicle and its hinged parts move together as a free-base chain;
core.parts.articulated). Units are SI.
"""
from __future__ import annotations

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, PointerProperty, StringProperty)

MODES = ("SECONDARY", "ARTICULATED")
JOINTS = ("HINGE", "SWING")
# Chain integrators: enum identifier = core method name in upper case.
METHODS = ("CG2", "CG3", "CG4", "CF2", "CF3", "CF4", "MK2", "MK3", "MK4", "RK4")
AXIS_NAMES = {"X": "x", "Y": "y", "Z": "z", "NEG_X": "-x", "NEG_Y": "-y", "NEG_Z": "-z"}

_AXIS_ITEMS = [
    ("X", "X", "Local +X axis"), ("Y", "Y", "Local +Y axis"), ("Z", "Z", "Local +Z axis"),
    ("NEG_X", "-X", "Local -X axis"), ("NEG_Y", "-Y", "Local -Y axis"), ("NEG_Z", "-Z", "Local -Z axis"),
]
_METHOD_DESCRIPTIONS = {"CG": "Crouch–Grossman", "CF": "commutator-free", "MK": "Munthe-Kaas"}


def _not_owner(self, obj) -> bool:
    return obj != self.id_data


class VehicleMotionPart(bpy.types.PropertyGroup):
    object: PointerProperty(
        type=bpy.types.Object, name="Part", poll=_not_owner,
        description="Child object that turns on the joint; its origin is the joint and its parent "
                    "(the vehicle or another part) what it hangs from. Simulating keys its rotation")
    end: PointerProperty(
        type=bpy.types.Object, name="End", poll=_not_owner,
        description="Object (a child of the part) whose origin is the link's far end, where its mass "
                    "sits: the next link, the load or a trailer's axle. Empty: the part's only child")
    joint: EnumProperty(
        name="Joint", default="SWING",
        description="How the part turns against its parent",
        items=[("HINGE", "Hinge", "About one axis of the part (a trailer's hitch, a crane's boom)"),
               ("SWING", "Swing", "About the two axes across the link (a cable's hook)")])
    axis: EnumProperty(name="Axis", items=_AXIS_ITEMS, default="Z",
                       description="Local axis of the part about which a hinge turns")
    mass: FloatProperty(name="Mass", unit="MASS", default=100.0, min=1e-6,
                        description="Mass at the link's end (kg)")
    inertia: FloatVectorProperty(
        name="Inertia", size=3, default=(0.0, 0.0, 0.0), min=0.0,
        description="Principal moments of inertia about the end, in the part's local axes (kg·m²); "
                    "articulated parts need them positive")
    damping: FloatProperty(name="Damping", default=0.0, min=0.0,
                           description="Joint damping: torque per joint rate (N·m·s/rad)")
    grip: FloatProperty(name="Grip", default=0.0, min=0.0,
                        description="Hinge only: sideways damping of the end, as a trailer's wheels that do "
                                    "not slide (N·s/m); 0 for none")
    rate: FloatProperty(name="Initial Rate", default=0.0,
                        description="Articulated only: joint rate at the start frame (rad/s)")


def _method_items():
    return [(m, m.lower(), f"{_METHOD_DESCRIPTIONS.get(m[:2], 'classical Runge–Kutta')} method of order {m[2]}")
            for m in METHODS]


class VehicleMotionArticulation(bpy.types.PropertyGroup):
    parts: CollectionProperty(type=VehicleMotionPart, name="Parts")
    active_index: IntProperty(name="Active Part", default=0, min=0)
    mode: EnumProperty(
        name="Mode", default="SECONDARY",
        description="How the parts move",
        items=[("SECONDARY", "Secondary Motion",
                "The vehicle's keyed, solved or baked motion drives the parts (tree variational integrator); "
                "the vehicle keeps its motion"),
               ("ARTICULATED", "Articulated",
                "The vehicle and its hinged parts move together as a free-base chain from the start frame "
                "(Lie group integrators); the vehicle's motion is baked too")])
    method: EnumProperty(name="Integrator", items=_method_items(), default="CF4",
                         description="Articulated: the chain's integrator")
    gravity: BoolProperty(name="Gravity", default=True, description="Apply gravity (9.81 m/s² along -Z)")
    last_summary: StringProperty(name="Last Result", description="What the last simulation of the parts did")


classes = (VehicleMotionPart, VehicleMotionArticulation)


def attach() -> None:
    bpy.types.Object.vehicle_motion_parts = PointerProperty(type=VehicleMotionArticulation)


def detach() -> None:
    if "vehicle_motion_parts" in bpy.types.Object.bl_rna.properties:
        del bpy.types.Object.vehicle_motion_parts
