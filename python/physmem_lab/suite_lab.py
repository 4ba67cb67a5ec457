"""The ``lab`` suite (seeds 000/001): arrays as trees against flat arrays.

Programs: ``physmem_lab_{scan,gups,chase,rbtree,blackscholes,hashtable}`` (lab/experiments,
lab/PROTOCOL.md). A variant is a layout kind (``array``, ``tree-index``, ``tree-iter``,
``tree-seg``; rbtree: ``malloc`` nodes or ``pool`` nodes) on a backing (``4k``, ``thp``,
``2m``, ``1g``); the program declares both axes and what they mean (``--list``) and each
record repeats them (``kind``, ``backing_requested``). ``scan`` tables split on
``access``, ``blackscholes`` tables on ``layout`` (:data:`DIMENSION`).

Everything about the suite is here: its table of points (:data:`TABLE`), its scales
(:data:`SCALES`: repetitions, rounds, the random-access cap, time budgets), its time model
(:func:`pass_s`, :func:`setup_s`), its report sections and plots, its goals 1-5 and the
physically impossible outcomes :mod:`physmem_lab.sanity` flags in it.

Contract: every number shown comes from the records; the goals' thresholds and the seed
documents' figures (labelled THEIRS) are the only constants.
"""
from pathlib import Path
from typing import List, Optional, Tuple

from . import seeds
from .analysis import Goal, Item, PairedRecovered, Ratio, Records, ratio, recovered
from .plots import plot_series
from .spread import point_key
from .suitedef import G, K, M, Point, Row, SuiteDef, geometric, machine_sizes, variants
from .units import format_size

# ---------------------------------------------------------------- the table

UPDATES_CAP = 1 << 22     # gups updates / hashtable probes / chase steps per pass (default)
TINY_CAP = 1 << 16

ARRAYS = variants("array")
TREE_INDEX = variants("tree-index")
SCAN_VARIANTS = ARRAYS + TREE_INDEX + variants("tree-iter") + variants("tree-seg")
PAPER_FULL = (4 * G, 8 * G, 16 * G, 32 * G, 64 * G)
# blackscholes prices each option `repeat` times a pass (program default 10): 2 keeps a
# pass of the default size near a tenth of a second
BS_REPEAT = {"repeat": "2"}
# rbtree: one timed insert pass a round (the build the traversals need anyway)
RB_INSERT = {"insert_reps": "1"}
DIMENSION = {"scan": "access", "blackscholes": "layout"}   # params that split a table

# The default scale's sizes follow the machine's caches (machine_sizes): inside L1 and
# L2, and four times the last-level cache, where every access is a memory access; the
# goal points that ask for 1 GiB (strided scans, GUPS) keep it. --full (the full scale)
# sweeps every size up to the seed paper's.
IN_CACHES = machine_sizes(("l1d", 0.5), ("l2", 0.5))
PAST_LLC = machine_sizes(("llc", 4), floor=64 * M)
GOAL2 = variants("array", ("4k", "1g")) + variants("tree-iter", ("1g",)) + variants("tree-seg", ("1g",))


def _both(*fns):
    return lambda m: tuple(sorted({s for f in fns for s in f(m)}))


