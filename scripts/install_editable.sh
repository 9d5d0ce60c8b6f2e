#!/usr/bin/env bash
# Installs this checkout, editable, into the virtual environment VENV (default .venv): core and the
# sample scene builders become importable by name from tests, benchmarks and scripts (pyproject.toml).
#   bash scripts/install_editable.sh [VENV]
# Built with the venv's own pinned setuptools (requirements*.txt), no build isolation, no dependencies
# (the requirements file installs them). Idempotent: skipped while pyproject.toml and the checkout's
# path are those of the last install (hash stamp in the venv) and its modules are found.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$(cd "${1:-$root/.venv}" && pwd)"
python="$venv/bin/python"
stamp="$venv/.editable.sha256"
want="$({ cat "$root/pyproject.toml"; echo "$root"; } | sha256sum | cut -d' ' -f1)"
installed() {
  (cd / && "$python" -c 'import importlib.util as u, sys; sys.exit(not all(map(u.find_spec, ("core", "scene_kit"))))')
}
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && installed; then
  exit 0
fi
"$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps -e "$root"
installed || { echo "install_editable: core is still not importable from $venv" >&2; exit 1; }
echo "$want" > "$stamp"
