"""The ``alloc`` suite (issue 4): libphysmem.so against glibc, jemalloc, tcmalloc and
mimalloc on allocation workloads, each allocator preloaded into a fresh process.

Program: ``physmem_lab_alloc`` (lab/experiments/alloc.cpp). A point is one workload
(``--param workload=``) under one allocator (``--param alloc=``); its variant says what the
heap asks for: ``malloc-thp`` for physmem (PHYSMEM_MALLOC_BACKING=thp, set by the program),
``malloc-4k`` for the peers, which run on their own defaults with no environment set (none
of them asks for huge pages by default, so what THP gives them depends on the machine
record's ``thp_enabled``; the measured huge-page share says what each actually got).
Multi-threaded workloads run one thread per core available to the run (the machine
record's ``cores_available``, :func:`params_from_machine`). Tables name a point
``<allocator>-<backing>`` (``physmem-thp``, ``glibc-4k``, ...).

Every record carries ``alloc`` (contract: lab/schema/payloads/alloc.schema.json, checked
with every record): the allocator asked for and the one ``active()`` saw, the
peak RSS (VmHWM of the whole process, after every pass) and ``heap_at_peak`` (the
largest /proc/self/smaps_rollup sample taken at the workload's peak: anonymous bytes,
THP and hugetlb bytes, their share). Time per pass = median ns per op x ops per pass;
every allocator does the same ops at a given size (the workloads are deterministic), so
ratios of ns per op are ratios of time.

Contract: every number shown comes from the records; the goals' thresholds are the only
constants.
"""
import math
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .analysis import SPREAD_WARN, Goal, Item, Ratio, Scalar
from .machine import described, unavailable_counters
from .suitedef import K, M, Point, Row, SuiteDef, Variant
from .plots import plt, save
from .units import format_size

ALLOC = "alloc"
PEERS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
PHYSMEM = "physmem"
ALLOCATORS = PEERS + (PHYSMEM,)
VARIANT = {PHYSMEM: Variant("malloc", "thp"), **{p: Variant("malloc", "4k") for p in PEERS}}
BIG_HEAP = 64 * M          # alloc-3 judges heaps at least this large
# Workloads that write their blocks at the ends only: a heap of mostly untouched bytes, which
# physmem keeps on 4 KiB pages (PHYSMEM_MALLOC_SPARSE); alloc-3 (huge pages) judges the
# densely written heaps, alloc-6 (peak RSS against glibc) these.
SPARSE_WORKLOADS = ("large-live",)
# Workloads whose passes are mostly a pause (idle-threads: 250 ms while 16 threads idle): no
# allocation speed, left out of the time geometric means (alloc-1, the geomean table);
# alloc-8 judges the heap they leave.
PAUSED_WORKLOADS = ("idle-threads",)

# workload -> (tiny, default, full) sizes, and rough ms per MiB of size for one pass
# (glibc on the development VM; ETA and budget only).
WORKLOADS: Dict[str, Tuple[Tuple[int, int, int], float]] = {
    "larson": ((1 * M, 8 * M, 64 * M), 40.0),
    "xmalloc": ((1 * M, 32 * M, 128 * M), 4.0),
    "cache-scratch": ((1 * M, 8 * M, 32 * M), 3.5),
    "cache-thrash": ((1 * M, 8 * M, 32 * M), 3.5),
    "glibc-simple": ((1 * M, 16 * M, 128 * M), 15.0),
    "glibc-thread": ((2 * M, 64 * M, 256 * M), 2.0),
    # 16 threads write size / 16 each, free it and idle; one more thread samples the heap
    # after a 250 ms pause (most of a pass)
    "idle-threads": ((4 * M, 64 * M, 256 * M), 5.0),
    "small-churn": ((2 * M, 64 * M, 256 * M), 4.5),
    "malloc-large": ((32 * M, 64 * M, 256 * M), 4.5),
    # size / 288 KiB live blocks: default 500 and 10,000 (issue 11's scaling question)
    "large-live": ((16 * M, 144 * M, 2880 * M), 0.05),
    # 128 MiB at the default scale: jemalloc's and tcmalloc's realloc copy at every 1 MiB
    # step (quadratic: 5-8 s a process at 256 MiB, a tenth of the suite's time)
    "realloc-grow": ((16 * M, 128 * M, 1024 * M), 0.05),
    "linked-list": ((1 * M, 8 * M, 256 * M), 60.0),
    "kmeans": ((1 * M, 16 * M, 256 * M), 10.0),
    "richards": ((256 * K, 4 * M, 16 * M), 30.0),
}
MULTI_THREADED = ("larson", "xmalloc", "cache-scratch", "cache-thrash", "glibc-thread", "kmeans",
                  "richards")


