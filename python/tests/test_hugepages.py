"""Reservation of 1 GiB pages: reserve, restore, and one reservation at a time (on fake
sysfs files: the test changes nothing on the machine)."""
import fcntl
import os

from physmem_lab import hugepages as hp


def _fake(monkeypatch, tmp_path, nr=0):
    nr_file = tmp_path / "nr_hugepages"
    nr_file.write_text(f"{nr}\n")
    state = lambda: {"1g": {"supported": True, "nr": int(nr_file.read_text()),
                            "free": int(nr_file.read_text())}}
    monkeypatch.setattr(hp, "hugepages", state)
    monkeypatch.setattr(hp, "nr_path", lambda size="1g": nr_file)
    monkeypatch.setattr(hp, "LOCK", tmp_path / "lock")
    return nr_file


def test_reserves_then_restores(monkeypatch, tmp_path):
    nr = _fake(monkeypatch, tmp_path)
    with hp.Reservation(2, True, True, log=lambda m: None) as r:
        assert nr.read_text().strip() == "2" and r.obtained_free == 2
    assert nr.read_text().strip() == "0"
    assert r.changes[0].startswith("reserved") and r.changes[-1].startswith("restored")


def test_a_second_run_changes_nothing_while_one_holds_the_reservation(monkeypatch, tmp_path):
    nr = _fake(monkeypatch, tmp_path)
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with hp.Reservation(2, True, True, log=lambda m: None) as r:
            assert nr.read_text().strip() == "0"
        assert not r.changes and "another physmem run" in r.notes[0]
    finally:
        os.close(fd)
    with hp.Reservation(1, True, True, log=lambda m: None):   # the lock was released
        assert nr.read_text().strip() == "1"
