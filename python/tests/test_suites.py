"""Suite sizing: memory limits, time budgets, caps, 1 GiB page needs."""
from physmem_lab import suite_lab, suites
from physmem_lab.machine import sizing_note, summary_lines
from physmem_lab.suitedef import Point, Variant, geometric

G, M = 1 << 30, 1 << 20


class Declared:
    """A Catalog stand-in: 1 GiB pages beside the data as the lab's programs declare them
    (--list: trees and pools map their inner blocks separately)."""

    def extra_1g_pages(self, experiment, kind):
        return 0 if kind in ("array", "malloc") else 1


def test_tiny_suite_is_quick_and_covers_every_experiment():
    pl = suites.plan("tiny", mem_available=20 * G)
    assert pl.total_est_s < 60
    assert {p.experiment for p in pl.points} == {r.experiment for r in suite_lab.TABLE}
    assert pl.reps <= 2
    assert max(p.size_bytes for p in pl.points) <= 4 * M


MACHINE = {"caches": {"l1d": 32 << 10, "l2": 512 << 10, "llc": 32 * M}}


def test_default_suite_fits_its_budget():
    pl = suites.plan("default", mem_available=21 * G, catalog=Declared(), machine=MACHINE)
    assert pl.total_est_s <= suite_lab.SCALES["default"]["budget_s"] and not pl.dropped
    assert {(p.rounds, p.round_reps(p.reps)) for p in pl.points} == {(2, 3)}
    assert {p.adaptive(3) for p in pl.points} == {(2, 0.05)}
    scan = [p for p in pl.points if p.experiment == "scan"]
    assert {"array-4k", "tree-seg-1g", "tree-iter-thp", "tree-index-1g"} <= {p.name for p in scan}
    gups = [p for p in pl.points if p.experiment == "gups"]
    assert all(p.params["updates"] == str(suite_lab.UPDATES_CAP) for p in gups)
    assert pl.pages_1g_needed() == 4     # a 1 GiB tree: data + inner blocks, its paired 1g table, one spare
    assert suites.plan("default", mem_available=21 * G).pages_1g_needed() == 3  # none declared: data, table, spare
    assert suites.reservation_pages(8, 10 * G) == 5


def test_default_sizes_follow_the_caches():
    def scan_sizes(machine, access):
        pl = suites.plan("default", mem_available=21 * G, machine=machine, only=["scan"])
        return sorted({p.size_bytes for p in pl.points if p.params["access"] == access})
    assert scan_sizes(MACHINE, "linear") == [16 << 10, 256 << 10, 128 * M]
    assert scan_sizes(MACHINE, "strided") == [128 * M, G]      # 1 GiB: goal 2's variants
    other = {"caches": {"l1d": 48 << 10, "l2": 2 * M, "llc": 24 * M}}
    assert scan_sizes(other, "linear") == [32 << 10, M, 128 * M]
    assert scan_sizes({}, "linear") == scan_sizes(MACHINE, "linear")   # common sizes


def test_a_guests_huge_llc_keeps_every_point_within_the_budget_and_says_so():
    """A VM that reports its socket's 480 MiB L3: the default scale sizes from 32 MiB of it
    (before, 2-4x 480 MiB put every past-the-cache point of lab, algorithms and protect over
    their budgets: left out, their goals NOT MEASURED); --full sizes from the whole."""
    big = {"caches": {**MACHINE["caches"], "llc": 480 * M}}
    for name in ("lab", "algorithms", "protect"):
        pl = suites.plan(name, mem_available=21 * G, catalog=Declared(), machine=big)
        small = suites.plan(name, mem_available=21 * G, catalog=Declared(), machine=MACHINE)
        assert not pl.dropped, (name, pl.dropped)
        assert sorted((p.experiment, p.name, p.size_bytes) for p in pl.points) == \
            sorted((p.experiment, p.name, p.size_bytes) for p in small.points), name
    full = suites.plan("protect", scale="full", mem_available=64 * G, machine=big)
    assert max(p.size_bytes for p in full.points) == 4 * G        # 8 x 480 MiB, rounded up
    assert "480 MiB" in sizing_note(big) and sizing_note(MACHINE) is None
    assert any("480 MiB" in line for line in summary_lines(big))


def test_memory_limits_drop_large_points_and_say_why():
    pl = suites.plan("default", mem_available=1 * G)
    assert max(p.size_bytes for p in pl.points) < G
    assert suites.plan("default", mem_available=2 * G).points[-1]   # 1 GiB arrays fit in 2
    assert any("MemAvailable" in d for d in pl.dropped)


