"""Scene ↔ parts: read a vehicle's articulated parts (``Object.vehicle_motion_parts``) as
``core.parts.Part`` data, and turn joint angles into baked rotations of the part objects.

Geometry is read at rest, at the start frame: the vehicle's evaluated world matrix, then every
part and end object placed below it by its parent inverse and its own rest channels (the
values before any bake, as ``baking`` keeps them), so a second run reads the same rest pose
as the first. Lengths are world distances times ``unit_settings.scale_length`` (metres);
rotations are the polar parts of the matrices (object scale removed). A part sits below the
vehicle or below another part (its Blender parent or an ancestor; objects in between move
rigidly with it), so its baked local rotation rest ∘ R_joint(q) composes with its parent's
motion exactly as the core model does (``core.parts.spec`` eq. 1).

Every problem is a :class:`PartsError`: one line naming the vehicle, the part or the frame.
Nothing here changes the scene (the current frame is put back).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import bpy
import mathutils
import numpy as np

from ..core.errors import VehicleMotionError
from .articulation_properties import AXIS_NAMES
from .properties import CHILD_ROLES

SIMILARITY_TOL = 1e-6


class PartsError(VehicleMotionError):
    """The parts cannot be simulated; the message names the object or frame."""


@dataclass
class PartsReading:
    """The parts of one vehicle, ready for core (plain data) plus the objects they came from."""
    vehicle: str
    parts: list                        # core.parts.Part, in the settings' order
    objects: dict[str, str]            # part name → object name (the same here)
    ends: dict[str, str]               # part name → end object name
    scale: float                       # metres per Blender unit
    rest_world: dict[str, np.ndarray]  # object name → rest world matrix at the start frame (4×4)


def scale_length(scene) -> float:
    s = float(scene.unit_settings.scale_length)
    return s if s > 0 and math.isfinite(s) else 1.0


def is_animated(obj) -> bool:
    """Does obj (or an ancestor) move: an action, drivers, NLA or constraints."""
    from .baking import _is_animated
    ob = obj
    while ob is not None:
        if _is_animated(ob):
            return True
        ob = ob.parent
    return False


def _rest_basis(obj) -> np.ndarray:
    """matrix_basis from the object's rest channels (what Clear Bake restores)."""
    from .baking import _rest
    loc, quat, euler = _rest(obj)
    mode = obj.rotation_mode
    if mode == "AXIS_ANGLE":
        raise PartsError(f"part '{obj.name}' uses the Axis Angle rotation mode: set it to Quaternion or an Euler order")
    if mode == "QUATERNION":
        rot = mathutils.Quaternion(quat).normalized()
        delta = mathutils.Quaternion(obj.delta_rotation_quaternion).normalized()
    else:
        rot = mathutils.Euler(euler, mode).to_quaternion()
        delta = mathutils.Euler(obj.delta_rotation_euler, mode).to_quaternion()
    m = np.eye(4)
    m[:3, :3] = np.array((delta @ rot).to_matrix()) * (np.array(obj.scale) * np.array(obj.delta_scale))[None, :]
    m[:3, 3] = np.array(loc) + np.array(obj.delta_location)
    return m


def rotation_of(obj, world: np.ndarray) -> np.ndarray:
    """The rotation of a rest world matrix with obj's own scale removed; refuses shear (a
    non-uniformly scaled parent) and mirroring."""
    s = np.array(obj.scale) * np.array(obj.delta_scale)
    if np.any(np.abs(s) < 1e-12):
        raise PartsError(f"'{obj.name}' has zero scale")
    L = world[:3, :3] / s[None, :]
    G = L.T @ L
    sigma2 = float(np.trace(G)) / 3.0
    if sigma2 <= 0 or np.max(np.abs(G - sigma2 * np.eye(3))) > SIMILARITY_TOL * sigma2 or np.linalg.det(L) <= 0:
        raise PartsError(f"'{obj.name}' is sheared or mirrored by a non-uniformly or negatively scaled parent; "
                         "apply the parent's scale")
    return L / math.sqrt(sigma2)


def _at_frame(scene, frame: int, fn):
    current, subframe = scene.frame_current, scene.frame_subframe
    try:
        scene.frame_set(int(frame))
        return fn()
    finally:
        scene.frame_set(current, subframe=subframe)


def vehicle_matrix(scene, vehicle, frame: int) -> np.ndarray:
    return _at_frame(scene, frame, lambda: np.array(vehicle.matrix_world))


def _descends(obj, ancestor) -> bool:
    ob = obj.parent
    while ob is not None:
        if ob == ancestor:
            return True
        ob = ob.parent
    return False


def _role_of(vehicle, obj) -> str | None:
    s = vehicle.vehicle_motion
    for role, (label, _) in CHILD_ROLES.items():
        if getattr(s, role, None) == obj:
            return label
    return None


