"""The stack suite: its report section and goals on synthetic records, and the real program
run by ``physmem bench --suite stack --scale tiny`` (skipped unless built; fails under
PHYSMEM_LAB_REQUIRE_BUILD=1 like conftest.real_bin)."""
import math
import subprocess

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis, report
from physmem_lab.suite_stack import SUITE, goals

K, M = 1 << 10, 1 << 20


def _segs(mapped=0, served=0, largest=0, seg=16 * K):
    n = mapped + served
    return {"mapped": mapped, "mapped_bytes": mapped * seg, "served": served, "served_bytes": served * seg,
            "released": n, "largest_bytes": largest}


def _rec(kernel, variant, size, ns, first_use_ns=None, params=None, **stack):
    p = {"kernel": kernel, **(params or {})}
    r = synth.record("stack", variant, size, [ns * f for f in (0.99, 1.0, 1.01)], params=p)
    r["stack"] = {"build": "normal" if variant == "contiguous-4k" else "split", "kernel": kernel,
                  "thread_stack_bytes": 8 * M if variant == "contiguous-4k" else 32 * K,
                  "segments": _segs(), "list": {"segments": 0, "bytes": 0}, **stack}
    if first_use_ns is not None:
        r["phases"] = {"first_use": synth.phase([first_use_ns] * 3)}
    return r


def _deep(variant, ns, first_use, segs, params=None, seg=16 * K, served=False):
    s = _segs(0 if served else segs, segs if served else 0, seg, seg)
    return _rec("deepsum", variant, 20_000, ns, first_use, params, segments=s,
                list={"segments": segs, "bytes": segs * seg},
                first_use={"runs": 5, "segments_per_run": float(segs)})


def _paired(r, median, lo, hi):
    r["stack"]["paired"] = {"pairs": 5, "calls_per_block": 8, "ratio_median": median, "ratio_min": lo,
                            "ratio_max": hi, "split_median_ns": 1.0, "normal_median_ns": 1.0}
    return r


def _records(scan_split=1.02, deep_segments=512):
    normal_deep = _rec("deepsum", "contiguous-4k", 20_000, 17.0, 280.0, frame_bytes=320.0,
                       normal_32k={"thread_stack_bytes": 32 * K, "depth": 20_000, "completed": False,
                                   "signal": "SIGSEGV", "max_depth": 87})
    return [
        _rec("fib", "contiguous-4k", 30, 1.0), _paired(_rec("fib", "split-4k", 30, 1.10), 1.12, 1.10, 1.15),
        _rec("scan", "contiguous-4k", M, 0.066),
        _paired(_rec("scan", "split-4k", M, 0.066 * 1.3), scan_split, scan_split - 0.01, scan_split + 0.01),
        _rec("blackscholes", "contiguous-4k", 256 * K, 2.5),
        _paired(_rec("blackscholes", "split-4k", 256 * K, 2.5), 1.0, 0.99, 1.01),
        normal_deep,
        _deep("split-4k", 160.0, 630.0, deep_segments),
        _deep("split-4k", 18.0, 250.0, 104, {"segment": "64K", "signals": "noblock"}, seg=64 * K),
        _deep("split-pool-4k", 20.0, 19.0, 104, {"signals": "noblock", "block_size": 64 * K}, seg=64 * K, served=True),
        _deep("split-4k", 20.0, 480.0, 512, {"signals": "noblock"}),
    ]


def test_report_section_tables_probe_and_seed_figures(tmp_path):
    md = report.build(synth.results(_records()), "synthetic", None, tmp_path).markdown()
    assert f"## {SUITE.title}" in md
    # overhead rows: normal and split ns/op and the ratio of medians with its range
    assert ("| fib | n=30 | split, 32K thread, libgcc segments | 1 | 1.1 | 1.10x [1.08-1.12] "
            "| 1.12x [1.10-1.15] (5 pairs) | 1.15x (fib) | yes |") in md
    assert "| scan | 1M | split, 32K thread, libgcc segments | 0.066 | 0.0858 | 1.30x [1.27-1.33] | 1.02x [1.01-1.03]" in md
    assert "| blackscholes | 256K | split, 32K thread, libgcc segments | 2.5 | 2.5 | 1.00x" in md
    assert "THEIRS (seed 001" in md and "6,410,250" in md
    # segment table: counts, bytes, list cross-check, first use vs the normal build
    assert ("| depth 20,000 | split, 32K thread, libgcc segments | 512 | - | 8M | 16K | yes | 512 | 160.0 "
            "| 630.0 | 2.25x [2.25-2.25] |") in md
    assert "| depth 20,000 | split, 32K thread, 64K pool blocks on 4k, signals not blocked | 104 | 104 | 6656K | 64K | yes |" in md
    assert "min segment 64K, signals not blocked" in md
    assert "killed by SIGSEGV (in a child process); the deepest recursion that fits is 87 frames of 320 bytes" in md
    # findings derived from the records: (160 - 20) ns x 5000 ops / 512 segments
    assert "blocking signals (libgcc's default) costs 8.00x [7.84-8.16] the time without, 1.4 us per segment" in md
    assert "a 64 KiB minimum segment: 104 segments instead of 512; reused 0.90x" in md
    assert "first use 0.52x [0.52-0.52] of the libgcc-sized segments" in md
    assert "segments from 64K pool blocks instead of 64 KiB mmaps: reused 1.11x" in md
    assert (tmp_path / "plot-stack-overhead.png").stat().st_size > 1000


