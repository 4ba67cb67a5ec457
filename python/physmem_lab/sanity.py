"""Physically impossible outcomes, flagged instead of reported as results (issue 16).

Which pairs of records are impossible is the suites' knowledge: a suite's ``sanity(recs)``
gives (rule, record, the record it may not beat) pairs, and its ``sanity_note`` says why
(e.g. the lab: in random-access experiments a tree cannot beat the array on its own
backing, nor any variant ``array-1g``; :mod:`physmem_lab.suite_lab`).

Contract of :func:`findings`: a pair is flagged only *beyond the noise*: when even the
faster side's slowest repetition beat the other side's fastest (the ratio's range from
:class:`~physmem_lab.analysis.Ratio` lies wholly below 1; with rounds, over every
round's repetitions), and both sides have at least :data:`MIN_REPS` repetitions
(:func:`report` also lists pairs impossible in one round alone).
A suite's ``contradictions(recs)`` give (rule, record, what) for records whose own numbers
contradict each other (e.g. a simulated array with software-walk loads): each is a
:class:`Contradiction`, flagged whatever the timing.
Each finding names its records; :func:`implausible_keys` gives
the point keys (:func:`physmem_lab.spread.point_key`) of every record in a finding, so
goals built on them are not judged.
"""
from dataclasses import dataclass
from typing import List, Set, Tuple

from .analysis import Ratio
from .rounds import per_round
from .spread import point_key
from .suites import records, registry
from .units import format_size

MIN_REPS = 3         # fewer repetitions than this give no range to judge noise by


@dataclass
class Finding:
    rule: str           # "tree faster than the array on its backing" | "faster than array-1g"
    ratio: Ratio        # fast / slow; its range lies below 1

    def text(self) -> str:
        f, s = self.ratio.num, self.ratio.den
        return (f"{f['experiment']} {format_size(f['size_bytes'])}: {f['variant']} / "
                f"{s['variant']} = {self.ratio.cell()}: {self.rule}")

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


def _beyond_noise(r: Ratio) -> bool:
    """The whole range below 1, on enough repetitions to have a range."""
    return r.hi < 1.0 and min(r.num["reps"], r.den["reps"]) >= MIN_REPS


def _pairs(results: dict) -> List[Tuple[str, dict, dict]]:
    """(rule, record, the record it may not beat) over every suite with sanity rules."""
    recs = records(results)
    return [x for sd in registry().values() if sd.sanity for x in sd.sanity(recs)]


def contradictions(results: dict) -> List[Contradiction]:
    """Every record of ``results`` whose own numbers contradict each other."""
    recs = records(results)
    return [Contradiction(*x) for sd in registry().values() if sd.contradictions
            for x in sd.contradictions(recs)]


def findings(results: dict) -> list:
    """Every impossible outcome among the records of ``results`` (module contract):
    :class:`Finding` pairs, then :class:`Contradiction` records."""
    out = []
    for rule, fast, slow in _pairs(results):
        r = Ratio(fast, slow)
        if _beyond_noise(r):
            out.append(Finding(rule, r))
    return out + contradictions(results)


def implausible_keys(found: list) -> Set[Tuple]:
    return {point_key(r) for f in found for r in f.records()}


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
          "translation-free limit); goals that use it are not judged (IMPLAUSIBLE).")
    doc.ul([f"{'CONTRADICTS ITSELF' if isinstance(f, Contradiction) else 'IMPOSSIBLE'}: "
            f"{f.text()}" for f in found] or ["none found"])
    seen = {f.text().split(" = ")[0] for f in found}
    lines = [f"round {view['round']} alone: {f.text()}" for view in per_round(results)
             for f in findings(view) if f.text().split(" = ")[0] not in seen]
    if lines:
        doc.p("Impossible in one round's records only (the pooled numbers above are not; "
              "see Order effect):")
        doc.ul(lines)
