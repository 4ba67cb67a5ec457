"""What-if page sizes in the lab (physmem_lab.whatif): the table and figures from a sweep,
nothing raised when programs are missing, and end to end on the real programs (built)."""
from pathlib import Path

from conftest import REPO, lab_bin
from physmem_lab import programs, whatif
from physmem_lab.document import Doc


def _size(b, pw, pm, tw, tm, levels=4, inner=2):
    return {"page_size": "x", "bytes": b,
            "paging": {"walk_levels": levels, "walks": pw, "walk_refs": pw * levels, "memory_refs": pm},
            "tree": {"inner_levels": inner, "walks": tw, "walk_refs": tw * inner, "memory_refs": tm}}


def _results():
    sizes = [_size(4096, 0.5, 0.25, 1.0, 0.5), _size(1 << 16, 0.2, None, 0.4, None),
             _size(1 << 30, 0.0, 0.0, 0.0, 0.0, levels=2, inner=0)]
    k = {"experiment": "gups", "variant": "array-4k", "size_bytes": 1 << 30, "params": {},
         "refs_per_op": 2.0, "sweep": {"machine": "m", "data_refs": 1000, "sizes": sizes}}
    return {"tlbsim": {"whatif": {"kernels": {"gups": k}, "errors": {"chase": "missing"}, "seconds": 1.5}}}


def test_rows_are_per_op_from_per_reference():
    rows = whatif.rows(_results()["tlbsim"]["whatif"]["kernels"]["gups"])
    assert rows[0][1:] == [4, "1", "4", "0.5", 2, "2", "4", "1"]
    assert rows[1][4] == "-" and rows[1][8] == "-"          # no cache model: no memory figure
    assert rows[2][1:] == [2, "0", "0", "0", 0, "0", "0", "0"]


def test_report_shows_the_table_and_the_errors_and_nothing_without_data(tmp_path):
    doc = Doc()
    whatif.report(doc, {})
    assert doc.markdown().strip() == ""
    whatif.report(doc, _results())
    md = doc.markdown()
    assert "What-if page sizes" in md and "chase: not run: missing" in md
    assert "| 64K | 4 | 0.4 | 1.6 | - | 2 | 0.8 | 1.6 | - |" in md
    made = whatif.plots(_results(), tmp_path)
    assert [n for n, _ in made] == ["translation-whatif-walks", "translation-whatif-memory-refs"]
    assert all(p.is_file() for _, p in made)


class _NoPrograms:
    def path(self, exp):
        return None

    def error(self, exp):
        return f"physmem_lab_{exp} not built"


def test_missing_programs_are_errors_not_exceptions(tmp_path):
    logs = []
    out = whatif.run(_NoPrograms(), ["--simulate", "skylake"], ["--preset", "skylake"], logs.append,
                     path=tmp_path / "no-such-tlbsim")
    assert out["kernels"] == {} and set(out["errors"]) == set(whatif.KERNELS)
    assert "0 of 3 kernels" in logs[0]


def test_end_to_end_on_the_built_programs():
    tool = REPO / "build" / "tools" / "physmem-tlbsim"
    d = lab_bin(["gups", "chase", "scan"], "what-if", extra_files=[tool])
    out = whatif.run(programs.Catalog(d), ["--simulate", "skylake", "--sim-caches", "on"],
                     ["--preset", "skylake", "--caches", "on"], lambda s: None, path=tool,
                     size=16 << 20, refs=1 << 14)
    assert out["errors"] == {}
    for name, k in out["kernels"].items():
        sizes = k["sweep"]["sizes"]
        assert [s["bytes"] for s in sizes] == [1 << b for b in range(12, 31)]
        assert k["sweep"]["data_refs"] == 1 << 14 and k["refs_per_op"] > 0
        # 16 MiB of data: past 16 MiB one page and one block hold it all: no walk after warm-up.
        assert sizes[-1]["paging"]["walks"] == 0 and sizes[-1]["tree"]["walks"] == 0, name
        # Larger pages never walk more (the same trace, the same TLB arrays).
        walks = [s["paging"]["walks"] for s in sizes]
        assert all(a >= b for a, b in zip(walks, walks[1:])), (name, walks)
    # 4 KiB pages: the 16 MiB table is 4096 pages, 2.5x the 1600 TLB entries: GUPS walks
    # on a good share of its references (LRU over uniform picks: about 0.6 of them).
    assert out["kernels"]["gups"]["sweep"]["sizes"][0]["paging"]["walks"] > 0.2
