"""The two shell scripts a farm job runs (embedded in its template): a Bake task and the Summary.

Both are bash (Linux and macOS workers) and choose the interpreter the same way: the ``Blender``
job parameter when it is set, else the ``Python`` parameter (a Python with the ``bpy`` module). A Bake
task starts Blender with the worker's preferences, so that the Vehicle Motion extension installed and
enabled there (with the scipy it brings) does the solving; ``addon/batch.py`` falls back on the package
it belongs to (the ``VehicleMotion`` parameter's folder) where none is enabled. The Summary needs no
add-on: it runs with ``--factory-startup``.
"""
from __future__ import annotations

BAKE = r"""#!/usr/bin/env bash
# Vehicle Motion farm task: bake one shot (or one of its vehicles) with the batch entry addon/batch.py.
#
# It exits 0 once the outcome is recorded, whatever the outcome. A step runs only after every task of
# the steps it depends on succeeded (Open Job Description; `openjd run` even ends the whole session at
# the first failed task), so a shot that does not converge must not fail its task: the Summary step
# would never run to list it. The real status is in OutputDir/reports/NAME.json (the batch's report)
# and NAME.task (this script's record, one item a line: the batch's exit status, the time limit, a
# message, the start and end times in seconds). The task fails only when it cannot write into
# OutputDir, where nothing could be recorded.
set -u
blender="$1" python="$2" package="$3" out="$4" limit="$5" name="$6" shot="$7"
shift 7
started="${EPOCHREALTIME:-$(date +%s)}"
mkdir -p "$out/reports" "$out/baked" || exit 1
report="$out/reports/$name.json"
record="$out/reports/$name.task"
note_outcome() {
  printf '%s\n%s\n%s\n%s\n%s\n' "$1" "$limit" "$2" "$started" "${EPOCHREALTIME:-$(date +%s)}" > "$record"
}
rm -f "$report"
note_outcome running "" || exit 1
# One BLAS thread: a threaded reduction may add in another order, and every worker must give the same
# bits (the solver's small matrices gain nothing from threads).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
batch="$package/addon/batch.py"
options=(--out "$out/baked/$name.blend" --report "$report" "$@")
guard=()
if command -v timeout >/dev/null 2>&1; then
  guard=(timeout --kill-after=30 "$limit")
fi
if [ -n "$blender" ]; then
  ${guard[@]+"${guard[@]}"} "$blender" -b --python-exit-code 1 --python "$batch" -- \
    "$shot" "${options[@]}"
  status=$?
elif [ -n "$python" ]; then
  ${guard[@]+"${guard[@]}"} "$python" "$batch" "$shot" "${options[@]}"
  status=$?
else
  note_outcome 2 "neither the Blender nor the Python job parameter names an executable"
  exit 0
fi
note_outcome "$status" "" || exit 1
echo "Vehicle Motion: $name: batch exit status $status (0 baked, 3 not converged, 2 bad input)"
exit 0
"""

# ``run`` puts the package folder first on sys.path: the farm's Python (Blender's own, or the Python
# parameter) knows nothing of this checkout.
SUMMARY = r"""#!/usr/bin/env bash
# Vehicle Motion farm job, last step: gather every task's report into OutputDir/summary.json and
# OutputDir/summary.txt (core.farm, plain Python: Blender's own Python runs it when Blender is given).
set -u
blender="$1" python="$2" package="$3" out="$4" tasks="$5"
run='import sys; a = sys.argv[sys.argv.index("--") + 1:]; sys.path.insert(0, a[0]); from core.farm.cli import main; sys.exit(main(a[1:]))'
if [ -n "$blender" ]; then
  exec "$blender" -b --factory-startup --python-exit-code 1 --python-expr "$run" -- \
    "$package" summary "$out" --tasks "$tasks"
fi
if [ -z "$python" ]; then
  echo "Vehicle Motion: neither the Blender nor the Python job parameter names an executable" >&2
  exit 2
fi
exec "$python" -c "$run" -- "$package" summary "$out" --tasks "$tasks"
"""

__all__ = ["BAKE", "SUMMARY"]
