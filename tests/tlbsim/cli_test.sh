#!/usr/bin/env bash
# physmem-tlbsim end to end: presets/detect/show/validate print JSON, run simulates a trace
# file written here by hand, and bad input is a usage error (exit 2) or a read error (exit 3).
# usage: cli_test.sh PATH/TO/physmem-tlbsim
set -euo pipefail
tool=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

[ "$("$tool" presets | json 'len(d["presets"])')" -ge 8 ] || fail "presets"
"$tool" detect | json 'd["vendor"]' >/dev/null || fail "detect"
# auto always names a machine, where it comes from and why, whatever this CPU is.
det=$("$tool" detect)
[ "$(echo "$det" | json 'd["preset"] is not None and d["source"] in ("cpuid", "table", "nearest") and bool(d["reason"])')" = True ] \
    || fail "detect: no machine, source or reason: $det"
[ "$("$tool" show auto | json 'd["machine"]["name"]')" = "$(echo "$det" | json 'd["preset"]')" ] || fail "show auto"
b=$("$tool" bench --preset auto --refs 3000 --reps 1) || fail "bench --preset auto exited $?"
[ "$(echo "$b" | json 'd["preset"] == d["auto"]["preset"] and d["min_refs_per_second"] > 0 and d["min_refs_per_cpu_second"] > 0')" = True ] \
    || fail "bench --preset auto: $b"
# bench --preset all: this CPU's model and every preset, the top level being the slowest.
b=$("$tool" bench --preset all --refs 3000 --reps 1) || fail "bench --preset all exited $?"
names=$("$tool" presets | json '" ".join(sorted(p["name"] for p in d["presets"]))')
[ "$(echo "$b" | json '" ".join(sorted(e["asked"] for e in d["every_preset"] if e["asked"] != "auto"))')" = "$names" ] \
    || fail "bench --preset all: not every preset: $b"
[ "$(echo "$b" | json 'd["every_preset"][0]["asked"] == "auto" and d["min_refs_per_second"] == min(e["min_refs_per_second"] for e in d["every_preset"]) and d["preset"] == min(d["every_preset"], key=lambda e: e["min_refs_per_second"])["preset"] and d["min_refs_per_cpu_second"] == min(e["min_refs_per_cpu_second"] for e in d["every_preset"])')" = True ] \
    || fail "bench --preset all: the top level is not the slowest: $b"
# --levels 5 applies to the 4 KiB-granule presets; the others are skipped, said why.
b=$("$tool" bench --preset all --levels 5 --refs 3000 --reps 1) || fail "bench --preset all --levels 5 exited $?"
[ "$(echo "$b" | json 'len(d["skipped"]) > 0 and all(s["why"] for s in d["skipped"]) and all("64k" in s["preset"] or "16k" in s["preset"] or s["preset"] == "none" for s in d["skipped"])')" = True ] \
    || fail "bench --preset all --levels 5: skipped: $b"
[ "$("$tool" show skylake --levels 5 | json 'd["machine"]["levels"]')" = 5 ] || fail "show --levels 5"
[ "$("$tool" validate | json 'd["ok"]')" = True ] || fail "validate"

# A trace: 512 4 KiB pages touched twice in order, each preceded by one software-walk load
# on a 2 MiB page: 1024 data refs + 1024 walk loads.
python3 - "$dir/t.trace" <<'PY'
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"PMTRACE1")
    for _ in range(2):
        for p in range(512):
            f.write(struct.pack("<Q", (1 << 40) | 1 | 4))             # sw walk, 2 MiB page
            f.write(struct.pack("<Q", (1 << 41) + p * 4096))          # data, 4 KiB page
