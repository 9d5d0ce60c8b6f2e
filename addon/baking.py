"""Trajectory → F-curves: the last step of scene → problem → solve → trajectory → F-curves.

``bake`` keys, at every frame, the vehicle object's location and rotation (in its own
rotation mode, in its parent's space) and the rotation of the child objects assigned to
its roles (wheels spin, knuckles steer, rotors spin and tilt, …) into NEW actions; the
actions the objects played before are kept and ``clear_bake`` puts them back. A trajectory
of a point off the object's origin (``stats["body_offset"]``: a car's rear axle in the body
frame) places the object at trajectory pose × offset⁻¹; a car's wheels listed in
``stats["wheels"]`` each spin along their own path (:func:`wheel_shapes`).

Between nodes the motion is evaluated on the group, velocities included (``core.shot.resample``: a
cubic Hermite curve in the Lie algebra of the relative motion for the body, C¹ at the nodes — a car's
rear axle rolls along its heading on the rolling curve —; the monotone cubic for wheel, steering and
rotor angles), at every frame and keyed sub-frame; a car's wheels spin along that baked path, so their
spin matches the distance they travel.

Everything is computed before the scene is touched, so an error leaves it unchanged; the
keys are written in bulk (``keyframe_points.add`` + ``foreach_set``) with LINEAR
interpolation, so the evaluated pose at a frame is the sample at that frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import bpy
import mathutils
import numpy as np

from . import action_compat
from .properties import CHILD_ROLES, CORE_VEHICLE_NAMES, vehicle_spec
from .ride import car_ride

GROUP = "Object Transforms"
_LINEAR = 1  # FCurve keyframe interpolation 'LINEAR' as stored (Bezier triple ipo)

_AXES = {
    "X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0),
    "NEG_X": (-1.0, 0.0, 0.0), "NEG_Y": (0.0, -1.0, 0.0), "NEG_Z": (0.0, 0.0, -1.0),
}

# What turns each part is its vehicle's spec (core.vehicles.spec.Part: the shape channels, the first one
# the trajectory has wins, a leading "-" negates it; whether it spins or tilts). Car: wheel_angle ψ is the
# rear wheels' rolling angle, steering_angle φ; "front_wheel_roll" is derived here (front wheels roll
# 1/cos φ as far); a trajectory that knows the car's wheels (stats["wheels"]) gives each wheel its own
# wheel_angle_<rear_left …> (wheel_shapes). Snakeboard: wheel_angle is the foot plates' angle φ (front
# +φ, rear −φ), rotor_angle the rider's twist. Helicopter: rotor spins, plus the main rotor's tilt.


def _error(message: str) -> Exception:
    from ..core.errors import VehicleMotionError
    return VehicleMotionError(message)


@dataclass
class BakeResult:
    frame_start: float
    frame_end: float
    objects: list[str] = field(default_factory=list)
    fcurves: int = 0
    warnings: list[str] = field(default_factory=list)
    grid: str = ""          # the trajectory's nodes: "97 nodes, 0.125 s apart" (node_grid)

    def span(self) -> str:
        from ..core.shot.frames import fmt_frame
        return f"{fmt_frame(self.frame_start)}–{fmt_frame(self.frame_end)}"

    def frames(self) -> str:
        """The frames baked, and the nodes they come from (the Solve report quotes it)."""
        return self.span() + (f" from {self.grid.replace(',', '')}" if self.grid else "")

    def message(self) -> str:
        text = (f"Baked frames {self.span()} onto {', '.join(self.objects)} "
                f"({self.fcurves} F-curves{'; from ' + self.grid if self.grid else ''})")
        return text + "".join(f"; {w}" for w in self.warnings)


def node_grid(trajectory) -> str:
    """'97 nodes, 0.125 s apart' of a trajectory (its largest step), with the spacing it was solved with."""
    t = np.asarray(trajectory.time, dtype=float)
    if len(t) < 2:
        return f"{len(t)} node"
    text = f"{len(t)} nodes, {float(np.max(np.diff(t))):.3g} s apart"
    spacing = trajectory.stats.get("node_spacing") if isinstance(trajectory.stats, dict) else None
    labels = {"AUTOMATIC": "Automatic", "PER_FRAME": "Per Frame", "COUNT": "Node Count"}
    return text + (f" ({labels[spacing]})" if spacing in labels else "")


@dataclass
class _Channels:
    """What one object gets: its values per frame for each (data_path, index)."""
    obj: bpy.types.Object
    curves: list[tuple[str, int, np.ndarray]]
    rest: tuple  # (location, quaternion, euler) to keep for clear_bake


# ----------------------------------------------------------------------------- sampling

def sample_times(trajectory, fps: float, times=None) -> np.ndarray:
    """Trajectory times of consecutive frames: every 1/fps from the first node to the last."""
    t = np.asarray(trajectory.time, dtype=float)
    if times is not None:
        times = np.asarray(times, dtype=float).reshape(-1)
        if times.size == 0 or not np.all(np.isfinite(times)):
            raise _error("bake: frame times must be finite and not empty")
        return times
    if not (fps > 0 and math.isfinite(fps)):
        raise _error(f"bake: frame rate must be positive, got {fps}")
    count = int(math.floor((t[-1] - t[0]) * fps + 1e-6)) + 1
    return t[0] + np.arange(count) / fps


@dataclass
class _Samples:
    """The trajectory on the sorted union of its node times and the bake's times (``core.shot.resample``),
    and where each bake time sits in it (``at``): derived channels (wheel spins) integrate over the union,
    so they never step over a node."""
    motion: object            # core.shot.resample.Samples on the union
    at: np.ndarray            # index of each bake time in the union

    @property
    def shape(self) -> dict:
        return self.motion.shape


def _sample(trajectory, times: np.ndarray) -> _Samples:
    from ..core.shot import resample
    t = np.asarray(trajectory.time, dtype=float)
    union = np.union1d(t, times)
    shape = {name: _unwrap_if_wrapped(np.asarray(series, dtype=float).reshape(-1))
             for name, series in trajectory.shape.items()}
    for name, series in shape.items():
        if len(series) != len(t):
            raise _error(f"bake: shape '{name}' has {len(series)} values, expected {len(t)}")
    nodes = _replace_shape(trajectory, shape)
    return _Samples(resample.sample(nodes, union), np.searchsorted(union, times))


def _replace_shape(trajectory, shape: dict):
    from dataclasses import replace
    return replace(trajectory, shape=shape)


def _unwrap_if_wrapped(angle: np.ndarray) -> np.ndarray:
    """A spin angle that was wrapped into [−π, π] made cumulative again; others unchanged."""
    if len(angle) > 1 and np.max(np.abs(angle)) <= math.pi + 1e-9 and np.any(np.abs(np.diff(angle)) > math.pi):
        return np.unwrap(angle)
    return angle


# ----------------------------------------------------------------------------- rotations

def _axis_quaternion(axis: str, angle: np.ndarray) -> np.ndarray:
    a = np.asarray(_AXES[axis])
    half = 0.5 * np.asarray(angle, dtype=float)
    return np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * a], axis=-1)


def _polar_rotation(m: np.ndarray) -> np.ndarray:
    """The rotation nearest to each 3×3 matrix (removes scale and shear)."""
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    flip = np.linalg.det(r) < 0
    if np.any(flip):
        u[flip, :, -1] *= -1
        r = u @ vt
    return r


def _delta_quaternion(obj) -> np.ndarray:
    if obj.rotation_mode == "QUATERNION":
        dq = obj.delta_rotation_quaternion.normalized()
    else:
        dq = mathutils.Euler(tuple(obj.delta_rotation_euler), obj.rotation_mode).to_quaternion()
    return np.array(tuple(dq), dtype=float)


def _rest(obj):
    """The object's own loc/rot before any bake (what clear_bake restores)."""
    s = obj.vehicle_motion
    if s.is_baked:
        return (tuple(s.rest_location), tuple(s.rest_rotation_quaternion), tuple(s.rest_rotation_euler))
    return (tuple(obj.location), tuple(obj.rotation_quaternion), tuple(obj.rotation_euler))


