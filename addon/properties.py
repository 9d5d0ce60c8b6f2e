"""Settings that live in the .blend: ``Object.vehicle_motion`` and ``Scene.vehicle_motion``.

Units are SI (kg, m, s, rad, N, N·m, kg·m²). The vehicle body frame is +X forward,
+Y left, +Z up, as in the core models. Enum identifiers are a contract with the scene
reader: ``vehicle_type`` is one of ``VEHICLE_TYPES``, ``integrator`` one of
``INTEGRATORS`` (the core method name is the identifier in lower case). The vehicles, their
parameters (one setting each), presets and parts are core's vehicle specs
(``core.vehicles.spec``): ``SPECS`` by vehicle type; ``PARAMETERS_BY_TYPE`` / ``CHILD_ROLES_BY_TYPE``
say which fields belong to which vehicle (the panel draws from them, the scene reader reads from them).
"""
from __future__ import annotations

import math

import bpy
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, PointerProperty, StringProperty)

from ..core.scenario import MAX_SOLVE_STEPS
from ..core.terrain.suspension import PRESETS as SUSPENSION_PRESETS
from ..core.vehicles.spec import Parameter, Preset, VehicleSpec, vehicle_specs

SPECS: dict[str, VehicleSpec] = {spec.name.upper(): spec for spec in vehicle_specs()}
VEHICLE_TYPES = ("NONE", *SPECS)

# Core's Trajectory.vehicle string for each vehicle_type.
CORE_VEHICLE_NAMES = {vehicle_type: spec.name for vehicle_type, spec in SPECS.items()}

PARAMETERS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "NONE": (), **{vehicle_type: spec.parameter_names for vehicle_type, spec in SPECS.items()}}


def vehicle_spec(vehicle_type: str) -> VehicleSpec | None:
    """The spec of a vehicle type; None for "NONE"."""
    return SPECS.get(vehicle_type)


# Child objects that play a part, and the property holding each one's local axis.
CHILD_ROLES: dict[str, tuple[str, str]] = {
    # role: (label, axis property)
    "wheel_rear_left": ("Rear Left Wheel", "wheel_axis"),
    "wheel_rear_right": ("Rear Right Wheel", "wheel_axis"),
    "wheel_front_left": ("Front Left Wheel", "wheel_axis"),
    "wheel_front_right": ("Front Right Wheel", "wheel_axis"),
    "knuckle_front_left": ("Front Left Knuckle", "steering_axis"),
    "knuckle_front_right": ("Front Right Knuckle", "steering_axis"),
    "truck_front": ("Front Truck", "steering_axis"),
    "truck_rear": ("Rear Truck", "steering_axis"),
    "rider": ("Rider", "rider_axis"),
    "main_rotor": ("Main Rotor", "rotor_axis"),
    "tail_rotor": ("Tail Rotor", "tail_rotor_axis"),
    "rudder": ("Rudder", "rudder_axis"),
}

CHILD_ROLES_BY_TYPE: dict[str, tuple[str, ...]] = {
    "NONE": (), **{vehicle_type: tuple(p.role for p in spec.parts) for vehicle_type, spec in SPECS.items()}}


def preset_id(preset: Preset) -> str:
    """The Preset setting's identifier of a spec's preset: its label in capitals ("Pickup Truck" → PICKUP_TRUCK)."""
    return preset.label.upper().replace(" ", "_")


# Preset → vehicle_type and parameter values (the specs' presets).
PRESETS: dict[str, dict] = {preset_id(preset): {"vehicle_type": vehicle_type, **preset.values}
                            for vehicle_type, spec in SPECS.items() for preset in spec.presets}

_PRESET_ITEMS = [("CUSTOM", "Custom", "Parameters that match no preset", 0)] + [
    (preset_id(preset), preset.label, preset.description, number)
    for number, preset in enumerate((p for spec in SPECS.values() for p in spec.presets), start=1)]
