"""compare: significance on synthetic samples, and when it says unreliable."""
import synth
from physmem_lab.compare import compare, format_comparison


def _pair(a_samples, b_samples, **kw):
    a = synth.results([synth.record(samples=a_samples)])
    b = synth.results([synth.record(samples=b_samples, **kw)])
    return compare(a, b)


def test_real_shift_is_significant():
    c = _pair([1.00, 1.01, 0.99, 1.02, 1.00, 1.01, 0.99],
              [1.20, 1.21, 1.19, 1.22, 1.20, 1.18, 1.21])
    (row,) = c["rows"]
    assert row.significant and row.p < 0.05 and abs(row.ratio - 1.2) < 0.02
    assert not row.unreliable
    assert "SLOWER" in format_comparison(c)


def test_same_distribution_is_not_significant():
    c = _pair([1.00, 1.03, 0.98, 1.02, 1.01], [1.01, 0.99, 1.02, 1.00, 1.03])
    (row,) = c["rows"]
    assert not row.significant and row.p > 0.05
    assert "not significant" in format_comparison(c)


def test_too_few_reps_is_unreliable():
    c = _pair([1.0, 1.01], [2.0, 2.01])
    (row,) = c["rows"]
    assert not row.significant          # 2 vs 2 samples can never reach p < 0.05
    assert any("reps" in u for u in row.unreliable)
    assert "RESULTS UNRELIABLE" in format_comparison(c)


def test_high_spread_and_other_backing_are_unreliable():
    c = _pair(synth.tight(1.0), [1.0, 1.3, 0.9, 1.1, 1.0], obtained="4k")
    (row,) = c["rows"]
    assert any("spread" in u for u in row.unreliable)


def test_backing_difference_flagged():
    a = synth.results([synth.record(variant="array-thp", samples=synth.tight(1.0))])
    b = synth.results([synth.record(variant="array-thp", samples=synth.tight(1.0), obtained="4k")])
    (row,) = compare(a, b)["rows"]
    assert any("backings differ" in u for u in row.unreliable)


def test_machines_differ():
    a = synth.results([synth.record()])
    b = synth.results([synth.record()])
    b["machine"]["cpu_model"] = "another CPU"
    c = compare(a, b)
    assert c["machine_differences"]
    assert "machines differ" in format_comparison(c)
