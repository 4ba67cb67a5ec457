"""load: other processes' CPU share per point, 'contended', and where the report shows it."""
import subprocess
import sys

import synth
from physmem_lab import analysis, load, rounds


def test_meter_counts_the_childs_own_cpu_as_ours_not_as_others():
    with load.Meter() as m:
        subprocess.run([sys.executable, "-c", "sum(range(3 * 10**7))"], check=True)
    rec = m.record()
    assert set(rec) == {"others_cpu", "steal", "cpus", "own_cpu_s"} and rec["cpus"] >= 1
    assert rec["own_cpu_s"] > 0.1
    assert 0.0 <= rec["others_cpu"] <= 1.0 and 0.0 <= rec["steal"] <= 1.0


def test_contended_means_no_core_left_free_for_the_measured_process():
    assert not load.contended({"others_cpu": 0.5, "cpus": 2, "steal": 0})   # one core busy
    assert load.contended({"others_cpu": 0.8, "cpus": 2, "steal": 0})
    assert not load.contended({"others_cpu": 0.8, "cpus": 8, "steal": 0})
    assert not load.contended(None)


def test_a_contended_round_is_kept_in_the_pooled_record_and_warned_about():
    runs = []
    for rnd, others in ((0, 0.3), (1, 0.9)):
        r = synth.record("gups", "array-4k")
        r["run"] = {"round": rnd, "position": 0}
        r["machine_load"] = {"others_cpu": others, "steal": 0.0, "cpus": 2}
        runs.append(r)
    pooled = rounds.pool(runs)
    assert "machine_load" not in pooled
    assert [x["machine_load"]["others_cpu"] for x in pooled["rounds"]] == [0.3, 0.9]
    warns = analysis.warnings(synth.results([pooled]))
    assert any("left no core free" in w and "round 1: 90%" in w and "round 0" not in w
               for w in warns)


def test_order_section_says_when_the_load_was_not_recorded():
    from physmem_lab.document import Doc
    runs = []
    for rnd, m in ((0, 10), (1, 20)):
        r = synth.record("gups", "array-4k", samples=synth.tight(m))
        r["run"] = {"round": rnd, "position": 0}
        runs.append(r)
    res = synth.results(rounds.pooled_records(runs))
    res["round_runs"] = runs
    doc = Doc()
    rounds.report(doc, res)
    assert "does not record the machine's load" in doc.markdown()
    for r, o in zip(runs, (0.9, 0.2)):
        r["machine_load"] = {"others_cpu": o, "steal": 0.0, "cpus": 2, "own_cpu_s": 1.0}
    doc = Doc()
    rounds.report(doc, res)
    assert "1 of 1 points are order-sensitive, 1 of them" in doc.markdown()
    assert "90% / 20% (contended)" in doc.markdown()
