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
    (lambda r: r.update(variant="tree-4k"), "variant"),
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
