"""An Open Job Description job bundle that bakes many shots on a render farm.

The bundle (the AWS Deadline Cloud layout: ``template.yaml``, ``parameter_values.yaml``,
``asset_references.yaml``; plus ``tasks.json`` and the template's two scripts ``bake_task.sh`` and
``summary_task.sh``, for farm managers that run commands rather than templates) describes one job:

* job parameters ``Blender`` (executable; may be empty), ``Python`` (a Python with the ``bpy``
  module, used when ``Blender`` is empty), ``VehicleMotion`` (the package folder on the workers),
  ``OutputDir`` (its default in the template is ``output`` inside the bundle: the specification
  refuses absolute or outside defaults; ``parameter_values.yaml`` holds the chosen folder), the
  solver limits ``MaxIterations`` and ``TimeLimit`` (0: each scene's own), ``SolverBackend`` and
  ``TaskTimeout``;
* a step ``Bake`` (``Bake 2``, … past 1,024 tasks, the longest task-parameter list the
  specification allows) with one task per shot, or per shot and vehicle: the tasks are independent,
  and each runs :data:`.task_scripts.BAKE`, which records its outcome and exits 0 (why: that script);
* a last step ``Summary`` that depends on every Bake step and gathers the reports
  (:mod:`.summary`).

The template is jobtemplate-2023-09 without extensions, so that any conforming farm can run it.
Text from the user (paths, vehicle names) may not contain ``{{`` or ``}}``: the specification reads
those as format-string delimiters in every value, and has no escape for them.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..errors import ScenarioError
from ..outputs import write_text
from . import layout, task_scripts, yaml_text

SPECIFICATION = "jobtemplate-2023-09"
MAX_TASKS_PER_STEP = 1024      # a task parameter's list range holds at most 1,024 values
MAX_VALUE_LENGTH = 1024        # characters in one task parameter value
BACKENDS = ("SCENE", "AUTO", "SCIPY", "IPOPT")


@dataclass
class JobSettings:
    """The job's parameter defaults (``parameter_values.yaml`` repeats them) and its fixed choices."""
    package_dir: str
    output_dir: str
    blender: str = ""
    python: str = ""
    max_iter: int = 0
    time_limit_s: float = 0.0
    backend: str = "SCIPY"            # the same solver on every worker (IPOPT is optional per machine)
    task_timeout_s: int = 3600
    name: str = ""
    vehicles: list[str] = field(default_factory=list)   # bake only these (every task), unless per vehicle
    per_vehicle: bool = False


def _checked_text(text: str, what: str) -> str:
    if "{{" in text or "}}" in text:
        raise ScenarioError(what, f"contains '{{{{' or '}}}}', which a job template reads as a format string: {text}")
    if not text.isprintable():
        raise ScenarioError(what, f"contains a control character: {text!r}")
    if len(text) > MAX_VALUE_LENGTH:
        raise ScenarioError(what, f"longer than {MAX_VALUE_LENGTH} characters: {text[:60]}…")
    return text


def collect_shots(paths: list[str]) -> list[str]:
    """The .blend files named by ``paths`` (files, or folders: their ``*.blend`` files in name order), as
    absolute paths, each once, in the order given."""
    if not paths:
        raise ScenarioError("SHOT", "no .blend file or folder given")
    shots: list[str] = []
    for given in paths:
        full = os.path.abspath(given)
        if os.path.isdir(full):
            found = sorted(os.path.join(full, n) for n in os.listdir(full)
                           if n.lower().endswith(".blend") and os.path.isfile(os.path.join(full, n)))
            if not found:
                raise ScenarioError(given, "folder has no .blend file")
        elif os.path.isfile(full):
            if not full.lower().endswith(".blend"):
                raise ScenarioError(given, "not a .blend file")
            found = [full]
        else:
            raise ScenarioError(given, "no such file or folder")
        shots.extend(s for s in found if s not in shots)
    return [_checked_text(s, "shot") for s in shots]


def plan_tasks(shots: list[str], vehicles: list[str], per_vehicle: bool) -> list[layout.Task]:
    """One task per shot, or per shot and vehicle; refused when two would write the same files."""
    vehicles = [_checked_text(v, "--vehicle") for v in vehicles]
    if per_vehicle and not vehicles:
        raise ScenarioError("--per-vehicle", "needs the vehicles' names (--vehicle NAME, once per vehicle)")
    if len(set(vehicles)) != len(vehicles):
        raise ScenarioError("--vehicle", "a vehicle is named twice")
    pairs = [(s, v) for s in shots for v in (vehicles if per_vehicle else [""])]
    tasks, taken = [], {}
    for shot, vehicle in pairs:
        name = layout.task_name(shot, vehicle)
        if name.lower() in taken:   # case-insensitive: the output folder may be on such a file system
            other = taken[name.lower()]
            raise ScenarioError("shot", f"{shot}{' ' + vehicle if vehicle else ''} and {other} would both write "
                                        f"{name}.blend and {name}.json: rename one")
        taken[name.lower()] = shot + (" " + vehicle if vehicle else "")
        tasks.append(layout.Task(shot, vehicle, name))
    return tasks


