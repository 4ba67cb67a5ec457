"""Reserving 1 GiB huge pages for a run and giving them back, through the C++ program
``physmem-hugepages`` (tools/hugepages_main.cpp, built on the memory core: the one writer
of ``nr_hugepages``; the harness never writes sysfs itself).

Contract: :class:`Reservation` is a context manager. On entry, as root and when asked,
it starts ``physmem-hugepages hold --size 1g --free <want>``, which raises
``nr_hugepages`` of the 1 GiB pool just enough that ``want`` pages are free and reports
on its first stdout line what the kernel actually gave; a sentence goes to ``changes``.
On exit (normal, exception, or SIGINT/SIGTERM/SIGHUP turned into an exception) closing
the program's stdin makes it write the old value back, and that is said too; should
this process die, the pipe closes and the program restores all the same. Not root, no
1 GiB support, or the program not built: no change, and ``notes`` says why. Nothing is
changed when enough pages are already free. One reservation at a time per machine (the
program's exclusive lock on :data:`LOCK`): a second run started meanwhile changes
nothing and says so, so that two runs cannot restore each other's values.
"""
import json
import signal
import subprocess
import sys
from pathlib import Path

from .machine import HUGEPAGE_DIRS, hugepages
from .paths import hugepages_program

_BASE = Path("/sys/kernel/mm/hugepages")
LOCK = Path("/run/lock/physmem-hugepages.lock")   # taken by physmem-hugepages


def nr_path(size: str = "1g") -> Path:
    """The sysfs file the program writes (shown by ``physmem doctor``)."""
    return _BASE / HUGEPAGE_DIRS[size] / "nr_hugepages"


def status() -> dict:
    """``physmem-hugepages status``: per size, supported, total, free, reserved."""
    out = subprocess.run([str(hugepages_program()), "status"], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def hold(size: str, free: int) -> tuple[subprocess.Popen, dict]:
    """Starts ``physmem-hugepages hold``; returns the process and its first line. The
    caller closes the process's stdin to restore (see :func:`release`)."""
    proc = subprocess.Popen([str(hugepages_program()), "hold", "--size", size, "--free", str(free)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)   # the terminal's Ctrl-C is ours to relay
    line = proc.stdout.readline()
    try:
        return proc, json.loads(line)
    except json.JSONDecodeError:
        release(proc)
        raise OSError(f"physmem-hugepages hold: unexpected output {line!r}") from None


def release(proc: subprocess.Popen) -> dict:
    """Closes the program's stdin and returns its last line ({"restored", "now"}, or {}
    when it had nothing to restore)."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    proc.stdout.close()
    return json.loads(rest.strip().splitlines()[-1]) if rest.strip() else {}


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
        self._proc = None

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
        self._install_signals()
        try:
            proc, first = hold("1g", self.want)
        except OSError as e:
            self.notes.append(f"could not reserve 1 GiB pages: {hugepages_program()}: {e}; no change")
            self.log(f"physmem: {self.notes[-1]}")
            return self
        if not first.get("changed"):
            self._unchanged(proc, first)
            return self
        self._proc, self.saved, self.obtained_free = proc, first["before"], first["free"]
        target = hp["nr"] + self.want - hp["free"]
        self.changes.append(
            f"reserved 1 GiB pages: nr_hugepages {self.saved} -> {first['after']} "
            f"(asked {target}; {first['free']} free, {self.want} wanted)")
        self.log(f"physmem: {self.changes[-1]}")
        return self

    def _unchanged(self, proc, first):
        release(proc)
        if "another process" in first.get("note", ""):
            self.notes.append("another physmem run holds the 1 GiB page reservation "
                              f"({LOCK}); no change, *-1g points that do not fit are skipped")
        else:
            self.notes.append(f"could not reserve 1 GiB pages: {first.get('note')}")
        self.log(f"physmem: {self.notes[-1]}")

    def __exit__(self, *exc):
        try:
            if self._proc is not None:
                try:
                    back = release(self._proc)
                    msg = f"restored 1 GiB nr_hugepages to {back['restored']} (now {back['now']})"
                    if back["now"] != self.saved:
                        msg = f"FAILED to restore 1 GiB nr_hugepages to {self.saved}: now {back['now']}"
                except (OSError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
                    msg = f"FAILED to restore 1 GiB nr_hugepages to {self.saved}: {e}"
                self.changes.append(msg)
                self.log(f"physmem: {msg}")
                self._proc = self.saved = None
        finally:
            self._restore_signals()
        return False

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
