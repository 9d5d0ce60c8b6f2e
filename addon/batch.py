"""Headless batch entry: solve and bake the vehicles of one .blend, save a new .blend and a JSON report.

    python addon/batch.py SHOT.blend [options]                          # a Python with the bpy module
    blender -b SHOT.blend --python-exit-code 1 --python addon/batch.py -- [options]
    blender -b --python-exit-code 1 --python addon/batch.py -- SHOT.blend [options]

Options: ``--vehicle NAME`` (repeat; default: every vehicle Solve plans, in name order), ``--out
OUT.blend`` (default ``SHOT_baked.blend`` beside SHOT), ``--report REPORT.json`` (default OUT with
``.json``), ``--overwrite`` (let OUT be SHOT itself), ``--max-iter N`` and ``--time-limit S`` (0: the
scene's own), ``--backend scene|auto|scipy|ipopt``.

Each vehicle is solved as Solve Trajectory solves it (the scene's Vehicle Motion settings, its keys,
constraint empties and obstacles) and baked; the report (core.farm.report) lists each one: status
``baked``, ``not_converged`` or ``error``, cost, constraint violation, iterations, times, messages and
a SHA-256 digest of the F-curves of the vehicle and its children. OUT is saved when at least one vehicle
baked; the input is never written unless OUT is it and ``--overwrite`` is given. Exit status: 0 every
vehicle baked, 3 some did not converge (the others baked and saved, each failure in the report), 2
bad input (the file, an option, a vehicle name, a scene Solve refuses), 1 a bug (with a traceback).

Run as a script, it uses the Vehicle Motion package already registered in this Blender, else the
package this file belongs to (registered for the run, unregistered before exit: bpy 4.5 hangs at
exit with an operator class still registered). One BLAS thread unless the caller set another count:
threaded reductions may add in another order, and two runs of one shot must give the same bits.
"""
from __future__ import annotations

import os
import sys


