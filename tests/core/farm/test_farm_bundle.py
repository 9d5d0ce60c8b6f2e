"""core.farm without Blender: the YAML writer, the Open Job Description bundle, the Bake task script's
records, the summary, and the command lines' exit statuses."""
from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ScenarioError
from core.farm import bundle, layout, report, summary, task_scripts, yaml_text

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "farm_bundle.py"


# ----------------------------------------------------------------------------- YAML

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
                     st.lists(st.sampled_from(["a", " b", "\t", "", "é😀", "x: y", "- z", "#c", "\r", "\x85"]),
                              max_size=6).map("\n".join))
_keys = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), st.text(max_size=10))
_documents = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                             st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)


@given(st.dictionaries(_keys, _documents, max_size=5))
def test_yaml_reads_back_as_written(document):
    assert yaml.safe_load(yaml_text.dump(document)) == document


def test_yaml_keeps_a_script_readable_and_exact():
    text = yaml_text.dump({"data": task_scripts.BAKE})
    assert text.startswith("data: |\n  #!/usr/bin/env bash\n")
    assert yaml.safe_load(text)["data"] == task_scripts.BAKE


def test_yaml_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match="finite"):
        yaml_text.dump({"x": float("nan")})
    with pytest.raises(TypeError):
        yaml_text.dump({"x": object()})


# ----------------------------------------------------------------------------- the bundle

def shots(folder: pathlib.Path, *names: str) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        (folder / name).write_bytes(b"BLENDER")   # the generator never opens a shot
        out.append(str(folder / name))
    return out


def settings(tmp_path, **kw) -> bundle.JobSettings:
    return bundle.JobSettings(package_dir=str(ROOT), output_dir=str(tmp_path / "output"), **kw)


