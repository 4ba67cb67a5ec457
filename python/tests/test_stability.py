"""Verdicts across rounds and the sanity checks, on synthetic records."""
import synth
from physmem_lab import rounds, sanity, stability
from physmem_lab.report import build

G = 1 << 30


def _gups_round(rnd, ms):
    """One round of gups at 1 GiB: ``ms`` maps variant -> median ns."""
    out = []
    for pos, (v, m) in enumerate(ms.items()):
        r = synth.record("gups", v, G, synth.tight(m), {"updates": "4194304"})
        r["run"] = {"round": rnd, "position": pos}
        out.append(r)
    return out


def _results(*round_medians):
    runs = [r for n, ms in enumerate(round_medians) for r in _gups_round(n, ms)]
    res = synth.results(rounds.pooled_records(runs), suite="lab")
    res["round_runs"] = runs
    return res


def _goal3(res):
    return next(g for g in stability.goals(res) if g.number == 3)


OK = {"array-4k": 100, "array-1g": 40, "tree-index-1g": 44}      # 93% of the cost recovered: met


def test_goal_met_when_every_round_meets_it():
    g = _goal3(_results(OK, dict(OK, **{"tree-index-1g": 45})))
    assert [r.measured for r in g.rounds] == ["MET", "MET"] and g.verdict == "MET"


def test_goal_missed_when_every_round_misses_it():
    miss = dict(OK, **{"tree-index-1g": 80})                     # 33% recovered
    assert _goal3(_results(miss, miss)).verdict == "MISSED"


def test_rounds_that_disagree_make_the_goal_unstable_with_their_numbers():
    res = _results(OK, dict(OK, **{"tree-index-1g": 50}))        # 83% recovered in round 1
    g = _goal3(res)
    assert g.verdict == "UNSTABLE"
    lines = stability.round_numbers(g)
    assert lines[0].startswith("round 0: MET") and lines[1].startswith("round 1: MISSED")
    assert "83% recovered" in lines[1]
    md = build(res, "synthetic").markdown()
    assert "UNSTABLE" in md and "rounds disagree: round 1: MISSED" in md


def test_without_rounds_the_plain_verdict_stands():
    res = synth.results([synth.record("gups", v, G, synth.tight(m)) for v, m in OK.items()])
    g = _goal3(res)
    assert g.rounds == [] and g.verdict == "MET"


def test_a_tree_beating_its_array_beyond_the_noise_is_flagged_and_not_judged():
    bad = {"array-4k": 90, "array-1g": 34, "tree-index-1g": 20}  # issue 16's run
    res = _results(bad, bad)
    found = sanity.findings(res)
    assert [(f.ratio.num["variant"], f.ratio.den["variant"]) for f in found] == [
        ("tree-index-1g", "array-1g")]
    assert _goal3(res).verdict == "IMPLAUSIBLE"
    md = build(res, "synthetic").markdown()
    assert "IMPOSSIBLE: gups 1G: tree-index-1g / array-1g" in md


def test_anything_faster_than_array_1g_is_flagged_but_a_tie_within_noise_is_not():
    res = _results({"array-4k": 30, "array-thp": 40.2, "array-1g": 40})
    assert [f.ratio.num["variant"] for f in sanity.findings(res)] == ["array-4k"]
    assert "no-translation limit" in sanity.findings(res)[0].rule


def test_overlapping_ranges_are_noise_not_impossible():
    runs = _gups_round(0, {})
    for v, samples in (("array-4k", [10, 12, 14]), ("tree-index-4k", [9, 11, 13])):
        r = synth.record("gups", v, G, samples)
        r["run"] = {"round": 0, "position": len(runs)}
        runs.append(r)
    res = synth.results(rounds.pooled_records(runs))
    assert sanity.findings(res) == [] and sanity.checked_pairs(res) == 1


def test_an_impossible_round_is_listed_even_when_the_pooled_numbers_are_not():
    good = {"array-1g": 40, "tree-index-1g": 44}
    res = _results(good, {"array-1g": 60, "tree-index-1g": 44})      # round 1: tree 0.73x
    assert sanity.findings(res) == []
    md = build(res, "synthetic").markdown()
    assert "round 1 alone: gups 1G: tree-index-1g / array-1g" in md
    assert "round 0 alone" not in md


def test_two_repetitions_are_too_few_to_call_anything_impossible():
    runs = []
    for v, samples in (("array-1g", [40, 41]), ("tree-index-1g", [20, 21])):
        r = synth.record("gups", v, G, samples)
        r["run"] = {"round": 0, "position": len(runs)}
        runs.append(r)
    res = synth.results(rounds.pooled_records(runs))
    assert sanity.findings(res) == [] and sanity.checked_pairs(res) == 1


def test_a_verdict_never_contradicts_the_pooled_numbers_beside_it():
    """The main job's goal 3 read MET beside a pooled '85% recovered (under >= 90%)': the
    one round that measured it met, the other did not apply. Such a goal is UNSTABLE."""
    from types import SimpleNamespace
    from physmem_lab.analysis import Goal, Item

    def item(v):
        return Item("share", SimpleNamespace(value=v), 0.9, at_least=True)

    pooled = Goal(3, "recover", items=[item(0.85)])
    met_round, na_round = Goal(3, "r0", items=[item(0.95)]), Goal(3, "r1", not_applicable=["cheap"])
    pooled.rounds = [met_round, na_round]
    assert pooled.measured == "MISSED" and pooled.verdict == "UNSTABLE"
    pooled.items = [item(0.93)]
    assert pooled.verdict == "MET"
