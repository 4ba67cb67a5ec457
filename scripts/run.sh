#!/usr/bin/env bash
# scripts/run.sh — the main job: set up, build, run every suite (lab, alloc, alias,
# prefault, stack) at the default scale and write the report (results/report/report.md
# and report.html), printing the headline table. Meant to fit 10 minutes on a 2-core VM
# (sizes follow the machine's caches, repetitions stop once their spread is tight; the
# README's "Lab numbers" say what it took).
#
#   scripts/run.sh [physmem bench arguments...]   e.g. --full (every suite at full scale:
#                                                 the seed papers' sizes, hours), --suite lab,
#                                                 --scale tiny, --no-reserve
#
# As root the run reserves the 1 GiB pages its *-1g variants need, says so before it
# starts, and restores nr_hugepages at the end (--no-reserve: no system change; those
# points are then skipped and the report says why).
set -euo pipefail
cd "$(dirname "$0")/.."
PHYSMEM_SETUP_TARGET=physmem_main_job scripts/setup.sh build  # the lab, tools and libphysmem.so only

mkdir -p results
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
.venv/bin/physmem bench --suite all -o "results/lab-$stamp.json" --report results/report "$@"
cp "results/lab-$stamp.json" results/latest.json
echo "run: results in results/lab-$stamp.json (also results/latest.json); report in results/report/"
