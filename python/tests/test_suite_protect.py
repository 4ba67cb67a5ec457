"""The protect suite: goals on synthetic records (MET; MISSED for a bug not caught, a false
positive, a checked kernel over its target, checked mode dearer than ASan, too much
metadata; UNSTABLE across rounds; NOT MEASURED), its report section, and the real programs:
``physmem bench --suite protect --scale tiny`` (skipped unless built; fails under
PHYSMEM_LAB_REQUIRE_BUILD=1) and the seeded bugs run one by one."""
import subprocess

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis, report, stability
from physmem_lab.suite_protect import ASAN, GOAL_TITLES, KERNELS, PLAIN, SUITE, goals

M = 1 << 20
SIZE = 64 * M
BUGS = ("oob_element", "oob_leaf", "iterator_past_end", "use_after_destroy", "use_after_compact",
        "freed_under_loop",
        "use_after_migrate", "double_free", "other_domain", "paged_oob_element", "paged_iterator_past_end",
        "paged_use_after_destroy", "paged_use_after_move", "paged_other_domain", "widen_capability")
# checked / unchecked that meet every goal, and ASan / plain dearer than them
GOOD = {"segments": 1.0, "iterator": 1.05, "index": 1.5, "chase": 1.05, "gups": 1.05, "blackscholes": 1.02,
        "rbtree": 1.05}
ASAN_COST = {k: 1.7 for k in KERNELS}


def _rec(exp, variant, costs=None, checked=None, detection=None, metadata=None):
    """costs[k]: kernel k's ns (checked[k]: its checked phase's), the main timing = segments."""
    costs = costs or {k: 1.0 for k in KERNELS}
    phases = {k: synth.phase(synth.tight(costs[k])) for k in KERNELS[1:]}
    if checked:
        phases.update({f"{k}_checked": synth.phase(synth.tight(checked[k] * costs[k])) for k in KERNELS})
    r = synth.record(exp, variant, SIZE, synth.tight(costs["segments"]), phases=phases)
    r["protect"] = {"kernels": list(KERNELS), "work": 4096, "asan": exp == ASAN,
                    "protection_keys": {"cpu": False, "os": False, "usable": False,
                                        "why": "the CPU has no protection keys (CPUID.7 PKU = 0)"}}
    if checked:
        r["phases"]["domain_switch"] = synth.phase(synth.tight(1.2))
    if detection is not None:
        r["protect"]["detection"] = detection
    if metadata is not None:
        r["protect_metadata"] = metadata
    return r


def _detection(missed=(), clean_ok=True):
    d = [{"bug": b, "expected": "caught", "ok": b not in missed, "status": "signal 6",
          "report": f"physmem: fatal: {b}"} for b in BUGS]
    return d + [{"bug": "clean", "expected": "silent", "ok": clean_ok, "status": "exit 0", "report": "clean: 1"}]


def _results(checked=None, asan=None, missed=(), clean_ok=True, meta_bytes=1000):
    checked = {**GOOD, **(checked or {})}
    asan = {**ASAN_COST, **(asan or {})}
    meta = {"pool_tag_bytes": meta_bytes, "array_table_bytes": meta_bytes, "pool_bytes": 100 * M}
    return synth.results([
        _rec(PLAIN, "array-thp"),
        _rec(PLAIN, "tree-thp", checked=checked, detection=_detection(missed, clean_ok), metadata=meta),
        _rec(ASAN, "array-thp", costs=asan),
        _rec(ASAN, "tree-thp", costs=asan, checked=checked),
    ])


def _verdicts(res):
    return {g.number: g.verdict for g in goals(analysis.Records(res))}


def test_goals_met():
    assert _verdicts(_results()) == {f"protect-{n}": "MET" for n in GOAL_TITLES}


@pytest.mark.parametrize("kw, missed", [
    ({"missed": ("use_after_migrate",)}, {1}),   # one seeded bug not caught
    ({"clean_ok": False}, {1}),                  # a false positive in the clean child
    ({"checked": {"segments": 1.08}}, {2}),
    ({"checked": {"blackscholes": 1.2}}, {2}),
    ({"checked": {"gups": 1.3}}, {3}),
    ({"checked": {"iterator": 1.8}}, {3}),
    ({"checked": {"rbtree": 1.2}}, {3}),
    ({"asan": {k: 1.05 for k in KERNELS}}, {4}),  # ASan cheaper than checked mode
    ({"meta_bytes": 600 * 1024}, {5}),           # 1.2% of the pool
])
def test_goals_missed(kw, missed):
    v = _verdicts(_results(**kw))
    assert {int(n.split("-")[1]) for n, x in v.items() if x == "MISSED"} == missed, v