def load(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def test_bundle_has_the_contract_names_and_one_task_per_shot(tmp_path):
    files = shots(tmp_path / "shots", "sh010.blend", "sh 020.blend")
    tasks = bundle.plan_tasks(bundle.collect_shots([str(tmp_path / "shots")]), [], False)
    written = bundle.write_bundle(str(tmp_path / "b"), tasks, settings(tmp_path, python="/opt/py"))
    assert sorted(os.path.basename(p) for p in written) == ["asset_references.yaml", "bake_task.sh",
                                                           "parameter_values.yaml", "summary_task.sh", "tasks.json",
                                                           "template.yaml"]
    assert (tmp_path / "b" / "bake_task.sh").read_text() == task_scripts.BAKE
    t = load(tmp_path / "b" / "template.yaml")
    assert t["specificationVersion"] == "jobtemplate-2023-09"
    params = {p["name"]: p for p in t["parameterDefinitions"]}
    assert {"Blender", "Python", "OutputDir", "MaxIterations", "TimeLimit", "TaskTimeout"} <= set(params)
    assert params["Blender"]["default"] == "" and params["Python"]["default"] == "/opt/py"
    assert params["OutputDir"]["type"] == "PATH" and params["OutputDir"]["dataFlow"] == "OUT"
    assert params["OutputDir"]["default"] == "output"   # relative, inside the bundle: the specification's rule
    assert params["VehicleMotion"]["default"] == str(ROOT)
    assert [s["name"] for s in t["steps"]] == ["Bake", "Summary"]
    bake, last = t["steps"]
    space = {p["name"]: p["range"] for p in bake["parameterSpace"]["taskParameterDefinitions"]}
    assert space["Shot"] == sorted(files) and space["Name"] == ["sh_020", "sh010"]
    assert bake["parameterSpace"]["combination"] == "(Shot, Name)"
    assert last["dependencies"] == [{"dependsOn": "Bake"}]
    embedded = {f["name"]: f["data"] for f in last["script"]["embeddedFiles"]}
    assert json.loads(embedded["Tasks"]) == [{"shot": s, "vehicle": "", "name": n}
                                             for s, n in zip(space["Shot"], space["Name"])]
    assert embedded["Summary"] == task_scripts.SUMMARY
    values = {v["name"]: v["value"] for v in load(tmp_path / "b" / "parameter_values.yaml")["parameterValues"]}
    assert values["Python"] == "/opt/py" and values["OutputDir"] == str(tmp_path / "output")
    assert load(tmp_path / "b" / "asset_references.yaml") == {
        "assetReferences": {"inputs": {"filenames": sorted(files)}}}


def test_bundle_per_vehicle_and_fixed_vehicles(tmp_path):
    files = shots(tmp_path, "a.blend", "b.blend")
    tasks = bundle.plan_tasks(files, ["Car", "Heli 2"], True)
    assert [(os.path.basename(t.shot), t.vehicle, t.name) for t in tasks] == [
        ("a.blend", "Car", "a__Car"), ("a.blend", "Heli 2", "a__Heli_2"),
        ("b.blend", "Car", "b__Car"), ("b.blend", "Heli 2", "b__Heli_2")]
    t = bundle.job_template(tasks, settings(tmp_path, vehicles=["Car", "Heli 2"], per_vehicle=True), str(tmp_path))
    bake = t["steps"][0]
    assert bake["parameterSpace"]["combination"] == "(Shot, Name, Vehicle)"
    assert bake["script"]["actions"]["onRun"]["args"][-2:] == ["--vehicle", "{{Task.Param.Vehicle}}"]
    fixed = bundle.job_template(bundle.plan_tasks(files, ["Car"], False), settings(tmp_path, vehicles=["Car"]),
                                str(tmp_path))
    assert fixed["steps"][0]["script"]["actions"]["onRun"]["args"][-2:] == ["--vehicle", "Car"]
    assert len(fixed["steps"][0]["parameterSpace"]["taskParameterDefinitions"][0]["range"]) == 2


def test_more_than_1024_tasks_take_several_bake_steps(tmp_path):
    tasks = [layout.Task(f"/shots/s{i:04d}.blend", "", f"s{i:04d}") for i in range(2 * 1024 + 5)]
    t = bundle.job_template(tasks, settings(tmp_path), str(tmp_path))
    assert [s["name"] for s in t["steps"]] == ["Bake", "Bake 2", "Bake 3", "Summary"]
    assert [len(s["parameterSpace"]["taskParameterDefinitions"][0]["range"]) for s in t["steps"][:3]] == [
        1024, 1024, 5]
    assert t["steps"][-1]["dependencies"] == [{"dependsOn": n} for n in ("Bake", "Bake 2", "Bake 3")]


def test_template_is_a_valid_job_for_the_reference_model(tmp_path):
    """The reference implementation's model (openjd-model, a test dependency) accepts the template and
    makes one task per shot and vehicle from it."""
    model = pytest.importorskip("openjd.model")
    files = shots(tmp_path, "a.blend", "b.blend")
    tasks = bundle.plan_tasks(files, ["Car", "Heli"], True)
    template = model.decode_job_template(template=yaml.safe_load(yaml_text.dump(
        bundle.job_template(tasks, settings(tmp_path, vehicles=["Car", "Heli"], per_vehicle=True), str(tmp_path)))))
    values = model.preprocess_job_parameters(job_template=template, job_parameter_values={},
                                             job_template_dir=tmp_path, current_working_dir=tmp_path)
    assert values["OutputDir"].value == str(tmp_path / "output")
    job = model.create_job(job_template=template, job_parameter_values=values)
    bake = job.steps[0]
    iterated = list(model.StepParameterSpaceIterator(space=bake.parameterSpace))
    assert [(p["Shot"].value, p["Vehicle"].value) for p in iterated] == [(t.shot, t.vehicle) for t in tasks]
    assert job.steps[-1].name == "Summary"


@pytest.mark.parametrize("case, message", [
    ("none", "SHOT: no .blend file or folder given"),
    ("missing", "no such file or folder"),
    ("not_blend", "not a .blend file"),
    ("empty_folder", "folder has no .blend file"),
    ("braces", "format string"),
    ("same_name", "would both write"),
])
def test_bad_shots_are_one_line_errors(tmp_path, case, message):
    (tmp_path / "empty").mkdir()
    shots(tmp_path / "x", "A.blend")
    shots(tmp_path / "y", "a.blend", "{{Param.X}}.blend", "notes.txt")
    paths = {"none": [], "missing": [str(tmp_path / "nope.blend")], "not_blend": [str(tmp_path / "y" / "notes.txt")],
             "empty_folder": [str(tmp_path / "empty")], "braces": [str(tmp_path / "y" / "{{Param.X}}.blend")],
             "same_name": [str(tmp_path / "x" / "A.blend"), str(tmp_path / "y" / "a.blend")]}[case]
    with pytest.raises(ScenarioError, match=message):
        bundle.plan_tasks(bundle.collect_shots(paths), [], False)


# ----------------------------------------------------------------------------- the summary

def write_report(out: pathlib.Path, name: str, shot: str, vehicles: list[dict], code: int) -> None:
    (out / layout.REPORTS).mkdir(parents=True, exist_ok=True)
    report.write(layout.report_path(str(out), name), {"shot": shot, "output": "", "exit_code": code,
                                                       "wall_time_s": 2.5, "vehicles": vehicles})


def write_record(out: pathlib.Path, name: str, text: str) -> None:
    (out / layout.REPORTS).mkdir(parents=True, exist_ok=True)
    pathlib.Path(layout.record_path(str(out), name)).write_text(text)


def test_summary_lists_every_task_and_why_it_failed(tmp_path):
    out = tmp_path / "out"
    tasks = [layout.Task("/s/car.blend", "", "car"), layout.Task("/s/two.blend", "", "two"),
             layout.Task("/s/crash.blend", "", "crash"), layout.Task("/s/slow.blend", "", "slow"),
             layout.Task("/s/lost.blend", "", "lost"), layout.Task("/s/bad.blend", "", "bad"),
             layout.Task("/s/boat.blend", "Boat", "boat__Boat")]
    write_report(out, "car", "/s/car.blend", [report.entry("Car", "baked", "Solved 'Car'", "/o/car.blend",
                                                           iterations=8, solve_time_s=0.5, cost=float("nan"))], 0)
    write_report(out, "two", "/s/two.blend", [report.entry("A", "baked", "Solved 'A'", "/o/two.blend"),
                                              report.entry("B", "not_converged", "'B' did not converge")], 3)
    write_record(out, "car", "0\n60\n\n1700000000,25\n1700000003,75\n")   # a locale with a decimal comma
    write_record(out, "crash", "139\n3600\n\n1700000000.5\n1700000001.0\n")
    write_record(out, "slow", "124\n60\n\n1700000000\n1700000061\n")
    write_record(out, "bad", "0\n60\n\n\n\n")
    pathlib.Path(layout.report_path(str(out), "bad")).write_text("{not json")
    write_report(out, "boat__Boat", "/s/boat.blend", [report.entry("", "error", "/s/boat.blend: no such file")], 2)
    entries = summary.gather(str(out), tasks)
    assert [(e["shot"], e["vehicle"], e["status"]) for e in entries] == [
        ("/s/car.blend", "Car", "baked"), ("/s/two.blend", "A", "baked"), ("/s/two.blend", "B", "not_converged"),
        ("/s/crash.blend", "", "error"), ("/s/slow.blend", "", "error"), ("/s/lost.blend", "", "error"),
        ("/s/bad.blend", "", "error"), ("/s/boat.blend", "Boat", "error")]
    messages = [e["message"] for e in entries]
    assert "exit status 139" in messages[3] and "task time limit (60 s" in messages[4]
    assert "did not run" in messages[5] and "unreadable report" in messages[6]
    assert entries[0]["output"] == "/o/car.blend" and entries[0]["iterations"] == 8 and entries[0]["cost"] is None
    assert entries[0]["batch_time_s"] == 2.5 and entries[0]["task_time_s"] == 3.5 and entries[2]["output"] == ""
    assert entries[3]["task_time_s"] == 0.5 and entries[4]["task_time_s"] == 61.0
    assert entries[5]["task_time_s"] is None and entries[6]["task_time_s"] is None
    json_path, text_path = summary.write(str(out), entries)
    assert json.loads(pathlib.Path(json_path).read_text()) == entries
    table = pathlib.Path(text_path).read_text().splitlines()
    assert table[0].split() == ["shot", "vehicle", "status", "iterations", "solve", "s", "task", "s", "message"]
    assert table[3].split()[:3] == ["two.blend", "B", "not_converged"]
    assert table[-1] == "8 vehicles in 7 shots: 2 baked, 1 not converged, 5 error"


# ----------------------------------------------------------------------------- the Bake task script

def fake_python(folder: pathlib.Path, body: str) -> str:
    """An executable standing in for the Python job parameter."""
    path = folder / "fake-python"
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def run_bake_script(tmp_path, python: str, out: pathlib.Path, limit: str = "30") -> subprocess.CompletedProcess:
    script = tmp_path / "bake_task.sh"
    script.write_text(task_scripts.BAKE)
    return subprocess.run(["bash", str(script), "", python, str(ROOT), str(out), limit, "shot", "/s/shot.blend",
                           "--max-iter", "0"], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("body, record, found", [
    ('echo "$@" > "$(dirname "$6")/args"; exit 3', ["3", "30", ""], "exit status 3 without a report"),
    ("kill -SEGV $$", ["139", "30", ""], "exit status 139"),
    ("sleep 20", ["124", "1", ""], "task time limit (1 s"),
])
def test_bake_task_records_the_outcome_and_exits_0(tmp_path, body, record, found):
    """A failed, crashed or stopped batch still ends its task with 0 (so that Summary runs), its exit status
    in the task's record; the arguments reach the batch as the batch entry expects them."""
    out = tmp_path / "out"
    done = run_bake_script(tmp_path, fake_python(tmp_path, body), out, "1" if "sleep" in body else "30")
    assert done.returncode == 0, done.stderr
    lines = pathlib.Path(layout.record_path(str(out), "shot")).read_text().splitlines()
    assert lines[:3] == record and len(lines) == 5
    entry = summary.entries_for(layout.Task("/s/shot.blend", "", "shot"), str(out))[0]
    assert found in entry["message"] and 0.0 <= entry["task_time_s"] < 30.0
    if body.startswith("echo"):
        assert (out / "reports" / "args").read_text().split() == [
            str(ROOT / "addon" / "batch.py"), "/s/shot.blend", "--out", layout.baked_path(str(out), "shot"),
            "--report", layout.report_path(str(out), "shot"), "--max-iter", "0"]


def test_bake_task_runs_blender_with_the_batch_after_its_options(tmp_path):
    out = tmp_path / "out"
    blender = fake_python(tmp_path, 'echo "$@" > "$(dirname "$0")/args"; exit 0')
    script = tmp_path / "bake_task.sh"
    script.write_text(task_scripts.BAKE)
    done = subprocess.run(["bash", str(script), blender, "", str(ROOT), str(out), "60", "shot", "/s/shot.blend",
                           "--vehicle", "Car"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text().split() == [
        "-b", "--python-exit-code", "1", "--python", str(ROOT / "addon" / "batch.py"), "--", "/s/shot.blend",
        "--out", layout.baked_path(str(out), "shot"), "--report", layout.report_path(str(out), "shot"),
        "--vehicle", "Car"]


def test_summary_task_runs_core_farm_with_blenders_python(tmp_path):
    """With the Blender parameter set, the Summary runs core.farm through ``--python-expr`` (a stand-in
    Blender runs the expression with this Python, the arguments after ``--`` as Blender passes them)."""
    out = tmp_path / "out"
    write_report(out, "car", "/s/car.blend", [report.entry("Car", "baked", "Solved 'Car'", "/o/car.blend")], 0)
    (tmp_path / "tasks.json").write_text(bundle.tasks_json([layout.Task("/s/car.blend", "", "car")]))
    blender = fake_python(tmp_path, "\n".join([
        'while [ $# -gt 0 ]; do case "$1" in --python-expr) code="$2"; shift 2;; --) break;; *) shift;; esac; done',
        f'exec {sys.executable} -c "$code" "$@"']))
    script = tmp_path / "summary_task.sh"
    script.write_text(task_scripts.SUMMARY)
    done = subprocess.run(["bash", str(script), blender, "", str(ROOT), str(out), str(tmp_path / "tasks.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "summary.json").read_text())[0]["status"] == "baked"
    assert done.stdout.splitlines()[-1] == f"core.farm summary: wrote {out / 'summary.json'} and {out / 'summary.txt'}"


def test_bake_task_without_an_interpreter_or_an_output_folder(tmp_path):
    out = tmp_path / "out"
    done = run_bake_script(tmp_path, "", out)
    assert done.returncode == 0
    entry = summary.entries_for(layout.Task("/s/shot.blend", "", "shot"), str(out))[0]
    assert entry["message"] == "neither the Blender nor the Python job parameter names an executable"
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert run_bake_script(tmp_path, "/bin/true", blocked / "out").returncode == 1   # nowhere to record: fails


# ----------------------------------------------------------------------------- the command lines

def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=60, cwd=cwd or ROOT)


def test_cli_writes_the_bundle(tmp_path):
    files = shots(tmp_path / "shots", "a.blend", "b.blend")
    done = cli(files[0], tmp_path / "shots", "--out", tmp_path / "bundle", "--python", "/opt/py", "--max-iter", "50")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("farm_bundle: 2 tasks over 2 shots; wrote ")
    t = load(tmp_path / "bundle" / "template.yaml")
    assert t["steps"][0]["parameterSpace"]["taskParameterDefinitions"][0]["range"] == files
    params = {p["name"]: p["default"] for p in t["parameterDefinitions"]}
    assert params["MaxIterations"] == 50 and params["OutputDir"] == "output"
    values = {v["name"]: v["value"] for v in load(tmp_path / "bundle" / "parameter_values.yaml")["parameterValues"]}
    assert values["OutputDir"] == str(tmp_path / "bundle" / "output") and values["Python"] == "/opt/py"
    elsewhere = cli(files[0], "--out", tmp_path / "b2", "--output-dir", tmp_path / "results")
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert {p["name"]: p["default"] for p in load(tmp_path / "b2" / "template.yaml")["parameterDefinitions"]}[
        "OutputDir"] == "output"
    assert {v["name"]: v["value"] for v in load(tmp_path / "b2" / "parameter_values.yaml")["parameterValues"]}[
        "OutputDir"] == str(tmp_path / "results")


@pytest.mark.parametrize("args, message", [
    ([], "SHOT: no .blend file or folder given"),
    (["{shots}/nope.blend"], "no such file or folder"),
    (["{shots}/a.blend", "--per-vehicle"], "--per-vehicle: needs the vehicles' names"),
    (["{shots}/a.blend", "--vehicle", "Car", "--vehicle", "Car"], "--vehicle: a vehicle is named twice"),
    (["{shots}/a.blend", "--backend", "cuda"], "argument --backend: invalid choice"),
    (["{shots}/a.blend", "--max-iter", "-1"], "argument --max-iter: must be a finite number"),
    (["{shots}/a.blend", "--task-timeout", "0"], "--task-timeout: must be at least 1 s"),
    (["{shots}/a.blend", "--package", "{shots}"], "--package: no Vehicle Motion package"),
    (["{shots}/a.blend", "--vehicle", "{{Param.Blender}}"], "--vehicle: contains '{{'"),
])
def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, message):
    shots(tmp_path / "shots", "a.blend")
    done = cli(*[a.replace("{shots}", str(tmp_path / "shots")) for a in args], "--out", tmp_path / "bundle")
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("farm_bundle: error: ") and message in done.stderr
    assert not (tmp_path / "bundle").exists()


def test_cli_refuses_a_file_as_the_bundle_folder(tmp_path):
    shots(tmp_path, "a.blend")
    (tmp_path / "taken").write_text("x")
    done = cli(tmp_path / "a.blend", "--out", tmp_path / "taken")
    assert done.returncode == 2 and done.stderr == f"farm_bundle: error: --out: not a folder: {tmp_path / 'taken'}\n"


def test_summary_command_line(tmp_path):
    out = tmp_path / "out"
    write_report(out, "car", "/s/car.blend", [report.entry("Car", "baked", "Solved 'Car'", "/o/car.blend")], 0)
    (tmp_path / "tasks.json").write_text(bundle.tasks_json([layout.Task("/s/car.blend", "", "car")]))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "core.farm", *map(str, args)], capture_output=True, text=True,
                              timeout=60, cwd=ROOT)

    done = run("summary", out, "--tasks", tmp_path / "tasks.json")
    assert done.returncode == 0, done.stderr
    assert "car.blend  Car      baked" in done.stdout
    assert json.loads((out / "summary.json").read_text())[0]["status"] == "baked"
    for args, message in ((["summary", tmp_path / "nope", "--tasks", tmp_path / "tasks.json"], "no such folder"),
                          (["summary", out, "--tasks", tmp_path / "nope.json"], "unreadable task list"),
                          (["render", out], "the first argument must be one of bundle, summary")):
        done = run(*args)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
