"""The ``graph`` suite (issue 27): graph analytics (Graph500 / GAP kernels) over arrays that
are trees over blocks.

Program: ``physmem_lab_graph`` (lab/experiments/graph.cpp; kernels in lab/kernels/graph/).
One process per variant and size generates a Graph500 Kronecker graph (edge factor 16,
seeded), builds its CSR and runs BFS (the record's main timing), PageRank, connected
components and SSSP (phases) on the variant's arrays, every result validated:

- ``array-B``: every array of the graph and the kernels in one contiguous mapping on B;
- ``tree-B``: each array a ``physmem::TreeArray`` on a block pool strictly on B, its process
  also holding every array contiguous on B (``pair=on``) and timing each kernel on both in
  turn, a repetition of each at a time (phases ``<kernel>@array``); tree-1g also alone;
- ``paged-thp``: each array a ``physmem::PagedArray`` with a budget of all its leaves
  (``ratio=1``: everything fits, the hit path's cost), frames on THP, paired as the trees
  are; and, in ``--full``,
  the graph at twice its budget (``ratio=2``, 64 KiB leaves: the CSR's arrays get half
  their leaves, the vertex arrays all of theirs, as out-of-core graph systems keep vertex
  state in memory);
- ``mapped-4k`` (``ratio=2``, ``--full``): the paged arrays' peer, every array carved out
  of one file mapped ``MAP_SHARED`` by a process in a memory cgroup whose limit leaves the
  file's page cache the paged variant's summed budget (root and cgroup v1: skipped
  elsewhere, the report says why). Both budgets change between kernels: each kernel's edge
  arrays get half their leaves and its vertex arrays all theirs, the arrays it does not
  read 2 leaves (the kernel's LRU would otherwise hand BFS the weights' share, and BFS's
  edges would fit). The mapping's graph arrays get ``MADV_SEQUENTIAL`` for PageRank and CC
  where the budget holds the device's read-ahead, else ``MADV_RANDOM``; the vertex arrays
  ``MADV_RANDOM``. The kernels' look-ahead (the lists of the next frontier or bucket
  vertices, the sweeps' next entries) reaches both: ``prefetch()`` batches for the pager,
  ``MADV_WILLNEED`` for the mapping.

--size bounds all the arrays' bytes; the program picks the largest scale that fits (the
record's ``graph`` field: scale, vertices, edges, bytes). Unit: an edge (BFS and SSSP:
the undirected edges of the searched component, Graph500's TEPS numerator; PageRank and
CC: a directed entry read, per iteration for PageRank).

Time budget: 50 s at the default scale (8 points x 2 rounds of a 64 MiB graph, scale 17:
about 1.5 s a process on the 2-vCPU guests, most of it generating, building and validating
the graph, and 3 s a paired one; the same 8 at 16 MiB, scale 15, a quarter of that: the
plots' second size). The 2x points run in ``--full`` only, on a 16 MiB graph: a paged
process takes about 25 s there and a mapped one 10-15 s (SSSP dominates both: its lists,
reached in bucket order, cost a 64 KiB leaf or a 4 KiB page each), too long for the main
job; at 4 MiB the mapping's allowance for the process's own pages leaves its page cache
room for the whole graph. Goal graph-4 says when its 2x half was not measured.
"""
from typing import List, Optional

from .analysis import Goal, Item, PhaseRatio, Quotient, Records, Tally, obtained, ratio, timing
from .plots import plot_series
from .suitedef import G, K, M, Point, Row, SuiteDef, variants
from .units import format_size

GRAPH = "graph"
KERNELS = ("bfs", "pagerank", "cc", "sssp")   # bfs is the record's main timing
ARRAYS, TREES = variants("array"), variants("tree")
PAGED = variants("paged", ("thp",))
MAPPED = variants("mapped", ("4k",))

