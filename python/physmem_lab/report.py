"""``physmem report``: report.md, self-contained report.html and plot PNGs from a result file.

Contract: every number comes from the result file's records (ratios of medians, with the
min/max range); the seed documents' figures are printed beside ours and labelled as
theirs. :func:`headline` is the short terminal version (Table 2 analogue and goals).
"""
from pathlib import Path

from . import analysis, layout, rounds, sanity, seeds, stability
from .analysis import Records, ratio
from .document import Doc
from .machine import summary_lines
from .plots import size_plots
from .suites import registry
from .units import format_size

KIND_LABEL = {"tree-index": "naive (tree-index)", "tree-iter": "iterator (tree-iter)",
              "tree-seg": "per leaf (tree-seg)"}
CELL_HELP = ("Cells: ratio of medians [best-worst from the repetitions' min/max]; "
             "`!` a backing fell back from the one asked; `~` a spread >= 10%; "
             "- not measured. Below 1.00x the tree (or pool) is faster.")
GOALS_HELP = ("Numbers: all rounds' repetitions pooled. Verdict: MET or MISSED only when "
              "every round says so on its own records; UNSTABLE when rounds disagree (their "
              "numbers below); IMPLAUSIBLE when a number rests on an impossible outcome "
              "(Sanity).")


def _backings(recs, exp):
    order = ["4k", "thp", "2m", "1g"]
    return [b for b in order if any(r["experiment"] == exp and r["variant"].endswith("-" + b)
                                    for r in recs.all)]


def _cell(r):
    return r.cell() if r else "-"


def _table2(doc, recs, access, compact=False):
    sizes = recs.sizes("scan", access)
    if not sizes:
        return
    rows = []
    for kind in ("tree-index", "tree-iter", "tree-seg"):
        for b in _backings(recs, "scan"):
            dens = [f"array-{b}"] + ([] if b == "4k" else ["array-4k"])
            for den in dens:
                if compact and not (b == "1g" or (b == _backings(recs, "scan")[-1])):
                    continue
                cells = [_cell(ratio(recs, "scan", f"{kind}-{b}", den, s, access)) for s in sizes]
                if any(c != "-" for c in cells):
                    same = "same backing" if den.endswith(b) else "vs 4 KiB array"
                    rows.append([f"{KIND_LABEL[kind]} {kind}-{b} / {den} ({same})"] + cells)
    for flavour in ("naive", "iterator"):
        theirs = seeds.table2_row(access, flavour)
        if compact and not set(theirs) & set(sizes):
            continue
        rows.append([f"THEIRS (seed paper) {flavour}, 1g tree / 4k array"] +
                    [f"{theirs[s]:.2f}x" if s in theirs else "" for s in sizes])
    doc.table([f"{access} scan"] + [format_size(s) for s in sizes], rows)
    missing = [s for s in seeds.TABLE2_SIZES if s not in sizes]
    if missing and not compact:
        doc.p("Seed paper sizes not measured here (theirs): " + "; ".join(
            f"{format_size(s)}: naive {seeds.table2_row(access, 'naive')[s]:.2f}x, "
            f"iterator {seeds.table2_row(access, 'iterator')[s]:.2f}x" for s in missing))


def _random_access(doc, recs, exp, title):
    sizes = recs.sizes(exp)
    if not sizes:
        return
    doc.h(2, title)
    rows = []
    for b in _backings(recs, exp):
        pairs = [(f"tree-index-{b}", f"array-{b}")]
        if b != "4k":
            pairs += [(f"tree-index-{b}", "array-4k"), (f"array-{b}", "array-4k")]
        for n, d in pairs:
            cells = [_cell(ratio(recs, exp, n, d, s)) for s in sizes]
            if any(c != "-" for c in cells):
                rows.append([f"{n} / {d}"] + cells)
    doc.table([exp] + [format_size(s) for s in sizes], rows)
    caps = sorted({f"{k}={v}" for r in recs.all if r["experiment"] == exp
                   for k, v in r["params"].items() if k in ("updates", "probes", "steps")})
    ops = sorted({r["ops_per_pass"] for r in recs.all if r["experiment"] == exp})
    doc.p(f"Work per pass: {', '.join(caps) or 'program default'} "
          f"(ops_per_pass in the records: {', '.join(map(str, ops))}).")
    if exp in seeds.STATED:
        doc.p(seeds.STATED[exp])


