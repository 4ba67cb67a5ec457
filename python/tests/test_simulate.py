"""physmem bench --simulate: which processes get the options, what the result file records,
and the simulator's checks — against the fake programs (fake_lab.py, fake_tlbsim.py)."""
import json
import os
import subprocess

import pytest

from conftest import physmem_cmd
from physmem_lab.schema import validate_results
from physmem_lab.simulate import Simulation
from physmem_lab.suitedef import Point, Variant


def _point(exp="gups"):
    return Point(exp, Variant("array", "4k"), 1 << 20)


def test_options_go_to_the_kernels_first_round_only():
    sim = Simulation("zen5", "on", 5, 1000, accepted={"gups": None, "blackscholes": None})
    want = ["--simulate", "zen5", "--sim-caches", "on", "--sim-levels", "5", "--sim-refs", "1000"]
    assert sim.argv(_point(), 0) == want
    assert sim.argv(_point(), 1) == []                      # later rounds only time
    assert sim.argv(_point(), 0, layout_seed=1) == []       # nor do layout runs
    assert sim.argv(_point("blackscholes"), 0) == []        # not a kernel of the model
    assert Simulation("off", accepted={"gups": None}).argv(_point(), 0) == []
    assert Simulation("auto", accepted={"gups": "refused"}).argv(_point(), 0) == []


def test_estimates_grow_but_budgets_do_not_see_it():
    from physmem_lab.simulate import SIM_EST_S
    ps = [_point("gups"), _point("hashtable")]
    Simulation("auto").add_estimates(ps)
    assert [p.est_s for p in ps] == [SIM_EST_S, 0.0]


def _bench(tmp_path, bin_dir, *extra, env=None, suite="lab,translation", only="gups,hashtable"):
    out = tmp_path / "r.json"
    p = subprocess.run(physmem_cmd() + ["bench", "--suite", suite, "--scale", "tiny", "--only", only,
                                        "--no-reserve", "--bin-dir", str(bin_dir), "-o", str(out),
                                        "--report", str(tmp_path / "rep"), *extra],
                       capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=300)
    res = json.loads(out.read_text()) if out.exists() else None
    return p, res


def test_bench_records_the_choice_the_checks_and_first_round_counts(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "--simulate", "zen5", "--sim-caches", "on")
    assert p.returncode == 0, p.stderr
    validate_results(res)
    sim = res["options"]["simulate"]
    assert (sim["asked"], sim["preset"], sim["caches"]) == ("zen5", "zen5", "on")
    assert sim["experiments"] == {"gups": "simulated"}      # hashtable is not a kernel
    assert set(res["tlbsim"]) >= {"detect", "presets", "validate", "bench"} and not res["tlbsim"]["errors"]
    assert res["tlbsim"]["bench"]["preset"] == "zen5"
    for r in res["round_runs"]:
        simulated = r["experiment"] == "gups" and r["run"]["round"] == 0
        assert ("translation" in r) == simulated, (r["experiment"], r["run"])
    gups = [r for r in res["records"] if r["experiment"] == "gups"]
    assert gups and all(r["translation"]["caches_modelled"] for r in gups)   # pooled from round 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Translation model" in md and "### GUPS (Fig. 4)" in md
    assert "| translation-1 |" in md and "| translation-2 |" in md and "| translation-3 |" in md


def test_auto_says_which_model_and_why_and_the_checks_simulate_it(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin)                       # --simulate auto by default
    assert p.returncode == 0, p.stderr
    assert "--simulate auto: zen5 (table): " in p.stderr and "family/model table: zen5" in p.stderr
    assert res["options"]["simulate"]["detected"]["source"] == "table"
    bench = res["tlbsim"]["bench"]                            # bench ran with --preset auto
    assert bench["preset"] == "zen5" and bench["auto"]["source"] == "table"
    assert "WARNING" not in p.stderr


def test_a_run_that_simulated_nothing_says_so_loudly(tmp_path, fake_bin):
    p, _ = _bench(tmp_path, fake_bin, env={"PHYSMEM_FAKE_NO_MODEL": "1"})
    assert "WARNING: --simulate auto simulated nothing: fake: no preset matches" in p.stderr


def test_an_asked_preset_is_the_throughput_checks_too(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "--simulate", "zen5")
    assert p.returncode == 0, p.stderr
    assert res["tlbsim"]["bench"]["preset"] == "zen5" and "auto" not in res["tlbsim"]["bench"]