def test_unverified_checked_run_is_a_false_positive():
    res = _results()
    next(r for r in res["records"] if r["experiment"] == PLAIN and r["variant"] == "tree-thp")["verified"] = False
    assert _verdicts(res)["protect-1"] == "MISSED"


def test_rounds_that_disagree_are_unstable():
    res = _results()
    r0, r1 = _results()["records"], _results({"gups": 1.3})["records"]
    for rnd, recs in ((0, r0), (1, r1)):
        for i, r in enumerate(recs):
            r["run"] = {"round": rnd, "position": i}
    res["round_runs"] = r0 + r1
    g = {x.number: x for x in stability.goals(res)}
    assert g["protect-3"].verdict == "UNSTABLE"
    assert g["protect-2"].verdict == "MET"


def test_not_measured_without_records():
    assert set(_verdicts(synth.results([])).values()) == {"NOT MEASURED"}


def test_report_section():
    md = report.build(_results(), "synthetic", None, None).markdown()
    assert md.count(f"## {SUITE.title}") == 1
    assert "| gups | 1 | 1.05x [" in md and "1.70x [" in md
    assert "AddressSanitizer (SPEC CPU2006, its paper)" in md
    assert "| use_after_compact | caught | yes | signal 6 |" in md
    assert ("Domain switches (enter and leave a DomainScope around one read): 1.2 ns in software; protection keys "
            "not measured: the CPU has no protection keys (CPUID.7 PKU = 0).") in md


def test_report_keyed_domain_switches():
    res = _results()
    t = next(r for r in res["records"] if r["experiment"] == PLAIN and r["variant"] == "tree-thp")
    t["phases"]["domain_switch_keyed"] = synth.phase(synth.tight(30.0))
    t["protect"]["protection_keys"] = {"cpu": True, "os": True, "usable": True, "why": "", "key": 1}
    md = report.build(res, "synthetic", None, None).markdown()
    assert "1.2 ns in software, 30 ns with protection keys (key 1: WRPKRU in and out, 25.00x the software switch)." in md


