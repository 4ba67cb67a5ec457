"""Physically impossible outcomes, flagged instead of reported as results (issue 16).

Which pairs of records are impossible is the suites' knowledge: a suite's ``sanity(recs)``
gives (rule, record, the record it may not beat) pairs, and its ``sanity_note`` says why
(e.g. the lab: in random-access experiments a tree cannot beat the array on its own
backing, nor any variant ``array-1g``; :mod:`physmem_lab.suite_lab`).

Contract of :func:`findings`: a pair is flagged only *beyond the noise*: when even the
faster side's slowest repetition beat the other side's fastest (the ratio's range from
:class:`~physmem_lab.analysis.Ratio` lies wholly below 1; with rounds, over every
round's repetitions), and both sides have at least :data:`MIN_REPS` repetitions
(:func:`report` also lists pairs impossible in one round alone). A suite may mark a pair
*across processes* (a 4th element, True: the two sides run the same inner loop, each in
its own processes, so how fast a process happens to be is the only difference, e.g. the
paging suite's paged array at 1x against the in-memory tree, issue 30): such a pair is
flagged only when its range lies below 1 by more than the slower side's spread between
processes (:func:`process_spread`: (max - min) / median of its rounds' medians, or
:data:`BETWEEN_PROCESSES` when it ran in fewer than two); inside that spread it is noise,
and the goals judge it on its numbers (:func:`report` lists it). Other pairs (the lab's tree
against its array and array-1g) and contradictions stay strict.
A suite's ``contradictions(recs)`` give (rule, record, what) for records whose own numbers
contradict each other (e.g. a simulated array with software-walk loads): each is a
:class:`Contradiction`, flagged whatever the timing.
Each finding names its records; :func:`implausible_keys` gives
the point keys (:func:`physmem_lab.spread.point_key`) of every record in a finding, so
goals built on them are not judged: a :class:`Finding` (timing) voids the records'
timings only, a :class:`Contradiction` (their own numbers) every number of them, counts
too (a goal item's ``Ratio.timed``).
"""
import statistics
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

from .analysis import Ratio
from .rounds import per_round
from .spread import point_key, process_spread
from .suites import records, registry
from .units import format_size

MIN_REPS = 3         # fewer repetitions than this give no range to judge noise by
# A pair across processes whose slower side ran in fewer than two processes (a result file
# without rounds) has no spread between processes to judge by: this one is allowed instead.
BETWEEN_PROCESSES = 0.10


@dataclass
class Finding:
    rule: str           # "tree faster than the array on its backing" | "faster than array-1g"
    ratio: Ratio        # fast / slow; its range lies below 1 (by more than ``allowance``)
    allowance: float = 0.0          # the slower side's spread between processes (0: strict)
    allowance_from: str = ""        # where ``allowance`` comes from (its rounds, or stated)

    def text(self) -> str:
        f, s = self.ratio.num, self.ratio.den
        beyond = (f" (beyond {s['variant']}'s {self.allowance:.1%} spread between processes, "
                  f"{self.allowance_from})" if self.allowance_from else "")
        return (f"{f['experiment']} {format_size(f['size_bytes'])}: {f['variant']} / "
                f"{s['variant']} = {self.ratio.cell()}: {self.rule}{beyond}")

    def records(self) -> List[dict]:
        return [self.ratio.num, self.ratio.den]


@dataclass
class Contradiction:
    rule: str           # what may not happen, e.g. "an array with software-walk loads"
    record: dict
    what: str           # the numbers that break it

    def text(self) -> str:
        r = self.record
        params = " ".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
        return (f"{r['experiment']} {format_size(r['size_bytes'])} {r['variant']}"
                f"{' ' + params if params else ''}: {self.what}: {self.rule}")

    def records(self) -> List[dict]:
        return [self.record]


def _beyond_noise(r: Ratio, allowance: float = 0.0) -> bool:
    """The whole range below 1 - ``allowance``, on enough repetitions to have a range."""
    return r.hi < 1.0 - allowance and min(r.num["reps"], r.den["reps"]) >= MIN_REPS


def _allowance(results: dict, across: bool, slow: dict) -> Tuple[float, str]:
    """What a pair's range must lie below 1 by (module contract), and whence."""
    if not across:
        return 0.0, ""
    s = process_spread(results, slow)
    return (BETWEEN_PROCESSES, "stated: it ran in one process") if s is None else (s, "its rounds")


