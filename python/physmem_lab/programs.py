"""The experiment programs: finding them, asking them --list / --probe, running one point.

Contract (lab/PROTOCOL.md): one fresh process per measurement point, one JSON record on
stdout, exit codes 0 ok, 1 verification failed (record still printed), 2 bad arguments,
3 backing unavailable, 4 out of memory, 5 other error. Nothing here interprets results.
"""
import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional

from .paths import program_path

EXIT_MEANING = {0: "ok", 1: "verification failed", 2: "bad arguments",
                3: "backing unavailable", 4: "out of memory", 5: "error"}


class ProgramMissing(RuntimeError):
    """The program of an experiment is not built."""


@dataclass
class Outcome:
    """What one run of a program produced. ``record`` is None when stdout held no JSON."""
    exit_code: Optional[int]          # None: killed after the timeout
    record: Optional[dict]
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool = False

    def message(self) -> str:
        """The program's last stderr lines, for error and skip reasons."""
        lines = [l for l in self.stderr.strip().splitlines() if l.strip()]
        return " | ".join(lines[-3:]) if lines else "(no message on stderr)"


def find(bin_dir, experiment: str) -> Path:
    """The executable of ``experiment``; raises ProgramMissing naming the path and the fix."""
    path = program_path(bin_dir, experiment)
    if not path.is_file():
        raise ProgramMissing(
            f"{path} not found: build the lab first "
            f"(cmake -S . -B build -G Ninja && cmake --build build), or pass --bin-dir")
    return path


def _last_json(stdout: str) -> Optional[dict]:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def run(argv, timeout_s: float) -> Outcome:
    """Runs ``argv`` once, capturing stdout/stderr; kills it after ``timeout_s``."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Outcome(None, None, out, err, time.monotonic() - t0, timed_out=True)
    return Outcome(p.returncode, _last_json(p.stdout), p.stdout, p.stderr,
                   time.monotonic() - t0)


def query(path: Path, flag: str, timeout_s: float = 30) -> dict:
    """``--list`` or ``--probe`` of a program as a dict; RuntimeError when it fails."""
    out = run([path, flag], timeout_s)
    if out.exit_code != 0 or out.record is None:
        raise RuntimeError(f"{path.name} {flag} failed (exit {out.exit_code}): {out.message()}")
    return out.record


class Catalog:
    """What the programs declare (``--list``, lab/PROTOCOL.md), asked once per experiment.

    Contract: :meth:`listing` never raises: it is None when the program is missing or its
    ``--list`` fails, and :meth:`error` then says why. A listing declares the program's
    axes: ``variants`` (each with its ``kind`` and ``backing``), ``axes.kind`` and
    ``axes.backing`` (each value with its ``meaning``; a kind with the 1 GiB pages it maps
    beside the data, ``extra_1g_pages``) and ``params`` (name, default, choices, help)."""

    def __init__(self, bin_dir):
        self.bin_dir = Path(bin_dir)
        self._listings: Dict[str, Optional[dict]] = {}
        self._errors: Dict[str, str] = {}
        self._paths: Dict[str, Path] = {}

    def _ask(self, experiment: str) -> None:
        if experiment in self._listings:
            return
        try:
            self._paths[experiment] = find(self.bin_dir, experiment)
            self._listings[experiment] = query(self._paths[experiment], "--list")
        except (ProgramMissing, RuntimeError) as e:
            self._listings[experiment], self._errors[experiment] = None, str(e)

    def listing(self, experiment: str) -> Optional[dict]:
        self._ask(experiment)
        return self._listings[experiment]

    def error(self, experiment: str) -> Optional[str]:
        self._ask(experiment)
        return self._errors.get(experiment)

    def path(self, experiment: str) -> Optional[Path]:
        self._ask(experiment)
        return self._paths.get(experiment) if self._listings[experiment] else None

    def kind(self, experiment: str, kind: str) -> dict:
        """The program's declaration of ``kind`` ({} when it declares none)."""
        axes = (self.listing(experiment) or {}).get("axes") or {}
        return next((k for k in axes.get("kind") or [] if k.get("name") == kind), {})

    def extra_1g_pages(self, experiment: str, kind: str) -> int:
        """1 GiB pages the program maps beside the data for ``kind`` (0 undeclared)."""
        return int(self.kind(experiment, kind).get("extra_1g_pages", 0))


def point_argv(path: Path, point, reps: int, warmup: int, min_rep_ms: float,
               aslr: str = "off", layout_seed=None) -> list:
    """The command line of one measurement point (a suites.Point) with at most ``reps``
    repetitions (fewer when the point is adaptive); ``aslr`` and ``layout_seed`` are the
    layout controls of lab/PROTOCOL.md."""
    argv = [path, "--variant", point.name, "--size", str(point.size_bytes),
            "--reps", str(reps), "--warmup", str(warmup), "--min-rep-ms", f"{min_rep_ms:g}",
            "--aslr", aslr]
    adaptive = point.adaptive(reps)
    if adaptive:
        argv += ["--min-reps", str(adaptive[0]), "--target-spread", f"{adaptive[1]:g}"]
    if layout_seed is not None:
        argv += ["--layout-seed", str(layout_seed)]
    if point.block_size:
        argv += ["--block-size", str(point.block_size)]
    for k, v in sorted(point.params.items()):
        argv += ["--param", f"{k}={v}"]
    return argv