def read_parts(scene, vehicle, frame: int | None = None) -> PartsReading:
    """The parts of ``vehicle`` at rest at ``frame`` (default: the first frame Simulate spans)."""
    from ..core.errors import ScenarioError
    from ..core.lie import quaternion
    from ..core.parts import Part, validate
    settings = vehicle.vehicle_motion_parts
    if not len(settings.parts):
        raise PartsError(f"'{vehicle.name}' has no parts: add them under Vehicle › Articulated Parts")
    if frame is None:
        from .scene_settings import simulation_range
        frame = simulation_range(scene)[0]
    entries, seen = [], {}
    for i, e in enumerate(settings.parts, start=1):
        obj = e.object
        if obj is None:
            raise PartsError(f"'{vehicle.name}' part #{i} has no object: pick the part's object")
        if scene.objects.get(obj.name) != obj:
            raise PartsError(f"part '{obj.name}' is not in the scene '{scene.name}'")
        if obj == vehicle:
            raise PartsError(f"part #{i} is the vehicle '{vehicle.name}' itself")
        if obj.name in seen:
            raise PartsError(f"part '{obj.name}' is listed twice")
        role = _role_of(vehicle, obj)
        if role is not None:
            raise PartsError(f"part '{obj.name}' is already the {role.lower()} of '{vehicle.name}'")
        seen[obj.name] = e
        entries.append(e)
    holder = {}   # part → the vehicle or the part it hangs from (its nearest such ancestor)
    for e in entries:
        obj = e.object
        ob = obj.parent
        while ob is not None and ob != vehicle and ob.name not in seen:
            ob = ob.parent
        if ob is None:
            raise PartsError(f"part '{obj.name}' must be below '{vehicle.name}' (a child of it or of another part)")
        if obj.parent_type != "OBJECT":
            raise PartsError(f"part '{obj.name}' has a {obj.parent_type.lower()} parent; parent it to the object")
        holder[obj.name] = ob
    vehicle_world = vehicle_matrix(scene, vehicle, frame)
    memo: dict[str, np.ndarray] = {vehicle.name: vehicle_world}

    def rest_world(ob) -> np.ndarray:
        if ob.name not in memo:
            if ob.parent is None:
                raise PartsError(f"'{ob.name}' is not below '{vehicle.name}'")
            memo[ob.name] = rest_world(ob.parent) @ np.array(ob.matrix_parent_inverse) @ _rest_basis(ob)
        return memo[ob.name]

    unit = scale_length(scene)
    rotations = {vehicle.name: rotation_of(vehicle, vehicle_world)}
    parts, ends = [], {}
    for e in entries:
        obj = e.object
        end = e.end
        if end is None:
            children = list(obj.children)
            if len(children) != 1:
                raise PartsError(f"part '{obj.name}' has no End object: set End (the next link, the load or the "
                                 f"axle){'' if children else ', or give the part a child'}")
            end = children[0]
        elif scene.objects.get(end.name) != end:
            raise PartsError(f"the end '{end.name}' of part '{obj.name}' is not in the scene")
        if not _descends(end, obj):
            raise PartsError(f"the end '{end.name}' of part '{obj.name}' must be a child of it")
        parent = holder[obj.name]
        for ob in (parent, obj):
            if ob.name not in rotations:
                rotations[ob.name] = rotation_of(ob, rest_world(ob))
        Rp, xp = rotations[parent.name], rest_world(parent)[:3, 3]
        Ro, xo = rotations[obj.name], rest_world(obj)[:3, 3]
        xe = rest_world(end)[:3, 3]
        parts.append(Part(
            name=obj.name, parent=None if parent == vehicle else parent.name, joint=e.joint,
            position=tuple(Rp.T @ (xo - xp) * unit), orientation=tuple(quaternion.from_matrix(Rp.T @ Ro)),
            end=tuple(Ro.T @ (xe - xo) * unit), mass=float(e.mass), inertia=tuple(float(x) for x in e.inertia),
            axis=AXIS_NAMES[e.axis], damping=float(e.damping), grip=float(e.grip), rate=float(e.rate)))
        ends[obj.name] = end.name
    try:
        validate(parts)
    except ScenarioError as exc:
        raise PartsError(str(exc)) from None
    return PartsReading(vehicle.name, parts, {p.name: p.name for p in parts}, ends, unit, memo)


def joint_channels(reading: PartsReading, angles: dict[str, np.ndarray]) -> list:
    """Baking channels of every part object: rest ∘ R_joint(angles) at each frame (angles (K, k))."""
    from ..core.parts import joint_quaternions
    from .baking import rotation_channels
    out = []
    for part in reading.parts:
        obj = bpy.data.objects[reading.objects[part.name]]
        try:
            out.append(rotation_channels(obj, joint_quaternions(part, angles[part.name])))
        except VehicleMotionError as exc:
            raise PartsError(str(exc)) from None
    return out
