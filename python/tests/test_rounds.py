"""rounds: pooling a point's rounds, per-round views, the order-effect check."""
import statistics

import synth
from physmem_lab import rounds
from physmem_lab.document import Doc
from physmem_lab.schema import validate_results


def _run(rec, rnd, pos):
    rec["run"] = {"round": rnd, "position": pos}
    return rec


def test_pool_concatenates_repetitions_and_recomputes_the_summary():
    a = _run(synth.record("gups", "array-4k", samples=[10, 11, 12]), 0, 3)
    b = _run(synth.record("gups", "array-4k", samples=[20, 21, 22]), 1, 8)
    p = rounds.pool([a, b])
    assert p["ns_per_op"] == [10, 11, 12, 20, 21, 22] and p["reps"] == 6
    assert p["median_ns"] == statistics.median([10, 11, 12, 20, 21, 22])
    assert (p["min_ns"], p["max_ns"]) == (10, 22)
    assert abs(p["rel_spread"] - 12 / 16) < 1e-12
    assert p["counters"]["page_faults"]["per_rep"] == [0] * 6
    assert p["rounds"] == [{"round": 0, "position": 3, "median_ns": 11},
                           {"round": 1, "position": 8, "median_ns": 21}]
    assert "run" not in p and p["verified"]


def test_a_round_that_failed_verification_fails_the_pooled_record():
    a = _run(synth.record("gups", "array-4k"), 0, 0)
    b = _run(synth.record("gups", "array-4k", verified=False), 1, 0)
    assert not rounds.pool([a, b])["verified"]


def test_pooled_records_and_per_round_views_of_a_result_file():
    runs = [_run(synth.record("gups", v, samples=synth.tight(m)), r, i)
            for r in (0, 1) for i, (v, m) in enumerate((("array-4k", 10 + r), ("array-1g", 5)))]
    res = synth.results(rounds.pooled_records(runs))
    res["round_runs"] = runs
    validate_results(res)
    assert [r["variant"] for r in res["records"]] == ["array-4k", "array-1g"]
    views = rounds.per_round(res)
    assert [v["round"] for v in views] == [0, 1]
    assert [r["median_ns"] for r in views[1]["records"]] == [11, 5]


def test_a_point_run_in_one_round_only_is_in_every_rounds_view():
    """A one-off measurement (a device's limit, run in round 0 only) is what every round's
    repetitions are judged against: round 1's view has it too, once; repeated points keep
    their own round's record."""
    runs = [_run(synth.record("gups", "array-4k", samples=synth.tight(10 + r)), r, 0) for r in (0, 1)]
    runs.append(_run(synth.record("gups", "array-1g", samples=synth.tight(5)), 0, 1))
    res = synth.results(rounds.pooled_records(runs))
    res["round_runs"] = runs
    views = rounds.per_round(res)
    assert [[(r["variant"], r["median_ns"]) for r in v["records"]] for v in views] == [
        [("array-4k", 10), ("array-1g", 5)], [("array-4k", 11), ("array-1g", 5)]]


def test_order_effect_flags_a_point_whose_rounds_disagree_beyond_its_noise():
    runs = [_run(synth.record("gups", "array-4k", samples=synth.tight(10)), 0, 0),
            _run(synth.record("gups", "array-4k", samples=synth.tight(17)), 1, 5),
            _run(synth.record("gups", "array-1g", samples=synth.tight(5)), 0, 1),
            _run(synth.record("gups", "array-1g", samples=synth.tight(5.01)), 1, 4)]
    res = synth.results(rounds.pooled_records(runs))
    res["round_runs"] = runs
    rows = {r["key"][1]: r for r in rounds.order_rows(res)}
    assert rows["array-4k"]["flagged"] and not rows["array-1g"]["flagged"]
    assert rows["array-4k"]["rounds"] == [(0, 0, 10), (1, 5, 17)]
    doc = Doc()
    rounds.report(doc, res)
    assert "1 of 2 points are order-sensitive" in doc.markdown()


def test_no_order_section_without_rounds():
    doc = Doc()
    rounds.report(doc, synth.results([synth.record()]))
    assert doc.markdown().strip() == ""
