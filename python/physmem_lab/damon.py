"""The kernel's own access monitor (DAMON) as the machine record gives it.

A kdamond samples the accessed bits of the pages it watches (clearing them, so the CPU
sets them again on its next access) and applies its schemes to regions that match an
access pattern. A ``pageout`` scheme on physical addresses reclaims memory that stayed
unaccessed for a while, whatever the memory pressure: a file's page cache between a
run's points, a process's pages where there is swap. A lab run shares the machine with
it; the record says it is there.

Contract: :func:`kdamonds` never raises for a missing or unreadable sysfs file (a value
it cannot read is left out); [] when DAMON's sysfs is absent or no kdamond is on.
"""
from pathlib import Path
from typing import List, Optional

from .units import format_size

ROOT = Path("/sys/kernel/mm/damon/admin/kdamonds")


def _int(path: Path) -> Optional[int]:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _text(path: Path) -> Optional[str]:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _numbered(d: Path) -> List[Path]:
    """d's subdirectories named 0, 1, ... in order ([] when d is not a directory)."""
    if not d.is_dir():
        return []
    return sorted((p for p in d.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def _scheme(s: Path, aggr_us: Optional[int]) -> dict:
    """One scheme: its action, the access pattern's least age (aggregation intervals, and
    seconds where the interval is known), its most accesses, and its quota in bytes a
    reset interval."""
    out = {"action": _text(s / "action")}
    age = _int(s / "access_pattern" / "age" / "min")
    if age is not None:
        out["min_age"] = age
        if aggr_us:
            out["min_age_s"] = age * aggr_us / 1e6
    most = _int(s / "access_pattern" / "nr_accesses" / "max")
    if most is not None:
        out["max_accesses"] = most
    quota, reset_ms = _int(s / "quotas" / "bytes"), _int(s / "quotas" / "reset_interval_ms")
    if quota:
        out["quota_bytes"] = quota
        if reset_ms:
            out["quota_interval_ms"] = reset_ms
    return out


def kdamonds(root: Path = ROOT) -> List[dict]:
    """Every kdamond that is on: per context its operations (paddr: physical memory;
    vaddr: processes), sampling and aggregation intervals (µs) and schemes."""
    out = []
    for k in _numbered(root):
        if _text(k / "state") != "on":
            continue
        contexts = []
        for c in _numbered(k / "contexts"):
            iv = c / "monitoring_attrs" / "intervals"
            aggr = _int(iv / "aggr_us")
            contexts.append({"operations": _text(c / "operations"), "sample_us": _int(iv / "sample_us"),
                             "aggr_us": aggr,
                             "schemes": [_scheme(s, aggr) for s in _numbered(c / "schemes")]})
        out.append({"pid": _int(k / "pid"), "contexts": contexts})
    return out


def _scheme_words(s: dict) -> str:
    words = s.get("action") or "?"
    if "min_age_s" in s:
        words += f" of memory unaccessed for {s['min_age_s']:g} s or more"
    if s.get("quota_bytes") and s.get("quota_interval_ms"):
        words += f" (at most {format_size(s['quota_bytes'])} every {s['quota_interval_ms']} ms)"
    return words


def line(m: dict) -> Optional[str]:
    """The machine section's line on DAMON; None for a record from before it was kept."""
    if "damon" not in m:
        return None
    ds = m.get("damon") or []
    if not ds:
        return "DAMON: no kdamond on"
    parts = []
    for d in ds:
        for c in d.get("contexts") or []:
            schemes = "; ".join(_scheme_words(s) for s in c.get("schemes") or []) or "no scheme"
            every = f", sampling every {c['sample_us'] / 1000:g} ms" if c.get("sample_us") else ""
            parts.append(f"{c.get('operations') or '?'}{every}: {schemes}")
    return ("DAMON: a kdamond on (" + " | ".join(parts) + "): it clears accessed bits of the pages it "
            "samples and applies its schemes beside the run")
