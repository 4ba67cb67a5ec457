"""The alloc suite: its report section and goals on synthetic records, and the real
program run by ``physmem bench --suite alloc --scale tiny`` (skipped unless built; fails
under PHYSMEM_LAB_REQUIRE_BUILD=1 like the other suites' tests)."""
import json
import subprocess

import pytest

import synth
from conftest import REPO, lab_bin, tiny_bench
from physmem_lab import analysis, report
from physmem_lab.schema import validate_record
from physmem_lab.suite_alloc import ALLOCATORS, NOT_RUN, SUITE, WORKLOADS, goals
from physmem_lab.suitedef import discover

M = 1 << 20
OPS = 1000


def _rec(alloc, workload, ns, rss_mib, heap_mib=10, huge=0.0, size=M):
    variant = "malloc-thp" if alloc == "physmem" else "malloc-4k"
    r = synth.record("alloc", variant, size, synth.tight(ns), params={"alloc": alloc, "workload": workload})
    r["unit"], r["backing"], r["ops_per_pass"] = "allocation", [], OPS
    r["alloc"] = {"allocator": alloc, "active": alloc, "workload": workload, "threads": 2,
                  "thp_mode": "madvise", "physmem_backing": "thp" if alloc == "physmem" else "",
                  "ms_per_pass": [ns * OPS / 1e6] * 5, "peak_rss_bytes": rss_mib * M,
                  "heap_at_peak": {"anon_bytes": heap_mib * M, "thp_bytes": int(huge * heap_mib * M),
                                   "hugetlb_bytes": 0, "huge_share": huge}}
    return r


def _results(physmem_ns=(90.0, 90.0), physmem_rss=(10, 10), physmem_huge=0.95):
    """Two workloads; jemalloc is the best peer by time (100 ns), glibc by RSS (10 MiB)."""
    recs = []
    for i, w in enumerate(("larson", "malloc-large")):
        recs += [_rec("glibc", w, 200.0, 10), _rec("jemalloc", w, 100.0, 12),
                 _rec("tcmalloc", w, 150.0, 20), _rec("mimalloc", w, 120.0, 11),
                 _rec("physmem", w, physmem_ns[i], physmem_rss[i], heap_mib=80, huge=physmem_huge)]
    return synth.results(recs)


def test_suite_is_discovered_with_every_workload_and_allocator():
    sd = discover()["alloc"]
    assert sd is SUITE
    pts = {(r.params[0]["workload"], r.params[0]["alloc"], r.variants[0].name) for r in SUITE.rows}
    assert len(pts) == len(WORKLOADS) * len(ALLOCATORS) - sum(map(len, NOT_RUN.values())) == 69
    assert ("realloc-grow", "mimalloc", "malloc-4k") not in pts
    assert ("richards", "physmem", "malloc-thp") in pts and ("larson", "glibc", "malloc-4k") in pts
    for r in SUITE.rows:
        assert set(r.sizes) == {"tiny", "default", "full"}


def test_report_tables_ratios_geomeans_and_plot(tmp_path):
    for r in _results()["records"]:
        validate_record(r)
    md = report.build(_results(), "synthetic", None, tmp_path).markdown()
    assert f"## {SUITE.title}" in md
    # larson: ms/pass = ns * 1000 ops / 1e6; time ratio to jemalloc, RSS ratio to glibc
    assert "| larson 1M | ms/pass (median) | spread | time vs best peer (jemalloc-4k) |" in md
    assert "| physmem-thp | 0.1 | 2% | 0.90x [0.88-0.92] | 10.0 | 1.00x | 80.0 | 95% | yes |" in md
    assert "| glibc-4k | 0.2 | 2% | 2.00x [1.96-2.04] | 10.0 | 1.00x | 10.0 | 0% | yes |" in md
    # geomeans against each workload's best peer
    assert "| physmem-thp | 2 | 0.90x | 1.00x | 95%..95% (2) |" in md
    assert "| glibc-4k | 2 | 2.00x | 1.00x | - |" in md
    assert (tmp_path / "plot-alloc-time.png").stat().st_size > 1000


