#!/usr/bin/env bash
# Fresh machine → pinned environment in .venv → the main job on a bundled sample.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/ensure_env.sh
export OPENBLAS_NUM_THREADS=1
# The main job: build the car-through-a-tunnel scene in Blender (bpy), solve the optimal
# motion, bake it to F-curves, save out/car_tunnel.blend and draw the baked path to out/car_tunnel.png.
.venv/bin/python samples/main_job.py
