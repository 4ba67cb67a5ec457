"""Physically impossible outcomes, flagged instead of reported as results (issue 16).

In the random-access experiments (:data:`CHECKED`) the time per operation is memory
latency plus address translation, and a tree does strictly more work per operation
than a flat array on the same backing (its index walk adds loads; it never saves one).
``array-1g`` maps the data with the fewest translations the machine offers, so it is
the no-translation limit. Hence, per experiment, size and params:

- a ``tree-*-B`` variant cannot be faster than ``array-B`` (same backing B);
- no variant can be faster than ``array-1g``.

Contract of :func:`findings`: a pair is flagged only *beyond the noise*: when even the
faster side's slowest repetition beat the other side's fastest (the ratio's range from
:class:`~physmem_lab.analysis.Ratio` lies wholly below 1; with rounds, over every
round's repetitions), and both sides have at least :data:`MIN_REPS` repetitions
(:func:`report` also lists pairs impossible in one round alone).
Each finding names both records; :func:`implausible_keys` gives
the point keys (:func:`physmem_lab.spread.point_key`) of every record in a finding, so
goals built on them are not judged.
"""
from dataclasses import dataclass
from typing import List, Set, Tuple

from .analysis import DIMENSION, Ratio, Records
from .rounds import per_round
from .spread import point_key
from .units import format_size

CHECKED = ("gups", "chase", "hashtable")
LIMIT = "array-1g"
MIN_REPS = 3         # fewer repetitions than this give no range to judge noise by


@dataclass
class Finding:
    rule: str           # "tree faster than the array on its backing" | "faster than array-1g"
    ratio: Ratio        # fast / slow; its range lies below 1

    def text(self) -> str:
        f, s = self.ratio.num, self.ratio.den
        return (f"{f['experiment']} {format_size(f['size_bytes'])}: {f['variant']} / "
                f"{s['variant']} = {self.ratio.cell()}: {self.rule}")


def _beyond_noise(r: Ratio) -> bool:
    """The whole range below 1, on enough repetitions to have a range."""
    return r.hi < 1.0 and min(r.num["reps"], r.den["reps"]) >= MIN_REPS


def _pairs(recs: Records, exp: str) -> List[Tuple[str, dict, dict]]:
    """(rule, record, the record it may not beat) for every checked pair of ``exp``."""
    out, key = [], DIMENSION.get(exp)
    for r in (r for r in recs.all if r["experiment"] == exp):
        kind, backing = r["variant"].rsplit("-", 1)
        dim = str(r["params"].get(key)) if key else None
        arr = recs.find(exp, f"array-{backing}", r["size_bytes"], dim)
        lim = recs.find(exp, LIMIT, r["size_bytes"], dim)
        if kind.startswith("tree") and arr is not None:
            out.append(("a tree faster than the array on its own backing", r, arr))
        if lim is not None and r is not lim and not (kind.startswith("tree") and lim is arr):
            out.append((f"faster than the no-translation limit {LIMIT}", r, lim))
    return out


def findings(results: dict) -> List[Finding]:
    """Every impossible outcome among the records of ``results`` (module contract)."""
    recs = Records(results)
    out = []
    for exp in CHECKED:
        for rule, fast, slow in _pairs(recs, exp):
            r = Ratio(fast, slow)
            if _beyond_noise(r):
                out.append(Finding(rule, r))
    return out


def implausible_keys(found: List[Finding]) -> Set[Tuple]:
    return {point_key(r) for f in found for r in (f.ratio.num, f.ratio.den)}


def checked_pairs(results: dict) -> int:
    recs = Records(results)
    return sum(len(_pairs(recs, exp)) for exp in CHECKED)


def report(doc, results: dict, found: List[Finding]) -> None:
    """The 'Sanity' section: what was checked and every impossible outcome found."""
    doc.h(2, "Sanity: physically impossible outcomes")
    doc.p(f"Checked in {', '.join(CHECKED)}: a tree faster than the array on the same "
          f"backing, and any variant faster than {LIMIT} (the no-translation limit), each "
          "flagged only when even the faster side's slowest repetition beat the other's "
          f"fastest (on >= {MIN_REPS} repetitions each). {checked_pairs(results)} pairs "
          "checked. A flagged pair is a measurement "
          "artefact, not a result: drift or other work hitting one side, or, on a virtual "
          "machine, a guest page the host backs with small pages (then array-1g is no "
          "translation-free limit); goals that use it are not judged (IMPLAUSIBLE).")
    doc.ul([f"IMPOSSIBLE: {f.text()}" for f in found] or ["none found"])
    seen = {f.text().split(" = ")[0] for f in found}
    lines = [f"round {view['round']} alone: {f.text()}" for view in per_round(results)
             for f in findings(view) if f.text().split(" = ")[0] not in seen]
    if lines:
        doc.p("Impossible in one round's records only (the pooled numbers above are not; "
              "see Order effect):")
        doc.ul(lines)