def test_goals_follow_the_numbers():
    g = {x.number: x for x in goals(analysis.Records(_results()))}
    # alloc-1: best peer by geomean is jemalloc (100 ns): 90/100 = 0.90 <= 0.95
    assert g["alloc-1"].verdict == "MET"
    assert abs(g["alloc-1"].items[0].ratio.value - 0.9) < 1e-9
    assert "jemalloc" in g["alloc-1"].items[0].what
    # alloc-2: best peer by RSS geomean is glibc (10 MiB): 10/10
    assert g["alloc-2"].verdict == "MET" and "glibc" in g["alloc-2"].items[0].what
    # alloc-3: both physmem heaps are 80 MiB at 95% huge
    assert g["alloc-3"].verdict == "MET" and len(g["alloc-3"].items) == 2

    # geomean of 0.9 and 1.1 = 0.995 > 0.95; RSS 12 and 12 -> 1.2 > 1.1; 80% huge
    worse = {x.number: x for x in goals(analysis.Records(_results((90.0, 110.0), (12, 12), 0.8)))}
    assert worse["alloc-1"].verdict == "MISSED"
    assert abs(worse["alloc-1"].items[0].ratio.value - (0.9 * 1.1) ** 0.5) < 1e-9
    assert worse["alloc-2"].verdict == "MISSED"
    assert worse["alloc-3"].verdict == "MISSED"
    assert any("each workload's best peer" in n for n in worse["alloc-1"].notes)

    none = {x.number: x for x in goals(analysis.Records(synth.results([])))}
    assert {v.verdict for v in none.values()} == {"NOT MEASURED"}


def _large(physmem_small_ns, physmem_big_ns, physmem_rss, realloc_ns):
    """large-live at 144 MiB and 2880 MiB, realloc-grow at 256 MiB: physmem and glibc."""
    recs = [_rec("glibc", "large-live", 20000.0, 10, size=144 * M),
            _rec("glibc", "large-live", 5000.0, 80, size=2880 * M),
            _rec("physmem", "large-live", physmem_small_ns, 180, size=144 * M),
            _rec("physmem", "large-live", physmem_big_ns, physmem_rss, size=2880 * M),
            _rec("glibc", "realloc-grow", 30000.0, 4, size=256 * M),
            _rec("physmem", "realloc-grow", realloc_ns, 6, size=256 * M)]
    return {x.number: x for x in goals(analysis.Records(synth.results(recs)))}


def test_large_block_goals_judge_the_biggest_size_flatness_rss_and_realloc():
    g = _large(1500.0, 2000.0, 90, 27000.0)
    assert g["alloc-4"].verdict == "MET" and abs(g["alloc-4"].items[0].ratio.value - 0.4) < 1e-9
    assert "2880M" in g["alloc-4"].items[0].what or "2.8G" in g["alloc-4"].items[0].what
    assert g["alloc-5"].verdict == "MET" and abs(g["alloc-5"].items[0].ratio.value - 2000 / 1500) < 1e-9
    assert any("glibc" in n for n in g["alloc-5"].notes)  # glibc's own scaling, for context
    assert g["alloc-6"].verdict == "MET" and abs(g["alloc-6"].items[0].ratio.value - 90 / 80) < 1e-9
    assert g["alloc-7"].verdict == "MET" and abs(g["alloc-7"].items[0].ratio.value - 0.9) < 1e-9
    bad = _large(1500.0, 12000.0, 3200, 128e6)  # 8x growth, 40x RSS, realloc copying
    assert {bad[n].verdict for n in ("alloc-4", "alloc-5", "alloc-6", "alloc-7")} == {"MISSED"}
    none = {x.number: x for x in goals(analysis.Records(_results()))}
    assert none["alloc-4"].verdict == "NOT MEASURED" and none["alloc-7"].missing


def test_sparse_heaps_are_judged_by_footprint_not_huge_pages():
    """large-live writes its blocks at their ends only: a physmem heap of it on 4 KiB pages is
    no miss of alloc-3 (alloc-6 judges it); a dense workload's is."""
    sparse = _rec("physmem", "large-live", 2000.0, 90, heap_mib=90, size=2880 * M)
    g = {x.number: x for x in goals(analysis.Records(synth.results([sparse])))}
    assert g["alloc-3"].verdict == "NOT MEASURED" and any("large-live" in n for n in g["alloc-3"].notes)
    dense = _rec("physmem", "small-churn", 2000.0, 90, heap_mib=90, size=2880 * M)
    g = {x.number: x for x in goals(analysis.Records(synth.results([sparse, dense])))}
    assert g["alloc-3"].verdict == "MISSED" and len(g["alloc-3"].items) == 1


