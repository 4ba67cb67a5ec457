"""What a suite is: rows of measurement points, scales, and its part of the report.

A suite is a :class:`SuiteDef`: every module ``physmem_lab/suite_<name>.py`` defines
``SUITE = SuiteDef(...)`` and is found by :func:`discover` (so adding a suite touches no
shared file). The lab's own suite is :mod:`physmem_lab.suite_lab`.

Contract of a suite module (this module is the bottom layer: it imports no other part of
the harness but :mod:`physmem_lab.units`; suite modules import it and
:mod:`physmem_lab.analysis`, never the registry, the runner or the report):

- ``rows``: :class:`Row` objects whose ``sizes`` are keyed by scale (``tiny``,
  ``default``, ``full``); every row names an experiment program
  ``build/lab/physmem_lab_<experiment>`` that follows lab/PROTOCOL.md and variants
  (:class:`Variant`: a kind and a backing, both axes the program declares in ``--list``).
- ``scales``: per scale, ``reps``, ``warmup``, ``min_rep_ms``, ``cap`` (the value given
  to a row's ``cap`` parameter, None for none), ``budget_s`` (None: unbounded) and
  optionally ``rounds`` (default 1): the point runs once per round, each time in a fresh
  process with ``ceil(reps / rounds)`` repetitions (lab/PROTOCOL.md, "Order").
- ``pass_s(point, cap)``: rough seconds of one timed pass; ``setup_s(point)``: rough
  seconds of setup beyond mapping the data (both drive ETA and budget only).
- ``report(doc, recs, results, out_dir)``: optional; writes the suite's section (tables,
  plots into ``out_dir``) into the :class:`~physmem_lab.document.Doc`;
  ``headline(doc, recs)``: optional, its lines in the terminal summary;
  ``plots(recs, out_dir)``: optional, [(title, path)] shown under "Plots".
- ``goals(recs)``: optional; a list of :class:`~physmem_lab.analysis.Goal` (numbered with
  a prefix of the suite's name, e.g. ``alloc-1``; the lab's are 1-5).
- ``sanity(recs)``: optional; (rule, record, record it may not beat) pairs that
  :mod:`physmem_lab.sanity` checks, described by ``sanity_note``; a 4th element True
  marks a pair across processes (flagged only beyond the spread between processes).
- ``contradictions(recs)``: optional; (rule, record, what) for records whose own numbers
  contradict each other (e.g. a simulated array with software-walk loads); flagged by
  :mod:`physmem_lab.sanity` whatever the timing.
- ``present(results)``: optional; whether a result file holds something of the suite
  beyond records of its own rows (e.g. ``translation``: simulated records of the lab's
  programs, the simulator's checks), so its goals and section are shown.
- ``dimensions``: experiment -> the param that splits its tables (e.g. scan: access).
- ``legacy_scales``: the suite ``--suite tiny|default|full`` means (one suite: the lab).
- ``rank``: order in the registry (then the name): the first suite of a spec sets the
  plan's headline options.
- ``params_from_machine(point, machine)``: optional; params a point takes from the
  machine record (e.g. threads = the cores available to the run).
"""

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from .machine import LLC_CAP
from .units import format_size

K, M, G = 1 << 10, 1 << 20, 1 << 30
SCALES = ("tiny", "default", "full")


def geometric(lo: int, hi: int, factor: int) -> Tuple[int, ...]:
    """lo, lo*factor, ... up to hi inclusive."""
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= factor
    return tuple(out)


@dataclass(frozen=True)
class Variant:
    """One value of a program's variant axis: a layout ``kind`` on a ``backing``, each a
    value the program declares in ``--list``. ``name`` is the ``--variant`` argument
    (KIND-BACKING, lab/PROTOCOL.md); it is composed here, never parsed back."""
    kind: str
    backing: str

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.backing}"


BACKINGS = ("4k", "thp", "2m", "1g")


def variants(kind: str, backings=("4k", "thp", "1g")) -> Tuple[Variant, ...]:
    """``kind`` on each of ``backings``."""
    return tuple(Variant(kind, b) for b in backings)


@dataclass(frozen=True)
class Row:
    """One line of a suite's table. ``sizes`` maps scale -> sizes, or -> a function of
    the machine record giving them (:func:`machine_sizes`); ``cap`` names the
    parameter that bounds the work per pass (its value is the scale's cap, or 'official'
    with --official for gups). Priority 0: needed by a goal; 1: tables; 2: sweeps."""
    experiment: str
    variants: Tuple[Variant, ...]
    sizes: Dict[str, "Tuple[int, ...] | Callable[[dict], Tuple[int, ...]]"]
    params: Tuple[Dict[str, str], ...] = ({},)
    block_sizes: Tuple[Optional[int], ...] = (None,)
    cap: Optional[str] = None
    priority: int = 1
    cap_shift: int = 0      # this row's cap is the scale's cap >> cap_shift
    rounds: Optional[int] = None  # this row's points run in this many rounds (None: the scale's)


def pow2_at_least(n: float) -> int:
    """The smallest power of two >= n (>= 4 KiB)."""
    p = 4 * K
    while p < n:
        p *= 2
    return p


