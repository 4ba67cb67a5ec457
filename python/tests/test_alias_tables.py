"""alias_tables (seed 002): dgemv sweep and low-12 tables, their goal, on synthetic
records and on records from the real programs."""
import json
import subprocess

import pytest

from physmem_lab import alias_tables as at
from physmem_lab.analysis import Records
from physmem_lab.document import Doc
from physmem_lab.schema import validate_record
from synth import record


def _low12(alloc, shares_from=None, live=4):
    sizes = []
    for s in (1 << 12, 1 << 16, 1 << 20):
        alias = shares_from is not None and s >= shares_from
        sizes.append({"size": s, "low12": [16] * live if alias else [64 * i for i in range(live)],
                      "pair_shares": alias, "distinct": 1 if alias else live})
    r = record("low12", "malloc-4k", 1 << 20, params={"alloc": alloc})
    r.update(allocator=alloc, sizes=sizes)
    return r


def _dgemv(blas, spike_at=(16, 32)):
    sweep = [{"offset": o, "y_low12": o, "median_ns": 2.0 if o in spike_at else 1.0,
              "min_ns": 1.0, "max_ns": 2.0, "rel_spread": 0.01} for o in range(0, 4096, 16)]
    r = record("dgemv", "array-4k", 8 << 20, params={"blas": blas})
    r.update(sweep=sweep, blas_library=f"/lib/{blas}.so", matrix={"m": 1024, "n": 1024})
    return r


def _results(*recs):
    return {"records": list(recs), "skipped": [], "errors": []}


def test_goal_met_when_physmem_staggers_and_peers_listed():
    recs = Records(_results(_low12("physmem"), _low12("glibc", shares_from=1 << 16)))
    (g,) = at.goals(recs)
    assert g.verdict == "MET"
    assert any("glibc: 2 of 2 sizes >= 64K alias" in n for n in g.notes)


def test_goal_missed_when_physmem_aliases_a_large_size():
    (g,) = at.goals(Records(_results(_low12("physmem", shares_from=1 << 20))))
    assert g.verdict == "MISSED" and g.items[0].ratio.cell() == "1 of 2 sizes >= 64K"


def test_goal_not_measured_without_physmem():
    (g,) = at.goals(Records(_results(_low12("glibc"))))
    assert g.verdict == "NOT MEASURED"


def test_spikes_and_summary_of_a_sweep():
    r = _dgemv("reference")
    assert [p["offset"] for p in at.spikes(r)] == [16, 32]
    s = at.dgemv_summary(r)
    assert s["worst"]["offset"] == 16 and s["median"] == 1.0 and s["at0"]["median_ns"] == 1.0


def test_report_sections_and_plot(tmp_path):
    doc = Doc()
    recs = Records(_results(_low12("glibc", 1 << 16), _low12("physmem"), _dgemv("openblas", ()),
                            _dgemv("reference")))
    at.report(doc, recs, {}, tmp_path)
    md = doc.markdown()
    assert "Low 12 bits of equal buffers" in md and "010 010 ALIAS" in md
    assert "0x10, 0x20" in md and "THEIRS" in md
    assert (tmp_path / "plot-alias-dgemv.png").exists()


@pytest.fixture(scope="module")
def programs(real_bin):
    for p in ("dgemv", "low12"):
        if not (real_bin / f"physmem_lab_{p}").is_file():
            pytest.skip(f"physmem_lab_{p} not built")
    return real_bin


def _run(path, *args):
    p = subprocess.run([str(path), *args, "--reps", "2", "--warmup", "0", "--min-rep-ms", "0"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    validate_record(rec)
    assert rec["verified"]
    return rec


def test_real_programs_feed_the_tables(programs, tmp_path):
    recs = [_run(programs / "physmem_lab_low12", "--variant", "malloc-4k", "--size", "1M",
                 "--param", f"alloc={a}") for a in ("glibc", "physmem")]
    assert [r["allocator"] for r in recs] == ["glibc", "physmem"]
    recs += [_run(programs / "physmem_lab_dgemv", "--variant", "array-4k", "--size", "128K",
                  "--param", f"blas={b}", "--param", "offsets=0:256:16") for b in at.BLASES]
    sweep = recs[-1]["sweep"]
    assert [p["offset"] for p in sweep] == list(range(0, 257, 16))
    assert all(p["y_low12"] == p["offset"] for p in sweep)
    (g,) = at.goals(Records(_results(*recs)))
    assert g.verdict == "MET", g.items[0].ratio.cell()   # physmem staggers (physmem.h)
    doc = Doc()
    at.report(doc, Records(_results(*recs)), {}, tmp_path)
    assert "cblas_dgemv" in doc.markdown()


def test_bad_offsets_are_a_usage_error(programs):
    p = subprocess.run([str(programs / "physmem_lab_dgemv"), "--variant", "array-4k", "--size",
                        "128K", "--param", "offsets=0:5000:16"], capture_output=True, text=True)
    assert p.returncode == 2 and "offsets" in p.stderr
