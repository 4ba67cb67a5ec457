"""The ``translation`` suite (issue 15): what address translation costs, counted by a model.

Where a machine has no PMU (this VM, most cloud VMs) the lab shows only time, which mixes
translation with everything else. ``physmem bench --simulate PRESET|auto|off``
(:mod:`physmem_lab.simulate`) has the programs of :data:`KERNELS` trace their measured
region once per point (the first round's process) and replay it through the simulator
(``physmem-tlbsim``'s library: TLBs per page size, page-walk caches, walk references by
level, the software walk of a tree's inner blocks); each record then carries a
``translation`` field (lab/PROTOCOL.md). The suite has no points of its own: it judges the
lab's records of those programs and the simulator's own checks (:mod:`physmem_lab.tlbsim`,
``results["tlbsim"]``), so ``--suite lab,translation`` (or ``all``) is how to run it.

Goals (the numbers, the noise band and the checks are defined here once):

- ``translation-1`` (validation): every case of ``physmem-tlbsim validate`` within its
  tolerance (the *analytic* check, always). Where the records carry measured dTLB counters
  (a PMU) the *PMU* check applies too: the simulated count perf's generic dTLB read-miss
  event stands for (walks on Intel, L1 TLB misses on AMD: :data:`PMU_SIMULATED`) per op
  within +-10% of the measured ``dtlb_load_misses`` per op, per simulated point; without one the report says "not
  applicable" and how to run it (:data:`PMU_HOWTO`).
- ``translation-2`` (throughput): ``physmem-tlbsim bench``'s slowest pattern at least
  :data:`MIN_REFS_PER_S` references a second on one core (the CPU is recorded).
- ``translation-3`` (direction): for every pair the lab compares (:func:`pairs`), at the
  largest size both sides were simulated, the measured time ratio and the model's
  translation references agree where time is translation-bound (:class:`Pair`); met when
  no kernel disagrees and at least one agrees.

Direction, per pair A / B (A the tree, pool or huge-page side, B its baseline):

- time: T = median_A / median_B; noise band b = max(:data:`TIME_FLOOR`, the larger of the
  two sides' ``rel_spread`` ((max - min) / median of their repetitions), and of their
  spread between processes (:func:`~physmem_lab.spread.process_spread`: the two sides ran
  in different processes, whose speed varies more than repetitions do)); *higher* when
  T > 1 + b, *lower* when T < 1 - b, else *same*.
- model: D = (translation refs/op of A - of B) / (memory refs/op of B). With the data
  caches modelled on both sides, the translation refs no cache level held
  (``per_op.translation_memory_refs``) decide — a reference to memory costs far more than
  one a cache holds, which is too cheap to be what moves time; without the caches
  modelled, all translation refs decide (:attr:`Pair.field`). Memory refs = data
  references + hardware walk references (``per_op.refs + per_op.walk_refs``): the share of
  B's memory references the model adds or removes. Band m = max(:data:`MODEL_FLOOR`,
  sampling error, b), the sampling error being each side's ``halves.rel_diff`` times its
  translation refs/op, over B's memory refs, and b time's band (a change smaller than
  time's noise is one time cannot see); *higher* when D > m, *lower* when D < -m,
  else *same*. The translation-refs ratio and walks ratio are shown beside it.
- verdict: *agree* when both say the same (both *same* included); *tie* when time is
  within its band but the model predicts a difference (time cannot tell); *not
  translation* when time moves beyond its band but the model sees no difference in
  translation (time moved for another reason — a per-element test, vectorization, a
  different copy — so the pair says nothing about the model: classified and shown, not
  counted), also when it moves the other way by more than :data:`EXPLAINS` x |D| beyond
  its band (a change of D of the memory references moves time by about D at most: the
  rest is another cost, e.g. a tree walk's instructions); *disagree* when both move in
  opposite directions and time by no more than translation could explain.
  A kernel *agrees* when at least one pair agrees and none disagrees; *disagrees* when
  one pair does; otherwise (ties and not-translation pairs only) *undecided*: time cannot
  judge the model there, and the goal leaves the kernel out.

Every count shown comes from the records; the seed paper's ratios (THEIRS) and the goals'
thresholds are the only constants.
"""
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import seeds, whatif
from .analysis import Goal, Item, Ratio, Records, Scalar
from .plots import plot_series
from .spread import point_key, process_spread
from .suitedef import G, Point, SuiteDef
from .units import format_size

# ---------------------------------------------------------------- what is simulated

KERNELS = {"scan": "Table 2 scans", "gups": "GUPS (Fig. 4)", "rbtree": "red-black tree (Fig. 4)",
           "chase": "pointer chase"}
SIMULATED = tuple(KERNELS)          # the programs that take --simulate (SuiteDef.simulated)
BACKINGS = ("4k", "thp", "2m", "1g")
SCAN_KINDS = ("tree-index", "tree-fixed", "tree-iter", "tree-seg")