# Workloads measured at more than one size per scale (the others: the scale's one size).
EXTRA_SIZES: Dict[str, Dict[str, Tuple[int, ...]]] = {
    "large-live": {"default": (144 * M, 2880 * M), "full": (144 * M, 2880 * M)},
}


# Allocators a workload is not run under, with the reason (stated in the report).
NOT_RUN: Dict[str, Dict[str, str]] = {
    "realloc-grow": {"mimalloc": "mimalloc's realloc copies at every step: about 30 s a pass at "
                                 "256 MiB on the development VM, over a point's time limit"},
}


def _rows():
    rows = []
    for w, (sizes, _) in WORKLOADS.items():
        by_scale = dict(zip(("tiny", "default", "full"), ((s,) for s in sizes)))
        by_scale.update(EXTRA_SIZES.get(w, {}))
        for a in ALLOCATORS:
            if a in NOT_RUN.get(w, {}):
                continue
            params = {"alloc": a, "workload": w}
            rows.append(Row(ALLOC, (VARIANT[a],), sizes=by_scale, params=(params,), priority=0))
    return tuple(rows)


ROWS = _rows()

# Warm-up 0: the program's untimed reference run (which gives the checksum every timed
# pass must repeat) already warms the allocator and the code.
SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 5, "cap": None, "budget_s": 40},
    "default": {"reps": 3, "warmup": 0, "min_rep_ms": 100, "cap": None, "budget_s": 100},
    "full": {"reps": 7, "warmup": 0, "min_rep_ms": 200, "cap": None, "budget_s": None},
}


