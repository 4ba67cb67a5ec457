"""Seed 002's tables for the ``alias`` suite: cblas_dgemv over y's offset (OpenBLAS and
the reference BLAS) and the low 12 bits each allocator gives equal buffers.

Programs (lab/experiments/dgemv.cpp, low12.cpp; lab/PROTOCOL.md):

- ``dgemv``: one record per BLAS; top level at offset 0, ``sweep`` a list of
  ``{offset, y_low12, median_ns, min_ns, max_ns, rel_spread}`` (ns per element of A).
- ``low12``: one record per allocator (``params.alloc``, ``allocator`` = the malloc that
  actually served); ``sizes`` a list of ``{size, low12, pair_shares, distinct}``.

Payload contracts: lab/schema/payloads/{dgemv,low12}.schema.json, checked with every record.

Interface for suite_alias.py: :data:`ROWS`, :func:`pass_s` (None for programs not
here), :func:`report` (doc, recs, results, out_dir) and :func:`goals` (recs).
Contract: every number shown comes from the records; the seed's figures are labelled
THEIRS.
"""
import statistics
from pathlib import Path
from typing import List, Optional

from .analysis import Goal, Item, Scalar
from .suitedef import K, M, Point, Row, Variant
from .plots import plt, save
from .units import format_size

DGEMV, LOW12 = "dgemv", "low12"
ALLOCATORS = ("glibc", "jemalloc", "tcmalloc", "mimalloc", "physmem")
BLASES = ("openblas", "reference")
LARGE = 64 * K          # physmem's large objects start above 60 KiB (physmem.h)
SPIKE = 1.2             # an offset is a spike when its time is >= 1.2x the sweep's median

ROWS = (
    Row(LOW12, (Variant("malloc", "4k"),), params=tuple({"alloc": a} for a in ALLOCATORS),
        sizes={"tiny": (1 * M,), "default": (8 * M,), "full": (8 * M,)}, priority=0),
    Row(DGEMV, (Variant("array", "4k"),), params=tuple({"blas": b} for b in BLASES),
        sizes={"tiny": (512 * K,), "default": (8 * M,), "full": (8 * M,)}),
)

# Seed 002 (theirs), Haswell with Hyper-Threading: libblas spikes for y - A deltas of
# 0x10-0x60; correlation of cycles with alias events 95% libblas, 81% libatlas, 45%
# libopenblas.
THEIRS_DGEMV = ("THEIRS (seed 002, Haswell): cblas_dgemv, M = N = 1024, A = I; the reference "
                "libblas shows a clear spike for y offsets 0x10-0x60 from A; cycles correlate "
                "with the alias counter at 95% (libblas), 81% (libatlas), 45% (libopenblas).")


def pass_s(p: Point, cap) -> Optional[float]:
    """Rough seconds of one point's timed work (ETA and budget only), None if not ours."""
    if p.experiment == LOW12:
        return 0.2
    if p.experiment == DGEMV:
        per_call = (p.size_bytes / 8) * (0.6e-9 if p.params.get("blas") == "reference" else 0.12e-9)
        return 257 * max(per_call, 0.005)       # every offset, each at least a min-rep
    return None


# ---------------------------------------------------------------- lookups

def _recs(recs, exp) -> List[dict]:
    return [r for r in recs.all if r["experiment"] == exp]


def _by_param(recs, exp, key) -> dict:
    return {r["params"].get(key): r for r in _recs(recs, exp)}


# ---------------------------------------------------------------- dgemv

def spikes(rec: dict) -> List[dict]:
    """Sweep points at >= SPIKE x the sweep's median time."""
    sw = rec.get("sweep") or []
    if not sw:
        return []
    mid = statistics.median(p["median_ns"] for p in sw)
    return [p for p in sw if p["median_ns"] >= SPIKE * mid]


def dgemv_summary(rec: dict) -> dict:
    sw = rec["sweep"]
    mid = statistics.median(p["median_ns"] for p in sw)
    best = min(sw, key=lambda p: p["median_ns"])
    worst = max(sw, key=lambda p: p["median_ns"])
    at0 = next((p for p in sw if p["offset"] == 0), None)
    return {"median": mid, "best": best, "worst": worst, "at0": at0, "spikes": spikes(rec)}


def _offsets(points) -> str:
    offs = [p["offset"] for p in points]
    if not offs:
        return "none"
    text = ", ".join(f"0x{o:x}" for o in offs[:12])
    return text + (f" ... ({len(offs)} in all)" if len(offs) > 12 else "")


