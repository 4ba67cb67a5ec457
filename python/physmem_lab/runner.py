"""Running a plan: one fresh process per point, classified, collected, written.

Contract of :func:`run_bench`: every planned point ends up in exactly one of the result
file's ``records`` (exit 0, verified), ``skipped`` (exit 3 backing unavailable, exit 4
out of memory, or a variant/param the program's ``--list`` does not offer) or ``errors``
(program missing, exit 1 verification failed — its record is kept in ``records`` too —,
exit 2/5/other, a timeout, no or invalid record), judged on its first round (a later
round that cannot get its backing, e.g. another process took the huge pages meanwhile, is
a warning: the point keeps the rounds it has).

Points run in the order of :func:`physmem_lab.order.schedule` (seed ``order_seed``, or
a fresh one; recorded in ``options.order``), once per round of the point, each round's
process with ``Point.round_reps`` repetitions. A point that did not succeed in round 0 is
not run again. Every process's record goes into ``round_runs`` (with ``run``: round,
position, wall time) and ``machine_load`` (:mod:`physmem_lab.load`); ``records`` holds
one pooled record per point (:func:`physmem_lab.rounds.pool`).
With ``layout_random`` N, each point that ran is run N more times in round 0 with
``--layout-seed`` 1..N; those records go into ``layout_runs`` (never into ``records``) and
their failures into ``errors`` like any other. Before the first point, the 1 GiB pages
reserved for the run are touched once (:mod:`physmem_lab.precondition`). The result file
is rewritten atomically as the run goes, so an interrupted run leaves what it
measured (``complete: false``): before the first point, then at most every
:data:`SAVE_EVERY_S` seconds (rewriting a growing file after each of ~600 processes cost
over a minute), and always at the end, also when interrupted. Huge pages reserved for
the run are restored before returning.

With a :class:`~physmem_lab.simulate.Simulation` that is on, the programs it applies to get
its options in their first round (:mod:`physmem_lab.simulate`), the choice is recorded in
``options.simulate``, and, when a program simulates or the ``translation`` suite is in the
plan, the simulator's checks run once before the first point (``tlbsim``:
:mod:`physmem_lab.tlbsim`), and with the ``translation`` suite the what-if page-size sweep
(``tlbsim.whatif``: :mod:`physmem_lab.whatif`).
"""
import sys
import time
from datetime import datetime, timezone

from . import load, machine, order, precondition, programs, rounds, suites, tlbsim, whatif
from .hugepages import Reservation
from .simulate import AUTO, OFF, Simulation
from .progress import Progress
from .results import new_results, write_atomic
from .schema import SchemaError, validate_record
from .units import format_duration

SAVE_EVERY_S = 10.0


def _now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def _entry(point, reason: str, exit_code=None) -> dict:
    e = {"experiment": point.experiment, "variant": point.name,
         "size_bytes": point.size_bytes, "params": dict(point.params), "reason": reason,
         "exit_code": exit_code}
    if point.block_size:
        e["params"]["block_size"] = point.block_size
    return e


def classify(point, out: programs.Outcome):
    """(status, record or None, entry or None): status is ok, skipped or error."""
    code = out.exit_code
    if out.timed_out:
        return "error", None, _entry(point, f"timed out after {out.wall_s:.0f} s", None)
    if code in (3, 4):
        what = programs.EXIT_MEANING[code]
        return "skipped", None, _entry(point, f"{what}: {out.message()}", code)
    if code not in (0, 1):
        what = programs.EXIT_MEANING.get(code, f"killed by signal {-code}" if code and code < 0
                                         else "unexpected exit code")
        return "error", None, _entry(point, f"exit {code} ({what}): {out.message()}", code)
    if out.record is None:
        return "error", None, _entry(point, f"exit {code} but no JSON record on stdout", code)
    try:
        validate_record(out.record)
    except SchemaError as e:
        return "error", None, _entry(point, f"invalid record: {e}", code)
    r = out.record
    if (r["experiment"], r["variant"], r["size_bytes"]) != (
            point.experiment, point.name, point.size_bytes):
        return "error", None, _entry(
            point, f"record is for {r['experiment']} {r['variant']} {r['size_bytes']}", code)
    if code == 1 or not r["verified"]:
        return "error", r, _entry(
            point, f"VERIFICATION FAILED (exit {code}): {r.get('verification', '')}", code)
    return "ok", r, None


def _offered(point, listing: dict):
    """None when the program declares the point's variant (with the same kind and
    backing); otherwise the reason. Drops params the program does not declare (returns
    the names dropped too)."""
    prog = listing.get("program")
    declared_v = {v["name"]: v for v in listing.get("variants") or []}
    v = declared_v.get(point.name)
    if v is None:
        return f"{prog} --list does not offer variant {point.name}", []
    if (v.get("kind"), v.get("backing")) != (point.kind, point.backing):
        return (f"{prog} --list declares {point.name} as kind {v.get('kind')} on "
                f"{v.get('backing')}, not {point.kind} on {point.backing}"), []
    declared = {p["name"] for p in listing.get("params") or []}
    dropped = [k for k in point.params if declared and k not in declared]
    for k in dropped:
        del point.params[k]
    return None, dropped