def params_from_machine(p: Point, machine: dict) -> Dict[str, str]:
    """A multi-threaded workload runs one thread per core available to the run (the
    machine record's ``cores_available``; the program's default when unknown)."""
    cores = machine.get("cores_available")
    return {"threads": str(cores)} if p.params.get("workload") in MULTI_THREADED and cores else {}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one timed pass (ETA and budget only; development VM, glibc)."""
    per_mib = WORKLOADS.get(p.params.get("workload"), ((), 10.0))[1]
    return per_mib * p.size_bytes / M / 1e3


# ---------------------------------------------------------------- lookups

def allocator(r: dict) -> str:
    return r["params"].get("alloc", "glibc")


def label(r: dict) -> str:
    """``physmem-thp``, ``glibc-4k``: the allocator and what its heap asked for."""
    return f"{allocator(r)}-{r['backing_requested']}"


def workload(r: dict) -> str:
    return r["params"].get("workload", "?")


def alloc_recs(recs) -> List[dict]:
    return [r for r in recs.all if r["experiment"] == ALLOC]


def grouped(recs) -> Dict[Tuple[str, int], Dict[str, dict]]:
    """(workload, size) -> allocator -> record (the first one of each)."""
    out: Dict[Tuple[str, int], Dict[str, dict]] = {}
    for r in alloc_recs(recs):
        out.setdefault((workload(r), r["size_bytes"]), {}).setdefault(allocator(r), r)
    order = list(WORKLOADS)
    return dict(sorted(out.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order
                                                    else len(order), kv[0][1])))


def pass_ms(r: dict, which="median_ns") -> float:
    return r[which] * r["ops_per_pass"] / 1e6


def rss(r: dict) -> int:
    return (r.get("alloc") or {}).get("peak_rss_bytes", 0)


def heap(r: dict) -> dict:
    return (r.get("alloc") or {}).get("heap_at_peak") or {}


def heap_bytes(r: dict) -> int:
    h = heap(r)
    return h.get("anon_bytes", 0) + h.get("hugetlb_bytes", 0)


def huge_share(r: dict) -> float:
    return heap(r).get("huge_share", 0.0)


def best_peer(group: Dict[str, dict], key) -> Optional[str]:
    """The peer with the lowest ``key(record)`` in one (workload, size) group."""
    peers = [p for p in PEERS if p in group]
    return min(peers, key=lambda p: key(group[p])) if peers else None


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# ---------------------------------------------------------------- ratios over workloads

class GeoRatio(Ratio):
    """Geometric mean over (num, den) record pairs of a metric's ratio. For time the
    range combines each pair's best and worst repetitions (min/max and max/min); peak
    RSS is one figure per process, so its range is the value."""

    def __init__(self, pairs: List[Tuple[dict, dict]], metric: str = "time", den_name: str = ""):
        super().__init__(pairs[0][0] if pairs else {}, pairs[0][1] if pairs else {})
        self.pairs, self.metric, self.den_name = pairs, metric, den_name

    def _g(self, f):
        return geomean(f(n, d) for n, d in self.pairs)

    @property
    def value(self):
        if self.metric == "rss":
            return self._g(lambda n, d: rss(n) / rss(d))
        return self._g(lambda n, d: n["median_ns"] / d["median_ns"])

    @property
    def lo(self):
        return self.value if self.metric == "rss" else self._g(lambda n, d: n["min_ns"] / d["max_ns"])

    @property
    def hi(self):
        return self.value if self.metric == "rss" else self._g(lambda n, d: n["max_ns"] / d["min_ns"])

    def spreads(self):
        if self.metric == "rss":
            return (0.0, 0.0)
        return (max(n["rel_spread"] for n, _ in self.pairs), max(d["rel_spread"] for _, d in self.pairs))

    def doubts(self) -> List[str]:
        out = []
        for n, d in self.pairs:
            for r in (n, d):
                a = r.get("alloc") or {}
                if a.get("active") and a.get("active") != allocator(r):
                    out.append(f"{workload(r)}: {label(r)} ran under {a['active']}")
                if self.metric == "time" and r["rel_spread"] >= SPREAD_WARN:
                    out.append(f"{workload(r)} {label(r)} spread {r['rel_spread']:.0%}")
        return out

    def cell(self) -> str:
        mark = "~" if max(self.spreads(), default=0) >= SPREAD_WARN else ""
        rng = "" if self.metric == "rss" else f" [{self.lo:.2f}-{self.hi:.2f}]{mark}"
        return f"{self.value:.2f}x{rng} over {len(self.pairs)} workloads vs {self.den_name}"


class FourKShare(Scalar):
    """The share of a physmem heap NOT on huge pages (1 - huge share): judged <= 0.10."""
    def __init__(self, rec):
        super().__init__(rec, rec)

    @property
    def value(self):
        return 1.0 - huge_share(self.num)

    def cell(self):
        return (f"{huge_share(self.num):.1%} of {format_size(heap_bytes(self.num))} on huge pages "
                f"({self.value:.1%} not)")


def _geo_groups(recs, metric: str) -> List[Dict[str, dict]]:
    """The (workload, size) groups a geometric mean of `metric` runs over: for time, not
    the paused workloads."""
    return [g for (w, _), g in grouped(recs).items() if metric == "rss" or w not in PAUSED_WORKLOADS]


def _pairs(recs, num: str, den: str, metric: str = "time") -> List[Tuple[dict, dict]]:
    """(num record, den record) per (workload, size) where both were measured (verified)."""
    return [(g[num], g[den]) for g in _geo_groups(recs, metric)
            if num in g and den in g and g[num]["verified"] and g[den]["verified"]]


def _best_peer_by_geomean(recs, metric: str) -> Optional[GeoRatio]:
    """physmem vs the peer whose geometric mean (over the workloads both ran) is lowest:
    the peer with the largest physmem/peer geomean ratio."""
    cands = [GeoRatio(_pairs(recs, PHYSMEM, p, metric), metric, p) for p in PEERS if _pairs(recs, PHYSMEM, p, metric)]
    return max(cands, key=lambda g: g.value) if cands else None


def _virtual_best(recs, metric: str) -> Optional[GeoRatio]:
    """physmem vs the best peer of each workload separately (a stricter yardstick)."""
    key = rss if metric == "rss" else (lambda r: r["median_ns"])
    pairs = []
    for g in _geo_groups(recs, metric):
        b = best_peer({p: r for p, r in g.items() if r["verified"]}, key)
        if b and PHYSMEM in g and g[PHYSMEM]["verified"]:
            pairs.append((g[PHYSMEM], g[b]))
    return GeoRatio(pairs, metric, "each workload's best peer") if pairs else None


# ---------------------------------------------------------------- report

def _workload_table(doc, w, size, g):
    tbest = best_peer(g, lambda r: r["median_ns"])
    rbest = best_peer(g, rss)
    rows = []
    for a in ALLOCATORS:
        r = g.get(a)
        if not r:
            continue
        act = (r.get("alloc") or {}).get("active", "?")
        rows.append([label(r) + ("" if act == a else f" (ran under {act}!)"),
                     f"{pass_ms(r):.1f}", f"{r['rel_spread']:.0%}",
                     Ratio(r, g[tbest]).cell() if tbest else "-",
                     f"{rss(r) / M:.1f}", f"{rss(r) / rss(g[rbest]):.2f}x" if rbest and rss(g[rbest]) else "-",
                     f"{heap_bytes(r) / M:.1f}", f"{huge_share(r):.0%}", "yes" if r["verified"] else "NO"])
    doc.table([f"{w} {format_size(size)}", "ms/pass (median)", "spread",
               f"time vs best peer ({label(g[tbest]) if tbest else '-'})", "peak RSS MiB",
               f"RSS vs best peer ({label(g[rbest]) if rbest else '-'})", "anon heap at peak MiB",
               "on huge pages", "verified"], rows)


def _geomean_table(doc, recs):
    groups = grouped(recs)
    rows = []
    for a in ALLOCATORS:
        tr, rr = [], []
        for (w, _), g in groups.items():
            tb, rb = best_peer(g, lambda r: r["median_ns"]), best_peer(g, rss)
            if a in g and tb and w not in PAUSED_WORKLOADS:
                tr.append(g[a]["median_ns"] / g[tb]["median_ns"])
            if a in g and rb and rss(g[rb]):
                rr.append(rss(g[a]) / rss(g[rb]))
        if tr:
            shares = [huge_share(g[a]) for g in groups.values() if a in g and heap_bytes(g[a]) >= BIG_HEAP]
            rows.append([a + "-" + VARIANT[a].backing, len(tr), f"{geomean(tr):.2f}x",
                         f"{geomean(rr):.2f}x" if rr else "-",
                         f"{min(shares):.0%}..{max(shares):.0%} ({len(shares)})" if shares else "-"])
    doc.table(["allocator", "workloads", "time geomean vs each workload's best peer",
               "peak RSS geomean vs each workload's best peer",
               f"huge-page share, heaps >= {format_size(BIG_HEAP)} (points)"], rows)


def _measured_note(recs, results) -> str:
    """What the machine record says was not countable, and the threads the records ran."""
    m = results.get("machine") or {}
    missing = unavailable_counters(m, ("dtlb_load_misses", "page_walk_cycles"))
    threads = sorted({str(r["params"]["threads"]) for r in alloc_recs(recs) if "threads" in r["params"]},
                     key=int)
    out = []
    if missing:
        out.append(f"Not measurable on this machine: {', '.join(missing)} "
                   f"({next(iter(missing.values()))}), which seed 004 reports; wall time, peak "
                   "RSS and the huge-page share are measured instead.")
    if threads:
        out.append(f"Multi-threaded workloads run one thread per core available to the run "
                   f"(threads={', '.join(threads)} in the records; {described(m)}).")
    return " ".join(out)


def _time_plot(recs, out_dir: Path) -> Optional[Path]:
    groups = [(k, g) for k, g in grouped(recs).items() if best_peer(g, lambda r: r["median_ns"])]
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(max(7.5, 0.9 * len(groups)), 4.5), dpi=100)
    width = 0.8 / len(ALLOCATORS)
    for i, a in enumerate(ALLOCATORS):
        xs, ys = [], []
        for j, (_, g) in enumerate(groups):
            b = best_peer(g, lambda r: r["median_ns"])
            if a in g:
                xs.append(j + (i - (len(ALLOCATORS) - 1) / 2) * width)
                ys.append(g[a]["median_ns"] / g[b]["median_ns"])
        ax.bar(xs, ys, width, label=a)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")          # one workload can be 20x off: keep the others readable
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{w}\n{format_size(s)}" for (w, s), _ in groups], rotation=45, fontsize=7)
    ax.set_ylabel("time / best peer's time (median, log)")
    ax.set_title("alloc: time per workload relative to the best peer (lower is better)", fontsize=10)
    ax.legend(fontsize=7, ncol=5)
    ax.grid(True, axis="y", alpha=0.3)
    return save(fig, Path(out_dir) / "plot-alloc-time.png")


def report(doc, recs, results, out_dir):
    """The suite's section: one table per workload, geometric means, the time plot."""
    doc.p("Each point is a fresh process of physmem_lab_alloc under one allocator (LD_PRELOAD; "
          "'ran under' is what the process saw serving malloc). physmem-thp: libphysmem.so with "
          "PHYSMEM_MALLOC_BACKING=thp. Peers (-4k) run on their own defaults with no environment "
          "set: none asks for huge pages by default, and the 'on huge pages' column shows what "
          "the kernel gave. Time: one whole workload run per pass (allocation is the subject), "
          "median over the repetitions; the ratio's range pairs best and worst repetitions. "
          "Peak RSS: VmHWM of the whole process. Heap at peak: anonymous memory (plus hugetlb) "
          "of /proc/self/smaps_rollup sampled at the workload's largest live heap, which also "
          "holds thread stacks and the program's own few MiB (idle-threads samples it after its "
          "threads freed everything and idled). idle-threads' passes are mostly a 250 ms pause: "
          "its time is left out of the time geometric means.")
    for (w, size), g in grouped(recs).items():
        _workload_table(doc, w, size, g)
    for w, why in NOT_RUN.items():
        for a, reason in why.items():
            doc.p(f"Not run: {w} under {a} ({reason}).")
    doc.h(3, "Geometric means over the workloads")
    _geomean_table(doc, recs)
    doc.p(_measured_note(recs, results))
    if out_dir is not None:
        path = _time_plot(recs, out_dir)
        if path:
            doc.img("alloc: time relative to the best peer", path)