TABLE: Tuple[Row, ...] = (
    Row("scan", SCAN_VARIANTS, params=({"access": "linear"},),
        sizes={"tiny": (16 * K, 1 * M), "default": _both(IN_CACHES, PAST_LLC),
               "full": geometric(4 * K, 1 * G, 4) + PAPER_FULL}, priority=0),
    Row("scan", SCAN_VARIANTS, params=({"access": "strided"},),
        sizes={"tiny": (16 * K, 1 * M), "default": PAST_LLC,
               "full": geometric(4 * K, 1 * G, 4) + PAPER_FULL}, priority=0),
    Row("scan", GOAL2, params=({"access": "strided"},),
        sizes={"tiny": (), "default": (1 * G,), "full": ()}, priority=0),
    # goal 2's trees again, each with the contiguous arrays on 4k and 1g timed in turn in
    # its process (pair=on: phases array-4k and array-1g): their shares decide the goal
    # where they ran (a third 1 GiB page; without it, the four processes above decide)
    Row("scan", GOAL2[2:], params=({"access": "strided", "pair": "on"},),
        sizes={"tiny": (), "default": (1 * G,), "full": ()}, priority=0),
    # what the old scan benchmark also showed: the fixed-depth view, and random reads. The
    # fixed-depth view is left to --full (the main job's 10 minutes: its 8 processes took
    # 18 s of the default scale's 90 on the recent Intel guest, for no goal)
    Row("scan", variants("tree-fixed"), params=({"access": "linear"}, {"access": "strided"}),
        sizes={"tiny": (1 * M,), "default": (), "full": geometric(4 * K, 1 * G, 4) + PAPER_FULL}),
    Row("scan", variants("array", ("4k", "1g")) + variants("tree-index", ("4k", "1g")),
        params=({"access": "random"},),
        sizes={"tiny": (1 * M,), "default": PAST_LLC, "full": (64 * M, 1 * G, 16 * G)}),
    Row("scan", variants("tree-fixed", ("4k", "1g")), params=({"access": "random"},),
        sizes={"tiny": (1 * M,), "default": (), "full": (64 * M, 1 * G, 16 * G)}),
    Row("scan", variants("array", ("thp",)) + variants("tree-index", ("thp",)) + variants("tree-fixed", ("thp",)),
        params=({"access": "random"},), sizes={"tiny": (), "default": (), "full": (64 * M, 1 * G, 16 * G)}),
    Row("gups", ARRAYS + TREE_INDEX, cap="updates",
        sizes={"tiny": (1 * M,), "default": (64 * M, 1 * G),
               "full": (64 * M, 256 * M, 1 * G, 4 * G, 16 * G, 64 * G)}, priority=0),
    # goal 3's tree again, with contiguous tables on 4k and 1g timed in turn in its process
    # (pair=on: phases array-4k and array-1g): its share recovered decides the goal where
    # it ran; it needs a third 1 GiB page, and where the kernel has none (it gave 2 of 4
    # on the development VM once) the three processes above decide
    Row("gups", variants("tree-index", ("1g",)), params=({"pair": "on"},), cap="updates",
        sizes={"tiny": (), "default": (1 * G,), "full": (1 * G, 4 * G)}, priority=0),
    # priority 0: translation-3 judges the model on the chase too
    Row("chase", ARRAYS + TREE_INDEX, cap="steps", cap_shift=2,   # ~250 ns a step at 1 GiB
        sizes={"tiny": (32 * K, 1 * M), "default": machine_sizes(("l1d", 1), ("llc", 2)),
               "full": (32 * K, 1 * G, 4 * G, 16 * G)}, priority=0),
    Row("rbtree", variants("malloc", ("4k",)) + variants("pool", ("4k", "thp", "1g")),
        params=(RB_INSERT,),
        sizes={"tiny": (1 * M,), "default": (8 * M, 32 * M), "full": (16 * M, 512 * M, 4 * G)},
        priority=0),
    Row("blackscholes", ARRAYS + variants("tree-seg"),
        params=({"layout": "soa", **BS_REPEAT}, {"layout": "aos", **BS_REPEAT}),
        sizes={"tiny": (256 * K,), "default": (32 * M,), "full": (16 * M, 256 * M, 1 * G)},
        priority=0),
    Row("blackscholes", variants("tree-iter", ("thp",)) + variants("tree-index", ("thp",)),
        params=({"layout": "soa", **BS_REPEAT},),
        sizes={"tiny": (256 * K,), "default": (32 * M,), "full": (16 * M, 256 * M, 1 * G)}),
    Row("blackscholes", variants("tree-seg", ("thp",)), params=({"layout": "soa", **BS_REPEAT},),
        block_sizes=(4 * K, 16 * K, 64 * K, 256 * K, 1 * M, 2 * M),
        sizes={"tiny": (), "default": (), "full": (256 * M, 1 * G)}, priority=2),
    # past the LLC only at the default scale (the main job's 10 minutes: the in-cache size
    # took 12 s of its 24 on a slow day); both in --full
    Row("hashtable", ARRAYS + TREE_INDEX, cap="probes",
        sizes={"tiny": (1 * M,), "default": PAST_LLC,
               "full": (64 * M, 256 * M, 1 * G, 4 * G, 16 * G)}),
)

