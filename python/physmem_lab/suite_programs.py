"""The ``programs`` suite (issue 26): small real programs under each allocator — Debian's
python3 and sqlite3 with glibc, jemalloc, tcmalloc, mimalloc or libphysmem.so preloaded:
their start-up and a workload, the peak RSS the kernel kept for each run and its time.

Program: ``physmem_lab_programs`` (lab/experiments/programs.cpp). One process runs every
allocator's runs in turn, one program per phase (every peer's run just before physmem's),
so the times pair up as the redis suite's do. Peak RSS is GNU time's %M of a child that
env execs with the preload (so it starts from env's ~1 MiB, not from the lab program's);
runs are with address-space randomisation off like every lab point, which makes it the
same in every repetition. Payload contract: lab/schema/payloads/programs.schema.json.

Contract: every number shown comes from the records; the goal's threshold is the only
constant.
"""
import statistics
from typing import Dict, List, Optional

from .analysis import Goal, Item, Value
from .suitedef import M, Point, Row, SuiteDef, Variant

PROGRAMS = "programs"
PEERS = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
PHYSMEM = "physmem"
ALLOCATORS = PEERS + (PHYSMEM,)
NAMES = ("python-start", "python-work", "sqlite-start", "sqlite-work")   # the program's default order
START_UPS = ("python-start", "sqlite-start")

# Per scale: --size, which sizes the two workloads (python: size / 320 dict keys; sqlite:
# size / 80 rows). Default: 16 MiB, python-work ~0.2 s and ~45 MiB of heap under glibc, over
# the 16 MiB at which libphysmem.so's heap turns huge (the main job's budget: ~10 s).
SIZES = {"tiny": 2 * M, "default": 16 * M, "full": 256 * M}

ROWS = tuple(Row(PROGRAMS, (Variant("malloc", "thp"),), sizes={scale: (size,)},
                 params=({"alloc": PHYSMEM, "peers": ",".join(PEERS)},), priority=0)
             for scale, size in SIZES.items())

SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 1, "cap": None, "budget_s": 20},
    "default": {"reps": 3, "warmup": 1, "min_rep_ms": 1, "cap": None, "budget_s": 20},
    "full": {"reps": 7, "warmup": 1, "min_rep_ms": 1, "cap": None, "budget_s": None},
}


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one rep: every program once per allocator (the start-ups ~20 ms,
    python-work ~0.7 s and sqlite-work ~0.9 s per 64 MiB on the development VM)."""
    return len(ALLOCATORS) * (0.04 + 1.6 * p.size_bytes / (64 * M))


def setup_s(p: Point) -> float:
    return 0.1


# ---------------------------------------------------------------- lookups

def _rec(recs) -> Optional[dict]:
    """The programs record (the last when there are several)."""
    rs = [r for r in recs.all if r["experiment"] == PROGRAMS]
    return rs[-1] if rs else None


def _per(r: dict, prog: str) -> Dict[str, dict]:
    return r["programs"]["programs"][prog]["allocators"]


def _med(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def _rss(r: dict, prog: str, a: str) -> float:
    """a's peak RSS on prog: the median over its runs."""
    return _med(_per(r, prog)[a]["peak_rss_bytes"])


def paired(r: dict, prog: str, a: str, b: str) -> List[float]:
    """a's wall time over b's on prog, run by run (run i of each ran side by side)."""
    x, y = _per(r, prog)[a]["wall_ns"], _per(r, prog)[b]["wall_ns"]
    return [u / v for u, v in zip(x, y) if v > 0]


def _ratio_cell(xs) -> str:
    return f"{_med(xs):.2f}x [{min(xs):.2f}-{max(xs):.2f}]" if xs else "-"


# ---------------------------------------------------------------- report

def _table(doc, r):
    progs = list(r["programs"]["programs"])
    rows = []
    for a in [a for a in ALLOCATORS if a in _per(r, progs[0])]:
        rows.append([a] + [f"{_rss(r, p, a) / M:.1f} MiB, {_med(_per(r, p)[a]['wall_ns']) / 1e6:.0f} ms"
                           for p in progs])
    if PHYSMEM in _per(r, progs[0]) and "glibc" in _per(r, progs[0]):
        rows.append(["physmem / glibc, peak RSS"] + [f"{_rss(r, p, PHYSMEM) / _rss(r, p, 'glibc'):.2f}x"
                                                     for p in progs])
        rows.append(["physmem / glibc, time"] + [_ratio_cell(paired(r, p, PHYSMEM, "glibc")) for p in progs])
    doc.table(["allocator"] + progs, rows)


def report(doc, recs, results, out_dir):
    """The suite's section: peak RSS and time per program and allocator."""
    r = _rec(recs)
    if not r:
        doc.p("No programs record (python3, sqlite3 or GNU time not installed, or the point failed: see "
              "Skipped and Errors).")
        return
    x = r["programs"]
    cmds = "; ".join(f"{p}: {' '.join(v['command'])}" for p, v in x["programs"].items())
    doc.p(f"{x.get('python', '?')}; sqlite {x.get('sqlite', '?').split(' ')[0]}; --size {r['size_bytes'] // M} MiB; {r['reps']} runs "
          f"per allocator and program, the allocators interleaved in one process; physmem on backing "
          f"{x.get('physmem_backing', '?')}. Peak RSS: {x['measured_by']}. Commands: {cmds}.")
    _table(doc, r)
    doc.p("Cells: median peak RSS over the runs (the same in every run: no address-space randomisation), "
          "median wall time of a run (start-up and exit included). Ratios: physmem's peak RSS over glibc's; "
          "time: median [min-max] of physmem's run over glibc's run just before it.")


# ---------------------------------------------------------------- goals

GOAL_TITLES = {1: "python and sqlite start-up: physmem's peak RSS <= 1.10x glibc's"}


def _goal_start_up(recs) -> Goal:
    g = Goal("programs-1", GOAL_TITLES[1])
    r = _rec(recs)
    if not r:
        g.missing.append("no programs record")
        return g
    have = r["programs"]["programs"]
    for p in START_UPS:
        if p not in have or PHYSMEM not in _per(r, p) or "glibc" not in _per(r, p):
            g.missing.append(f"{p}: physmem or glibc not measured")
            continue
        mine, base = _per(r, p)[PHYSMEM]["peak_rss_bytes"], _per(r, p)["glibc"]["peak_rss_bytes"]
        v = _med(mine) / _med(base)
        g.items.append(Item(f"{p}: physmem / glibc peak RSS",
                            Value(r, v, f"{v:.2f}x ({_med(mine) / M:.1f} / {_med(base) / M:.1f} MiB)",
                                  min(mine) / max(base), max(mine) / min(base)), 1.10))
    for p in [p for p in have if p not in START_UPS and PHYSMEM in _per(r, p) and "glibc" in _per(r, p)]:
        g.notes.append(f"{p}: physmem / glibc peak RSS {_rss(r, p, PHYSMEM) / _rss(r, p, 'glibc'):.2f}x, "
                       f"time {_ratio_cell(paired(r, p, PHYSMEM, 'glibc'))}")
    return g


def goals(recs) -> List[Goal]:
    return [_goal_start_up(recs)]


SUITE = SuiteDef(PROGRAMS, "Small real programs: python3 and sqlite3 under each allocator", ROWS, SCALES,
                 pass_s=pass_s, setup_s=setup_s, report=report, goals=goals)