# ---------------------------------------------------------------- goals

GOAL_TITLES = {
    1: "physmem time geometric mean <= 0.95x the best peer's (the peer with the lowest geomean)",
    2: "physmem peak RSS geometric mean <= 1.10x the best peer's (the peer with the lowest geomean)",
    3: f">= 90% of physmem's heap on huge pages for densely written heaps >= {format_size(BIG_HEAP)}",
    4: "large-live, most live blocks: physmem time per operation <= 2.0x glibc's",
    5: "large-live: physmem's time per operation flat in the live blocks (most / fewest <= 1.5x)",
    6: "large-live, most live blocks: physmem peak RSS <= 1.2x glibc's",
    7: "realloc-grow (1 MiB steps to twice the size): physmem time <= 2.0x glibc's",
    8: "idle-threads: the heap 16 threads leave after freeing everything and idling 250 ms, "
       "physmem <= glibc's",
}


def goals(recs) -> List[Goal]:
    return [_goal_geo(recs, 1, "time", 0.95), _goal_geo(recs, 2, "rss", 1.10), _goal_huge(recs),
            *_goals_large(recs), _goal_idle(recs)]


class RssRatio(Scalar):
    """Peak RSS of one record over another's (one figure per process: no range)."""

    @property
    def value(self):
        return rss(self.num) / rss(self.den) if rss(self.den) else float("inf")

    def cell(self):
        return f"{self.value:.2f}x ({rss(self.num) / M:.0f} / {rss(self.den) / M:.0f} MiB)"


