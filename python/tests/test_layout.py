"""Layout controls (lab/PROTOCOL.md, "Layout"): real programs turn ASLR off, record the
environment size, perturb it by seed; the harness runs layout seeds and reports the bias."""
import json
import subprocess

from conftest import physmem_cmd
from physmem_lab import layout
from physmem_lab.schema import validate_record, validate_results


def _run(real_bin, *extra, env=None):
    argv = [str(real_bin / "physmem_lab_scan"), "--variant", "array-4k", "--size", "64K",
            "--reps", "1", "--warmup", "0", "--min-rep-ms", "0", *extra]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    validate_record(rec)
    return rec


def test_aslr_is_off_by_default_and_on_when_asked(real_bin):
    off, on = _run(real_bin), _run(real_bin, "--aslr", "on")
    assert off["aslr"] == "off" and off["layout"]["seed"] is None
    system = open("/proc/sys/kernel/randomize_va_space").read().strip()
    assert on["aslr"] == ("off" if system == "0" else "on")
    assert off["env_bytes"] > 0 and on["env_bytes"] > 0


def test_same_command_same_stack_with_aslr_off(real_bin):
    a, b = _run(real_bin), _run(real_bin)
    assert a["layout"]["stack_low12"] == b["layout"]["stack_low12"]
    assert a["env_bytes"] == b["env_bytes"]


def test_layout_seeds_pad_the_environment_reproducibly(real_bin):
    s1, s2, s1_again = (_run(real_bin, "--layout-seed", s) for s in ("1", "2", "1"))
    pads = (s1["layout"]["env_pad_bytes"], s2["layout"]["env_pad_bytes"])
    assert pads[0] != pads[1] and all(p % 16 == 0 and p <= 4096 for p in pads)
    assert s2["env_bytes"] - s1["env_bytes"] == pads[1] - pads[0]
    assert s1_again["env_bytes"] == s1["env_bytes"]
    assert s1_again["layout"] == s1["layout"]


def test_bad_layout_arguments_are_usage_errors(real_bin):
    for extra in (["--aslr", "maybe"], ["--layout-seed", "0"], ["--layout-seed", "x"]):
        p = subprocess.run([str(real_bin / "physmem_lab_scan"), "--variant", "array-4k",
                            "--size", "64K", *extra], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and extra[0] in p.stderr


def test_bench_layout_random_runs_each_point_per_seed(real_bin, tmp_path):
    out = tmp_path / "r.json"
    argv = physmem_cmd() + ["bench", "--suite", "tiny", "--only", "scan", "--no-reserve",
                            "--layout-random", "2", "-o", str(out), "--report",
                            str(tmp_path / "rep"), "--bin-dir", str(real_bin)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    validate_results(res)
    assert res["options"]["layout_random"] == 2
    assert len(res["layout_runs"]) == 2 * len(res["records"]) > 0
    assert all(r["layout"]["seed"] is None for r in res["records"])
    assert sorted({r["layout"]["seed"] for r in res["layout_runs"]}) == [1, 2]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Layout bias" in md and "ASLR off in" in md


def _rec(median, spread, seed=None, variant="array-4k"):
    return {"experiment": "scan", "variant": variant, "size_bytes": 1 << 20,
            "params": {"access": "linear"}, "median_ns": median, "rel_spread": spread,
            "aslr": "off", "env_bytes": 1000, "layout": {"seed": seed}}


def test_bias_flags_points_whose_layouts_disagree_beyond_noise():
    res = {"records": [_rec(1.0, 0.02), _rec(1.0, 0.02, variant="array-thp")],
           "layout_runs": [_rec(1.5, 0.02, 1), _rec(1.0, 0.02, 2),
                           _rec(1.01, 0.05, 1, "array-thp"), _rec(0.99, 0.05, 2, "array-thp")]}
    rows = {r["key"][1]: r for r in layout.bias_rows(res)}
    assert rows["array-4k"]["biased"] and rows["array-4k"]["worst_seed"] == 1
    assert abs(rows["array-4k"]["across"] - 0.5) < 1e-9
    assert not rows["array-thp"]["biased"]
    assert rows["array-thp"]["runs"] == 3


def test_no_bias_section_without_layout_runs_even_for_repeated_points():
    res = {"records": [_rec(1.0, 0.02), _rec(1.5, 0.02)]}    # one point measured twice
    assert layout.bias_rows(res) == []


def test_summary_counts_aslr_and_environment_sizes():
    res = {"options": {"aslr": "off"}, "records": [_rec(1, 0), dict(_rec(1, 0), aslr="on", env_bytes=3000)]}
    lines = layout.summary(res)
    assert "ASLR off in 1 of 2 records, on in 1" in lines[0]
    assert "1000..3000" in lines[1]
