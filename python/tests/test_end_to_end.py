"""End to end on the REAL experiment programs in build/lab: bench --suite tiny, then
report and compare on its output. Fails instead of skipping when
PHYSMEM_LAB_REQUIRE_BUILD=1 and a program is missing (see conftest.real_bin)."""
import json
import os
import subprocess

import pytest

from conftest import EXPERIMENTS, physmem_cmd
from physmem_lab.schema import validate_results


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, real_bin, reservation_turn):
    d = tmp_path_factory.mktemp("e2e")
    out = d / "tiny.json"
    argv = physmem_cmd() + ["bench", "--suite", "tiny", "-o", str(out), "--report",
                            str(d / "report"), "--bin-dir", str(real_bin)]
    if os.environ.get("PHYSMEM_TEST_RESERVE_HUGE_PAGES") == "0":
        argv.append("--no-reserve")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    return p, out, d


def test_tiny_bench_on_the_real_programs(tiny_run):
    p, out, d = tiny_run
    assert p.returncode == 0, f"bench failed:\n{p.stderr[-4000:]}"
    res = json.loads(out.read_text())
    validate_results(res)
    assert res["complete"] and not res["errors"]
    assert {r["experiment"] for r in res["records"]} == set(EXPERIMENTS)
    assert all(r["verified"] for r in res["records"])
    # every planned point is accounted for exactly once
    assert len(res["records"]) + len(res["skipped"]) == res["options"]["planned_points"]
    for s in res["skipped"]:
        assert s["variant"].endswith("-1g") or "out of memory" in s["reason"], s
    assert "Goals" in p.stdout and "Table 2 analogue" in p.stdout
    assert (d / "report" / "report.md").exists() and (d / "report" / "report.html").exists()


def test_report_and_compare_on_the_real_output(tiny_run, tmp_path):
    _, out, _ = tiny_run
    p = subprocess.run(physmem_cmd() + ["report", str(out), "-o", str(tmp_path / "rep")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Goals" in md and "Every record" in md
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "data:image/png;base64," in html
    p = subprocess.run(physmem_cmd() + ["compare", str(out), str(out)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 3, p.stderr                # unreliable: its own exit status
    assert "0 significant changes" in p.stdout
    assert "RESULTS UNRELIABLE" in p.stdout          # tiny runs 2 reps: too few
