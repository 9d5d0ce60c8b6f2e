"""Simulate Parts (secondary motion or a free-base articulated vehicle), and adding/removing parts."""
from __future__ import annotations

import bpy
from bpy.props import IntProperty

from .bake import _allowed, _run
from .solve import _vehicle_problem


def _parts_problem(context) -> str | None:
    """Why Simulate Parts cannot run on the active object now, or None (cheap: no scene reading)."""
    problem = _vehicle_problem(context)
    if problem:
        return problem
    obj = context.active_object
    parts = obj.vehicle_motion_parts.parts
    if not len(parts):
        return f"'{obj.name}' has no parts: add them under Vehicle › Articulated Parts"
    for i, part in enumerate(parts, start=1):
        if part.object is None:
            return f"Part #{i} of '{obj.name}' has no object"
    from ..addon import solving
    if solving.running(obj.name):
        return f"'{obj.name}' is being solved"
    return None


class VEHICLE_MOTION_OT_simulate_secondary(bpy.types.Operator):
    bl_idname = "vehicle_motion.simulate_secondary"
    bl_label = "Simulate Parts"
    bl_description = ("Simulate the active vehicle's articulated parts (cable links, loads, trailers, arms) "
                      "and bake their rotations: driven by the vehicle's motion (Secondary Motion), or moving "
                      "with it as one free-base system under the vehicle's own forces, a helicopter's rotor "
                      "or a boat's buoyancy (Articulated)")
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _allowed(cls, _parts_problem(context))

    def execute(self, context):
        from ..addon import secondary
        obj = context.active_object
        done = _run(self, lambda: secondary.simulate(context.scene, obj))
        if done is None:
            return {"CANCELLED"}
        level, message = done
        context.scene.vehicle_motion.last_report = message
        self.report({level}, message)
        return {"FINISHED"}


class VEHICLE_MOTION_OT_add_part(bpy.types.Operator):
    bl_idname = "vehicle_motion.add_part"
    bl_label = "Add Part"
    bl_description = ("Add an articulated part to the active vehicle (the selected child objects, else an "
                      "empty entry to fill in)")
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _allowed(cls, _vehicle_problem(context))

    def execute(self, context):
        vehicle = context.active_object
        settings = vehicle.vehicle_motion_parts
        listed = {p.object for p in settings.parts if p.object is not None}
        picked = [ob for ob in context.selected_objects if ob != vehicle and ob not in listed]
        for ob in picked or [None]:
            part = settings.parts.add()
            part.object = ob
        settings.active_index = len(settings.parts) - 1
        return {"FINISHED"}


class VEHICLE_MOTION_OT_remove_part(bpy.types.Operator):
    bl_idname = "vehicle_motion.remove_part"
    bl_label = "Remove Part"
    bl_description = "Remove the part from the vehicle's list (its object and animation are kept)"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty(name="Index", default=-1, description="Part to remove; -1: the active one")

    @classmethod
    def poll(cls, context):
        problem = _vehicle_problem(context)
        if problem is None and not len(context.active_object.vehicle_motion_parts.parts):
            problem = f"'{context.active_object.name}' has no parts"
        return _allowed(cls, problem)

    def execute(self, context):
        settings = context.active_object.vehicle_motion_parts
        index = settings.active_index if self.index < 0 else self.index
        if not 0 <= index < len(settings.parts):
            self.report({"ERROR"}, f"no part #{index + 1} (the vehicle has {len(settings.parts)})")
            return {"CANCELLED"}
        settings.parts.remove(index)
        settings.active_index = max(0, min(index, len(settings.parts) - 1))
        return {"FINISHED"}


classes = (VEHICLE_MOTION_OT_simulate_secondary, VEHICLE_MOTION_OT_add_part, VEHICLE_MOTION_OT_remove_part)