def test_list_mismatch_is_shown():
    recs = _records()
    recs[7]["stack"]["list"]["segments"] = 511
    md = report.build(synth.results(recs), "synthetic", None, None).markdown()
    assert "| 512 | - | 8M | 16K | NO |" in md


def test_goals_follow_the_numbers():
    g = {x.number: x for x in goals(analysis.Records(synth.results(_records())))}
    assert g["stack-1"].verdict == "MET"                      # scan 1.02x, blackscholes 1.00x
    assert abs(g["stack-1"].items[0].ratio.value - 1.02) < 1e-9     # the paired ratio, not 1.30x
    assert "(paired)" in g["stack-1"].items[0].what
    assert any("two records' medians give 1.30x" in n for n in g["stack-1"].notes)
    assert any("fib n=30" in n and "1.12x" in n for n in g["stack-1"].notes)
    assert g["stack-2"].verdict == "MET"
    deep = g["stack-2"].items[0].ratio
    assert abs(deep.value - 32 * K / (320.0 * 20_000)) < 1e-12     # 32 KiB of the 6.4 MB needed
    assert "over 512 segments" in deep.cell()
    slow = {x.number: x for x in goals(analysis.Records(synth.results(_records(scan_split=1.2))))}
    assert slow["stack-1"].verdict == "MISSED"
    assert any("scan" in w for w in slow["stack-1"].why())
    unpaired = _records()
    for r in unpaired:
        r["stack"].pop("paired", None)
    g = {x.number: x for x in goals(analysis.Records(synth.results(unpaired)))}
    assert g["stack-1"].verdict == "MISSED"                          # falls back to 1.30x
    assert abs(g["stack-1"].items[0].ratio.value - 1.3) < 1e-9


def test_deep_goal_misses_without_segments_or_on_a_big_stack():
    shallow = {x.number: x for x in goals(analysis.Records(synth.results(_records(deep_segments=1))))}
    assert shallow["stack-2"].verdict == "MISSED"
    assert math.isinf(shallow["stack-2"].items[0].ratio.value)
    assert "not deep enough" in shallow["stack-2"].items[0].ratio.cell()
    big = _records()
    big[7]["stack"]["thread_stack_bytes"] = 8 * M
    g = {x.number: x for x in goals(analysis.Records(synth.results(big)))}
    assert g["stack-2"].verdict == "MISSED"
    none = {x.number: x for x in goals(analysis.Records(synth.results([])))}
    assert none["stack-1"].verdict == none["stack-2"].verdict == "NOT MEASURED"


@pytest.fixture(scope="module")
def stack_bin():
    return lab_bin(["stack"], "needs GCC and ld.gold; skipped under sanitizers")


def test_bad_arguments_are_usage_errors(stack_bin):
    exe = str(stack_bin / "physmem_lab_stack")
    for extra in (["--variant", "malloc-thp", "--size", "30"],
                  ["--variant", "contiguous-4k", "--size", "99", "--param", "kernel=fib"],
                  ["--variant", "split-4k", "--size", "30", "--param", "segment=3K"],
                  ["--variant", "split-4k", "--size", "30", "--param", "kernel=nope"]):
        p = subprocess.run([exe] + extra, capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, (extra, p.stderr)
        assert "physmem_lab_stack:" in p.stderr


def test_tiny_bench_on_the_real_program(stack_bin, tmp_path):
    res = tiny_bench("stack", stack_bin, tmp_path, "--no-reserve")
    assert not res["errors"] and not res["skipped"] and res["records"]
    assert all(r["verified"] for r in res["records"])
    kernels = {r["params"]["kernel"] for r in res["records"]}
    assert kernels == {"fib", "deepsum", "scan", "blackscholes"}
    for r in res["records"]:
        st = r["stack"]
        if r["kind"] != "contiguous" and r["params"]["kernel"] != "deepsum":
            pr = st["paired"]
            assert pr["pairs"] == r["reps"] and pr["ratio_min"] <= pr["ratio_median"] <= pr["ratio_max"]
        if r["kind"] != "contiguous":
            assert st["thread_stack_bytes"] == 32 * K
            assert st["list"]["segments"] == st["segments"]["mapped"] + st["segments"]["served"]
        if r["params"]["kernel"] == "deepsum" and r["kind"] != "contiguous":
            assert st["segments"]["mapped"] + st["segments"]["served"] > 1
            assert st["segments"]["released"] == st["list"]["segments"]
            assert "first_use" in r["phases"]
        if r["kind"] == "split-pool":
            assert st["segments"]["served"] > 1 and st["segments"]["mapped"] == 0
            assert st["segments"]["largest_bytes"] == r["params"]["block_size"]
        if r["params"].get("segment") == "64K":
            assert st["segments"]["largest_bytes"] == 64 * K
        if r["params"]["kernel"] == "deepsum" and r["kind"] == "contiguous":
            probe = st["normal_32k"]
            assert not probe["completed"] and probe["signal"] == "SIGSEGV"
            assert 0 < probe["max_depth"] < r["size_bytes"]
            assert 200 < st["frame_bytes"] < 1024
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "Deep recursion: segments" in md
    assert (tmp_path / "rep" / "plot-stack-overhead.png").exists()
