"""Running the add-on's operators in a test and reading what they left: select the vehicle, solve,
load the stored trajectory, hold a solve at an iteration to cancel it, and check a refusal changed
nothing. Needs the add-on registered (conftest.py's session fixture ``addon``).
"""
from __future__ import annotations

import threading
import time

import bpy
import numpy as np
import pytest


def make_active(obj) -> None:
    """``obj`` selected and active, nothing else selected: what the operators act on."""
    view_layer = bpy.context.view_layer
    for other in view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj


def solve_active(scene, obj) -> str:
    """Solve Trajectory on ``obj`` with the scipy backend; the report (asserting the operator finished)."""
    scene.vehicle_motion.solver_backend = "SCIPY"
    bpy.context.view_layer.objects.active = obj
    result = bpy.ops.vehicle_motion.solve_trajectory()
    report = scene.vehicle_motion.last_report
    assert result == {"FINISHED"}, report
    return report


def stored(obj):
    """The trajectory stored with ``obj``."""
    from vehicle_motion.addon import storage
    return storage.load(obj)


def hold_at_iteration(job, k: int) -> threading.Event:
    """Make the solve worker of ``job`` (not yet started) wait at its solver iteration ``k`` until the
    test cancels it (at most 20 s): the cancel then lands in a solve still running, however fast it
    is. Returns the event set when iteration ``k`` is reached."""
    reached = threading.Event()
    report = job._iteration

    def held(i: int, violation: float) -> None:
        report(i, violation)
        if i >= k:
            reached.set()
            t0 = time.perf_counter()
            while not job._cancel.is_set() and time.perf_counter() - t0 < 20.0:
                time.sleep(0.005)

    job._iteration = held
    return reached


def _numbers(values) -> list[str]:
    """Numbers as text, so that a nan the bad scene holds compares equal to itself."""
    return [repr(float(x)) for x in np.round(np.asarray(values, dtype=float), 9).reshape(-1)]


def snapshot() -> dict:
    """Everything a solve could change: poses, actions, stored and bake state, the frame."""
    scene = bpy.context.scene
    objects = {}
    for ob in bpy.data.objects:
        s = ob.vehicle_motion
        anim = ob.animation_data
        objects[ob.name] = (_numbers(ob.matrix_world), _numbers(ob.location), _numbers(ob.rotation_euler),
                            anim.action.name if anim and anim.action else None,
                            s.has_trajectory, s.trajectory_data, s.is_baked)
    return {"frame": (scene.frame_current, scene.frame_subframe), "objects": objects,
            "actions": sorted(a.name for a in bpy.data.actions)}


def refused(vehicle, pattern: str, operator: str = "solve_trajectory", **props) -> None:
    """Solve (or ``operator``) refuses with a message matching ``pattern``; nothing in the scene changes."""
    view_layer = bpy.context.view_layer
    view_layer.objects.active = vehicle
    view_layer.update()  # the evaluated scene is what must not change (evaluation applies the keys)
    before = snapshot()
    with pytest.raises(RuntimeError, match=pattern) as info:
        getattr(bpy.ops.vehicle_motion, operator)(**props)
    assert "\n" not in str(info.value).strip(), "one line"
    assert snapshot() == before
