"""The machine record: what the system a run happened on offers and how it is set.

Contract: :func:`collect` never raises for a missing /proc or /sys file; a value that
cannot be read is the string ``"unknown"`` (or ``"n/a ..."`` with the reason).
"""
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Optional

from . import damon
from .paths import REPO_ROOT
from .units import format_size

HUGEPAGE_DIRS = {"2m": "hugepages-2048kB", "1g": "hugepages-1048576kB"}
_HP_ROOT = Path("/sys/kernel/mm/hugepages")
_THP_ROOT = Path("/sys/kernel/mm/transparent_hugepage")
_REPORTING = Path("/sys/module/page_reporting/parameters")
_VIRTIO = Path("/sys/bus/virtio/devices")
_BALLOON_DEVICE, _F_REPORTING = "0x0005", 5  # virtio ids: the balloon; its feature bit


def read(path, default="unknown") -> str:
    """The stripped text of a small file, or ``default``."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def _bracketed(text: str) -> str:
    """``"always [madvise] never"`` -> ``"madvise"``."""
    if "[" in text and "]" in text:
        return text[text.index("[") + 1:text.index("]")]
    return text


def meminfo() -> dict:
    """/proc/meminfo in bytes (kB values multiplied out)."""
    info = {}
    for line in read("/proc/meminfo", "").splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            info[key] = int(parts[0]) * (1024 if len(parts) > 1 else 1)
    return info


def hugepages() -> dict:
    """Per size (``2m``, ``1g``): supported, nr, free, resv, surplus."""
    out = {}
    for size, d in HUGEPAGE_DIRS.items():
        base = _HP_ROOT / d
        if not base.is_dir():
            out[size] = {"supported": False}
            continue
        vals = {k: int(read(base / f"{k}_hugepages", "0") or 0)
                for k in ("nr", "free", "resv", "surplus")}
        out[size] = {"supported": True, **vals}
    return out


def free_page_reporting(reporting=_REPORTING, virtio=_VIRTIO) -> dict:
    """Whether the guest hands the memory it frees back to its host (virtio-balloon
    free-page reporting: free blocks of 2^order pages and more, some seconds after they
    are freed), so that a later first touch of them waits for the host to back them again
    (PROTOCOL.md, "Memory history"). ``active``: a balloon offers the feature and the
    kernel's page_reporting parameters exist; ``order``; ``reported_bytes`` where this
    kernel counts them."""
    balloon = any(read(dev / "device", "") == _BALLOON_DEVICE
                  and read(dev / "features", "")[_F_REPORTING:_F_REPORTING + 1] == "1"
                  for dev in (virtio.iterdir() if virtio.is_dir() else []))
    if not reporting.is_dir():
        return {"active": False, "balloon_reporting": balloon}
    order = read(reporting / "page_reporting_order", "")
    out = {"active": balloon, "balloon_reporting": balloon, "order": int(order) if order.isdigit() else None}
    kib = read(reporting / "reported_kib", "")
    if kib.isdigit():
        out["reported_bytes"] = int(kib) * 1024
    return out


def first_touch_line(m: dict) -> Optional[str]:
    """The machine section's line on free-page reporting and what a first touch cost; None
    for a record from before they were kept."""
    if "free_page_reporting" not in m:
        return None
    r, t = m.get("free_page_reporting") or {}, m.get("first_touch") or {}
    if r.get("active"):
        line = (f"Freed memory goes back to the host (virtio-balloon free-page reporting, blocks of "
                f"{format_size(4096 << (r.get('order') or 0))} and more)")
    else:
        line = "Free-page reporting: not active"
    if t.get("first_gb_s") and t.get("again_gb_s"):
        line += (f"; a first touch of a fresh {format_size(t.get('bytes') or 0)} {t.get('backing')} mapping "
                 f"{t['first_gb_s']:.2f} GB/s, right after one was freed {t['again_gb_s']:.2f} GB/s (--probe, "
                 f"at the run's start: the first depends on what the machine freed before)")
    elif t.get("error"):
        line += f"; first touch not measured: {t['error']}"
    return line


def cpu() -> dict:
    """CPU model, logical cores (all, and those available to the run) and whether it has
    1 GiB pages (pdpe1gb)."""
    model, flags = "unknown", ""
    for line in read("/proc/cpuinfo", "").splitlines():
        key, _, val = line.partition(":")
        if key.strip() == "model name" and model == "unknown":
            model = val.strip()
        elif key.strip() == "flags" and not flags:
            flags = val
    return {"model": model, "cores": os.cpu_count(), "cores_available": cores_available(),
            "pdpe1gb": "pdpe1gb" in flags.split(), "hypervisor": "hypervisor" in flags.split()}


def caches(root="/sys/devices/system/cpu/cpu0/cache") -> dict:
    """Data-cache sizes of cpu0 in bytes, from sysfs: ``l1d``, ``l2`` and ``llc`` (the
    last level); a level sysfs does not show is left out."""
    out = {}
    for d in sorted(Path(root).glob("index*")):
        level, kind = read(d / "level", ""), read(d / "type", "")
        size = read(d / "size", "")
        if not level.isdigit() or kind not in ("Data", "Unified") or not size[:-1].isdigit():
            continue
        n = int(size[:-1]) * {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        out["l1d" if level == "1" else "l2" if level == "2" else "llc"] = n
    if "llc" not in out and "l2" in out:
        out["llc"] = out["l2"]
    return out


def cores_available() -> int:
    """CPUs this process (and the programs it starts) may run on: its affinity mask."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def governor(is_vm: bool) -> str:
    """cpufreq governor of cpu0; ``n/a (VM)`` or ``n/a`` without cpufreq."""
    g = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "")
    return g or ("n/a (VM)" if is_vm else "n/a (no cpufreq)")


