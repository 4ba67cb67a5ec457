"""The redis suite: its goal and report on synthetic records (MET and MISSED), and the real
program run by ``physmem bench --suite redis --scale tiny`` (skipped unless built; fails
under PHYSMEM_LAB_REQUIRE_BUILD=1 like conftest.real_bin). The packages redis-server and
redis-tools are installed by scripts/setup.sh: without them the real runs fail here."""

import json
import subprocess

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis
from physmem_lab.schema import validate_record
from physmem_lab.suite_redis import ALLOCATORS, COMMANDS, PEERS, SUITE, goals

M = 1 << 20


def _fp(rss_after):
    return {"keys": 129000, "value_bytes": 64 * M, "kept_keys": 38700, "kept_value_bytes": 19 * M,
            "peak_rss_bytes": 90 * M, "idle_ms": 1000, "rss_after_idle_bytes": rss_after,
            "anon_after_idle_bytes": rss_after, "thp_after_idle_bytes": 0, "used_memory_after_bytes": 25 * M,
            "rss_over_used": rss_after / (25 * M), "digest": 12345, "checks": {}}


def _results(ns=None, drift=(1.0, 1.3, 0.9)):
    """One redis record: allocator -> ns per request on every command, times a drift
    common to every allocator's pass i (the machine's speed, which pairing cancels)."""
    ns = ns or {"glibc": 1200.0, "jemalloc": 1100.0, "tcmalloc": 1000.0, "mimalloc": 1050.0, "physmem": 900.0}
    per = {a: {"ns_per_request": {c: [v * d for d in drift] for c in COMMANDS},
               "benchmark_rps": {c: [1e9 / v] * len(drift) for c in COMMANDS},
               "peak_rss_bytes": 40 * M, "mapped": True, "library": f"/lib/{a}.so",
               "footprint": _fp(30 * M if a == "physmem" else 29 * M)} for a, v in ns.items()}
    me = per["physmem"]["ns_per_request"]
    phases = {c: {"reps": len(drift), "warmup": 1, "passes_per_rep": 1, "ops_per_pass": 100000,
                  "ns_per_op": me[c], "median_ns": sorted(me[c])[1], "min_ns": min(me[c]),
                  "max_ns": max(me[c]), "rel_spread": 0.4} for c in COMMANDS[1:]}
    r = synth.record("redis", "malloc-thp", 64 * M, me["set"], params={"alloc": "physmem"}, phases=phases)
    r["unit"] = "request"
    r["redis"] = {"allocator": "physmem", "server": "Redis server v=7.0.15", "transport": "unix socket",
                  "clients": 50, "pipeline": 16, "value_bytes": 64, "requests": 100000, "physmem_backing": "thp",
                  "commands": list(COMMANDS), "allocators": per}
    return synth.results([r], suite="redis")


def _rec_of(res):
    return res["records"][0]


def test_synthetic_records_are_valid():
    validate_record(_rec_of(_results()))


def test_goal_met_when_physmem_is_faster_than_every_peer_pass_by_pass():
    """Paired passes: the drift common to a pass of every allocator (1.3x on pass 2) cancels."""
    g = goals(analysis.Records(_results()))[0]
    assert g.number == "redis-1" and g.verdict == "MET"
    assert len(g.items) == len(COMMANDS)
    assert all("physmem / tcmalloc" in i.what for i in g.items)
    assert abs(g.items[0].ratio.value - 0.9) < 1e-9 and abs(g.items[0].ratio.hi - 0.9) < 1e-9


def test_goal_missed_when_a_peer_is_faster_on_one_command():
    res = _results()
    tc = _rec_of(res)["redis"]["allocators"]["tcmalloc"]["ns_per_request"]
    tc["hset"] = [800.0 * d for d in (1.0, 1.3, 0.9)]
    g = goals(analysis.Records(res))[0]
    assert g.verdict == "MISSED"
    missed = [i for i in g.items if not i.met]
    assert [i.what for i in missed] == ["HSET: physmem / tcmalloc (the peer it compares worst against)"]
    assert abs(missed[0].ratio.value - 900 / 800) < 1e-9


def test_goal_not_measured_without_physmem_and_says_which_peer_is_missing():
    res = _results()
    del _rec_of(res)["redis"]["allocators"]["physmem"]
    assert goals(analysis.Records(res))[0].verdict == "NOT MEASURED"
    res = _results()
    del _rec_of(res)["redis"]["allocators"]["mimalloc"]
    g = goals(analysis.Records(res))[0]
    assert g.verdict == "MET" and "mimalloc: not measured" in g.missing


