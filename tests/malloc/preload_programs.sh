#!/usr/bin/env bash
# tests/malloc/preload_programs.sh LIB PROGRAM — run a real program with LIB preloaded
# and check its output equals the output without it. Exit 77 (CTest: skipped) when the
# program is not installed. PHYSMEM_MALLOC_STATS=1 shows the allocator's counters.
set -euo pipefail
lib="$1"; prog="$2"
command -v "$prog" >/dev/null || { echo "$prog not installed: skipped"; exit 77; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pre() { LD_PRELOAD="$lib" PHYSMEM_MALLOC_STATS=1 "$@"; }

case "$prog" in
  python3)
    cat > "$tmp/work.py" <<'PY'
import hashlib, json, random
random.seed(4)
d = {}
for i in range(200000):
    d[str(i)] = [random.random() for _ in range(i % 7)]
blob = json.dumps(d, sort_keys=True)
big = [bytearray(random.randrange(1 << 20)) for _ in range(20)]
for b in big:
    b[-1:] = b"x"
print(len(d), sum(len(b) for b in big), hashlib.sha256(blob.encode()).hexdigest())
PY
    run() { "$@" python3 "$tmp/work.py"; } ;;
  sqlite3)
    sql="create table t(a integer primary key, b text, c real);
with recursive n(i) as (select 1 union all select i + 1 from n where i < 200000)
insert into t select i, hex(i * i) || substr('abcdefghij', 1 + i % 10), i * 0.5 from n;
create index tb on t(b);
select count(*), sum(length(b)), sum(c), count(distinct substr(b, -3)) from t;"
    run() { rm -f "$tmp/db"; "$@" sqlite3 "$tmp/db" "$sql"; } ;;
  git)
    run() {
      rm -rf "$tmp/repo"; mkdir "$tmp/repo"
      ( cd "$tmp/repo"
        export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
        "$@" git init -q .
        for i in $(seq 1 200); do echo "line $i" > "f$i.txt"; done
        "$@" git add . && "$@" git -c user.name=t -c user.email=t@e commit -q -m first
        "$@" git log --format='%H %s' && "$@" git count-objects && "$@" git fsck --no-progress )
    } ;;
  *) echo "unknown program $prog"; exit 2 ;;
esac

plain="$(run env)"
preloaded="$(run pre 2>"$tmp/err")"
echo "without: $plain" | head -c 400; echo
echo "with:    $preloaded" | head -c 400; echo
grep -m3 physmem "$tmp/err" || true
if grep -q "physmem: fatal" "$tmp/err"; then cat "$tmp/err"; exit 1; fi
[[ "$plain" == "$preloaded" ]] || { echo "outputs differ"; exit 1; }
echo "$prog: same output with libphysmem.so preloaded"
