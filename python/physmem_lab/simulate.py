"""``physmem bench --simulate PRESET|auto|off``: the translation model in the lab's runs.

The options are declared here once (:func:`add_arguments`) and become a
:class:`Simulation`. Contract:

- Only the programs the suites name in ``SuiteDef.simulated`` (:func:`physmem_lab.suites.simulated`:
  the ``translation`` suite's kernels) get the options, and only in a point's first round (round 0), not in its
  layout runs: the model's counts do not depend on timing, so one traced process per point
  suffices, and the other rounds time the kernel without tracing.
- :meth:`Simulation.probe` asks each such program, once, whether it takes the options
  (``PROGRAM <options> --list`` exits 0; a program built before issue 15, or one refusing a
  preset name, exits 2): the ones that do not are run without them and the run's metadata
  says why. ``auto`` is passed as is: the program picks its CPU's model, always one
  (CPUID's TLB description, else the family/model table, else the nearest preset), and
  records which and why (``source``, ``reason``); what ``physmem-tlbsim detect`` says is
  recorded beside it and printed on the console. The throughput check (``bench``) runs
  what the run simulates: ``--preset auto`` or the asked preset.
- :meth:`Simulation.metadata` is the result file's ``options.simulate``.
- The traced window (``--sim-refs``) follows the run's scale (:data:`SIM_REFS`: the
  program's own default at full scale: 8M after a 2M warm-up) unless asked; the halves' difference in each record
  measures what a shorter window costs in sampling error.
- A simulated process's estimate grows by :data:`SIM_EST_S` (ETA and time-outs only): the
  suites' time budgets are applied before and do not see it, so turning simulation on or
  off never changes which points run.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import programs, suites, tlbsim

OFF, AUTO = "off", "auto"
# References counted per point by scale (warm-up: a quarter more; None: the program's
# default). Measured here (gups array-4k at 64 MiB, zen5): a 16M window 0.93 s a process,
# 4M 0.39 s, 1M 0.24 s, walks/op 0.699, 0.699, 0.698; default-scale points with 4M: +0.1 s
# (gups 1 GiB) to +0.9 s (chase 128 MiB: the traced pass chases too) a process. Default 2M
# since the simulated round 0 ran 18 s longer than round 1 in the scans alone (main job on
# the recent Intel guest); each record's two halves say what the shorter window costs.
SIM_REFS = {"tiny": 1 << 20, "default": 1 << 21, "full": None}
SIM_EST_S = 0.4           # rough seconds a traced and simulated pass adds to one process
ROUNDS_NOTE = "the first round's process of each point (round 0); later rounds and layout runs only time"


def add_arguments(parser) -> None:
    """The simulation options of ``physmem bench``."""
    parser.add_argument("--simulate", default=AUTO, metavar="PRESET|auto|off",
                        help="translation model for the programs of "
                             f"{', '.join(suites.simulated())}: a preset of physmem-tlbsim presets, auto "
                             "(the machine's own CPU's model, always one: see physmem-tlbsim detect; default) or off")
    parser.add_argument("--sim-caches", choices=["on", "off"], default="on",
                        help="model the preset's data caches (L1d, L2), so a walk reference or a "
                             "software walk's load can hit in cache (default on)")
    parser.add_argument("--sim-levels", type=int, choices=[4, 5],
                        help="page-table levels (default: the preset's)")
    parser.add_argument("--sim-refs", type=int, metavar="N",
                        help="references counted per simulated point (default by scale: tiny 1M, "
                             "default 4M, full the program's own)")


@dataclass
class Simulation:
    choice: str = AUTO
    caches: str = "on"
    levels: Optional[int] = None
    refs: Optional[int] = None
    accepted: Dict[str, Optional[str]] = field(default_factory=dict)   # exp -> None or why not
    detected: Optional[dict] = None

    @classmethod
    def from_args(cls, args, scale: Optional[str] = None) -> "Simulation":
        """The options of ``args``; the window from ``scale`` unless --sim-refs."""
        refs = getattr(args, "sim_refs", None) or SIM_REFS.get(scale or "default")
        return cls(getattr(args, "simulate", AUTO), getattr(args, "sim_caches", "off"),
                   getattr(args, "sim_levels", None), refs)

    @property
    def on(self) -> bool:
        return self.choice != OFF

    def options(self) -> List[str]:
        """The arguments a simulating program gets."""
        out = self.model_options()
        if self.refs:
            out += ["--sim-refs", str(self.refs)]
        return out

    def model_options(self) -> List[str]:
        """The programs' options that choose the model (no window: --sim-refs left out)."""
        out = ["--simulate", self.choice, "--sim-caches", self.caches]
        return out + (["--sim-levels", str(self.levels)] if self.levels else [])

    def tlbsim_options(self) -> List[str]:
        """The same model as ``physmem-tlbsim``'s --preset, --caches and --levels."""
        out = ["--preset", self.choice, "--caches", self.caches]
        return out + (["--levels", str(self.levels)] if self.levels else [])

    def unknown_preset(self) -> Optional[str]:
        """Why an asked preset is not one of ``physmem-tlbsim presets`` (None when it is,
        or for auto/off, or when the program is not there to ask: the programs then
        refuse an unknown name themselves, see :meth:`probe`)."""
        if self.choice in (AUTO, OFF) or tlbsim.missing():
            return None
        names = tlbsim.preset_names()
        if names is None or self.choice in names:
            return None
        return f"unknown preset {self.choice!r} (physmem-tlbsim presets: {', '.join(names)})"

    def wanted(self, experiment: str) -> bool:
        return self.on and experiment in suites.simulated()

    def probe(self, catalog, experiments) -> None:
        """Asks each simulated program in ``experiments`` once whether it takes the
        options (module contract)."""
        for exp in dict.fromkeys(experiments):
            if not self.wanted(exp) or exp in self.accepted:
                continue
            path = catalog.path(exp)
            if path is None:
                self.accepted[exp] = f"program missing: {catalog.error(exp)}"
                continue
            out = programs.run([path, *self.options(), "--list"], 30)
            self.accepted[exp] = None if out.exit_code == 0 else (
                f"{path.name} does not take {' '.join(self.options())} (exit {out.exit_code}: "
                f"{out.message()})")

    def applies(self, point, round_: int = 0, layout_seed=None) -> bool:
        return (self.wanted(point.experiment) and self.accepted.get(point.experiment, "?") is None
                and round_ == 0 and layout_seed is None)

    def argv(self, point, round_: int = 0, layout_seed=None) -> List[str]:
        """What to add to ``point``'s command line in this round (module contract)."""
        return self.options() if self.applies(point, round_, layout_seed) else []

    def add_estimates(self, points) -> None:
        """Each simulated point's estimate grows by one traced pass (module contract)."""
        for p in points:
            if self.wanted(p.experiment):
                p.est_s += SIM_EST_S

    def preset(self) -> Optional[str]:
        """The preset the programs will use: the one asked, or auto's detected one."""
        if not self.on:
            return None
        if self.choice != AUTO:
            return self.choice
        return (self.detected or {}).get("preset")

    def metadata(self) -> dict:
        exps = {e: ("simulated" if why is None else f"not simulated: {why}")
                for e, why in self.accepted.items()}
        return {"asked": self.choice, "preset": self.preset(), "caches": self.caches,
                "levels": self.levels, "refs": self.refs, "experiments": exps,
                "rounds": ROUNDS_NOTE if self.on else None, "detected": self.detected}