# Per scale: repetitions (at most, in total), rounds (each a fresh process per point with
# its share of the repetitions; lab/PROTOCOL.md "Order"), warm-ups, --min-rep-ms, the
# cap, the time budget (seconds; None = unbounded) and, for adaptive repetitions, the
# fewest (in total) and the spread that ends them early (PROTOCOL.md "--min-reps"). The
# default fits the main job's 10 minutes together with the other suites.
SCALES = {
    "tiny": {"reps": 2, "rounds": 2, "warmup": 1, "min_rep_ms": 5, "cap": TINY_CAP,
             "budget_s": 60},
    "default": {"reps": 6, "rounds": 2, "warmup": 1, "min_rep_ms": 20, "cap": UPDATES_CAP,
                "budget_s": 4 * 60, "min_reps": 4, "target_spread": 0.05},
    "full": {"reps": 6, "rounds": 2, "warmup": 1, "min_rep_ms": 50, "cap": None,
             "budget_s": None},
}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one timed pass (ETA and budget only; calibrated once on the
    development VM, e.g. blackscholes ~40 ns a pricing in scalar loops, ~3 ns in the
    vectorized soa loop)."""
    gib = p.size_bytes / G
    e, kind = p.experiment, p.kind
    if e == "scan":
        if p.params.get("access") == "strided":
            return 0.4 * gib
        if p.params.get("access") == "random":
            return p.size_bytes / 32 * 60e-9 * min(1.0, 0.05 + gib)
        return {"array": 0.04, "tree-seg": 0.04, "tree-iter": 0.12}.get(kind, 0.45) * gib
    if e in ("gups", "hashtable", "chase"):
        own = next((p.params[k] for k in ("updates", "steps", "probes") if k in p.params), "")
        ops = int(own) if own.isdigit() else cap if cap else (4 if e == "gups" else 1) * p.size_bytes // 8
        ns = (250 if e == "chase" else 100) * min(1.0, 0.05 + p.size_bytes / G)
        return ops * ns * 1e-9 * (3 if p.paired() else 1)   # paired: the tree and its two tables
    if e == "rbtree":
        return p.size_bytes / 48 * 250e-9 * min(1.0, 0.1 + p.size_bytes / (256 * M))
    if e == "blackscholes":
        scalar = kind in ("tree-iter", "tree-index") or p.params.get("layout") == "aos"
        repeat = int(p.params.get("repeat", 10))
        return p.size_bytes / 28 * repeat * (40e-9 if scalar else 3e-9)
    return 0.5 * gib


def setup_s(p: Point) -> float:
    """Rough seconds of a point's setup beyond mapping its data: rbtree's build (the
    insert phase) dominates its process."""
    return p.size_bytes / 48 * 2.2e-6 if p.experiment == "rbtree" else 0.0


# ---------------------------------------------------------------- report

KIND_LABEL = {"tree-index": "naive (tree-index)", "tree-fixed": "fixed depth (tree-fixed)",
              "tree-iter": "iterator (tree-iter)", "tree-seg": "per leaf (tree-seg)"}
BACKINGS = ("4k", "thp", "2m", "1g")
CELL_HELP = ("Cells: ratio of medians [best-worst from the repetitions' min/max]; "
             "`!` a backing fell back from the one asked; `~` a spread >= 10%; "
             "- not measured. Below 1.00x the tree (or pool) is faster.")


def _backings(recs, exp):
    """The backings asked for in ``exp``'s records, in :data:`BACKINGS` order."""
    have = {r["backing_requested"] for r in recs.all if r["experiment"] == exp}
    return [b for b in BACKINGS if b in have]


def _cell(r):
    return r.cell() if r else "-"


def _table2(doc, recs, access, compact=False):
    sizes = recs.sizes("scan", access)
    if not sizes:
        return
    rows = []
    for kind in KIND_LABEL:
        for b in _backings(recs, "scan"):
            dens = [f"array-{b}"] + ([] if b == "4k" else ["array-4k"])
            for den in dens:
                if compact and not (b == "1g" or (b == _backings(recs, "scan")[-1])):
                    continue
                cells = [_cell(ratio(recs, "scan", f"{kind}-{b}", den, s, access)) for s in sizes]
                if any(c != "-" for c in cells):
                    same = "same backing" if den == f"array-{b}" else "vs 4 KiB array"
                    rows.append([f"{KIND_LABEL[kind]} {kind}-{b} / {den} ({same})"] + cells)
    for flavour in ("naive", "iterator") if access in ("linear", "strided") else ():
        theirs = seeds.table2_row(access, flavour)
        if compact and not set(theirs) & set(sizes):
            continue
        rows.append([f"THEIRS (seed paper) {flavour}, 1g tree / 4k array"] +
                    [f"{theirs[s]:.2f}x" if s in theirs else "" for s in sizes])
    doc.table([f"{access} scan"] + [format_size(s) for s in sizes], rows)
    missing = [s for s in seeds.TABLE2_SIZES if s not in sizes]
    if missing and not compact and access in ("linear", "strided"):
        doc.p("Seed paper sizes not measured here (theirs): " + "; ".join(
            f"{format_size(s)}: naive {seeds.table2_row(access, 'naive')[s]:.2f}x, "
            f"iterator {seeds.table2_row(access, 'iterator')[s]:.2f}x" for s in missing))


