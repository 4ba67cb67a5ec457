"""The ``giveback`` suite (issue 13, seed 001 Table 1): the pool gives memory back, and
blocks move.

Programs (lab/experiments/{giveback,compact,migrate}.cpp, lab/PROTOCOL.md):

- ``giveback``: arrays totalling --size, a random 70% freed, the heap after give-back
  (/proc/self/smaps_rollup) against the live bytes: std::vector under glibc (with and
  without malloc_trim), jemalloc, tcmalloc, mimalloc, libphysmem.so, and TreeArrays on a
  BlockPool (release only, or compact, or idle: no call to the pool for 1 s, so only its
  background thread gives back; 8 arrays, 32 MiB each at the default size, the issue 25
  shape); and one PagedArray whose budget is cut from all of it to 30% (set_budget, then
  the pool's compact(), or idle: no call for 1 s).
- ``compact``: a fragmented pool, resident bytes before/after compact(), its time against
  the same work by hand (memcpy of the bytes moved plus giving back the bytes freed, page
  by page) and against memcpy alone, over 3 trials per process and 2 rounds; the share
  still on huge pages.
- ``migrate``: a TreeArray moved from a 4 KiB pool to backing B: GiB/s against memcpy,
  scan and GUPS before and after (2 rounds).

Payloads (``giveback``, ``compact``, ``migrate``): lab/schema/payloads/<name>.schema.json.
Every number comes from the records. Compaction and give-back are one-shot (they change
the state they measure): each record holds one measurement per process; the timed pass
of each program is a scan of what survived (the usual timing fields).
"""
from typing import List, Optional

from .analysis import Goal, Item, Value
from .suitedef import G, M, Point, Row, SuiteDef, Variant
from .units import format_size

GB, CP, MG = "giveback", "compact", "migrate"
PEERS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")

_SIZES = {"tiny": (32 * M,), "default": (256 * M,), "full": (4 * G,)}
_MSIZES = {"tiny": (32 * M,), "default": (256 * M,), "full": (1 * G,)}

ROWS = (
    Row(GB, (Variant("tree-index", "thp"),), params=({"compact": "off"}, {"compact": "on"}), sizes=_SIZES, priority=0),
    # priority 0: giveback-4 reads the idle pools
    Row(GB, (Variant("tree-index", "thp"),), params=({"idle": "on", "arrays": "8"},), sizes=_SIZES, priority=0),
    Row(GB, (Variant("malloc", "4k"),), params=tuple({"alloc": a} for a in PEERS) + ({"alloc": "glibc", "trim": "on"},),
        sizes=_SIZES, priority=0),
    Row(GB, (Variant("malloc", "thp"),), params=({"alloc": "physmem"},), sizes=_SIZES),
    Row(GB, (Variant("paged", "thp"),), params=({"compact": "on"},), sizes=_SIZES),
    Row(GB, (Variant("paged", "thp"),), params=({"idle": "on"},), sizes=_SIZES, priority=0),
    Row(CP, (Variant("tree-index", "thp"), Variant("tree-index", "4k")), sizes=_SIZES, priority=0, rounds=2),
    Row(MG, (Variant("tree-index", "thp"), Variant("tree-index", "1g")), sizes=_MSIZES, priority=0, rounds=2),
)

SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 5, "cap": None, "budget_s": 20},
    "default": {"reps": 3, "warmup": 0, "min_rep_ms": 20, "cap": None, "budget_s": 40},
    "full": {"reps": 3, "warmup": 0, "min_rep_ms": 20, "cap": None, "budget_s": None},
}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one timed pass (a scan of what is left): ETA and budget only."""
    return 0.3 * p.size_bytes / G


TRIALS = 3  # compactions per compact process (the program's --param trials default)


def setup_s(p: Point) -> float:
    """Filling the arrays (first touch), plus migrate's two scans and GUPS runs, and
    compact's trials (each a fill, a compaction and its baselines)."""
    return {MG: 2.0, CP: 1.5 * TRIALS}.get(p.experiment, 1.0) * p.size_bytes / G


def params_from_machine(p: Point, machine: dict) -> dict:
    """compact: bytes written before each timed copy, twice the last-level cache (64 MiB at
    least), so that neither compaction nor memcpy copies from the caches."""
    if p.experiment != CP:
        return {}
    llc = (machine.get("caches") or {}).get("llc") or 32 * M
    return {"evict": str(max(64 * M, 2 * llc))}


def _of(recs, exp) -> List[dict]:
    return [r for r in recs.all if r["experiment"] == exp]


def _label(r) -> str:
    g, p = r["giveback"], r["params"]
    if r["kind"] == "malloc":
        return f"{g['allocator']}" + (" + malloc_trim" if p.get("trim") == "on" else "") + f" ({r['variant']})"
    how = "compact" if p.get("compact") == "on" else "idle 1 s, no call" if p.get("idle") == "on" else "release"
    if r["kind"] == "paged":
        return f"PagedArray, budget cut to 30%, {how} ({r['variant']})"
    return f"BlockPool, {how} ({r['variant']})"


def _heap(h) -> int:
    return h["anon_bytes"] + h["hugetlb_bytes"]


