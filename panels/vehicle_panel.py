"""The "Vehicle" tab of the 3D viewport's sidebar (N panel). Draw only."""
from __future__ import annotations

import bpy

from ..addon.properties import CHILD_ROLES, CHILD_ROLES_BY_TYPE, PARAMETERS_BY_TYPE
from ..addon.scene_obstacles import scene_constraints


class _VehicleTab:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Vehicle"


def _vehicle(context):
    obj = context.active_object
    if obj is None or obj.vehicle_motion.vehicle_type == "NONE":
        return None
    return obj


def _node_lines(context, scene_settings) -> list[str]:
    """The nodes Solve takes: per frame or by count over the own frame range (when set), and the grid the
    active vehicle's stored motion was solved on (its bake records it)."""
    lines = []
    s = scene_settings
    frames = s.frame_end - s.frame_start
    if s.node_spacing == "PER_FRAME" and s.use_frame_range and frames > 0:
        lines.append(f"{frames * s.steps_per_frame + 1} nodes over frames {s.frame_start}–{s.frame_end}")
    elif s.node_spacing == "COUNT":
        lines.append(f"{s.node_count} nodes over the shot")
    obj = _vehicle(context)
    if obj is not None and obj.vehicle_motion.node_grid:
        lines.append(f"Solved on {obj.vehicle_motion.node_grid}")
    return lines


class VEHICLE_MOTION_PT_vehicle(_VehicleTab, bpy.types.Panel):
    bl_idname = "VEHICLE_MOTION_PT_vehicle"
    bl_label = "Vehicle"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = context.active_object
        if obj is None:
            layout.label(text="Select the vehicle object", icon="INFO")
            return
        settings = obj.vehicle_motion
        layout.prop(settings, "vehicle_type")
        if settings.vehicle_type == "NONE":
            return
        layout.prop(settings, "preset")
        col = layout.column(align=True)
        for name in PARAMETERS_BY_TYPE[settings.vehicle_type]:
            if name == "wheel_radius":  # a car's radius and wheelbase: measured from its wheels, or typed
                col.prop(settings, "car_geometry")
            if name == "main_rotor_offset":  # a helicopter's rotor hubs: measured from its rotors, or typed
                col.prop(settings, "rotor_geometry")
            col.prop(settings, name)
        if settings.vehicle_type == "CAR":
            layout.prop(settings, "suspension")
        col = layout.column(align=True)
        col.prop(settings, "speed")
        col.prop(settings, "collision_radius")


class VEHICLE_MOTION_PT_parts(_VehicleTab, bpy.types.Panel):
    bl_idname = "VEHICLE_MOTION_PT_parts"
    bl_label = "Parts"
    bl_parent_id = "VEHICLE_MOTION_PT_vehicle"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        obj = _vehicle(context)
        return obj is not None and bool(CHILD_ROLES_BY_TYPE[obj.vehicle_motion.vehicle_type])

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.active_object.vehicle_motion
        roles = CHILD_ROLES_BY_TYPE[settings.vehicle_type]
        col = layout.column(align=True)
        for role in roles:
            col.prop(settings, role)
        col = layout.column(align=True)
        for axis in dict.fromkeys(CHILD_ROLES[role][1] for role in roles):
            col.prop(settings, axis)


class VEHICLE_MOTION_PT_solve(_VehicleTab, bpy.types.Panel):
    bl_idname = "VEHICLE_MOTION_PT_solve"
    bl_label = "Solve Settings"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        scene_settings = context.scene.vehicle_motion
        layout.prop(scene_settings, "use_frame_range")
        col = layout.column(align=True)
        col.active = scene_settings.use_frame_range
        col.prop(scene_settings, "frame_start", text="Frame Start")
        col.prop(scene_settings, "frame_end", text="End")
        layout.prop(scene_settings, "ground")
        layout.prop(scene_settings, "water")
        layout.prop(scene_settings, "node_spacing")
        if scene_settings.node_spacing == "COUNT":
            layout.prop(scene_settings, "node_count")
        layout.prop(scene_settings, "steps_per_frame")
        for line in _node_lines(context, scene_settings):
            layout.label(text=line, icon="TIME")
        layout.prop(scene_settings, "integrator")
        layout.prop(scene_settings, "key_tolerance")
        col = layout.column(align=True, heading="Cost Weights")
        for name in ("weight_effort", "weight_duration", "weight_path_length",
                     "weight_hazard", "weight_smoothness"):
            col.prop(scene_settings, name)
        col = layout.column(align=True)
        col.prop(scene_settings, "solver_backend")
        col.prop(scene_settings, "max_iter")
        col.prop(scene_settings, "tol")
        col.prop(scene_settings, "time_limit_s")


