"""The algorithms suite: goals on synthetic records (MET, MISSED per goal, UNSTABLE across
rounds, NOT MEASURED), its report section, and the real programs run by ``physmem bench
--suite algorithms --scale tiny`` (skipped unless built; fails under
PHYSMEM_LAB_REQUIRE_BUILD=1), including a kernel whose result is made wrong."""
import json
import subprocess

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis, report, stability
from physmem_lab.suite_algorithms import EXPS, GOAL_TITLES, SUITE, goals

M = 1 << 20
SIZES = (256 << 10, 64 * M)
KERNELS = [("range_for", "loop"), ("iterator", "loop"), ("index", "index"), ("random_index", "random"),
           ("random_floor", "floor"), ("std_sort", "sort"), ("physmem_sort", "physmem-sort"), ("accumulate", "segmented"),
           ("copy_out", "segmented")]
# tree / vector ratios that meet every goal (at -O2, the strictest targets)
GOOD = {"range_for": 1.4, "iterator": 1.4, "index": 1.9, "random_index": 1.05, "random_floor": 1.0, "std_sort": 1.05,
        "physmem_sort": 1.2, "accumulate": 1.0, "copy_out": 1.02}


def _rec(exp, variant, size, ratios, scale=1.0, vector=1.0, beside=True):
    """A record whose kernel k takes ratios[k] * scale ns; beside (a tree or paged record):
    with the vector's timing of every kernel (`vector` ns), paired with the container's."""
    ks = [{"name": k, "group": g, "what": k, "ops_per_pass": 1, "phase": None if k == "range_for" else k}
          for k, g in KERNELS]
    main = ratios["range_for"] * scale
    phases = {k: synth.phase(synth.tight(ratios[k] * scale)) for k, _ in KERNELS[1:]}
    if beside:
        phases.update({k + "@vector": synth.phase(synth.tight(vector)) for k, _ in KERNELS})
    r = synth.record(exp, variant, size, synth.tight(main), phases=phases)
    if beside:
        r["interleaved"] = [[None if k == "range_for" else k, k + "@vector"] for k, _ in KERNELS]
    r["algorithms"] = {"build": exp[-2:].upper(), "kernel_flags": "-" + exp[-2:].upper(),
                       "container": "std::vector", "work": 4096, "kernels": ks,
                       "beside": "std::vector" if beside else None}
    return r


def _results(tree=None, paged_over_tree=1.0, vector_alone=False):
    """Tree and paged records, each with the vector timed beside it (the paged process's
    vector 1.3x slower than the tree's: the ratio of each is to its own process's vector);
    vector_alone: the earlier shape, a vector record of its own and none beside."""
    tree = {**GOOD, **(tree or {})}
    recs = []
    for e in EXPS:
        for size in SIZES:
            if vector_alone:
                recs.append(_rec(e, "array-thp", size, {k: 1.0 for k, _ in KERNELS}, beside=False))
            recs.append(_rec(e, "tree-thp", size, tree, beside=not vector_alone))
            recs.append(_rec(e, "paged-thp", size, tree, paged_over_tree * (1.0 if vector_alone else 1.3),
                             vector=1.3, beside=not vector_alone))
    return synth.results(recs)


def _verdicts(res):
    return {g.number: g.verdict for g in goals(analysis.Records(res))}


def test_goals_met():
    v = _verdicts(_results())
    assert v == {f"algorithms-{n}": "MET" for n in GOAL_TITLES}


def test_records_of_a_vector_run_alone_are_still_judged():
    assert _verdicts(_results(vector_alone=True)) == {f"algorithms-{n}": "MET" for n in GOAL_TITLES}
    assert _verdicts(_results({"index": 2.5}, vector_alone=True))["algorithms-3"] == "MISSED"


def test_ratios_to_the_vector_pair_the_repetitions_run_side_by_side():
    """The tree and its vector both ran slow in the last three repetitions (the machine, not
    the container): paired, tree / vector is 1.00x throughout; compared as medians and
    extremes across, the range would be 0.56-1.80."""
    res = _results()
    slow = [1.0, 1.0, 1.8, 1.8, 1.8]
    for r in res["records"]:
        if r["variant"] == "tree-thp":
            r["phases"]["iterator"] = synth.phase(slow)
            r["phases"]["iterator@vector"] = synth.phase(slow)
    g = next(x for x in goals(analysis.Records(res)) if x.number == "algorithms-2")
    cells = [i.ratio.cell() for i in g.items if "iterator" in i.what]
    assert cells and all(c == "1.00x [1.00-1.00]" for c in cells), cells


