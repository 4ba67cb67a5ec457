"""Huge-page reservation through the real physmem-hugepages program (build/tools): status,
hold and restore (on end of stdin and on a signal), one holder per machine, and the
Reservation context manager the runner uses. Tests that change nr_hugepages need root and
the page size; each restores what it changed (the program does, even if the test dies)."""
import fcntl
import os
import signal

import pytest

from physmem_lab import hugepages as hp
from physmem_lab.machine import hugepages as counts

PROGRAM = hp.hugepages_program()
needs_program = pytest.mark.skipif(not PROGRAM.exists(), reason=f"{PROGRAM} not built")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing nr_hugepages needs root")
pytestmark = pytest.mark.usefixtures("reservation_turn")  # never beside another reserving module


def supported(size):
    if not counts().get(size, {}).get("supported"):
        pytest.skip(f"no {size} hugetlb pages on this machine")


@needs_program
def test_status_reports_both_sizes():
    s = hp.status()
    for size in ("2m", "1g"):
        assert set(s[size]) == {"supported", "total", "free", "reserved"}
        if s[size]["supported"]:
            assert s[size]["total"] == counts()[size]["nr"]


@needs_program
@needs_root
def test_hold_raises_then_restores_on_end_of_stdin():
    supported("2m")
    before = counts()["2m"]
    proc, first = hp.hold("2m", before["free"] + 2)
    try:
        assert first["changed"] and first["before"] == before["nr"], first
        assert counts()["2m"]["nr"] == first["after"] and first["free"] >= before["free"] + 1
    finally:
        back = hp.release(proc)
    assert back == {"restored": before["nr"], "now": before["nr"]}
    assert proc.returncode == 0 and counts()["2m"]["nr"] == before["nr"]


@needs_program
@needs_root
def test_hold_restores_on_a_signal():
    supported("2m")
    nr = counts()["2m"]["nr"]
    proc, first = hp.hold("2m", counts()["2m"]["free"] + 1)
    assert first["changed"], first
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert counts()["2m"]["nr"] == nr
    hp.release(proc)


@needs_program
def test_enough_free_already_changes_nothing():
    supported("2m")
    proc, first = hp.hold("2m", 0)
    assert not first["changed"] and "no change" in first["note"]
    assert hp.release(proc) == {}


@needs_program
@needs_root
def test_a_second_holder_changes_nothing_while_one_holds_the_lock():
    supported("2m")
    nr = counts()["2m"]["nr"]
    fd = os.open(hp.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        proc, first = hp.hold("2m", counts()["2m"]["free"] + 1)
        assert not first["changed"] and "another process" in first["note"], first
        hp.release(proc)
        assert counts()["2m"]["nr"] == nr
    finally:
        os.close(fd)


@needs_program
@needs_root
def test_reservation_reserves_then_restores():
    supported("1g")
    nr = counts()["1g"]["nr"]
    want = counts()["1g"]["free"] + 1
    with hp.Reservation(want, True, True, log=lambda m: None) as r:
        if r.notes:   # the kernel had no contiguous GiB to give
            pytest.skip(r.notes[0])
        assert r.saved == nr and counts()["1g"]["nr"] > nr
    assert counts()["1g"]["nr"] == nr
    assert r.changes[0].startswith("reserved") and r.changes[-1].startswith("restored")


@needs_program
@needs_root
def test_reservation_says_so_when_another_run_holds_the_lock():
    supported("1g")
    nr = counts()["1g"]["nr"]
    fd = os.open(hp.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with hp.Reservation(counts()["1g"]["free"] + 1, True, True, log=lambda m: None) as r:
            assert counts()["1g"]["nr"] == nr
        assert not r.changes and "another physmem run" in r.notes[0]
    finally:
        os.close(fd)


def test_a_missing_program_changes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("PHYSMEM_HUGEPAGES_PROGRAM", str(tmp_path / "absent"))
    monkeypatch.setattr(hp, "hugepages", lambda: {"1g": {"supported": True, "nr": 0, "free": 0}})
    with hp.Reservation(1, True, True, log=lambda m: None) as r:
        pass
    assert not r.changes and "could not reserve" in r.notes[0]


def test_not_root_changes_nothing(monkeypatch):
    monkeypatch.setattr(hp, "hugepages", lambda: {"1g": {"supported": True, "nr": 0, "free": 0}})
    with hp.Reservation(1, True, False, log=lambda m: None) as r:
        pass
    assert not r.changes and "not root" in r.notes[0]
