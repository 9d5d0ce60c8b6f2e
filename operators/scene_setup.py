"""Add Obstacle / Add Constraint: set up what Solve reads (see addon.scene_reader)."""
from __future__ import annotations

import bpy  # before bmesh: the bpy module provides it
import bmesh  # noqa: I001
from bpy.props import EnumProperty, FloatProperty

from ..addon.scene_obstacles import OBSTACLE_COLLECTION
from .bake import _allowed

_KINDS = [
    ("PASS_THROUGH", "Pass Through", "Pass within the empty's size of it at the current frame"),
    ("STOP", "Stop Here", "Come to rest at the empty at the current frame"),
    ("LAND", "Land / Dock Here", "Arrive at the empty, heading along its X axis, at rest, at the current frame"),
    ("KEEP_OUT", "Keep Out", "Stay out of a sphere of the empty's size for the whole shot"),
    ("SPEED_LIMIT", "Speed Limit", "Stay below a speed for the whole shot"),
]
_NAMES = {k: label for k, label, _ in _KINDS}
_DISPLAY = {"PASS_THROUGH": "SPHERE", "STOP": "PLAIN_AXES", "LAND": "ARROWS", "KEEP_OUT": "SPHERE",
            "SPEED_LIMIT": "CIRCLE"}


def _object_mode_problem(context) -> str | None:
    if context.scene is None:
        return "No scene"
    if context.mode != "OBJECT":
        return "Switch to Object Mode"
    return None


def obstacle_collection(scene) -> bpy.types.Collection:
    """The scene's Obstacles collection, created under the scene collection when missing."""
    for coll in scene.collection.children_recursive:
        if coll.name == OBSTACLE_COLLECTION:
            return coll
    coll = bpy.data.collections.new(OBSTACLE_COLLECTION)
    scene.collection.children.link(coll)
    return coll


def _new_mesh(name: str, shape: str, size: float) -> bpy.types.Mesh:
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    try:
        if shape == "BOX":
            bmesh.ops.create_cube(bm, size=size)
        else:
            bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=0.5 * size)
            if shape == "CAPSULE":  # stretch the upper hemisphere up: a vertical capsule 2 × size tall
                for v in bm.verts:
                    v.co.z += (0.5 * size if v.co.z > 1e-6 else -0.5 * size if v.co.z < -1e-6 else 0.0)
        bm.to_mesh(mesh)
    finally:
        bm.free()
    return mesh


class VEHICLE_MOTION_OT_add_obstacle(bpy.types.Operator):
    bl_idname = "vehicle_motion.add_obstacle"
    bl_label = "Add Obstacle"
    bl_description = ("Make the selected objects obstacles (put them in the Obstacles collection), or add a "
                      "new box, sphere or capsule obstacle at the 3D cursor")
    bl_options = {"REGISTER", "UNDO"}

    shape: EnumProperty(
        name="Shape", default="SELECTED",
        items=[("SELECTED", "Selected Objects", "Put the selected mesh objects in the Obstacles collection"),
               ("BOX", "New Box", "A new box obstacle at the 3D cursor"),
               ("SPHERE", "New Sphere", "A new sphere obstacle at the 3D cursor"),
               ("CAPSULE", "New Capsule", "A new vertical capsule obstacle at the 3D cursor")])
    size: FloatProperty(name="Size", default=2.0, min=1e-3, unit="LENGTH",
                        description="Width of a new obstacle")

    @classmethod
    def poll(cls, context):
        return _allowed(cls, _object_mode_problem(context))

    def execute(self, context):
        scene = context.scene
        if self.shape == "SELECTED":
            chosen = [ob for ob in context.selected_objects
                      if ob.type in {"MESH", "CURVE", "SURFACE", "FONT", "META"}
                      and ob.vehicle_motion.vehicle_type == "NONE" and ob.library is None]
            if not chosen:
                self.report({"ERROR"}, "Select the mesh objects to make obstacles (no selected mesh that is not "
                                       "a vehicle), or choose a new shape")
                return {"CANCELLED"}
            coll = obstacle_collection(scene)
            for ob in chosen:
                if ob.name not in coll.objects:
                    coll.objects.link(ob)
                ob.vehicle_motion.is_obstacle = True
            self.report({"INFO"}, f"Obstacles: {', '.join(ob.name for ob in chosen)}")
            return {"FINISHED"}
        name = f"Obstacle {self.shape.title()}"
        ob = bpy.data.objects.new(name, _new_mesh(name, self.shape, self.size))
        ob.location = scene.cursor.location
        obstacle_collection(scene).objects.link(ob)
        ob.vehicle_motion.obstacle_shape = self.shape
        ob.vehicle_motion.is_obstacle = True
        for other in context.selected_objects:
            other.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        self.report({"INFO"}, f"Added obstacle '{ob.name}'")
        return {"FINISHED"}


class VEHICLE_MOTION_OT_add_constraint(bpy.types.Operator):
    bl_idname = "vehicle_motion.add_constraint"
    bl_label = "Add Constraint"
    bl_description = ("Add a constraint empty at the 3D cursor for the active vehicle (or every vehicle): pass "
                      "through, stop, land / dock, keep out or speed limit; timed ones are keyed at the "
                      "current frame")
    bl_options = {"REGISTER", "UNDO"}

    kind: EnumProperty(name="Kind", items=_KINDS, default="PASS_THROUGH")
    size: FloatProperty(name="Size", default=1.0, min=1e-3, unit="LENGTH",
                        description="Display size: the radius of a pass-through or keep-out sphere")
    speed_limit: FloatProperty(name="Speed Limit", default=10.0, min=0.0, unit="VELOCITY",
                               description="Largest speed (Speed Limit only)")

    @classmethod
    def poll(cls, context):
        return _allowed(cls, _object_mode_problem(context))

    def execute(self, context):
        scene = context.scene
        vehicle = context.active_object
        if vehicle is not None and vehicle.vehicle_motion.vehicle_type == "NONE":
            vehicle = None
        ob = bpy.data.objects.new(_NAMES[self.kind], None)
        ob.empty_display_type = _DISPLAY[self.kind]
        ob.empty_display_size = self.size
        ob.location = scene.cursor.location
        (context.collection or scene.collection).objects.link(ob)
        s = ob.vehicle_motion
        s.constraint_kind = self.kind
        s.constraint_vehicle = vehicle
        s.speed_limit = self.speed_limit
        s.constraint_frame = scene.frame_current
        if self.kind in ("PASS_THROUGH", "STOP", "LAND"):
            ob.keyframe_insert("location", frame=scene.frame_current)
        for other in context.selected_objects:
            other.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        target = f"'{vehicle.name}'" if vehicle is not None else "every vehicle"
        when = f"at frame {scene.frame_current}" if self.kind in ("PASS_THROUGH", "STOP", "LAND") else "whole shot"
        self.report({"INFO"}, f"Added {_NAMES[self.kind].lower()} '{ob.name}' for {target} ({when})")
        return {"FINISHED"}


classes = (VEHICLE_MOTION_OT_add_obstacle, VEHICLE_MOTION_OT_add_constraint)
