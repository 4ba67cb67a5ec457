"""What the rest of the machine did while one point's process ran (issue 16).

On a small shared machine the main thing that moves a median is other work: when other
processes keep more cores busy than the run leaves free, the measured process is
time-sliced and its repetitions slow down together (lab/PROTOCOL.md, "Order and rounds").

Contract: :class:`Meter` is a context manager around one child process; afterwards
:meth:`Meter.record` gives ``{"others_cpu", "steal", "cpus", "own_cpu_s"}``: the share
of all CPUs' time (0..1) used by everything but our children (``/proc/stat`` busy time
less the children's user+system time from ``os.times``), the share stolen by the
hypervisor, the number of CPUs, and the CPU seconds the child itself used (what its
wall time would be on an idle machine, for a single-threaded program). It covers the whole process (setup too), not only the timed region.
:func:`contended` says whether the others used more than ``cpus - 1`` cores plus
:data:`SLACK_CORES` (so the measured process could not have had a core to itself).
Without ``/proc/stat`` the record is None.
"""
import os
from typing import Optional

SLACK_CORES = 0.2


def _stat() -> Optional[tuple]:
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return v[0] + v[1] + v[2] + v[5] + v[6], v[7], sum(v)   # busy, steal, total (ticks)


def _children_ticks() -> float:
    t = os.times()
    return (t.children_user + t.children_system) * os.sysconf("SC_CLK_TCK")


class Meter:
    def __enter__(self):
        self.start, self.kids = _stat(), _children_ticks()
        self.end = None
        return self

    def __exit__(self, *exc):
        self.end, self.kids = _stat(), _children_ticks() - self.kids
        return False

    def record(self) -> Optional[dict]:
        if not self.start or not self.end:
            return None
        busy, steal, total = (b - a for a, b in zip(self.start, self.end))
        total = max(total, 1)
        return {"others_cpu": round(max(0.0, busy - self.kids) / total, 3),
                "steal": round(max(0, steal) / total, 3), "cpus": os.cpu_count() or 1,
                "own_cpu_s": round(self.kids / os.sysconf("SC_CLK_TCK"), 3)}


def contended(load: Optional[dict]) -> bool:
    if not load:
        return False
    return load["others_cpu"] * load["cpus"] > load["cpus"] - 1 + SLACK_CORES