def _parameters(s: JobSettings, output_default: str) -> list[dict]:
    """The job parameters. ``output_default``: OutputDir's default in the template, which the specification
    wants relative to the template's folder and inside it (``parameter_values.yaml`` has the real one)."""
    def ui(control: str, label: str, group: str) -> dict:
        return {"control": control, "label": label, "groupLabel": group}

    return [
        {"name": "Blender", "type": "STRING", "default": s.blender,
         "description": "Blender executable on the workers; empty: run the Python below with the bpy module",
         "userInterface": ui("LINE_EDIT", "Blender executable", "Executables")},
        {"name": "Python", "type": "STRING", "default": s.python,
         "description": "A Python with the bpy module, used when Blender is empty",
         "userInterface": ui("LINE_EDIT", "Python with bpy", "Executables")},
        {"name": "VehicleMotion", "type": "STRING", "default": s.package_dir,   # a worker's own path: not mapped
         "description": "The Vehicle Motion package folder on the workers (an installed extension or a checkout)",
         "userInterface": ui("LINE_EDIT", "Vehicle Motion folder", "Executables")},
        {"name": "OutputDir", "type": "PATH", "objectType": "DIRECTORY", "dataFlow": "OUT",
         "default": output_default,
         "description": "Baked shots (baked/), reports (reports/) and the summary (summary.json, summary.txt)",
         "userInterface": ui("CHOOSE_DIRECTORY", "Output folder", "Output")},
        {"name": "MaxIterations", "type": "INT", "default": int(s.max_iter), "minValue": 0,
         "description": "Solver iteration limit of every solve; 0: each scene's own",
         "userInterface": ui("SPIN_BOX", "Max iterations", "Solver")},
        {"name": "TimeLimit", "type": "FLOAT", "default": float(s.time_limit_s), "minValue": 0.0,
         "description": ("Solver time limit of every solve (s); 0: each scene's own. A solve stopped by it "
                         "depends on the worker's speed: for the same result on every worker, let "
                         "MaxIterations stop a solve, not the clock"),
         "userInterface": ui("SPIN_BOX", "Time limit (s)", "Solver")},
        {"name": "SolverBackend", "type": "STRING", "default": s.backend, "allowedValues": list(BACKENDS),
         "description": ("SCIPY: the bundled solver, the same on every worker; SCENE: each scene's setting "
                         "(Automatic picks IPOPT where it is installed)"),
         "userInterface": ui("DROPDOWN_LIST", "Solver", "Solver")},
        {"name": "TaskTimeout", "type": "INT", "default": int(s.task_timeout_s), "minValue": 1,
         "description": "Wall-clock limit of one Bake task (s): the batch is stopped and the shot reported",
         "userInterface": ui("SPIN_BOX", "Task time limit (s)", "Solver")},
    ]


def _bake_step(name: str, tasks: list[layout.Task], s: JobSettings) -> dict:
    params = [{"name": "Shot", "type": "PATH", "range": [t.shot for t in tasks]},
              {"name": "Name", "type": "STRING", "range": [t.name for t in tasks]}]
    options = ["--max-iter", "{{Param.MaxIterations}}", "--time-limit", "{{Param.TimeLimit}}",
               "--backend", "{{Param.SolverBackend}}"]
    if s.per_vehicle:
        params.append({"name": "Vehicle", "type": "STRING", "range": [t.vehicle for t in tasks]})
        options += ["--vehicle", "{{Task.Param.Vehicle}}"]
    else:
        for v in s.vehicles:
            options += ["--vehicle", v]
    return {
        "name": name,
        "description": "Solve and bake each shot's vehicles; the outcome of each task goes to OutputDir/reports",
        "parameterSpace": {"taskParameterDefinitions": params,
                           "combination": "(" + ", ".join(p["name"] for p in params) + ")"},
        "script": {
            "actions": {"onRun": {"command": "bash", "args": [
                "{{Task.File.Bake}}", "{{Param.Blender}}", "{{Param.Python}}", "{{Param.VehicleMotion}}",
                "{{Param.OutputDir}}", "{{Param.TaskTimeout}}", "{{Task.Param.Name}}", "{{Task.Param.Shot}}",
                *options]}},
            "embeddedFiles": [{"name": "Bake", "type": "TEXT", "filename": "bake_task.sh",
                               "data": task_scripts.BAKE}],
        },
    }


