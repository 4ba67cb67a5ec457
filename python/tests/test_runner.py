"""bench against the fake program: exit codes land in records / skipped / errors."""
import json
import os
import subprocess

from conftest import physmem_cmd
from physmem_lab.schema import validate_results


def _bench(tmp_path, bin_dir, fake="", only="scan,rbtree"):
    out = tmp_path / "r.json"
    env = dict(os.environ, PHYSMEM_FAKE=fake, PHYSMEM_FAKE_STATE=str(tmp_path))
    p = subprocess.run(physmem_cmd() + ["bench", "--suite", "tiny", "--only", only,
                                        "--no-reserve", "--bin-dir", str(bin_dir), "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    res = json.loads(out.read_text()) if out.exists() else None
    return p, res


def test_clean_run_exits_0_and_writes_a_valid_file(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin)
    assert p.returncode == 0, p.stderr
    validate_results(res)
    assert res["complete"] and not res["errors"] and not res["skipped"]
    assert len(res["records"]) == res["options"]["planned_points"]
    assert "ETA" in p.stderr                         # the progress lines, without a TTY


def test_exit_3_is_skipped_exit_1_is_an_error(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "array-1g=3,tree-seg-4k=1")
    assert p.returncode == 1
    assert "VERIFICATION FAILED" in p.stderr and "POINT(S) FAILED" in p.stderr
    assert {s["variant"] for s in res["skipped"]} == {"array-1g"}
    assert all("backing unavailable" in s["reason"] for s in res["skipped"])
    assert {e["variant"] for e in res["errors"]} == {"tree-seg-4k"}
    assert any(r["variant"] == "tree-seg-4k" and not r["verified"] for r in res["records"])
    validate_results(res)


def test_a_later_round_without_its_backing_is_a_warning_not_a_skip(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "array-1g=3later")
    assert p.returncode == 0, p.stderr
    validate_results(res)
    assert not res["skipped"] and not res["errors"]
    assert len(res["records"]) == res["options"]["planned_points"]
    late = [w for w in res["warnings"] if "round 1 skipped" in w]
    assert late and all("array-1g" in w for w in late)
    one = [r for r in res["records"] if r["variant"] == "array-1g"]
    assert one and all(len(r["rounds"]) == 1 for r in one)     # it keeps its round 0


def test_bad_records_and_unknown_versions_are_errors(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "array-4k=badschema,array-thp=v2,tree-iter-1g=5")
    assert p.returncode == 1
    reasons = {e["variant"]: e["reason"] for e in res["errors"]}
    assert "invalid record" in reasons["array-4k"]
    assert "major version 2" in reasons["array-thp"]
    assert "exit 5" in reasons["tree-iter-1g"]


def test_missing_program_is_a_clear_error(tmp_path, fake_bin):
    (fake_bin / "physmem_lab_gups").unlink()
    p, res = _bench(tmp_path, fake_bin, only="gups,rbtree")
    assert p.returncode == 1
    assert "physmem_lab_gups not found" in p.stderr
    assert all(e["experiment"] == "gups" for e in res["errors"]) and res["errors"]
    assert any(r["experiment"] == "rbtree" for r in res["records"])


def test_report_and_compare_on_fake_results(tmp_path, fake_bin):
    _, res = _bench(tmp_path, fake_bin)
    r = tmp_path / "r.json"
    p = subprocess.run(physmem_cmd() + ["report", str(r), "-o", str(tmp_path / "rep")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "rep" / "report.html").exists()
    p = subprocess.run(physmem_cmd() + ["compare", str(r), str(r)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 3 and "RESULTS UNRELIABLE" in p.stdout   # tiny: 2 reps


def test_rounds_run_every_point_in_abba_order_and_pool_them(tmp_path, fake_bin):
    out = tmp_path / "r.json"
    p = subprocess.run(physmem_cmd() + ["bench", "--suite", "tiny", "--only", "gups",
                                        "--no-reserve", "--bin-dir", str(fake_bin), "-o", str(out),
                                        "--rounds", "2", "--reps", "4", "--order-seed", "42"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    validate_results(res)
    assert res["options"]["order"]["seed"] == 42 and res["options"]["order"]["rounds"] == 2
    runs = res["round_runs"]
    seq = {n: [r["variant"] for r in sorted((r for r in runs if r["run"]["round"] == n),
                                            key=lambda r: r["run"]["position"])] for n in (0, 1)}
    assert seq[1] == seq[0][::-1] and len(seq[0]) == len(res["records"])
    assert all(r["reps"] == 2 for r in runs)                 # 4 reps over 2 rounds
    assert all(r["reps"] == 4 and len(r["rounds"]) == 2 for r in res["records"])
    assert all("others_cpu" in r["machine_load"] for r in runs)


def test_a_point_skipped_in_round_0_is_not_run_again(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "array-1g=3", only="gups")
    assert p.returncode == 0
    assert [s["variant"] for s in res["skipped"]] == ["array-1g"]       # reported once
    assert not any(r["variant"] == "array-1g" for r in res["round_runs"])
