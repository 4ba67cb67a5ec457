"""The machine record's free-page reporting and first-touch line (machine.py)."""
from physmem_lab import machine


def _sysfs(tmp_path, order="9", reported="2048", features="0110010100"):
    rep = tmp_path / "reporting"
    rep.mkdir()
    (rep / "page_reporting_order").write_text(order + "\n")
    if reported is not None:
        (rep / "reported_kib").write_text(reported + "\n")
    virtio = tmp_path / "virtio"
    for name, device, feats in (("virtio0", "0x0002", "1111111111"), ("virtio1", "0x0005", features)):
        d = virtio / name
        d.mkdir(parents=True)
        (d / "device").write_text(device + "\n")
        (d / "features").write_text(feats + "\n")
    return rep, virtio


def test_a_balloon_that_reports_with_the_kernel_parameters_is_active(tmp_path):
    rep, virtio = _sysfs(tmp_path)
    r = machine.free_page_reporting(rep, virtio)
    assert r == {"active": True, "balloon_reporting": True, "order": 9, "reported_bytes": 2048 * 1024}


def test_a_balloon_without_the_reporting_feature_is_not_active(tmp_path):
    rep, virtio = _sysfs(tmp_path, features="0110000100", reported=None)  # bit 5 clear
    r = machine.free_page_reporting(rep, virtio)
    assert r["active"] is False and r["order"] == 9 and "reported_bytes" not in r


def test_no_page_reporting_in_the_kernel_is_not_active(tmp_path):
    r = machine.free_page_reporting(tmp_path / "absent", tmp_path / "absent-virtio")
    assert r == {"active": False, "balloon_reporting": False}


def test_the_line_gives_both_rates_and_says_when_reporting_is_off():
    m = {"free_page_reporting": {"active": True, "order": 9},
         "first_touch": {"bytes": 64 << 20, "backing": "thp", "first_gb_s": 0.7, "again_gb_s": 23.8}}
    line = machine.first_touch_line(m)
    assert "free-page reporting" in line and "0.70 GB/s" in line and "23.80 GB/s" in line
    off = machine.first_touch_line({"free_page_reporting": {"active": False},
                                    "first_touch": {"error": "cannot map 64 MiB"}})
    assert off.startswith("Free-page reporting: not active") and "cannot map 64 MiB" in off
    assert machine.first_touch_line({"free_page_reporting": {}}) == "Free-page reporting: not active"


def test_a_record_from_before_has_no_line():
    assert machine.first_touch_line({}) is None
    lines = machine.summary_lines({"cpu_model": "x"})
    assert lines and not any(line is None or "reporting" in line for line in lines)
