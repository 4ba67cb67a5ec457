"""From records to the numbers a report shows: lookups, ratios with spread, goals.

Generic: nothing here knows a suite. :class:`Records` looks records up (the params that
split an experiment's tables, its *dimensions*, come from the suites); :class:`Ratio`
carries its range (best and worst case from the repetitions' min and max) and the reasons
to distrust it; :class:`Goal` judges items against thresholds the suites set
(``suite_<name>.goals``). Every number is computed from records of a result file.
"""
import statistics
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .load import contended
from .units import format_size

SPREAD_WARN = 0.10       # pyperf-style: warn at a relative spread of 10% or more
MIN_REPS = 5


def timing(rec: dict, phase: Optional[str] = None) -> dict:
    """The timing fields of a record, or of one of its ``phases``."""
    return rec["phases"][phase] if phase else rec


def obtained(rec: dict) -> str:
    """The backing actually obtained, e.g. ``1g`` or ``thp+4k`` when mappings differ."""
    got = sorted({b["obtained"] for b in rec.get("backing", [])})
    return "+".join(got) or "malloc (no mapping of its own)"


def fell_back(rec: dict) -> bool:
    return any(b["obtained"] != b["requested"] or not b.get("verified", True)
               for b in rec.get("backing", []))


def timed_faults(rec: dict) -> float:
    pf = (rec.get("counters") or {}).get("page_faults") or {}
    return sum(pf.get("per_rep") or [])


class Records:
    """Records of one result file, looked up by experiment, variant, size and dimension
    (``dimensions``: experiment -> the param that splits its tables)."""

    def __init__(self, results: dict, dimensions: Optional[Dict[str, str]] = None):
        self.results = results
        self.all = results.get("records", [])
        self.dimensions = dict(dimensions or {})

    def find(self, exp, variant, size=None, dim=None, block_size=None):
        """Records matching; the first one when ``size`` is given (None if absent)."""
        key = self.dimensions.get(exp)
        out = []
        for r in self.all:
            if r["experiment"] != exp or r["variant"] != variant:
                continue
            if size is not None and r["size_bytes"] != size:
                continue
            if dim is not None and key and str(r["params"].get(key)) != dim:
                continue
            if block_size is not None and (r.get("tree") or {}).get("block_size") != block_size:
                continue
            out.append(r)
        return (out[0] if out else None) if size is not None else out

    def sizes(self, exp, dim=None) -> List[int]:
        return sorted({r["size_bytes"] for r in self.all if r["experiment"] == exp and
                       (dim is None or str(r["params"].get(self.dimensions.get(exp, ""))) == dim)})

    def dims(self, exp) -> List[str]:
        key = self.dimensions.get(exp)
        if not key:
            return [None]
        return sorted({str(r["params"].get(key)) for r in self.all if r["experiment"] == exp})

    def skipped_reason(self, exp, variant, size=None) -> Optional[str]:
        for s in self.results.get("skipped", []) + self.results.get("errors", []):
            if s["experiment"] == exp and s["variant"] == variant and (
                    size is None or s["size_bytes"] == size):
                return f"{variant} {format_size(s['size_bytes'])}: {s['reason']}"
        return None


@dataclass
class Ratio:
    """num / den of median ns per op, with the range min/max and max/min. ``timed``: the
    number is a timing, which a sanity finding on its records' timing voids (a subclass
    that is a count of them sets it False: :mod:`physmem_lab.stability`)."""
    num: dict
    den: dict
    phase: Optional[str] = None
    timed = True      # not a dataclass field: a class attribute subclasses override

    @property
    def value(self) -> float:
        return timing(self.num, self.phase)["median_ns"] / timing(self.den, self.phase)["median_ns"]

    @property
    def lo(self) -> float:
        return timing(self.num, self.phase)["min_ns"] / timing(self.den, self.phase)["max_ns"]

    @property
    def hi(self) -> float:
        return timing(self.num, self.phase)["max_ns"] / timing(self.den, self.phase)["min_ns"]

    def spreads(self):
        return (timing(self.num, self.phase)["rel_spread"], timing(self.den, self.phase)["rel_spread"])

    def doubts(self) -> List[str]:
        """Reasons to distrust this ratio (empty when none)."""
        out = []
        for side, r in (("tree", self.num), ("baseline", self.den)):
            t = timing(r, self.phase)
            if fell_back(r):
                out.append(f"{r['variant']} got backing {obtained(r)}, asked {r['backing_requested']}")
            if t["rel_spread"] >= SPREAD_WARN:
                out.append(f"{r['variant']} spread {t['rel_spread']:.0%}")
            if t["reps"] < MIN_REPS:
                out.append(f"{r['variant']} only {t['reps']} reps")
            if timed_faults(r) > 0 and not self.phase:
                out.append(f"{r['variant']} took {timed_faults(r):.0f} page faults while timed")
        return out

    def judged(self, met: bool, target: float) -> str:
        """How a goal's table says this number stands against its target."""
        return f"{'ok' if met else 'over'} {target:.2f}x"

    def missed(self, target: float) -> Optional[str]:
        """Why this number missed ``target`` in a suite's own words (None: the generic
        range-against-target text of :meth:`Goal.why`)."""
        return None

    def short(self) -> str:
        """The value alone, as a round's line shows it."""
        return f"{self.value:.2f}x"

    def cell(self) -> str:
        """``0.95x [0.90-1.02]``, with ``!`` when a backing fell back and ``~`` when the
        spread is 10% or more."""
        marks = ("!" if fell_back(self.num) or fell_back(self.den) else "") + (
            "~" if max(self.spreads()) >= SPREAD_WARN else "")
        return f"{self.value:.2f}x [{self.lo:.2f}-{self.hi:.2f}]{marks}"