_PRESET_NUMBER = {item[0]: item[3] for item in _PRESET_ITEMS}
_PRESET_BY_NUMBER = {item[3]: item[0] for item in _PRESET_ITEMS}

_AXIS_ITEMS = [
    ("X", "X", "Local +X axis"), ("Y", "Y", "Local +Y axis"), ("Z", "Z", "Local +Z axis"),
    ("NEG_X", "-X", "Local -X axis"), ("NEG_Y", "-Y", "Local -Y axis"), ("NEG_Z", "-Z", "Local -Z axis"),
]

# What a parameter's setting adds to its spec: where a measured value takes over …
_NOTES = {
    "wheel_radius": "used with Geometry: Typed Values, and for wheels that are empties",
    "wheelbase": "used with Geometry: Typed Values, or when the wheel objects give none",
    "main_rotor_offset": "used with Rotor Hubs: Typed Values, or without a Main Rotor object",
    "tail_rotor_offset": "used with Rotor Hubs: Typed Values, or without a Tail Rotor object",
}
_DEFAULTS = {"gravity": True}   # … and a rigid body in a scene falls unless told otherwise (a scenario's floats free)
MAX_ANGLE = math.radians(89.0)   # an angle limit of a right angle or more makes no vehicle sense


def _parameter_settings() -> dict:
    """One setting per parameter name of the specs. Its default is the first preset's value (or the
    parameter's own) of the first vehicle that has it; a name shared by vehicles with different
    meanings describes each."""
    found: dict[str, list[tuple[VehicleSpec, Parameter]]] = {}
    for spec in SPECS.values():
        for p in spec.parameters:
            found.setdefault(p.name, []).append((spec, p))
    return {name: _setting(entries) for name, entries in found.items()}


def _setting(entries: list[tuple[VehicleSpec, Parameter]]) -> bpy.props._PropertyDeferred:
    """The setting of one parameter name, from the (vehicle, parameter) pairs that have it."""
    spec, p = entries[0]
    default = _DEFAULTS.get(p.name, spec.presets[0].values[p.name] if spec.presets else p.default)
    meanings = {q.description: s.label for s, q in entries}
    text = p.description
    if len(meanings) > 1:  # "Car: rolling inertia …; snakeboard: one foot plate …"
        text = "; ".join(f"{label.lower()}: {d[0].lower()}{d[1:]}" for d, label in meanings.items())
        text = text[0].upper() + text[1:]
    unit = "metres, whatever the scene's Unit Scale" if p.is_length else "" if p.unit in ("", "rad") else p.unit
    description = "; ".join(x for x in (f"{text} ({unit})" if unit else text, _NOTES.get(p.name)) if x)
    if p.kind == "switch":
        return BoolProperty(name=p.label, default=default, description=description)
    if p.kind == "vector":
        return FloatVectorProperty(name=p.label, size=3, default=default, min=p.minimum, description=description)
    extra: dict = {}
    if p.unit == "rad":
        extra = dict(subtype="ANGLE", max=MAX_ANGLE)
    elif p.unit == "kg":
        extra = dict(unit="MASS", soft_max=50000.0)
    label = f"{p.label} (m)" if p.is_length else p.label
    return FloatProperty(name=label, default=default, min=p.minimum, description=description, **extra)


INTEGRATORS = ("VARIATIONAL", "RK2", "IMPLICIT_RK2", "RK4", "LIE_NEWMARK", "LIE_EULER")
SOLVER_BACKENDS = ("AUTO", "SCIPY", "IPOPT")


def _close(a, b) -> bool:
    if isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(b, str):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-6)


def matching_preset(settings) -> str:
    """The preset whose values the settings hold now, or 'CUSTOM'."""
    for name, values in PRESETS.items():
        if all(_close(getattr(settings, key), value) for key, value in values.items()):
            return name
    return "CUSTOM"


def apply_preset(settings, name: str) -> None:
    for key, value in PRESETS[name].items():
        setattr(settings, key, value)


