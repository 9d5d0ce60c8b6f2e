"""Simulate: drive the active vehicle with its keyed control channels (the paper's joystick mode).

The artist keys control inputs as custom properties of the vehicle object — car ``torque``
and ``steering_rate``; helicopter ``collective``, ``yaw``, ``pitch_tilt``, ``roll_tilt``;
boat ``thruster_1``, ``thruster_2``; snakeboard ``rotor_torque``, ``steering_torque`` —
which are sampled at every integrator step; the vehicle starts from its pose (and Speed)
at the Start frame and the integrator drives it forward. The result is stored and baked.
"""
from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ..addon import preview, solving
from .bake import _allowed, _run
from .solve import _vehicle_problem


class VEHICLE_MOTION_OT_simulate(bpy.types.Operator):
    bl_idname = "vehicle_motion.simulate"
    bl_label = "Simulate"
    bl_description = ("Drive the active vehicle forward from its start pose with the control inputs keyed as "
                      "its custom properties (torque, steering_rate, collective, …), then store and bake it")
    bl_options = {"REGISTER", "UNDO"}

    bake: BoolProperty(name="Bake", default=True, description="Bake the simulated motion (off: only store it)")

    @classmethod
    def poll(cls, context):
        problem = _vehicle_problem(context)
        if problem is None and solving.running(context.active_object.name):
            problem = f"'{context.active_object.name}' is being solved"
        return _allowed(cls, problem)

    def execute(self, context):
        obj = context.active_object
        done = _run(self, lambda: solving.simulate_and_apply(obj, context.scene, bake=self.bake))
        if done is None:
            return {"CANCELLED"}
        level, message = done
        context.scene.vehicle_motion.last_report = message
        self.report({level}, message)
        preview.tag_redraw()
        return {"FINISHED"}


classes = (VEHICLE_MOTION_OT_simulate,)
