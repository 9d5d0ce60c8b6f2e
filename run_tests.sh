#!/usr/bin/env bash
# Lint (ruff, mypy), then every test: the pure-Python core, then the Blender tests in real bpy 4.5 LTS
# (.venv) and 5.0 (.venv-bpy50). Installs what it needs first (pinned; idempotent).
set -uo pipefail
cd "$(dirname "$0")"
# Small-matrix numpy: OpenBLAS threads only add contention (16× slower batched 6×6 solves here).
export OPENBLAS_NUM_THREADS=1
bash scripts/ensure_env.sh || exit 1
status=0
# Lint first (settings: pyproject.toml); findings fail the run, and the tests still run.
echo "== ruff check ."
.venv/bin/ruff check . || status=1
echo "== mypy (core/lie, core/vehicles)"
.venv/bin/mypy || status=1
.venv/bin/python -m pytest tests/core -q -p no:cacheprovider || status=1
bash scripts/test_blender.sh --setup || status=1
exit $status