def _run_as_script() -> int:
    """``python addon/batch.py …`` / ``blender … --python addon/batch.py -- …``: this file's ``main``, run
    inside its package."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before numpy loads (bpy loads it)
    import importlib
    import importlib.util

    import bpy
    as_python = os.path.abspath(sys.argv[0]) == os.path.abspath(__file__)
    argv = sys.argv[1:] if as_python else (sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else [])
    if hasattr(bpy.types, "VEHICLE_MOTION_OT_solve_trajectory"):   # an installed, enabled extension
        package = bpy.types.VEHICLE_MOTION_OT_solve_trajectory.__module__.rsplit(".operators", 1)[0]
        return importlib.import_module(package + ".addon.batch").main(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    module = sys.modules.get("vehicle_motion")
    if module is None:
        spec = importlib.util.spec_from_file_location("vehicle_motion", os.path.join(root, "__init__.py"),
                                                      submodule_search_locations=[root])
        module = importlib.util.module_from_spec(spec)
        sys.modules["vehicle_motion"] = module
        spec.loader.exec_module(module)
    module.register()
    try:
        return importlib.import_module("vehicle_motion.addon.batch").main(argv)
    finally:
        module.unregister()


if __name__ == "__main__" and not __package__:
    sys.exit(_run_as_script())

import argparse  # noqa: E402  (below: run as a script, this file only bootstraps its package)
import hashlib  # noqa: E402
import time  # noqa: E402
import tomllib  # noqa: E402
import traceback  # noqa: E402
from array import array  # noqa: E402

import bpy  # noqa: E402

from ..core.errors import VehicleMotionError, one_line  # noqa: E402
from ..core.farm import report  # noqa: E402
from ..core.farm.cli import OneLineParser, non_negative  # noqa: E402
from ..core.outputs import check_writable  # noqa: E402

BACKENDS = {"scene": None, "auto": "AUTO", "scipy": "SCIPY", "ipopt": "IPOPT"}
EXIT_INTERNAL = 1   # a bug (as blender --python-exit-code 1 reports an uncaught exception)


def _reader():
    from . import scene_reader
    return scene_reader


def fcurve_digest(objects) -> str:
    """SHA-256 of the keyframes (co, left and right handles, as Blender stores them: float32) of every
    F-curve that animates ``objects``, in name, data path and index order."""
    from . import action_compat
    h = hashlib.sha256()
    for ob in sorted(objects, key=lambda o: o.name):
        ref = action_compat.assigned(ob)
        if ref is None:
            continue
        for fc in sorted(action_compat.fcurves(ref), key=lambda f: (f.data_path, f.array_index)):
            n = len(fc.keyframe_points)
            h.update(f"{ob.name}\0{fc.data_path}\0{fc.array_index}\0{n}\0".encode())
            for prop in ("co", "handle_left", "handle_right"):
                values = array("f", bytes(8 * n))
                fc.keyframe_points.foreach_get(prop, values)
                h.update(values.tobytes())
    return h.hexdigest()


def bake_vehicle(scene, obj) -> dict:
    """Solve ``obj`` (a vehicle Solve plans) and bake it: its report entry (core.farm.report.entry)."""
    from . import solving
    t0 = time.perf_counter()
    try:
        problem = _reader().read_problem(scene, obj)
    except VehicleMotionError as exc:
        message = str(exc) if f"'{obj.name}'" in str(exc) else f"'{obj.name}': {exc}"
        return report.entry(obj.name, report.ERROR, one_line(message), read_time_s=time.perf_counter() - t0)
    t1 = time.perf_counter()
    outcome = solving.solve(problem)
    t2 = time.perf_counter()
    level, message = solving.apply_outcome(obj, outcome, scene)
    t3 = time.perf_counter()
    if outcome.error or (outcome.converged and level == "ERROR"):   # refused, or a solution that is not finite
        status = report.ERROR
    else:
        status = report.BAKED if outcome.converged else report.NOT_CONVERGED
    baked = status == report.BAKED
    return report.entry(
        obj.name, status, one_line(message), cost=outcome.cost, max_constraint_violation=outcome.max_violation,
        iterations=outcome.iterations, segments=outcome.segments, solver_status=outcome.status,
        backend=outcome.backend, read_time_s=t1 - t0, solve_time_s=t2 - t1, bake_time_s=t3 - t2 if baked else 0.0,
        warnings=[one_line(w) for w in outcome.warnings], detail=one_line(outcome.detail),
        fcurves_sha256=fcurve_digest([obj, *obj.children_recursive]) if baked else "")


def bake_vehicles(scene, names=()) -> tuple[list[dict], list[str]]:
    """Solve and bake the vehicles of ``scene`` named in ``names`` (none: every vehicle Solve plans, in name
    order): (report entries, notes on the vehicles Solve does not plan). A name that is not such a vehicle
    is an error entry; a bug in one vehicle's solve is an error entry too (traceback on stderr)."""
    solvable = _reader().SOLVABLE
    entries, notes, chosen = [], [], []
    if names:
        for name in names:
            obj = scene.objects.get(name)
            kind = obj.vehicle_motion.vehicle_type if obj is not None else "NONE"
            if obj is None or kind not in solvable:
                why = ("no object of that name in the scene" if obj is None else
                       "not a vehicle (its Vehicle type is not set)" if kind == "NONE" else
                       f"Solve does not plan a {kind.lower().replace('_', ' ')}")
                entries.append(report.entry(name, report.ERROR, f"'{name}': {why}"))
            else:
                chosen.append(obj)
    else:
        for obj in sorted((ob for ob in scene.objects if ob.vehicle_motion.vehicle_type != "NONE"),
                          key=lambda ob: ob.name):
            kind = obj.vehicle_motion.vehicle_type
            if kind in solvable:
                chosen.append(obj)
            else:
                notes.append(f"'{obj.name}': skipped (Solve does not plan a {kind.lower().replace('_', ' ')})")
    for obj in chosen:
        try:
            entries.append(bake_vehicle(scene, obj))
        except Exception as exc:  # a bug: this vehicle's entry says so, the others still bake
            traceback.print_exc()
            entries.append(report.entry(obj.name, report.ERROR,
                                        f"'{obj.name}': Vehicle Motion internal error: {type(exc).__name__}: {exc}"))
    return entries, notes


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="batch", description="Solve and bake the vehicles of a .blend into a new .blend, with a report")
    p.add_argument("shot", nargs="?", metavar="SHOT.blend", help="the .blend to bake (default: the one Blender opened)")
    p.add_argument("--vehicle", action="append", default=[], metavar="NAME", help="bake this vehicle (repeatable)")
    p.add_argument("--out", metavar="OUT.blend", help="the baked file (default: SHOT_baked.blend beside SHOT)")
    p.add_argument("--report", metavar="REPORT.json", help="the report (default: OUT with .json)")
    p.add_argument("--overwrite", action="store_true", help="allow OUT to be SHOT itself")
    p.add_argument("--max-iter", type=non_negative(int), default=0, help="solver iteration limit (0: the scene's)")
    p.add_argument("--time-limit", type=non_negative(float), default=0.0, help="solver time limit in s (0: the scene's)")
    p.add_argument("--backend", type=str.lower, choices=tuple(BACKENDS), default="scene", help="solver")
    return p


class _Refused(Exception):
    """Bad input found before anything is solved: the message, and where to report it (or None)."""

    def __init__(self, message: str, report_path: str | None):
        super().__init__(message)
        self.report_path = report_path


