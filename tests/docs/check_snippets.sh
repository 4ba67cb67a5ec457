#!/usr/bin/env bash
# tests/docs/check_snippets.sh PREFIX — compiles every ```cpp block of the READMEs against
# the physmem installed in PREFIX and runs those marked <!-- run --> (each must exit 0).
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="$1"; work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 tests/docs/snippets.py "$work/src" README.md python/README.md lab/PROTOCOL.md
cmake -S tests/docs -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DSNIPPET_DIR="$work/src" >/dev/null
cmake --build "$work/build" >/dev/null
while read -r name mode where; do
  [[ "$mode" == run ]] || { echo "docs: $where compiles"; continue; }
  (cd "$work" && "$work/build/$name" >/dev/null) || { echo "docs: $where: the program failed"; exit 1; }
  echo "docs: $where compiles and runs"
done < "$work/src/snippets.txt"
