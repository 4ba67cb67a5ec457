"""Layout controls in the report: ASLR and environment size of every record, and the
spread that ``physmem bench --layout-random N`` finds across layouts (seed 002).

Contract: :func:`summary` and :func:`bias_rows` use only the records' ``aslr``,
``env_bytes``, ``layout``, ``median_ns`` and ``rel_spread`` fields (lab/PROTOCOL.md,
"Layout"); records written before those fields existed are counted as unknown.
A point is flagged *layout-biased* when the relative spread of its median across
layouts, (max - min) / median, exceeds the median of its runs' within-process spreads.
"""
from typing import Dict, List

from .spread import across_within, group, point_key
from .units import format_size


def summary(results: dict) -> List[str]:
    """Lines for the machine section: ASLR and environment sizes seen in the records."""
    recs = results.get("records", [])
    if not recs:
        return []
    aslr = {a: sum(1 for r in recs if r.get("aslr", "unknown") == a) for a in ("off", "on", "unknown")}
    env = sorted(r["env_bytes"] for r in recs if "env_bytes" in r)
    opts = results.get("options") or {}
    lines = [f"layout: ASLR off in {aslr['off']} of {len(recs)} records, on in {aslr['on']}"
             + (f", unknown in {aslr['unknown']}" if aslr["unknown"] else "")
             + f" (asked: --aslr {opts.get('aslr', 'off')})"]
    if env:
        lines.append(f"environment size: {env[0]}..{env[-1]} bytes over the records "
                     "(it moves the stack; LD_PRELOAD re-execs add their variables)")
    notes = sorted({r["layout"]["note"] for r in recs if (r.get("layout") or {}).get("note")})
    lines += [f"layout note: {n}" for n in notes]
    return lines


def bias_rows(results: dict) -> List[Dict]:
    """Per point with layout runs: medians across layouts and the verdict."""
    base = {}
    for r in results.get("records", []):
        base.setdefault(point_key(r), r)      # the first record of a point (a suite may repeat one)
    out = []
    for key, seeded in group(results.get("layout_runs", [])).items():
        if key not in base:
            continue
        s = across_within([base[key]] + seeded)
        out.append({"key": key, "runs": s["runs"], "base": base[key]["median_ns"],
                    "min": s["min"], "max": s["max"], "across": s["across"],
                    "within": s["within"], "biased": s["flagged"],
                    "worst_seed": (s["worst"].get("layout") or {}).get("seed")})
    return out


def report(doc, results: dict) -> None:
    """The 'Layout bias' section, when the run had --layout-random."""
    rows = bias_rows(results)
    if not rows:
        return
    n = (results.get("options") or {}).get("layout_random")
    doc.h(2, "Layout bias (--layout-random)")
    doc.p(f"Each point ran once unperturbed (the tables above) and {n} more times with layout "
          "seeds 1..N: the environment padded by 0-4 KiB and the heap shifted by 0-4 KiB "
          "(lab/PROTOCOL.md). 'across' is (max - min) / median of the runs' medians; 'within' "
          "the median of their within-process spreads. A point is layout-biased when across > "
          "within: its result depends on where things happened to land.")
    table = []
    for r in sorted(rows, key=lambda r: -r["across"]):
        exp, variant, size, params = r["key"]
        table.append([exp, variant, format_size(size), " ".join(f"{k}={v}" for k, v in params),
                      r["runs"], f"{r['base']:.4g}", f"{r['min']:.4g}..{r['max']:.4g}",
                      f"{100 * r['across']:.1f}%", f"{100 * r['within']:.1f}%",
                      f"yes (slowest: seed {r['worst_seed']})" if r["biased"] else "no"])
    doc.table(["experiment", "variant", "size", "params", "runs", "unperturbed ns/op",
               "medians min..max", "across", "within", "layout-biased"], table)
    biased = sum(r["biased"] for r in rows)
    doc.p(f"{biased} of {len(rows)} points are layout-biased.")
