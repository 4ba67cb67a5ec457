"""What a suite is: rows of measurement points, scales, and its part of the report.

A suite is a :class:`SuiteDef`. The lab's own suite (``lab``: scan, gups, chase, rbtree,
blackscholes, hashtable) lives in :mod:`physmem_lab.suites`; every other suite is a
module ``physmem_lab/suite_<name>.py`` that defines ``SUITE = SuiteDef(...)`` and is
found by :func:`discover` (so adding a suite touches no shared file).

Contract of a suite module:

- ``rows``: :class:`Row` objects whose ``sizes`` are keyed by scale (``tiny``,
  ``default``, ``full``); every row names an experiment program
  ``build/lab/physmem_lab_<experiment>`` that follows lab/PROTOCOL.md.
- ``scales``: per scale, ``reps``, ``warmup``, ``min_rep_ms``, ``cap`` (the value given
  to a row's ``cap`` parameter, None for none), ``budget_s`` (None: unbounded) and
  optionally ``rounds`` (default 1): the point runs once per round, each time in a fresh
  process with ``ceil(reps / rounds)`` repetitions (lab/PROTOCOL.md, "Order").
- ``pass_s(point, cap)``: rough seconds of one timed pass (drives ETA and budget only).
- ``report(doc, recs, results, out_dir)``: optional; writes the suite's section (tables,
  plots into ``out_dir``) into the :class:`~physmem_lab.document.Doc`.
- ``goals(recs)``: optional; a list of :class:`~physmem_lab.analysis.Goal` shown with the
  lab's goals (numbered with a prefix of the suite's name, e.g. ``alloc-1``).
"""
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

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
class Row:
    """One line of a suite's table. ``sizes`` maps scale -> sizes; ``cap`` names the
    parameter that bounds the work per pass (its value is the scale's cap, or 'official'
    with --official for gups). Priority 0: needed by a goal; 1: tables; 2: sweeps."""
    experiment: str
    variants: Tuple[str, ...]
    sizes: Dict[str, Tuple[int, ...]]
    params: Tuple[Dict[str, str], ...] = ({},)
    block_sizes: Tuple[Optional[int], ...] = (None,)
    cap: Optional[str] = None
    priority: int = 1
    cap_shift: int = 0      # this row's cap is the scale's cap >> cap_shift


@dataclass
class Point:
    """One measurement point: one fresh process of one program per round. ``reps`` (the
    total over the rounds), ``warmup``, ``min_rep_ms`` and ``rounds`` come from the
    point's suite and scale (None: the plan's)."""
    experiment: str
    variant: str
    size_bytes: int
    params: Dict[str, str] = field(default_factory=dict)
    block_size: Optional[int] = None
    priority: int = 1
    est_s: float = 0.0
    suite: str = "lab"
    reps: Optional[int] = None
    warmup: Optional[int] = None
    min_rep_ms: Optional[float] = None
    rounds: int = 1

    def round_reps(self, reps: int) -> int:
        """Repetitions of one round's process when ``reps`` are wanted in total."""
        return max(1, -(-reps // max(1, self.rounds)))

    @property
    def backing(self) -> str:
        return self.variant.rsplit("-", 1)[1]

    @property
    def kind(self) -> str:
        return self.variant.rsplit("-", 1)[0]

    def label(self) -> str:
        from .units import format_size
        extra = [f"{k}={v}" for k, v in sorted(self.params.items())]
        if self.block_size:
            extra.append(f"block={format_size(self.block_size)}")
        return " ".join([self.experiment, self.variant, format_size(self.size_bytes)] + extra)

    def pages_1g(self) -> int:
        """1 GiB pages this point needs (0 unless its backing is 1g): the data rounded up,
        plus one for tree inner blocks (an SoA array's seven columns share one mapping)."""
        if self.backing != "1g":
            return 0
        return -(-self.size_bytes // G) + (0 if self.kind == "array" else 1)


def _default_pass_s(p: Point, cap: Optional[int]) -> float:
    return 0.5 * p.size_bytes / G


@dataclass
class SuiteDef:
    """A suite: its rows, its scales and how the report shows it (module docstring)."""
    name: str
    title: str
    rows: Tuple[Row, ...]
    scales: Dict[str, dict]
    pass_s: Callable[[Point, Optional[int]], float] = _default_pass_s
    report: Optional[Callable] = None
    goals: Optional[Callable] = None

    @property
    def experiments(self) -> List[str]:
        return list(dict.fromkeys(r.experiment for r in self.rows))


def discover() -> Dict[str, SuiteDef]:
    """Every ``physmem_lab/suite_<name>.py`` module's ``SUITE``, by name, sorted."""
    from . import __path__ as pkg_path
    found = {}
    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg_path)):
        if mod.startswith("suite_"):
            sd = importlib.import_module(f"{__package__}.{mod}").SUITE
            found[sd.name] = sd
    return found