MIN_REFS_PER_S = 50e6       # translation-2
PMU_TOLERANCE = 0.10        # translation-1, PMU check
TIME_FLOOR = 0.02           # translation-3: time's noise band at least 2%
MODEL_FLOOR = 0.02          # translation-3: the model's band at least 2% of the references
# translation-3: a change of D of the memory references moves time by about D at most (a
# translation ref that reaches memory costs what a data one does); time moving the other
# way by more than EXPLAINS x |D| beyond its band moved for another reason.
EXPLAINS = 2.0
# Data of at most this size on 1 GiB pages has translations every preset holds after
# warm-up (Skylake: 4 L1 + 16 STLB 1 GiB entries; Zen 1-2 hold 1 GiB pages as 2 MiB
# entries: 512 of them, L2 DTLBs of 1536+), so more walks than this per op contradict it.
ONE_G_DATA_LIMIT = 1 * G
WALKS_AFTER_WARMUP = 0.01
NO_SOFTWARE_WALK = ("array", "malloc", "pool")   # kinds that never walk a tree

PMU_HOWTO = (
    "On a machine with a PMU (bare metal, or a VM with a virtual PMU: `perf stat -e "
    "dTLB-load-misses true` counts), run `physmem bench --suite lab,translation --simulate "
    "auto` as usual: the programs then record `dtlb_load_misses` (perf's generic dTLB "
    "read-miss event) per repetition, and translation-1 compares, per simulated point, the "
    "simulated count that event stands for on the CPU with the measured one per op of the "
    "same process (within +-10%): Linux maps the generic event to loads that miss the DTLB "
    "and start a walk on Intel (compared with simulated walks) and to L1 DTLB misses on AMD "
    "Zen, L2 TLB hits included (compared with simulated L1 misses) — see "
    "arch/x86/events/intel/core.c and amd/core.c of the running kernel, or `perf list "
    "--details`, and the record's counter `source`. Use a preset of the CPU itself "
    "(`physmem-tlbsim detect`).")

# The simulated count perf's generic dTLB read-miss event stands for, by CPU vendor
# (PMU_HOWTO); walks where the vendor is unknown.
PMU_SIMULATED = {"AuthenticAMD": "l1_misses", "GenuineIntel": "walks"}


def _kernels_of(recs) -> List[str]:
    return [e for e in KERNELS if any(r["experiment"] == e for r in recs.all)]


# ---------------------------------------------------------------- reading the records

def translation_of(rec: dict, results: dict) -> Optional[dict]:
    """The ``translation`` field of ``rec``, else that of the same point's record in any
    round (only the first round's process simulates: :mod:`physmem_lab.simulate`)."""
    if rec.get("translation"):
        return rec["translation"]
    key = point_key(rec)
    for r in results.get("round_runs") or []:
        if r.get("translation") and point_key(r) == key:
            return r["translation"]
    return None


def counted(t: Optional[dict]) -> bool:
    """Whether a translation field holds counts (a preset was simulated)."""
    return bool(t and t.get("preset") is not None and t.get("per_op"))


def simulated(recs: Records, exp: Optional[str] = None) -> List[Tuple[dict, dict]]:
    """(record, translation) of every record with counts (of ``exp``, or of any kernel)."""
    out = []
    for r in recs.all:
        if r["experiment"] in KERNELS and (exp is None or r["experiment"] == exp):
            t = translation_of(r, recs.results)
            if counted(t):
                out.append((r, t))
    return out


def present(results: dict) -> bool:
    """A result file shows this suite when the simulator's checks ran, or a record of a
    kernel carries a translation field."""
    return bool(results.get("tlbsim")) or any(
        r.get("translation") for key in ("records", "round_runs")
        for r in results.get(key) or [] if isinstance(r, dict))


def _dim(r) -> Optional[str]:
    return str(r["params"].get("access")) if r["experiment"] == "scan" else None


def _mem_refs(t) -> float:
    return t["per_op"]["refs"] + t["per_op"]["walk_refs"]


def _err(t) -> float:
    return float((t.get("halves") or {}).get("rel_diff") or 0.0)


def pmu_walks_per_op(rec: dict) -> Optional[Tuple[float, str]]:
    """(measured dtlb_load_misses per op, its source) of a record's timed repetitions, or
    None without the counter."""
    c = (rec.get("counters") or {}).get("dtlb_load_misses")
    reps = (c or {}).get("per_rep") if isinstance(c, dict) else None
    if not reps:
        return None
    ops = len(reps) * rec.get("passes_per_rep", 1) * rec["ops_per_pass"]
    return sum(reps) / ops, c.get("source", "?")


def _process_record(rec: dict, results: dict) -> dict:
    """The record of the process that simulated ``rec``'s point (its counters and the
    simulated window come from the same process)."""
    if rec.get("translation"):
        return rec
    key = point_key(rec)
    return next((r for r in results.get("round_runs") or []
                 if r.get("translation") and point_key(r) == key), rec)


# ---------------------------------------------------------------- pairs and direction

