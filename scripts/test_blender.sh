#!/usr/bin/env bash
# Runs tests/blender once with every bpy virtual environment present:
#   .venv        bpy 4.5 LTS (requirements.txt, made by scripts/ensure_env.sh)
#   .venv-bpy50  bpy 5.0     (requirements-bpy50.txt)
#   .venv-bpy*   any other   (e.g. .venv-bpy42; with scripts/install_editable.sh run for it)
# --setup first creates or refreshes .venv-bpy50 from requirements-bpy50.txt and installs this checkout
# into it, editable (idempotent).
# Extra arguments go to pytest. Each run is bounded by a timeout: bpy 4.5 hangs at exit
# if an operator class is left registered, and a hang must fail, not stall CI.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${1:-}" = "--setup" ]; then
  shift
  venv=.venv-bpy50
  want="$(sha256sum requirements-bpy50.txt | cut -d' ' -f1)"
  py="${PYTHON:-python3.11}"
  command -v "$py" >/dev/null 2>&1 || py=python3
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" || exit 1
  if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-bpy50.txt || exit 1
    echo "$want" > "$venv/.requirements.sha256"
  fi
  bash scripts/install_editable.sh "$venv" || exit 1
fi

status=0
ran=0
for venv in .venv .venv-bpy*; do
  python="$venv/bin/python"
  [ -x "$python" ] || continue
  version="$("$python" -c 'import bpy; print(bpy.app.version_string)' 2>/dev/null)" || continue
  echo "== tests/blender with bpy $version ($venv)"
  timeout "${BLENDER_TEST_TIMEOUT:-1200}" "$python" -m pytest tests/blender -q -p no:cacheprovider "$@"
  rc=$?
  [ $rc -eq 124 ] && echo "tests/blender with $venv timed out (exit hang?)"
  [ $rc -ne 0 ] && status=1
  ran=$((ran + 1))
done
if [ $ran -eq 0 ]; then
  echo "no virtual environment with bpy found (run scripts/ensure_env.sh, or this script with --setup)"
  exit 1
fi
exit $status