def git_commit() -> str:
    """HEAD of the repository (with ``+dirty`` when tracked files changed), or unknown."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("+dirty" if dirty else "")) if head else "unknown"


def collect(probe=None, programs=None) -> dict:
    """The machine record. ``probe``: one program's ``--probe`` output (counters, huge
    pages: what it reports is taken as is; /sys is read only without one);
    ``programs``: the ``program`` objects of records (compiler and flags)."""
    c, mem = cpu(), meminfo()
    record = {
        "cpu_model": c["model"], "cores": c["cores"], "cores_available": c["cores_available"],
        "virtual_machine": c["hypervisor"], "caches": caches(),
        "memory_bytes": mem.get("MemTotal"), "mem_available_bytes": mem.get("MemAvailable"),
        "kernel": platform.release(), "os": platform.platform(),
        "thp_enabled": _bracketed(read(_THP_ROOT / "enabled")),
        "thp_defrag": _bracketed(read(_THP_ROOT / "defrag")),
        "hugepages": hugepages_from_probe(probe) or hugepages(), "pdpe1gb": c["pdpe1gb"],
        "aslr": read("/proc/sys/kernel/randomize_va_space"),
        "governor": governor(c["hypervisor"]),
        "root": hasattr(os, "geteuid") and os.geteuid() == 0,
        "python": sys.version.split()[0], "git_commit": git_commit(),
    }
    record["free_page_reporting"] = free_page_reporting()
    record["damon"] = damon.kdamonds()
    record["first_touch"] = (probe or {}).get("first_touch")
    record["counters"] = counters_from_probe(probe)
    record["programs"] = _programs(programs or [])
    return record


def hugepages_from_probe(probe) -> dict:
    """Per size, the huge pages a program's ``--probe`` reported (``nr``, ``free``,
    ``resv``, ``available``), in :func:`hugepages`' shape; {} without a probe."""
    out = {}
    for size, h in ((probe or {}).get("hugepages") or {}).items():
        if not isinstance(h, dict) or not h.get("supported"):
            out[size] = {"supported": False}
            continue
        out[size] = {"supported": True, "nr": h.get("total"), "free": h.get("free"),
                     "resv": h.get("reserved"), "available": h.get("available"),
                     "source": "--probe"}
    return out


def counters_from_probe(probe) -> dict:
    """``{counter: "available (source)" | "unavailable: reason"}`` from a ``--probe``."""
    if not probe:
        return {"note": "unknown (no program probed)"}
    out = {}
    for name, c in (probe.get("counters") or {}).items():
        if isinstance(c, dict):
            out[name] = (f"available ({c.get('source', '?')})" if c.get("available")
                         else f"unavailable: {c.get('reason', '?')}")
    return out