def tasks_json(tasks: list[layout.Task]) -> str:
    """The task list the Summary step reads (one flat object per line)."""
    return "[\n" + ",\n".join(json.dumps({"shot": t.shot, "vehicle": t.vehicle, "name": t.name}, ensure_ascii=False)
                              for t in tasks) + "\n]\n"


def _output_default(s: JobSettings, bundle_dir: str) -> str:
    """OutputDir relative to the bundle when it is inside it, else the bundle's ``output`` folder."""
    full, base = os.path.abspath(s.output_dir), os.path.abspath(bundle_dir)
    inside = os.path.commonpath([full, base]) == base and full != base
    return os.path.relpath(full, base) if inside else "output"


def job_template(tasks: list[layout.Task], s: JobSettings, bundle_dir: str) -> dict:
    """The job template (a dict for :func:`.yaml_text.dump`) to be written into ``bundle_dir``."""
    for text, what in ((s.package_dir, "--package"), (s.output_dir, "--output-dir"), (s.blender, "--blender"),
                       (s.python, "--python"), (s.name, "--name")):
        _checked_text(text, what)
    if s.backend not in BACKENDS:
        raise ScenarioError("--backend", f"{s.backend!r} is none of {', '.join(BACKENDS)}")
    chunks = [tasks[i:i + MAX_TASKS_PER_STEP] for i in range(0, len(tasks), MAX_TASKS_PER_STEP)]
    names = ["Bake"] + [f"Bake {i}" for i in range(2, len(chunks) + 1)]
    shots = len({t.shot for t in tasks})
    job_name = s.name or f"Vehicle Motion bake: {shots} shot{'s' if shots != 1 else ''}"
    summary = {
        "name": "Summary",
        "description": "Gather every task's report into OutputDir/summary.json and OutputDir/summary.txt",
        "dependencies": [{"dependsOn": n} for n in names],
        "script": {
            "actions": {"onRun": {"command": "bash", "args": [
                "{{Task.File.Summary}}", "{{Param.Blender}}", "{{Param.Python}}", "{{Param.VehicleMotion}}",
                "{{Param.OutputDir}}", "{{Task.File.Tasks}}"]}},
            "embeddedFiles": [
                {"name": "Summary", "type": "TEXT", "filename": "summary_task.sh", "data": task_scripts.SUMMARY},
                {"name": "Tasks", "type": "TEXT", "filename": "tasks.json", "data": tasks_json(tasks)}],
        },
    }
    return {"specificationVersion": SPECIFICATION, "name": job_name[:128],
            "description": "Vehicle Motion: solve and bake the vehicles of each shot, then summarise the outcomes",
            "parameterDefinitions": _parameters(s, _output_default(s, bundle_dir)),
            "steps": [_bake_step(n, c, s) for n, c in zip(names, chunks)] + [summary]}


def parameter_values(s: JobSettings) -> dict:
    """``parameter_values.yaml``: every job parameter's value (Deadline Cloud's bundle layout)."""
    return {"parameterValues": [{"name": p["name"], "value": p["default"]} for p in _parameters(s, s.output_dir)]}


def asset_references(tasks: list[layout.Task]) -> dict:
    """``asset_references.yaml``: the shots are the job's input files (Deadline Cloud job attachments)."""
    return {"assetReferences": {"inputs": {"filenames": sorted({t.shot for t in tasks})}}}


def write_bundle(bundle_dir: str, tasks: list[layout.Task], s: JobSettings) -> list[str]:
    """Write the bundle into ``bundle_dir`` (created if needed): the paths written."""
    full = os.path.abspath(bundle_dir)
    template = yaml_text.dump(job_template(tasks, s, full))   # every check before anything is written
    if os.path.exists(full) and not os.path.isdir(full):
        raise ScenarioError("--out", f"not a folder: {full}")
    try:
        os.makedirs(full, exist_ok=True)
    except OSError as exc:
        raise ScenarioError("--out", f"cannot create {full}: {exc.strerror or exc}") from None
    files = {"template.yaml": template, "parameter_values.yaml": yaml_text.dump(parameter_values(s)),
             "asset_references.yaml": yaml_text.dump(asset_references(tasks)), "tasks.json": tasks_json(tasks),
             # the template's two scripts as files too, for farm managers that run commands, not templates
             "bake_task.sh": task_scripts.BAKE, "summary_task.sh": task_scripts.SUMMARY}
    written = []
    for name, text in files.items():
        path = os.path.join(full, name)
        write_text(path, text, "--out")
        written.append(path)
    return written


__all__ = ["JobSettings", "collect_shots", "plan_tasks", "job_template", "parameter_values", "asset_references",
           "tasks_json", "write_bundle", "SPECIFICATION", "MAX_TASKS_PER_STEP", "BACKENDS"]
