"""The ``redis`` suite (issue 26): a real server under each allocator — Debian's redis-server
with glibc, jemalloc, tcmalloc, mimalloc or libphysmem.so preloaded.

Program: ``physmem_lab_redis`` (lab/experiments/redis.cpp). One process per allocator and
round starts two servers on Unix sockets: one timed with redis-benchmark, one command per
phase (the record's timing is the first command, ``phases`` the others: ns per request,
the benchmark's start-up included; the benchmark's own requests/s are in
``redis.throughput.benchmark_rps``), and one filled with keys of 16-1024 bytes of which
70% are then deleted, read after an idle time (``redis.footprint``: peak RSS, RSS after
the idle time, redis's used_memory; every kept value read back). Payload contract:
lab/schema/payloads/redis.schema.json.

Contract: every number shown comes from the records; the goal's threshold is the only
constant. Rounds interleave the allocators (lab/PROTOCOL.md, "Order"); tables show the
pooled timing and round 0's payload.
"""
from typing import Dict, List, Optional

from .analysis import Goal, Item, PhaseRatio, Value
from .suitedef import M, Point, Row, SuiteDef, Variant

REDIS = "redis"
PEERS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
PHYSMEM = "physmem"
ALLOCATORS = PEERS + (PHYSMEM,)
VARIANT = {PHYSMEM: Variant("malloc", "thp"), **{p: Variant("malloc", "4k") for p in PEERS}}
COMMANDS = ("set", "get", "lpush", "lpop", "sadd", "hset")   # the program's default order

# Per scale: the footprint's value bytes (--size), requests per benchmark pass and the idle
# time after the deletes. Full: about a million keys, as issue 26 measured.
SHAPES = {
    "tiny": (8 * M, {"requests": "20000", "idle-ms": "200"}),
    "default": (64 * M, {"requests": "100000", "idle-ms": "1000"}),
    "full": (512 * M, {"requests": "1000000", "idle-ms": "10000"}),
}

ROWS = tuple(Row(REDIS, (VARIANT[a],), sizes={scale: (size,)}, params=({"alloc": a, **extra},), priority=0)
             for scale, (size, extra) in SHAPES.items() for a in ALLOCATORS)

SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 1, "cap": None, "budget_s": 30},
    "default": {"reps": 6, "warmup": 0, "min_rep_ms": 1, "cap": None, "budget_s": 70, "rounds": 2},
    "full": {"reps": 10, "warmup": 0, "min_rep_ms": 1, "cap": None, "budget_s": None, "rounds": 2},
}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one rep: every command once at ~1 M requests/s (ETA and budget only)."""
    return len(COMMANDS) * 1.3 * int(p.params.get("requests", "100000")) / 1e6


def setup_s(p: Point) -> float:
    """Two server start-ups, the footprint's fill, deletes and read-back (~0.5 s per 64 MiB
    on the development VM) and its idle time."""
    return 0.5 + 0.5 * p.size_bytes / (64 * M) + int(p.params.get("idle-ms", "1000")) / 1e3


# ---------------------------------------------------------------- lookups

def _recs(recs) -> Dict[str, dict]:
    """allocator -> its record (the last one when there are several)."""
    return {r["redis"]["allocator"]: r for r in recs.all if r["experiment"] == REDIS}


def _commands(r: dict) -> List[str]:
    return list(r["redis"]["throughput"]["benchmark_rps"])


def _phase(r: dict, command: str) -> Optional[str]:
    """The phase holding ``command``'s timing (None: the record's own timing)."""
    return None if _commands(r)[0] == command else command


def _ns(r: dict, command: str) -> float:
    ph = _phase(r, command)
    return (r["phases"][ph] if ph else r)["median_ns"]


def _rps(r: dict, command: str) -> float:
    xs = sorted(r["redis"]["throughput"]["benchmark_rps"][command])
    return xs[len(xs) // 2]


def _best_peer(by: Dict[str, dict], command: str) -> Optional[str]:
    have = [a for a in PEERS if a in by and command in _commands(by[a])]
    return min(have, key=lambda a: _ns(by[a], command)) if have else None


# ---------------------------------------------------------------- report

def _throughput_table(doc, by):
    cmds = [c for c in COMMANDS if any(c in _commands(r) for r in by.values())]
    rows = []
    for a in [a for a in ALLOCATORS if a in by]:
        r = by[a]
        rows.append([a, r["variant"]] + [f"{1e6 / _ns(r, c):.0f} ({_rps(r, c) / 1e3:.0f})" if c in _commands(r) else "-"
                                         for c in cmds])
    doc.table(["allocator", "variant"] + [c.upper() for c in cmds], rows)
    doc.p("k requests/s from the lab's timing of each redis-benchmark run (its start-up included), "
          "in brackets the median rate redis-benchmark itself reports.")


def _footprint_table(doc, by):
    rows = []
    for a in [a for a in ALLOCATORS if a in by]:
        f = by[a]["redis"]["footprint"]
        rows.append([a, f"{f['keys']}", f"{f['value_bytes'] / M:.0f}", f"{f['peak_rss_bytes'] / M:.0f}",
                     f"{f['rss_after_idle_bytes'] / M:.0f}", f"{f['used_memory_after_bytes'] / M:.1f}",
                     f"{f['rss_over_used']:.2f}x", f"{f['thp_after_idle_bytes'] / max(f['anon_after_idle_bytes'], 1):.0%}"])
    doc.table(["allocator", "keys", "values MiB", "peak RSS MiB", "RSS after deletes + idle MiB",
               "redis used_memory MiB", "RSS / used", "anon on THP"], rows)


def report(doc, recs, results, out_dir):
    """The suite's section: throughput per command and the footprint after deletes."""
    by = _recs(recs)
    if not by:
        doc.p("No redis record (redis-server not installed, or every point failed: see Skipped and Errors).")
        return
    any_r = next(iter(by.values()))
    x = any_r["redis"]
    doc.p(f"{x['server']}; over a {x['transport']}; redis-benchmark -n {x['requests']} -r {x['requests']} "
          f"-c {x['clients']} -P {x['pipeline']} -d {x['value_bytes']}, one run per pass and command.")
    doc.h(3, "Throughput (k requests/s)")
    _throughput_table(doc, by)
    doc.h(3, "Footprint: keys of 16-1024 bytes, 70% deleted, then idle")
    f = x["footprint"]
    doc.p(f"Idle {f['idle_ms']} ms with no client call before RSS is read; every kept value then read back "
          f"and compared. THEIRS (Mesh, PLDI 2019): compaction by meshing cut redis's RSS by 39% on a test "
          f"of this kind.")
    _footprint_table(doc, by)


# ---------------------------------------------------------------- goals

GOAL_TITLES = {1: "redis-benchmark: physmem's time per request <= the best other allocator's on every command"}


def _goal_throughput(recs) -> Goal:
    g = Goal("redis-1", GOAL_TITLES[1])
    by = _recs(recs)
    if PHYSMEM not in by:
        g.missing.append("no redis record under physmem")
        return g
    me = by[PHYSMEM]
    for c in _commands(me):
        peer = _best_peer(by, c)
        if not peer:
            g.missing.append(f"{c}: no peer measured")
            continue
        g.items.append(Item(f"{c.upper()}: physmem / {peer} (fastest peer)",
                            PhaseRatio(me, by[peer], _phase(me, c), _phase(by[peer], c)), 1.0))
    for a in PEERS:
        if a not in by:
            g.missing.append(f"{a}: no record")
    f = me["redis"]["footprint"]
    best = min((by[a]["redis"]["footprint"]["rss_after_idle_bytes"], a) for a in by)
    g.notes.append(f"footprint after deletes and idle: physmem {f['rss_after_idle_bytes'] / M:.0f} MiB, "
                   f"smallest {best[1]} {best[0] / M:.0f} MiB")
    return g


def goals(recs) -> List[Goal]:
    return [_goal_throughput(recs)]


SUITE = SuiteDef(REDIS, "A real server: redis-server under each allocator", ROWS, SCALES,
                 pass_s=pass_s, setup_s=setup_s, report=report, goals=goals)