def _programs(programs) -> dict:
    """Distinct compiler/flags of the programs that produced the records."""
    seen = {}
    for p in programs:
        if isinstance(p, dict) and p.get("name"):
            seen[p["name"]] = {"compiler": p.get("compiler"), "flags": p.get("flags")}
    return dict(sorted(seen.items()))


def described(m: dict) -> str:
    """``a virtual machine with 2 cores available`` from a machine record."""
    what = "a virtual machine" if m.get("virtual_machine") else "a machine"
    n = m.get("cores_available") or m.get("cores")
    return f"{what} with {n} cores available" if n else what


def unavailable_counters(m: dict, names) -> dict:
    """{counter: reason} for each of ``names`` the machine record's counters (from a
    program's ``--probe``) say could not be read."""
    c = m.get("counters") or {}
    return {n: str(c[n]).split(": ", 1)[-1] for n in names
            if str(c.get(n, "")).startswith("unavailable")}


# The last-level cache the default scale sizes from, at most: a virtual machine may report
# its socket's whole L3 (hundreds of MiB, shared with other guests' cores), and sizes of 2-4x that put every past-the-LLC point over its
# suite's time budget (left out: the goals judged there NOT MEASURED). 32 MiB: what a
# machine record without an LLC counts, and about a server core complex's own L3. --full
# sizes from the whole cache; the report's machine section says when the cap applied
# (sizing_note).
LLC_CAP = 32 << 20


def sizing_note(machine: dict) -> Optional[str]:
    """What the report says when the default scale sized from less than the reported LLC."""
    llc = (machine.get("caches") or {}).get("llc")
    if not llc or llc <= LLC_CAP:
        return None
    return (f"the last-level cache reports {llc / (1 << 20):.0f} MiB; the default scale's past-the-cache sizes count "
            f"{LLC_CAP >> 20} MiB of it (a guest's LLC is its socket's, shared), so they may partly fit in it; "
            f"--full sizes from the whole")


def _caches_line(m: dict) -> str:
    caches = m.get("caches") or {}
    line = "Caches: " + (", ".join(f"{k} {format_size(v)}" for k, v in caches.items()) or "unknown")
    note = sizing_note(m)
    return line + (f" ({note})" if note else "")


def summary_lines(m: dict) -> list:
    """The machine record as short ``key: value`` lines for reports and the terminal."""
    hp = m.get("hugepages", {})
    def hps(size):
        h = hp.get(size, {})
        return (f"nr {h.get('nr')} free {h.get('free')} resv {h.get('resv')}"
                if h.get("supported") else "not supported")
    gib = (m.get("memory_bytes") or 0) / (1 << 30)
    progs = m.get("programs") or {}
    compilers = sorted({f"{p.get('compiler')} {p.get('flags')}" for p in progs.values()})
    counters = m.get("counters") or {}
    lines = [
        f"CPU: {m.get('cpu_model')} ({m.get('cores')} cores"
        f"{', %s available to the run' % m['cores_available'] if m.get('cores_available') else ''}"
        f"{', virtual machine' if m.get('virtual_machine') else ''})",
        f"Memory: {gib:.1f} GiB; kernel {m.get('kernel')}",
        _caches_line(m),
        f"THP: enabled={m.get('thp_enabled')} defrag={m.get('thp_defrag')}",
        first_touch_line(m),
        damon.line(m),
        f"Huge pages 2 MiB: {hps('2m')}; 1 GiB: {hps('1g')} (pdpe1gb: {m.get('pdpe1gb')})",
        f"ASLR: {m.get('aslr')}; governor: {m.get('governor')}; root: {m.get('root')}",
        "Counters: " + (", ".join(f"{k} {v}" for k, v in counters.items()) or "unknown"),
        "Compiler: " + ("; ".join(compilers) or "unknown (no records)"),
        f"Python {m.get('python')}; git commit {m.get('git_commit')}",
    ]
    return [line for line in lines if line is not None]
