"""What-if page sizes (issue 23, item 3): walks per operation against the page size B.

Seed 001 asks whether hardware offers too few page sizes. The translation model can
simulate hardware with any power-of-two page size (physmem/tlbsim/what_if.hpp), so for
one trace it sets "paging with pages of B" beside "a tree over blocks of B" (the
physically addressed alternative) for every B from 4 KiB to 1 GiB.

Contract of :func:`run`: for each kernel of :data:`KERNELS` (GUPS, the pointer chase, the
strided scan), its program runs once (``array-4k`` at :data:`SIZE`, one repetition; at
the tiny scale smaller, :data:`SCALES`) with
``--trace`` and the run's ``--simulate`` options: the traced pass is the one ``--simulate``
records, :data:`REFS` references after a quarter more of warm-up, and the record's
``translation.per_op.refs`` gives the data references an operation makes (the array
makes no software-walk loads). Then ``physmem-tlbsim whatif`` replays the trace's data
references for each B (the warm-up uncounted). Returns ``{"kernels": {name: {"experiment",
"variant", "size_bytes", "params", "refs_per_op", "sweep"}}, "errors": {name: why},
"seconds"}``; nothing raises (a program that is missing or fails is an error entry).

Cost (the main job runs it once, with the translation checks): three program runs of one
repetition each and three sweeps of 19 page sizes x 2 models x 1.25M references; measured
here about 10 s in all (:data:`BUDGET_S` is the ETA's figure).
"""
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from . import programs, tlbsim
from .paths import tlbsim_program
from .plots import plot_series
from .units import format_size

# name -> (experiment, variant, params): the kernels of the figure.
# A pass of at least REFS * 5/4 references (the cap params), no longer.
KERNELS = {"gups": ("gups", "array-4k", {"updates": str(1 << 20)}),
           "chase": ("chase", "array-4k", {"steps": str(1 << 20)}),
           "strided scan": ("scan", "array-4k", {"access": "strided"})}
SIZE = 256 << 20        # the data: 256 MiB (64 Ki 4 KiB pages, past every preset's TLB reach)
REFS = 1 << 19          # references counted per trace (after REFS / 4 of warm-up)
# (size, refs) by the run's scale: tiny (the tests' runs) only checks that it works.
SCALES = {"tiny": (16 << 20, 1 << 14), "default": (SIZE, REFS), "full": (SIZE, REFS)}
TIMEOUT_S = 120.0
BUDGET_S = 15.0


def _trace(path: Path, variant: str, params: dict, sim_options: List[str], trace: Path, size: int,
           refs: int) -> Tuple[Optional[dict], Optional[str]]:
    """(the program's record, None) or (None, why)."""
    argv = [path, "--variant", variant, "--size", str(size), "--reps", "1", "--warmup", "0",
            "--min-rep-ms", "0", *sim_options, "--sim-refs", str(refs), "--trace", str(trace)]
    for k, v in sorted(params.items()):
        argv += ["--param", f"{k}={v}"]
    out = programs.run(argv, TIMEOUT_S)
    if out.exit_code != 0 or out.record is None:
        return None, f"{path.name} exit {out.exit_code}: {out.message()}"
    per_op = (out.record.get("translation") or {}).get("per_op") or {}
    if not per_op.get("refs"):
        return None, f"{path.name}: no translation.per_op.refs in its record"
    return out.record, None


