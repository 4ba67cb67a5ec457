"""The translation suite on synthetic records: goals translation-1..3 (MET, MISSED, NOT
MEASURED, UNSTABLE over rounds), the direction of each pair (agree / tie / disagree), the
self-contradiction rules of Sanity, and the report's Translation model section."""
import copy

import pytest

import synth
from physmem_lab import report, sanity, stability, suites
from physmem_lab.suite_translation import SUITE, Pair, compared, goals, kernel_verdict

G, M = 1 << 30, 1 << 20
T = synth.tight
tr = synth.translation


def _rec(exp, variant, size, ns, t, **kw):
    r = synth.record(exp, variant, size, T(ns), **kw)
    r["counters"]["unavailable"]["dtlb_load_misses"] = "perf_event_open: No such file or directory"
    if t is not None:
        r["translation"] = t
    return r


def _results(gups_tree_ns=55.0, scan_iter_ns=1.0, rb_pool_ns=40.0, chase_tree_ns=180.0, ok=True,
             min_rps=6.5e7, tlbsim=True, extra=(), all_rps=None):
    lin = {"params": {"access": "linear"}}
    recs = [
        # scans: the naive tree walks in software (2 loads per element), the iterator does not
        _rec("scan", "array-4k", 4 * G, 1.0, tr(walks=1 / 1024, l1=1 / 512, walk_refs=1.5 / 1024), **lin),
        _rec("scan", "array-1g", 4 * G, 1.0, tr(page="1g"), **lin),
        _rec("scan", "tree-index-1g", 4 * G, 3.0, tr(refs=3.0, sw=2.0, page="1g"), **lin),
        _rec("scan", "tree-iter-1g", 4 * G, scan_iter_ns, tr(refs=1.0001, sw=0.0001, page="1g"), **lin),
        # GUPS: array-4k walks on most updates (2 refs each), the tree on 1g walks in software
        _rec("gups", "array-4k", G, 100.0, tr(l1=0.99, walks=0.95, walk_refs=2.0)),
        _rec("gups", "array-1g", G, 50.0, tr(page="1g")),
        _rec("gups", "tree-index-1g", G, gups_tree_ns, tr(refs=2.0, sw=1.0, page="1g")),
        # rbtree: malloc nodes on 4 KiB pages walk, pool nodes on 1 GiB pages do not
        _rec("rbtree", "malloc-4k", 512 * M, 100.0, tr(refs=3.0, l1=2.0, walks=1.5, walk_refs=2.5)),
        _rec("rbtree", "pool-1g", 512 * M, rb_pool_ns, tr(refs=3.0, page="1g")),
        # chase: the tree pays two software-walk loads a step against one hardware walk ref
        _rec("chase", "array-4k", G, 150.0, tr(l1=1.0, walks=0.9, walk_refs=1.0)),
        _rec("chase", "tree-index-4k", G, chase_tree_ns, tr(refs=3.0, sw=2.0, l1=1.0, walks=0.95, walk_refs=1.05)),
        # not simulated: no translation field (blackscholes is not a kernel of the model)
        _rec("blackscholes", "array-4k", 32 * M, 3.0, None, params={"layout": "soa"}),
    ] + list(extra)
    res = synth.results(recs)
    if tlbsim:
        res["tlbsim"] = synth.tlbsim(ok=ok, min_rps=min_rps, all_rps=all_rps)
    res["options"]["simulate"] = {"asked": "zen5", "preset": "zen5", "caches": "off", "levels": None,
                                  "refs": None, "experiments": {e: "simulated" for e in
                                                                ("scan", "gups", "rbtree", "chase")},
                                  "rounds": "round 0", "detected": None}
    return res


def _goals(res):
    return {g.number: g for g in stability.goals(res)}


def test_goals_met():
    g = _goals(_results())
    assert [g[f"translation-{i}"].verdict for i in (1, 2, 3)] == ["MET"] * 3
    assert {i.what for i in g["translation-3"].items} == {
        "Table 2 scans", "GUPS (Fig. 4)", "red-black tree (Fig. 4)", "pointer chase"}
    # no PMU in the synthetic records: the PMU check is labelled not applicable
    assert any("PMU check: not applicable: no PMU on this machine (dtlb_load_misses: perf_event_open: No such file" in n
               for n in g["translation-1"].notes)