PY
out=$("$tool" run --preset skylake "$dir/t.trace")
[ "$(echo "$out" | json 'd["stats"]["accesses"]')" = 2048 ] || fail "run: accesses"
[ "$(echo "$out" | json 'd["stats"]["sw_walk_loads"]')" = 1024 ] || fail "run: sw walk loads"
# 512 pages fit the 1536-entry STLB: walks only on the first pass (512) + the one 2 MiB page.
[ "$(echo "$out" | json 'd["stats"]["walks"]')" = 513 ] || fail "run: walks $(echo "$out" | json 'd["stats"]["walks"]')"
[ "$("$tool" run --preset skylake --warmup 1024 "$dir/t.trace" | json 'd["stats"]["walks"]')" = 0 ] || fail "run --warmup"
[ "$("$tool" run --preset none "$dir/t.trace" | json 'd["stats"]["walks"]')" = 0 ] || fail "run none"

# What-if page sizes: 64 KiB pages hold the 2 MiB of data in 32 pages, the walk load's in 1.
[ "$("$tool" show skylake --page-size 64K | json '(d["machine"]["name"], d["machine"]["what_if_page_size"])')" = "('skylake@64k', 65536)" ] \
    || fail "show --page-size 64K"
[ "$("$tool" run --preset skylake --page-size 64K "$dir/t.trace" | json 'd["stats"]["walks"]')" = 33 ] || fail "run --page-size 64K"
# whatif: every size 4k..1g; the 1024 data refs (walk loads left out) walk on 512 4 KiB pages
# (0.5 a ref), and a tree over 4 KiB blocks enters a new block at every ref (1.0).
w=$("$tool" whatif --preset skylake "$dir/t.trace")
[ "$(echo "$w" | json '([s["page_size"] for s in d["sizes"]][::6], d["data_refs"])')" = "(['4k', '256k', '16m', '1g'], 1024)" ] \
    || fail "whatif sizes: $w"
[ "$(echo "$w" | json '(d["sizes"][0]["paging"]["walks"], d["sizes"][0]["tree"]["walks"], d["sizes"][-1]["tree"]["walks"])')" = "(0.5, 1.0, 0.0)" ] \
    || fail "whatif walks: $w"

# ARM granules: the 64 KiB one has 3 levels and 64 KiB base pages: the 2 MiB of data is 32
# pages, the walk load's 2 MiB-tagged page one 512 MiB block; all fit the 48-entry L1.
[ "$("$tool" show neoverse-n1-64k | json '(d["machine"]["granule"], d["machine"]["levels"])')" = "(65536, 3)" ] \
    || fail "show neoverse-n1-64k"
[ "$("$tool" run --preset neoverse-n1-64k "$dir/t.trace" | json 'd["stats"]["walks"]')" = 33 ] || fail "run neoverse-n1-64k"

set +e
err=$("$tool" show neoverse-v2-16k --levels 5 2>&1 >/dev/null); code=$?
[ $code = 2 ] && [[ "$err" == *"4 KiB granule"* ]] || fail "--levels 5 on a 16 KiB granule: exit $code, $err"
for bad in 3000 2G 2K 64Q; do
    err=$("$tool" show skylake --page-size $bad 2>&1 >/dev/null); code=$?
    [ $code = 2 ] && [[ "$err" == *"--page-size"* ]] || fail "--page-size $bad: exit $code, $err"
done
"$tool" whatif --preset skylake --page-size 64K "$dir/t.trace" 2>/dev/null; [ $? = 2 ] || fail "whatif --page-size must exit 2"
"$tool" run --preset nosuch "$dir/t.trace" 2>/dev/null; [ $? = 2 ] || fail "unknown preset must exit 2"
"$tool" run --preset skylake --levels 3 "$dir/t.trace" 2>/dev/null; [ $? = 2 ] || fail "--levels 3 must exit 2"
"$tool" frobnicate 2>/dev/null; [ $? = 2 ] || fail "unknown command must exit 2"
"$tool" run --preset skylake "$dir/missing" 2>/dev/null; [ $? = 3 ] || fail "missing trace must exit 3"
printf 'PMTRACE1abc' > "$dir/bad"
"$tool" run --preset skylake "$dir/bad" 2>/dev/null; [ $? = 3 ] || fail "truncated trace must exit 3"
set -e
echo "physmem-tlbsim CLI: ok"
