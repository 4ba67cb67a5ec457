"""Shared fixtures: the fake program directory, the real build directory, and the turn at
reserving huge pages."""
import fcntl
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parents[1]
EXPERIMENTS = ("scan", "gups", "chase", "rbtree", "blackscholes", "hashtable")


def _wrapper(path, script, *args):
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / script} {' '.join(args)} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """A directory of physmem_lab_<exp> wrappers around fake_lab.py (all six), and a fake
    physmem-tlbsim (fake_tlbsim.py) in $PHYSMEM_TLBSIM_PROGRAM."""
    d = tmp_path / "bin"
    d.mkdir()
    for exp in EXPERIMENTS:
        _wrapper(d / f"physmem_lab_{exp}", "fake_lab.py", exp)
    monkeypatch.setenv("PHYSMEM_TLBSIM_PROGRAM", str(_wrapper(d / "physmem-tlbsim", "fake_tlbsim.py")))
    return d


@pytest.fixture(scope="module")
def reservation_turn(tmp_path_factory):
    """This module's turn at reserving huge pages, held until its last test ends. The
    reservation program lets one holder per machine change nr_hugepages and a second finds
    the lock taken (by design), so the modules that may reserve (test_hugepages; the end to
    end bench as root) take turns when pytest-xdist runs them side by side: an exclusive
    flock on a file every worker of the run (and a run beside it) shares."""
    path = tmp_path_factory.getbasetemp().parent / "physmem-reservation-turn.lock"
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def physmem_cmd():
    """The installed console script, else ``python -m physmem_lab``."""
    exe = Path(sys.executable).parent / "physmem"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "physmem_lab"]


def lab_bin(programs, hint="", extra_files=()):
    """$PHYSMEM_LAB_BIN or build/lab when every physmem_lab_<program> (and every path of
    ``extra_files``) exists; otherwise fails under PHYSMEM_LAB_REQUIRE_BUILD=1 and skips."""
    d = Path(os.environ.get("PHYSMEM_LAB_BIN") or REPO / "build" / "lab")
    missing = [f"physmem_lab_{p}" for p in programs if not (d / f"physmem_lab_{p}").is_file()]
    missing += [str(f) for f in extra_files if not Path(f).is_file()]
    if missing:
        msg = f"not built in {d}: {', '.join(missing)}" + (f" ({hint})" if hint else "")
        if os.environ.get("PHYSMEM_LAB_REQUIRE_BUILD") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return d


def tiny_bench(suite, bin_dir, tmp_path, *extra):
    """Runs ``physmem bench --suite SUITE --scale tiny`` (plus ``extra``) with a report in
    tmp_path/rep; asserts it exits 0 and returns the result file, checked by the schema."""
    from physmem_lab.schema import validate_results
    out = tmp_path / f"{suite}.json"
    argv = physmem_cmd() + ["bench", "--suite", suite, "--scale", "tiny", *extra, "-o", str(out),
                            "--report", str(tmp_path / "rep"), "--bin-dir", str(bin_dir)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    res = json.loads(out.read_text())
    validate_results(res)
    return res


@pytest.fixture(scope="module")
def real_bin():
    """build/lab with all six programs (lab_bin)."""
    return lab_bin(EXPERIMENTS, "cmake -S . -B build -G Ninja && cmake --build build")
