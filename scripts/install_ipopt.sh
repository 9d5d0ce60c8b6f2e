#!/usr/bin/env bash
# Optional IPOPT backend for `python -m core solve --backend ipopt` (core.dmoc.solve).
# Idempotent: does nothing when cyipopt already imports in .venv. Otherwise, when running
# as root, apt-get installs the IPOPT/LAPACK/BLAS development packages that are missing,
# then pip installs a pinned cyipopt into .venv (it compiles against the system Ipopt).
# Never fails the caller: when something cannot be done it says why and exits 0, and the
# solver falls back to the scipy backend (the default, which is what Blender uses).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$root/.venv/bin/python"
CYIPOPT_VERSION="1.7.0"
PACKAGES=(coinor-libipopt-dev liblapack-dev libblas-dev pkg-config)

if [ ! -x "$py" ]; then
  echo "install_ipopt: no virtual environment at $root/.venv (run scripts/ensure_env.sh first); skipping"
  exit 0
fi
if "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt already installed ($("$py" -c 'import cyipopt; print(cyipopt.__version__)'))"
  exit 0
fi

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
if ! "$py" -m pip install --quiet --disable-pip-version-check "cyipopt==$CYIPOPT_VERSION"; then
  echo "install_ipopt: building cyipopt failed; skipping (scipy backend only)"
  exit 0
fi
if "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt $CYIPOPT_VERSION installed"
else
  echo "install_ipopt: cyipopt installed but does not import; scipy backend only"
fi
exit 0