def test_programs_that_refuse_the_option_run_without_it(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, env={"PHYSMEM_FAKE_NO_SIMULATE": "1"}, suite="lab")
    assert p.returncode == 0, p.stderr
    assert not res["errors"] and res["records"]
    assert res["options"]["simulate"]["experiments"]["gups"].startswith("not simulated: physmem_lab_gups "
                                                                        "does not take --simulate auto")
    assert "tlbsim" not in res                                # nothing simulates, suite not asked
    assert not any("translation" in r for r in res["round_runs"])
    assert "## Translation model" not in (tmp_path / "rep" / "report.md").read_text()


def test_off_passes_nothing_and_the_suite_alone_runs_the_checks(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "--simulate", "off", env={"PHYSMEM_FAKE_TLBSIM": "fail"},
                    suite="translation")
    assert p.returncode == 0, p.stderr
    assert res["options"]["simulate"]["asked"] == "off" and not res["records"]
    assert res["tlbsim"]["validate"]["ok"] is False          # exit 1 still keeps its JSON
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| translation-1 | " in md and "| MISSED |" in md
    assert "no simulated records of scan, gups, rbtree or chase" in md


def test_an_unknown_preset_is_a_usage_error(tmp_path, fake_bin):
    p, res = _bench(tmp_path, fake_bin, "--simulate", "pentium4")
    assert p.returncode == 1 and res is None
    assert "unknown preset 'pentium4' (physmem-tlbsim presets: zen5)" in p.stderr


@pytest.mark.parametrize("argv", [["--sim-levels", "3"], ["--sim-caches", "maybe"]])
def test_bad_simulation_options_are_refused(tmp_path, fake_bin, argv):
    p, _ = _bench(tmp_path, fake_bin, *argv)
    assert p.returncode == 2


def test_the_window_follows_the_scale_unless_asked():
    import argparse
    from physmem_lab.simulate import SIM_REFS, add_arguments
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert Simulation.from_args(p.parse_args([]), "tiny").refs == SIM_REFS["tiny"]
    assert Simulation.from_args(p.parse_args([]), "full").refs is None          # the program's own
    assert Simulation.from_args(p.parse_args(["--sim-refs", "99"]), "tiny").refs == 99


KERNELS = ("scan", "gups", "chase", "rbtree")


def test_tiny_bench_simulates_on_the_real_programs(tmp_path):
    """``physmem bench --suite lab,translation --scale tiny --only scan,gups,chase,rbtree
    --simulate zen5`` on the real programs and physmem-tlbsim (skipped unless built; fails
    under PHYSMEM_LAB_REQUIRE_BUILD=1): every first-round record of a kernel carries its
    counts, later rounds none, and the report has the section and goals."""
    from conftest import lab_bin, tiny_bench
    from physmem_lab.paths import tlbsim_program
    bin_dir = lab_bin(KERNELS, "cmake --build build", extra_files=(tlbsim_program(),))
    res = tiny_bench("lab,translation", bin_dir, tmp_path, "--only", ",".join(KERNELS),
                     "--simulate", "zen5", "--no-reserve")
    assert not res["errors"] and res["records"]
    assert res["options"]["simulate"]["experiments"] == {e: "simulated" for e in KERNELS}
    assert res["tlbsim"]["validate"]["ok"] and not res["tlbsim"]["errors"]
    assert res["tlbsim"]["bench"]["min_refs_per_second"] > 0
    for r in res["round_runs"]:
        t = r.get("translation")
        assert (t is not None) == (r["run"]["round"] == 0), (r["experiment"], r["variant"], r["run"])
        if t:
            assert t["preset"] == "zen5" and t["chosen"] == "asked"
            po = t["per_op"]
            assert po["translation_refs"] == pytest.approx(po["walk_refs"] + po["sw_walk_loads"])
            if r["kind"] in ("array", "malloc", "pool"):
                assert po["sw_walk_loads"] == 0, (r["experiment"], r["variant"])
    # a tree of depth >= 2 walks in software in the naive scan
    deep = [r for r in res["records"] if r["experiment"] == "scan" and r["kind"] == "tree-index"
            and r["tree"]["depth"] >= 2]
    assert deep and all(r["translation"]["per_op"]["sw_walk_loads"] > 0 for r in deep)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Translation model" in md and "Sampling:" in md
    for title in ("### Table 2 scans", "### GUPS (Fig. 4)", "### red-black tree (Fig. 4)", "### pointer chase"):
        assert title in md
    assert "| translation-1 |" in md and "| translation-3 |" in md
    assert "CONTRADICTS ITSELF" not in md