def test_full_suite_sizes_follow_memory():
    small = suites.plan("full", mem_available=8 * G)
    big = suites.plan("full", mem_available=200 * G)
    assert max(p.size_bytes for p in big.points) == 64 * G
    assert max(p.size_bytes for p in small.points) < 8 * G


def test_budget_drops_sweeps_before_goal_points():
    full_est = suites.plan("full", mem_available=21 * G, budget_s=1e9)
    pl = suites.plan("full", mem_available=21 * G, budget_s=full_est.total_est_s - 1)
    assert pl.total_est_s <= full_est.total_est_s - 1
    assert all(p.priority < 2 for p in full_est.points if p not in pl.points) or pl.dropped
    over = [d for d in pl.dropped if "time budget" in d]
    assert over and "block=" in over[0]


def test_official_gups_and_only():
    pl = suites.plan("default", only=["gups"], official=True, mem_available=21 * G)
    assert {p.experiment for p in pl.points} == {"gups"}
    assert all(p.params["updates"] == "official" for p in pl.points)


def test_point_pages_1g():
    assert Point("scan", Variant("array", "1g"), G).pages_1g() == 1
    assert Point("scan", Variant("tree-seg", "1g"), G, extra_1g_pages=1).pages_1g() == 2
    assert Point("scan", Variant("array", "4k"), G, extra_1g_pages=1).pages_1g() == 0
    assert Point("blackscholes", Variant("array", "1g"), 64 * M, {"layout": "soa"}).pages_1g() == 1


def test_points_take_what_the_programs_and_the_machine_declare():
    pts = suites.expand("lab", only=["scan"], scale="tiny", catalog=Declared())
    assert {(p.kind, p.extra_1g_pages) for p in pts} >= {("array", 0), ("tree-seg", 1)}
    alloc = suites.expand("alloc", scale="tiny", machine={"cores_available": 3})
    assert {p.params.get("threads") for p in alloc if p.params["workload"] == "larson"} == {"3"}
    assert all("threads" not in p.params for p in alloc if p.params["workload"] == "small-churn")
    assert all("threads" not in p.params for p in suites.expand("alloc", scale="tiny"))


def test_suite_specs_legacy_names_lists_and_errors():
    assert suites.parse_spec("tiny") == [("lab", "tiny")]
    assert suites.parse_spec("lab", "full") == [("lab", "full")]
    every = suites.parse_spec("all", "tiny")
    assert [n for n, _ in every] == list(suites.registry())
    assert all(sc == "tiny" for _, sc in every)
    try:
        suites.parse_spec("lab,nosuch")
    except ValueError as e:
        assert "nosuch" in str(e) and "all" in str(e)
    else:
        raise AssertionError("an unknown suite must be refused")


def test_every_suite_plans_at_every_scale_with_its_own_reps():
    for name, sd in suites.registry().items():
        for scale in sd.scales:
            pl = suites.plan(name, scale=scale, mem_available=21 * G)
            assert all(p.suite == name and p.reps == sd.scales[scale]["reps"]
                       for p in pl.points), (name, scale)


def test_the_main_job_runs_goal_points_and_one_suite_runs_its_tables_too():
    every = suites.plan("all", mem_available=21 * G, catalog=Declared(), machine=MACHINE)
    assert every.points and all(p.priority == 0 for p in every.points)
    said = [d for d in every.dropped if "no goal reads" in d]
    assert any(d.startswith("lab: ") and "--suite lab" in d for d in said), every.dropped
    alone = suites.plan("lab", mem_available=21 * G, catalog=Declared(), machine=MACHINE)
    assert any(p.priority > 0 for p in alone.points)
    assert not any("no goal reads" in d for d in alone.dropped)
    # what a goal reads stays in the main job (giveback-4: the idle pools; translation-3: the chase)
    labels = {p.label() for p in every.points}
    assert any("idle=on" in x for x in labels) and any(x.startswith("chase ") for x in labels)
    # the device rows are a table (paging-5 and -6 read fio beside each point): the main job
    # leaves them to --suite paging, which runs them
    assert not any(x.startswith("device ") for x in labels)
    paging = suites.plan("paging", mem_available=21 * G, catalog=Declared(), machine=MACHINE)
    assert any(p.label().startswith("device ") for p in paging.points)