class Bench:
    """One ``physmem bench`` run: plan in, result file out."""

    def __init__(self, plan, bin_dir, out_path, command, reserve=True, log=None,
                 aslr="off", layout_random=0, order_seed=None, catalog=None, simulation=None):
        self.plan, self.bin_dir, self.out_path = plan, bin_dir, out_path
        self.sim = simulation or Simulation(OFF)
        self.catalog = catalog or programs.Catalog(bin_dir)
        self.reserve, self.aslr, self.layout_random = reserve, aslr, layout_random
        self.seed = order_seed if order_seed is not None else order.new_seed()
        self._saved_at = float("-inf")
        self.log = log or (lambda m: print(m, file=sys.stderr, flush=True))
        opts = {"reps": plan.reps, "warmup": plan.warmup, "min_rep_ms": plan.min_rep_ms,
                "updates_cap": plan.cap, "official": plan.official,
                "reserve_huge_pages": reserve, "bin_dir": str(bin_dir),
                "planned_points": len(plan.points), "dropped_from_plan": plan.dropped,
                "scale": plan.scale, "suites": plan.suites,
                "aslr": aslr, "layout_random": layout_random,
                "order": {"seed": self.seed, "design": order.DESIGN,
                          "rounds": max((p.rounds for p in plan.points), default=1)}}
        self.results = new_results(plan.suite, command, _now(), {}, opts)
        self.results["round_runs"] = []
        if layout_random:
            self.results["layout_runs"] = []

    def _save(self, force=True):
        now = time.monotonic()
        if not force and now - self._saved_at < SAVE_EVERY_S:
            return
        self.results["records"] = rounds.pooled_records(self.results["round_runs"])
        write_atomic(self.out_path, self.results)
        self._saved_at = now

    def _prepare(self):
        """Finds programs and their --list; returns [(point, path)] to run."""
        cat, todo, probe = self.catalog, [], None
        for exp in dict.fromkeys(p.experiment for p in self.plan.points):
            if cat.listing(exp) is None:
                self.log(f"physmem: ERROR: experiment {exp}: {cat.error(exp)}")
            elif probe is None:
                try:
                    probe = programs.query(cat.path(exp), "--probe")
                except RuntimeError as e:
                    self.log(f"physmem: warning: {e}")
        warned = set()
        for p in self.plan.points:
            if cat.listing(p.experiment) is None:
                self.results["errors"].append(_entry(p, f"program missing: {cat.error(p.experiment)}"))
                continue
            p.extra_1g_pages = cat.extra_1g_pages(p.experiment, p.kind)
            why, dropped = _offered(p, cat.listing(p.experiment))
            for name in dropped:
                if (p.experiment, name) not in warned:
                    warned.add((p.experiment, name))
                    msg = (f"{p.experiment}: program declares no param {name!r}; "
                           "its own default is used (see the records' params)")
                    self.results["warnings"].append(msg)
                    self.log(f"physmem: warning: {msg}")
            if why:
                self.results["skipped"].append(_entry(p, why))
            else:
                todo.append((p, cat.path(p.experiment)))
        self.results["machine"] = machine.collect(probe)
        self._prepare_simulation(todo)
        return todo

    def _prepare_simulation(self, todo):
        """Which programs simulate, what auto means here (options.simulate)."""
        self.sim.probe(self.catalog, [p.experiment for p, _ in todo])
        for exp, why in self.sim.accepted.items():
            if why:
                self.log(f"physmem: {exp} not simulated: {why}")
        if self._want_checks():
            self.sim.detected, why = tlbsim.detect()
            if why:
                self.log(f"physmem: WARNING: physmem-tlbsim detect: {why}")
            elif self.sim.choice == AUTO:
                d = self.sim.detected or {}
                self.log(f"physmem: --simulate auto: {d.get('preset')} ({d.get('source')}): "
                         f"{d.get('reason')}")
        self.results["options"]["simulate"] = self.sim.metadata()

    def _want_checks(self) -> bool:
        return ("translation" in self.plan.suites
                or any(why is None for why in self.sim.accepted.values()))

    def _run_checks(self):
        if not self._want_checks():
            return
        # The throughput check simulates what the run simulates: the asked preset, or auto
        # (the program's own selection, which may be a CPUID-resized preset with no name).
        preset = self.sim.choice if self.sim.on else None
        self.results["tlbsim"] = tlbsim.checks(preset, self.results["machine"].get("cpu_model", "?"),
                                               self.log)
        if self.sim.on and "translation" in self.plan.suites:
            size, refs = whatif.SCALES.get(self.plan.scale, whatif.SCALES["default"])
            self.results["tlbsim"]["whatif"] = whatif.run(self.catalog, self.sim.model_options(),
                                                          self.sim.tlbsim_options(), self.log,
                                                          size=size, refs=refs)

    def _warn_unsimulated(self):
        """Says loudly when --simulate asked for a model and no record carries one."""
        if not self.sim.on or not any(why is None for why in self.sim.accepted.values()):
            return
        trans = [r.get("translation") for r in self.results.get("round_runs") or []
                 if self.sim.wanted(r.get("experiment", "")) and "translation" in r]
        if any(t and t.get("preset") for t in trans):
            return
        why = sorted({(t or {}).get("reason") or "no reason given" for t in trans}) or ["no traced records"]
        self.log(f"physmem: WARNING: --simulate {self.sim.choice} simulated nothing: {'; '.join(why)}")

    def _run_one(self, p, path, layout_seed=None, round_=0):
        """Runs one round's process of point ``p``; returns (status, record, wall seconds)."""
        pl = self.plan
        argv = programs.point_argv(path, p, p.round_reps(p.reps or pl.reps),
                                   p.warmup if p.warmup is not None else pl.warmup,
                                   p.min_rep_ms or pl.min_rep_ms, self.aslr, layout_seed)
        argv += self.sim.argv(p, round_, layout_seed)
        with load.Meter() as meter:
            out = programs.run(argv, timeout_s=max(60.0, 5 * p.est_s))
        status, record, entry = classify(p, out)
        if record is not None:
            record["machine_load"] = meter.record()
        if status == "error":
            if layout_seed is not None:
                entry["reason"] = f"layout seed {layout_seed}: {entry['reason']}"
            self.results["errors"].append(entry)
            self.log(f"physmem: ERROR: {p.label()}: {entry['reason']}")
        elif status == "skipped" and layout_seed is None and round_ == 0:
            self.results["skipped"].append(entry)
        elif status == "skipped" and layout_seed is None:   # the point has its round 0
            self.results["warnings"].append(f"{p.label()}: round {round_} skipped: {entry['reason']}")
            self.log(f"physmem: {p.label()}: round {round_} skipped: {entry['reason']}")
        return status, record, out.wall_s

    def _run_points(self, todo):
        paths = {id(p): path for p, path in todo}
        slots = order.schedule([p for p, _ in todo], self.seed)
        prog = Progress(len(slots), sum(p.est_s * (1 + self.layout_random / p.rounds)
                                        for p, _ in todo))
        failed = set()
        for slot in slots:
            p = slot.point
            est = p.est_s / p.rounds
            if id(p) in failed:
                prog.step(f"r{slot.round} {p.label()}", est, 0.0, "not rerun")
                continue
            status, record, wall = self._run_one(p, paths[id(p)], round_=slot.round)
            if record is not None:
                record["run"] = {"round": slot.round, "position": slot.position,
                                 "wall_s": round(wall, 3)}
                self.results["round_runs"].append(record)
            if status != "ok" and slot.round == 0:
                failed.add(id(p))
            for seed in range(1, self.layout_random + 1 if status == "ok" and slot.round == 0 else 1):
                _, rec, w = self._run_one(p, paths[id(p)], seed)
                wall, est = wall + w, est + p.est_s / p.rounds
                if rec is not None:
                    self.results["layout_runs"].append(rec)
            prog.step(f"r{slot.round} {p.label()}", est, wall, status)
            self._save(force=False)

    def run(self) -> dict:
        """Runs everything; returns the result dict (also written to out_path)."""
        todo = self._prepare()
        m = self.results["machine"]
        self.log(f"physmem: suite {self.plan.suite} ({', '.join(self.plan.suites)} at scale "
                 f"{self.plan.scale}): {len(todo)} points, estimated "
                 f"{format_duration(sum(p.est_s for p, _ in todo))}; reps {self.plan.reps} over "
                 f"{self.results['options']['order']['rounds']} round(s), order seed {self.seed}; "
                 f"updates/probes/steps per pass capped at "
                 f"{self.plan.cap if not self.plan.official else 'official (gups: 4*N)'}")
        for d in self.plan.dropped:
            self.log(f"physmem: left out: {d}")
        want = max((p.pages_1g() for p, _ in todo), default=0)
        want = suites.reservation_pages(want + 1 if want else 0, m.get("mem_available_bytes"))
        res = Reservation(want, self.reserve, bool(m.get("root")), self.log)
        self.log(f"physmem: {res.plan()}")
        try:
            with res:
                self.results["system_changes"] = res.changes
                self.results["options"]["huge_page_notes"] = res.notes
                self.results["options"]["precondition"] = precondition.touch_huge_pages(
                    self.bin_dir, want, self.log)
                self._run_checks()
                self._save()
                self._run_points(todo)
                self._warn_unsimulated()
        finally:
            self.results["system_changes"] = res.changes
            self.results["finished"] = _now()
            self.results["machine"]["programs"] = machine._programs(
                r.get("program") for r in self.results["records"])
            self._save()
        self.results["complete"] = True
        self._save()
        return self.results