@pytest.mark.parametrize("tree, missed", [
    ({"accumulate": 1.2}, {1}),                  # a segmented algorithm over 1.05x
    ({"iterator": 1.6}, {2}),                    # over 1.5x at -O2 (within 2.0x at -O3)
    ({"index": 2.5}, {3}),
    ({"random_index": 1.2}, {4}),
    ({"std_sort": 1.2}, {6}),                    # within 1.3x, over the fastest sort's 1.1x
    ({"std_sort": 1.5}, {5, 6}),
    ({"std_sort": 1.5, "physmem_sort": 1.05}, {5}),  # physmem::sort is the fastest: goal 6 on it
    ({"physmem_sort": 1.5}, set()),              # not std::sort (goal 5); std_sort is goal 6's fastest
])
def test_goals_missed(tree, missed):
    v = _verdicts(_results(tree))
    assert {int(n.split("-")[1]) for n, x in v.items() if x == "MISSED"} == missed
    assert all(x == "MET" for n, x in v.items() if int(n.split("-")[1]) not in missed)


def test_o3_targets_are_wider():
    """range-for at 1.8x: missed at -O2 (1.5x), met at -O3 (2.0x)."""
    g = next(x for x in goals(analysis.Records(_results({"range_for": 1.8}))) if x.number == "algorithms-2")
    assert g.verdict == "MISSED"
    assert {i.what.split()[0]: i.met for i in g.items if "range_for" in i.what} == {"-O2": False, "-O3": True}


def test_goals_judged_at_the_largest_size_only():
    res = _results()
    for i, r in enumerate(res["records"]):   # the in-cache size far over every target: no effect
        if r["size_bytes"] == SIZES[0]:
            res["records"][i] = _rec(r["experiment"], r["variant"], r["size_bytes"], GOOD, 9.0)
    assert set(_verdicts(res).values()) == {"MET"}
    assert all("64M" in i.what for g in goals(analysis.Records(res)) for i in g.items)


def test_paged_within_tree():
    assert _verdicts(_results(paged_over_tree=1.2))["algorithms-7"] == "MISSED"
    assert _verdicts(_results(paged_over_tree=1.05))["algorithms-7"] == "MET"


def _with_floor(floor: float, tree: float, paged_floor: float = 9.0):
    res = _results(paged_over_tree=1.0)
    for r in res["records"]:
        if r["variant"] == "tree-thp":
            if floor:
                r["phases"]["random_floor@vector"] = synth.phase(synth.tight(floor))
            else:
                r["phases"].pop("random_floor@vector", None)
            r["phases"]["random_index"] = synth.phase(synth.tight(tree))
        if r["variant"] == "paged-thp":
            r["phases"]["random_floor"] = synth.phase(synth.tight(paged_floor))
    return {g.number: g for g in goals(analysis.Records(res))}


def test_the_random_goal_is_judged_against_the_walk_floor():
    """algorithms-4 asks the tree's random a[i] for 1.10x the cheapest software walk
    (random_floor, timed beside it), not 1.10x the vector, which no walk can reach on a CPU
    where that floor is above it: 1.30x the vector over a floor of 1.25x is 1.04x, met;
    1.45x over it is 1.16x, missed. The tree / vector ratio and the floor stay in the notes.
    algorithms-7 skips the control (a paged / tree ratio of a control that ran on vectors
    would be 9.0 / 1.0 here and fail)."""
    gs = _with_floor(1.25, 1.30)
    four = gs["algorithms-4"]
    assert [i.what.split(" ", 2)[2] for i in four.items] == ["random_index: tree / the cheapest walk (random_floor)"] * len(EXPS)
    assert all(abs(i.ratio.value - 1.30 / 1.25) < 1e-9 for i in four.items)
    assert four.verdict == "MET"
    notes = [n for n in four.notes if "floor" in n]
    assert len(notes) == len(EXPS) and all("here: 1.25x" in n and "the vector's: 1.30x" in n for n in notes), notes
    assert gs["algorithms-7"].verdict == "MET"
    assert not [i for i in gs["algorithms-7"].items if "random_floor" in i.what]
    assert _with_floor(1.25, 1.45)["algorithms-4"].verdict == "MISSED"


def test_a_floor_measured_below_the_vector_asks_no_more_than_the_vector():
    """Noise can put the floor (the vector's updates and a load more) under the vector's own
    updates: then the bar is the vector, not a floor that would ask more than the issue's
    1.10x (1.08x the vector over a floor of 0.97x would be 1.11x)."""
    four = _with_floor(0.97, 1.08)["algorithms-4"]
    assert all(i.what.endswith("random_index: tree / vector (the floor measured below it)") for i in four.items)
    assert four.verdict == "MET"
    assert _with_floor(0.97, 1.12)["algorithms-4"].verdict == "MISSED"


def test_without_a_floor_the_random_goal_is_judged_against_the_vector():
    """Records without random_floor (before the control existed) keep the vector as the bar."""
    four = _with_floor(0, 1.30)["algorithms-4"]
    assert all(i.what.endswith("random_index: tree / vector") for i in four.items), [i.what for i in four.items]
    assert four.verdict == "MISSED"
    assert _with_floor(0, 1.05)["algorithms-4"].verdict == "MET"


