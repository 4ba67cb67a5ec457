#!/usr/bin/env bash
# scripts/run.sh — the main job: set up, build, and run the default demonstration and
# the scan benchmark (tree vs contiguous, side by side). Until the lab exists this is
# physmem's default run. Extra arguments go to the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

echo "== physmem_demo: a pool and a tree array, and what the machine gave them"
build/examples/physmem_demo
echo
echo "== physmem_scan_bench: tree / contiguous on the same backing (a benchmark, not a test)"
build/bench/physmem_scan_bench "$@"