def _random_access(doc, recs, exp, title):
    sizes = recs.sizes(exp)
    if not sizes:
        return
    doc.h(2, title)
    rows = []
    for b in _backings(recs, exp):
        pairs = [(f"tree-index-{b}", f"array-{b}")]
        if b != "4k":
            pairs += [(f"tree-index-{b}", "array-4k"), (f"array-{b}", "array-4k")]
        for n, d in pairs:
            cells = [_cell(ratio(recs, exp, n, d, s)) for s in sizes]
            if any(c != "-" for c in cells):
                rows.append([f"{n} / {d}"] + cells)
    doc.table([exp] + [format_size(s) for s in sizes], rows)
    caps = sorted({f"{k}={v}" for r in recs.all if r["experiment"] == exp
                   for k, v in r["params"].items() if k in ("updates", "probes", "steps")})
    ops = sorted({r["ops_per_pass"] for r in recs.all if r["experiment"] == exp})
    doc.p(f"Work per pass: {', '.join(caps) or 'program default'} "
          f"(ops_per_pass in the records: {', '.join(map(str, ops))}).")
    if exp in seeds.STATED:
        doc.p(seeds.STATED[exp])


def _rbtree(doc, recs):
    sizes = recs.sizes("rbtree")
    if not sizes:
        return
    doc.h(2, "Red-black tree (Fig. 4 analogue)")
    rows = []
    for v in ("pool-4k", "pool-thp", "pool-2m", "pool-1g"):
        for phase, label in ((None, "traversal"), ("insert", "insert")):
            cells = [_cell(ratio(recs, "rbtree", v, "malloc-4k", s, phase=phase)) for s in sizes]
            if any(c != "-" for c in cells):
                rows.append([f"{v} / malloc-4k, {label}"] + cells)
    doc.table(["rbtree"] + [format_size(s) for s in sizes], rows)
    doc.p(seeds.STATED["rbtree"])


def _blackscholes(doc, recs):
    if not recs.sizes("blackscholes"):
        return
    doc.h(2, "Blackscholes (Fig. 5 analogue)")
    for layout in recs.dims("blackscholes"):
        sizes = recs.sizes("blackscholes", layout)
        rows = []
        for kind in ("tree-seg", "tree-iter", "tree-index"):
            for b in _backings(recs, "blackscholes"):
                for den in dict.fromkeys([f"array-{b}", "array-4k"]):
                    cells = [_cell(ratio(recs, "blackscholes", f"{kind}-{b}", den, s, layout))
                             for s in sizes]
                    if any(c != "-" for c in cells):
                        rows.append([f"{kind}-{b} / {den}"] + cells)
        doc.table([f"blackscholes {layout}"] + [format_size(s) for s in sizes], rows)
    sweep = [r for r in recs.all if r["experiment"] == "blackscholes" and r.get("tree")]
    rows = []
    for r in sorted(sweep, key=lambda r: (r["variant"], r["params"].get("layout"),
                                          r["size_bytes"], r["tree"]["block_size"])):
        base = recs.find("blackscholes", "array-" + r["backing_requested"], r["size_bytes"],
                         str(r["params"].get("layout")))
        rows.append([r["variant"], r["params"].get("layout"), format_size(r["size_bytes"]),
                     format_size(r["tree"]["block_size"]), r["tree"]["depth"],
                     _cell(Ratio(r, base)) if base else "-"])
    if len({row[3] for row in rows}) > 1:
        doc.h(3, "By block size")
        doc.table(["variant", "layout", "size", "block", "depth", "tree / array (same backing)"], rows)
    doc.p(seeds.STATED["blackscholes"])