def test_rounds_that_disagree_are_unstable():
    res = _results()
    r0 = _results()["records"]
    r1 = _results({"iterator": 1.7})["records"]
    for i, r in enumerate(r0):
        r["run"] = {"round": 0, "position": i}
    for i, r in enumerate(r1):
        r["run"] = {"round": 1, "position": i}
    res["round_runs"] = r0 + r1
    res["records"] = _results({"iterator": 1.45})["records"]   # pooled: met
    g = {x.number: x for x in stability.goals(res)}
    assert g["algorithms-2"].verdict == "UNSTABLE"
    assert g["algorithms-1"].verdict == "MET"


def test_not_measured_without_records():
    assert set(_verdicts(synth.results([])).values()) == {"NOT MEASURED"}


def test_report_section():
    md = report.build(_results(), "synthetic", None, None).markdown()
    assert md.count(f"## {SUITE.title}") == 1
    assert "### 64M per array" in md and "### 256K per array" in md
    assert "| iterator | loop | 1 | 1.40x [" in md
    assert "tree / vector -O2" in md and "paged / tree -O3" in md


@pytest.fixture(scope="module")
def algo_bin():
    return lab_bin(EXPS)


def test_tiny_bench_on_the_real_programs(algo_bin, tmp_path):
    res = tiny_bench("algorithms", algo_bin, tmp_path, "--no-reserve")
    assert not res["errors"], res["errors"]
    got = {(r["experiment"], r["kind"]) for r in res["records"]}
    assert got == {(e, k) for e in EXPS for k in ("tree", "paged")}
    for r in res["records"]:
        a = r["algorithms"]
        assert r["verified"] and a["build"] == r["experiment"][-2:].upper()
        assert a["kernel_flags"] == ("-" + a["build"] + " -falign-loops=64 -falign-jumps=64 --param=align-loop-iterations=1"
                                     " --param=inline-unit-growth=400")  # lab/cmake/algorithms.cmake
        names = [k["name"] for k in a["kernels"]]
        assert set(names[1:]) | {k + "@vector" for k in names} == set(r["phases"]) and names[0] == "range_for"
        assert a["beside"] == "std::vector"   # every kernel timed in turn with the vector's
        # timed in an order of the process's own (the list's kernels once each, the floor right
        # after random_index), each beside the vector's
        order = a["order"]
        assert sorted(order) == sorted(names) and isinstance(a["order_seed"], int)
        assert order[order.index("random_index") + 1] == "random_floor"
        assert r["interleaved"] == [[None if k == "range_for" else k, k + "@vector"] for k in order]
        assert {k["group"] for k in a["kernels"]} == {"loop", "index", "random", "floor", "sort", "physmem-sort", "segmented"}
        if r["kind"] != "array":
            assert "each of 40 kernels" in r["verification"] and r["tree"]["leaf_elements"] > 0
        assert all(b["obtained"] == "thp" for b in r["backing"]), r["backing"]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "algorithms-7" in md
    assert "each process times the kernels in an order of its own" in md


@pytest.mark.parametrize("kernel", ["find", "copy_shift", "std_sort", "physmem_sort", "random_floor"])
def test_a_wrong_result_is_an_unverified_record(algo_bin, kernel):
    """The check is real: a kernel whose result is altered (the program's test hook) makes
    the record unverified and the program exit 1, which the harness counts as an error."""
    p = subprocess.run([str(algo_bin / "physmem_lab_algorithms_o2"), "--variant", "tree-thp", "--size", "256K",
                        "--reps", "1", "--warmup", "0", "--min-rep-ms", "1", "--param", "work=1024",
                        "--param", f"corrupt={kernel}"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    assert f"({kernel}: result" in p.stdout and '"verified":false' in p.stdout


def test_each_process_times_the_kernels_in_an_order_of_its_own(algo_bin):
    """Without --param order-seed two processes shuffle the kernels differently (a process's
    speed drifts as it runs, so a fixed order would give each kernel the same moment in
    every round); a seed repeats an order; --param order=listed keeps kernels_impl.hpp's."""
    def order(*params):
        argv = [str(algo_bin / "physmem_lab_algorithms_o2"), "--variant", "tree-4k", "--size", "256K", "--reps", "1",
                "--warmup", "0", "--min-rep-ms", "0"]
        for p in params:
            argv += ["--param", p]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        a = json.loads(p.stdout)["algorithms"]
        return a["order"], a["order_seed"]
    (o1, s1), (o2, s2) = order(), order()
    assert s1 != s2 and o1 != o2
    assert order(f"order-seed={s1}") == (o1, s1)
    listed, seed = order("order=listed")
    assert seed is None and listed[:5] == ["range_for", "iterator", "index", "random_index", "random_floor"]
