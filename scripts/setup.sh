#!/usr/bin/env bash
# scripts/setup.sh — install what physmem needs (idempotent) and build it.
#
#   scripts/setup.sh [BUILD_DIR [CMAKE_ARGS...]]     default BUILD_DIR: build (Release)
#
# Installs missing Debian packages with apt-get (root, or sudo), then configures and
# builds with CMake + Ninja. Safe to run again: it installs nothing already present and
# rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake ninja-build g++ libgtest-dev pkgconf nlohmann-json3-dev)

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

build_dir="${1:-build}"
shift || true
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir"