class HeapRatio(Scalar):
    """The heap sampled by one record's workload over another's (one figure per process)."""

    @property
    def value(self):
        return heap_bytes(self.num) / heap_bytes(self.den) if heap_bytes(self.den) else float("inf")

    def cell(self):
        return f"{self.value:.2f}x ({heap_bytes(self.num) / M:.0f} / {heap_bytes(self.den) / M:.0f} MiB)"


def _goal_idle(recs) -> Goal:
    """alloc-8: what idle threads leave (issue 26), at the largest size measured."""
    g = Goal("alloc-8", GOAL_TITLES[8])
    idle = sorted((size, grp) for (w, size), grp in grouped(recs).items() if w == "idle-threads"
                  and PHYSMEM in grp and "glibc" in grp and grp[PHYSMEM]["verified"] and grp["glibc"]["verified"])
    if not idle:
        g.missing.append("idle-threads not measured under physmem and glibc")
        return g
    size, grp = idle[-1]
    g.items.append(Item(f"physmem / glibc heap with the threads idle at {format_size(size)}",
                        HeapRatio(grp[PHYSMEM], grp["glibc"]), 1.0))
    for p in PEERS:
        if p != "glibc" and p in grp:
            g.notes.append(f"physmem / {p}: {HeapRatio(grp[PHYSMEM], grp[p]).cell()}")
    return g


