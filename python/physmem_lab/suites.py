"""Suites: which measurement points a run makes, and how long each should take.

The lab's own suite (``lab``) is data in :data:`TABLE` (edit it there); other suites are
``suite_<name>.py`` modules (see :mod:`physmem_lab.suitedef`). A row names an experiment,
its variants, parameter sets, block sizes and, per scale, its sizes. :func:`plan` expands
the rows of the suites asked for into :class:`Point` objects, drops sizes the machine
cannot hold (MemAvailable) and, when a suite has a time budget, drops its least important
points until the estimate fits. Estimates come from :func:`estimate_s`, a rough model
calibrated on the development VM; they only drive the ETA and the budget.

Suite specs (``physmem bench --suite``): ``tiny``, ``default``, ``full`` are the lab at
that scale (the names of issue 3); otherwise a comma-separated list of suite names, or
``all``, each run at ``--scale``.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .suitedef import SCALES, G, K, M, Point, Row, SuiteDef, discover, geometric  # noqa: F401

UPDATES_CAP = 1 << 22     # gups updates / hashtable probes / chase steps per pass (default)
TINY_CAP = 1 << 16


def variants(kind: str, backings=("4k", "thp", "1g")) -> Tuple[str, ...]:
    return tuple(f"{kind}-{b}" for b in backings)


ARRAYS = variants("array")
TREE_INDEX = variants("tree-index")
SCAN_VARIANTS = ARRAYS + TREE_INDEX + variants("tree-iter") + variants("tree-seg")
PAPER_FULL = (4 * G, 8 * G, 16 * G, 32 * G, 64 * G)
# blackscholes prices each option `repeat` times a pass (program default 10): 4 keeps a
# 64 MiB pass near half a second, so two rounds fit the default budget
BS_REPEAT = {"repeat": "4"}


TABLE: Tuple[Row, ...] = (
    Row("scan", SCAN_VARIANTS, params=({"access": "linear"}, {"access": "strided"}),
        sizes={"tiny": (16 * K, 1 * M), "default": geometric(4 * K, 1 * G, 4),
               "full": geometric(4 * K, 1 * G, 4) + PAPER_FULL}, priority=0),
    Row("gups", ARRAYS + TREE_INDEX, cap="updates",
        sizes={"tiny": (1 * M,), "default": (64 * M, 256 * M, 1 * G),
               "full": (64 * M, 256 * M, 1 * G, 4 * G, 16 * G, 64 * G)}, priority=0),
    Row("chase", ARRAYS + TREE_INDEX, cap="steps", cap_shift=2,   # ~250 ns a step at 1 GiB
        sizes={"tiny": (32 * K, 1 * M), "default": (32 * K, 1 * G),
               "full": (32 * K, 1 * G, 4 * G, 16 * G)}),
    Row("rbtree", ("malloc-4k", "pool-4k", "pool-thp", "pool-1g"),
        sizes={"tiny": (1 * M,), "default": (16 * M, 128 * M), "full": (16 * M, 512 * M, 4 * G)},
        priority=0),
    Row("blackscholes", ARRAYS + variants("tree-seg"),
        params=({"layout": "soa", **BS_REPEAT}, {"layout": "aos", **BS_REPEAT}),
        sizes={"tiny": (256 * K,), "default": (64 * M,), "full": (16 * M, 256 * M, 1 * G)},
        priority=0),
    Row("blackscholes", ("tree-iter-thp", "tree-index-thp"), params=({"layout": "soa", **BS_REPEAT},),
        sizes={"tiny": (256 * K,), "default": (64 * M,), "full": (16 * M, 256 * M, 1 * G)}),
    Row("blackscholes", ("tree-seg-thp",), params=({"layout": "soa", **BS_REPEAT},),
        block_sizes=(4 * K, 16 * K, 64 * K, 256 * K, 1 * M, 2 * M),
        sizes={"tiny": (), "default": (64 * M,), "full": (256 * M, 1 * G)}, priority=2),
    Row("hashtable", ARRAYS + TREE_INDEX, cap="probes",
        sizes={"tiny": (1 * M,), "default": (64 * M, 256 * M, 1 * G),
               "full": (64 * M, 256 * M, 1 * G, 4 * G, 16 * G)}),
)

# Per suite: repetitions (in total), rounds (each a fresh process per point with its
# share of the repetitions; lab/PROTOCOL.md "Order"), warm-ups, --min-rep-ms, the cap, and
# the time budget (seconds; None = unbounded). The default's budget leaves a minute of its
# 12 for setup.
SUITES = {
    "tiny": {"reps": 2, "rounds": 2, "warmup": 1, "min_rep_ms": 5, "cap": TINY_CAP,
             "budget_s": 60},
    "default": {"reps": 6, "rounds": 2, "warmup": 1, "min_rep_ms": 30, "cap": UPDATES_CAP,
                "budget_s": 11 * 60},
    "full": {"reps": 6, "rounds": 2, "warmup": 1, "min_rep_ms": 50, "cap": None,
             "budget_s": None},
}


LAB = SuiteDef("lab", "The lab: arrays as trees against flat arrays (seeds 000/001)",
               TABLE, SUITES)   # pass_s is _pass_s below (estimate_s dispatches)


# Seconds per GiB of one pass, and fixed ns per op, by (experiment, kind-ish). Rough.
_SETUP_S_PER_GIB = {"4k": 1.6, "thp": 1.3, "2m": 0.4, "1g": 0.4}


def _pass_s(p: Point, cap: Optional[int]) -> float:
    gib = p.size_bytes / G
    e, kind = p.experiment, p.kind
    if e == "scan":
        if p.params.get("access") == "strided":
            return 0.4 * gib
        return {"array": 0.04, "tree-seg": 0.04, "tree-iter": 0.12}.get(kind, 0.45) * gib
    if e in ("gups", "hashtable", "chase"):
        own = next((p.params[k] for k in ("updates", "steps", "probes") if k in p.params), "")
        ops = int(own) if own.isdigit() else cap if cap else (4 if e == "gups" else 1) * p.size_bytes // 8
        ns = (250 if e == "chase" else 100) * min(1.0, 0.05 + p.size_bytes / G)
        return ops * ns * 1e-9
    if e == "rbtree":
        return p.size_bytes / 48 * 250e-9 * min(1.0, 0.1 + p.size_bytes / (256 * M))
    if e == "blackscholes":      # measured (AMD EPYC VM, busy): ~40 ns/pricing soa, ~60 aos
        scalar = kind in ("tree-iter", "tree-index") or p.params.get("layout") == "aos"
        repeat = int(p.params.get("repeat", 10))
        return p.size_bytes / 28 * repeat * (35e-9 if scalar else 25e-9)
    return 0.5 * gib


def registry() -> Dict[str, SuiteDef]:
    """Every suite by name: ``lab`` first, then the ``suite_*.py`` modules."""
    return {"lab": LAB, **discover()}


def estimate_s(p: Point, reps: int, warmup: int, min_rep_ms: float,
               cap: Optional[int]) -> float:
    """Rough wall time of one process of a point: start-up + setup + (warm-up + reps)
    passes (``reps`` of that process)."""
    setup = _SETUP_S_PER_GIB.get(p.backing, 1.6) * p.size_bytes / G
    if p.backing == "1g":
        setup += 0.15 * p.pages_1g()
    if p.experiment == "rbtree":          # the build (insert phase) dominates
        setup += p.size_bytes / 48 * 2.2e-6
    pass_s = _pass_s if p.suite == "lab" else registry()[p.suite].pass_s
    rep = max(min_rep_ms / 1000, pass_s(p, cap))
    return 0.05 + setup + (reps + warmup) * rep


def fits_memory(p: Point, mem_available: Optional[int]) -> bool:
    """Whether a point can run next to what else the machine holds (data + ~25%)."""
    if not mem_available:
        return True
    need = p.pages_1g() * G if p.backing == "1g" else p.size_bytes * 1.25
    return need <= mem_available * 0.8


def expand(suite: str, only=None, official: bool = False, scale: Optional[str] = None
           ) -> List[Point]:
    """Every point of ``suite`` at ``scale`` in table order (``only``: experiments to
    keep). A legacy name (tiny/default/full) is the lab at that scale."""
    if suite in SCALES:
        suite, scale = "lab", suite
    sd = registry()[suite]
    scale = scale or "default"
    cfg = sd.scales[scale]
    points = []
    for row in sd.rows:
        if only and row.experiment not in only:
            continue
        for params in row.params:
            for size in row.sizes.get(scale, ()):
                for bs in row.block_sizes:
                    for v in row.variants:
                        ps = dict(params)
                        if row.cap:
                            if official and row.experiment == "gups":
                                ps[row.cap] = "official"
                            elif cfg["cap"]:
                                ps[row.cap] = str(max(cfg["cap"] >> row.cap_shift, 1))
                        points.append(Point(row.experiment, v, size, ps, bs, row.priority,
                                            suite=suite, reps=cfg["reps"],
                                            warmup=cfg["warmup"],
                                            min_rep_ms=cfg["min_rep_ms"],
                                            rounds=cfg.get("rounds", 1)))
    return points


@dataclass
class Plan:
    suite: str
    points: List[Point]
    reps: int
    warmup: int
    min_rep_ms: float
    cap: Optional[int]
    official: bool
    dropped: List[str] = field(default_factory=list)   # why points were left out
    scale: str = "default"
    suites: List[str] = field(default_factory=list)      # the suites this plan runs

    @property
    def total_est_s(self) -> float:
        return sum(p.est_s for p in self.points)

    def pages_1g_needed(self) -> int:
        """1 GiB pages to have free: the largest point's need plus one spare (programs
        may map a little more than the data), 0 without 1g points."""
        need = max((p.pages_1g() for p in self.points), default=0)
        return need + 1 if need else 0


def reservation_pages(need: int, mem_available: Optional[int]) -> int:
    """1 GiB pages to reserve for ``need``: at most half of MemAvailable (the rest of the
    run and the machine's other users need memory too)."""
    if not mem_available:
        return need
    return min(need, int(mem_available // G) // 2)


def parse_spec(spec: str, scale: Optional[str] = None) -> List[Tuple[str, str]]:
    """``--suite`` (and ``--scale``) as [(suite, scale)]; ValueError naming the choices.
    tiny/default/full are the lab at that scale; ``all`` is every suite."""
    known = registry()
    out = []
    for name in (n.strip() for n in spec.split(",") if n.strip()):
        if name in SCALES:
            out.append(("lab", scale or name))
        elif name == "all":
            out += [(n, scale or "default") for n in known]
        elif name in known:
            out.append((name, scale or "default"))
        else:
            raise ValueError(f"unknown suite {name!r} (choose from "
                             f"{', '.join(list(SCALES) + list(known) + ['all'])})")
    if not out:
        raise ValueError("no suite named")
    return list(dict.fromkeys(out))


def plan(suite: str, only=None, reps: Optional[int] = None, official: bool = False,
         mem_available: Optional[int] = None, budget_s: Optional[float] = None,
         scale: Optional[str] = None, rounds: Optional[int] = None) -> Plan:
    """The points of the suites in ``suite`` (a spec, :func:`parse_spec`) this machine
    can run, each suite within its own time budget. ``reps`` and ``rounds`` override the
    suites' own (``est_s`` of a point covers all its rounds).

    Points larger than memory allows are dropped (and said so in ``Plan.dropped``). If the
    estimate exceeds the budget, points are dropped largest-first from the highest
    priority number down (sweeps first, goal points last) until it fits."""
    parts = parse_spec(suite, scale)
    first = registry()[parts[0][0]].scales[parts[0][1]]
    pl = Plan(suite, [], reps or first["reps"], first["warmup"], first["min_rep_ms"],
              first["cap"], official, scale=parts[0][1], suites=[n for n, _ in parts])
    for name, sc in parts:
        cfg = registry()[name].scales[sc]
        cap = None if official and sc != "tiny" else cfg["cap"]
        mine = []
        for p in expand(name, only, official, sc):
            p.reps, p.rounds = reps or p.reps, rounds or p.rounds
            if not fits_memory(p, mem_available):
                pl.dropped.append(f"{p.label()}: needs more than MemAvailable allows")
                continue
            p.est_s = p.rounds * estimate_s(p, p.round_reps(p.reps), p.warmup, p.min_rep_ms, cap)
            mine.append(p)
        budget = budget_s if budget_s is not None else cfg["budget_s"]
        if budget is not None:
            mine = _trim(mine, pl.dropped, budget)
        pl.points += mine
    return pl


def _trim(points: List[Point], dropped: List[str], budget: float) -> List[Point]:
    """``points`` less the least important ones until their estimate fits ``budget``."""
    keep = list(points)
    order = sorted(keep, key=lambda p: (-p.priority, -p.size_bytes, -p.est_s))
    while sum(p.est_s for p in keep) > budget and order:
        victim = order.pop(0)
        keep.remove(victim)
        dropped.append(f"{victim.label()}: over the suite's time budget ({budget:.0f} s)")
    return keep