# --full stops at 4 GiB of arrays (scale 23): the program also holds the CSR on the heap
# (about 0.6x the arrays' bytes) and, while building it, the edge list, about 1.6x the
# arrays at its peak: 16 GiB would not fit this machine kind's 23 GB beside the run.
_SIZES = {"tiny": (1 * M,), "default": (16 * M, 64 * M), "full": (16 * M, 64 * M, 512 * M, 4 * G)}
# The graph at twice its budget, against the kernel's paging: --full only (see above).
_SIZES_2X = {"tiny": (), "default": (), "full": (16 * M,)}
LEAF_2X = 64 * K
# pair=on: the tree's (or the paged arrays') process also holds every array contiguous on
# the same backing and times each kernel on both in turn (phases "<kernel>@array"): the
# same-backing ratios (graph-2) and paged / tree (graph-4, a quotient of two of them) pair
# repetitions that ran side by side. (Across processes, array-thp's BFS ran 1.09-1.68 ns an
# edge in the main job of e751c0a: above array-4k's.) tree-1g also runs alone: paired, it
# needs a third 1 GiB page, which the kernel does not always give; then graph-1 and graph-2
# at 1g read the processes apart.
PAIR = {"pair": "on"}
ROWS = (Row(GRAPH, ARRAYS, sizes=_SIZES, priority=0),
        Row(GRAPH, TREES, sizes=_SIZES, params=(PAIR,), priority=0),
        Row(GRAPH, variants("tree", ("1g",)), sizes=_SIZES, priority=0),
        Row(GRAPH, PAGED, sizes=_SIZES, params=({"ratio": "1", **PAIR},), priority=0),
        Row(GRAPH, PAGED + MAPPED, sizes=_SIZES_2X, params=({"ratio": "2"},), block_sizes=(LEAF_2X,), priority=0))
BESIDE = "@array"   # the phase suffix of the contiguous arrays' timing in a paired record

SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 2, "cap": None, "budget_s": 20},
    "default": {"reps": 4, "rounds": 2, "warmup": 1, "min_rep_ms": 20, "cap": None, "budget_s": 50},
    "full": {"reps": 6, "rounds": 2, "warmup": 1, "min_rep_ms": 50, "cap": None, "budget_s": None},
}