def _get_preset(self) -> int:
    return _PRESET_NUMBER[matching_preset(self)]


def _set_preset(self, value: int) -> None:
    name = _PRESET_BY_NUMBER[value]
    if name != "CUSTOM":
        apply_preset(self, name)


def _not_self(self, obj) -> bool:
    return obj != self.id_data


def _child(role: str) -> PointerProperty:
    label, _ = CHILD_ROLES[role]
    return PointerProperty(
        type=bpy.types.Object, name=label, poll=_not_self,
        description=f"Object that plays the {label.lower()}; baking keys its rotation")


def _axis(name: str, default: str, what: str) -> EnumProperty:
    return EnumProperty(name=name, items=_AXIS_ITEMS, default=default,
                        description=f"Local axis of the child object about which {what}")


class VehicleMotionObjectSettings(bpy.types.PropertyGroup):
    vehicle_type: EnumProperty(
        name="Vehicle", default="NONE",
        description="What this object is; its motion is computed by that vehicle's model",
        items=[("NONE", "None", "Not a vehicle")] + [(t, spec.label, spec.description) for t, spec in SPECS.items()])
    preset: EnumProperty(
        name="Preset", items=_PRESET_ITEMS, get=_get_preset, set=_set_preset,
        description="Fill the vehicle type and parameters from a preset")

    # The vehicle parameters: one setting each, made from the specs (_parameter_settings, added below)
    car_geometry: EnumProperty(
        name="Geometry", default="WHEELS",
        description="Where the car's wheel radius, wheelbase and rear axle come from",
        items=[("WHEELS", "From the Wheels",
                "Measure the wheel objects' geometry on the body: the rear axle (the point the car drives, midway "
                "between the rear wheels, on the ground), the wheelbase and each wheel's radius; a wheel that "
                "is an empty gives its centre only and uses Wheel Radius"),
               ("TYPED", "Typed Values",
                "Use Wheel Radius and Wheelbase as typed (the rear axle still sits midway between the rear "
                "wheel objects, when there are both)")])
    suspension: EnumProperty(
        name="Suspension", default="STANDARD",
        description="How the car's body rides over the scene's Ground (bake only; on flat ground it stays level)",
        items=[(p.name.upper(), p.label, p.description) for p in SUSPENSION_PRESETS])
    rotor_geometry: EnumProperty(
        name="Rotor Hubs", default="PARTS",
        description="Where the helicopter's main rotor height and tail rotor arm come from",
        items=[("PARTS", "From the Parts",
                "Measure the Main Rotor and Tail Rotor objects (their origins, the hubs) against the centre of "
                "mass (the volume centroid of the body's closed mesh, else the body's origin): the hub's height "
                "above it and the tail rotor's distance behind it"),
               ("TYPED", "Typed Values", "Use Main Rotor Height and Tail Rotor Arm as typed")])

    # Child objects
    wheel_rear_left: _child("wheel_rear_left")
    wheel_rear_right: _child("wheel_rear_right")
    wheel_front_left: _child("wheel_front_left")
    wheel_front_right: _child("wheel_front_right")
    knuckle_front_left: _child("knuckle_front_left")
    knuckle_front_right: _child("knuckle_front_right")
    truck_front: _child("truck_front")
    truck_rear: _child("truck_rear")
    rider: _child("rider")
    main_rotor: _child("main_rotor")
    tail_rotor: _child("tail_rotor")
    rudder: _child("rudder")
    wheel_axis: _axis("Wheel Axis", "Y", "the wheels roll forward")
    steering_axis: _axis("Steering Axis", "Z", "knuckles and trucks turn left")
    rotor_axis: _axis("Rotor Axis", "Z", "the main rotor spins")
    tail_rotor_axis: _axis("Tail Rotor Axis", "Y", "the tail rotor spins")
    rudder_axis: _axis("Rudder Axis", "Z", "the rudder turns left")
    rider_axis: _axis("Rider Axis", "Z", "the rider twists")

    # Scene reading (addon.scene_reader): keyed state and collision shape of a vehicle
    speed: FloatProperty(
        name="Speed", unit="VELOCITY", default=0.0,
        description="Forward speed of the vehicle (scene units per second). Key it at the start or "
                    "goal frame to impose that speed there; Simulate starts with its value at the start")
    collision_radius: FloatProperty(
        name="Collision Radius", unit="LENGTH", default=0.0, min=0.0,
        description="Radius of the spheres that keep the vehicle off obstacles; 0 fits them to the "
                    "vehicle's meshes (body and parts)")

    # Obstacles (objects in a collection named "Obstacles", or flagged here)
    is_obstacle: BoolProperty(
        name="Obstacle", default=False,
        description="Vehicles keep out of this object (as do objects in a collection named Obstacles)")
    obstacle_shape: EnumProperty(
        name="Shape", default="AUTO",
        description="Shape fitted around the object's evaluated mesh in world space",
        items=[("AUTO", "Automatic", "The smallest of sphere, oriented box and capsule that holds the mesh"),
               ("SPHERE", "Sphere", "A sphere around the mesh"),
               ("BOX", "Box", "An oriented box around the mesh"),
               ("CAPSULE", "Capsule", "A capsule along the mesh's longest axis")])
    obstacle_margin: FloatProperty(
        name="Margin", unit="LENGTH", default=0.1, min=0.0,
        description="Extra distance the vehicle keeps from this obstacle")

    # Constraint empties
    constraint_kind: EnumProperty(
        name="Constraint", default="NONE",
        description="What this empty asks of the vehicle",
        items=[("NONE", "None", "Not a constraint"),
               ("PASS_THROUGH", "Pass Through",
                "Pass within the empty's display size (times its scale) of it at its frame"),
               ("STOP", "Stop Here", "Be at the empty with zero velocity at its frame"),
               ("LAND", "Land / Dock Here",
                "Be at the empty, heading along its X axis, at rest, at its frame"),
               ("KEEP_OUT", "Keep Out", "Stay out of a sphere of the empty's display size (whole shot)"),
               ("SPEED_LIMIT", "Speed Limit", "Stay below a speed (whole shot)")])
    constraint_timing: EnumProperty(
        name="When", default="AUTO",
        description="The frame at which the constraint holds",
        items=[("AUTO", "Own Keyframes",
                "At each frame the empty is keyed at; unkeyed keep-out and speed limits hold for the whole shot"),
               ("FRAME", "Frame", "At the frame given below"),
               ("SHOT", "Whole Shot", "Over the whole shot (keep out, speed limit)")])
    constraint_frame: IntProperty(name="Frame", default=1,
                                  description="Frame at which the constraint holds (When: Frame)")
    speed_limit: FloatProperty(name="Speed Limit", unit="VELOCITY", default=10.0, min=0.0,
                               description="Largest speed allowed (scene units per second)")
    constraint_vehicle: PointerProperty(
        type=bpy.types.Object, name="Vehicle", poll=_not_self,
        description="The vehicle this constraint applies to; empty: every vehicle")

    # Stored result and bake state (written by addon.storage and addon.baking)
    trajectory_data: StringProperty(
        name="Trajectory Data", options={"HIDDEN"},
        description="The solved trajectory: compressed JSON, see addon.storage")
    trajectory_summary: StringProperty(name="Trajectory", description="What the stored trajectory is")
    has_trajectory: BoolProperty(name="Has Trajectory", default=False,
                                 description="A solved trajectory is stored with this object "
                                             "(kept by addon.storage)")
    original_action: PointerProperty(
        type=bpy.types.Action, name="Original Action",
        description="The action this object had before baking; Clear Bake restores it")
    original_slot: StringProperty(name="Original Slot",
                                  description="Identifier of the action slot assigned before baking")
    baked_action: PointerProperty(type=bpy.types.Action, name="Baked Action",
                                  description="The action made by the last bake")
    rest_location: FloatVectorProperty(
        name="Rest Location", size=3, options={"HIDDEN"},
        description="Location before the first bake; Clear Bake restores it")
    rest_rotation_quaternion: FloatVectorProperty(
        name="Rest Quaternion", size=4, default=(1.0, 0.0, 0.0, 0.0), options={"HIDDEN"},
        description="Quaternion rotation before the first bake; Clear Bake restores it")
    rest_rotation_euler: FloatVectorProperty(
        name="Rest Euler", size=3, options={"HIDDEN"},
        description="Euler rotation before the first bake; Clear Bake restores it")
    baked_by: PointerProperty(type=bpy.types.Object, name="Baked By",
                              description="The vehicle whose bake keyed this object")
    is_baked: BoolProperty(name="Is Baked", default=False,
                           description="This object plays a baked action; Clear Bake restores the original")
    node_grid: StringProperty(name="Node Grid", options={"HIDDEN"},
                              description="The nodes the baked motion was solved on (how many, how far apart)")


