"""Rounds: each point runs once per round (:mod:`physmem_lab.order`); this module turns
the rounds' records into what the tables, the verdicts and the order-effect check read.

Contract:

- ``results["round_runs"]`` holds every process's record, each with
  ``"run": {"round": r, "position": i}`` (its place in the schedule).
- :func:`pool` makes one record per point from its rounds' records: repetitions
  concatenated in round order, median/min/max/rel_spread recomputed over all of them
  (phases likewise), counters' ``per_rep`` concatenated, ``verified`` only if every round
  verified, and ``rounds``: [{round, position, median_ns, machine_load?}] (each round's
  :mod:`physmem_lab.load`). ``results["records"]`` holds these, so every table shows all
  rounds' repetitions together.
- :func:`per_round` gives one results-like dict per round (that round's records, and
  the points run in one round only): a verdict is judged on each of them
  (:mod:`physmem_lab.stability`).
- :func:`order_rows` / :func:`report`: per point run in >= 2 rounds, the spread of its
  round medians against its spread within a process (:mod:`physmem_lab.spread`).
"""
import copy
import statistics
from typing import Dict, List

from . import load
from .spread import across_within, group
from .units import format_size

SHOWN_PARAMS = ("access", "layout", "block_size", "alloc", "workload")   # the params that tell points apart


def _pooled_timing(parts: List[dict]) -> dict:
    samples = [x for p in parts for x in p["ns_per_op"]]
    med = statistics.median(samples)
    return {"ns_per_op": samples, "median_ns": med, "min_ns": min(samples),
            "max_ns": max(samples), "rel_spread": (max(samples) - min(samples)) / med if med else 0.0,
            "reps": len(samples)}


def _pool_counters(recs: List[dict]) -> dict:
    out = copy.deepcopy(recs[0].get("counters") or {})
    for name, c in out.items():
        if isinstance(c, dict) and "per_rep" in c:
            parts = [(r["counters"].get(name) or {}).get("per_rep") for r in recs]
            c["per_rep"] = None if any(p is None for p in parts) else [x for p in parts for x in p]
    return out


def pool(recs: List[dict]) -> dict:
    """One record of a point from its rounds' records (module contract); ``recs`` in
    round order, all of the same point."""
    out = copy.deepcopy(recs[0])
    out.pop("run", None)
    out.update(_pooled_timing(recs))
    for name in (recs[0].get("phases") or {}):
        if all(name in (r.get("phases") or {}) for r in recs):
            out["phases"][name].update(_pooled_timing([r["phases"][name] for r in recs]))
    if "counters" in out:
        out["counters"] = _pool_counters(recs)
    out["verified"] = all(r["verified"] for r in recs)
    out["rounds"] = [{**r.get("run", {}), "median_ns": r["median_ns"],
                      **({"machine_load": r["machine_load"]} if r.get("machine_load") else {})}
                     for r in recs]
    out.pop("machine_load", None)
    return out


def pooled_records(round_runs: List[dict]) -> List[dict]:
    """One pooled record per point, in the order points first appear in ``round_runs``."""
    return [pool(sorted(rs, key=lambda r: r.get("run", {}).get("round", 0)))
            for rs in group(round_runs).values()]


def _round(r: dict) -> int:
    return r.get("run", {}).get("round", 0)


def rounds_of(results: dict) -> List[int]:
    return sorted({_round(r) for r in results.get("round_runs", [])})


def per_round(results: dict) -> List[dict]:
    """One shallow copy of ``results`` per round whose ``records`` are that round's
    records, plus the points run in one round only (a device's limit measured once, a
    peer timed once): each round judges its own repetitions against the same one-off
    measurement instead of finding it missing. Empty when the run kept no rounds (an
    older result file)."""
    out = []
    runs = results.get("round_runs", [])
    once = [rs[0] for rs in group(runs).values() if len(rs) == 1]
    for n in rounds_of(results):
        view = dict(results)
        view["records"] = [r for r in runs if _round(r) == n] + [r for r in once if _round(r) != n]
        view["round"] = n
        out.append(view)
    return out


def order_rows(results: dict) -> List[Dict]:
    """Per point with >= 2 rounds: its rounds (round, position, median), across, within,
    flagged ('order-sensitive')."""
    out = []
    for key, runs in group(results.get("round_runs", [])).items():
        if len(runs) < 2:
            continue
        s = across_within(runs)
        out.append({"key": key, "rounds": [(r["run"]["round"], r["run"]["position"], r["median_ns"])
                                           for r in runs],
                    "others": [(r.get("machine_load") or {}).get("others_cpu") for r in runs],
                    "contended": any(load.contended(r.get("machine_load")) for r in runs), **s})
    return out


def report(doc, results: dict) -> None:
    """The 'Order effect' section: rounds and positions against within-process spread."""
    rows = order_rows(results)
    if not rows:
        return
    order = (results.get("options") or {}).get("order") or {}
    doc.h(2, "Order effect (rounds)")
    doc.p(f"Every point ran in {order.get('rounds')} rounds, each in its own process "
          f"(seed {order.get('seed')}: {order.get('design')}). 'rounds' lists round:position "
          "and that process's median; 'across' is (max - min) / median of those medians, "
          "'within' the median of their within-process spreads. A point is order-sensitive "
          "when across > within: when it ran moved it more than its repetitions vary.")
    table = []
    for r in sorted(rows, key=lambda r: -r["across"]):
        exp, variant, size, params = r["key"]
        table.append([exp, variant, format_size(size),
                      " ".join(f"{k}={v}" for k, v in params if k in SHOWN_PARAMS),
                      "; ".join(f"{n}:{pos} {m:.4g}" for n, pos, m in r["rounds"]),
                      f"{100 * r['across']:.1f}%", f"{100 * r['within']:.1f}%",
                      "yes" if r["flagged"] else "no",
                      " / ".join("-" if o is None else f"{o:.0%}" for o in r["others"])
                      + (" (contended)" if r["contended"] else "")])
    doc.table(["experiment", "variant", "size", "params", "rounds (round:position ns/op)",
               "across", "within", "order-sensitive", "others' CPU per round"], table)
    flagged = sum(r["flagged"] for r in rows)
    if any(o is not None for r in rows for o in r["others"]):
        both = sum(r["flagged"] and r["contended"] for r in rows)
        doc.p(f"{flagged} of {len(rows)} points are order-sensitive, {both} of them with a "
              "round where other processes left no core free ('others' CPU': their share "
              "of all CPUs while the point's process ran).")
    else:
        doc.p(f"{flagged} of {len(rows)} points are order-sensitive (this result file does "
              "not record the machine's load).")
