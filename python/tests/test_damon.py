"""DAMON in the machine record (damon.py): kdamonds read from a sysfs tree, their line."""
from physmem_lab import damon, machine


def _kdamond(root, n, state="on", schemes=(("pageout", "12", "1", "134217728", "1000"),)):
    k = root / str(n)
    (k / "contexts" / "0" / "monitoring_attrs" / "intervals").mkdir(parents=True)
    (k / "state").write_text(state + "\n")
    (k / "pid").write_text("77\n")
    c = k / "contexts" / "0"
    (c / "operations").write_text("paddr\n")
    (c / "monitoring_attrs" / "intervals" / "sample_us").write_text("500000\n")
    (c / "monitoring_attrs" / "intervals" / "aggr_us").write_text("5000000\n")
    for i, (action, age, most, quota, reset) in enumerate(schemes):
        s = c / "schemes" / str(i)
        for sub in ("access_pattern/age", "access_pattern/nr_accesses", "quotas"):
            (s / sub).mkdir(parents=True, exist_ok=True)
        (s / "action").write_text(action + "\n")
        (s / "access_pattern" / "age" / "min").write_text(age + "\n")
        (s / "access_pattern" / "nr_accesses" / "max").write_text(most + "\n")
        (s / "quotas" / "bytes").write_text(quota + "\n")
        (s / "quotas" / "reset_interval_ms").write_text(reset + "\n")
    (root / "nr_kdamonds").write_text(f"{n + 1}\n")


def test_a_kdamond_that_is_on_and_its_pageout_scheme(tmp_path):
    _kdamond(tmp_path, 0)
    _kdamond(tmp_path, 1, state="off")
    ds = damon.kdamonds(tmp_path)
    assert ds == [{"pid": 77, "contexts": [{"operations": "paddr", "sample_us": 500000, "aggr_us": 5000000,
                                            "schemes": [{"action": "pageout", "min_age": 12, "min_age_s": 60.0,
                                                         "max_accesses": 1, "quota_bytes": 128 << 20,
                                                         "quota_interval_ms": 1000}]}]}]
    line = damon.line({"damon": ds})
    assert line.startswith("DAMON: a kdamond on (paddr, sampling every 500 ms: pageout of memory unaccessed "
                           "for 60 s or more (at most 128M every 1000 ms))")


def test_no_damon_and_a_record_from_before(tmp_path):
    assert damon.kdamonds(tmp_path / "absent") == []
    _kdamond(tmp_path, 0, state="off")
    assert damon.kdamonds(tmp_path) == []
    assert damon.line({"damon": []}) == "DAMON: no kdamond on"
    assert damon.line({}) is None
    assert not any("DAMON" in x for x in machine.summary_lines({"cpu_model": "x"}))
    assert "DAMON: no kdamond on" in machine.summary_lines({"cpu_model": "x", "damon": []})


def test_an_unreadable_value_is_left_out(tmp_path):
    _kdamond(tmp_path, 0, schemes=(("stat", "x", "", "0", "0"),))
    (s,) = damon.kdamonds(tmp_path)[0]["contexts"][0]["schemes"]
    assert s == {"action": "stat"}
    assert "stat" in damon.line({"damon": damon.kdamonds(tmp_path)})
