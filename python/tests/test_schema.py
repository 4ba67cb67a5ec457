"""Records and result files against lab/schema, and the major-version check."""
import copy

import pytest

import synth
from physmem_lab.schema import SchemaError, validate_record, validate_results


def test_good_record_is_valid():
    validate_record(synth.record())
    validate_record(synth.record("rbtree", "pool-1g", phases={"insert": synth.phase([2, 3, 4])}))


def test_malloc_record_without_mappings_is_valid():
    r = synth.record("rbtree", "malloc-4k")
    r["backing"] = []
    validate_record(r)


@pytest.mark.parametrize("mutate, where", [
    (lambda r: r.pop("median_ns"), "median_ns"),
    (lambda r: r.update(variant="trie-4k"), "variant"),   # no such kind ("tree" is one)
    (lambda r: r.update(ns_per_op=[]), "ns_per_op"),
    (lambda r: r.update(verified="yes"), "verified"),
    (lambda r: r["backing"][0].update(obtained="8k"), "backing"),
    (lambda r: r.update(size_bytes=-1), "size_bytes"),
])
def test_bad_records_are_refused(mutate, where):
    r = synth.record()
    mutate(r)
    with pytest.raises(SchemaError, match=where if where != "median_ns" else "median_ns"):
        validate_record(r)


def test_unknown_major_version_is_refused_clearly():
    r = synth.record()
    r["schema"] = "physmem.lab.record/2"
    with pytest.raises(SchemaError, match="major version 2.*understands only physmem.lab.record/1"):
        validate_record(r)


def test_minor_version_is_accepted():
    r = synth.record()
    r["schema"] = "physmem.lab.record/1.3"
    validate_record(r)


def test_results_file_validates_its_records():
    res = synth.results([synth.record()])
    validate_results(res)
    bad = copy.deepcopy(res)
    del bad["records"][0]["checksum"]
    with pytest.raises(SchemaError, match="records/0"):
        validate_results(bad)
    with pytest.raises(SchemaError, match="not a physmem.lab.results"):
        validate_results(synth.record())


def _alloc_record():
    r = synth.record("alloc", "malloc-4k", params={"alloc": "glibc", "workload": "larson"})
    r["alloc"] = {"allocator": "glibc", "active": "glibc", "workload": "larson", "threads": 2,
                  "thp_mode": "madvise", "physmem_backing": "n/a", "ms_per_pass": [1.0, 1.1],
                  "peak_rss_bytes": 1 << 20,
                  "heap_at_peak": {"anon_bytes": 1 << 20, "thp_bytes": 0, "hugetlb_bytes": 0,
                                   "huge_share": 0.0}}
    return r


def test_every_payload_fragment_is_a_valid_schema():
    import jsonschema
    from physmem_lab.schema import _load, payload_schemas
    frags = payload_schemas()
    assert {"stack", "alloc", "alias_env", "alias_conv", "dgemv", "low12", "prefault_latency",
            "prefault_shootdown"} <= set(frags)
    for name in frags.values():
        jsonschema.Draft202012Validator.check_schema(_load(name))


@pytest.mark.parametrize("mutate, where", [
    (lambda r: r.pop("alloc"), ": 'alloc' is a required"),
    (lambda r: r["alloc"].update(threads=0), "/alloc/threads"),
    (lambda r: r["alloc"]["heap_at_peak"].update(huge_share=1.5), "/alloc/heap_at_peak/huge_share"),
    (lambda r: r["alloc"].update(ms_per_pass="fast"), "/alloc/ms_per_pass"),
])
def test_a_bad_payload_is_refused_where_the_envelope_is_checked(mutate, where):
    r = _alloc_record()
    validate_record(r)
    mutate(r)
    with pytest.raises(SchemaError, match=f"alloc payload .*{where.lstrip('/')}"):
        validate_record(r)
    with pytest.raises(SchemaError, match=f"records/1{where}"):
        validate_results(synth.results([_alloc_record(), r]))


def test_an_experiment_without_a_fragment_has_no_payload_to_check():
    r = synth.record("scan", "array-4k")
    r["anything"] = {"extra": True}
    validate_record(r)


def test_old_stack_kinds_are_read_under_todays_names():
    from physmem_lab.results import upgrade_record
    old = {"experiment": "stack", "kind": "malloc", "variant": "malloc-4k"}
    assert upgrade_record(old) == {"experiment": "stack", "kind": "split", "variant": "split-4k"}
    pool = upgrade_record({"experiment": "stack", "kind": "pool", "variant": "pool-thp"})
    assert (pool["kind"], pool["variant"]) == ("split-pool", "split-pool-thp")
    scan = {"experiment": "scan", "kind": "array", "variant": "array-4k"}
    assert upgrade_record(dict(scan)) == scan                 # other experiments untouched


def test_results_keep_the_simulation_choice_and_the_simulators_checks():
    res = synth.results([synth.record()])
    res["options"]["simulate"] = {"asked": "auto", "preset": "zen5", "caches": "off", "levels": None,
                                  "refs": 1 << 22, "experiments": {"scan": "simulated"},
                                  "rounds": "round 0", "detected": {"preset": "zen5"}}
    res["tlbsim"] = synth.tlbsim()
    validate_results(res)
    bad = copy.deepcopy(res)
    bad["options"]["simulate"]["caches"] = "maybe"
    with pytest.raises(SchemaError, match="options/simulate/caches"):
        validate_results(bad)
    bad = copy.deepcopy(res)
    del bad["tlbsim"]["validate"]["cases"][0]["got"]
    with pytest.raises(SchemaError, match="tlbsim/validate/cases/0"):
        validate_results(bad)