def report(doc, recs: Records, results: dict, out_dir) -> None:
    """The lab's section: Table 2 analogue (scans), GUPS, rbtree, chase, blackscholes,
    hash table."""
    if recs.sizes("scan"):
        doc.h(2, "Table 2 analogue: tree / array, scans")
        doc.p(CELL_HELP)
        for access in recs.dims("scan"):
            _table2(doc, recs, access)
    _random_access(doc, recs, "gups", "GUPS (Fig. 4 analogue)")
    _rbtree(doc, recs)
    _random_access(doc, recs, "chase", "Pointer chase")
    _blackscholes(doc, recs)
    _random_access(doc, recs, "hashtable", "Hash table (deepsjeng-like)")


def headline(doc, recs: Records) -> None:
    """The terminal's short version: the Table 2 analogue on 1 GiB trees."""
    if not recs.sizes("scan"):
        return
    doc.h(2, "Table 2 analogue (tree / array)")
    doc.p(CELL_HELP)
    for access in recs.dims("scan"):
        _table2(doc, recs, access, compact=True)


def plots(recs: Records, out: Path) -> List[Tuple[str, Path]]:
    """ns per op against size, one PNG per experiment (and dimension), one line per
    variant; and blackscholes by block size."""
    made = []
    mine = {r.experiment for r in TABLE}
    for exp in dict.fromkeys(r["experiment"] for r in recs.all if r["experiment"] in mine):
        for dim in recs.dims(exp):
            series = {}
            for r in recs.all:
                if r["experiment"] != exp or (dim and str(r["params"].get(DIMENSION[exp])) != dim):
                    continue
                if exp == "blackscholes" and recs.find(exp, r["variant"], r["size_bytes"], dim) is not r:
                    continue   # block-size sweep points are plotted separately
                series.setdefault(r["variant"], []).append(
                    (r["size_bytes"], r["median_ns"], r["min_ns"], r["max_ns"]))
            if not series:
                continue
            name = f"{exp}-{dim}" if dim else exp
            unit = next(r["unit"] for r in recs.all if r["experiment"] == exp)
            path = out / f"plot-{name}.png"
            plot_series(series, f"{name}: ns per {unit} (median, bars: min-max)", "size",
                        f"ns per {unit}", path)
            made.append((name, path))
    return made + _block_plot(recs, out)


def _block_plot(recs, out):
    series = {}
    for r in recs.all:
        if r["experiment"] == "blackscholes" and r.get("tree"):
            key = f"{r['variant']} {r['params'].get('layout')} {format_size(r['size_bytes'])}"
            series.setdefault(key, []).append(
                (r["tree"]["block_size"], r["median_ns"], r["min_ns"], r["max_ns"]))
    series = {k: v for k, v in series.items() if len({p[0] for p in v}) > 1}
    if not series:
        return []
    path = out / "plot-blackscholes-block-size.png"
    plot_series(series, "blackscholes: ns per option by block size", "block size",
                "ns per option", path)
    return [("blackscholes by block size", path)]


# ---------------------------------------------------------------- sanity

SANITY_CHECKED = ("gups", "chase", "hashtable")
LIMIT = "array-1g"
SANITY_NOTE = (f"Checked in {', '.join(SANITY_CHECKED)}: a tree faster than the array on the "
               f"same backing, and any variant faster than {LIMIT} (the no-translation limit). "
               "In these random-access experiments the time per operation is memory latency "
               "plus address translation; a tree's index walk adds loads and never saves one, "
               f"and {LIMIT} maps the data with the fewest translations the machine offers.")


def sanity_pairs(recs: Records) -> List[Tuple[str, dict, dict]]:
    """(rule, record, the record it may not beat) for every pair :mod:`physmem_lab.sanity`
    checks: per experiment, size and params, a ``tree-*`` variant against ``array`` on its
    backing, and every variant against :data:`LIMIT`."""
    out = []
    for exp in SANITY_CHECKED:
        key = DIMENSION.get(exp)
        for r in (r for r in recs.all if r["experiment"] == exp):
            kind, backing = r["kind"], r["backing_requested"]
            dim = str(r["params"].get(key)) if key else None
            arr = recs.find(exp, f"array-{backing}", r["size_bytes"], dim)
            lim = recs.find(exp, LIMIT, r["size_bytes"], dim)
            tree = kind.startswith("tree")
            if tree and arr is not None:
                out.append(("a tree faster than the array on its own backing", r, arr))
            if lim is not None and r is not lim and not (tree and lim is arr):
                out.append((f"faster than the no-translation limit {LIMIT}", r, lim))
    return out


