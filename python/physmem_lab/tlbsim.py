"""The translation simulator's own program, ``physmem-tlbsim``: its checks for a bench run.

Contract of :func:`detect` and :func:`checks`: each subcommand (``detect``, ``presets``,
``validate``, ``bench [--preset P]``, ``bench --preset all``) prints one JSON object on stdout (indented over
several lines, or on one); ``validate`` exits 1
when a case fails (its JSON still printed), 2 is a usage error. Nothing here raises or
judges: :func:`checks` returns ``{"program", "cpu", "detect", "presets", "validate",
"bench", "bench_all", "machine_load": {step: load}, "errors": {step: why}}`` (a step that failed is
absent and says why in ``errors``; a missing program is ``errors["all"]``), which
``physmem bench`` keeps as the result file's ``tlbsim`` and the ``translation`` suite
judges (:mod:`physmem_lab.suite_translation`).
"""
import json
from pathlib import Path
from typing import Callable, Optional, Tuple

from . import load, programs
from .paths import tlbsim_program

TIMEOUT_S = 300.0


def _run(path: Path, argv, ok_codes=(0,)) -> Tuple[Optional[dict], Optional[str], Optional[dict]]:
    """(JSON, None, load) or (None, why, load) of one subcommand."""
    with load.Meter() as meter:
        out = programs.run([path, *argv], TIMEOUT_S)
    if out.record is None and out.stdout.strip():
        try:
            out.record = json.loads(out.stdout)
        except json.JSONDecodeError:
            pass
    if out.timed_out:
        return None, f"{' '.join(argv)}: timed out after {TIMEOUT_S:.0f} s", meter.record()
    if out.exit_code not in ok_codes or out.record is None:
        return None, (f"{' '.join(argv)}: exit {out.exit_code}"
                      f"{'' if out.record is not None else ', no JSON on stdout'}: {out.message()}"), meter.record()
    return out.record, None, meter.record()


def run_step(path: Path, argv, ok_codes=(0,)) -> Tuple[Optional[dict], Optional[str], Optional[dict]]:
    """One subcommand of the program at ``path``: (its JSON, None, machine load) or (None,
    why, load); never raises."""
    return _run(path, argv, ok_codes)


def missing(path: Optional[Path] = None) -> Optional[str]:
    """Why the program cannot run (None when it is there)."""
    path = Path(path or tlbsim_program())
    if path.is_file():
        return None
    return (f"{path} not found: build it (cmake --build build --target physmem-tlbsim) or set "
            "PHYSMEM_TLBSIM_PROGRAM")


def detect(path: Optional[Path] = None) -> Tuple[Optional[dict], Optional[str]]:
    """(``detect``'s JSON: vendor, family, model, preset or null; None) or (None, why)."""
    path = Path(path or tlbsim_program())
    why = missing(path)
    if why:
        return None, why
    rec, why, _ = _run(path, ["detect"])
    return rec, why


def preset_names(path: Optional[Path] = None) -> Optional[list]:
    """The names ``presets`` lists (None when it cannot say)."""
    rec, _, _ = _run(Path(path or tlbsim_program()), ["presets"])
    return [p.get("name") for p in rec.get("presets") or []] if rec else None


# References per pattern of ``bench --preset all`` (the program's default is 8 M): 21 machines
# x its patterns x 3 runs took 17.7 s of the main job at 8 M on the recent Intel guest, ~7 s
# at 3 M; a rate is still the best of 3 runs of 3 M references (milliseconds each).
BENCH_ALL_REFS = 3_000_000


def checks(preset: Optional[str], cpu: str, log: Callable[[str], None],
           path: Optional[Path] = None) -> dict:
    """The simulator's checks (module contract): ``bench`` of ``preset`` (None: the
    program's default) and of every preset with this CPU's model (``bench_all``: about 7 s),
    on the CPU named ``cpu`` (recorded beside it)."""
    path = Path(path or tlbsim_program())
    out = {"program": str(path), "cpu": cpu, "errors": {}, "machine_load": {}}
    why = missing(path)
    if why:
        out["errors"]["all"] = why
        log(f"physmem: translation checks not run: {why}")
        return out
    steps = (("detect", ["detect"], (0,)), ("presets", ["presets"], (0,)),
             ("validate", ["validate"], (0, 1)),
             ("bench", ["bench"] + (["--preset", preset] if preset else []), (0,)),
             ("bench_all", ["bench", "--preset", "all", "--refs", str(BENCH_ALL_REFS)], (0,)))
    for name, argv, ok in steps:
        rec, why, meter = _run(path, argv, ok)
        if rec is not None:
            out[name] = rec
        else:
            out["errors"][name] = why
        if meter:
            out["machine_load"][name] = meter
    v, b = out.get("validate"), out.get("bench")
    log("physmem: physmem-tlbsim: "
        + (f"validate {'ok' if v.get('ok') else 'FAILED'} ({len(v.get('cases') or [])} cases)"
           if v else f"validate not run ({out['errors'].get('validate')})")
        + (f"; bench slowest {b.get('min_refs_per_second', 0) / 1e6:.1f} M refs/s" if b else "")
        + (f"; of every preset {out['bench_all'].get('min_refs_per_second', 0) / 1e6:.1f} M refs/s "
           f"({out['bench_all'].get('preset')})" if out.get("bench_all") else ""))
    return out
