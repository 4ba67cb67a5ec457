"""Suites: which measurement points a run makes, and how long each should take.

Everything a suite measures is data in :data:`TABLE` (edit it there). A row names an
experiment, its variants, parameter sets, block sizes and, per suite, its sizes.
:func:`plan` expands the rows of one suite into :class:`Point` objects, drops sizes the
machine cannot hold (MemAvailable) and, when the suite has a time budget, drops the
least important points until the estimate fits. Estimates come from :func:`estimate_s`,
a rough model calibrated on the development VM; they only drive the ETA and the budget.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

K, M, G = 1 << 10, 1 << 20, 1 << 30

UPDATES_CAP = 1 << 22     # gups updates / hashtable probes / chase steps per pass (default)
TINY_CAP = 1 << 16


def geometric(lo: int, hi: int, factor: int) -> Tuple[int, ...]:
    """lo, lo*factor, ... up to hi inclusive."""
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= factor
    return tuple(out)


def variants(kind: str, backings=("4k", "thp", "1g")) -> Tuple[str, ...]:
    return tuple(f"{kind}-{b}" for b in backings)


ARRAYS = variants("array")
TREE_INDEX = variants("tree-index")
SCAN_VARIANTS = ARRAYS + TREE_INDEX + variants("tree-iter") + variants("tree-seg")
PAPER_FULL = (4 * G, 8 * G, 16 * G, 32 * G, 64 * G)


@dataclass(frozen=True)
class Row:
    """One line of the table. ``sizes`` maps suite -> sizes; ``cap`` names the parameter
    that bounds the work per pass (its value is the suite's cap, or 'official' with
    --official for gups). Priority 0: needed by a goal; 1: tables; 2: sweeps."""
    experiment: str
    variants: Tuple[str, ...]
    sizes: Dict[str, Tuple[int, ...]]
    params: Tuple[Dict[str, str], ...] = ({},)
    block_sizes: Tuple[Optional[int], ...] = (None,)
    cap: Optional[str] = None
    priority: int = 1
    cap_shift: int = 0      # this row's cap is the suite's cap >> cap_shift


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
        sizes={"tiny": (1 * M,), "default": (16 * M, 512 * M), "full": (16 * M, 512 * M, 4 * G)},
        priority=0),
    Row("blackscholes", ARRAYS + variants("tree-seg"),
        params=({"layout": "soa"}, {"layout": "aos"}),
        sizes={"tiny": (256 * K,), "default": (64 * M,), "full": (16 * M, 256 * M, 1 * G)},
        priority=0),
    Row("blackscholes", ("tree-iter-thp", "tree-index-thp"), params=({"layout": "soa"},),
        sizes={"tiny": (256 * K,), "default": (64 * M,), "full": (16 * M, 256 * M, 1 * G)}),
    Row("blackscholes", ("tree-seg-thp",), params=({"layout": "soa"},),
        block_sizes=(4 * K, 16 * K, 64 * K, 256 * K, 1 * M, 2 * M),
        sizes={"tiny": (), "default": (64 * M,), "full": (256 * M, 1 * G)}, priority=2),
    Row("hashtable", ARRAYS + TREE_INDEX, cap="probes",
        sizes={"tiny": (1 * M,), "default": (64 * M, 256 * M, 1 * G),
               "full": (64 * M, 256 * M, 1 * G, 4 * G, 16 * G)}),
)

# Per suite: repetitions, warm-ups, --min-rep-ms, the cap, and the time budget (seconds;
# None = unbounded). The default's budget leaves a minute of its 10 for setup.
SUITES = {
    "tiny": {"reps": 2, "warmup": 1, "min_rep_ms": 5, "cap": TINY_CAP, "budget_s": 45},
    "default": {"reps": 5, "warmup": 1, "min_rep_ms": 50, "cap": UPDATES_CAP,
                "budget_s": 9 * 60},
    "full": {"reps": 5, "warmup": 1, "min_rep_ms": 50, "cap": None, "budget_s": None},
}


@dataclass
class Point:
    """One measurement point: one fresh process of one program."""
    experiment: str
    variant: str
    size_bytes: int
    params: Dict[str, str] = field(default_factory=dict)
    block_size: Optional[int] = None
    priority: int = 1
    est_s: float = 0.0

    @property
    def backing(self) -> str:
        return self.variant.rsplit("-", 1)[1]

    @property
    def kind(self) -> str:
        return self.variant.rsplit("-", 1)[0]

    def label(self) -> str:
        from .units import format_size
        extra = [f"{k}={v}" for k, v in sorted(self.params.items())]
        if self.block_size:
            extra.append(f"block={format_size(self.block_size)}")
        return " ".join([self.experiment, self.variant, format_size(self.size_bytes)] + extra)

    def pages_1g(self) -> int:
        """1 GiB pages this point needs (0 unless its backing is 1g): the data rounded up,
        plus one for tree inner blocks (an SoA array's seven columns share one mapping)."""
        if self.backing != "1g":
            return 0
        return -(-self.size_bytes // G) + (0 if self.kind == "array" else 1)


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
    if e == "blackscholes":      # measured: soa per leaf ~2.6 ns/option-pricing, scalar ~10x
        scalar = kind in ("tree-iter", "tree-index") or p.params.get("layout") == "aos"
        return p.size_bytes / 28 * 10 * (30e-9 if scalar else 3e-9)
    return 0.5 * gib


def estimate_s(p: Point, reps: int, warmup: int, min_rep_ms: float,
               cap: Optional[int]) -> float:
    """Rough wall time of one point: start-up + setup + (warm-up + reps) passes."""
    setup = _SETUP_S_PER_GIB.get(p.backing, 1.6) * p.size_bytes / G
    if p.backing == "1g":
        setup += 0.15 * p.pages_1g()
    if p.experiment == "rbtree":          # the build (insert phase) dominates
        setup += p.size_bytes / 48 * 2.2e-6
    rep = max(min_rep_ms / 1000, _pass_s(p, cap))
    return 0.05 + setup + (reps + warmup) * rep


def fits_memory(p: Point, mem_available: Optional[int]) -> bool:
    """Whether a point can run next to what else the machine holds (data + ~25%)."""
    if not mem_available:
        return True
    need = p.pages_1g() * G if p.backing == "1g" else p.size_bytes * 1.25
    return need <= mem_available * 0.8


def expand(suite: str, only=None, official: bool = False) -> List[Point]:
    """Every point of ``suite`` in table order (``only``: experiments to keep)."""
    cfg = SUITES[suite]
    points = []
    for row in TABLE:
        if only and row.experiment not in only:
            continue
        for params in row.params:
            for size in row.sizes.get(suite, ()):
                for bs in row.block_sizes:
                    for v in row.variants:
                        ps = dict(params)
                        if row.cap:
                            if official and row.experiment == "gups":
                                ps[row.cap] = "official"
                            elif cfg["cap"]:
                                ps[row.cap] = str(max(cfg["cap"] >> row.cap_shift, 1))
                        points.append(Point(row.experiment, v, size, ps, bs, row.priority))
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


def plan(suite: str, only=None, reps: Optional[int] = None, official: bool = False,
         mem_available: Optional[int] = None, budget_s: Optional[float] = None) -> Plan:
    """The points of ``suite`` this machine can run, within the suite's time budget.

    Points larger than memory allows are dropped (and said so in ``Plan.dropped``). If the
    estimate exceeds the budget, points are dropped largest-first from the highest
    priority number down (sweeps first, goal points last) until it fits."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (choose from {', '.join(SUITES)})")
    cfg = SUITES[suite]
    reps = reps or cfg["reps"]
    cap = None if official and suite != "tiny" else cfg["cap"]
    pl = Plan(suite, [], reps, cfg["warmup"], cfg["min_rep_ms"], cfg["cap"], official)
    for p in expand(suite, only, official):
        if not fits_memory(p, mem_available):
            pl.dropped.append(f"{p.label()}: needs more than MemAvailable allows")
            continue
        p.est_s = estimate_s(p, reps, pl.warmup, pl.min_rep_ms, cap)
        pl.points.append(p)
    budget = budget_s if budget_s is not None else cfg["budget_s"]
    if budget is not None:
        _trim(pl, budget)
    return pl


def _trim(pl: Plan, budget: float) -> None:
    order = sorted(pl.points, key=lambda p: (-p.priority, -p.size_bytes, -p.est_s))
    while pl.total_est_s > budget and order:
        victim = order.pop(0)
        pl.points.remove(victim)
        pl.dropped.append(f"{victim.label()}: over the suite's time budget ({budget:.0f} s)")