def pairs(exp: str) -> List[Tuple[str, str]]:
    """The pairs the lab compares for ``exp`` (its report's tables), numerator first; the
    scans also get array-B / array-4k (the page size alone)."""
    if exp == "rbtree":
        return [(f"pool-{b}", "malloc-4k") for b in BACKINGS]
    kinds = SCAN_KINDS if exp == "scan" else ("tree-index",)
    out = []
    for b in BACKINGS:
        out += [(f"{k}-{b}", f"array-{b}") for k in kinds]
        if b != "4k":
            out += [(f"{k}-{b}", "array-4k") for k in kinds] + [(f"array-{b}", "array-4k")]
    return out


def theirs(exp: str, dim: Optional[str], num: str, den: str, size: int) -> str:
    """The seed paper's published ratio for this pair and size (THEIRS), or ''."""
    if exp == "scan" and dim in ("linear", "strided") and den == "array-4k":
        flavour = {"tree-index-1g": "naive", "tree-iter-1g": "iterator"}.get(num)
        row = seeds.table2_row(dim, flavour) if flavour else {}
        return f"{row[size]:.2f}x" if size in row else ""
    if exp == "gups" and (num, den) == ("tree-index-1g", "array-4k"):
        return "< 1x" if size >= 16 * G else "> 1x"
    if exp == "rbtree" and (num, den) == ("pool-1g", "malloc-4k"):
        return "~0.50x"
    return ""


def _direction(x: float, band: float) -> str:
    return "higher" if x > band else "lower" if x < -band else "same"


class Pair:
    """One compared pair at one size: measured time ratio against the model (module
    docstring, "Direction")."""

    def __init__(self, exp, dim, num, den, ta, tb, results: Optional[dict] = None):
        self.exp, self.dim, self.num, self.den, self.ta, self.tb = exp, dim, num, den, ta, tb
        self.time = Ratio(num, den)
        self.results = results or {}

    @property
    def size(self) -> int:
        return self.num["size_bytes"]

    @property
    def band(self) -> float:
        """Time's noise band: the floor, each side's spread within its process, and each
        side's spread between the processes its point ran in (the two sides of a pair
        ran in different processes, whose speed differs more than repetitions do)."""
        between = [process_spread(self.results, r) for r in (self.num, self.den)]
        return max([TIME_FLOOR, self.num["rel_spread"], self.den["rel_spread"]] + [b for b in between if b])

    @property
    def time_dir(self) -> str:
        return _direction(self.time.value - 1.0, self.band)

    def _delta(self, f: str) -> float:
        return (self.ta["per_op"][f] - self.tb["per_op"][f]) / max(_mem_refs(self.tb), 1e-12)

    def _band(self, f: str) -> float:
        """The model's band: its floor, its sampling error, and time's own band (a change
        of fewer memory references than time's noise is one time cannot see: a model that
        predicts it predicts no visible change)."""
        err = (_err(self.ta) * self.ta["per_op"][f] + _err(self.tb) * self.tb["per_op"][f]) / max(
            _mem_refs(self.tb), 1e-12)
        return max(MODEL_FLOOR, err, self.band)

    @property
    def field(self) -> str:
        """The measure that decides the model's direction: with the data caches modelled on
        both sides, the translation refs that reach memory (a reference a cache holds costs
        a hit, too little to be what moves time; when only those differ the model predicts
        no change and time moving is "not translation"), else every translation ref."""
        m = "translation_memory_refs"
        if all(t["per_op"].get(m) is not None for t in (self.ta, self.tb)):
            return m
        return "translation_refs"

    @property
    def delta(self) -> float:
        return self._delta(self.field)

    @property
    def model_band(self) -> float:
        return self._band(self.field)

    @property
    def model_dir(self) -> str:
        return _direction(self.delta, self.model_band)

    @property
    def verdict(self) -> str:
        if self.time_dir == self.model_dir:
            return "agree"
        if self.time_dir == "same":
            return "tie"
        if self.model_dir == "same" or abs(self.time.value - 1.0) > EXPLAINS * abs(self.delta) + self.band:
            return "not translation"
        return "disagree"

    def model_ratio(self, field: str) -> str:
        a, b = self.ta["per_op"][field], self.tb["per_op"][field]
        if b == 0:
            return "=" if a == 0 else "from 0"
        return f"{a / b:.3g}x"

    def label(self) -> str:
        return f"{self.num['variant']} / {self.den['variant']}"

    def text(self) -> str:
        dim = f" {self.dim}" if self.dim else ""
        return (f"{self.exp}{dim} {self.label()} at {format_size(self.size)}: time "
                f"{self.time.value:.2f}x ({self.time_dir}, band +-{self.band:.0%}), model "
                f"{self.field.replace('_', ' ')} {self.model_ratio(self.field)} ({self.model_dir}: "
                f"{self.delta:+.1%} of the baseline's memory references)")


