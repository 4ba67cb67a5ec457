#!/usr/bin/env bash
# scripts/test.sh — set up, then run every test:
#   1. the GoogleTest suite (Release), huge-page tests serially;
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. install into a scratch prefix and build a consumer with find_package and pkg-config;
#      compile (and run) every C++ block of the READMEs against that install;
#   4. a smoke run of the demo, so it never rots (the lab programs run end to end in 6);
#   5. self-hosting: the library compiled with libphysmem.so preloaded into the compiler;
#   6. the lab harness (pytest): schemas, report, compare, doctor, and `physmem bench
#      --suite tiny` end to end on the real experiment programs.
#
# As root, the backing tests reserve the huge pages they need (1 x 1 GiB, a few 2 MiB)
# and give them back; nr_hugepages is also restored here on exit, whatever happens.
# PHYSMEM_TEST_RESERVE_HUGE_PAGES=0 turns that off (those tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

hp2m=/proc/sys/vm/nr_hugepages
hp1g=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
if [[ $(id -u) -eq 0 && "${PHYSMEM_TEST_RESERVE_HUGE_PAGES:-1}" == 1 ]]; then
  export PHYSMEM_TEST_RESERVE_HUGE_PAGES=1
  saved2m=$(cat $hp2m); saved1g=$(cat $hp1g 2>/dev/null || echo "")
  restore() {
    echo "$saved2m" > $hp2m || true
    [[ -n "$saved1g" ]] && { echo "$saved1g" > $hp1g || true; }
    echo "test: nr_hugepages now 2 MiB: $(cat $hp2m), 1 GiB: $(cat $hp1g 2>/dev/null || echo n/a) (restored)"
  }
  trap restore EXIT
  echo "test: huge-page tests will reserve pages (2 MiB: $saved2m, 1 GiB: ${saved1g:-n/a} now); restored afterwards"
else
  export PHYSMEM_TEST_RESERVE_HUGE_PAGES=0
fi

# Run alone, after the others: the tests that reserve huge pages (a reservation compacts
# memory, migrating other processes' pages) and the tests that count page faults on memory
# already populated (a page migrated under them faults once on the next touch).
HUGE_TESTS='BackingRung|OneGigPage|Hugetlb|TakesNoFaults|BeforeFirstTouch|FromPrefaultedMemory|NoKernelPageFaults'
log="$(mktemp)"
# Each stage's wall time, printed as it starts the next (the budget: well under 20 minutes).
stage_start=$SECONDS
stage() { echo "   (took $((SECONDS - stage_start)) s)"; stage_start=$SECONDS; echo "== $1"; }
# ctest, with its output kept in $log for the closing count.
run_ctest() { ctest --output-on-failure "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }

echo "== 1. unit tests (Release)"
scripts/setup.sh build
(cd build && run_ctest -j2 -E "$HUGE_TESTS" && run_ctest -R "$HUGE_TESTS")

stage "2. unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
scripts/setup.sh build-san -DCMAKE_BUILD_TYPE=Debug -DPHYSMEM_SANITIZE=address,undefined
(cd build-san && PHYSMEM_TEST_RESERVE_HUGE_PAGES=0 run_ctest -j2)

stage "3. install, then build a consumer with find_package(physmem) and with pkg-config; a C consumer of libphysmem.so"
prefix="$(mktemp -d)"; consumer="$(mktemp -d)"
cmake --install build --prefix "$prefix" >/dev/null
cmake -S examples/consumer -B "$consumer/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$consumer/cmake" >/dev/null
"$consumer/cmake/physmem_consumer"
"$consumer/cmake/physmem_tlbsim_consumer"   # physmem::tlbsim, the README's target name
PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig" \
  bash -c 'g++ examples/consumer/main.cpp -o "$0/pc_consumer" $(pkg-config --cflags --libs physmem)' "$consumer"
"$consumer/pc_consumer"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig" \
  bash -c 'cc tests/malloc/install_consumer.c -o "$0/pm_consumer" $(pkg-config --cflags --libs physmem-malloc)' "$consumer"
"$consumer/pm_consumer"
# The docs tested like code: every C++ block of the READMEs compiled against this install
# (and run where marked).
tests/docs/check_snippets.sh "$prefix"
rm -rf "$prefix" "$consumer"

stage "4. smoke runs"
build/examples/physmem_demo --elements 1M --capacity 64M

stage "5. self-hosting: the core library built with libphysmem.so preloaded into the compiler"
self_lib="$(mktemp -d)/libphysmem.so"; cp build/src/malloc/libphysmem.so "$self_lib"
scripts/setup.sh build-self -DPHYSMEM_BUILD_TESTS=OFF -DPHYSMEM_BUILD_LAB=OFF \
  -DPHYSMEM_BUILD_EXAMPLES=OFF -DPHYSMEM_BUILD_MALLOC=OFF >/dev/null
cmake --build build-self --target clean >/dev/null
LD_PRELOAD="$self_lib" cmake --build build-self
rm -rf "$(dirname "$self_lib")"

stage "6. the lab harness (pytest, end to end on the experiment programs)"
# One worker per CPU (pytest-xdist), a test file to a worker, so a file's module fixtures (a
# tiny bench run) are made once. The modules that may reserve huge pages (one holder per
# machine) take turns through conftest's reservation_turn.
PHYSMEM_LAB_REQUIRE_BUILD=1 .venv/bin/python -m pytest -q -n auto --dist loadfile python/tests 2>&1 | tee "$log.py"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "test: pytest failed"; exit 1; }
py_passed=$(grep -oE '[0-9]+ passed' "$log.py" | tail -1 | awk '{print $1}' || true)
py_skipped=$(grep -oE '[0-9]+ skipped' "$log.py" | tail -1 | awk '{print $1}' || true)
rm -f "$log.py"
# One closing line over every ctest run above (skipped tests are not counted as passed).
total=$(grep -oE 'tests failed out of [0-9]+' "$log" | awk '{s += $5} END {print s + 0}')
failed=$(grep -oE '[0-9]+ tests failed out of' "$log" | awk '{s += $1} END {print s + 0}')
skipped=$(grep -cE '\(Skipped\)$' "$log" || true)
rm -f "$log"
echo "   (took $((SECONDS - stage_start)) s; all stages $SECONDS s)"
echo "test: all stages passed (install, consumer and smoke stages included)"
echo "physmem: $((total - failed - skipped + ${py_passed:-0})) passed, $failed failed, $((skipped + ${py_skipped:-0})) skipped"