# ---------------------------------------------------------------- goals

GOALS = {
    1: "tree-seg and tree-iter linear scan <= 1.00x the array on the same backing (largest size)",
    2: "strided tree-iter and tree-seg on 1g recover >= 90% of the translation cost "
       "(array-4k − array-1g) at >= 1 GiB",
    3: "GUPS tree-index-1g recovers >= 90% of the translation cost (array-4k − array-1g) "
       "at >= 1 GiB",
    4: "red-black tree pool-1g <= 0.50x malloc-4k (traversal; insert noted)",
    5: "blackscholes tree (per leaf) <= 1.00x the array on the same backing (largest size)",
}


def _largest_common(recs, exp, a, b, dim=None):
    both = [s for s in recs.sizes(exp, dim) if recs.find(exp, a, s, dim) and recs.find(exp, b, s, dim)]
    return max(both) if both else None


def _missing(goal, recs, exp, names, size=None):
    for v in names:
        why = recs.skipped_reason(exp, v, size)
        if why:
            goal.missing.append(why)


def goal1(recs):
    g = Goal(1, GOALS[1])
    for b in BACKINGS:
        for k in ("tree-seg", "tree-iter"):
            s = _largest_common(recs, "scan", f"{k}-{b}", f"array-{b}", "linear")
            if s:
                g.items.append(Item(f"linear {k}-{b} / array-{b} at {format_size(s)}",
                                    ratio(recs, "scan", f"{k}-{b}", f"array-{b}", s, "linear"), 1.0))
    if not g.items:
        _missing(g, recs, "scan", ["tree-seg-4k", "array-4k"])
    return g


# Goals 2 and 3 (issue 23): what the software controls is how much of the translation cost
# (array-4k − array-1g) a tree on 1 GiB pages recovers; how large that cost is depends on
# the CPU, and where it is within its spread the goal does not apply. The absolute ratios,
# the goals' earlier form (0.80x; 0.60x and 1.15x), are kept as notes.
RECOVERED = 0.9


def _walks(recs, rec) -> str:
    """The point's simulated walks per op (" (not simulated)" without them): the record's own
    translation field, else that of the same point in any round (only round 0 traces)."""
    t = rec.get("translation")
    if not t:
        key = point_key(rec)
        t = next((r["translation"] for r in recs.results.get("round_runs") or []
                  if r.get("translation") and point_key(r) == key), None)
    w = ((t or {}).get("per_op") or {}).get("walks")
    return f" {w:.3g}" if isinstance(w, (int, float)) else " (not simulated)"


def _recovered_item(g, recs, exp, tree, s, dim, what):
    """Adds the recovered share of ``tree`` at ``s`` as an item (or why it does not apply),
    and the three points' simulated walks as a note; nothing when a point is missing."""
    r = recovered(recs, exp, tree, s, dim)
    if r is None:
        return
    if r.applicable:
        g.items.append(Item(what, r, RECOVERED, at_least=True))
    else:
        g.not_applicable.append(f"{what}: {r.not_applicable()}")
    g.notes.append(f"{what}: simulated walks/op: array-4k{_walks(recs, r.den)}, "
                   f"{tree}{_walks(recs, r.num)}, array-1g{_walks(recs, r.floor)}")


def goal2(recs):
    g = Goal(2, GOALS[2])
    for k in ("tree-iter", "tree-seg"):
        for s in [s for s in recs.sizes("scan", "strided") if s >= G]:
            what = f"strided {k}-1g at {format_size(s)}"
            if not _paired_item(g, recs, "scan", f"{k}-1g", s, "strided", what):
                _recovered_item(g, recs, "scan", f"{k}-1g", s, "strided", what)
            r = ratio(recs, "scan", f"{k}-1g", "array-4k", s, "strided")
            if r:
                g.notes.append(f"absolute: strided {k}-1g / array-4k at {format_size(s)}: {r.cell()} "
                               "(the earlier target: 0.80x)")
    if not g.items and not g.not_applicable:
        if not [s for s in recs.sizes("scan", "strided") if s >= G]:
            g.missing.append("no strided scan at >= 1 GiB in these results")
        _missing(g, recs, "scan", ["tree-iter-1g", "tree-seg-1g"], None)
    return g