def compared(recs: Records, exp: str, largest_only: bool = False) -> List[Pair]:
    """Every simulated pair of ``exp`` (:func:`pairs`) at each size both sides have
    counts (``largest_only``: at the largest such size of each pair and dimension). Pairs
    with a record that contradicts itself (:func:`contradictions`) are left out."""
    bad = {point_key(r) for _, r, _ in contradictions(recs)}
    out = []
    for dim in recs.dims(exp):
        for n, d in pairs(exp):
            found = []
            for size in recs.sizes(exp, dim):
                a, b = recs.find(exp, n, size, dim), recs.find(exp, d, size, dim)
                if a is None or b is None or {point_key(a), point_key(b)} & bad:
                    continue
                ta, tb = translation_of(a, recs.results), translation_of(b, recs.results)
                if counted(ta) and counted(tb):
                    found.append(Pair(exp, dim if exp == "scan" else None, a, b, ta, tb, recs.results))
            out += found[-1:] if largest_only else found
    return out


def kernel_verdict(ps: List[Pair]) -> str:
    v = [p.verdict for p in ps]
    if "disagree" in v:
        return "disagrees"
    return "agrees" if "agree" in v else "undecided"


# ---------------------------------------------------------------- sanity

def contradictions(recs: Records) -> List[Tuple[str, dict, str]]:
    """(rule, record, what) for every record whose own simulated counts contradict each
    other."""
    out = []
    for r, t in simulated(recs):
        po, c = t["per_op"], t.get("counts") or {}
        if r["kind"] in NO_SOFTWARE_WALK and po["sw_walk_loads"] > 0:
            out.append((f"a {r['kind']} variant has no software walk", r,
                        f"{po['sw_walk_loads']:.3g} software-walk loads per op"))
        by_size = c.get("accesses_by_size") or {}
        only_1g = by_size.get("1g", 0) > 0 and not by_size.get("4k") and not by_size.get("2m")
        if only_1g and r["size_bytes"] <= ONE_G_DATA_LIMIT and po["walks"] > WALKS_AFTER_WARMUP:
            out.append((f"data of at most {format_size(ONE_G_DATA_LIMIT)} only on 1 GiB pages (within "
                        f"every preset's TLBs) walks at most {WALKS_AFTER_WARMUP} times per op after "
                        "warm-up", r, f"{po['walks']:.3g} walks per op"))
        if t.get("translate") is False and (po["walks"] > 0 or po["walk_refs"] > 0):
            out.append(("the no-translation mode makes no page walk", r,
                        f"{po['walks']:.3g} walks and {po['walk_refs']:.3g} walk refs per op"))
        if c and (c.get("walks", 0) > c.get("l1_misses", 0) or c.get("l1_misses", 0) > c.get("accesses", 0)):
            out.append(("walks <= L1 TLB misses <= accesses", r,
                        f"{c.get('walks')} walks, {c.get('l1_misses')} L1 misses, {c.get('accesses')} accesses"))
        if "walk_refs_by_level" in c and sum(c["walk_refs_by_level"]) != c.get("walk_refs"):
            out.append(("walk references by level add up to the walk references", r,
                        f"{sum(c['walk_refs_by_level'])} by level against {c.get('walk_refs')}"))
        tr = po["walk_refs"] + po["sw_walk_loads"]
        if abs(po["translation_refs"] - tr) > 1e-6 * max(1.0, tr):
            out.append(("translation refs are walk refs plus software-walk loads", r,
                        f"{po['translation_refs']:.6g} against {tr:.6g} per op"))
    return out


SANITY_NOTE = ("simulated counts must be consistent in themselves: no software-walk loads for "
               f"{', '.join(NO_SOFTWARE_WALK)} variants; data of at most {format_size(ONE_G_DATA_LIMIT)} "
               f"only on 1 GiB pages at most {WALKS_AFTER_WARMUP} walks per op after warm-up; "
               "no walks in the no-translation mode; walks <= L1 misses <= accesses; walk refs by "
               "level adding up; translation refs = walk refs + software-walk loads.")


# ---------------------------------------------------------------- goals

GOALS = {
    1: "physmem-tlbsim validate: every analytic case within its tolerance; where a PMU exists, "
       "the simulated dTLB misses/op (walks on Intel, L1 misses on AMD) within +-10% of measured",
    2: f"physmem-tlbsim bench: slowest pattern >= {MIN_REFS_PER_S / 1e6:.0f} M references/s on one core, "
       "for the run's model and for every preset",
    3: "per kernel (scans, GUPS, red-black tree, pointer chase): the measured time ratio and the "
       "simulated translation references agree in direction for every compared pair where both move "
       "(largest size; time moving without translation is classified, not counted)",
}


