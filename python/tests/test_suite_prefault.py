"""The prefault suite: its report section on synthetic records, and the real programs run
by ``physmem bench --suite prefault --scale tiny --no-reserve`` (skipped unless built;
fails under PHYSMEM_LAB_REQUIRE_BUILD=1 like conftest.real_bin)."""

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis, report
from physmem_lab.suite_prefault import SUITE, goals

PROGRAMS = ("prefault_fill", "prefault_latency", "prefault_shootdown")
M = 1 << 20


def _counted(timing, faults):
    timing["counters"] = {"page_faults": {"source": "perf:page-faults", "per_rep": list(faults)}}
    return timing


def _fill(variant, populate, prep_ns, fill_ns, fill_faults):
    n = 1_000_000
    phases = {"prepare": _counted(synth.phase([prep_ns] * 3), [0] * 3),
              "fill": _counted(synth.phase([fill_ns] * 3), [fill_faults] * 3)}
    for p in phases.values():
        p["ops_per_pass"] = n
    r = synth.record("prefault_fill", variant, 8 * M, [prep_ns + fill_ns] * 3,
                     params={"populate": populate}, phases=phases)
    r["ops_per_pass"] = n
    return r


def _lat(variant, container, p999):
    r = synth.record("prefault_latency", variant, M, [30.0] * 3, params={"container": container})
    r["latency_ns"] = {"p50": 10.0, "p99": 20.0, "p99_9": p999, "max": 5000.0, "samples": 100}
    r["clock"] = {"name": "rdtsc", "ticks_per_ns": 2.6}
    return r


def _shoot(variant, ns, churn, releases, tlb, lock="off"):
    r = synth.record("prefault_shootdown", variant, 4 * M, [ns] * 5,
                     params={"churn": churn, "lock": lock})
    r["churn"] = {"releases": releases, "seconds": 1.0, "tlb_shootdowns": tlb}
    r["reader_batch_ns"] = {"p50": 1000.0, "p99": 2000.0, "p99_9": 3000.0, "max": 9000.0}
    return r