def _pairs(results: dict) -> List[Tuple[str, dict, dict, bool]]:
    """(rule, record, the record it may not beat, across processes) over every suite with
    sanity rules (a suite's pair without the 4th element: False)."""
    recs = records(results)
    return [(*x, False)[:4] for sd in registry().values() if sd.sanity for x in sd.sanity(recs)]


def contradictions(results: dict) -> List[Contradiction]:
    """Every record of ``results`` whose own numbers contradict each other."""
    recs = records(results)
    return [Contradiction(*x) for sd in registry().values() if sd.contradictions
            for x in sd.contradictions(recs)]


def findings(results: dict) -> list:
    """Every impossible outcome among the records of ``results`` (module contract):
    :class:`Finding` pairs, then :class:`Contradiction` records."""
    out = []
    for rule, fast, slow, across in _pairs(results):
        r = Ratio(fast, slow)
        allowance, whence = _allowance(results, across, slow)
        if _beyond_noise(r, allowance):
            out.append(Finding(rule, r, allowance, whence))
    return out + contradictions(results)


def inside_process_spread(results: dict) -> List[str]:
    """Pairs across processes the strict rule would flag but the slower side's spread
    between processes covers (module contract): noise, judged on their numbers; a line each."""
    out = []
    for rule, fast, slow, across in _pairs(results):
        r = Ratio(fast, slow)
        allowance, whence = _allowance(results, across, slow)
        if across and _beyond_noise(r) and not _beyond_noise(r, allowance):
            out.append(f"{fast['experiment']} {format_size(fast['size_bytes'])}: {fast['variant']} / "
                       f"{slow['variant']} = {r.cell()}: {1 - r.hi:.1%} below 1, within "
                       f"{slow['variant']}'s {allowance:.1%} spread between processes ({whence})")
    return out


def implausible_keys(found: list, timed: bool = True) -> Set[Tuple]:
    """Point keys of the records whose numbers ``found`` voids (module contract): their
    timings (``timed``), else their counts, which only a :class:`Contradiction` voids."""
    return {point_key(r) for f in found if timed or isinstance(f, Contradiction)
            for r in f.records()}


def checked_pairs(results: dict) -> int:
    return len(_pairs(results))


def report(doc, results: dict, found: List[Finding]) -> None:
    """The 'Sanity' section: what was checked and every impossible outcome found."""
    doc.h(2, "Sanity: physically impossible outcomes")
    for sd in registry().values():
        if (sd.sanity or sd.contradictions) and sd.sanity_note:
            doc.p(f"{sd.name}: {sd.sanity_note}")
    doc.p("Each pair is flagged only when even the faster side's slowest repetition beat the "
          f"other's fastest (on >= {MIN_REPS} repetitions each). {checked_pairs(results)} pairs "
          "checked. A flagged pair is a measurement "
          "artefact, not a result: drift or other work hitting one side, or, on a virtual "
          "machine, a guest page the host backs with small pages (then array-1g is no "
          "translation-free limit); goals that use its timings are not judged (IMPLAUSIBLE; "
          "a count of the same records still is, unless the records contradict themselves).")
    doc.ul([f"{'CONTRADICTS ITSELF' if isinstance(f, Contradiction) else 'IMPOSSIBLE'}: "
            f"{f.text()}" for f in found] or ["none found"])
    if any(p[3] for p in _pairs(results)):
        doc.p("A pair of the same inner loop in separate processes (marked so by its suite) "
              "is flagged only beyond the slower side's spread between processes: (max - min) "
              f"/ median of its rounds' medians, or {BETWEEN_PROCESSES:.0%} when it ran in one "
              "process. Inside that spread it is noise, judged on its numbers:")
        doc.ul(inside_process_spread(results) or ["none inside it"])
    seen = {f.text().split(" = ")[0] for f in found}
    lines = [f"round {view['round']} alone: {f.text()}" for view in per_round(results)
             for f in findings(view) if f.text().split(" = ")[0] not in seen]
    if lines:
        doc.p("Impossible in one round's records only (the pooled numbers above are not; "
              "see Order effect):")
        doc.ul(lines)
