"""Reserving 1 GiB huge pages for a run and giving them back.

Contract: :class:`Reservation` is a context manager. On entry, as root and when asked,
it raises ``nr_hugepages`` of the 1 GiB pool just enough that ``want`` pages are free,
reads back what the kernel actually gave, and records a sentence in ``changes``. On exit
(normal, exception, or SIGINT/SIGTERM/SIGHUP turned into an exception) it writes the
old value back and says so. Not root, or no 1 GiB support: no change, and ``notes``
says why. Nothing is changed when enough pages are already free. One reservation at a
time per machine (an exclusive lock on :data:`LOCK`): a second run started meanwhile
changes nothing and says so, so that two runs cannot restore each other's values.
"""
import fcntl
import os
import signal
import sys
from pathlib import Path

from .machine import HUGEPAGE_DIRS, hugepages

_BASE = Path("/sys/kernel/mm/hugepages")
LOCK = Path("/run/lock/physmem-hugepages.lock")


def nr_path(size: str = "1g") -> Path:
    return _BASE / HUGEPAGE_DIRS[size] / "nr_hugepages"


def _raise_on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Reservation:
    """Makes ``want`` 1 GiB pages free for the duration of a ``with`` block."""

    def __init__(self, want: int, enabled: bool, is_root: bool, log=None):
        self.want, self.enabled, self.is_root = want, enabled, is_root
        self.log = log or (lambda msg: print(msg, file=sys.stderr))
        self.changes, self.notes = [], []
        self.saved = None      # nr_hugepages before, when we changed it
        self.obtained_free = None
        self._old_handlers = {}
        self._lock_fd = None

    def plan(self) -> str:
        """What entering will do, in one sentence (printed before the run)."""
        hp = hugepages().get("1g", {})
        if self.want <= 0:
            return "huge pages: the plan has no 1 GiB points; nothing reserved"
        if not hp.get("supported"):
            return "huge pages: this kernel/CPU has no 1 GiB pages; *-1g points will be skipped"
        if hp["free"] >= self.want:
            return f"huge pages: {hp['free']} x 1 GiB free already (need {self.want}); no change"
        if not self.enabled:
            return (f"huge pages: --no-reserve: {hp['free']} x 1 GiB free, {self.want} wanted; "
                    "*-1g points that do not fit are skipped")
        if not self.is_root:
            return (f"huge pages: not root, no change: {hp['free']} x 1 GiB free, {self.want} "
                    "wanted; *-1g points that do not fit are skipped")
        return (f"huge pages: will reserve 1 GiB pages so that {self.want} are free "
                f"(nr_hugepages {hp['nr']} -> {hp['nr'] + self.want - hp['free']}); "
                "restored at the end (--no-reserve: no change)")

    def __enter__(self):
        hp = hugepages().get("1g", {})
        if self.want <= 0 or not hp.get("supported") or hp["free"] >= self.want:
            return self
        if not (self.enabled and self.is_root):
            self.notes.append(self.plan())
            return self
        if not self._take_lock():
            self.notes.append("another physmem run holds the 1 GiB page reservation "
                              f"({LOCK}); no change, *-1g points that do not fit are skipped")
            self.log(f"physmem: {self.notes[-1]}")
            return self
        self._install_signals()
        self.saved = hp["nr"]
        target = hp["nr"] + self.want - hp["free"]
        try:
            nr_path().write_text(f"{target}\n")
        except OSError as e:
            self.notes.append(f"could not reserve 1 GiB pages: {e}")
        got = hugepages()["1g"]
        self.obtained_free = got["free"]
        self.changes.append(
            f"reserved 1 GiB pages: nr_hugepages {self.saved} -> {got['nr']} "
            f"(asked {target}; {got['free']} free, {self.want} wanted)")
        self.log(f"physmem: {self.changes[-1]}")
        return self

    def __exit__(self, *exc):
        try:
            if self.saved is not None:
                try:
                    nr_path().write_text(f"{self.saved}\n")
                    now = hugepages()["1g"]["nr"]
                    msg = f"restored 1 GiB nr_hugepages to {self.saved} (now {now})"
                except OSError as e:
                    msg = f"FAILED to restore 1 GiB nr_hugepages to {self.saved}: {e}"
                self.changes.append(msg)
                self.log(f"physmem: {msg}")
                self.saved = None
        finally:
            self._restore_signals()
            self._release_lock()
        return False

    def _take_lock(self) -> bool:
        try:
            LOCK.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return True          # no lock directory: nothing to coordinate with
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    def _release_lock(self):
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _install_signals(self):
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                self._old_handlers[sig] = signal.signal(sig, _raise_on_signal)
            except (ValueError, OSError):   # not the main thread
                pass

    def _restore_signals(self):
        for sig, h in self._old_handlers.items():
            signal.signal(sig, h)
        self._old_handlers = {}
        self._lock_fd = None