def _paired(ns, munmap_ns):
    """A churn=paired record: the reader beside the pool churner (main timing) and beside the
    munmapping one (phase munmap), measured in turn."""
    r = _shoot("pool-4k", ns[0], "paired", 300, 600)
    r["ns_per_op"], r["median_ns"] = list(ns), sorted(ns)[len(ns) // 2]
    r["phases"] = {"munmap": synth.phase(munmap_ns)}
    r["interleaved"] = [[None, "munmap"]]
    r["churn"]["rate_target"] = 300.0
    r["churn_munmap"] = {"releases": 290, "seconds": 1.0, "tlb_shootdowns": 600}
    return r


def _results(tlb_per_munmap=5, paired=((10.0, 10.2, 9.9), (10.5, 10.1, 10.4))):
    recs = [_fill("array-4k", "off", 1.0, 20.0, 2048), _fill("array-4k", "on", 10.0, 2.0, 0),
            _lat("malloc-4k", "vector", 2000.0), _lat("pool-thp", "vector", 20.0),
            _shoot("array-4k", 10.0, "none", 0, 3), _shoot("array-4k", 20.0, "release", 100, 100 * tlb_per_munmap),
            _shoot("pool-4k", 11.0, "release", 10000, 2), _shoot("pool-4k", 12.0, "release", 10000, 1, "on"),
            _paired(*paired)]
    return synth.results(recs)


def test_report_section_tables_plots_and_seed_figures(tmp_path):
    doc = report.build(_results(), "synthetic", None, tmp_path)
    md = doc.markdown()
    assert f"## {SUITE.title}" in md
    # fill: ms per pass = ns/op * 1e6 ops / 1e6
    assert "| Region 4k, first touch (array-4k) | 1.0 (1.0) | 20.0 | 21.0 (21.0) | 0 / 0 | 2048 / 2048 |" in md
    assert "| Region 4k, populated (array-4k) | 10.0 (10.0) | 2.0 | 12.0 (12.0) | 0 / 0 | 0 / 0 |" in md
    assert "2048 / 2048" in md and "THEIRS (seed 003" in md and "15.060 s" in md
    assert "first-touch fill 20.0 ms vs fill of populated memory 2.0 ms (0.10x" in md
    # latency: percentiles from the records, per allocator
    assert "| vector 1M | std::allocator (glibc) | 10 | 20 | 2000 | 5000 |" in md
    assert "| vector 1M | prefault_allocator | 10 | 20 | 20 | 5000 |" in md
    # shootdown: ratio to the reader alone and IRQs per release
    assert "2.00x [2.00-2.00]" in md and "| 5.000 |" in md
    assert "does interrupt the reader's CPU" in md
    assert (tmp_path / "plot-prefault-fill.png").stat().st_size > 1000
    assert (tmp_path / "plot-prefault-latency.png").stat().st_size > 1000


def test_caveat_says_when_the_vm_hides_shootdowns(tmp_path):
    md = report.build(_results(tlb_per_munmap=0), "synthetic", None, tmp_path).markdown()
    assert "mostly avoids the IPIs" in md and "does interrupt" not in md


def test_goals_follow_the_numbers():
    g = {x.number: x for x in goals(analysis.Records(_results()))}
    assert g["prefault-1"].verdict == "MET"               # fill 2.0 / 20.0 = 0.10x
    assert abs(g["prefault-1"].items[0].ratio.value - 0.1) < 1e-9
    assert g["prefault-2"].verdict == "MET"               # p99.9 20 / 2000
    # prefault-3: the paired record's per-repetition ratios (10/10.5, 10.2/10.1, 9.9/10.4):
    # median 10/10.5; the flat-out pair (11 / 20, one process each) only noted
    p3 = g["prefault-3"]
    assert p3.verdict == "MET" and abs(p3.items[0].ratio.value - 10.0 / 10.5) < 1e-9
    assert any("flat out, one process each: pool churner (10000 releases/s)" in n for n in p3.notes)
    slower = {x.number: x for x in goals(analysis.Records(_results(paired=((11.0, 10.9, 11.2), (10.0,) * 3))))}
    assert slower["prefault-3"].verdict == "MISSED"
    unpaired = _results()
    unpaired["records"].pop()
    assert {x.number: x for x in goals(analysis.Records(unpaired))}["prefault-3"].verdict == "NOT MEASURED"
    worse = _results()
    worse["records"][3]["latency_ns"]["p99_9"] = 4000.0
    assert {x.number: x for x in goals(analysis.Records(worse))}["prefault-2"].verdict == "MISSED"
    assert goals(analysis.Records(synth.results([])))[0].verdict == "NOT MEASURED"


@pytest.fixture(scope="module")
def prefault_bin():
    return lab_bin(PROGRAMS)


def test_tiny_bench_on_the_real_programs(prefault_bin, tmp_path):
    res = tiny_bench("prefault", prefault_bin, tmp_path, "--no-reserve")
    assert not res["errors"] and res["records"]
    assert {r["experiment"] for r in res["records"]} == set(PROGRAMS)
    assert all(r["verified"] for r in res["records"])
    for s in res["skipped"]:                  # only hugetlb rows may lack their pages
        assert s["variant"].endswith(("-1g", "-2m")), s
    for r in res["records"]:
        if r["experiment"] == "prefault_fill":
            assert {"prepare", "fill"} <= set(r["phases"])
        if r["experiment"] == "prefault_latency":
            lat = r["latency_ns"]
            assert 0 < lat["p50"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
        if r["experiment"] == "prefault_shootdown":
            assert (r["churn"]["releases"] > 0) == (r["params"]["churn"] != "none")
            if r["params"]["churn"] == "paired":    # both churners ran, the pool one paced
                assert r["churn_munmap"]["releases"] > 0 and r["churn"]["rate_target"] > 0
                assert set(r["phases"]) == {"munmap"} and [None, "munmap"] in r["interleaved"]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "Per-insert latency" in md and "TLB shootdowns" in md
    assert (tmp_path / "rep" / "plot-prefault-latency.png").exists()