class Scalar(Ratio):
    """A goal item that is one number with no repetition range (a count, a share, a ratio
    of pooled percentiles): subclasses give ``value`` and ``cell``; no spread, no doubts."""

    @property
    def lo(self) -> float:
        return self.value

    @property
    def hi(self) -> float:
        return self.value

    def spreads(self):
        return (0.0, 0.0)

    def doubts(self) -> List[str]:
        return []


class Value(Scalar):
    """One number (of one record, or of none: ``rec`` {}), shown as ``text``; judged
    ``value <= target`` unless the item says at_least. ``lo``/``hi``: its range when it
    has one (e.g. over trials), else the number itself."""

    def __init__(self, rec: dict, value: float, text: str,
                 lo: Optional[float] = None, hi: Optional[float] = None):
        super().__init__(rec, rec)
        self._v, self._text = value, text
        self._lo = value if lo is None else lo
        self._hi = value if hi is None else hi

    @property
    def value(self) -> float:
        return self._v

    @property
    def lo(self) -> float:
        return self._lo

    @property
    def hi(self) -> float:
        return self._hi

    def cell(self) -> str:
        return self._text


class Tally(Value):
    """A count or a share of no one record (no timing, no spread), judged in words of its own."""

    def __init__(self, value: float, text: str):
        super().__init__({}, value, text)

    def short(self) -> str:
        return self._text

    def judged(self, met: bool, target: float) -> str:
        return f"{'ok' if met else 'missed'}: target {target:g}"

    def missed(self, target: float) -> Optional[str]:
        return f"{self._text} against a target of {target:g} (a count or a share: no spread to blame)"


def paired(rec: dict, num_phase: Optional[str], den_phase: Optional[str]) -> Optional[List[float]]:
    """Per-repetition ratios num / den of two timings of one record that were measured in
    turn (the record's ``interleaved`` groups them: their i-th repetitions ran side by
    side), else None."""
    if num_phase == den_phase or not any(
            num_phase in g and den_phase in g for g in rec.get("interleaved") or []):
        return None
    n, d = timing(rec, num_phase)["ns_per_op"], timing(rec, den_phase)["ns_per_op"]
    if len(n) != len(d) or not n or min(d) <= 0:
        return None
    return [a / b for a, b in zip(n, d)]


