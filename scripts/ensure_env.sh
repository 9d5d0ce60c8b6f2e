#!/usr/bin/env bash
# Creates or refreshes the project's virtual environment from the pinned requirements and installs
# this checkout into it, editable. Idempotent: reinstalls only what changed (hash stamps in the venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements.txt"
  echo "$want" > "$stamp"
fi
# This checkout, editable (core and the sample scene builders, importable by name).
bash "$root/scripts/install_editable.sh" "$venv"
# Optional IPOPT backend (the cyipopt-wheels binary, or cyipopt built against the system Ipopt);
# never fails the caller.
bash "$root/scripts/install_ipopt.sh"