class VEHICLE_MOTION_PT_bake(_VehicleTab, bpy.types.Panel):
    bl_idname = "VEHICLE_MOTION_PT_bake"
    bl_label = "Motion"

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        scene_settings = context.scene.vehicle_motion
        if scene_settings.solve_running:
            layout.progress(factor=scene_settings.solve_progress, type="BAR", text=scene_settings.solve_status)
        col = layout.column(align=True)
        col.operator("vehicle_motion.solve_trajectory", icon="PLAY")
        row = col.row(align=True)
        row.operator("vehicle_motion.solve_trajectory", text="Solve, Store Only").bake_after_solve = False
        row.operator("vehicle_motion.solve_trajectory", text="Keep Best Attempt").bake_best_attempt = True
        col.prop(scene_settings, "live_solve", toggle=True, icon="FILE_REFRESH")
        if scene_settings.live_solve:  # it stores and previews; the bake waits (addon.live)
            col.label(text="Changes re-solve and store; turning it off bakes", icon="INFO")
        col.operator("vehicle_motion.simulate", icon="FORCE_FORCE")
        if obj is not None:
            settings = obj.vehicle_motion
            if settings.has_trajectory:
                layout.label(text=settings.trajectory_summary, icon="ANIM")
            elif settings.vehicle_type != "NONE":
                layout.label(text="No stored trajectory", icon="INFO")
        row = layout.row(align=True)
        row.operator("vehicle_motion.bake", icon="KEYINGSET")
        row.operator("vehicle_motion.clear_bake", icon="X")
        layout.prop(scene_settings, "show_path")
        report = scene_settings.last_report
        if report:
            box = layout.box()
            for line in report.split("; "):
                box.label(text=line)


class VEHICLE_MOTION_PT_constraints(_VehicleTab, bpy.types.Panel):
    bl_idname = "VEHICLE_MOTION_PT_constraints"
    bl_label = "Constraints"
    bl_parent_id = "VEHICLE_MOTION_PT_bake"

    @classmethod
    def poll(cls, context):
        return _vehicle(context) is not None

    def draw(self, context):
        layout = self.layout
        found = scene_constraints(context.scene, context.active_object)
        if not found:
            layout.label(text="No keys, constraints or obstacles", icon="INFO")
        col = layout.column(align=True)
        for name, kind, when in found:
            row = col.row(align=True)
            row.label(text=name)
            row.label(text=kind)
            row.label(text=when)
        row = layout.row(align=True)
        row.operator_menu_enum("vehicle_motion.add_constraint", "kind", text="Add Constraint", icon="EMPTY_AXIS")
        row.operator_menu_enum("vehicle_motion.add_obstacle", "shape", text="Add Obstacle", icon="MESH_CUBE")


class VEHICLE_MOTION_PT_object_role(_VehicleTab, bpy.types.Panel):
    """Settings of a constraint empty or an obstacle (the active object when it is not a vehicle)."""
    bl_idname = "VEHICLE_MOTION_PT_object_role"
    bl_label = "Constraint / Obstacle"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.vehicle_motion.vehicle_type == "NONE"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = context.active_object
        s = obj.vehicle_motion
        if obj.type == "EMPTY":
            layout.prop(s, "constraint_kind")
            if s.constraint_kind != "NONE":
                layout.prop(s, "constraint_vehicle")
                layout.prop(s, "constraint_timing")
                if s.constraint_timing == "FRAME":
                    layout.prop(s, "constraint_frame")
                if s.constraint_kind == "SPEED_LIMIT":
                    layout.prop(s, "speed_limit")
                elif s.constraint_kind in ("PASS_THROUGH", "KEEP_OUT"):
                    layout.prop(obj, "empty_display_size", text="Radius")
            return
        layout.prop(s, "is_obstacle")
        col = layout.column()
        col.prop(s, "obstacle_shape")
        col.prop(s, "obstacle_margin")


classes = (VEHICLE_MOTION_PT_vehicle, VEHICLE_MOTION_PT_parts, VEHICLE_MOTION_PT_solve,
           VEHICLE_MOTION_PT_bake, VEHICLE_MOTION_PT_constraints, VEHICLE_MOTION_PT_object_role)
