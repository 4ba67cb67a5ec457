"""The alias suite's own part (seed 002: env-size microkernel, convolution offsets, default
allocations): its report section and goal on synthetic records, and the real programs run
by ``physmem bench --suite alias --scale tiny --only alias_env,alias_conv`` (skipped unless
built; fails under PHYSMEM_LAB_REQUIRE_BUILD=1 like conftest.real_bin)."""

import pytest

import synth
from conftest import lab_bin, tiny_bench
from physmem_lab import analysis, report
from physmem_lab.suite_alias import (SUITE, _TINY_OFFSETS, alias_pairs, conv_sweep, default_allocs,
                                     env_spikes, goals, ranges, slow_offsets)

PROGRAMS = ("alias_env", "alias_conv")
K = 1 << 10
BUILDS = ("o2", "o2-restrict", "o3", "o3-restrict")
STATICS = {"i": 2520, "j": 2524, "k": 2528}


def _env_point(pad, ns, g):
    low12 = {"g": g, "inc": g + 4, **STATICS}
    return {"pad": pad, "env_bytes": 1400 + pad, "aslr": "off", "ns_per_iter": [ns, ns * 1.01],
            "min_ns": ns, "median_ns": ns * 1.005, "max_ns": ns * 1.01, "low12": low12, "counts_ok": True}


def _env(counters="linked"):
    # 0..8 KiB in 16 B steps; the stack's g moves down 16 B per step. Pads 1520 and 5616 put
    # inc on i's low 12 bits (2520) and are 2x slower; pad 5008 is a spike with no pair.
    pts = []
    for pad in range(0, 8 * K + 1, 16):
        g = (4036 - pad) % 4096
        ns = 2.0 if pad in (1520, 5616) else (1.5 if pad == 5008 else 1.0)
        pts.append(_env_point(pad, ns, g))
    r = synth.record("alias_env", "array-4k", 8 * K, [1.0] * 5, params={"counters": counters, "step": "16"})
    r["unit"] = "step"
    r["env_sweep"] = {"step": 16, "iters": 1 << 20, "max_pad": 8 * K, "parent_low12": dict(g=1, inc=5, **STATICS),
                      "counters": NO_PMU, "points": pts}
    return r


NO_PMU = {"cycles": {"available": False, "reason": "perf_event_open: No such file or directory"},
          "address_alias": {"available": False, "reason": "model-specific event of Intel CPUs"}}
PMU = {"cycles": {"available": True, "reason": ""}, "address_alias": {"available": True, "reason": ""}}


def _with_pmu(results):
    """The same results as counted on a machine with the alias event: 1 event per
    iteration / element where a point is slow, 0 elsewhere."""
    for r in results["records"]:
        if r["experiment"] == "alias_env":
            r["env_sweep"]["counters"] = PMU
            for p in r["env_sweep"]["points"]:
                p["cycles_per_iter"], p["alias_per_iter"] = 3.0 * p["min_ns"], float(p["min_ns"] >= 2.0)
        elif r["kind"] == "array":
            r["conv"]["counters"] = PMU
            for b in r["conv"]["builds"]:
                b["cycles_per_elem"] = [3.0 * x for x in b["min_ns"]]
                b["alias_per_elem"] = [float(x >= 1.8 * min(b["min_ns"])) for x in b["min_ns"]]
    return results


def _timing(ns):
    return {"median_ns": ns * 1.01, "min_ns": ns, "max_ns": ns * 1.02, "rel_spread": 0.02}


def _sweep():
    offsets = [0, 1, 2, 4, 16, 512, 1023]
    slow = {0: 2.0, 1: 1.8, 2: 1.4, 1023: 1.1}
    builds = []
    for name in BUILDS:
        scale = 1.0 if name.startswith("o2") else 0.3
        ts = [_timing(scale * slow.get(o, 1.0)) for o in offsets]
        builds.append({"name": name, "flags": "-" + name[:2].upper(), "restrict": "restrict" in name,
                       **{k: [t[k] for t in ts] for k in ("median_ns", "min_ns", "max_ns", "rel_spread")}})
    r = synth.record("alias_conv", "array-4k", 4 << 20, [2.0] * 5, params={"offsets": "x"})
    r["conv"] = {"mode": "offsets", "n": 1 << 20, "in_low12": 0, "offsets": offsets, "counters": NO_PMU,
                 "builds": builds}
    return r