class PhaseRatio(Ratio):
    """One timing of ``num`` against another of ``den``: each a phase name, or None for the
    record's main timing (e.g. a kernel's checked phase against its unchecked one in the
    same record, or one kernel against another). Two timings of one record measured in
    turn (:func:`paired`) are judged by their paired repetitions: the median of the
    per-repetition ratios, and their range; others by medians, and min/max across."""

    def __init__(self, num: dict, den: dict, num_phase: Optional[str], den_phase: Optional[str]):
        super().__init__(num, den)
        self.num_phase, self.den_phase = num_phase, den_phase
        self.pairs = paired(num, num_phase, den_phase) if num is den else None

    def _t(self, side: str) -> dict:
        return timing(self.num, self.num_phase) if side == "num" else timing(self.den, self.den_phase)

    @property
    def value(self) -> float:
        if self.pairs:
            return statistics.median(self.pairs)
        return self._t("num")["median_ns"] / self._t("den")["median_ns"]

    @property
    def lo(self) -> float:
        if self.pairs:
            return min(self.pairs)
        return self._t("num")["min_ns"] / self._t("den")["max_ns"]

    @property
    def hi(self) -> float:
        if self.pairs:
            return max(self.pairs)
        return self._t("num")["max_ns"] / self._t("den")["min_ns"]

    def spreads(self):
        if self.pairs:
            med = statistics.median(self.pairs)
            rel = (max(self.pairs) - min(self.pairs)) / med if med else 0.0
            return (rel, rel)
        return (self._t("num")["rel_spread"], self._t("den")["rel_spread"])

    def doubts(self) -> List[str]:
        out = []
        for side, rec, ph in (("num", self.num, self.num_phase), ("den", self.den, self.den_phase)):
            s = self._t(side)["rel_spread"]
            if s >= SPREAD_WARN:
                out.append(f"{rec['variant']} {ph or 'main timing'} spread {s:.0%}")
            if self._t(side)["reps"] < MIN_REPS:
                out.append(f"{rec['variant']} {ph or 'main timing'} only {self._t(side)['reps']} reps")
            if fell_back(rec) and not (side == "den" and self.den is self.num):
                out.append(f"{rec['variant']} got backing {obtained(rec)}, asked {rec['backing_requested']}")
        return out


class Quotient(Ratio):
    """a / b of two ratios to one reference, each paired in its own process (e.g. PagedArray /
    vector over TreeArray / vector, each timed in turn with a vector of its own): the
    reference cancels, and with it the state of the machine each process met. Range: a's
    over b's."""

    def __init__(self, a: Ratio, b: Ratio):
        super().__init__(a.num, b.num)
        self.a, self.b = a, b

    @property
    def value(self) -> float:
        return self.a.value / self.b.value

    @property
    def lo(self) -> float:
        return self.a.lo / self.b.hi

    @property
    def hi(self) -> float:
        return self.a.hi / self.b.lo

    def spreads(self):
        return (max(self.a.spreads()), max(self.b.spreads()))

    def doubts(self) -> List[str]:
        return self.a.doubts() + self.b.doubts()


class Recovered(Ratio):
    """The share of the translation cost a tree on large pages recovers:
    (array-4k − tree) / (array-4k − array-1g) of median ns per op (1.0: all of it, the
    tree as fast as the array on 1 GiB pages). ``num`` is the tree, ``den`` array-4k,
    ``floor`` array-1g. The range takes each side's min and max; :attr:`applicable` is false
    when the translation cost is within its spread (array-4k's min not above array-1g's
    max): then no share is meaningful on this CPU."""

    def __init__(self, num: dict, den: dict, floor: dict):
        super().__init__(num, den)
        self.floor = floor

    def _ns(self, rec, key="median_ns"):
        return timing(rec)[key]

    @property
    def cost_ns(self) -> float:
        return self._ns(self.den) - self._ns(self.floor)

    @property
    def applicable(self) -> bool:
        return self._ns(self.den, "min_ns") > self._ns(self.floor, "max_ns")

    @property
    def value(self) -> float:
        return (self._ns(self.den) - self._ns(self.num)) / self.cost_ns if self.cost_ns > 0 else 0.0

    @property
    def lo(self) -> float:
        d = self._ns(self.den, "max_ns") - self._ns(self.floor, "min_ns")
        return (self._ns(self.den, "min_ns") - self._ns(self.num, "max_ns")) / d if d > 0 else 0.0

    @property
    def hi(self) -> float:
        d = self._ns(self.den, "min_ns") - self._ns(self.floor, "max_ns")
        return (self._ns(self.den, "max_ns") - self._ns(self.num, "min_ns")) / d if d > 0 else self.value

    def spreads(self):
        return tuple(timing(r)["rel_spread"] for r in (self.num, self.den, self.floor))

    def doubts(self) -> List[str]:
        return super().doubts() + Ratio(self.floor, self.den).doubts()[:1]

    def judged(self, met: bool, target: float) -> str:
        return f"{'ok' if met else 'under'} >= {target:.0%}"

    def short(self) -> str:
        return f"{self.value:.0%} recovered"

    def missed(self, target: float) -> Optional[str]:
        return (f"recovers {self.value:.0%} [{self.lo:.0%}-{self.hi:.0%}] < {target:.0%} of the translation "
                f"cost (array-4k − array-1g = {self.cost_ns:.3g} ns/op)")

    def cell(self) -> str:
        marks = "~" if max(self.spreads()) >= SPREAD_WARN else ""
        return (f"{self.value:.0%} recovered [{self.lo:.0%}-{self.hi:.0%}]{marks} (array-4k "
                f"{self._ns(self.den):.3g}, {self.num['variant']} {self._ns(self.num):.3g}, array-1g "
                f"{self._ns(self.floor):.3g} ns/op)")

    def not_applicable(self) -> str:
        return (f"not applicable on this CPU: translation costs less than its spread (array-4k "
                f"{self._ns(self.den):.3g} ns/op [{self._ns(self.den, 'min_ns'):.3g}-"
                f"{self._ns(self.den, 'max_ns'):.3g}], array-1g {self._ns(self.floor):.3g} "
                f"[{self._ns(self.floor, 'min_ns'):.3g}-{self._ns(self.floor, 'max_ns'):.3g}])")