def _rbtree(doc, recs):
    sizes = recs.sizes("rbtree")
    if not sizes:
        return
    doc.h(2, "Red-black tree (Fig. 4 analogue)")
    rows = []
    for v in ("pool-4k", "pool-thp", "pool-2m", "pool-1g"):
        for phase, label in ((None, "traversal"), ("insert", "insert")):
            cells = [_cell(ratio(recs, "rbtree", v, "malloc-4k", s, phase=phase)) for s in sizes]
            if any(c != "-" for c in cells):
                rows.append([f"{v} / malloc-4k, {label}"] + cells)
    doc.table(["rbtree"] + [format_size(s) for s in sizes], rows)
    doc.p(seeds.STATED["rbtree"])


def _blackscholes(doc, recs):
    if not recs.sizes("blackscholes"):
        return
    doc.h(2, "Blackscholes (Fig. 5 analogue)")
    for layout in recs.dims("blackscholes"):
        sizes = recs.sizes("blackscholes", layout)
        rows = []
        for kind in ("tree-seg", "tree-iter", "tree-index"):
            for b in _backings(recs, "blackscholes"):
                for den in dict.fromkeys([f"array-{b}", "array-4k"]):
                    cells = [_cell(ratio(recs, "blackscholes", f"{kind}-{b}", den, s, layout))
                             for s in sizes]
                    if any(c != "-" for c in cells):
                        rows.append([f"{kind}-{b} / {den}"] + cells)
        doc.table([f"blackscholes {layout}"] + [format_size(s) for s in sizes], rows)
    sweep = [r for r in recs.all if r["experiment"] == "blackscholes" and r.get("tree")]
    rows = []
    for r in sorted(sweep, key=lambda r: (r["variant"], r["params"].get("layout"),
                                          r["size_bytes"], r["tree"]["block_size"])):
        base = recs.find("blackscholes", "array-" + r["backing_requested"], r["size_bytes"],
                         str(r["params"].get("layout")))
        rows.append([r["variant"], r["params"].get("layout"), format_size(r["size_bytes"]),
                     format_size(r["tree"]["block_size"]), r["tree"]["depth"],
                     _cell(analysis.Ratio(r, base)) if base else "-"])
    if len({row[3] for row in rows}) > 1:
        doc.h(3, "By block size")
        doc.table(["variant", "layout", "size", "block", "depth", "tree / array (same backing)"], rows)
    doc.p(seeds.STATED["blackscholes"])


def _goals(doc, results, found=None):
    gs = stability.goals(results, found)
    doc.table(["#", "goal", "verdict", "numbers"],
              [[g.number, g.title, g.verdict,
                "; ".join(f"{i.what}: {i.ratio.cell()} ({'ok' if i.met else 'over'} "
                          f"{i.target:.2f}x)" for i in g.items) or "; ".join(g.missing) or
                "no records for it in this result file"] for g in gs])
    for g in gs:
        lines = [f"why missed: {w}" for w in g.why()] if g.verdict == "MISSED" else []
        lines += [f"not judged: {w}" for w in g.implausible]
        if g.verdict == "UNSTABLE" or (g.rounds and g.verdict == "IMPLAUSIBLE"):
            lines += [f"rounds disagree: {w}" if g.verdict == "UNSTABLE" else w
                      for w in stability.round_numbers(g)]
        lines += [f"noted: {n}" for n in g.notes]
        if g.verdict == "NOT MEASURED":
            lines += [f"not measured: {m}" for m in g.missing]
        if lines:
            doc.p(f"Goal {g.number} ({g.verdict}):")
            doc.ul(lines)
    return gs


def _all_records(doc, recs):
    rows = []
    for r in recs.all:
        dims = " ".join(f"{k}={v}" for k, v in sorted(r["params"].items()) if k != "block_size")
        tree = r.get("tree") or {}
        rows.append([r["experiment"], r["variant"], format_size(r["size_bytes"]), dims,
                     f"{format_size(tree['block_size'])}/d{tree['depth']}" if tree else "",
                     f"{r['median_ns']:.4g}", f"{r['rel_spread']:.1%}", r["reps"],
                     analysis.obtained(r) + ("" if not analysis.fell_back(r) else " (fell back)"),
                     f"{analysis.timed_faults(r):.0f}", "yes" if r["verified"] else "NO"])
    doc.table(["experiment", "variant", "size", "params", "block/depth", "median ns/op",
               "spread", "reps", "backing obtained", "faults timed", "verified"], rows)


