"""Solve Trajectory: plan the active vehicle's motion from the scene (DMOC) and bake it.

From a button (invoke) in the UI the solve runs in a worker thread: a progress bar in the
panel and the status bar, Esc cancels. Run from a script (execute) or in background mode
it runs synchronously. Store + bake happen at the end in one undo step.
"""
from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ..addon import live, preview, scene_reader, solving
from .bake import _allowed, _object_problem, _run


def _vehicle_problem(context) -> str | None:
    problem = _object_problem(context)
    if problem:
        return problem
    obj = context.active_object
    if obj.vehicle_motion.vehicle_type == "NONE":
        return f"'{obj.name}' is not a vehicle: set its Vehicle type in the Vehicle panel"
    return None


def _report_warnings(op, warnings) -> None:
    for w in warnings:
        op.report({"WARNING"}, w)


class VEHICLE_MOTION_OT_solve_trajectory(bpy.types.Operator):
    bl_idname = "vehicle_motion.solve_trajectory"
    bl_label = "Solve Trajectory"
    bl_description = ("Plan a physically valid motion of the active vehicle through its keyframes, constraint "
                      "empties and obstacles, store it with the object and bake it")
    bl_options = {"REGISTER", "UNDO"}

    bake_after_solve: BoolProperty(
        name="Bake After Solve", default=True,
        description="Bake the solved motion into F-curves in the same undo step (off: only store it; Bake later)")
    bake_best_attempt: BoolProperty(
        name="Bake Best Attempt", default=False,
        description="When the solve does not converge, store and bake its best attempt anyway")

    _job = None
    _timer = None
    _print = None   # addon.live.fingerprint of the scene the solve read

    @classmethod
    def poll(cls, context):
        problem = _vehicle_problem(context)
        if problem is None and solving.running(context.active_object.name):
            problem = f"'{context.active_object.name}' is being solved (Esc cancels)"
        return _allowed(cls, problem)

    # -- synchronous: scripts and background mode ------------------------------------------------
    def execute(self, context):
        obj = context.active_object
        self._print = live.fingerprint(context.scene, obj)
        problem = _run(self, lambda: scene_reader.read_problem(context.scene, obj))
        if problem is None:
            return {"CANCELLED"}
        outcome = _run(self, lambda: solving.solve(problem))
        if outcome is None:
            return {"CANCELLED"}
        return self._finish(context, obj, outcome)

    def _finish(self, context, obj, outcome, scene=None) -> set:
        scene = scene or context.scene
        applied = _run(self, lambda: solving.apply_outcome(
            obj, outcome, scene, bake=self.bake_after_solve, bake_best_attempt=self.bake_best_attempt))
        if applied is None:
            return {"CANCELLED"}
        level, message = applied
        scene.vehicle_motion.last_report = message
        self.report({level}, message)
        preview.tag_redraw()
        stored = outcome.trajectory is not None and (outcome.converged or self.bake_best_attempt) \
            and not outcome.error and not outcome.cancelled
        if stored and level != "ERROR":  # Live Solve re-solves from here
            live.remember(obj, outcome, self._print)
        return {"FINISHED"} if stored else {"CANCELLED"}

    # -- modal: the UI -------------------------------------------------------------------------
    def invoke(self, context, event):
        if bpy.app.background or context.window is None:
            return self.execute(context)
        obj = context.active_object
        self._print = live.fingerprint(context.scene, obj)
        problem = _run(self, lambda: scene_reader.read_problem(context.scene, obj))
        if problem is None:
            return {"CANCELLED"}
        _report_warnings(self, problem.warnings)
        problem.warnings.clear()
        self._vehicle, self._scene = obj.name, context.scene.name
        self._job = solving.SolveJob(problem).start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.25, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 1000)
        self._set_progress(context)
        return {"RUNNING_MODAL"}

    def _settings(self, context):
        scene = bpy.data.scenes.get(self._scene)
        return (scene or context.scene).vehicle_motion

    def _set_progress(self, context) -> None:
        fraction, text = self._job.progress()
        s = self._settings(context)
        s.solve_running, s.solve_progress, s.solve_status = True, fraction, text
        context.window_manager.progress_update(int(1000 * fraction))
        if context.workspace is not None:
            context.workspace.status_text_set(text)
        for area in context.screen.areas if context.screen else ():
            if area.type in ("VIEW_3D", "PROPERTIES"):
                area.tag_redraw()

    def _cleanup(self, context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        if context.workspace is not None:
            context.workspace.status_text_set(None)
        s = self._settings(context)
        s.solve_running, s.solve_progress, s.solve_status = False, 0.0, ""
        if self._job is not None:
            self._job.finish()

    def modal(self, context, event):
        job = self._job
        if event.type == "ESC" and event.value == "PRESS":
            job.cancel()
            self._cleanup(context)
            message = f"Solve of '{self._vehicle}' cancelled; nothing changed"
            self._settings(context).last_report = message
            self.report({"WARNING"}, message)
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        if not job.done:
            self._set_progress(context)
            return {"PASS_THROUGH"}
        self._cleanup(context)
        obj, scene = bpy.data.objects.get(self._vehicle), bpy.data.scenes.get(self._scene)
        if obj is None or scene is None:
            self.report({"ERROR"}, f"'{self._vehicle}' or its scene was deleted or renamed while it was being "
                                   "solved; nothing baked")
            return {"CANCELLED"}
        return self._finish(context, obj, job.outcome, scene)

    def cancel(self, context):
        if self._job is not None:
            self._job.cancel()
        self._cleanup(context)


classes = (VEHICLE_MOTION_OT_solve_trajectory,)