def _dgemv_section(doc, recs, out_dir, plots):
    doc.h(3, "cblas_dgemv: time against y's offset from a 4 KiB boundary")
    doc.p("y = A x with A = I (M = N from the size), x and A on page boundaries, y moved in "
          "16-byte steps; ns per element of A, median of the repetitions at each offset. "
          f"A spike is an offset at >= {SPIKE}x the sweep's median.")
    rows = []
    for blas in BLASES:
        for r in [r for r in _recs(recs, DGEMV) if r["params"].get("blas") == blas]:
            s = dgemv_summary(r)
            n = r.get("matrix", {}).get("n", "?")
            at0 = f"{s['at0']['median_ns']:.3f} ({s['at0']['median_ns'] / s['median']:.2f}x)" if s["at0"] else "-"
            rows.append([blas, f"{n} x {n}", Path(r.get("blas_library", "?")).name, at0,
                         f"{s['median']:.3f}",
                         f"{s['best']['median_ns']:.3f} at 0x{s['best']['offset']:x}",
                         f"{s['worst']['median_ns']:.3f} at 0x{s['worst']['offset']:x} "
                         f"({s['worst']['median_ns'] / s['median']:.2f}x)",
                         _offsets(s["spikes"])])
    doc.table(["BLAS", "matrix", "library", "offset 0 ns/elem (vs median)", "median over offsets",
               "best", "worst (vs median)", "spikes"], rows)
    doc.p(THEIRS_DGEMV)
    if out_dir and rows:
        plots.append(("alias: cblas_dgemv time vs y offset", _dgemv_plot(recs, out_dir)))


def _dgemv_plot(recs, out_dir) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    for r in _recs(recs, DGEMV):
        sw = r["sweep"]
        mid = statistics.median(p["median_ns"] for p in sw)
        ax.plot([p["offset"] for p in sw], [p["median_ns"] / mid for p in sw], lw=0.9,
                label=f"{r['params'].get('blas')} (median {mid:.3f} ns/elem)")
    ax.axvspan(0x10, 0x60, color="#fdd", label="THEIRS: libblas spike 0x10-0x60")
    ax.set_xlabel("offset of y from a 4 KiB boundary (bytes)")
    ax.set_ylabel("time / median over offsets")
    ax.set_title("cblas_dgemv, A = I (ours)", fontsize=10)
    ax.legend(fontsize=7)
    return save(fig, Path(out_dir) / "plot-alias-dgemv.png")


# ---------------------------------------------------------------- low 12 bits

def _low12_cell(entry: dict) -> str:
    live = len(entry["low12"])
    pair = " ".join(f"{b:03x}" for b in entry["low12"][:2])
    return f"{pair} {'ALIAS' if entry['pair_shares'] else 'ok'} ({entry['distinct']}/{live})"


def _low12_section(doc, recs):
    by = _by_param(recs, LOW12, "alloc")
    names = [a for a in ALLOCATORS if a in by]
    doc.h(3, "Low 12 bits of equal buffers, per allocator")
    doc.p("Each cell: the low 12 bits (hex) of the first two of `live` equal buffers held at "
          "once, ALIAS when that pair shares them, and how many distinct low-12 values the "
          "live buffers had. Each allocator ran in its own process under LD_PRELOAD; the "
          "column says which malloc actually served.")
    sizes = sorted({e["size"] for a in names for e in by[a]["sizes"]})
    table = []
    for size in sizes:
        row = [format_size(size)]
        for a in names:
            e = next((e for e in by[a]["sizes"] if e["size"] == size), None)
            row.append(_low12_cell(e) if e else "-")
        table.append(row)
    doc.table(["size"] + [f"{a} ({by[a].get('allocator', '?')})" for a in names], table)
    doc.p("seed 002 found glibc, and most allocators, returning large buffers with identical "
          "low 12 bits; physmem staggers buffers above 60 KiB inside their size class's slack.")


def aliasing_sizes(rec: dict, min_size: int = LARGE) -> List[int]:
    """Sizes >= min_size at which two live equal buffers shared their low 12 bits."""
    return [e["size"] for e in rec.get("sizes", [])
            if e["size"] >= min_size and e["distinct"] < len(e["low12"])]


# ---------------------------------------------------------------- report and goals

def report(doc, recs, results, out_dir):
    """The dgemv and low-12 sections (plots into out_dir when given)."""
    plots = []
    if _recs(recs, LOW12):
        _low12_section(doc, recs)
    if _recs(recs, DGEMV):
        _dgemv_section(doc, recs, out_dir, plots)
    for title, path in plots:
        doc.img(title, path)


class Count(Scalar):
    """A goal item that is a count of failures (met at 0): value = the count."""
    def __init__(self, count: int, total: int, what: str):
        super().__init__({}, {})
        self.count, self.total, self.what = count, total, what

    @property
    def value(self):
        return float(self.count)

    def cell(self):
        return f"{self.count} of {self.total} {self.what}"


def goals(recs) -> List[Goal]:
    g = Goal("alias-2", f"two live same-size buffers >= {format_size(LARGE)} from physmem "
                        "never share their low 12 bits")
    by = _by_param(recs, LOW12, "alloc")
    pm = by.get("physmem")
    if pm is None:
        g.missing.append("no low12 record for physmem")
        return [g]
    large = [e for e in pm["sizes"] if e["size"] >= LARGE]
    bad = aliasing_sizes(pm)
    g.items.append(Item(f"physmem ({pm.get('allocator')}): sizes with a shared low-12 value",
                        Count(len(bad), len(large), "sizes >= 64K"), 0.0))
    for a in ALLOCATORS:
        if a != "physmem" and a in by:
            peers = aliasing_sizes(by[a])
            g.notes.append(f"{a}: {len(peers)} of {len(large)} sizes >= 64K alias"
                           + (f" ({', '.join(format_size(s) for s in peers)})" if peers else ""))
    return [g]