class Validation(Scalar):
    """``physmem-tlbsim validate``'s cases: the number that failed; target 0."""

    @property
    def value(self):
        cases = self.num.get("cases") or []
        return sum(not c.get("ok") for c in cases) or (0 if self.num.get("ok") else 1)

    def cell(self):
        cases = self.num.get("cases") or []
        bad = [c for c in cases if not c.get("ok")]
        presets = sorted({str(c.get("preset")) for c in cases})
        s = f"{len(cases) - len(bad)} of {len(cases)} cases ok (presets {', '.join(presets) or '-'})"
        return s + "".join(f"; FAILED {c['name']} ({c.get('preset')}): {c.get('quantity')} expected "
                           f"{c.get('expected')}, got {c.get('got')}, tolerance {c.get('tolerance')}"
                           for c in bad)

    def judged(self, met, target):
        return "ok: all within tolerance" if met else "cases failed"

    def missed(self, target):
        return "cases outside their tolerance (listed in the numbers)"


class PmuWalks(Scalar):
    """The simulated count behind perf's dTLB read-miss event (:data:`PMU_SIMULATED`: walks
    on Intel, L1 misses on AMD) per op against the PMU's dtlb_load_misses/op of the same
    process: ``value`` is |simulated / measured - 1|; ``den``: (measured per op, source,
    simulated field)."""

    @property
    def value(self):
        meas, _, field = self.den
        sim = self.num["per_op"][field]
        return abs(sim / meas - 1.0) if meas else (0.0 if sim == 0 else float("inf"))

    def cell(self):
        meas, src, field = self.den
        return (f"simulated {self.num['per_op'][field]:.4g} {field.replace('_', ' ')}/op vs measured "
                f"{meas:.4g} ({src})")

    def judged(self, met, target):
        return f"{'within' if met else 'outside'} +-{target:.0%}"

    def missed(self, target):
        return f"{self.cell()}: {self.value:.0%} apart, more than {target:.0%}"


class Throughput(Scalar):
    """``physmem-tlbsim bench``: value = target rate / slowest pattern's rate (<= 1 met);
    ``den``: the CPU model."""

    @property
    def rate(self) -> float:
        return float(self.num.get("min_refs_per_second") or 0.0)

    @property
    def value(self):
        return MIN_REFS_PER_S / self.rate if self.rate > 0 else float("inf")

    def cell(self):
        pats = self.num.get("patterns") or []
        slow = min(pats, key=lambda p: p.get("refs_per_second", 0.0)) if pats else {}
        return (f"slowest {self.rate / 1e6:.1f} M refs/s (pattern {slow.get('pattern', '?')}, preset "
                f"{self.num.get('preset')}, caches {'on' if self.num.get('caches_modelled') else 'off'}) "
                f"on {self.den}" + (f" ({self.num['cpu']})" if self.num.get("cpu") else "")
                + (f"; {self.num['min_refs_per_cpu_second'] / 1e6:.1f} M refs per CPU second (the "
                   "process's own CPU time: what a shared machine's neighbours do not take)"
                   if self.num.get("min_refs_per_cpu_second") else ""))

    def judged(self, met, target):
        return f"{'ok' if met else 'under'} >= {MIN_REFS_PER_S / 1e6:.0f} M/s"

    def missed(self, target):
        return f"{self.rate / 1e6:.1f} M refs/s < {MIN_REFS_PER_S / 1e6:.0f} M/s"


class ThroughputAll(Throughput):
    """``physmem-tlbsim bench --preset all``: the slowest machine of every preset and this
    CPU's model (``num["every_preset"]``)."""

    def cell(self):
        every = self.num.get("every_preset") or []
        return (super().cell() + f"; the slowest of {len(every)} machines (every preset and this CPU's "
                "model, each its best of interleaved runs)")


class Direction(Scalar):
    """One kernel's pairs (``num``: a list of :class:`Pair`) that time can judge: 0 when
    it agrees, else 1 (an undecided kernel is a note, not an item: :func:`goal_direction`)."""

    @property
    def value(self):
        return 0 if kernel_verdict(self.num) == "agrees" else 1

    def cell(self):
        return f"{kernel_verdict(self.num)}: {_counts(self.num)}"

    def judged(self, met, target):
        return "agrees" if met else "does not agree"

    def missed(self, target):
        dis = [p.text() for p in self.num if p.verdict == "disagree"]
        return "disagree: " + "; ".join(dis)


def _counts(ps: List[Pair]) -> str:
    v = [p.verdict for p in ps]
    return (f"{v.count('agree')} agree, {v.count('disagree')} disagree, {v.count('tie')} tie, "
            f"{v.count('not translation')} not translation of {len(v)} pairs")


def _tlbsim(recs) -> dict:
    return recs.results.get("tlbsim") or {}


def _why_not_run(recs, step: str) -> str:
    t = _tlbsim(recs)
    errs = t.get("errors") or {}
    return errs.get(step) or errs.get("all") or (
        "physmem-tlbsim did not run in this result file (physmem bench runs it with --simulate "
        "on, or with the translation suite)")