def _giveback_section(doc, recs):
    doc.h(3, "Giving back: 70% of the arrays freed")
    rows = []
    for r in _of(recs, GB):
        g = r["giveback"]
        rows.append([_label(r), format_size(r["size_bytes"]), f"{g['live_bytes'] / M:.0f}",
                     f"{_heap(g['heap_full']) / M:.0f}", f"{_heap(g['heap_after']) / M:.0f}",
                     f"{g['rss_over_live']:.2f}x", f"{g['heap_after']['huge_share']:.0%}", f"{g['give_back_ms']:.1f}"])
    doc.table(["allocator", "size", "live MiB", "heap before frees MiB", "heap after give-back MiB",
               "heap / live", "on huge pages", "give-back ms"], rows)
    doc.p("heap = Anonymous + hugetlb bytes of the whole process (smaps_rollup), so the "
          "program's own few MiB and the trees' inner blocks count against every row.")


def _compact_section(doc, recs):
    doc.h(3, "Compaction of a fragmented pool")
    rows = []
    for r in _of(recs, CP):
        c = r["compact"]
        rows.append([r["variant"], format_size(r["size_bytes"]), f"{c['before']['resident_bytes'] / M:.0f}",
                     f"{c['after']['resident_bytes'] / M:.0f}", f"{c['after']['in_use_bytes'] / M:.0f}",
                     f"{c['recovered']:.0%}", f"{c['bytes_moved'] / M:.0f}", f"{c['compact_ms']:.1f}",
                     f"{c['memcpy_ms']:.1f}", f"{c['give_back_ms']:.1f}" if "give_back_ms" in c else "-",
                     _trials_cell(c, "vs_by_hand"), _trials_cell(c, "vs_memcpy", "bandwidth_vs_memcpy"),
                     f"{c['after']['huge_share']:.0%}"])
    doc.table(["variant", "size", "resident before MiB", "after MiB", "in use MiB", "free recovered",
               "moved MiB", "compact ms", "memcpy ms", "give-back ms", "by hand / compact",
               "memcpy / compact", "on huge pages after"], rows)
    _baseline_note(doc, _of(recs, CP), "Baseline: {}. Times are medians over the trials, ratios median "
                   "[min-max] over them; rounds' records are shown with round 0's payload.")
    doc.p("THEIRS (Mesh, PLDI 2019): compaction by meshing cut Redis's RSS by 39%, on 4 KiB pages only.")


def _trials_cell(c, key, old_key=None) -> str:
    """``0.95x [0.90-1.02]`` over a compact record's trials (older records: one number)."""
    if key in c:
        t = c[key]
        return f"{t['median']:.2f}x [{t['min']:.2f}-{t['max']:.2f}]"
    return f"{c[old_key]:.2f}x" if old_key and old_key in c else "-"


def _migrate_section(doc, recs):
    doc.h(3, "Migration to another backing")
    rows = []
    for r in _of(recs, MG):
        m = r["migrate"]
        rows.append([f"4k -> {r['backing_requested']}", format_size(r["size_bytes"]), f"{m['migrate_gib_s']:.2f}",
                     f"{m['memcpy_gib_s']:.2f}", f"{m['bandwidth_vs_memcpy']:.2f}x", f"{m['scan_ratio']:.2f}x",
                     f"{m['gups_ratio']:.2f}x"])
    doc.table(["move", "size", "migrate GiB/s", "memcpy GiB/s", "vs memcpy", "scan after / before",
               "GUPS ns after / before"], rows)
    _baseline_note(doc, _of(recs, MG), "memcpy baseline: {} (migrate and memcpy side by side in one process).")


def _baseline_note(doc, recs, text):
    said = sorted({r[r["experiment"]].get("baseline", "") for r in recs} - {""})
    if said:
        doc.p(text.format("; ".join(said)))


def report(doc, recs, results, out_dir):
    """The suite's section (report.py writes its heading): give-back, compaction, migration."""
    _giveback_section(doc, recs)
    _compact_section(doc, recs)
    _migrate_section(doc, recs)


GOAL_TITLES = {
    1: "after give-back the pool's heap <= 1.05x live bytes + one huge page, >= 95% on huge pages",
    2: "compaction recovers >= 90% of the free memory at >= 0.8x the speed of the same work by hand "
       "(memcpy of the bytes moved + giving back the bytes freed, page by page)",
    3: "migration >= 0.8x memcpy bandwidth",
    4: "an idle pool (no call for 1 s after the frees, or after a PagedArray's budget cut) at <= 1.05x live "
       "bytes + one huge page",
}