def _malloc(alloc, offset, o2_ns):
    r = synth.record("alias_conv", "malloc-4k", 4 << 20, [o2_ns] * 5, params={"alloc": alloc})
    builds = [{"name": b, "flags": "-O2", "restrict": "restrict" in b,
               **_timing(o2_ns * (1.0 if b.startswith("o2") else 0.3))} for b in BUILDS]
    r["conv"] = {"mode": "malloc", "n": 1 << 20, "alloc": alloc, "active": alloc, "in_low12": 16,
                 "out_low12": (16 + 4 * offset) % 4096, "out_minus_in_bytes": 4198400 + 4 * offset,
                 "offset_floats": offset, "builds": builds}
    return r


def _results(physmem_ns=1.02):
    return synth.results([_env(), _sweep(), _malloc("glibc", 0, 2.0), _malloc("jemalloc", 576, 1.0),
                          _malloc("physmem", 16, physmem_ns)])


def test_spikes_and_alias_pairs_from_the_points():
    r = _env()
    assert [p["pad"] for p in env_spikes(r)] == [1520, 5008, 5616]
    pair = next(p for p in r["env_sweep"]["points"] if p["pad"] == 1520)
    assert alias_pairs(pair["low12"]) == ["inc~i"]
    assert alias_pairs({"g": 1, "inc": 5, **STATICS}) == []
    assert alias_pairs({"g": 2524, "inc": 2528, **STATICS}) == ["g~j", "inc~k"]


def test_conv_best_worst_and_allocator_markers():
    per = conv_sweep(_sweep())
    assert per["o2"]["best"]["offset"] in (4, 16, 512) and per["o2"]["worst"]["offset"] == 0
    assert per["o3"]["worst"]["min_ns"] == pytest.approx(0.6)
    assert slow_offsets(per["o2"]) == [0, 1]         # >= 1.3x the median (1.1)
    assert ranges([1, 2, 3, 10, 30, 996, 1000]) == "1-10, 30, 996-1000" and ranges([]) == "none"
    allocs = default_allocs(analysis.Records(_results()))
    assert allocs["glibc"]["offset"] == 0 and allocs["physmem"]["offset"] == 16
    assert allocs["physmem"]["builds"]["o3"]["min_ns"] == pytest.approx(0.306)


def test_report_section_tables_plots_and_seed_figures(tmp_path):
    md = report.build(_results(), "synthetic", None, tmp_path).markdown()
    assert f"## {SUITE.title}" in md
    # the env table: the aliasing pad with its low 12 bits, and the unexplained spike
    assert "| 1520 | 2920 | 2.000 | 2.00x | yes | 2516 | 2520 | inc~i |" in md
    assert "| 5616 | 7016 | 2.000 | 2.00x | yes | 2516 | 2520 | inc~i |" in md
    assert "2 paddings make an alias pair; their best time is 2.00x-2.00x the median" in md
    assert "| 5008 | 6408 | 1.500 | 1.50x | yes |" in md and "| none |" in md
    assert "the pair is what costs time here" in md
    assert "1 spike without an alias pair (paddings 5008)" in md
    # conv: offset 0 / best / worst per build, the seed's figures beside
    assert "| o2 | -O2 | 2.000 | 1.000 at 4 | 2.000 at 0 | 2.00x | 0-1 |" in md
    assert "o2: offset 0 (equal low 12 bits, malloc's usual default) is 1.82x the sweep's median" in md
    assert "near the worst, as in the seed" in md
    assert "THEIRS (seed 002" in md and "3184 and 7280" in md and "1.69x" in md
    # allocators: where out landed and the time against the sweep's best and worst
    assert "| glibc | 16 | 16 | 0 | 4198400 | 2.000 (2.00x best, 1.00x worst)" in md
    assert "| physmem | 16 | 80 | 16 | 4198464 | 1.020 (1.02x best, 0.51x worst)" in md
    assert "ld_blocks_partial.address_alias" in md and "is measured instead" in md
    assert "address_alias: model-specific event of Intel CPUs" in md and "alias events/iter" not in md
    assert (tmp_path / "plot-alias-env.png").stat().st_size > 1000
    assert (tmp_path / "plot-alias-conv.png").stat().st_size > 1000