def _rest_quaternion(obj, rest) -> np.ndarray:
    if obj.rotation_mode == "QUATERNION":
        q = mathutils.Quaternion(rest[1]).normalized()
    else:
        q = mathutils.Euler(rest[2], obj.rotation_mode).to_quaternion()
    return np.array(tuple(q), dtype=float)


def _check_rotation_mode(obj) -> None:
    if obj.rotation_mode == "AXIS_ANGLE":
        raise _error(f"cannot bake '{obj.name}': its rotation mode is Axis Angle; "
                     "set it to Quaternion or an Euler order")


def _rotation_curves(obj, q: np.ndarray, start) -> list[tuple[str, int, np.ndarray]]:
    """F-curve values for the rotation quaternions q (K, 4) in obj's rotation mode."""
    from ..core.lie import quaternion
    if obj.rotation_mode == "QUATERNION":
        start_q = np.array(start[1], dtype=float)
        q = quaternion.make_continuous(q)
        if np.dot(q[0], start_q) < 0:
            q = -q
        return [("rotation_quaternion", j, q[:, j]) for j in range(4)]
    order = obj.rotation_mode
    compat = mathutils.Euler(start[2], order)
    flat: list[float] = []
    extend, to_q = flat.extend, mathutils.Quaternion
    for row in q.tolist():  # each frame's Euler closest to the previous one (no 2π jumps)
        compat = to_q(row).to_euler(order, compat)
        extend(compat)
    euler = np.array(flat).reshape(-1, 3)
    return [("rotation_euler", j, euler[:, j]) for j in range(3)]