# Published context (not measured here): what the two benchmarks ask of a result.
RULES = (
    ("Graph500 BFS", "Kronecker generator A, B, C = 0.57, 0.19, 0.19, edge factor 16; 64 random roots with "
                     "an edge; each BFS tree validated (parent edges exist, levels differ by at most one "
                     "across every edge, the root's whole component reached); TEPS = input edges of the "
                     "component / time"),
    ("GAP Benchmark Suite", "BFS (direction-optimising), SSSP (delta-stepping), PageRank, connected "
                            "components, betweenness and triangle counting on Kronecker and real graphs; "
                            "every kernel's output verified"),
)


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one timed pass of all four kernels (development VM: ~0.15 s at
    64 MiB; the paged graph at 2x its budget ~10 s at 16 MiB, most of it SSSP; ETA and
    budget only)."""
    if p.params.get("ratio", "1") != "1":
        return 0.6 * p.size_bytes / M
    return (0.02 + 2.4 * p.size_bytes / G) * (2 if p.paired() else 1)


def setup_s(p: Point) -> float:
    """Generation, CSR build, copy and the validations (~0.9 s at 64 MiB)."""
    return 0.2 + 11.0 * p.size_bytes / G


# ---------------------------------------------------------------- lookups

def _phase(kernel: str) -> Optional[str]:
    return None if kernel == "bfs" else kernel


def kernel_ratio(recs: Records, num: str, den: str, size: int, kernel: str, budget: str = "1"):
    """num / den time per edge of ``kernel`` (two processes) at the budget ratio ``budget``
    ("1": everything fits; trees and arrays record 1), None when one is missing."""
    return ratio(recs, GRAPH, num, den, size, dim=budget, phase=_phase(kernel))


def _paired(recs: Records, variant: str, size: int, kernel: str) -> Optional[dict]:
    """The record of ``variant`` at ``size`` (everything in memory) that timed ``kernel`` in
    turn with contiguous arrays on its backing (pair=on), else None."""
    return next((r for r in recs.find(GRAPH, variant) if r["size_bytes"] == size and _budget(r) == "1"
                 and kernel + BESIDE in (r.get("phases") or {})), None)


def beside_ratio(recs: Records, variant: str, size: int, kernel: str):
    """``variant`` / contiguous arrays on its backing, of ``kernel``: from the paired
    repetitions of a pair=on record (the arrays beside it), else the processes apart
    (tree-B / array-B), None when neither ran."""
    r = _paired(recs, variant, size, kernel)
    if r is not None:
        return PhaseRatio(r, r, _phase(kernel), kernel + BESIDE)
    return kernel_ratio(recs, variant, "array-" + variant.split("-", 1)[1], size, kernel)


def paged_tree_ratio(recs: Records, size: int, kernel: str):
    """paged-thp (1x budget) / tree-thp of ``kernel``: the quotient of their paired ratios to
    the contiguous arrays beside each (the arrays cancel, and the state of the machine each
    process met with them), else the two processes apart."""
    p, t = _paired(recs, "paged-thp", size, kernel), _paired(recs, "tree-thp", size, kernel)
    if p is not None and t is not None:
        return Quotient(beside_ratio(recs, "paged-thp", size, kernel), beside_ratio(recs, "tree-thp", size, kernel))
    return kernel_ratio(recs, "paged-thp", "tree-thp", size, kernel)


def _graph_line(rec: dict) -> str:
    g = rec.get("graph") or {}
    return (f"scale {g.get('scale')} {g.get('generator', '?')}: {g.get('vertices', 0):,} vertices, "
            f"{g.get('undirected_edges', 0):,} edges, arrays {g.get('array_bytes', 0) / M:.1f} MiB")


# ---------------------------------------------------------------- report

def report(doc, recs: Records, results, out_dir):
    sizes = recs.sizes(GRAPH)
    if not sizes:
        doc.p("No graph records.")
        return
    for size in sizes:
        mine = [r for v in ARRAYS + TREES + PAGED + MAPPED for r in recs.find(GRAPH, v.name) if r["size_bytes"] == size]
        doc.h(3, f"{format_size(size)} of arrays: {_graph_line(mine[0])}")
        rows = []
        for r in sorted(mine, key=_budget):  # stable: variant order within a budget
            cells = [f"{timing(r, _phase(k))['median_ns']:.3g}" if k == "bfs" or k in (r.get("phases") or {}) else "-"
                     for k in KERNELS]
            name = r["variant"] + (" (arrays beside)" if (r.get("params") or {}).get("pair") == "on" else "")
            rows.append([name, _budget(r) + "x", obtained(r)] + cells + ["yes" if r.get("verified") else "NO"])
        doc.table(["variant", "data / budget", "backing obtained"] + [f"{k} ns/edge" for k in KERNELS] + ["validated"],
                  rows)
        if any(_budget(r) == "2" for r in mine):
            doc.table(["ratio (the graph at 2x its budget)"] + list(KERNELS),
                      [["paged-thp / mapped-4k"] + [_cell(kernel_ratio(recs, "paged-thp", "mapped-4k", size, k, "2"))
                                                   for k in KERNELS]])
            line = _phases_line([r for r in mine if r["kind"] == "mapped"])
            if line:
                doc.p(line)
        if not any(_budget(r) == "1" for r in mine):
            continue
        ratios = []
        for b in ("4k", "thp", "1g"):
            ratios.append([f"tree-{b} / array-{b}"] + [_cell(beside_ratio(recs, f"tree-{b}", size, k))
                                                      for k in KERNELS])
        ratios.append(["paged-thp (1x budget) / tree-thp"] + [_cell(paged_tree_ratio(recs, size, k))
                                                              for k in KERNELS])
        ratios.append(["tree-1g / array-4k"] + [_cell(kernel_ratio(recs, "tree-1g", "array-4k", size, k))
                                               for k in KERNELS])
        doc.table(["ratio"] + list(KERNELS), ratios)
    doc.p("Ratios: median [best-worst case of the repetitions] of time per edge. tree-B / array-B: the tree's "
          "process also held every array contiguous on B (\"arrays beside\", pair=on) and timed each kernel on "
          "both in turn, a repetition of each at a time: the median of those paired repetitions' ratios (where "
          "that process did not run, e.g. no third 1 GiB page, the two variants' own processes); paged / tree: "
          "the quotient of the two processes' ratios to their arrays beside; tree-1g / array-4k: two processes. "
          "Command: `physmem bench --suite graph` (add `--full` for scales up to 4 GiB of arrays).")
    doc.table(["benchmark", "its rules (context, not measured here)"], [list(x) for x in RULES])


def _phases_line(mapped: List[dict]) -> str:
    """Each kernel's budget at 2x and the hint the mapping's graph arrays had, from the first
    mapped record ("" when there is none)."""
    phases = next((r["phases_paging"] for r in mapped if r.get("phases_paging")), None)
    if not phases:
        return ""
    parts = [f"{k} {format_size(p['budget'])} ({p.get('graph_advice', '?')})" for k, p in phases.items()]
    return ("Each kernel's budget (its edge arrays at half their leaves, its vertex arrays whole, the arrays "
            "it does not read 2 leaves; the same for both, the mapping's cgroup limit changed between kernels) "
            "and the mapping's hint for the graph's arrays: " + "; ".join(parts) + ".")


def _cell(r) -> str:
    return r.cell() if r else "-"


def _budget(rec: dict) -> str:
    """The record's data / budget ratio ("1" for arrays and trees: everything in memory)."""
    return str((rec.get("params") or {}).get("ratio", "1"))


