"""Memory pre-conditioning: touch the run's reserved 1 GiB pages once before measuring.

Why (lab/PROTOCOL.md, "Order"): on a virtual machine, the first guest touch of memory the
host has not backed yet (never used since boot, or handed back by the guest's free-page
reporting) makes the host fault and zero it. Reserved 1 GiB pages stay out of the guest's
free lists for the whole run, so touching them once moves that cost out of whichever
``*-1g`` point would otherwise touch them first. Memory the points map and free
themselves (4 KiB, THP) cannot be held across points; their first-touch cost stays in
each point's ``setup_s``, outside the timed region.

Contract of :func:`touch_huge_pages`: when ``wanted`` > 0 and 1 GiB pages are free, runs
the scan program once on ``array-1g`` over all free 1 GiB pages (one repetition, no
warm-up), which writes every byte; returns what it did as a dict for the result file's
``options.precondition`` (``touched_1g_pages``, ``seconds``, ``note``). Never raises: a
failure is a note, and the run goes on.
"""
import time

from . import programs
from .hugepages import hugepages

G = 1 << 30


def touch_huge_pages(bin_dir, wanted: int, log) -> dict:
    free = hugepages().get("1g", {}).get("free", 0) if wanted > 0 else 0
    if free <= 0:
        return {"touched_1g_pages": 0, "seconds": 0.0,
                "note": "no 1 GiB pages to touch" if wanted > 0 else "the plan has no 1g points"}
    try:
        path = programs.find(bin_dir, "scan")
    except programs.ProgramMissing as e:
        return {"touched_1g_pages": 0, "seconds": 0.0, "note": f"not touched: {e}"}
    t0 = time.monotonic()
    out = programs.run([path, "--variant", "array-1g", "--size", str(free * G), "--reps", "1",
                        "--warmup", "0", "--min-rep-ms", "0"], timeout_s=60.0 + 10 * free)
    took = time.monotonic() - t0
    ok = out.exit_code == 0
    note = (f"touched {free} x 1 GiB pages once before the first point ({took:.1f} s)" if ok
            else f"touching {free} x 1 GiB pages failed (exit {out.exit_code}): {out.message()}")
    log(f"physmem: precondition: {note}")
    return {"touched_1g_pages": free if ok else 0, "seconds": round(took, 2), "note": note}