def test_idle_threads_are_judged_by_the_heap_they_leave_and_not_timed():
    """alloc-8: physmem's heap after the idle pause against glibc's; the workload's time (a
    pause) stays out of alloc-1's geometric mean, its peak RSS counts in alloc-2's."""
    def idle(physmem_heap):
        recs = _results()["records"]
        recs += [_rec("glibc", "idle-threads", 3e5, 70, heap_mib=66, size=64 * M),
                 _rec("jemalloc", "idle-threads", 3e5, 60, heap_mib=55, size=64 * M),
                 _rec("physmem", "idle-threads", 9e5, 36, heap_mib=physmem_heap, size=64 * M)]
        return {x.number: x for x in goals(analysis.Records(synth.results(recs)))}
    g = idle(33)
    assert g["alloc-8"].verdict == "MET" and abs(g["alloc-8"].items[0].ratio.value - 0.5) < 1e-9
    assert any("jemalloc" in n for n in g["alloc-8"].notes)
    assert abs(g["alloc-1"].items[0].ratio.value - 0.9) < 1e-9  # 9e5 ns of pause not counted
    assert "over 2 workloads" in g["alloc-1"].items[0].ratio.cell()
    rss_cells = [g["alloc-2"].items[0].ratio.cell()] + g["alloc-2"].notes
    assert any("over 3 workloads vs glibc" in c for c in rss_cells)
    assert idle(70)["alloc-8"].verdict == "MISSED"
    none = {x.number: x for x in goals(analysis.Records(_results()))}
    assert none["alloc-8"].verdict == "NOT MEASURED"


def test_small_heaps_are_not_judged_for_huge_pages():
    res = _results()
    for r in res["records"]:
        r["alloc"]["heap_at_peak"]["anon_bytes"] = 8 * M
    g = {x.number: x for x in goals(analysis.Records(res))}
    assert g["alloc-3"].verdict == "NOT MEASURED" and g["alloc-3"].missing


@pytest.fixture(scope="module")
def alloc_bin():
    return lab_bin(["alloc"], extra_files=[REPO / "build" / "src" / "malloc" / "libphysmem.so"])


def test_program_runs_under_the_allocator_asked_for(alloc_bin):
    for alloc, variant in (("glibc", "malloc-4k"), ("physmem", "malloc-thp")):
        for w in ("larson", "richards"):
            p = subprocess.run([str(alloc_bin / "physmem_lab_alloc"), "--variant", variant, "--size", "256K",
                                "--reps", "1", "--warmup", "0", "--min-rep-ms", "0",
                                "--param", f"alloc={alloc}", "--param", f"workload={w}"],
                               capture_output=True, text=True, timeout=60)
            assert p.returncode == 0, p.stderr
            r = json.loads(p.stdout)
            validate_record(r)
            assert r["verified"] and r["alloc"]["active"] == alloc and r["alloc"]["workload"] == w


def test_program_rejects_bad_input(alloc_bin):
    prog = str(alloc_bin / "physmem_lab_alloc")
    for extra in (["--variant", "malloc-thp", "--param", "alloc=glibc"],      # peers: defaults only
                  ["--variant", "malloc-4k", "--param", "workload=nope"],
                  ["--variant", "malloc-4k", "--param", "threads=0"],
                  ["--variant", "array-4k"]):
        p = subprocess.run([prog, "--size", "1M"] + extra, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (extra, p.stderr)
        assert p.stderr.strip()


def test_tiny_bench_on_the_real_program(alloc_bin, tmp_path):
    res = tiny_bench("alloc", alloc_bin, tmp_path, "--no-reserve")
    assert not res["errors"] and not res["skipped"]
    assert len(res["records"]) == 69
    for r in res["records"]:
        assert r["verified"], r["verification"]
        assert r["alloc"]["active"] == r["params"]["alloc"]
        assert r["alloc"]["peak_rss_bytes"] > 0
        assert len(r["alloc"]["ms_per_pass"]) == r["reps"]
        assert r["unit"] == ("node" if r["params"]["workload"] == "linked-list" else
                             "operation" if r["params"]["workload"] in ("kmeans", "richards") else
                             "call" if r["params"]["workload"] == "realloc-grow" else "allocation")
        assert 0.0 <= r["alloc"]["heap_at_peak"]["huge_share"] <= 1.0
    assert {r["params"]["alloc"] for r in res["records"]} == set(ALLOCATORS)
    assert "Not run: realloc-grow under mimalloc" in (tmp_path / "rep" / "report.md").read_text()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "Geometric means over the workloads" in md
    assert all(f"alloc-{n}" in md for n in range(1, 8))
    assert (tmp_path / "rep" / "plot-alloc-time.png").exists()