def _paths(args, opened: str) -> tuple[str, str, str]:
    """(shot, out, report) as absolute paths, checked."""
    shot = os.path.abspath(args.shot) if args.shot else opened
    if not shot:
        raise _Refused("no .blend file: give SHOT.blend", None)
    stem = shot[:-len(".blend")] if shot.lower().endswith(".blend") else shot
    out = os.path.abspath(args.out) if args.out else stem + "_baked.blend"
    report_path = os.path.abspath(args.report) if args.report else os.path.splitext(out)[0] + ".json"
    try:
        check_writable(report_path, "--report")
    except VehicleMotionError as exc:
        raise _Refused(str(exc), None) from None
    if not os.path.isfile(shot):
        raise _Refused(f"{shot}: no such file", report_path)
    if not shot.lower().endswith(".blend"):
        raise _Refused(f"{shot}: not a .blend file", report_path)
    if not out.lower().endswith(".blend"):
        raise _Refused(f"--out: {out}: the baked file must end in .blend", report_path)
    same = os.path.exists(out) and os.path.samefile(out, shot)
    if same and not args.overwrite:
        raise _Refused(f"--out: {out} is the input file; give --overwrite to replace it", report_path)
    try:
        check_writable(out, "--out")
    except VehicleMotionError as exc:
        raise _Refused(str(exc), report_path) from None
    return shot, out, report_path


def _open(shot: str) -> None:
    """Open ``shot`` unless it is the file Blender opened."""
    if os.path.abspath(bpy.data.filepath or "") == shot:
        return   # blender -b SHOT.blend --python …: already open
    try:
        bpy.ops.wm.open_mainfile(filepath=shot)
    except RuntimeError as exc:
        raise _Refused(f"{shot}: cannot be opened ({one_line(str(exc).strip())})", None) from None


def _apply_limits(scene, args) -> dict:
    """The solver settings for this run (the options over the scene's): what the report records."""
    vm = scene.vehicle_motion
    if args.max_iter:
        vm.max_iter = args.max_iter
    if args.time_limit:
        vm.time_limit_s = args.time_limit
    if BACKENDS[args.backend]:
        vm.solver_backend = BACKENDS[args.backend]
    return {"max_iter": vm.max_iter, "time_limit_s": vm.time_limit_s, "solver_backend": vm.solver_backend}


def _package_version() -> str:
    """This package's version (blender_manifest.toml), for the report."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(root, "blender_manifest.toml"), "rb") as f:
            return str(tomllib.load(f).get("version", ""))
    except (OSError, tomllib.TOMLDecodeError):
        return ""


def run(args) -> int:
    """Open, solve, bake, save and report (the module docstring): the exit status."""
    started = time.perf_counter()
    rep = {"shot": "", "output": "", "exit_code": report.EXIT_BAD_INPUT, "blender": bpy.app.version_string,
           "vehicle_motion": _package_version(), "settings": {}, "notes": [], "vehicles": []}
    report_path = None
    try:
        shot, out, report_path = _paths(args, os.path.abspath(bpy.data.filepath) if bpy.data.filepath else "")
        rep["shot"] = shot
        _open(shot)
        rep["open_time_s"] = time.perf_counter() - started
        scene = bpy.context.scene
        rep["settings"] = _apply_limits(scene, args)
        entries, notes = bake_vehicles(scene, args.vehicle)
        rep["notes"], rep["vehicles"] = notes, entries
        if not entries:
            why = "; ".join(notes) if notes else "set an object's Vehicle type"
            raise _Refused(f"no vehicle Solve plans in {os.path.basename(shot)} ({why})", report_path)
        if any(e["status"] == report.BAKED for e in entries):
            t = time.perf_counter()
            bpy.ops.wm.save_as_mainfile(filepath=out)
            rep["save_time_s"] = time.perf_counter() - t
            rep["output"] = out
            for e in entries:
                if e["status"] == report.BAKED:
                    e["output"] = out
        rep["exit_code"] = report.exit_code(entries)
    except _Refused as exc:
        report_path = exc.report_path if report_path is None else report_path
        rep["shot"] = rep["shot"] or (os.path.abspath(args.shot) if args.shot else "")
        rep["vehicles"] = [report.entry("", report.ERROR, one_line(str(exc)))]
    except Exception as exc:  # a bug outside any one vehicle's solve (opening, saving): still a report, exit 1
        traceback.print_exc()
        rep["vehicles"] = rep["vehicles"] + [report.entry("", report.ERROR, one_line(
            f"Vehicle Motion internal error: {type(exc).__name__}: {exc}"))]
        rep["exit_code"] = EXIT_INTERNAL
    rep["wall_time_s"] = time.perf_counter() - started
    name = os.path.basename(rep["shot"]) or "batch"
    for e in rep["vehicles"]:
        line = e["message"] if e["status"] == report.BAKED else f"batch: {name}: {e['message']}"
        print(line, file=sys.stdout if e["status"] == report.BAKED else sys.stderr)
    for note in rep["notes"]:
        print(note)
    if rep["output"]:
        print(f"batch: saved {rep['output']}")
    if report_path:
        try:
            report.write(report_path, rep)
            print(f"batch: report {report_path}")
        except VehicleMotionError as exc:
            print(f"batch: {name}: {one_line(str(exc))}", file=sys.stderr)
            return report.EXIT_BAD_INPUT
    return rep["exit_code"]


def main(argv: list[str]) -> int:
    """The command line (module docstring) inside a registered Vehicle Motion: the exit status."""
    return run(parser().parse_args(list(argv)))


__all__ = ["main", "run", "parser", "bake_vehicles", "bake_vehicle", "fcurve_digest"]
