#!/usr/bin/env bash
# Fresh machine → pinned environment in .venv → the main job on a bundled sample.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/ensure_env.sh
mkdir -p out
.venv/bin/python -m core simulate samples/tumbling_box.toml --out out/tumbling_box.json
echo "setup: wrote out/tumbling_box.json"