class PairedRecovered(Recovered):
    """:class:`Recovered` from one record whose contiguous tables ran in turn with the tree,
    a repetition at a time (gups ``pair=on``): the tree is the record's main timing,
    array-4k its phase ``den_phase`` and the array on the tree's backing ``floor_phase``.
    The value from the three medians; the range, the share each paired repetition gives;
    :attr:`applicable` when array-4k was slower than that array in every repetition."""

    def __init__(self, rec: dict, den_phase: str, floor_phase: str):
        super().__init__(rec, rec, rec)
        self._phases = {"num": None, "den": den_phase, "floor": floor_phase}

    def _t(self, side: str) -> dict:
        return timing(self.num, self._phases[side])

    def _med(self, side: str) -> float:
        return self._t(side)["median_ns"]

    def _reps(self):
        return list(zip(*(self._t(s)["ns_per_op"] for s in ("num", "den", "floor"))))

    def _shares(self) -> List[float]:
        return [(d - n) / (d - f) for n, d, f in self._reps() if d > f]

    @property
    def cost_ns(self) -> float:
        return self._med("den") - self._med("floor")

    @property
    def applicable(self) -> bool:
        reps = self._reps()
        return bool(reps) and all(d > f for _, d, f in reps)

    @property
    def value(self) -> float:
        return (self._med("den") - self._med("num")) / self.cost_ns if self.cost_ns > 0 else 0.0

    @property
    def lo(self) -> float:
        return min(self._shares(), default=self.value)

    @property
    def hi(self) -> float:
        return max(self._shares(), default=self.value)

    def spreads(self):
        return tuple(self._t(s)["rel_spread"] for s in ("num", "den", "floor"))

    def doubts(self) -> List[str]:
        out = []
        if fell_back(self.num):
            out.append(f"{self.num['variant']} got backing {obtained(self.num)}, asked {self.num['backing_requested']}")
        for side in ("num", "den", "floor"):
            t, name = self._t(side), self._phases[side] or self.num["variant"]
            if t["rel_spread"] >= SPREAD_WARN:
                out.append(f"{name} spread {t['rel_spread']:.0%}")
            if t["reps"] < MIN_REPS:
                out.append(f"{name} only {t['reps']} reps")
        return out

    def cell(self) -> str:
        marks = ("!" if fell_back(self.num) else "") + ("~" if max(self.spreads()) >= SPREAD_WARN else "")
        return (f"{self.value:.0%} recovered [{self.lo:.0%}-{self.hi:.0%}]{marks} (in turn, one process: "
                f"array-4k {self._med('den'):.3g}, {self.num['variant']} {self._med('num'):.3g}, "
                f"{self._phases['floor']} {self._med('floor'):.3g} ns/op)")

    def not_applicable(self) -> str:
        slower = sum(d > f for _, d, f in self._reps())
        return (f"not applicable on this CPU: translation costs less than its spread (in turn, one process: "
                f"array-4k slower than {self._phases['floor']} in {slower} of {len(self._reps())} repetitions; "
                f"medians {self._med('den'):.3g} and {self._med('floor'):.3g} ns/op)")


def recovered(recs: Records, exp, tree, size, dim=None) -> Optional[Recovered]:
    """:class:`Recovered` of ``tree`` against array-4k and array-1g at ``size`` (None when
    one of the three is missing)."""
    n, d, f = (recs.find(exp, v, size, dim) for v in (tree, "array-4k", "array-1g"))
    return Recovered(n, d, f) if n and d and f else None


