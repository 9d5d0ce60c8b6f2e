"""Bake / Clear Bake: the stored trajectory of the active object to and from F-curves."""
from __future__ import annotations

import traceback

import bpy

from ..addon import baking


def _object_problem(context) -> str | None:
    """Why an operator on the active object cannot run now, or None."""
    obj = context.active_object
    if obj is None:
        return "Select the vehicle object (no active object)"
    if context.mode != "OBJECT":
        return "Switch to Object Mode"
    if obj.library is not None:
        return f"'{obj.name}' is linked from a library and cannot be animated here"
    return None


def _allowed(cls, problem: str | None) -> bool:
    """poll(): whether the operator may run; when it may not, ``problem`` is the tooltip saying why."""
    if problem:
        cls.poll_message_set(problem)
    return problem is None


def _run(op, action):
    """Call ``action()``; a VehicleMotionError or a bug becomes one error line and CANCELLED."""
    from ..core.errors import VehicleMotionError
    try:
        return action()
    except VehicleMotionError as exc:
        op.report({"ERROR"}, str(exc))
    except Exception as exc:  # a bug: one line for the user, the traceback for the console
        traceback.print_exc()
        op.report({"ERROR"}, f"Vehicle Motion internal error: {type(exc).__name__}: {exc}")
    return None


class VEHICLE_MOTION_OT_bake(bpy.types.Operator):
    bl_idname = "vehicle_motion.bake"
    bl_label = "Bake Motion"
    bl_description = ("Key the trajectory stored with the active object into a new action, "
                      "with its wheels, knuckles and rotors; the current action is kept for Clear")
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _allowed(cls, _object_problem(context))

    def execute(self, context):
        obj = context.active_object
        result = _run(self, lambda: baking.bake_stored(obj, context.scene))
        if result is None:
            return {"CANCELLED"}
        message = result.message()
        context.scene.vehicle_motion.last_report = message
        self.report({"WARNING"} if result.warnings else {"INFO"}, message)
        return {"FINISHED"}


class VEHICLE_MOTION_OT_clear_bake(bpy.types.Operator):
    bl_idname = "vehicle_motion.clear_bake"
    bl_label = "Clear Bake"
    bl_description = ("Remove the baked motion of the active object and its children and "
                      "give them back the actions they had before baking")
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        problem = _object_problem(context)
        if problem is None and not context.active_object.vehicle_motion.is_baked:
            problem = f"'{context.active_object.name}' has no baked motion"
        return _allowed(cls, problem)

    def execute(self, context):
        restored = _run(self, lambda: baking.clear_bake(context.active_object))
        if restored is None:
            return {"CANCELLED"}
        message = f"Cleared the bake of {', '.join(restored)}"
        context.scene.vehicle_motion.last_report = message
        self.report({"INFO"}, message)
        return {"FINISHED"}
