"""Spread across runs of one point against its spread within a process.

Shared by the report's "Layout bias" (runs under layout seeds) and "Order effect" (runs
in different rounds and positions) sections. Contract of :func:`across_within`: given
the records of one point from separate processes, ``across`` is (max - min) / median of
their medians and ``within`` the median of their own ``rel_spread`` (max - min of the
repetitions over their median); the point is *flagged* when across > within: the
process it ran in moved its result more than its repetitions vary.
"""
import statistics
from typing import Dict, List, Optional, Tuple


def point_key(r: dict) -> Tuple:
    """experiment, variant, size and params (as sorted string pairs) of a record."""
    return (r["experiment"], r["variant"], r["size_bytes"], tuple(sorted(
        (k, str(v)) for k, v in r["params"].items())))


def group(records) -> Dict[Tuple, List[dict]]:
    """Records by :func:`point_key`, each list in the order given."""
    out: Dict[Tuple, List[dict]] = {}
    for r in records:
        out.setdefault(point_key(r), []).append(r)
    return out


def across_within(runs: List[dict]) -> dict:
    """``runs``: >= 1 records of one point. Returns min, max, median of the medians,
    across, within, flagged and the slowest run's record (``worst``)."""
    meds = [r["median_ns"] for r in runs]
    mid = statistics.median(meds)
    across = (max(meds) - min(meds)) / mid if mid else 0.0
    within = statistics.median(r["rel_spread"] for r in runs)
    return {"runs": len(runs), "min": min(meds), "max": max(meds), "median": mid,
            "across": across, "within": within, "flagged": across > within,
            "worst": max(runs, key=lambda r: r["median_ns"])}


# The last round_runs list grouped by point (the list, its length when grouped, the groups):
# a report asks for thousands of points' spreads over one list of hundreds of runs.
_grouped_runs: Tuple = (None, 0, {})


def _runs_of(results: dict, key: Tuple) -> List[dict]:
    """``results["round_runs"]`` of the point ``key``, grouped once per list."""
    global _grouped_runs
    runs = results.get("round_runs") or []
    seen, n, groups = _grouped_runs
    if seen is not runs or n != len(runs):
        groups = group(runs)
        _grouped_runs = (runs, len(runs), groups)
    return groups.get(key, [])


def process_spread(results: dict, rec: dict) -> Optional[float]:
    """(max - min) / median of the medians of ``rec``'s point over the processes it ran in:
    a pooled record's ``rounds``, else its point's records in ``results["round_runs"]`` (a
    round's view holds one of them); None when it ran in fewer than two."""
    meds = [x["median_ns"] for x in rec.get("rounds") or []]
    if len(meds) < 2:
        meds = [x["median_ns"] for x in _runs_of(results, point_key(rec))]
    if len(meds) < 2:
        return None
    mid = statistics.median(meds)
    return (max(meds) - min(meds)) / mid if mid else 0.0
