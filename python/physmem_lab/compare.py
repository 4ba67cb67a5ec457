"""``physmem compare A B``: point-by-point change from A to B with a significance test.

Contract: points match on experiment, variant, size and the record's params. For each
match: ratio B/A of medians and a two-sided Mann-Whitney U test on the per-repetition
samples (scipy.stats); a change is significant when p < alpha. A row is *unreliable*
when either side has fewer than 5 repetitions, a spread >= 10%, or the two runs got
different backings; the whole comparison is unreliable when the machines differ.
"""
import json
from dataclasses import dataclass, field
from typing import List, Optional

from scipy.stats import mannwhitneyu

from .analysis import MIN_REPS, SPREAD_WARN, obtained
from .units import format_size

MACHINE_KEYS = ("cpu_model", "cores", "memory_bytes", "kernel", "thp_enabled", "thp_defrag",
                "virtual_machine")


def point_key(r: dict):
    return (r["experiment"], r["variant"], r["size_bytes"],
            json.dumps(r.get("params", {}), sort_keys=True))


@dataclass
class Row:
    key: tuple
    a: dict
    b: dict
    ratio: float
    p: Optional[float]
    significant: bool
    unreliable: List[str] = field(default_factory=list)

    def label(self) -> str:
        exp, variant, size, params = self.key
        dims = " ".join(f"{k}={v}" for k, v in sorted(json.loads(params).items())
                        if k in ("access", "layout") or (k == "block_size" and exp == "blackscholes"))
        return f"{exp} {variant} {format_size(size)} {dims}".strip()


def _doubts(a: dict, b: dict) -> List[str]:
    out = []
    for side, r in (("A", a), ("B", b)):
        if len(r["ns_per_op"]) < MIN_REPS:
            out.append(f"{side} has {len(r['ns_per_op'])} reps < {MIN_REPS}")
        if r["rel_spread"] >= SPREAD_WARN:
            out.append(f"{side} spread {r['rel_spread']:.0%}")
    if obtained(a) != obtained(b):
        out.append(f"backings differ: {obtained(a)} vs {obtained(b)}")
    return out


def test(a_samples, b_samples, alpha: float):
    """(p, significant): two-sided Mann-Whitney U; p None with fewer than 2 samples."""
    if len(a_samples) < 2 or len(b_samples) < 2:
        return None, False
    if set(a_samples) == set(b_samples) and len(set(a_samples)) == 1:
        return 1.0, False
    p = float(mannwhitneyu(a_samples, b_samples, alternative="two-sided").pvalue)
    return p, p < alpha


def machine_differences(a: dict, b: dict) -> List[str]:
    ma, mb = a.get("machine") or {}, b.get("machine") or {}
    return [f"{k}: {ma.get(k)!r} vs {mb.get(k)!r}" for k in MACHINE_KEYS if ma.get(k) != mb.get(k)]


def compare(a: dict, b: dict, alpha: float = 0.05) -> dict:
    ia = {point_key(r): r for r in a.get("records", [])}
    ib = {point_key(r): r for r in b.get("records", [])}
    rows = []
    for key in [k for k in ia if k in ib]:
        ra, rb = ia[key], ib[key]
        p, sig = test(ra["ns_per_op"], rb["ns_per_op"], alpha)
        rows.append(Row(key, ra, rb, rb["median_ns"] / ra["median_ns"], p, sig, _doubts(ra, rb)))
    return {"alpha": alpha, "rows": rows, "machine_differences": machine_differences(a, b),
            "only_a": [k for k in ia if k not in ib], "only_b": [k for k in ib if k not in ia]}


def is_unreliable(c: dict) -> bool:
    """True when the comparison printed "RESULTS UNRELIABLE" (machines differ, or a row is)."""
    return bool(c["machine_differences"]) or any(r.unreliable for r in c["rows"])


def format_comparison(c: dict, name_a: str = "A", name_b: str = "B") -> str:
    out = [f"physmem compare: A = {name_a}, B = {name_b}; B/A of median ns/op; "
           f"Mann-Whitney U (two-sided), significant at p < {c['alpha']}"]
    if c["machine_differences"]:
        out.append("RESULTS UNRELIABLE: the machines differ: " + "; ".join(c["machine_differences"]))
    unreliable = [r for r in c["rows"] if r.unreliable]
    if unreliable:
        out.append(f"RESULTS UNRELIABLE for {len(unreliable)} of {len(c['rows'])} points "
                   "(too few samples, spread too high or backings differ; see the rows)")
    rows = [["point", "A ns", "B ns", "B/A", "p", "change", "reliability"]]
    for r in c["rows"]:
        change = ("not significant" if not r.significant else
                  "SLOWER" if r.ratio > 1 else "FASTER")
        rows.append([r.label(), f"{r.a['median_ns']:.4g}", f"{r.b['median_ns']:.4g}",
                     f"{r.ratio:.3f}x", "-" if r.p is None else f"{r.p:.3g}", change,
                     "unreliable: " + "; ".join(r.unreliable) if r.unreliable else "ok"])
    w = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out += ["  ".join(cell.ljust(w[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    sig = [r for r in c["rows"] if r.significant]
    out.append(f"{len(c['rows'])} points matched, {len(sig)} significant changes "
               f"({sum(r.ratio > 1 for r in sig)} slower, {sum(r.ratio < 1 for r in sig)} faster); "
               f"{len(c['only_a'])} only in A, {len(c['only_b'])} only in B")
    return "\n".join(out)