def run(catalog, sim_options: List[str], tlbsim_options: List[str], log: Callable[[str], None],
        path: Optional[Path] = None, size: int = SIZE, refs: int = REFS) -> dict:
    """The figure's data (module contract). sim_options: the programs' --simulate options
    (without --sim-refs); tlbsim_options: ``whatif``'s --preset/--caches/--levels; size and
    refs: the data's bytes and the references counted (tests make them small)."""
    t0 = time.monotonic()
    out: Dict[str, dict] = {"kernels": {}, "errors": {}}
    tool = Path(path or tlbsim_program())
    why = tlbsim.missing(tool)
    for name, (exp, variant, params) in KERNELS.items():
        prog = catalog.path(exp)
        if why or prog is None:
            out["errors"][name] = why or f"program missing: {catalog.error(exp)}"
            continue
        with tempfile.TemporaryDirectory(prefix="physmem-whatif-") as d:
            trace = Path(d) / "trace.bin"
            rec, err = _trace(prog, variant, params, sim_options, trace, size, refs)
            if rec is None:
                out["errors"][name] = err
                continue
            sweep, err, _ = tlbsim.run_step(tool, ["whatif", *tlbsim_options, "--warmup", str(refs // 4),
                                                   str(trace)])
        if sweep is None:
            out["errors"][name] = err
            continue
        out["kernels"][name] = {"experiment": exp, "variant": variant, "size_bytes": size,
                                "params": params, "refs_per_op": rec["translation"]["per_op"]["refs"],
                                "sweep": sweep}
    out["seconds"] = time.monotonic() - t0
    log(f"physmem: what-if page sizes: {len(out['kernels'])} of {len(KERNELS)} kernels in "
        f"{out['seconds']:.1f} s" + "".join(f"; {k}: {v}" for k, v in out["errors"].items()))
    return out


# ---------------------------------------------------------------- the report

def _per_op(k: dict, side: dict, field: str) -> Optional[float]:
    v = side.get(field)
    return None if v is None else v * k["refs_per_op"]


def _cell(v: Optional[float]) -> str:
    return "-" if v is None else ("0" if v == 0 else f"{v:.3g}")


def rows(k: dict) -> List[list]:
    """Per page size: paging's walk levels, walks, walk refs and refs to memory per op,
    then the tree's inner levels, walks, loads and loads to memory per op."""
    out = []
    for s in k["sweep"].get("sizes") or []:
        p, t = s["paging"], s["tree"]
        out.append([format_size(s["bytes"]), p["walk_levels"], _cell(_per_op(k, p, "walks")),
                    _cell(_per_op(k, p, "walk_refs")), _cell(_per_op(k, p, "memory_refs")),
                    t["inner_levels"], _cell(_per_op(k, t, "walks")), _cell(_per_op(k, t, "walk_refs")),
                    _cell(_per_op(k, t, "memory_refs"))])
    return out


HEADERS = ["B", "paging: levels", "walks/op", "walk refs/op", "to memory/op",
           "tree: inner levels", "walks/op", "loads/op", "to memory/op"]


def report(doc, results: dict) -> None:
    """The what-if section: nothing when the result file has no what-if data."""
    w = (results.get("tlbsim") or {}).get("whatif")
    if not w:
        return
    doc.p("What-if page sizes (physmem-tlbsim whatif; model in physmem/tlbsim/what_if.hpp): "
          "each kernel's traced pass (array-4k, one trace) replayed for every power-of-two B "
          "from 4 KiB to 1 GiB. Paging with pages of B: the preset's 4 KiB TLB arrays holding "
          "B-byte pages and a radix walk of ceil((address bits - log2 B) / 9) levels (the "
          "hardware's walk at 4 KiB, 2 MiB and 1 GiB). A tree over blocks of B: physmem's "
          "TreeArray shape (leaves of B, inner blocks of B/8 pointers) over the traced footprint, "
          "walking when a reference enters another block, on the machine without translation. "
          "Per op = per data reference x the kernel's data references per op. To memory: "
          "references no modelled cache level held ('-': data caches not modelled). "
          f"Cost: {w.get('seconds', 0):.1f} s.")
    doc.ul([f"{k}: not run: {why}" for k, why in (w.get("errors") or {}).items()])
    for name, k in (w.get("kernels") or {}).items():
        sw = k["sweep"]
        doc.p(f"{name} ({k['experiment']} {k['variant']} at {format_size(k['size_bytes'])}"
              + "".join(f", {a}={b}" for a, b in (k.get("params") or {}).items())
              + f"; {sw.get('machine')}, {sw.get('data_refs')} data references counted, "
              f"{k['refs_per_op']:.3g} per op):")
        doc.table(HEADERS, rows(k))


def plots(results: dict, out: Path) -> List[Tuple[str, Path]]:
    """Walks per op, and walk references reaching memory per op, against B: a solid line
    per kernel for paging with pages of B, a dashed one for the tree over blocks of B."""
    w = (results.get("tlbsim") or {}).get("whatif") or {}
    made = []
    for field, what in (("walks", "walks per op"), ("memory_refs", "translation refs to memory per op")):
        series: Dict[str, list] = {}
        for name, k in (w.get("kernels") or {}).items():
            for s in k["sweep"].get("sizes") or []:
                for label, side in ((f"array {name}, pages of B", s["paging"]),
                                    (f"tree {name}, blocks of B", s["tree"])):
                    v = _per_op(k, side, field)
                    if v:   # log scale: zeros and missing values left out
                        series.setdefault(label, []).append((s["bytes"], v, v, v))
        if not series:
            continue
        name = f"translation-whatif-{field.replace('_', '-')}"
        path = out / f"plot-{name}.png"
        plot_series(series, f"what-if page sizes: {what}", "page / block size B", what, path)
        made.append((name, path))
    return made