def test_validation_and_throughput_missed_with_reasons():
    g = _goals(_results(ok=False, min_rps=3e7))
    assert g["translation-1"].verdict == "MISSED" and g["translation-2"].verdict == "MISSED"
    assert "FAILED random over N pages (zen5): miss_rate expected 0.9, got 0.8" in \
        g["translation-1"].items[0].ratio.cell()
    assert g["translation-2"].why() == ["physmem-tlbsim bench: 30.0 M refs/s < 50 M/s",
                                        "physmem-tlbsim bench --preset all: 30.0 M refs/s < 50 M/s"]
    assert "on AMD EPYC" in g["translation-2"].items[0].ratio.cell()
    assert "; 37.5 M refs per CPU second (the process's own CPU time" in g["translation-2"].items[0].ratio.cell()


def test_throughput_is_judged_on_every_preset_too():
    # the run's model is fast enough, another preset is not: missed, naming that preset
    g = _goals(_results(min_rps=6.5e7, all_rps=4.5e7))["translation-2"]
    assert g.verdict == "MISSED"
    assert g.why() == ["physmem-tlbsim bench --preset all: 45.0 M refs/s < 50 M/s"]
    cell = g.items[1].ratio.cell()
    assert "preset zen4" in cell and "the slowest of 2 machines (every preset and this CPU's model" in cell
    # a result file from before the all-preset check: judged on the run's model, said so
    res = _results()
    del res["tlbsim"]["bench_all"]
    g = _goals(res)["translation-2"]
    assert g.verdict == "MET" and len(g.items) == 1
    assert any("--preset all: not in this result file" in n for n in g.notes)
    # the check ran and failed: not measured for it, not silently judged on the rest
    res["tlbsim"]["errors"]["bench_all"] = "bench: exit 2"
    g = _goals(res)["translation-2"]
    assert any("bench --preset all" in m and "exit 2" in m for m in g.missing)


def test_not_measured_without_the_simulator_or_simulated_records():
    res = _results(tlbsim=False)
    res["tlbsim"] = {"program": "physmem-tlbsim", "errors": {"all": "build/tools/physmem-tlbsim not found"}}
    g = _goals(res)
    assert g["translation-1"].verdict == "NOT MEASURED"
    assert "physmem-tlbsim not found" in g["translation-1"].missing[0]
    for r in res["records"]:
        r.pop("translation", None)
    assert _goals(res)["translation-3"].verdict == "NOT MEASURED"


def test_suite_absent_from_a_result_file_without_simulation():
    res = _results(tlbsim=False)
    for r in res["records"]:
        r.pop("translation", None)
    assert not any(str(g.number).startswith("translation") for g in suites.goals(res))
    assert f"## {SUITE.title}" not in report.build(res, "synthetic").markdown()


@pytest.mark.parametrize("kw, kernel", [
    ({"gups_tree_ns": 120.0}, "GUPS (Fig. 4)"),        # fewer walk refs, yet slower
    ({"chase_tree_ns": 140.0}, "pointer chase"),        # more refs, yet faster
])
def test_direction_per_kernel(kw, kernel):
    g = _goals(_results(**kw))["translation-3"]
    item = next(i for i in g.items if i.what == kernel)
    assert kernel_verdict(item.ratio.num) == "disagrees"
    assert g.verdict == "MISSED"
    why = " ".join(g.why())
    assert kernel in why and "disagree:" in why


def test_pairs_time_cannot_judge_are_classified_not_counted():
    """Issue 23: time within its band while the model moves (tie), and time moving while the
    model sees no change in translation (not translation: another cause), say nothing
    about the model: shown, not counted against it."""
    g = _goals(_results(rb_pool_ns=99.0))["translation-3"]       # rbtree: every pair a tie
    assert not any(i.what == "red-black tree (Fig. 4)" for i in g.items)
    assert any(n.startswith("red-black tree (Fig. 4): undecided") for n in g.notes)
    assert g.verdict == "MET"
    g = _goals(_results(scan_iter_ns=1.3))["translation-3"]      # model: no change; time: slower
    scans = next(i for i in g.items if i.what == "Table 2 scans")
    assert any(p.verdict == "not translation" for p in scans.ratio.num)
    assert "not translation" in scans.ratio.cell() and g.verdict == "MET"