def _keys_here() -> bool:
    """Whether this CPU and kernel have protection keys (/proc/cpuinfo's pku and ospke)."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split() for line in f if line.startswith("flags")), [])
    return "pku" in flags and "ospke" in flags


@pytest.fixture(scope="module")
def protect_bin():
    return lab_bin((PLAIN, ASAN))


def test_tiny_bench_on_the_real_programs(protect_bin, tmp_path):
    res = tiny_bench("protect", protect_bin, tmp_path, "--no-reserve")
    assert not res["errors"], res["errors"]
    got = {(r["experiment"], r["kind"]) for r in res["records"]}
    assert got == {(e, k) for e in (PLAIN, ASAN) for k in ("array", "tree")}
    for r in res["records"]:
        assert r["verified"], r["verification"]
        assert r["protect"]["asan"] == (r["experiment"] == ASAN)
        keys = r["protect"]["protection_keys"]
        keyed = keys["usable"]  # the tree's keyed pool got its key (array records try none)
        assert not keyed or (_keys_here() and r["kind"] == "tree"), keys
        assert keyed or keys["why"], keys
        want = set(KERNELS[1:])
        if r["kind"] == "tree":
            want |= {f"{k}_checked" for k in KERNELS} | {"domain_switch", "rbtree_floor"} | ({"domain_switch_keyed"} if keyed else set())
        assert set(r["phases"]) == want
    tree = next(r for r in res["records"] if r["experiment"] == PLAIN and r["kind"] == "tree")["protect"]
    det = tree["detection"]
    bugs = list(BUGS[:-1]) + (["keyed_unchecked_read"] if tree["protection_keys"]["usable"] else []) + [BUGS[-1]]
    assert [d["bug"] for d in det] == bugs + ["clean"]
    assert all(d["ok"] for d in det), det
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "protect-5" in md


@pytest.mark.parametrize("bug", BUGS)
def test_each_seeded_bug_ends_its_process_in_a_report(protect_bin, bug):
    p = subprocess.run([str(protect_bin / "physmem_lab_protect"), "--seeded-bug", bug],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == -6, (p.returncode, p.stdout, p.stderr)
    assert "physmem: fatal:" in p.stderr and "not caught" not in p.stdout


def test_keyed_unchecked_read_is_stopped_by_the_cpu_where_it_has_keys(protect_bin):
    """With protection keys the CPU stops an unchecked read outside the domain (SIGSEGV,
    physmem's report naming key and domain); without them nothing can, and the child says so."""
    p = subprocess.run([str(protect_bin / "physmem_lab_protect"), "--seeded-bug", "keyed_unchecked_read"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 0:  # no key to be had: the CPU has none, or the kernel refused pkey_alloc
        assert "seeded bug keyed_unchecked_read: not runnable here: " in p.stdout, p.stdout
        assert not _keys_here() or "pkey_alloc" in p.stdout, p.stdout
    else:
        assert _keys_here() and p.returncode == -11, (p.returncode, p.stdout, p.stderr)
        assert "physmem: fatal: protection key" in p.stderr and "(domain 9)" in p.stderr


def test_clean_run_and_unknown_bug(protect_bin):
    p = subprocess.run([str(protect_bin / "physmem_lab_protect"), "--seeded-bug", "clean"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("clean: ") and not p.stderr
    p = subprocess.run([str(protect_bin / "physmem_lab_protect"), "--seeded-bug", "nonsense"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "no such bug" in p.stderr


def test_a_checked_run_that_aborted_is_a_false_positive():
    """Under the fatal policy a false positive ends the process: no record, an error."""
    res = _results()
    res["records"] = [r for r in res["records"] if not (r["experiment"] == PLAIN and r["variant"] == "tree-thp")]
    res["errors"] = [{"experiment": PLAIN, "variant": "tree-thp", "size_bytes": SIZE, "params": {},
                      "reason": "physmem: fatal: checked array a ...", "exit_code": -6}]
    assert _verdicts(res)["protect-1"] == "MISSED"
    res["errors"] = []
    assert _verdicts(res)["protect-1"] == "NOT MEASURED"


def test_timings_measured_in_turn_are_judged_pair_by_pair():
    """Checked and unchecked run in turn (the record's ``interleaved``): a machine that
    settles during the run slows both alike, and the ratio is the median of the paired
    repetitions, its range theirs; without the group, medians and min/max across."""
    drift = [2.0, 1.5, 1.0, 1.0, 1.0]
    r = synth.record(PLAIN, "tree-thp", SIZE, drift, phases={"segments_checked": synth.phase([x * 1.02 for x in drift])})
    across = analysis.PhaseRatio(r, r, "segments_checked", None)
    assert across.pairs is None and across.lo == pytest.approx(0.51) and across.hi == pytest.approx(2.04)
    r["interleaved"] = [[None, "segments_checked"]]
    paired = analysis.PhaseRatio(r, r, "segments_checked", None)
    assert (paired.value, paired.lo, paired.hi) == pytest.approx((1.02, 1.02, 1.02))
    assert paired.spreads() == pytest.approx((0.0, 0.0))
    r["interleaved"] = [[None, "iterator_checked"]]  # another group: not paired
    assert analysis.PhaseRatio(r, r, "segments_checked", None).pairs is None
    r["interleaved"] = [[None, "segments_checked"]]
    r["phases"]["segments_checked"]["ns_per_op"] = drift[:4]  # unequal counts: not paired
    assert analysis.PhaseRatio(r, r, "segments_checked", None).pairs is None


def test_rbtree_floor_is_a_note_not_a_verdict():
    """The rbtree_floor control (the cheapest bounds check on the same lookups) is noted
    beside protect-3 when the record has it, and never changes the verdict."""
    res = _results(checked={"rbtree": 1.2})
    tree = next(r for r in res["records"] if r["experiment"] == PLAIN and r["variant"] == "tree-thp")
    assert not any("cheapest bounds check" in n for g in goals(analysis.Records(res)) for n in g.notes)
    tree["phases"]["rbtree_floor"] = synth.phase(synth.tight(1.02))
    g3 = {g.number: g for g in goals(analysis.Records(res))}["protect-3"]
    assert g3.verdict == "MISSED"
    assert any("cheapest bounds check" in n and "1.02x" in n for n in g3.notes), g3.notes
