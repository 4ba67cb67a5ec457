"""``physmem report``: report.md, self-contained report.html and plot PNGs from a result file.

Contract: every number comes from the result file's records (ratios of medians, with the
min/max range); the seed documents' figures are printed beside ours and labelled as
theirs. The report is generic: machine, goals, sanity, then each suite's own section
(``suite_<name>.report``, in registry order), order and layout effects, every record,
each suite's plots. :func:`headline` is the short terminal version (each suite's
``headline``, then the goals).
"""
from pathlib import Path

from . import analysis, layout, rounds, sanity, stability, suites
from .document import Doc
from .machine import summary_lines
from .units import format_size

GOALS_HELP = ("Numbers: all rounds' repetitions pooled. Verdict: MET or MISSED only when "
              "every round says so on its own records; UNSTABLE when rounds disagree (their "
              "numbers below); IMPLAUSIBLE when a number rests on an impossible outcome "
              "(Sanity); NOT APPLICABLE when what the goal measures does not exist on this CPU "
              "(e.g. translation costing less than its spread).")


def _goals(doc, results, found=None):
    gs = stability.goals(results, found)
    doc.table(["#", "goal", "verdict", "numbers"],
              [[g.number, g.title, g.verdict,
                "; ".join(f"{i.what}: {i.ratio.cell()} ({i.ratio.judged(i.met, i.target)})"
                          for i in g.items) or "; ".join(g.not_applicable or g.missing) or
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
        lines += g.not_applicable
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


def _has_records(sd, recs) -> bool:
    """Whether the suite has anything to show: records of its rows, or what its
    ``present`` finds in the result file."""
    return bool({r["experiment"] for r in recs.all} & set(sd.experiments)) or bool(
        sd.present and sd.present(recs.results))


def _suite_sections(doc, recs, results, out_dir):
    """Each suite with records here writes its own section (suitedef contract)."""
    for sd in suites.registry().values():
        if sd.report and _has_records(sd, recs):
            doc.h(2, sd.title)
            sd.report(doc, recs, results, Path(out_dir) if out_dir else None)


def suite_plots(recs, out_dir: Path):
    """[(title, path)] of every suite's ``plots`` with records here."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [x for sd in suites.registry().values() if sd.plots and _has_records(sd, recs)
            for x in sd.plots(recs, out_dir)]


def build(results: dict, source: str, plots=None, out_dir=None) -> Doc:
    """The whole report; suites' plots go into ``out_dir`` (None: no plots)."""
    recs = suites.records(results)
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
    warns = results.get("warnings", []) + analysis.warnings(results, suites.dimensions())
    doc.h(2, f"Warnings ({len(warns)})")
    doc.ul(warns or ["none"])
    return doc


def write_report(results: dict, out_dir: Path, source: str = "?") -> dict:
    """Writes report.md, report.html and plot-*.png into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = suite_plots(suites.records(results), out_dir)
    doc = build(results, str(source), plots, out_dir)
    md, page = out_dir / "report.md", out_dir / "report.html"
    md.write_text(doc.markdown(), encoding="utf-8")
    page.write_text(doc.html(f"physmem lab report ({results.get('suite')})"), encoding="utf-8")
    return {"md": md, "html": page, "plots": [p for _, p in plots]}


def headline(results: dict) -> str:
    """The terminal summary: each suite's headline (the lab: Table 2 analogue, 1g trees)
    and the goals."""
    recs = suites.records(results)
    doc = Doc()
    doc.h(1, f"physmem lab, suite {results.get('suite')}")
    for sd in suites.registry().values():
        if sd.headline and _has_records(sd, recs):
            sd.headline(doc, recs)
    doc.h(2, "Goals")
    _goals(doc, results)
    n_warn = len(analysis.warnings(results, suites.dimensions()))
    bad = sanity.findings(results)
    doc.p(f"Sanity: {len(bad)} physically impossible outcome(s)" + (
        ": " + "; ".join(f.text() for f in bad) if bad else "") + ".")
    doc.p(f"{len(recs.all)} records, {len(results.get('skipped', []))} skipped, "
          f"{len(results.get('errors', []))} errors, {n_warn} warnings (see the report). "
          f"Command: {results.get('command')}")
    return doc.text()
