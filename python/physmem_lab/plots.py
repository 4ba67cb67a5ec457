"""Plots (matplotlib, Agg backend): ns per op against size, one line per variant.

Generic helpers for the suites' plots (``suite_<name>.plots`` and report sections):
:func:`plot_series` draws one figure of series against size (error bars span each
point's min..max repetition), :func:`save` writes and frees any figure.
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .units import format_size  # noqa: E402


def save(fig, path) -> Path:
    """Lays ``fig`` out, writes it to ``path`` (PNG) and frees it; returns the path."""
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def plot_series(series, title, xlabel, ylabel, path, log_x=True) -> Path:
    """``series``: name -> [(x, median, min, max)]; one line per name (solid for array and
    malloc baselines), log-log; written to ``path``."""
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
    return save(fig, path)