def _paired_item(g, recs, exp, tree, s, dim, what) -> bool:
    """Goals 2 and 3: the item from the ``tree`` record at ``s`` whose arrays ran in turn
    with it (pair=on: phases array-4k and array-1g), the share against the arrays' own
    processes noted when they ran too; False when there is no such record."""
    t = next((r for r in recs.find(exp, tree) if r["size_bytes"] == s and (dim is None or str(
        r["params"].get(recs.dimensions.get(exp, ""))) == dim) and {"array-4k", "array-1g"} <= set(
            r.get("phases") or {})), None)
    if t is None:
        return False
    r = PairedRecovered(t, "array-4k", "array-1g")
    if r.applicable:
        g.items.append(Item(what, r, RECOVERED, at_least=True))
    else:
        g.not_applicable.append(f"{what}: {r.not_applicable()}")
    apart = recovered(recs, exp, tree, s, dim)
    if apart:
        g.notes.append(f"{what}, against array-4k's and array-1g's own processes: {apart.cell()}")
    return True


def goal3(recs):
    g = Goal(3, GOALS[3])
    for s in [s for s in recs.sizes("gups") if s >= G]:
        what = f"gups tree-index-1g at {format_size(s)}"
        if not _paired_item(g, recs, "gups", "tree-index-1g", s, None, what):
            _recovered_item(g, recs, "gups", "tree-index-1g", s, None, f"gups tree-index-1g at {format_size(s)}")
        for den, target in (("array-4k", 0.6), ("array-1g", 1.15)):
            r = ratio(recs, "gups", "tree-index-1g", den, s)
            if r:
                g.notes.append(f"absolute: gups tree-index-1g / {den} at {format_size(s)}: {r.cell()} "
                               f"(the earlier target: {target:.2f}x)")
    if not g.items and not g.not_applicable:
        if not [s for s in recs.sizes("gups") if s >= G]:
            g.missing.append("no gups point at >= 1 GiB in these results")
        _missing(g, recs, "gups", ["tree-index-1g", "array-1g"])
    caps = {r["params"].get("updates") for r in recs.find("gups", "tree-index-1g")}
    if caps:
        g.notes.append("updates per pass: " + ", ".join(sorted(str(c) for c in caps)))
    return g


def goal4(recs):
    g = Goal(4, GOALS[4])
    s = _largest_common(recs, "rbtree", "pool-1g", "malloc-4k")
    if s:
        g.items.append(Item(f"rbtree traversal pool-1g / malloc-4k at {format_size(s)}",
                            ratio(recs, "rbtree", "pool-1g", "malloc-4k", s), 0.5))
        ins = ratio(recs, "rbtree", "pool-1g", "malloc-4k", s, phase="insert")
        if ins:
            g.notes.append(f"insert phase pool-1g / malloc-4k at {format_size(s)}: {ins.cell()}")
    else:
        _missing(g, recs, "rbtree", ["pool-1g", "malloc-4k"])
    return g


def goal5(recs):
    g = Goal(5, GOALS[5])
    for layout in recs.dims("blackscholes"):
        for b in BACKINGS:
            s = _largest_common(recs, "blackscholes", f"tree-seg-{b}", f"array-{b}", layout)
            if s:
                g.items.append(Item(f"blackscholes {layout} tree-seg-{b} / array-{b} at {format_size(s)}",
                                    ratio(recs, "blackscholes", f"tree-seg-{b}", f"array-{b}", s, layout), 1.0))
    if not g.items:
        _missing(g, recs, "blackscholes", ["tree-seg-4k", "array-4k"])
    return g


def goals(recs: Records) -> List[Goal]:
    """Goals 1-5 (numbered without a prefix: the lab's own, issue 3)."""
    return [goal1(recs), goal2(recs), goal3(recs), goal4(recs), goal5(recs)]


SUITE = SuiteDef("lab", "The lab: arrays as trees against flat arrays (seeds 000/001)",
                 TABLE, SCALES, pass_s=pass_s, setup_s=setup_s, report=report, goals=goals,
                 headline=headline, plots=plots, sanity=sanity_pairs, sanity_note=SANITY_NOTE,
                 dimensions=DIMENSION, legacy_scales=True, rank=0)