# ----------------------------------------------------------------------------- the body

def _is_animated(ob) -> bool:
    anim = ob.animation_data
    if anim is not None and (anim.action is not None or len(anim.drivers) or len(anim.nla_tracks)):
        return True
    return any(not c.mute for c in ob.constraints)


def _parent_space(obj, scene, frames: np.ndarray) -> np.ndarray | None:
    """World matrix of obj's parent space (parent world ∘ parent inverse ∘ bone, …) per frame,
    shape (K, 4, 4) or (1, 4, 4) when it does not move; None without a parent."""
    if obj.parent is None:
        return None
    if any(not c.mute for c in obj.constraints):
        if obj.parent_type != "OBJECT":
            raise _error(f"cannot bake '{obj.name}': it has both constraints and a "
                         f"{obj.parent_type.lower()} parent")

        def space(ob):
            return ob.parent.matrix_world @ ob.matrix_parent_inverse
    else:
        def space(ob):
            return ob.matrix_world @ ob.matrix_basis.inverted_safe()

    chain, ob = [], obj.parent
    while ob is not None:
        chain.append(ob)
        ob = ob.parent
    if not any(_is_animated(a) for a in chain):
        depsgraph = bpy.context.evaluated_depsgraph_get()
        return np.array(space(obj.evaluated_get(depsgraph)))[None]
    out = np.empty((len(frames), 4, 4))
    frame, subframe = scene.frame_current, scene.frame_subframe
    try:
        for k, f in enumerate(frames):
            whole = math.floor(f)
            scene.frame_set(int(whole), subframe=float(f - whole))
            out[k] = np.array(space(obj))
    finally:
        scene.frame_set(frame, subframe=subframe)
    bad = np.flatnonzero(~np.isfinite(out).all(axis=(1, 2)))
    if bad.size:
        from ..core.shot.frames import fmt_frame
        raise _error(f"cannot bake '{obj.name}': its parent '{obj.parent.name}' has a transform that is not a "
                     f"finite number at frame {fmt_frame(float(frames[bad[0]]))}: fix the parent's keys")
    return out