def goal_validation(recs: Records) -> Goal:
    g = Goal("translation-1", GOALS[1])
    v = _tlbsim(recs).get("validate")
    if v:
        g.items.append(Item("analytic (physmem-tlbsim validate)", Validation(v, None), 0))
    else:
        g.missing.append(f"analytic check: {_why_not_run(recs, 'validate')}")
    sims = simulated(recs)
    vendor = (_tlbsim(recs).get("detect") or {}).get("vendor")
    field = PMU_SIMULATED.get(vendor, "walks")
    for r, t in sims:
        proc = _process_record(r, recs.results)
        meas = pmu_walks_per_op(proc)
        if meas is not None:
            dim = _dim(r)
            g.items.append(Item(f"PMU: {r['experiment']}{' ' + dim if dim else ''} {r['variant']} "
                                f"{format_size(r['size_bytes'])}", PmuWalks(t, (*meas, field)),
                                PMU_TOLERANCE))
    if not any(isinstance(i.ratio, PmuWalks) for i in g.items):
        g.notes.append(f"PMU check: {pmu_status(recs)}")
    return g


def pmu_status(recs: Records) -> str:
    """Which checks apply: 'applied' or 'not applicable: ...' with the reason."""
    sims = simulated(recs)
    if any(pmu_walks_per_op(_process_record(r, recs.results)) for r, _ in sims):
        return "applied (measured dtlb_load_misses beside simulated walks)"
    if not sims:
        return "not applicable: no simulated records in this result file"
    proc = _process_record(sims[0][0], recs.results)
    why = ((proc.get("counters") or {}).get("unavailable") or {}).get("dtlb_load_misses")
    return ("not applicable: no PMU on this machine ("
            + (f"dtlb_load_misses: {why}" if why else "the records carry no dtlb_load_misses")
            + "). How to run it: see the report's Translation model section")


def goal_throughput(recs: Records) -> Goal:
    """Two items: the run's own model (``bench``) and the slowest of every preset with this
    CPU's model (``bench_all``; absent from result files older than it: a note)."""
    g = Goal("translation-2", GOALS[2])
    cpu = _tlbsim(recs).get("cpu") or (recs.results.get("machine") or {}).get("cpu_model", "?")
    for step, what, cls in (("bench", "physmem-tlbsim bench", Throughput),
                            ("bench_all", "physmem-tlbsim bench --preset all", ThroughputAll)):
        b = _tlbsim(recs).get(step)
        if b:
            g.items.append(Item(what, cls(b, cpu), 1.0))
            load = (_tlbsim(recs).get("machine_load") or {}).get(step)
            if load:
                g.notes.append(f"{what}: other processes used {load['others_cpu']:.0%} of the CPUs while it ran")
        elif step == "bench" or step in (_tlbsim(recs).get("errors") or {}):
            g.missing.append(f"throughput ({what}): {_why_not_run(recs, step)}")
        else:
            g.notes.append(f"{what}: not in this result file (recorded since the all-preset check)")
    return g


def goal_direction(recs: Records) -> Goal:
    g = Goal("translation-3", GOALS[3])
    for exp in KERNELS:
        ps = compared(recs, exp, largest_only=True)
        if ps and kernel_verdict(ps) != "undecided":
            g.items.append(Item(KERNELS[exp], Direction(ps, None), 0))
        elif ps:
            g.notes.append(f"{KERNELS[exp]}: undecided, not judged ({_counts(ps)}): time cannot judge "
                           "the model where it does not move with translation")
        elif any(r["experiment"] == exp for r in recs.all):
            g.notes.append(f"{KERNELS[exp]}: no compared pair with simulated counts on both sides")
    if not g.items and g.notes:
        g.missing.append("no kernel where time can judge the model (see the notes)")
    elif not g.items:
        g.missing.append("no simulated records of scan, gups, rbtree or chase: run the lab's "
                         "programs with --simulate (e.g. physmem bench --suite lab,translation)")
    return g


def goals(recs: Records) -> List[Goal]:
    return [goal_validation(recs), goal_throughput(recs), goal_direction(recs)]


# ---------------------------------------------------------------- report

def _f(x: float) -> str:
    return "0" if x == 0 else f"{x:.3g}"


def _ns(r) -> str:
    return f"{r['median_ns']:.3g} [{r['min_ns']:.3g}-{r['max_ns']:.3g}]"


def _window(t) -> str:
    w = t.get("window") or {}
    return (f"{w.get('refs', '?')} refs{' capped' if w.get('capped') else ''}, "
            f"err {_err(t):.1%}")


def _preset_lines(recs, sims) -> List[str]:
    by = {}
    for _, t in sims:
        by.setdefault(t["preset"], t)
    listed = {p["name"]: p for p in (_tlbsim(recs).get("presets") or {}).get("presets") or []}
    out = []
    for name, t in by.items():
        out.append(f"preset {name} ({t.get('chosen')}): {t.get('description', '')}; "
                   f"{t.get('levels')}-level paging, data caches "
                   f"{'modelled' if t.get('caches_modelled') else 'not modelled'}, translation "
                   f"{'on' if t.get('translate', True) else 'off (no-translation mode)'}"
                   + (f"; auto chose it from {t['source']}: {t.get('reason')}" if t.get("source") else ""))
        base = listed.get(name) or listed.get(t.get("base")) or {}
        out += [f"source ({base.get('name', name)}): {s}" for s in base.get("sources") or []]
    return out


