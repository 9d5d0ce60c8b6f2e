#!/usr/bin/env bash
# Every test: the pure-Python core, then Blender (bpy) tests. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/ensure_env.sh
.venv/bin/python -m pytest tests/core -q -p no:cacheprovider