def test_pair_bands_and_model_change():
    from physmem_lab.analysis import Records
    recs = suites.records(_results())
    p = next(p for p in compared(recs, "gups") if p.label() == "tree-index-1g / array-4k")
    assert p.time.value == pytest.approx(0.55)
    assert p.band == pytest.approx(0.02)                         # tight samples: the floor
    assert p.delta == pytest.approx((1.0 - 2.0) / (1.0 + 2.0))   # one ref fewer of three
    assert (p.time_dir, p.model_dir, p.verdict) == ("lower", "lower", "agree")
    assert isinstance(p, Pair) and isinstance(recs, Records)
    # the model's band grows with the sampling error of the halves
    noisy = copy.deepcopy(p.ta)
    noisy["halves"]["rel_diff"] = 0.9
    assert Pair("gups", None, p.num, p.den, noisy, p.tb).model_band == pytest.approx((0.9 * 1.0 + 0.01 * 2.0) / 3.0)


def test_later_rounds_use_the_first_rounds_counts_and_their_spread_between_processes():
    """Only round 0 simulates; round 1's records find its counts. A pair's two sides ran in
    different processes: when a side's own processes differ (tree-index-1g's GUPS: 55 ns in
    round 0, 120 in round 1), that spread is time's band, and round 1's 1.2x against the
    model's fewer walks is noise, not a disagreement; each round is judged."""
    res = _results()
    r0 = [dict(copy.deepcopy(r), run={"round": 0, "position": i}) for i, r in enumerate(res["records"])]
    r1 = []
    for i, r in enumerate(copy.deepcopy(res["records"])):
        r.pop("translation", None)
        if r["experiment"] == "gups" and r["variant"] == "tree-index-1g":
            r.update(synth.record("gups", "tree-index-1g", G, T(120.0)))
        r1.append(dict(r, run={"round": 1, "position": i}))
    res["round_runs"] = r0 + r1
    g = _goals(res)["translation-3"]
    assert [x.measured for x in g.rounds] == ["MET", "MET"] and g.verdict == "MET"
    from physmem_lab import rounds
    recs = suites.records(rounds.per_round(res)[1])
    p = next(p for p in compared(recs, "gups", largest_only=True) if p.label() == "tree-index-1g / array-4k")
    assert p.time.value == pytest.approx(1.2) and p.band > 0.5 and p.time_dir == "same"
    assert p.verdict != "disagree"   # without rounds the same 1.2x disagrees: test_direction_per_kernel


@pytest.mark.parametrize("vendor, field", [("AuthenticAMD", "l1_misses"), ("GenuineIntel", "walks")])
def test_pmu_check_compares_what_the_generic_event_counts_on_the_cpu(vendor, field):
    res = _results()
    res["tlbsim"]["detect"]["vendor"] = vendor
    for r in res["records"]:
        if "translation" in r:
            per_op = r["translation"]["per_op"]
            per_op["l1_misses"] = max(per_op["l1_misses"], per_op["walks"]) * 1.5 + 0.01  # unlike walks
            ops = r["ops_per_pass"] * r["passes_per_rep"]
            r["counters"]["dtlb_load_misses"] = {"source": "perf:dTLB-load-misses",
                                                 "per_rep": [per_op[field] * ops * 1.05] * r["reps"]}
    g = _goals(res)["translation-1"]
    pmu = [i for i in g.items if i.what.startswith("PMU:")]
    assert pmu and all(i.met for i in pmu) and g.verdict == "MET"
    other = "walks" if field == "l1_misses" else "l1_misses"
    assert field.replace("_", " ") in pmu[0].ratio.cell() and other.replace("_", " ") not in pmu[0].ratio.cell()


def test_pmu_check_applies_where_counters_exist():
    res = _results()
    res["tlbsim"]["detect"]["vendor"] = "GenuineIntel"
    for r in res["records"]:
        if "translation" in r:
            walks = r["translation"]["per_op"]["walks"]
            ops = r["ops_per_pass"] * r["passes_per_rep"]
            r["counters"]["dtlb_load_misses"] = {"source": "perf:dTLB-load-misses",
                                                 "per_rep": [walks * ops * 1.05] * r["reps"]}
    g = _goals(res)["translation-1"]
    pmu = [i for i in g.items if i.what.startswith("PMU:")]
    assert len(pmu) == 11 and all(i.met for i in pmu) and g.verdict == "MET"
    assert not any("not applicable" in n for n in g.notes)
    md = report.build(res, "synthetic").markdown()
    assert "measured dTLB walks/op (PMU)" in md and "PMU: applied" in md
    res["records"][4]["counters"]["dtlb_load_misses"]["per_rep"][0] *= 3     # gups array-4k off by far
    assert _goals(res)["translation-1"].verdict == "MISSED"