def _suite_sections(doc, recs, results, out_dir):
    """Each non-lab suite with records here writes its own section (suitedef contract)."""
    have = {r["experiment"] for r in recs.all}
    for name, sd in registry().items():
        if name != "lab" and sd.report and have & set(sd.experiments):
            doc.h(2, sd.title)
            sd.report(doc, recs, results, Path(out_dir) if out_dir else None)


def build(results: dict, source: str, plots=None, out_dir=None) -> Doc:
    """The whole report; suites' plots go into ``out_dir`` (None: no plots)."""
    recs = Records(results)
    doc = Doc()
    doc.h(1, f"physmem lab report: suite {results.get('suite')}")
    doc.p(f"Results: {source}; started {results.get('started')}, finished "
          f"{results.get('finished')}{'' if results.get('complete', True) else ' (INCOMPLETE run)'}.")
    doc.p("Produced by:")
    doc.pre(results.get("command", "?"))
    opts = results.get("options") or {}
    doc.p(f"Repetitions {opts.get('reps')} (+{opts.get('warmup')} warm-up), min rep "
          f"{opts.get('min_rep_ms')} ms; random-access work capped at {opts.get('updates_cap')} "
          f"per pass{' (gups: official 4*N)' if opts.get('official') else ' (not HPCC official 4*N unless stated)'}.")
    doc.h(2, "Machine")
    doc.ul(summary_lines(results.get("machine") or {}) + layout.summary(results))
    doc.ul([f"system change: {c}" for c in results.get("system_changes", [])] or
           ["system changes: none"])
    found = sanity.findings(results)
    doc.h(2, "Goals")
    doc.p(GOALS_HELP)
    _goals(doc, results, found)
    sanity.report(doc, results, found)
    if recs.sizes("scan"):
        doc.h(2, "Table 2 analogue: tree / array, scans")
        doc.p(CELL_HELP)
        for access in recs.dims("scan"):
            _table2(doc, recs, access)
    _random_access(doc, recs, "gups", "GUPS (Fig. 4 analogue)")
    _rbtree(doc, recs)
    _random_access(doc, recs, "chase", "Pointer chase")
    _blackscholes(doc, recs)
    _random_access(doc, recs, "hashtable", "Hash table (deepsjeng-like)")
    _suite_sections(doc, recs, results, out_dir)
    layout.report(doc, results)
    rounds.report(doc, results)
    doc.h(2, "Every record")
    _all_records(doc, recs)
    if plots:
        doc.h(2, "Plots")
        for title, path in plots:
            doc.img(title, path)
    doc.h(2, "Skipped and failed points")
    doc.ul([f"skipped: {s['experiment']} {s['variant']} {format_size(s['size_bytes'])}: {s['reason']}"
            for s in results.get("skipped", [])] +
           [f"ERROR: {s['experiment']} {s['variant']} {format_size(s['size_bytes'])}: {s['reason']}"
            for s in results.get("errors", [])] or ["none"])
    warns = results.get("warnings", []) + analysis.warnings(results)
    doc.h(2, f"Warnings ({len(warns)})")
    doc.ul(warns or ["none"])
    return doc


def write_report(results: dict, out_dir: Path, source: str = "?") -> dict:
    """Writes report.md, report.html and plot-*.png into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = size_plots(results, out_dir)
    doc = build(results, str(source), plots, out_dir)
    md, page = out_dir / "report.md", out_dir / "report.html"
    md.write_text(doc.markdown(), encoding="utf-8")
    page.write_text(doc.html(f"physmem lab report ({results.get('suite')})"), encoding="utf-8")
    return {"md": md, "html": page, "plots": [p for _, p in plots]}


def headline(results: dict) -> str:
    """The terminal summary: Table 2 analogue (1g trees) and the goals."""
    recs = Records(results)
    doc = Doc()
    doc.h(2, f"physmem lab, suite {results.get('suite')}: Table 2 analogue (tree / array)")
    doc.p(CELL_HELP)
    for access in recs.dims("scan"):
        _table2(doc, recs, access, compact=True)
    doc.h(2, "Goals")
    _goals(doc, results)
    n_warn = len(analysis.warnings(results))
    bad = sanity.findings(results)
    doc.p(f"Sanity: {len(bad)} physically impossible outcome(s)" + (
        ": " + "; ".join(f.text() for f in bad) if bad else "") + ".")
    doc.p(f"{len(recs.all)} records, {len(results.get('skipped', []))} skipped, "
          f"{len(results.get('errors', []))} errors, {n_warn} warnings (see the report). "
          f"Command: {results.get('command')}")
    return doc.text()
