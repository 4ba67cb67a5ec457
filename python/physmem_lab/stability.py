"""Goal verdicts that hold across rounds (issue 16).

Contract of :func:`goals`: the goals of :func:`physmem_lab.suites.goals` on the pooled
records (their numbers are the tables'), each carrying ``rounds``: the same goal judged on
each round's records alone (:func:`physmem_lab.rounds.per_round`), and ``implausible``:
its items whose records :mod:`physmem_lab.sanity` flags (an item that is a count, its
``ratio.timed`` False, only when the records contradict themselves: a finding on their
timing leaves their counts judged, issue 30). ``Goal.verdict`` then is MET or
MISSED only when every round that measured the goal agrees, UNSTABLE when they disagree
(:func:`round_numbers` shows each round's ratios), IMPLAUSIBLE when it rests on impossible
data. A result file without rounds keeps the plain verdicts.
"""
from typing import List, Optional

from . import analysis, rounds, sanity, suites
from .spread import point_key


def _same(goals: List[analysis.Goal], number) -> Optional[analysis.Goal]:
    return next((g for g in goals if g.number == number), None)


def _keys(r) -> set:
    """Point keys of a ratio's records (none for a suite's Scalar built from other data)."""
    return {point_key(x) for x in (r.num, r.den, getattr(r, "floor", None))
            if isinstance(x, dict) and "experiment" in x}


def goals(results: dict, found: Optional[List[sanity.Finding]] = None) -> List[analysis.Goal]:
    """The goals with their rounds and implausible items (module contract); ``found``:
    sanity findings already computed (None: computed here)."""
    pooled = suites.goals(results)
    views = rounds.per_round(results)
    per = [suites.goals(v) for v in views] if len(views) > 1 else []
    found = sanity.findings(results) if found is None else found
    bad = {timed: sanity.implausible_keys(found, timed) for timed in (True, False)}
    for g in pooled:
        g.rounds = [x for x in (_same(gs, g.number) for gs in per) if x is not None]
        for i in g.items:
            if _keys(i.ratio) & bad[i.ratio.timed]:
                g.implausible.append(f"{i.what}: {i.ratio.cell()} rests on an impossible "
                                     "outcome (see Sanity)")
    return pooled


def round_numbers(g: analysis.Goal) -> List[str]:
    """One line per round: its verdict and each item's ratio."""
    return [f"round {n}: {r.measured}: " + "; ".join(f"{i.what} {i.ratio.short()}"
                                                      for i in r.items)
            for n, r in enumerate(g.rounds)]
