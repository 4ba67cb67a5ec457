"""Suites: which measurement points a run makes, and how long each should take.

Every suite is a ``suite_<name>.py`` module (see :mod:`physmem_lab.suitedef`; the lab's own
is :mod:`physmem_lab.suite_lab`), found by :func:`registry`. A row names an experiment,
its variants, parameter sets, block sizes and, per scale, its sizes. :func:`plan` expands
the rows of the suites asked for into :class:`Point` objects, drops sizes the machine
cannot hold (MemAvailable) and, when a suite has a time budget, drops its least important
points until the estimate fits. Estimates come from :func:`estimate_s`, a rough model
calibrated on the development VM; they only drive the ETA and the budget.

What the programs declare (``--list``: the 1 GiB pages a kind maps beside its data) comes
from a :class:`~physmem_lab.programs.Catalog`; what the machine offers (e.g. the cores a
suite's threads use) from the machine record (:func:`physmem_lab.machine.collect`).

Suite specs (``physmem bench --suite``): ``tiny``, ``default``, ``full`` are the suite
with ``legacy_scales`` (the lab) at that scale (the names of issue 3); otherwise a
comma-separated list of suite names, or ``all``, each run at ``--scale``.

:func:`goals` and :func:`records` are the registry's view of a result file: every suite's
goals, and records looked up with every suite's dimensions.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .analysis import Goal, Records
from .suitedef import SCALES, G, Point, SuiteDef, discover

# Seconds per GiB of mapping and first-touching a point's data, by backing. Rough.
_SETUP_S_PER_GIB = {"4k": 1.6, "thp": 1.3, "2m": 0.4, "1g": 0.4}
_SETUP_S_PER_1G_PAGE = 0.15


def registry() -> Dict[str, SuiteDef]:
    """Every suite by name, in registry order (:func:`physmem_lab.suitedef.discover`)."""
    return discover()


def simulated() -> Tuple[str, ...]:
    """The experiments whose programs take ``--simulate`` (each suite's ``simulated``)."""
    return tuple(e for sd in registry().values() for e in sd.simulated)


def legacy_suite() -> str:
    """The suite ``--suite tiny|default|full`` names."""
    return next(n for n, sd in registry().items() if sd.legacy_scales)


def dimensions() -> Dict[str, str]:
    """experiment -> the param that splits its tables, over every suite."""
    return {e: k for sd in registry().values() for e, k in sd.dimensions.items()}


def records(results: dict) -> Records:
    """The records of ``results``, looked up with every suite's dimensions."""
    return Records(results, dimensions())


def _ran(sd: SuiteDef, results: dict, have: set) -> bool:
    """Whether ``results`` holds anything of suite ``sd``: records, skipped or failed
    points, or the suite in the run's plan."""
    mine = set(sd.experiments)
    tried = {e["experiment"] for e in results.get("skipped", []) + results.get("errors", [])}
    planned = set((results.get("options") or {}).get("suites") or [])
    return (bool(mine & (have | tried)) or sd.name in planned
            or bool(sd.present and sd.present(results)))


def goals(results: dict) -> List[Goal]:
    """The goals of every suite that ran in ``results``, in registry order (a result file
    with nothing in it at all: the legacy suite's, all NOT MEASURED)."""
    recs = records(results)
    have = {r["experiment"] for r in recs.all}
    suites = [sd for sd in registry().values() if sd.goals and _ran(sd, results, have)]
    if not suites and not have:
        suites = [registry()[legacy_suite()]]
    return [g for sd in suites for g in sd.goals(recs)]


def estimate_s(p: Point, reps: int, warmup: int, min_rep_ms: float,
               cap: Optional[int]) -> float:
    """Rough wall time of one process of a point: start-up + setup + (warm-up + reps)
    passes (``reps`` of that process)."""
    sd = registry()[p.suite]
    setup = _SETUP_S_PER_GIB.get(p.backing, 1.6) * p.size_bytes / G
    setup += _SETUP_S_PER_1G_PAGE * p.pages_1g() + sd.setup_s(p)
    rep = max(min_rep_ms / 1000, sd.pass_s(p, cap))
    return 0.05 + setup + (reps + warmup) * rep


def fits_memory(p: Point, mem_available: Optional[int]) -> bool:
    """Whether a point can run next to what else the machine holds (data + ~25%, and a
    paired point's two tables)."""
    if not mem_available:
        return True
    need = p.pages_1g() * G if p.backing == "1g" else p.size_bytes * 1.25
    if p.paired():   # its tables: one on 4k, one on its backing (counted in pages_1g on 1g)
        need += p.size_bytes * (1.25 if p.backing == "1g" else 2.5)
    return need <= mem_available * 0.8


def expand(suite: str, only=None, official: bool = False, scale: Optional[str] = None,
           catalog=None, machine: Optional[dict] = None) -> List[Point]:
    """Every point of ``suite`` at ``scale`` in table order (``only``: experiments to
    keep). A legacy name (tiny/default/full) is the legacy suite at that scale.
    ``catalog``: the programs' ``--list`` (:class:`~physmem_lab.programs.Catalog`; None:
    nothing declared); ``machine``: the machine record the suite's
    ``params_from_machine`` reads."""
    if suite in SCALES:
        suite, scale = legacy_suite(), suite
    sd = registry()[suite]
    scale = scale or "default"
    cfg = sd.scales[scale]
    points = []
    for row in sd.rows:
        if only and row.experiment not in only:
            continue
        for params in row.params:
            sizes = row.sizes.get(scale, ())
            for size in sizes(machine or {}) if callable(sizes) else sizes:
                for bs in row.block_sizes:
                    for v in row.variants:
                        ps = dict(params)
                        if row.cap:
                            if official and row.experiment == "gups":
                                ps[row.cap] = "official"
                            elif cfg["cap"]:
                                ps[row.cap] = str(max(cfg["cap"] >> row.cap_shift, 1))
                        p = Point(row.experiment, v, size, ps, bs, row.priority,
                                  suite=suite, reps=cfg["reps"], warmup=cfg["warmup"],
                                  min_rep_ms=cfg["min_rep_ms"], rounds=row.rounds or cfg.get("rounds", 1),
                                  min_reps=cfg.get("min_reps", 0),
                                  target_spread=cfg.get("target_spread", 0.0),
                                  extra_1g_pages=catalog.extra_1g_pages(row.experiment, v.kind)
                                  if catalog else 0)
                        if sd.params_from_machine:
                            p.params.update(sd.params_from_machine(p, machine or {}))
                        points.append(p)
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
    tiny/default/full are the legacy suite at that scale; ``all`` is every suite."""
    known = registry()
    out = []
    for name in (n.strip() for n in spec.split(",") if n.strip()):
        if name in SCALES:
            out.append((legacy_suite(), scale or name))
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
         scale: Optional[str] = None, rounds: Optional[int] = None, catalog=None,
         machine: Optional[dict] = None) -> Plan:
    """The points of the suites in ``suite`` (a spec, :func:`parse_spec`) this machine
    can run, each suite within its own time budget. ``reps`` and ``rounds`` override the
    suites' own (``est_s`` of a point covers all its rounds); ``catalog`` and ``machine``
    as in :func:`expand`.

    Points larger than memory allows are dropped (and said so in ``Plan.dropped``). If the
    estimate exceeds the budget, points are dropped largest-first from the highest
    priority number down (sweeps first, goal points last) until it fits. A spec of several
    suites at the default scale (the main job: ``--suite all``) runs their goal points only
    (:func:`_goal_points_only`)."""
    parts = parse_spec(suite, scale)
    first = registry()[parts[0][0]].scales[parts[0][1]]
    pl = Plan(suite, [], reps or first["reps"], first["warmup"], first["min_rep_ms"],
              first["cap"], official, scale=parts[0][1], suites=[n for n, _ in parts])
    for name, sc in parts:
        cfg = registry()[name].scales[sc]
        cap = None if official and sc != "tiny" else cfg["cap"]
        mine = []
        for p in expand(name, only, official, sc, catalog, machine):
            p.reps, p.rounds = reps or p.reps, rounds or p.rounds
            if not fits_memory(p, mem_available):
                pl.dropped.append(f"{p.label()}: needs more than MemAvailable allows")
                continue
            p.est_s = p.rounds * estimate_s(p, _expected_reps(p), p.warmup, p.min_rep_ms, cap)
            mine.append(p)
        if len(parts) > 1 and sc == "default":
            mine = _goal_points_only(name, mine, pl.dropped)
        budget = budget_s if budget_s is not None else cfg["budget_s"]
        if budget is not None:
            mine = _trim(mine, pl.dropped, budget)
        pl.points += mine
    return pl


def _goal_points_only(suite: str, points: List[Point], dropped: List[str]) -> List[Point]:
    """The points a goal reads (priority 0), the rest said in one line of ``dropped``. The
    main job runs every suite at the default scale in 10 minutes: on the recent Intel guest
    it took 11 min 47 s with the tables' and sweeps' points too (75 s of estimates of them);
    ``--suite NAME`` alone, or ``--full``, runs them."""
    keep = [p for p in points if p.priority == 0]
    if len(keep) < len(points):
        dropped.append(f"{suite}: {len(points) - len(keep)} point(s) no goal reads (tables, sweeps): "
                       f"run --suite {suite} or --full for them")
    return keep


def _expected_reps(p: Point) -> int:
    """Repetitions one round's process is expected to run: an adaptive point usually
    stops one after its minimum."""
    most = p.round_reps(p.reps)
    adaptive = p.adaptive(most)
    return min(most, adaptive[0] + 1) if adaptive else most


def _trim(points: List[Point], dropped: List[str], budget: float) -> List[Point]:
    """``points`` less the least important ones until their estimate fits ``budget``."""
    keep = list(points)
    order = sorted(keep, key=lambda p: (-p.priority, -p.size_bytes, -p.est_s))
    while sum(p.est_s for p in keep) > budget and order:
        victim = order.pop(0)
        keep.remove(victim)
        dropped.append(f"{victim.label()}: over the suite's time budget ({budget:.0f} s)")
    return keep