def test_alias_counts_shown_where_the_machine_counts_them(tmp_path):
    md = report.build(_with_pmu(_results()), "synthetic", None, tmp_path).markdown()
    assert "| 1520 | 2920 | 2.000 | 2.00x | yes | 2516 | 2520 | inc~i | 6.000 | 1.000 |" in md
    assert "4K-alias events per iteration, median over all paddings: 0.000." in md
    assert "| o2 | -O2 | 2.000 | 1.000 at 4 | 2.000 at 0 | 2.00x | 0-1 | 1.000 / 0.000 / 1.000 |" in md
    assert "was counted here" in md and "is measured instead" not in md


def test_goal_follows_the_numbers():
    g = {x.number: x for x in goals(analysis.Records(_results()))}["alias-1"]
    assert g.verdict == "MET", g.why()             # physmem 1.02x best; glibc at the worst
    assert len(g.items) == 4
    assert g.items[0].ratio.value == pytest.approx(1.02)
    assert any("worst / best = 2.00x" in n for n in g.notes)
    worse = {x.number: x for x in goals(analysis.Records(_results(physmem_ns=1.2)))}["alias-1"]
    assert worse.verdict == "MISSED"
    assert "1.20x > 1.05x" in " ".join(worse.why())
    none = {x.number: x for x in goals(analysis.Records(synth.results([_env()])))}["alias-1"]
    assert none.verdict == "NOT MEASURED" and none.missing


def test_pass_s_scales_with_the_sweeps():
    from physmem_lab.suitedef import Point, Variant
    env = Point("alias_env", Variant("array", "4k"), 8 * K, suite="alias", reps=5, warmup=1, min_rep_ms=5)
    tiny = Point("alias_env", Variant("array", "4k"), 256, suite="alias", reps=5, warmup=1, min_rep_ms=5)
    assert SUITE.pass_s(env, None) > 10 * SUITE.pass_s(tiny, None)
    conv = Point("alias_conv", Variant("array", "4k"), 1 << 20, params={"offsets": "0:1024:1"}, suite="alias", min_rep_ms=5)
    few = Point("alias_conv", Variant("array", "4k"), 1 << 20, params={"offsets": "0,1,2,3"}, suite="alias", min_rep_ms=5)
    assert SUITE.pass_s(conv, None) == pytest.approx(256 * SUITE.pass_s(few, None))


@pytest.fixture(scope="module")
def alias_bin():
    return lab_bin(PROGRAMS)


def test_tiny_bench_on_the_real_programs(alias_bin, tmp_path):
    res = tiny_bench("alias", alias_bin, tmp_path, "--only", ",".join(PROGRAMS))
    assert not res["errors"] and res["records"]
    assert {r["experiment"] for r in res["records"]} == set(PROGRAMS)
    assert all(r["verified"] for r in res["records"])
    envs = [r for r in res["records"] if r["experiment"] == "alias_env"]
    assert {r["params"]["counters"] for r in envs} == {"linked", "12"}
    for r in envs:                               # the series is complete and deterministic
        pts = r["env_sweep"]["points"]
        assert [p["pad"] for p in pts] == list(range(0, r["size_bytes"] + 1, 16))
        assert [p["env_bytes"] - pts[0]["env_bytes"] for p in pts] == [p["pad"] for p in pts]
        assert all(p["aslr"] == "off" and p["counts_ok"] for p in pts)
        assert len({p["low12"]["i"] for p in pts}) == 1          # statics do not move
        assert len({p["low12"]["g"] for p in pts}) > 1           # the stack does
    sweep = [r for r in res["records"] if r["experiment"] == "alias_conv" and r["kind"] == "array"]
    assert len(sweep) == 1
    c = sweep[0]["conv"]
    assert c["offsets"] == [int(x) for x in _TINY_OFFSETS.split(",")]
    assert [b["name"] for b in c["builds"]] == list(BUILDS)
    assert all(len(b["min_ns"]) == len(c["offsets"]) and min(b["min_ns"]) > 0 for b in c["builds"])
    mallocs = {r["conv"]["alloc"]: r["conv"] for r in res["records"] if r["kind"] == "malloc"}
    skipped = [s for s in res["skipped"] if s["experiment"] == "alias_conv"]
    assert "glibc" in mallocs and len(mallocs) + len(skipped) == 5     # not installed: skipped
    for a, m in mallocs.items():
        assert m["active"] == a and 0 <= m["offset_floats"] < 1024
        assert m["offset_floats"] == (m["out_minus_in_bytes"] % 4096) // 4
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {SUITE.title}" in md and "Environment size" in md and "Convolution" in md
    assert (tmp_path / "rep" / "plot-alias-conv.png").exists()
    assert (tmp_path / "rep" / "plot-alias-env.png").exists()