def test_report_shows_both_rates_the_paired_ratios_and_the_footprint(tmp_path):
    from physmem_lab.document import Doc
    d = Doc()
    SUITE.report(d, analysis.Records(_results()), _results(), tmp_path)
    md = d.markdown()
    assert "| physmem | 1111 (1111) |" in md        # 1e6 / 900 ns, and the benchmark's own
    assert "| physmem / tcmalloc, time | 0.90x [0.90-0.90] |" in md
    assert "RSS after deletes + idle MiB" in md and "| glibc | 129000 | 64 | 90 | 29 |" in md


def test_the_main_job_runs_it_within_its_budget():
    from physmem_lab import suites
    pl = suites.plan("redis")
    assert len(pl.points) == 1 and not pl.dropped
    assert pl.points[0].params["peers"] == ",".join(PEERS)
    assert pl.total_est_s <= SUITE.scales["default"]["budget_s"]


@pytest.fixture(scope="module")
def redis_bin():
    return lab_bin(("redis",))


def test_program_rejects_bad_input(redis_bin):
    prog = str(redis_bin / "physmem_lab_redis")
    for extra in (["--variant", "malloc-thp", "--param", "alloc=glibc"],
                  ["--variant", "malloc-4k", "--param", "requests=0"],
                  ["--variant", "array-4k"]):
        p = subprocess.run([prog, "--size", "1M"] + extra, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (extra, p.stderr)


def test_program_reads_back_what_it_stored(redis_bin):
    p = subprocess.run([str(redis_bin / "physmem_lab_redis"), "--variant", "malloc-thp", "--size", "2M",
                        "--reps", "2", "--warmup", "1", "--min-rep-ms", "0", "--param", "alloc=physmem",
                        "--param", "peers=glibc", "--param", "requests=5000", "--param", "idle-ms=0",
                        "--param", "commands=set,lpop"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    validate_record(r)
    assert r["verified"] and list(r["phases"]) == ["lpop"]
    per = r["redis"]["allocators"]
    assert set(per) == {"physmem", "glibc"}
    for a, x in per.items():
        f = x["footprint"]
        assert x["mapped"], a
        assert f["checks"]["read_back_ok"] == f["keys"] and f["checks"]["dbsize"] == f["kept_keys"]
        assert 0.25 < f["kept_keys"] / f["keys"] < 0.35          # 70% deleted
        for c in ("set", "lpop"):                                 # warm-up passes dropped, pairs aligned
            assert len(x["ns_per_request"][c]) == len(x["benchmark_rps"][c]) == 2, (a, c)
    assert per["physmem"]["ns_per_request"]["set"] == r["ns_per_op"]


def test_program_rejects_unknown_peers(redis_bin):
    p = subprocess.run([str(redis_bin / "physmem_lab_redis"), "--variant", "malloc-thp", "--size", "1M",
                        "--param", "alloc=physmem", "--param", "peers=glibc,nope"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "nope" in p.stderr


def test_tiny_bench_on_the_real_program(redis_bin, tmp_path):
    res = tiny_bench("redis", redis_bin, tmp_path, "--no-reserve")
    assert not res["errors"] and not res["skipped"]
    assert len(res["records"]) == 1
    r = res["records"][0]
    assert r["verified"] and set(r["redis"]["allocators"]) == set(ALLOCATORS)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "redis-1" in md and "physmem / mimalloc, time" in md


def test_a_killed_program_leaves_no_server_running(redis_bin):
    """A point's timeout kills the program with SIGKILL: its redis-server must die with it
    (PR_SET_PDEATHSIG), not hold its memory until the machine restarts."""
    import os
    import signal
    import time
    p = subprocess.Popen([str(redis_bin / "physmem_lab_redis"), "--variant", "malloc-4k", "--size", "1M",
                          "--param", "alloc=glibc", "--param", "idle-ms=20000", "--reps", "1", "--warmup", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    for _ in range(200):
        kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        if kids:
            server = int(kids[0])
            break
        time.sleep(0.05)
    assert server, "the program started no server"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()

    def alive():
        try:
            with open(f"/proc/{server}/status") as f:
                return "State:\tZ" not in f.read()
        except FileNotFoundError:
            return False
    for _ in range(100):
        if not alive():
            break
        time.sleep(0.02)
    assert not alive(), f"redis-server {server} still runs after its program was killed"