def _sampling(doc, sims) -> None:
    ws = [t.get("window") or {} for _, t in sims]
    errs = [_err(t) for _, t in sims]
    worst = max(sims, key=lambda x: _err(x[1]))
    refs = [w.get("refs", 0) for w in ws]
    warm = [w.get("warmup_refs", 0) for w in ws]
    span = lambda xs: f"{min(xs)}" if min(xs) == max(xs) else f"{min(xs)}-{max(xs)}"   # noqa: E731
    doc.p(f"Sampling: {len(sims)} simulated points, each the first round's process (the model "
          "is deterministic; later rounds only time). Each traced window skips "
          f"{span(warm)} warm-up references, then counts {span(refs)} references; "
          f"{sum(bool(w.get('capped')) for w in ws)} windows were capped (they cover part of the "
          f"measured passes), {sum(w.get('untagged_refs', 0) for w in ws)} references carried no "
          "page-size tag. Sampling error: the relative difference of translation refs per "
          "reference between the window's two halves (halves.rel_diff): median "
          f"{statistics.median(errs):.1%}, largest {max(errs):.1%} ({worst[0]['experiment']} "
          f"{worst[0]['variant']} {format_size(worst[0]['size_bytes'])}).")


def _kernel_tables(doc, recs, exp, pmu: bool) -> None:
    sims = simulated(recs, exp)
    if not sims:
        return
    doc.h(3, KERNELS[exp])
    rows = []
    for r, t in sorted(sims, key=lambda x: (str(_dim(x[0])), x[0]["size_bytes"], x[0]["variant"])):
        po = t["per_op"]
        row = [r["variant"]] + ([_dim(r)] if exp == "scan" else []) + [
            format_size(r["size_bytes"]), _ns(r), _f(po["l1_misses"]), _f(po["walks"]),
            _f(po["walk_refs"]), _f(po["sw_walk_loads"]), _f(po["translation_refs"]),
            "-" if po.get("translation_memory_refs") is None else _f(po["translation_memory_refs"])]
        if pmu:
            m = pmu_walks_per_op(_process_record(r, recs.results))
            row.append(_f(m[0]) if m else "-")
        rows.append(row + [_window(t)])
    unit = sims[0][0].get("unit", "op")
    doc.table(["variant"] + (["access"] if exp == "scan" else []) +
              ["size", f"ns/{unit} [min-max]", "L1 TLB misses/op", "walks/op", "walk refs/op",
               "software walk loads/op", "translation refs/op", "of them to memory/op"] +
              (["measured dTLB walks/op (PMU)"] if pmu else []) + ["window, sampling error"], rows)
    ps = compared(recs, exp)
    if ps:
        doc.table(["pair"] + (["access"] if exp == "scan" else []) +
                  ["size", "time ratio [range]", "noise band", "model: translation refs (to memory) ratio",
                   "walks ratio", "model: change of memory refs", "THEIRS (seed paper)", "verdict"],
                  [[p.label()] + ([p.dim] if exp == "scan" else []) +
                   [format_size(p.size), p.time.cell(), f"+-{p.band:.0%}", p.model_ratio(p.field),
                    p.model_ratio("walks"), f"{p.delta:+.1%} (+-{p.model_band:.0%})",
                    theirs(exp, p.dim, p.num["variant"], p.den["variant"], p.size),
                    p.verdict.upper() if p.verdict == "disagree" else p.verdict] for p in ps])
    largest = compared(recs, exp, largest_only=True)
    dis = [p for p in largest if p.verdict == "disagree"]
    doc.p(f"{KERNELS[exp]}: the model {kernel_verdict(largest)} with time at the largest sizes"
          + (": where they disagree:" if dis else "."))
    doc.ul([p.text() for p in dis])
    if exp in seeds.STATED:
        doc.p(seeds.STATED[exp])


def _checks(doc, recs) -> None:
    t = _tlbsim(recs)
    if not t:
        return
    v, b = t.get("validate"), t.get("bench")
    lines = [f"{step}: {why}" for step, why in (t.get("errors") or {}).items()]
    if v:
        cases = v.get("cases") or []
        lines.append(f"analytic check (physmem-tlbsim validate): {sum(bool(c.get('ok')) for c in cases)} "
                     f"of {len(cases)} cases within tolerance")
    if b:
        lines.append("throughput (physmem-tlbsim bench, one core, " + str(t.get("cpu", "?")) + "): " +
                     "; ".join(f"{p['pattern']} {p['refs_per_second'] / 1e6:.1f} M refs/s"
                               for p in b.get("patterns") or [])
                     + (f" (engine: {b['engine']})" if b.get("engine") else ""))
    d = t.get("detect")
    if d:
        lines.append(f"this CPU: {d.get('vendor')} family {d.get('family')} model {d.get('model')}: "
                     f"auto's model {d.get('preset') or 'none (a program from before issue 23)'}"
                     + (f" ({d.get('source')}: {d.get('reason')})" if d.get("source") else ""))
    doc.ul(lines)
    if v and any(not c.get("ok") for c in v.get("cases") or []):
        doc.table(["case", "preset", "quantity", "expected", "got", "tolerance", "ok"],
                  [[c["name"], c.get("preset"), c.get("quantity"), c.get("expected"), c.get("got"),
                    c.get("tolerance"), "yes" if c.get("ok") else "NO"] for c in v["cases"]])


