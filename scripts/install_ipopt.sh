#!/usr/bin/env bash
# Optional IPOPT backend for `python -m core solve --backend ipopt` (core.dmoc.solve).
# Preferred: the pinned binary wheel cyipopt-wheels (cyipopt with Ipopt 3.14.11, MUMPS 5.5.1 and
# OpenBLAS inside; no compiler, no root). Where no such wheel exists for this platform, falls
# back to building the pinned cyipopt against the system Ipopt, apt-getting the development
# packages when running as root. Idempotent: does nothing when the pinned wheel is installed.
# Never fails the caller: when something cannot be done it says why and exits 0, and the solver
# falls back to the scipy backend (the default, which is what Blender uses).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$root/.venv/bin/python"
WHEEL_VERSION="1.7.0.dev0"   # cyipopt-wheels
CYIPOPT_VERSION="1.7.0"      # cyipopt (source build, fallback)
PACKAGES=(coinor-libipopt-dev liblapack-dev libblas-dev pkg-config)
pip=("$py" -m pip --disable-pip-version-check)

if [ ! -x "$py" ]; then
  echo "install_ipopt: no virtual environment at $root/.venv (run scripts/ensure_env.sh first); skipping"
  exit 0
fi
installed() { "${pip[@]}" show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }

if [ "$(installed cyipopt-wheels)" = "$WHEEL_VERSION" ] && "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt-wheels $WHEEL_VERSION already installed"
  exit 0
fi
# Both distributions own the cyipopt package: a source-built cyipopt is removed first.
if [ -n "$(installed cyipopt)" ]; then
  "${pip[@]}" uninstall --quiet -y cyipopt >/dev/null 2>&1
fi
if "${pip[@]}" install --quiet --only-binary=:all: "cyipopt-wheels==$WHEEL_VERSION" >/dev/null 2>&1 &&
   "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt-wheels $WHEEL_VERSION installed (Ipopt 3.14.11 bundled)"
  exit 0
fi
"${pip[@]}" uninstall --quiet -y cyipopt-wheels >/dev/null 2>&1
echo "install_ipopt: no cyipopt-wheels $WHEEL_VERSION wheel for this platform; building cyipopt against the system Ipopt"

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install_ipopt: missing system packages ${missing[*]} and not root with apt-get; skipping (scipy backend only)"
    exit 0
  fi
  echo "install_ipopt: apt-get install ${missing[*]}"
  if ! (DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; }); then
    echo "install_ipopt: apt-get could not install ${missing[*]}; skipping (scipy backend only)"
    exit 0
  fi
fi

echo "install_ipopt: pip install cyipopt==$CYIPOPT_VERSION (builds against the system Ipopt)"
if ! "${pip[@]}" install --quiet "cyipopt==$CYIPOPT_VERSION"; then
  echo "install_ipopt: building cyipopt failed; skipping (scipy backend only)"
  exit 0
fi
if "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt $CYIPOPT_VERSION installed"
else
  echo "install_ipopt: cyipopt installed but does not import; scipy backend only"
fi
exit 0
