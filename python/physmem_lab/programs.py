"""The experiment programs: finding them, asking them --list / --probe, running one point.

Contract (lab/PROTOCOL.md): one fresh process per measurement point, one JSON record on
stdout, exit codes 0 ok, 1 verification failed (record still printed), 2 bad arguments,
3 backing unavailable, 4 out of memory, 5 other error. Nothing here interprets results.
"""
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

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
    import time
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


def point_argv(path: Path, point, reps: int, warmup: int, min_rep_ms: float,
               aslr: str = "off", layout_seed=None) -> list:
    """The command line of one measurement point (a suites.Point); ``aslr`` and
    ``layout_seed`` are the layout controls of lab/PROTOCOL.md."""
    argv = [path, "--variant", point.variant, "--size", str(point.size_bytes),
            "--reps", str(reps), "--warmup", str(warmup), "--min-rep-ms", f"{min_rep_ms:g}",
            "--aslr", aslr]
    if layout_seed is not None:
        argv += ["--layout-seed", str(layout_seed)]
    if point.block_size:
        argv += ["--block-size", str(point.block_size)]
    for k, v in sorted(point.params.items()):
        argv += ["--param", f"{k}={v}"]
    return argv