def _goal_giveback(recs):
    g = Goal("giveback-1", GOAL_TITLES[1])
    for r in _of(recs, GB):
        if r["kind"] != "tree-index" or r["params"].get("compact") != "on":
            continue
        gb = r["giveback"]
        page = gb["give_back"].get("pool_page_bytes", 2 * M)
        allowed = 1.05 * gb["live_bytes"] + page
        g.items.append(Item(f"{r['variant']} {format_size(r['size_bytes'])}: heap / (1.05 live + page)",
                            Value(r, _heap(gb["heap_after"]) / allowed,
                                  f"{_heap(gb['heap_after']) / M:.0f} MiB vs {allowed / M:.0f} MiB allowed"), 1.0))
        g.items.append(Item(f"{r['variant']} {format_size(r['size_bytes'])}: share not on huge pages",
                            Value(r, 1 - gb["heap_after"]["huge_share"],
                                  f"{gb['heap_after']['huge_share']:.1%} on huge pages"), 0.05))
    for r in _of(recs, GB):
        if r["kind"] == "malloc":
            g.notes.append(f"{_label(r)}: heap / live {r['giveback']['rss_over_live']:.2f}x")
        elif r["kind"] == "paged":
            gb = r["giveback"]
            g.notes.append(f"{_label(r)}: heap {_heap(gb['heap_full']) / M:.0f} -> {_heap(gb['heap_after']) / M:.0f} MiB "
                           f"for {gb['live_bytes'] / M:.0f} MiB of leaves kept (heap / kept {gb['rss_over_live']:.2f}x), "
                           f"{gb['give_back_ms']:.0f} ms with the write-back")
    if not g.items:
        g.missing.append("no giveback record with compact=on")
    return g


def _vs_memcpy(r, bw):
    """memcpy's bandwidth over the measured one's, as a goal Value (lower is better)."""
    return Value(r, 1 / bw if bw else float("inf"), f"{bw:.2f}x memcpy")


def _trials(rec: dict, t: dict) -> Value:
    """A compact record's by-hand / compaction time, as memcpy's bandwidth over the
    measured one (lower is better), with the trials' range."""
    med, lo, hi = (1 / x if x else float("inf") for x in (t["median"], t["max"], t["min"]))
    return Value(rec, med, f"{t['median']:.2f}x by hand [{t['min']:.2f}-{t['max']:.2f}]", lo, hi)


def _goal_compact(recs):
    g = Goal("giveback-2", GOAL_TITLES[2])
    for r in _of(recs, CP):
        c, what = r["compact"], f"{r['variant']} {format_size(r['size_bytes'])}"
        g.items.append(Item(f"{what}: free memory not recovered", Value(r, 1 - c["recovered"], f"{c['recovered']:.0%} recovered"), 0.10))
        if not c["bytes_moved"]:
            continue
        if "vs_by_hand" in c:
            g.items.append(Item(f"{what}: by-hand time / compaction time", _trials(r, c["vs_by_hand"]), 1 / 0.8))
            g.notes.append(f"{what}: memcpy alone / compaction {_trials_cell(c, 'vs_memcpy')} "
                           f"(memcpy {c['memcpy_ms']:.1f} ms + give-back {c['give_back_ms']:.1f} ms by hand, "
                           f"compaction {c['compact_ms']:.1f} ms)")
        else:  # a record from before the by-hand baseline: judged on memcpy alone
            g.items.append(Item(f"{what}: memcpy bandwidth / compaction bandwidth (no by-hand baseline)",
                                _vs_memcpy(r, c["bandwidth_vs_memcpy"]), 1 / 0.8))
    if not g.items:
        g.missing.append("no compact records")
    return g


def _goal_migrate(recs):
    g = Goal("giveback-3", GOAL_TITLES[3])
    for r in _of(recs, MG):
        g.items.append(Item(f"4k -> {r['backing_requested']} {format_size(r['size_bytes'])}: memcpy / migrate bandwidth",
                            _vs_memcpy(r, r["migrate"]["bandwidth_vs_memcpy"]), 1 / 0.8))
    if not g.items:
        g.missing.append("no migrate records")
    return g


def _idle(r) -> bool:
    return r["kind"] in ("tree-index", "paged") and r["params"].get("idle") == "on"


def _goal_idle(recs):
    """The background give-back alone: the heap 1 s after the last free, nothing calling the pool."""
    g = Goal("giveback-4", GOAL_TITLES[4])
    for r in filter(_idle, _of(recs, GB)):
        gb = r["giveback"]
        allowed = 1.05 * gb["live_bytes"] + gb["give_back"].get("pool_page_bytes", 2 * M)
        shape = "budget cut to 30%" if r["kind"] == "paged" else f"{gb['arrays']} arrays"
        g.items.append(Item(f"{r['variant']} {format_size(r['size_bytes'])}, {shape}: "
                            f"heap / (1.05 live + page) after 1 s idle",
                            Value(r, _heap(gb["heap_after"]) / allowed,
                                  f"{_heap(gb['heap_after']) / M:.0f} MiB vs {allowed / M:.0f} MiB allowed "
                                  f"({gb['live_bytes'] / M:.0f} MiB live)"), 1.0))
    if not g.items:
        g.missing.append("no giveback record with idle=on")
    return g


def goals(recs) -> List[Goal]:
    return [_goal_giveback(recs), _goal_compact(recs), _goal_migrate(recs), _goal_idle(recs)]


SUITE = SuiteDef("giveback", "Giving memory back, compaction and migration (seed 001, Table 1)", ROWS, SCALES,
                 pass_s=pass_s, setup_s=setup_s, report=report, goals=goals, params_from_machine=params_from_machine)