def machine_sizes(*fractions: Tuple[str, float], floor: int = 4 * K,
                  llc_cap: Optional[int] = LLC_CAP) -> Callable:
    """Sizes relative to the machine's caches: ``("l2", 0.5)`` is half the L2, rounded up
    to a power of two, ``("llc", 4)`` four times the last-level cache (counted at most
    ``llc_cap``; None: as reported). A cache the machine record lacks (its ``caches``
    field) counts as a common size (32 KiB, 512 KiB, 32 MiB)."""
    defaults = {"l1d": 32 * K, "l2": 512 * K, "llc": 32 * M}

    def sizes(machine: dict) -> Tuple[int, ...]:
        have = {**defaults, **(machine.get("caches") or {})}
        if llc_cap is not None:
            have["llc"] = min(have["llc"], llc_cap)
        return tuple(sorted({max(floor, pow2_at_least(have[c] * f)) for c, f in fractions}))
    return sizes


@dataclass
class Point:
    """One measurement point: one fresh process of one program per round. ``reps`` (the
    total over the rounds), ``warmup``, ``min_rep_ms`` and ``rounds`` come from the
    point's suite and scale (None: the plan's). ``extra_1g_pages``: 1 GiB pages the
    program maps beside its data for this kind (its ``--list`` says; 0 when unknown)."""
    experiment: str
    variant: Variant
    size_bytes: int
    params: Dict[str, str] = field(default_factory=dict)
    block_size: Optional[int] = None
    priority: int = 1
    est_s: float = 0.0
    suite: str = ""
    reps: Optional[int] = None
    warmup: Optional[int] = None
    min_rep_ms: Optional[float] = None
    rounds: int = 1
    extra_1g_pages: int = 0
    min_reps: int = 0          # adaptive repetitions (total over rounds); 0: fixed
    target_spread: float = 0.0

    def round_reps(self, reps: int) -> int:
        """Repetitions of one round's process when ``reps`` are wanted in total."""
        return max(1, -(-reps // max(1, self.rounds)))

    def adaptive(self, round_reps: int) -> Optional[Tuple[int, float]]:
        """(min reps, target spread) of one round's process, or None for fixed
        repetitions: the program stops once that many are within the spread
        (lab/PROTOCOL.md, "--min-reps")."""
        if self.target_spread <= 0 or not self.min_reps:
            return None
        lo = max(2, self.round_reps(self.min_reps))
        return (lo, self.target_spread) if lo < round_reps else None

    @property
    def backing(self) -> str:
        return self.variant.backing

    @property
    def kind(self) -> str:
        return self.variant.kind

    @property
    def name(self) -> str:
        """The ``--variant`` argument (KIND-BACKING)."""
        return self.variant.name

    def label(self) -> str:
        extra = [f"{k}={v}" for k, v in sorted(self.params.items())]
        if self.block_size:
            extra.append(f"block={format_size(self.block_size)}")
        return " ".join([self.experiment, self.name, format_size(self.size_bytes)] + extra)

    def pages_1g(self) -> int:
        """1 GiB pages this point needs (0 unless its backing is 1g): the data rounded up,
        plus the pages the program declares for this kind beside the data."""
        if self.backing != "1g":
            return 0
        data = -(-self.size_bytes // G)
        return data * (2 if self.paired() else 1) + self.extra_1g_pages

    def paired(self) -> bool:
        """Whether the program also maps contiguous tables of the data's size on 4k and on
        its own backing, timed in turn with it (gups pair=on)."""
        return self.params.get("pair") == "on"


def _default_pass_s(p: Point, cap: Optional[int]) -> float:
    return 0.5 * p.size_bytes / G


def _no_setup_s(p: Point) -> float:
    return 0.0


@dataclass
class SuiteDef:
    """A suite: its rows, its scales and how the report shows it (module docstring)."""
    name: str
    title: str
    rows: Tuple[Row, ...]
    scales: Dict[str, dict]
    pass_s: Callable[[Point, Optional[int]], float] = _default_pass_s
    setup_s: Callable[[Point], float] = _no_setup_s
    report: Optional[Callable] = None
    goals: Optional[Callable] = None
    headline: Optional[Callable] = None
    plots: Optional[Callable] = None
    sanity: Optional[Callable] = None
    sanity_note: str = ""
    contradictions: Optional[Callable] = None
    present: Optional[Callable] = None
    dimensions: Dict[str, str] = field(default_factory=dict)
    legacy_scales: bool = False
    rank: int = 100
    params_from_machine: Optional[Callable] = None
    simulated: Tuple[str, ...] = ()  # experiments whose programs take --simulate (simulate.py)

    @property
    def experiments(self) -> List[str]:
        return list(dict.fromkeys(r.experiment for r in self.rows))


def discover() -> Dict[str, SuiteDef]:
    """Every ``physmem_lab/suite_<name>.py`` module's ``SUITE``, by name, in order of
    ``rank`` then name. Suite modules are imported here, at run time: this module sits
    below them."""
    pkg = importlib.import_module(__package__)
    found = []
    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)):
        if mod.startswith("suite_"):
            found.append(importlib.import_module(f"{__package__}.{mod}").SUITE)
    return {sd.name: sd for sd in sorted(found, key=lambda sd: (sd.rank, sd.name))}
