"""The ``redis`` suite (issue 26): a real server under each allocator — Debian's redis-server
with glibc, jemalloc, tcmalloc, mimalloc or libphysmem.so preloaded.

Program: ``physmem_lab_redis`` (lab/experiments/redis.cpp). One process measures physmem
and its four peers side by side: one server per allocator timed with redis-benchmark, one
command per phase, every peer's pass run just before physmem's (this machine's speed drifts
by tens of percent between processes a minute apart: the first version of this suite, one
process per allocator, gave rounds that disagreed by 1.3x), so each ratio is a median of
paired passes. Then, per allocator, a server filled with keys of 16-1024 bytes of which 70%
are deleted, read after an idle time (peak RSS, RSS after the idle time, redis's
used_memory; every kept value read back). Payload contract:
lab/schema/payloads/redis.schema.json.

Contract: every number shown comes from the records; the goal's threshold is the only
constant.
"""
import statistics
from typing import Dict, List, Optional, Tuple

from .analysis import Goal, Item, Value
from .suitedef import M, Point, Row, SuiteDef, Variant

REDIS = "redis"
PEERS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
PHYSMEM = "physmem"
ALLOCATORS = PEERS + (PHYSMEM,)
COMMANDS = ("set", "get", "lpush", "lpop", "sadd", "hset")   # the program's default order

# Per scale: the footprint's value bytes (--size), requests per benchmark pass and the idle
# time after the deletes. Full: about a million keys, as issue 26 measured.
SHAPES = {
    "tiny": (8 * M, {"requests": "20000", "idle-ms": "200"}),
    "default": (64 * M, {"requests": "100000", "idle-ms": "1000"}),
    "full": (512 * M, {"requests": "1000000", "idle-ms": "10000"}),
}

ROWS = tuple(Row(REDIS, (Variant("malloc", "thp"),), sizes={scale: (size,)},
                 params=({"alloc": PHYSMEM, "peers": ",".join(PEERS), **extra},), priority=0)
             for scale, (size, extra) in SHAPES.items())

SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 1, "cap": None, "budget_s": 30},
    "default": {"reps": 3, "warmup": 1, "min_rep_ms": 1, "cap": None, "budget_s": 45},
    "full": {"reps": 11, "warmup": 1, "min_rep_ms": 1, "cap": None, "budget_s": None},
}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one rep: every command once per allocator at ~1 M requests/s, with
    its reset (ETA and budget only)."""
    return len(ALLOCATORS) * len(COMMANDS) * 1.5 * int(p.params.get("requests", "100000")) / 1e6


def setup_s(p: Point) -> float:
    """Per allocator: two server start-ups, the footprint's fill, deletes and read-back
    (~0.5 s per 64 MiB on the development VM) and its idle time."""
    one = 0.3 + 0.5 * p.size_bytes / (64 * M) + int(p.params.get("idle-ms", "1000")) / 1e3
    return len(ALLOCATORS) * one


# ---------------------------------------------------------------- lookups

def _rec(recs) -> Optional[dict]:
    """The redis record (the last when there are several)."""
    rs = [r for r in recs.all if r["experiment"] == REDIS]
    return rs[-1] if rs else None


def _per(r: dict) -> Dict[str, dict]:
    return r["redis"]["allocators"]


def _ns(r: dict, a: str, c: str) -> List[float]:
    return _per(r)[a]["ns_per_request"].get(c, [])


def paired(r: dict, a: str, b: str, c: str) -> List[float]:
    """a's time per request over b's, pass by pass (pass i of each: a second apart)."""
    return [x / y for x, y in zip(_ns(r, a, c), _ns(r, b, c)) if y > 0]


def _worst_peer(r: dict, c: str) -> Optional[Tuple[str, List[float]]]:
    """The peer physmem compares worst against on command c, with the paired ratios."""
    cands = [(p, paired(r, PHYSMEM, p, c)) for p in PEERS if p in _per(r)]
    cands = [(p, xs) for p, xs in cands if xs]
    return max(cands, key=lambda t: statistics.median(t[1])) if cands else None


# ---------------------------------------------------------------- report

def _med(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def _throughput_table(doc, r):
    cmds = r["redis"]["commands"]
    rows = []
    for a in [a for a in ALLOCATORS if a in _per(r)]:
        rows.append([a] + [f"{1e6 / _med(_ns(r, a, c)):.0f} ({_med(_per(r)[a]['benchmark_rps'][c]) / 1e3:.0f})"
                           for c in cmds])
    for p in [p for p in PEERS if p in _per(r) and PHYSMEM in _per(r)]:
        rows.append([f"physmem / {p}, time"] + [_ratio_cell(paired(r, PHYSMEM, p, c)) for c in cmds])
    doc.table(["allocator"] + [c.upper() for c in cmds], rows)
    doc.p("k requests/s from the lab's timing of each redis-benchmark run (its start-up included; median "
          "over the passes), in brackets the median rate redis-benchmark itself reports. Ratios: median "
          "[min-max] of physmem's time over the peer's, pass by pass (the peer's pass ran just before).")


def _ratio_cell(xs) -> str:
    return f"{_med(xs):.2f}x [{min(xs):.2f}-{max(xs):.2f}]" if xs else "-"


def _footprint_table(doc, r):
    rows = []
    for a in [a for a in ALLOCATORS if a in _per(r)]:
        f = _per(r)[a]["footprint"]
        rows.append([a, f"{f['keys']}", f"{f['value_bytes'] / M:.0f}", f"{f['peak_rss_bytes'] / M:.0f}",
                     f"{f['rss_after_idle_bytes'] / M:.0f}", f"{f['used_memory_after_bytes'] / M:.1f}",
                     f"{f['rss_over_used']:.2f}x", f"{f['thp_after_idle_bytes'] / max(f['anon_after_idle_bytes'], 1):.0%}"])
    doc.table(["allocator", "keys", "values MiB", "peak RSS MiB", "RSS after deletes + idle MiB",
               "redis used_memory MiB", "RSS / used", "anon on THP"], rows)


def report(doc, recs, results, out_dir):
    """The suite's section: throughput per command and the footprint after deletes."""
    r = _rec(recs)
    if not r:
        doc.p("No redis record (redis-server not installed, or the point failed: see Skipped and Errors).")
        return
    x = r["redis"]
    doc.p(f"{x['server']}; over a {x['transport']}; redis-benchmark -n {x['requests']} -r {x['requests']} "
          f"-c {x['clients']} -P {x['pipeline']} -d {x['value_bytes']}, one run per pass and command, "
          f"{r['reps']} passes per allocator and command, the allocators interleaved in one process; "
          f"physmem on backing {x.get('physmem_backing', '?')}.")
    doc.h(3, "Throughput (k requests/s)")
    _throughput_table(doc, r)
    doc.h(3, "Footprint: keys of 16-1024 bytes, 70% deleted, then idle")
    f = _per(r)[x["allocator"]]["footprint"]
    doc.p(f"Idle {f['idle_ms']} ms with no client call before RSS is read; every kept value then read back "
          f"and compared. THEIRS (Mesh, PLDI 2019): compaction by meshing cut redis's RSS by 39% on a test "
          f"of this kind.")
    _footprint_table(doc, r)


# ---------------------------------------------------------------- goals

GOAL_TITLES = {1: "redis-benchmark: physmem's time per request <= every other allocator's on every command "
                  "(median of paired passes)"}


def _goal_throughput(recs) -> Goal:
    g = Goal("redis-1", GOAL_TITLES[1])
    r = _rec(recs)
    if not r or PHYSMEM not in _per(r):
        g.missing.append("no redis record with physmem")
        return g
    for c in r["redis"]["commands"]:
        worst = _worst_peer(r, c)
        if not worst:
            g.missing.append(f"{c}: no peer measured")
            continue
        p, xs = worst
        g.items.append(Item(f"{c.upper()}: physmem / {p} (the peer it compares worst against)",
                            Value(r, _med(xs), _ratio_cell(xs) + f" over {len(xs)} paired passes", min(xs), max(xs)),
                            1.0))
    g.missing += [f"{p}: not measured" for p in PEERS if p not in _per(r)]
    fp = {a: v["footprint"]["rss_after_idle_bytes"] for a, v in _per(r).items()}
    best = min(fp, key=fp.get)
    g.notes.append(f"footprint after deletes and idle: physmem {fp[PHYSMEM] / M:.0f} MiB, smallest {best} "
                   f"{fp[best] / M:.0f} MiB")
    return g


def goals(recs) -> List[Goal]:
    return [_goal_throughput(recs)]


SUITE = SuiteDef(REDIS, "A real server: redis-server under each allocator", ROWS, SCALES,
                 pass_s=pass_s, setup_s=setup_s, report=report, goals=goals)