@pytest.mark.parametrize("mutate, rule", [
    (lambda t: t["per_op"].update(sw_walk_loads=0.5, translation_refs=0.5), "variant has no software walk"),
    (lambda t: t["per_op"].update(walks=0.5), "walks at most 0.01 times per op"),
    (lambda t: t["counts"].update(walk_refs=t["counts"]["walk_refs"] + 7), "add up to the walk references"),
    (lambda t: t["per_op"].update(translation_refs=3.0), "walk refs plus software-walk loads"),
    (lambda t: t["counts"].update(walks=10 ** 9), "walks <= L1 TLB misses <= accesses"),
])
def test_sanity_flags_simulated_counts_that_contradict_themselves(mutate, rule):
    res = _results()
    assert sanity.findings(res) == []
    arr = next(r for r in res["records"] if r["variant"] == "array-1g" and r["experiment"] == "gups")
    mutate(arr["translation"])
    found = sanity.findings(res)
    assert len(found) == 1 and rule in found[0].rule, [f.text() for f in found]
    md = report.build(res, "synthetic").markdown()
    assert "CONTRADICTS ITSELF: gups 1G array-1g" in md
    # the record's pairs are left out of the direction goal (not judged on broken counts)
    gups = next(i for i in _goals(res)["translation-3"].items if i.what == "GUPS (Fig. 4)")
    assert not any("array-1g" in (p.num["variant"], p.den["variant"]) for p in gups.ratio.num)


def test_no_translation_mode_makes_no_walk():
    res = _results(extra=[_rec("gups", "array-2m", G, 60.0, tr(walks=0.2, walk_refs=0.2, l1=0.2,
                                                                  translate=False, preset="none"))])
    assert any("no-translation mode makes no page walk" in f.rule for f in sanity.findings(res))


def test_report_section(tmp_path):
    res = _results(gups_tree_ns=120.0)
    res["records"].append(_rec("scan", "array-thp", 4 * G, 1.0, {"preset": None, "reason": "no preset for this CPU"},
                               params={"access": "linear"}))
    paths = report.write_report(res, tmp_path / "rep", source="synthetic.json")
    md = paths["md"].read_text()
    assert md.count(f"## {SUITE.title}") == 1
    for kernel in ("### Table 2 scans", "### GUPS (Fig. 4)", "### red-black tree (Fig. 4)", "### pointer chase"):
        assert kernel in md
    assert "source (zen5): https://example.invalid/zen5-optimization-guide" in md
    assert "Checks applied: analytic (physmem-tlbsim validate); PMU: not applicable: no PMU" in md
    assert "PMU check, how to run it:" in md and "L1 DTLB misses on AMD" in md
    assert "Sampling: 11 simulated points" in md and "halves.rel_diff" in md
    assert "not simulated (1 records): no preset for this CPU" in md
    assert "| tree-index-1g / array-4k | 1G | 1.20x" in md and "DISAGREE" in md
    assert "| tree-index-1g / array-4k | linear | 4G |" in md and "| 3.34x | agree |" in md   # THEIRS, Table 2
    assert "| pool-1g / malloc-4k | 512M |" in md and "~0.50x" in md
    assert "GUPS (Fig. 4): the model disagrees with time at the largest sizes: where they disagree:" in md
    assert "| translation-3 |" in md and "does not agree" in md
    assert any(p.name.startswith("plot-translation-gups") for p in paths["plots"])
    text = report.headline(res)
    assert "translation-2" in text


