#!/usr/bin/env bash
# scripts/setup.sh — install what physmem needs (idempotent) and build it.
#
#   scripts/setup.sh [BUILD_DIR [CMAKE_ARGS...]]     default BUILD_DIR: build (Release)
#
# Installs missing Debian packages with apt-get (root, or sudo), the lab harness (the
# `physmem` command, python/) into a virtualenv at .venv with pip, then configures and
# builds with CMake + Ninja. Safe to run again: it installs nothing already present and
# rebuilds only what changed. PHYSMEM_SETUP_PYTHON=0 skips the harness; PHYSMEM_SETUP_TARGET=T
# builds only CMake target T (scripts/run.sh: physmem_main_job, the programs the lab runs).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ libgtest-dev pkgconf nlohmann-json3-dev python3-venv sqlite3
  time  # the programs suite: GNU time reads a child's peak RSS
  redis-server redis-tools  # the redis suite: a real server under each allocator
  liburing-dev  # the paged array's asynchronous I/O
  libstxxl-dev fio  # the paging suite's out-of-core peer, and its bar: the device read by fio
  # peers the lab measures against: allocators (LD_PRELOAD) and BLAS (dlopen)
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libopenblas0-pthread libblas3)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The harness: reinstalled only when python/pyproject.toml changes (the stamp holds its hash).
# It installs in the background while CMake builds (pip is ~15 s of mostly one core, the
# build is minutes of both); --no-compile: modules are byte-compiled when first imported.
harness_pid=""
install_harness() {
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  .venv/bin/pip install -q --no-compile --disable-pip-version-check -e 'python[test]'
  echo "$want" > "$stamp"
}
if [[ "${PHYSMEM_SETUP_PYTHON:-1}" == 1 && -f python/pyproject.toml ]]; then
  stamp=.venv/.physmem-setup
  want="$(sha256sum python/pyproject.toml | cut -d' ' -f1)"
  if [[ ! -x .venv/bin/physmem || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    echo "setup: installing the lab harness into .venv (pip, beside the build)"
    install_harness & harness_pid=$!
  fi
fi

build_dir="${1:-build}"
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
# PHYSMEM_SETUP_TARGET: build only that target (scripts/run.sh: physmem_main_job).
cmake --build "$build_dir" ${PHYSMEM_SETUP_TARGET:+--target "$PHYSMEM_SETUP_TARGET"}
if [[ -n "$harness_pid" ]] && ! wait "$harness_pid"; then
  echo "setup: installing the lab harness failed (pip; see above)" >&2
  exit 1
fi