def plots(recs: Records, out_dir) -> List:
    out = []
    for k in KERNELS:
        series = {}
        for v in ARRAYS + TREES + PAGED + MAPPED:
            for r in recs.find(GRAPH, v.name):
                if k != "bfs" and k not in (r.get("phases") or {}):
                    continue
                t = timing(r, _phase(k))
                name = v.name if _budget(r) == "1" else f"{v.name} ({_budget(r)}x budget)"
                series.setdefault(name, []).append((r["size_bytes"], t["median_ns"], t["min_ns"], t["max_ns"]))
        if series:
            path = plot_series(series, f"graph {k}: time per edge", "bytes of the graph's arrays", "ns per edge",
                               out_dir / f"plot-graph-{k}.png")
            out.append((f"graph {k}", path))
    return out


# ---------------------------------------------------------------- goals

GOAL_TITLES = {
    1: "TreeArray on 1 GiB pages <= 1.0x contiguous arrays on 4 KiB pages for BFS, PageRank, CC and SSSP "
       "(largest size of the run)",
    2: "TreeArray <= 1.10x contiguous arrays on the same backing, every kernel, every size",
    3: "every result validated (BFS trees, SSSP distances, components, PageRank): no unverified record, "
       "no failed point",
    4: "PagedArray within 1.10x of TreeArray when everything fits (1x budget), every kernel; with the graph "
       "at 2x its budget >= 2x the cgroup-limited mapping (BFS, PageRank)",
}


def _sizes_at(recs: Records, budget: str) -> List[int]:
    """The sizes with records at data / budget ``budget`` ("1": every in-memory size; "2":
    the --full points of the graph at twice its budget)."""
    return [s for s in recs.sizes(GRAPH) if any(r["size_bytes"] == s and _budget(r) == budget
                                                for v in ARRAYS + TREES + PAGED + MAPPED
                                                for r in recs.find(GRAPH, v.name))]


def _largest(recs: Records) -> Optional[int]:
    sizes = _sizes_at(recs, "1")
    return sizes[-1] if sizes else None