def report(doc, recs: Records, results: dict, out_dir) -> None:
    """Preset and sources, the simulator's checks, which checks applied, the sampling
    statement, then per kernel: counts per variant and the compared pairs."""
    sims = simulated(recs)
    opts = (results.get("options") or {}).get("simulate") or {}
    if opts:
        doc.p(f"Run with --simulate {opts.get('asked')} (data caches {opts.get('caches')}); "
              + "; ".join(f"{e}: {why}" for e, why in (opts.get("experiments") or {}).items()) + ".")
    doc.ul(_preset_lines(recs, sims))
    nulls = {}
    for r in recs.all:
        t = translation_of(r, results) if r["experiment"] in KERNELS else None
        if t and t.get("preset") is None:
            nulls.setdefault(t.get("reason") or "no reason given", []).append(r["variant"])
    doc.ul([f"not simulated ({len(v)} records): {why}" for why, v in nulls.items()])
    _checks(doc, recs)
    whatif.report(doc, results)
    doc.p(f"Checks applied: analytic (physmem-tlbsim validate); PMU: {pmu_status(recs)}.")
    doc.p(f"PMU check, how to run it: {PMU_HOWTO}")
    if not sims:
        return
    _sampling(doc, sims)
    doc.p("Per op: counts of the traced window divided by its operations. Translation refs = "
          "hardware walk references + software walk loads (a tree's inner blocks). Direction "
          f"(translation-3): time is higher/lower beyond its noise band (the larger repetition "
          f"spread of the two sides, at least {TIME_FLOOR:.0%}); the model's change is the "
          "difference in translation refs/op as a share of the baseline's memory refs/op (data + "
          f"walk), beyond max({MODEL_FLOOR:.0%}, sampling error). agree: both say the same; tie: "
          "time within its band while the model predicts a change; not translation: time moves "
          "while the model sees no change in translation, or moves the other way by more than "
          f"{EXPLAINS:.0f}x the model's change (another cause; not counted); DISAGREE: both move, "
          "in opposite directions, time by no more than translation could explain. " +
          ("With the data caches modelled (the preset's L1d and L2), the translation references "
           "no cache level held (a walk's or a software walk's load that goes past L2) decide; "
           "the model's band includes time's (a change time cannot see is no change). "
           "The shared last-level cache is not modelled."
           if any(t.get("caches_modelled") for _, t in sims) else
           "References are counted, not weighted by where they hit (data caches not modelled "
           "in this run)."))
    pmu = any(pmu_walks_per_op(_process_record(r, results)) for r, _ in sims)
    for exp in KERNELS:
        _kernel_tables(doc, recs, exp, pmu)


def plots(recs: Records, out: Path) -> List[Tuple[str, Path]]:
    """Translation refs per op against size, one line per variant, one PNG per kernel; then
    the what-if figures (:func:`physmem_lab.whatif.plots`)."""
    made = []
    for exp in KERNELS:
        for dim in recs.dims(exp):
            series: Dict[str, list] = {}
            for r, t in simulated(recs, exp):
                if dim is not None and _dim(r) != dim:
                    continue
                v = t["per_op"]["translation_refs"]
                if v > 0:
                    series.setdefault(r["variant"], []).append((r["size_bytes"], v, v, v))
            if not series:
                continue
            name = f"translation-{exp}" + (f"-{dim}" if dim else "")
            path = out / f"plot-{name}.png"
            plot_series(series, f"{exp}{' ' + dim if dim else ''}: simulated translation refs per op",
                        "size", "translation refs per op", path)
            made.append((name, path))
    return made + whatif.plots(recs.results, out)


# ---------------------------------------------------------------- the suite

# No points of its own (it judges the lab's records of KERNELS); scales for the plan.
SCALES = {s: {"reps": 1, "warmup": 0, "min_rep_ms": 0, "cap": None, "budget_s": None}
          for s in ("tiny", "default", "full")}


def _no_pass(p: Point, cap: Optional[int]) -> float:
    return 0.0


SUITE = SuiteDef("translation", "Translation model: simulated TLB misses, walks and software walks",
                 (), SCALES, pass_s=_no_pass, report=report, goals=goals, plots=plots,
                 contradictions=contradictions, sanity_note=SANITY_NOTE, present=present, rank=70,
                 simulated=SIMULATED)