def _live_solve_changed(self, context) -> None:
    from . import live  # imported here: it needs the handlers, the settings do not
    live.toggled(self.id_data, self.live_solve)


class VehicleMotionSceneSettings(bpy.types.PropertyGroup):
    use_frame_range: BoolProperty(
        name="Own Frame Range", default=False,
        description="Use Start and End below instead of the shot's own range: Solve spans the vehicle's "
                    "first to last key, Simulate and secondary motion the scene's frame range")
    frame_start: IntProperty(name="Start", default=1, min=0,
                             description="Frame at which the motion starts (with Own Frame Range)")
    frame_end: IntProperty(name="End", default=250, min=0,
                           description="Frame at which the motion ends (with Own Frame Range)")
    node_spacing: EnumProperty(
        name="Node Spacing", default="AUTOMATIC",
        description="How many nodes Solve plans the motion at (the bake follows a smooth curve between them)",
        items=[
            ("AUTOMATIC", "Automatic", "A step chosen for the vehicle, the keys, the obstacles and the speed "
                                       "(core.shot.grid): far fewer nodes than frames on long shots"),
            ("PER_FRAME", "Per Frame", "Steps per Frame steps between two frames"),
            ("COUNT", "Node Count", "Node Count nodes over the shot, evenly spaced"),
        ])
    node_count: IntProperty(name="Node Count", default=121, min=3, soft_max=2001,
                            description="Nodes Solve plans the motion at, over the whole shot (Node Spacing "
                                        f"Node Count); at most {MAX_SOLVE_STEPS + 1}")
    steps_per_frame: IntProperty(name="Steps per Frame", default=2, min=1, max=1000,
                                 description="Integrator steps between two frames: Simulate and secondary motion, "
                                             "and Solve with Node Spacing Per Frame")
    integrator: EnumProperty(
        name="Integrator", default="VARIATIONAL",
        description="Time-stepping scheme",
        items=[
            ("VARIATIONAL", "Variational", "Lie group variational integrator (structure preserving)"),
            ("RK2", "RK2", "Explicit midpoint rule"),
            ("IMPLICIT_RK2", "Implicit RK2", "Implicit midpoint on the velocities"),
            ("RK4", "RK4", "Classical Runge–Kutta with quaternion orientation"),
            ("LIE_NEWMARK", "Lie–Newmark", "Newmark scheme on SE(3)"),
            ("LIE_EULER", "Lie–Euler", "Explicit Lie–Euler"),
        ])
    weight_effort: FloatProperty(name="Effort", default=1.0, min=0.0,
                                 description="Weight of the control effort Σ h|u|²")
    weight_duration: FloatProperty(name="Duration", default=0.0, min=0.0,
                                   description="Weight of the final time")
    weight_path_length: FloatProperty(name="Path Length", default=0.0, min=0.0,
                                      description="Weight of the distance travelled")
    weight_hazard: FloatProperty(name="Hazard", default=1.0, min=0.0,
                                 description="Weight of the obstacle hazard potential")
    weight_smoothness: FloatProperty(name="Smoothness", default=0.1, min=0.0,
                                     description="Weight of the control rate Σ |Δu|²/h")
    solver_backend: EnumProperty(
        name="Solver", default="AUTO", description="Optimiser used by Solve",
        items=[
            ("AUTO", "Automatic", "IPOPT when installed, else SciPy"),
            ("SCIPY", "SciPy", "scipy.optimize (bundled with the extension)"),
            ("IPOPT", "IPOPT", "Interior point solver through cyipopt, when installed"),
        ])
    max_iter: IntProperty(name="Max Iterations", default=500, min=1,
                          description="Largest number of optimiser iterations")
    tol: FloatProperty(name="Tolerance", default=1e-6, min=1e-12, max=1.0, precision=8,
                       description="Optimality and feasibility tolerance")
    time_limit_s: FloatProperty(name="Time Limit", default=60.0, min=0.1, unit="TIME_ABSOLUTE",
                                description="Wall-clock limit of one solve (s)")
    last_report: StringProperty(name="Last Report", description="Summary of the last solve or bake")
    key_tolerance: FloatProperty(
        name="Key Tolerance", unit="LENGTH", default=0.05, min=1e-4,
        description="How close the vehicle must pass the positions it is keyed at between start and goal")
    show_path: BoolProperty(name="Show Path", default=True,
                            description="Draw the stored trajectories of vehicles in the viewport")
    solve_running: BoolProperty(name="Solving", default=False, options=set(),
                                description="A solve is running in the background")
    solve_progress: FloatProperty(name="Progress", default=0.0, min=0.0, max=1.0, subtype="FACTOR",
                                  options=set(),
                                  description="Share of the solve's time budget used so far")
    solve_status: StringProperty(name="Solve Status", options=set(),
                                 description="What the running solve is doing")
    live_solve: BoolProperty(
        name="Live Solve", default=False, update=_live_solve_changed,
        description="Re-solve a solved vehicle, starting from its last solve, shortly after one of its keys, "
                    "constraint empties or obstacles changes: the path is stored and previewed, not baked; "
                    "turning Live Solve off bakes the vehicles it re-solved")
    ground: PointerProperty(
        name="Ground", type=bpy.types.Collection,
        description="The collection whose meshes (its child collections' too, modifiers applied) are the terrain "
                    "ground vehicles drive on; empty: the collections named Ground")
    water: PointerProperty(
        name="Water", type=bpy.types.Object, poll=lambda _settings, obj: obj.type == "MESH",
        description="The water surface boats float on, sampled at every frame of the shot (modifiers and "
                    "animation applied: an Ocean modifier's waves, or any animated mesh); empty: the meshes of "
                    "the collection named Water, else an object with an Ocean modifier, else calm water at z = 0")


def _after(annotations: dict, key: str, extra: dict) -> dict:
    items = list(annotations.items())
    at = [k for k, _ in items].index(key) + 1
    return dict(items[:at] + list(extra.items()) + items[at:])


VehicleMotionObjectSettings.__annotations__ = _after(VehicleMotionObjectSettings.__annotations__, "preset",
                                                     _parameter_settings())

classes = (VehicleMotionObjectSettings, VehicleMotionSceneSettings)


def attach() -> None:
    """Hang the settings on Object and Scene (after ``classes`` are registered)."""
    bpy.types.Object.vehicle_motion = PointerProperty(type=VehicleMotionObjectSettings)
    bpy.types.Scene.vehicle_motion = PointerProperty(type=VehicleMotionSceneSettings)


def detach() -> None:
    for owner in (bpy.types.Scene, bpy.types.Object):
        if "vehicle_motion" in owner.bl_rna.properties:
            del owner.vehicle_motion