def _kernel_items(g: Goal, recs: Records, num: str, den: str, target: float, what: str, of=None) -> Goal:
    """One item per kernel at the run's largest size: num / den (named ``what``), as
    ``of(size, kernel)`` gives it (default: the two processes apart, kernel_ratio)."""
    size = _largest(recs)
    of = of or (lambda s, k: kernel_ratio(recs, num, den, s, k))
    for k in KERNELS:
        r = of(size, k) if size else None
        if r is None:
            g.missing.append(f"{k}: no {num} and {den} records")
        else:
            g.items.append(Item(f"{format_size(size)} {k}: {what}", r, target))
    return g


def _translation_goal(recs: Records) -> Goal:
    return _kernel_items(Goal("graph-1", GOAL_TITLES[1]), recs, "tree-1g", "array-4k", 1.0, "tree-1g / array-4k")


def _same_backing_goal(recs: Records) -> Goal:
    g = Goal("graph-2", GOAL_TITLES[2])
    for size in _sizes_at(recs, "1"):
        for b in ("4k", "thp", "1g"):
            for k in KERNELS:
                r = beside_ratio(recs, f"tree-{b}", size, k)
                if r is None:
                    g.missing.append(f"{format_size(size)} {k}: no tree-{b} and array-{b} records")
                else:
                    g.items.append(Item(f"{format_size(size)} {k}: tree-{b} / array-{b}", r, 1.10))
    return g


def _validated_goal(recs: Records) -> Goal:
    g = Goal("graph-3", GOAL_TITLES[3])
    mine = [r for r in recs.all if r["experiment"] == GRAPH]
    failed = [e for e in recs.results.get("errors", []) if e["experiment"] == GRAPH]
    if not mine and not failed:
        g.missing.append("no graph records")
        return g
    bad = sum(not r.get("verified") for r in mine) + len(failed)
    g.items.append(Item(f"unverified records {sum(not r.get('verified') for r in mine)} of {len(mine)}, "
                        f"failed points {len(failed)}", Tally(bad, str(bad)), 0))
    for r in mine:
        if not r.get("verified"):
            g.notes.append(f"{r['variant']} {format_size(r['size_bytes'])}: {str(r.get('verification'))[:200]}")
    for e in failed:
        g.notes.append(f"{e['variant']} {format_size(e['size_bytes'])}: {e['reason'][:200]}")
    return g


def _paged_goal(recs: Records) -> Goal:
    g = _kernel_items(Goal("graph-4", GOAL_TITLES[4]), recs, "paged-thp", "tree-thp", 1.10,
                      "paged-thp (1x budget) / tree-thp", of=lambda s, k: paged_tree_ratio(recs, s, k))
    sizes = _sizes_at(recs, "2")
    if not sizes:
        g.missing.append("2x the budget against the cgroup-limited mapping: not measured in this run "
                         "(`physmem bench --suite graph --full` runs it on a 16 MiB graph; the mapping needs root "
                         "and cgroup v1)")
        return g
    for k in ("bfs", "pagerank"):  # >= 2x the mapping's throughput: <= 0.5x its time
        r = kernel_ratio(recs, "paged-thp", "mapped-4k", sizes[-1], k, "2")
        if r is None:
            g.missing.append(f"{k} at 2x: no paged-thp and mapped-4k records")
        else:
            g.items.append(Item(f"{format_size(sizes[-1])} {k} at 2x the budget: paged-thp / mapped-4k time", r, 0.5))
    return g


def goals(recs: Records) -> List[Goal]:
    return [_translation_goal(recs), _same_backing_goal(recs), _validated_goal(recs), _paged_goal(recs)]


SUITE = SuiteDef("graph", "Graph analytics on trees: Graph500 / GAP kernels over CSR arrays (issue 27)",
                 ROWS, SCALES, pass_s=pass_s, setup_s=setup_s, report=report, goals=goals, plots=plots, rank=78,
                 dimensions={GRAPH: "ratio"})