def ratio(recs: Records, exp, num_variant, den_variant, size, dim=None, phase=None,
          block_size=None) -> Optional[Ratio]:
    n = recs.find(exp, num_variant, size, dim, block_size)
    d = recs.find(exp, den_variant, size, dim)
    if n is None or d is None or (phase and (phase not in n.get("phases", {}) or
                                             phase not in d.get("phases", {}))):
        return None
    return Ratio(n, d, phase)


# ---------------------------------------------------------------- goals

@dataclass
class Item:
    what: str
    ratio: Ratio
    target: float
    at_least: bool = False   # met when the value is >= target (a share), not <=

    @property
    def met(self) -> bool:
        return self.ratio.value >= self.target if self.at_least else self.ratio.value <= self.target


@dataclass
class Goal:
    number: object          # the suite's numbering: 1..5 for the lab's, "<suite>-N" for others
    title: str
    items: List[Item] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)      # measured but not judged (e.g. insert)
    missing: List[str] = field(default_factory=list)    # why something was not measured
    rounds: List["Goal"] = field(default_factory=list)  # the same goal judged on each round
    implausible: List[str] = field(default_factory=list)  # items resting on impossible data
    # why the goal does not apply to this machine (e.g. translation too cheap to recover)
    not_applicable: List[str] = field(default_factory=list)

    @property
    def measured(self) -> str:
        """MET or MISSED on these items alone (NOT APPLICABLE or NOT MEASURED without)."""
        if not self.items:
            return "NOT APPLICABLE" if self.not_applicable else "NOT MEASURED"
        return "MET" if all(i.met for i in self.items) else "MISSED"

    @property
    def verdict(self) -> str:
        """IMPLAUSIBLE when an item rests on impossible data (:mod:`physmem_lab.sanity`);
        otherwise, with rounds, MET or MISSED only when every measured round says so,
        else UNSTABLE (:mod:`physmem_lab.stability`); without rounds, :attr:`measured`."""
        if not self.items:
            return self.measured
        if self.implausible:
            return "IMPLAUSIBLE"
        votes = {g.measured for g in self.rounds} - {"NOT MEASURED", "NOT APPLICABLE"}
        if not votes:
            return self.measured
        # The rounds that measured agree, and so must the pooled numbers shown beside the
        # verdict (a round the goal did not apply to, or pooling, can tip them): else UNSTABLE.
        return votes.pop() if votes == {self.measured} else "UNSTABLE"

    def why(self) -> List[str]:
        """For a missed goal: what the data says about each missed item."""
        out = []
        for i in self.items:
            if i.met:
                continue
            r = i.ratio
            if r.missed(i.target):
                out.append(f"{i.what}: {r.missed(i.target)}")
                continue
            reasons = r.doubts()
            if r.lo <= i.target:
                reasons.append(f"the range [{r.lo:.2f}-{r.hi:.2f}] reaches the target: within noise")
            else:
                reasons.append(f"over the target even at the best case of the repetitions ({r.lo:.2f}x)")
            out.append(f"{i.what}: {r.value:.2f}x > {i.target:.2f}x; " + "; ".join(reasons))
        return out


def warnings(results: dict, dimensions: Optional[Dict[str, str]] = None) -> List[str]:
    """pyperf-style warnings: high spread, too few repetitions, fallbacks, failures
    (``dimensions`` as in :class:`Records`: the params named in a point's label)."""
    out = []
    dims = dimensions or {}
    for r in results.get("records", []):
        label = f"{r['experiment']} {r['variant']} {format_size(r['size_bytes'])} " + " ".join(
            f"{k}={v}" for k, v in sorted(r["params"].items()) if k == dims.get(r["experiment"]))
        if r["rel_spread"] >= SPREAD_WARN:
            out.append(f"{label.strip()}: spread {r['rel_spread']:.0%} >= 10%; the median may be unstable")
        if r["reps"] < MIN_REPS:
            out.append(f"{label.strip()}: {r['reps']} reps < {MIN_REPS}; too few to judge the spread")
        if fell_back(r):
            out.append(f"{label.strip()}: backing {obtained(r)} (asked {r['backing_requested']})")
        if not r["verified"]:
            out.append(f"{label.strip()}: VERIFICATION FAILED: {r.get('verification')}")
        busy = [f"round {x.get('round')}: {x['machine_load']['others_cpu']:.0%}"
                for x in r.get("rounds", []) if contended(x.get("machine_load"))]
        if busy:
            out.append(f"{label.strip()}: other processes left no core free while it ran "
                       f"(their share of the CPUs, {'; '.join(busy)})")
    return out