def _body_channels(obj, scene, trajectory, samples: _Samples, frames, pose=None) -> _Channels:
    """The object's location and rotation at the bake's times; ``pose``: (positions, rotations) of the
    trajectory's point there instead of the trajectory's own (a car's ride over the ground)."""
    from ..core.lie import quaternion
    _check_rotation_mode(obj)
    if pose is None:
        position = samples.motion.position[samples.at]
        rotation = samples.motion.rotation[samples.at]
    else:
        position, rotation = pose

    parent = _parent_space(obj, scene, frames)
    offset = _body_offset(trajectory)
    if offset is not None:  # the trajectory is of a point off the origin (a car's rear axle): put the object back
        position = position - rotation @ offset
    if parent is not None:
        inv = np.linalg.inv(parent)
        location = np.einsum("kij,kj->ki", inv[:, :3, :3], position) + inv[:, :3, 3]
        rotation = _polar_rotation(inv[:, :3, :3] @ rotation)
    else:
        location = position
    # matrix_basis = T(location + delta_location) · R_delta · R_rotation · S
    location = location - np.array(obj.delta_location)
    dq = _delta_quaternion(obj)
    dq_inv = dq * np.array([1.0, -1.0, -1.0, -1.0])
    q = quaternion.multiply(dq_inv, quaternion.from_matrix(rotation))
    rest = _rest(obj)
    curves = [("location", j, location[:, j]) for j in range(3)]
    curves += _rotation_curves(obj, q, rest)
    return _Channels(obj, curves, rest)


