"""Plots (matplotlib, Agg backend): ns per op against size, one line per variant.

Contract: :func:`size_plots` writes one PNG per experiment (and dimension) into ``out``
and returns [(title, path)]; error bars span each point's min..max repetition.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .analysis import Records  # noqa: E402
from .units import format_size  # noqa: E402


def save(fig, path) -> Path:
    """Lays ``fig`` out, writes it to ``path`` (PNG) and frees it; returns the path."""
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def _plot(series, title, xlabel, ylabel, path, log_x=True):
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=100)
    for name, pts in sorted(series.items()):
        pts.sort()
        xs = [p[0] for p in pts]
        med = [p[1] for p in pts]
        err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        style = "-" if name.startswith("array") or name.startswith("malloc") else "--"
        ax.errorbar(xs, med, yerr=err, marker="o", ms=3, linestyle=style, label=name, capsize=2)
    if log_x:
        ax.set_xscale("log", base=2)
        ticks = sorted({x for pts in series.values() for x, *_ in pts})
        ax.set_xticks(ticks)
        ax.set_xticklabels([format_size(t) for t in ticks], rotation=45, fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    save(fig, path)


def size_plots(results: dict, out: Path):
    recs = Records(results)
    out.mkdir(parents=True, exist_ok=True)
    made = []
    from .suites import LAB
    for exp in dict.fromkeys(r["experiment"] for r in recs.all
                             if r["experiment"] in LAB.experiments):
        for dim in recs.dims(exp):
            series = {}
            for r in recs.all:
                if r["experiment"] != exp or (dim and str(r["params"].get(
                        {"scan": "access", "blackscholes": "layout"}[exp])) != dim):
                    continue
                if exp == "blackscholes" and recs.find(exp, r["variant"], r["size_bytes"], dim) is not r:
                    continue   # block-size sweep points are plotted separately
                series.setdefault(r["variant"], []).append(
                    (r["size_bytes"], r["median_ns"], r["min_ns"], r["max_ns"]))
            if not series:
                continue
            name = f"{exp}-{dim}" if dim else exp
            unit = next(r["unit"] for r in recs.all if r["experiment"] == exp)
            path = out / f"plot-{name}.png"
            _plot(series, f"{name}: ns per {unit} (median, bars: min-max)", "size",
                  f"ns per {unit}", path)
            made.append((name, path))
    made += _block_plot(recs, out)
    return made


def _block_plot(recs, out):
    series = {}
    for r in recs.all:
        if r["experiment"] == "blackscholes" and r.get("tree"):
            key = f"{r['variant']} {r['params'].get('layout')} {format_size(r['size_bytes'])}"
            series.setdefault(key, []).append(
                (r["tree"]["block_size"], r["median_ns"], r["min_ns"], r["max_ns"]))
    series = {k: v for k, v in series.items() if len({p[0] for p in v}) > 1}
    if not series:
        return []
    path = out / "plot-blackscholes-block-size.png"
    _plot(series, "blackscholes: ns per option by block size", "block size", "ns per option", path)
    return [("blackscholes by block size", path)]