def _goals_large(recs) -> List[Goal]:
    """alloc-4..7: the worst cases of issue 11 (large blocks live by the thousand; a huge
    buffer grown by realloc), judged against glibc."""
    g4, g5, g6, g7 = (Goal(f"alloc-{n}", GOAL_TITLES[n]) for n in (4, 5, 6, 7))
    live = sorted((size, g) for (w, size), g in grouped(recs).items() if w == "large-live"
                  and PHYSMEM in g and g[PHYSMEM]["verified"])
    if live:
        size, g = live[-1]
        if "glibc" in g:
            g4.items.append(Item(f"physmem / glibc at {format_size(size)}", Ratio(g[PHYSMEM], g["glibc"]), 2.0))
            g6.items.append(Item(f"physmem / glibc peak RSS at {format_size(size)}",
                                 RssRatio(g[PHYSMEM], g["glibc"]), 1.2))
        if len(live) > 1:
            small = live[0]
            g5.items.append(Item(f"physmem {format_size(size)} / {format_size(small[0])}",
                                 Ratio(g[PHYSMEM], small[1][PHYSMEM]), 1.5))
            if "glibc" in g and "glibc" in small[1]:
                g5.notes.append(f"glibc {format_size(size)} / {format_size(small[0])}: "
                                f"{Ratio(g['glibc'], small[1]['glibc']).cell()}")
    for (w, size), g in grouped(recs).items():
        if w == "realloc-grow" and PHYSMEM in g and "glibc" in g:
            g7.items.append(Item(f"physmem / glibc from {format_size(size)}", Ratio(g[PHYSMEM], g["glibc"]), 2.0))
    for goal in (g4, g5, g6, g7):
        if not goal.items:
            goal.missing.append("large-live or realloc-grow not measured under physmem and glibc")
    return [g4, g5, g6, g7]


def _goal_geo(recs, n, metric, target):
    g = Goal(f"alloc-{n}", GOAL_TITLES[n])
    best = _best_peer_by_geomean(recs, metric)
    if not best:
        g.missing.append("no workload measured under both physmem and a peer")
        return g
    g.items.append(Item(f"physmem / {best.den_name} ({metric}, geomean)", best, target))
    vb = _virtual_best(recs, metric)
    if vb:
        g.notes.append(f"against each workload's best peer instead (stricter): {vb.cell()}")
    for p in PEERS:
        pairs = _pairs(recs, PHYSMEM, p, metric)
        if pairs and p != best.den_name:
            g.notes.append(f"physmem / {p}: {GeoRatio(pairs, metric, p).cell()}")
    return g


def _goal_huge(recs):
    g = Goal("alloc-3", GOAL_TITLES[3])
    for r in alloc_recs(recs):
        if workload(r) in SPARSE_WORKLOADS or workload(r) in PAUSED_WORKLOADS:
            continue
        if allocator(r) == PHYSMEM and heap_bytes(r) >= BIG_HEAP:
            g.items.append(Item(f"{workload(r)} {format_size(r['size_bytes'])} ({label(r)}): share not "
                                "on huge pages", FourKShare(r), 0.10))
    if not g.items:
        g.missing.append(f"no physmem record with a heap of {format_size(BIG_HEAP)} or more at its peak")
    g.notes.append(f"not judged: {', '.join(SPARSE_WORKLOADS)} (blocks written at their ends only, on 4 KiB "
                   "pages by design; alloc-6 judges their footprint)")
    return g


SUITE = SuiteDef("alloc", "Allocators: libphysmem.so against glibc, jemalloc, tcmalloc, mimalloc",
                 ROWS, SCALES, pass_s=pass_s, report=report, goals=goals,
                 params_from_machine=params_from_machine)
