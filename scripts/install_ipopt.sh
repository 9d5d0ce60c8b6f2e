#!/usr/bin/env bash
# Optional IPOPT backend for `python -m core solve --backend ipopt` (core.dmoc.solve).
# Preferred: cyipopt built from source against the Ipopt 3.14.19 / MUMPS 5.8.2 / METIS shared
# libraries of the pinned casadi wheel (requirements-ipopt.txt; needs a C compiler and
# pkg-config, no root). On the DMOC car tunnel its Ipopt internals take about half the time of
# the cyipopt-wheels build (docs/benchmarks/dmoc.md). Fallbacks, in order: the pinned binary
# wheel cyipopt-wheels (Ipopt 3.14.11, MUMPS 5.5.1 inside; no compiler); cyipopt built against
# the system Ipopt, apt-getting the development packages when running as root.
# Idempotent: does nothing when the preferred build is installed and imports.
# Never fails the caller: when something cannot be done it says why and exits 0, and the solver
# falls back to the scipy backend (the default, which is what Blender uses).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="$root/.venv/bin/python"
pins="$root/requirements-ipopt.txt"
WHEEL_VERSION="1.7.0.dev0"   # cyipopt-wheels (fallback)
CYIPOPT_VERSION="$(sed -n 's/^cyipopt==//p' "$pins")"
CASADI_VERSION="$(sed -n 's/^casadi==//p' "$pins")"
CASADI_IPOPT="(3, 14, 19)"   # cyipopt.IPOPT_VERSION when built against the casadi wheel's Ipopt
PACKAGES=(coinor-libipopt-dev liblapack-dev libblas-dev pkg-config)
pip=("$py" -m pip --disable-pip-version-check)

if [ ! -x "$py" ]; then
  echo "install_ipopt: no virtual environment at $root/.venv (run scripts/ensure_env.sh first); skipping"
  exit 0
fi
installed() { "${pip[@]}" show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }
ipopt_version() { "$py" -c "import cyipopt; print(tuple(cyipopt.IPOPT_VERSION))" 2>/dev/null; }

if [ "$(installed cyipopt)" = "$CYIPOPT_VERSION" ] && [ "$(ipopt_version)" = "$CASADI_IPOPT" ]; then
  echo "install_ipopt: cyipopt $CYIPOPT_VERSION on casadi $CASADI_VERSION's Ipopt 3.14.19 already installed"
  exit 0
fi

# 1. cyipopt from source against the casadi wheel's Ipopt.
build_on_casadi() {
  command -v pkg-config >/dev/null 2>&1 || { echo "install_ipopt: no pkg-config"; return 1; }
  command -v "${CC:-cc}" >/dev/null 2>&1 || { echo "install_ipopt: no C compiler"; return 1; }
  "${pip[@]}" install --quiet --only-binary=:all: "casadi==$CASADI_VERSION" || return 1
  local casadi
  casadi="$("$py" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('casadi').origin))")" || return 1
  [ -f "$casadi/include/coin-or/IpStdCInterface.h" ] && [ -e "$casadi/libipopt.so" ] ||
    { echo "install_ipopt: the casadi wheel carries no Ipopt headers/library"; return 1; }
  local pc
  pc="$(mktemp -d)"
  # casadi's own ipopt.pc names its build machine's prefix; this one names the installed wheel.
  cat > "$pc/ipopt.pc" <<EOF
prefix=$casadi
libdir=\${prefix}
includedir=\${prefix}/include/coin-or
Name: Ipopt
Description: Interior Point Optimizer (shared library of the casadi wheel)
Version: 3.14.19
Cflags: -I\${includedir}
Libs: -L\${libdir} -lipopt
EOF
  # Both distributions own the cyipopt package.
  "${pip[@]}" uninstall --quiet -y cyipopt-wheels cyipopt >/dev/null 2>&1
  # ipopt_wrapper.so lives in site-packages/cyipopt/: find libipopt next door in ../casadi
  # (RPATH, so LD_LIBRARY_PATH cannot swap in another Ipopt). The build's own requirements are
  # pinned through the constraints file; no wheel cache, so no build made elsewhere is reused.
  PKG_CONFIG_PATH="$pc" LDFLAGS='-Wl,--disable-new-dtags,-rpath,$ORIGIN/../casadi' \
    PIP_CONSTRAINT="$pins" "${pip[@]}" install --quiet --no-cache-dir --no-binary cyipopt \
    "cyipopt==$CYIPOPT_VERSION" >"$pc/build.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || tail -n 5 "$pc/build.log"
  rm -rf "$pc"
  [ $rc -eq 0 ] && [ "$(ipopt_version)" = "$CASADI_IPOPT" ]
}
echo "install_ipopt: building cyipopt $CYIPOPT_VERSION against casadi $CASADI_VERSION's Ipopt 3.14.19"
if build_on_casadi; then
  echo "install_ipopt: cyipopt $CYIPOPT_VERSION installed (Ipopt 3.14.19, MUMPS 5.8.2 from casadi $CASADI_VERSION)"
  exit 0
fi
"${pip[@]}" uninstall --quiet -y cyipopt >/dev/null 2>&1

# 2. The binary wheel.
echo "install_ipopt: that build failed; trying the cyipopt-wheels $WHEEL_VERSION binary"
if "${pip[@]}" install --quiet --only-binary=:all: "cyipopt-wheels==$WHEEL_VERSION" >/dev/null 2>&1 &&
   "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt-wheels $WHEEL_VERSION installed (Ipopt 3.14.11 bundled)"
  exit 0
fi
"${pip[@]}" uninstall --quiet -y cyipopt-wheels >/dev/null 2>&1

# 3. The system Ipopt.
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
if ! PIP_CONSTRAINT="$pins" "${pip[@]}" install --quiet --no-cache-dir --no-binary cyipopt "cyipopt==$CYIPOPT_VERSION"; then
  echo "install_ipopt: building cyipopt failed; skipping (scipy backend only)"
  exit 0
fi
if "$py" -c "import cyipopt" >/dev/null 2>&1; then
  echo "install_ipopt: cyipopt $CYIPOPT_VERSION installed"
else
  echo "install_ipopt: cyipopt installed but does not import; scipy backend only"
fi
exit 0