def _body_offset(trajectory) -> np.ndarray | None:
    """``stats["body_offset"]``: the point the trajectory follows in the body frame from the object's
    origin (scene units; a car's rear axle, core.shot.car_geometry); None when it is the origin."""
    value = trajectory.stats.get("body_offset") if isinstance(trajectory.stats, dict) else None
    if value is None:
        return None
    try:
        offset = np.asarray(value, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise _error(f"bake: the trajectory's body offset {value!r} is not three numbers") from None
    if not np.all(np.isfinite(offset)):
        raise _error("bake: the trajectory's body offset has NaN or infinite values")
    return offset if np.any(offset) else None


# ----------------------------------------------------------------------------- children

def wheel_shapes(vehicle_type: str, trajectory, samples=None, spins: dict | None = None) -> dict:
    """The trajectory's shape channels, plus — for a car whose trajectory knows its wheels
    (``stats["wheels"]``: each wheel's centre from the rear axle, radius, spin sign, steered) — each
    wheel's own spin ``wheel_angle_<rear_left …>`` along its own path (core.shot.car_geometry.wheel_spins:
    left and right differ in turns, front wheels roll along their steered heading), starting from
    ``wheel_angle``'s first value. ``wheel_angle`` itself (the rear axle's spin) is left as it is.
    At the nodes; with ``samples`` (core.shot.resample.Samples), at their times, along the baked path.
    ``spins``: role → each wheel's spin from 0 at those times, given (a car's ride over the ground,
    addon.ride), instead of the spins along the planar path."""
    from ..core.shot.resample import node_heading
    if samples is None:
        shape, position, heading = dict(trajectory.shape), trajectory.position, node_heading(trajectory)
    else:
        shape, position, heading = dict(samples.shape), samples.position, samples.heading
    if spins is None:
        spins = _planar_spins(vehicle_type, trajectory, shape, position, heading)
    start = float(np.asarray(shape["wheel_angle"], dtype=float).reshape(-1)[0]) if "wheel_angle" in shape else 0.0
    for role, angle in spins.items():
        shape.setdefault("wheel_angle_" + role[len("wheel_"):], start + angle)
    return shape


def _planar_spins(vehicle_type: str, trajectory, shape: dict, position, heading) -> dict:
    """Each wheel's spin along its own planar path (core.shot.car_geometry.wheel_spins), for a car whose
    trajectory knows its wheels; else none."""
    wheels = trajectory.stats.get("wheels") if isinstance(trajectory.stats, dict) else None
    if vehicle_type != "CAR" or not wheels:
        return {}
    from ..core.shot.car_geometry import wheel_spins
    try:
        tables = {role: {"centre": [float(x) for x in w["centre"]][:3], "radius": float(w["radius"]),
                         "spin_sign": float(w.get("spin_sign", 1.0)), "steered": bool(w.get("steered", False))}
                  for role, w in dict(wheels).items() if role in CHILD_ROLES}
    except (TypeError, ValueError, KeyError, AttributeError):
        raise _error("bake: the trajectory's wheels (stats) are damaged") from None
    for role, w in tables.items():
        if not (w["radius"] > 0 and math.isfinite(w["radius"])) or not all(map(math.isfinite, w["centre"])) \
                or len(w["centre"]) < 2:
            raise _error(f"bake: the trajectory's {role.replace('_', ' ')} has a bad centre or radius")
    steering = shape.get("steering_angle")
    if steering is not None and len(np.asarray(steering).reshape(-1)) != len(heading):
        steering = None
    return wheel_spins(position, heading, steering, tables)


def _shape_series(shape: dict, name: str) -> np.ndarray | None:
    sign = 1.0
    if name.startswith("-"):
        sign, name = -1.0, name[1:]
    if name == "front_wheel_roll":
        return _front_wheel_roll(shape)
    if name not in shape:
        return None
    return sign * np.asarray(shape[name], dtype=float).reshape(-1)


def _front_wheel_roll(shape: dict) -> np.ndarray | None:
    """Front wheels of the bicycle model roll 1/cos φ as far as the rear wheel does."""
    if "wheel_angle" not in shape:
        return None
    psi = np.asarray(shape["wheel_angle"], dtype=float).reshape(-1)
    if "steering_angle" not in shape or len(psi) < 2:
        return psi
    phi = np.asarray(shape["steering_angle"], dtype=float).reshape(-1)
    mid = 0.5 * (phi[1:] + phi[:-1])
    steps = np.diff(_unwrap_if_wrapped(psi)) / np.maximum(np.cos(mid), 1e-3)
    return psi[0] + np.concatenate([[0.0], np.cumsum(steps)])


def _node_series(shape: dict, name: str, n_nodes: int) -> np.ndarray:
    """shape[name] checked to have one value a node; zeros when absent."""
    if name not in shape:
        return np.zeros(n_nodes)
    series = np.asarray(shape[name], dtype=float).reshape(-1)
    if len(series) != n_nodes:
        raise _error(f"bake: shape '{name}' has {len(series)} values, expected {n_nodes}")
    return series


def _child_angle(part, shape: dict, n_nodes: int) -> np.ndarray | None:
    for name in part.channels:
        series = _shape_series(shape, name)
        if series is not None:
            if len(series) != n_nodes:
                raise _error(f"bake: shape '{name.lstrip('-')}' has {len(series)} values, "
                             f"expected {n_nodes}")
            return _unwrap_if_wrapped(series) if part.spins else series
    return None


def _child_channels(vehicle, part, child, shape: dict, at: np.ndarray) -> _Channels | None:
    """The child's rotation at the bake's times: ``shape`` holds the channels on the sample union
    (:class:`_Samples`), ``at`` each bake time's place in it."""
    from ..core.lie import quaternion
    settings = vehicle.vehicle_motion
    n = len(next(iter(shape.values()))) if shape else 0
    angle = _child_angle(part, shape, n)
    tilt = None
    if part.tilts_with and any(name in shape for name in part.tilts_with):
        pitch, roll = (_node_series(shape, name, n)[at] for name in part.tilts_with)
        tilt = quaternion.multiply(_axis_quaternion("Y", pitch), _axis_quaternion("X", roll))
    if angle is None and tilt is None:
        return None
    _check_rotation_mode(child)
    rest = _rest(child)
    k = len(at)
    q = np.repeat(_rest_quaternion(child, rest)[None], k, axis=0)
    if angle is not None:
        axis = getattr(settings, CHILD_ROLES[part.role][1])
        q = quaternion.multiply(q, _axis_quaternion(axis, angle[at]))
    if tilt is not None:  # about the parent's (body) axes: R = Δ⁻¹ · tilt · Δ · R_rest · spin
        dq = _delta_quaternion(child)
        dq_inv = dq * np.array([1.0, -1.0, -1.0, -1.0])
        q = quaternion.multiply(quaternion.multiply(quaternion.multiply(dq_inv, tilt), dq), q)
    return _Channels(child, _rotation_curves(child, q, rest), rest)


def _with_hub_move(vehicle, child, channels: _Channels | None, move: np.ndarray) -> _Channels:
    """Add the wheel's location: its rest location plus its hub's move in the car's frame (scene units,
    (K, 3)), taken through the car's scale and the child's parent inverse into the child's location."""
    rest = channels.rest if channels is not None else _rest(child)
    scale = np.asarray(vehicle.scale, dtype=float)
    if np.any(np.abs(scale) < 1e-12):
        raise _error(f"bake: '{vehicle.name}' has a zero scale: its wheels cannot be placed")
    inverse = np.linalg.inv(np.asarray(child.matrix_parent_inverse, dtype=float)[:3, :3])
    local = np.asarray(rest[0], dtype=float) + (move / scale) @ inverse.T
    curves = [("location", j, local[:, j]) for j in range(3)]
    if channels is None:
        return _Channels(child, curves, rest)
    return _Channels(child, curves + channels.curves, rest)


def _vehicle_type(obj, trajectory) -> str:
    """The object's vehicle type; when it has none, the trajectory's."""
    vehicle_type = obj.vehicle_motion.vehicle_type
    if vehicle_type == "NONE":
        by_name = {v: k for k, v in CORE_VEHICLE_NAMES.items()}
        vehicle_type = by_name.get(trajectory.vehicle, "NONE")
    return vehicle_type


# ----------------------------------------------------------------------------- writing

def _check(trajectory) -> None:
    t = np.asarray(trajectory.time, dtype=float)
    n = len(t)
    if t.ndim != 1 or n == 0:
        raise _error("bake: the trajectory has no nodes")
    for name, width in (("position", 3), ("orientation", 4)):
        a = np.asarray(getattr(trajectory, name), dtype=float)
        if a.shape != (n, width):
            raise _error(f"bake: trajectory {name} has shape {a.shape}, expected ({n}, {width})")
        if not np.all(np.isfinite(a)):
            raise _error(f"bake: trajectory {name} has NaN or infinite values")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise _error("bake: trajectory times must be finite and increasing")
    for name, series in trajectory.shape.items():
        if not np.all(np.isfinite(np.asarray(series, dtype=float))):
            raise _error(f"bake: shape '{name}' has NaN or infinite values")


def _write_fcurve(ref, data_path: str, index: int, frames: np.ndarray, values: np.ndarray) -> None:
    fcurve = action_compat.ensure_fcurve(ref, data_path, index, GROUP)
    points = fcurve.keyframe_points
    n = len(frames)
    if len(points):
        points.clear()
    points.add(n)
    co = np.empty(2 * n, dtype=np.float32)
    co[0::2] = frames
    co[1::2] = values
    points.foreach_set("co", co)
    points.foreach_set("interpolation", np.full(n, _LINEAR, dtype=np.int32))
    fcurve.update()


def _baked_by(vehicle) -> list:
    """Objects (other than vehicle) whose bake belongs to vehicle."""
    return [ob for ob in bpy.data.objects
            if ob is not vehicle and ob.vehicle_motion.is_baked and ob.vehicle_motion.baked_by == vehicle]


def _restore(obj) -> None:
    """Put back obj's pre-bake action and pose and delete its baked action."""
    s = obj.vehicle_motion
    baked, original = s.baked_action, s.original_action
    if original is not None:
        slot = action_compat.find_slot(original, s.original_slot)
        action_compat.assign(obj, action_compat.ActionRef(original, slot))
    else:
        action_compat.assign(obj, None)
    obj.location = s.rest_location
    obj.rotation_quaternion = s.rest_rotation_quaternion
    obj.rotation_euler = s.rest_rotation_euler
    s.original_action = None
    s.original_slot = ""
    s.baked_action = None
    s.baked_by = None
    s.is_baked = False
    if baked is not None:
        action_compat.remove_action(baked)


def _new_action(channels: _Channels, frames: np.ndarray):
    obj = channels.obj
    ref = action_compat.new_action(f"{obj.name} Vehicle Motion", obj)
    try:
        for data_path, index, values in channels.curves:
            _write_fcurve(ref, data_path, index, frames, values)
    except Exception:
        action_compat.remove_action(ref.action)
        raise
    return ref


def _commit(vehicle, channels: _Channels, ref) -> None:
    """Make channels.obj play its new action, keeping what clear_bake needs."""
    obj = channels.obj
    s = obj.vehicle_motion
    if s.is_baked:
        old = s.baked_action
        s.baked_action = None
        if old is not None:
            action_compat.remove_action(old)
    else:
        previous = action_compat.assigned(obj)
        s.original_action = None if previous is None else previous.action
        s.original_slot = action_compat.slot_identifier(previous)
        s.rest_location, s.rest_rotation_quaternion, s.rest_rotation_euler = channels.rest
    action_compat.assign(obj, ref)
    s.baked_action = ref.action
    s.baked_by = None if obj is vehicle else vehicle
    s.is_baked = True


def bake(obj, trajectory, *, frame_start: float = 1, fps: float = 24.0, times=None, frames=None,
         scene=None, parts=()) -> BakeResult:
    """Key ``trajectory`` onto ``obj`` (and its role children) from ``frame_start``.

    Frame ``frame_start + k`` shows the trajectory at ``times[k]``; by default
    ``times = time[0] + k / fps`` up to the last node. With ``frames`` (any frames, sub-frames
    included, e.g. ``core.shot.bake_frames``), frame f shows the trajectory at time[0] +
    (f − frame_start) / fps. ``parts``: more channels (e.g. of :func:`rotation_channels`, one
    value a frame) baked with them, as children of ``obj``. Raises VehicleMotionError, with the
    scene unchanged, when something cannot be baked.
    """
    scene = scene or bpy.context.scene
    _check(trajectory)
    if frames is not None:
        frames = np.asarray(frames, dtype=float).reshape(-1)
        t0, t1 = float(trajectory.time[0]), float(trajectory.time[-1])
        times = np.clip(t0 + (frames - frame_start) / fps, t0, t1)  # the ends within round-off of a node
    times = sample_times(trajectory, fps, times)
    if frames is None:
        frames = frame_start + np.arange(len(times), dtype=float)
    samples = _sample(trajectory, times)

    vehicle_type = _vehicle_type(obj, trajectory)
    ride_warnings: list[str] = []
    ride = car_ride(obj, scene, trajectory, samples.motion.time, times, fps, ride_warnings) \
        if vehicle_type == "CAR" else None
    pose = None if ride is None else (ride.position, ride.rotation)
    plan = [_body_channels(obj, scene, trajectory, samples, frames, pose)]
    seen = {obj.name}
    # on a Ground each wheel rolls along its own 3D contact path (core.terrain.ride)
    shape = wheel_shapes(vehicle_type, trajectory, samples.motion, None if ride is None else ride.spins)
    spec = vehicle_spec(vehicle_type)
    for part in spec.parts if spec is not None else ():
        child = getattr(obj.vehicle_motion, part.role)
        if child is None or child.name in seen:
            continue
        channels = _child_channels(obj, part, child, shape, samples.at)
        if ride is not None and part.role in ride.hub_moves:
            channels = _with_hub_move(obj, child, channels, ride.hub_moves[part.role])
        if channels is not None:
            plan.append(channels)
            seen.add(child.name)
    for channels in parts:
        if channels.obj.name in seen:
            raise _error(f"bake: '{channels.obj.name}' is keyed twice (a part and a role of '{obj.name}')")
        plan.append(channels)
        seen.add(channels.obj.name)

    result = BakeResult(float(frames[0]), float(frames[-1]), grid=node_grid(trajectory))
    result.warnings.extend(ride_warnings)
    result.warnings.extend(overrides(plan))
    refs = _new_actions(plan, frames)
    for ob in _baked_by(obj):
        if ob.name not in seen:
            _restore(ob)
    _commit_plan(obj, plan, refs, result)
    obj.vehicle_motion.node_grid = result.grid
    scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    return result


_CHANNEL_LABELS = {"location": "Location", "rotation_quaternion": "Quaternion Rotation",
                   "rotation_euler": "Euler Rotation"}


def overrides(plan: list) -> list[str]:
    """Warnings for what would hide a bake: drivers on a channel it writes (a driver wins over the
    action) and object constraints on an object it keys (they move the baked pose)."""
    out = []
    for channels in plan:
        ob = channels.obj
        written = {(path, index) for path, index, _ in channels.curves}
        anim = ob.animation_data
        driven = sorted({(fc.data_path, fc.array_index) for fc in (anim.drivers if anim else ())
                         if not fc.mute and (fc.data_path, fc.array_index) in written})
        for path, index in driven:
            label = _CHANNEL_LABELS.get(path, path)
            axis = ("WXYZ" if path == "rotation_quaternion" else "XYZ")[index] if index < 4 else str(index)
            out.append(f"a driver on '{ob.name}' {axis} {label} overrides the baked motion: mute or remove it")
        if any(not c.mute for c in ob.constraints):
            out.append(f"constraints on '{ob.name}' change the baked pose")
    return out


def _new_actions(plan: list, frames: np.ndarray) -> list:
    """One new, complete action per channels of ``plan``, or none at all (so that nothing in
    the scene changes before every action is complete)."""
    refs: list = []
    try:
        for channels in plan:
            refs.append(_new_action(channels, frames))
    except Exception:
        for ref in refs:
            action_compat.remove_action(ref.action)
        raise
    return refs


def _commit_plan(owner, plan: list, refs: list, result: BakeResult) -> None:
    """Assign each new action to its object, as baked by ``owner``; count them in ``result``."""
    for channels, ref in zip(plan, refs):
        _commit(owner, channels, ref)
        result.objects.append(channels.obj.name)
        result.fcurves += len(channels.curves)


def clear_bake(obj) -> list[str]:
    """Undo ``bake`` on obj and the children it keyed; names of the objects restored."""
    restored = []
    for ob in [obj, *_baked_by(obj)]:
        if ob.vehicle_motion.is_baked:
            _restore(ob)
            restored.append(ob.name)
    if not restored:
        raise _error(f"'{obj.name}' has no baked motion to clear")
    return restored


def rotation_channels(obj, joint_q: np.ndarray) -> _Channels:
    """Channels turning ``obj`` from its rest rotation by ``joint_q`` (K, 4), quaternions about
    its own local axes (rotation = rest ∘ joint), one a frame; for :func:`bake` or :func:`bake_channels`."""
    from ..core.lie import quaternion
    _check_rotation_mode(obj)
    rest = _rest(obj)
    q = quaternion.multiply(_rest_quaternion(obj, rest)[None], np.asarray(joint_q, dtype=float))
    return _Channels(obj, _rotation_curves(obj, q, rest), rest)


def bake_channels(owner, plan: list, frames, scene=None) -> BakeResult:
    """Key each channels' object at ``frames`` into a new action, as baked by ``owner`` (whose own
    animation is not touched): every action is complete before anything in the scene changes."""
    scene = scene or bpy.context.scene
    frames = np.asarray(frames, dtype=float)
    refs = _new_actions(plan, frames)
    result = BakeResult(float(frames[0]), float(frames[-1]), warnings=overrides(plan))
    _commit_plan(owner, plan, refs, result)
    scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    return result


def trajectory_frames(trajectory, scene) -> tuple[float, float, np.ndarray]:
    """(frame of time 0, frames a second, frames to key) of a trajectory: the frame range and frame rate
    it was solved or simulated for (its stats), else the scene's rate from its Vehicle Motion start."""
    from ..core.shot.frames import bake_frames
    from .scene_settings import frame_rate
    stats = trajectory.stats
    fps = float(stats.get("fps") or frame_rate(scene))
    start = float(stats.get("frame_start", scene.vehicle_motion.frame_start))
    t = np.asarray(trajectory.time, dtype=float)
    end = start + (t[-1] - t[0]) * fps  # a run that stopped early (blew up) ends where it stopped
    end = min(end, float(stats.get("frame_end", end)))
    return start, fps, bake_frames(start, end, stats.get("key_frames", ()))


def bake_trajectory(obj, trajectory, scene=None, parts=()) -> BakeResult:
    """Bake ``trajectory`` at the frames and frame rate it was made for (:func:`trajectory_frames`)."""
    scene = scene or bpy.context.scene
    start, fps, frames = trajectory_frames(trajectory, scene)
    return bake(obj, trajectory, frame_start=start, fps=fps, frames=frames, scene=scene, parts=parts)


def bake_stored(obj, scene=None) -> BakeResult:
    """Bake the trajectory stored with ``obj`` at the frames it was made for."""
    from . import storage
    scene = scene or bpy.context.scene
    return bake_trajectory(obj, storage.load(obj), scene)
