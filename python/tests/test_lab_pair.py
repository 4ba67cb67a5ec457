"""pair=on of the lab's gups and scan programs (goals 2 and 3): the tree and contiguous
arrays on 4k and on the tree's backing timed in turn in one process, each verified, the
arrays' buffers on the backings they asked for; on THP (no reserved pages needed), and
refused on array variants. Skipped unless built (fails under PHYSMEM_LAB_REQUIRE_BUILD=1)."""
import json
import subprocess

import pytest

from conftest import lab_bin


@pytest.fixture(scope="module")
def bin_dir():
    return lab_bin(("gups", "scan"))


def _run(path, *args):
    out = subprocess.run([str(path), *args, "--reps", "3"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("program, variant, extra", [
    ("gups", "tree-index-thp", ("--param", "updates=65536")),
    ("scan", "tree-seg-thp", ("--param", "access=strided")),
    ("scan", "tree-iter-thp", ("--param", "access=strided")),
])
def test_the_tree_and_its_arrays_run_in_turn(bin_dir, program, variant, extra):
    r = _run(bin_dir / f"physmem_lab_{program}", "--variant", variant, "--size", "8M", "--param", "pair=on", *extra)
    assert r["verified"], r["verification"]
    assert set(r["phases"]) == {"array-4k", "array-thp"}
    assert [None, "array-4k", "array-thp"] in r["interleaved"]
    assert all(len(p["ns_per_op"]) == len(r["ns_per_op"]) == 3 for p in r["phases"].values())
    asked = {b["name"]: b["requested"] for b in r["backing"]}
    assert sorted(asked.values()).count("4k") == 1 and set(asked.values()) == {"4k", "thp"}, asked


@pytest.mark.parametrize("program", ["gups", "scan"])
def test_pair_is_refused_on_arrays(bin_dir, program):
    out = subprocess.run([str(bin_dir / f"physmem_lab_{program}"), "--variant", "array-4k", "--size", "1M",
                          "--param", "pair=on"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "variants only" in out.stderr