def test_with_data_caches_the_model_counts_translation_refs_that_reach_memory():
    recs = suites.records(_results())
    p = next(p for p in compared(recs, "gups") if p.label() == "tree-index-1g / array-4k")
    assert p.field == "translation_refs"          # synthetic records: no cache model
    ta, tb = copy.deepcopy(p.ta), copy.deepcopy(p.tb)
    # the tree's software walk hits in cache (0 to memory); the array's walks mostly miss
    ta["per_op"]["translation_memory_refs"], tb["per_op"]["translation_memory_refs"] = 0.0, 1.5
    q = Pair("gups", None, p.num, p.den, ta, tb)
    assert q.field == "translation_memory_refs" and q.verdict == "agree"
    assert q.delta == pytest.approx((0.0 - 1.5) / 3.0)
    assert q.model_ratio(q.field) == "0x"
    # memory refs equal on both sides: the model predicts no change, whatever the cached
    # translation refs do; time moving (0.55x here) is then "not translation", not a disagreement
    ta["per_op"]["translation_memory_refs"] = tb["per_op"]["translation_memory_refs"] = 1.5
    same = Pair("gups", None, p.num, p.den, ta, tb)
    assert same.field == "translation_memory_refs" and same.model_dir == "same"
    assert same.verdict == "not translation"
    # one side without the cache model: both fall back to every translation ref
    tb["per_op"]["translation_memory_refs"] = None
    assert Pair("gups", None, p.num, p.den, ta, tb).field == "translation_refs"
    tb["per_op"]["translation_memory_refs"] = 1.5


def test_report_says_what_auto_chose_and_why(tmp_path):
    res = _results()
    for r in res["records"]:   # as a CPUID-resized auto machine records itself
        t = r.get("translation")
        if t:
            t.update(preset="zen5-cpuid", base="zen5", chosen="auto", source="cpuid",
                     reason="CPUID describes the data TLBs: L2 4k 4096 16-way -> 4096 8-way")
    res["tlbsim"]["detect"].update(preset="zen5-cpuid", source="cpuid", reason="CPUID describes the data TLBs")
    md = report.write_report(res, tmp_path / "rep", source="synthetic.json")["md"].read_text()
    assert ("preset zen5-cpuid (auto): " in md
            and "auto chose it from cpuid: CPUID describes the data TLBs: L2 4k 4096 16-way -> 4096 8-way" in md)
    assert "source (zen5): https://example.invalid/zen5-optimization-guide" in md     # the base's sources
    assert "auto's model zen5-cpuid (cpuid: CPUID describes the data TLBs)" in md


def test_a_model_change_time_cannot_see_is_no_change():
    """The model's band includes time's: fewer memory references than time's noise band
    is a change time cannot see (model: same); beyond it the direction is judged."""
    recs = suites.records(_results())
    p = next(p for p in compared(recs, "gups") if p.label() == "tree-index-1g / array-4k")
    ta, tb = copy.deepcopy(p.ta), copy.deepcopy(p.tb)
    ta["per_op"]["translation_memory_refs"], tb["per_op"]["translation_memory_refs"] = 1.44, 1.5  # -2% of 3 refs
    num = copy.deepcopy(p.num)
    num["rel_spread"] = 0.10                        # time's band 10%
    q = Pair("gups", None, num, p.den, ta, tb)
    assert q.model_band == pytest.approx(0.10) and q.model_dir == "same"
    ta["per_op"]["translation_memory_refs"] = 1.0   # -17% of the memory refs: beyond the band
    assert Pair("gups", None, num, p.den, ta, tb).model_dir == "lower"


def test_time_moving_far_more_than_translation_could_explain_is_not_translation():
    """A change of D of the memory refs moves time by about D at most: time going the other
    way by more than EXPLAINS x |D| (beyond its band) is another cost, not a disagreement;
    within that it disagrees."""
    from physmem_lab.suite_translation import EXPLAINS
    recs = suites.records(_results())
    p = next(p for p in compared(recs, "gups") if p.label() == "tree-index-1g / array-4k")
    ta, tb = copy.deepcopy(p.ta), copy.deepcopy(p.tb)
    num = copy.deepcopy(p.num)
    num["median_ns"] = p.den["median_ns"] * 1.15      # time 15% higher (band: the 2% floor)
    for k in ("min_ns", "max_ns"):
        num[k] = num["median_ns"]
    num["rel_spread"] = 0.0
    ta["per_op"]["translation_memory_refs"], tb["per_op"]["translation_memory_refs"] = 1.41, 1.5  # D = -3%
    small = Pair("gups", None, num, p.den, ta, tb)
    assert small.model_dir == "lower" and abs(small.delta) * EXPLAINS + small.band < 0.15
    assert small.verdict == "not translation"
    ta["per_op"]["translation_memory_refs"] = 1.2                                                 # D = -10%
    large = Pair("gups", None, num, p.den, ta, tb)
    assert large.model_dir == "lower" and large.verdict == "disagree"
