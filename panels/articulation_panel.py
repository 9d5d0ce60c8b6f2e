"""The "Articulated Parts" sub-panel of the Vehicle tab: the part list and Simulate Parts. Draw only."""
from __future__ import annotations

import bpy

# What the vehicle's own model puts on the free base in Articulated mode (core.parts.base).
_BASE_FORCES = {
    "HELICOPTER": ("Rotor: keyed collective, yaw, pitch_tilt, roll_tilt", "FORCE_WIND"),
    "BOAT": ("Buoyancy, damping, wind; keyed thruster_1, thruster_2", "MOD_OCEAN"),
    "RIGID_BODY": ("No forces of its own (gravity only)", "INFO"),
}


class VEHICLE_MOTION_UL_parts(bpy.types.UIList):
    bl_idname = "VEHICLE_MOTION_UL_parts"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.label(text=item.object.name if item.object is not None else "(no object)",
                  icon="BONE_DATA" if item.joint == "HINGE" else "CONSTRAINT_BONE")
        row.label(text=item.joint.title())
        row.label(text=f"{item.mass:g} kg")


class VEHICLE_MOTION_PT_articulation(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Vehicle"
    bl_idname = "VEHICLE_MOTION_PT_articulation"
    bl_label = "Articulated Parts"
    bl_parent_id = "VEHICLE_MOTION_PT_vehicle"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.vehicle_motion.vehicle_type != "NONE"

    def draw(self, context):
        layout = self.layout
        settings = context.active_object.vehicle_motion_parts
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(settings, "mode")
        if settings.mode == "ARTICULATED":
            layout.prop(settings, "method")
            text, icon = _BASE_FORCES.get(context.active_object.vehicle_motion.vehicle_type,
                                          ("No free-base model: use Secondary Motion", "ERROR"))
            layout.label(text=text, icon=icon)
        layout.prop(settings, "gravity")
        row = layout.row()
        row.template_list("VEHICLE_MOTION_UL_parts", "", settings, "parts", settings, "active_index", rows=3)
        col = row.column(align=True)
        col.operator("vehicle_motion.add_part", icon="ADD", text="")
        col.operator("vehicle_motion.remove_part", icon="REMOVE", text="")
        if 0 <= settings.active_index < len(settings.parts):
            part = settings.parts[settings.active_index]
            col = layout.column(align=True)
            col.prop(part, "object")
            col.prop(part, "end")
            col = layout.column(align=True)
            col.prop(part, "joint")
            if part.joint == "HINGE":
                col.prop(part, "axis")
            col.prop(part, "mass")
            col.prop(part, "inertia")
            col.prop(part, "damping")
            if settings.mode == "SECONDARY" and part.joint == "HINGE":
                col.prop(part, "grip")
            if settings.mode == "ARTICULATED":
                col.prop(part, "rate")
        layout.operator("vehicle_motion.simulate_secondary", icon="CON_CHILDOF")
        if settings.last_summary:
            box = layout.box()
            for line in settings.last_summary.split("; "):
                box.label(text=line)


classes = (VEHICLE_MOTION_UL_parts, VEHICLE_MOTION_PT_articulation)
