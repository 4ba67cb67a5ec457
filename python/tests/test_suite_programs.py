"""The programs suite: its goal and report on synthetic records (MET, MISSED, NOT MEASURED),
and the real program (skipped unless built; fails under PHYSMEM_LAB_REQUIRE_BUILD=1 like
conftest.real_bin). python3, sqlite3 and GNU time are installed by scripts/setup.sh:
without them the real runs fail here."""

import json
import subprocess

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis
from physmem_lab.schema import validate_record
from physmem_lab.suite_programs import ALLOCATORS, NAMES, PEERS, SUITE, goals

M = 1 << 20


def _results(rss=None, drift=(1.0, 1.3, 0.9), allocators=ALLOCATORS):
    """One programs record: allocator -> peak RSS in MiB on every program (the start-ups
    as given, the workloads 10x), wall times with a drift common to every allocator's run i."""
    rss = rss or {"glibc": 8.0, "jemalloc": 10.0, "tcmalloc": 13.0, "mimalloc": 9.0, "physmem": 8.5}
    progs = {}
    for p in NAMES:
        scale = 1 if p.endswith("start") else 10
        progs[p] = {"command": [f"/usr/bin/{p.split('-')[0]}"], "output": "1",
                    "allocators": {a: {"wall_ns": [2e7 * scale * d for d in drift], "cpu_s": [0.02] * len(drift),
                                       "peak_rss_bytes": [rss[a] * scale * M] * len(drift), "library": f"/lib/{a}.so"}
                                   for a in allocators}}
    me = progs[NAMES[0]]["allocators"][allocators[-1]]["wall_ns"]
    phases = {p: {"reps": len(drift), "warmup": 1, "passes_per_rep": 1, "ops_per_pass": 1,
                  "ns_per_op": progs[p]["allocators"][allocators[-1]]["wall_ns"], "median_ns": 2e7,
                  "min_ns": 1.8e7, "max_ns": 2.6e7, "rel_spread": 0.4} for p in NAMES[1:]}
    r = synth.record("programs", "malloc-thp", 64 * M, me, params={"alloc": allocators[-1]}, phases=phases)
    r["unit"] = "run"
    r["programs"] = {"allocator": allocators[-1], "allocators": list(allocators), "physmem_backing": "thp",
                     "measured_by": "GNU time %M", "python": "Python 3.11.2", "sqlite": "3.40.1",
                     "programs": progs}
    return synth.results([r], suite="programs")


def test_synthetic_records_are_valid():
    validate_record(_results()["records"][0])


def test_goal_met_when_start_up_is_within_a_tenth_of_glibc():
    g = goals(analysis.Records(_results()))[0]
    assert g.number == "programs-1" and g.verdict == "MET"
    assert [i.what for i in g.items] == ["python-start: physmem / glibc peak RSS",
                                         "sqlite-start: physmem / glibc peak RSS"]
    assert any(n.startswith("python-work: physmem / glibc peak RSS 1.06x") for n in g.notes)


def test_goal_missed_when_physmem_starts_bigger():
    g = goals(analysis.Records(_results(rss={"glibc": 8.0, "jemalloc": 10.0, "tcmalloc": 13.0,
                                             "mimalloc": 9.0, "physmem": 9.0})))[0]
    assert g.verdict == "MISSED"
    assert g.items[0].ratio.cell() == "1.12x (9.0 / 8.0 MiB)" and not g.items[0].met


def test_goal_not_measured_without_glibc():
    g = goals(analysis.Records(_results(allocators=("jemalloc", "physmem"))))[0]
    assert g.verdict == "NOT MEASURED"
    assert g.missing and "python-start" in g.missing[0]


def test_report_shows_rss_time_and_ratios(tmp_path):
    from physmem_lab.document import Doc
    d = Doc()
    SUITE.report(d, analysis.Records(_results()), _results(), tmp_path)
    md = d.markdown()
    assert "| physmem | 8.5 MiB, 20 ms | 85.0 MiB, 200 ms | 8.5 MiB, 20 ms | 85.0 MiB, 200 ms |" in md
    assert "| physmem / glibc, peak RSS | 1.06x | 1.06x | 1.06x | 1.06x |" in md
    assert "| physmem / glibc, time | 1.00x [1.00-1.00] |" in md


def test_the_main_job_runs_it_within_its_budget():
    from physmem_lab import suites
    pl = suites.plan("programs")
    assert len(pl.points) == 1 and not pl.dropped
    assert pl.points[0].params["peers"] == ",".join(PEERS)
    assert pl.total_est_s <= SUITE.scales["default"]["budget_s"]


@pytest.fixture(scope="module")
def programs_bin():
    return lab_bin(("programs",))


def test_program_rejects_bad_input(programs_bin):
    prog = str(programs_bin / "physmem_lab_programs")
    for extra in (["--variant", "malloc-thp", "--param", "alloc=glibc"],
                  ["--variant", "malloc-4k", "--param", "programs=perl-start"],
                  ["--variant", "malloc-4k", "--param", "peers=glibc,nope"],
                  ["--variant", "array-4k"]):
        p = subprocess.run([prog, "--size", "1M"] + extra, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (extra, p.stderr)


def test_program_runs_every_allocator_and_checks_the_outputs(programs_bin):
    p = subprocess.run([str(programs_bin / "physmem_lab_programs"), "--variant", "malloc-thp", "--size", "1M",
                        "--reps", "2", "--warmup", "1", "--min-rep-ms", "0", "--param", "alloc=physmem",
                        "--param", "peers=glibc", "--param", "programs=sqlite-work,python-start"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    validate_record(r)
    assert r["verified"] and list(r["phases"]) == ["python-start"]
    progs = r["programs"]["programs"]
    assert progs["sqlite-work"]["output"].startswith("13107|")      # 1M / 80 rows counted
    assert progs["python-start"]["output"].strip() == "3"
    for name, x in progs.items():
        assert set(x["allocators"]) == {"physmem", "glibc"}
        for a, v in x["allocators"].items():                          # warm-up runs dropped, pairs aligned
            assert len(v["wall_ns"]) == len(v["peak_rss_bytes"]) == len(v["cpu_s"]) == 2, (name, a)
            assert all(b > 1 * M for b in v["peak_rss_bytes"]), (name, a)   # a program's, not env's alone
    assert progs["sqlite-work"]["allocators"]["physmem"]["wall_ns"] == r["ns_per_op"]


def test_tiny_bench_on_the_real_program(programs_bin, tmp_path):
    res = tiny_bench("programs", programs_bin, tmp_path, "--no-reserve")
    assert not res["errors"] and not res["skipped"]
    assert len(res["records"]) == 1
    r = res["records"][0]
    assert r["verified"] and set(r["programs"]["allocators"]) == set(ALLOCATORS)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "programs-1" in md and "physmem / glibc, peak RSS" in md
