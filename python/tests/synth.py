"""Synthetic records and result files for the tests (valid against lab/schema)."""
import statistics

from physmem_lab import machine

G = 1 << 30


def record(experiment="scan", variant="array-4k", size=1 << 20, samples=(1.0,) * 5,
           params=None, verified=True, obtained=None, phases=None, block_size=65536):
    kind, backing = variant.rsplit("-", 1)
    samples = list(samples)
    med = statistics.median(samples)
    tree = None
    if kind.startswith("tree"):
        tree = {"block_size": block_size, "depth": 2, "leaf_elements": block_size // 4}
    r = {
        "schema": "physmem.lab.record/1", "experiment": experiment, "variant": variant,
        "kind": kind, "backing_requested": backing, "size_bytes": size,
        "elements": max(1, size // 4), "unit": "element",
        "params": dict(params or ({"access": "linear"} if experiment == "scan" else {})),
        "tree": tree, "reps": len(samples), "warmup": 1, "passes_per_rep": 1,
        "ops_per_pass": max(1, size // 4), "ns_per_op": samples, "median_ns": med,
        "min_ns": min(samples), "max_ns": max(samples),
        "rel_spread": (max(samples) - min(samples)) / med,
        "checksum": "0x1", "verified": verified, "verification": "synthetic",
        "backing": [{"name": "data", "requested": backing, "obtained": obtained or backing,
                     "kernel_page_size": 4096, "huge_bytes": 0, "resident_bytes": size,
                     "verified": True}],
        "counters": {"page_faults": {"source": "getrusage", "per_rep": [0] * len(samples)},
                     "cycles": None, "unavailable": {"cycles": "no PMU"}},
        "setup_s": 0.01, "notes": [],
        "program": {"name": f"physmem_lab_{experiment}", "compiler": "g++ 12", "flags": "-O3"},
    }
    if phases:
        r["phases"] = phases
    return r


def phase(samples):
    samples = list(samples)
    med = statistics.median(samples)
    return {"reps": len(samples), "warmup": 1, "passes_per_rep": 1, "ops_per_pass": 1,
            "ns_per_op": samples, "median_ns": med, "min_ns": min(samples),
            "max_ns": max(samples), "rel_spread": (max(samples) - min(samples)) / med}


def results(records, suite="synthetic", skipped=(), errors=()):
    return {"schema": "physmem.lab.results/1", "suite": suite,
            "command": "physmem bench --suite synthetic", "started": "2026-11-23T00:00:00",
            "finished": "2026-11-23T00:01:00", "complete": True,
            "machine": machine.collect(), "options": {"reps": 5, "updates_cap": 4194304},
            "system_changes": [], "records": list(records), "skipped": list(skipped),
            "errors": list(errors), "warnings": []}


def tight(value, n=5):
    """n samples within +-1% of value."""
    return [value * f for f in (0.99, 1.0, 1.005, 1.0, 1.01)[:n]]


def translation(refs=1.0, sw=0.0, l1=0.0, walks=0.0, walk_refs=0.0, page="4k", preset="zen5",
                rel_diff=0.01, translate=True, ops=1 << 16, capped=False):
    """A record's ``translation`` field (lab/PROTOCOL.md) with these per-op counts; every
    traced access on pages of size ``page``."""
    n = lambda x: int(round(x * ops))    # noqa: E731
    acc, wr = n(refs), n(walk_refs)
    sizes = {k: (acc if k == page else 0) for k in ("4k", "2m", "1g")}
    return {
        "preset": preset, "reason": "", "chosen": "asked", "description": f"{preset} (synthetic)",
        "translate": translate, "levels": 4, "caches_modelled": False,
        "window": {"warmup_refs": 1000, "refs": acc, "refs_in_pass": acc, "capped": capped,
                   "passes_traced": 1, "untagged_refs": 0},
        "counts": {"accesses": acc, "sw_walk_loads": n(sw), "l1_misses": n(l1), "l2_hits": n(l1) - n(walks),
                   "walks": n(walks), "walk_refs": wr, "walk_refs_by_level": [0, wr, 0, 0, 0, 0],
                   "pwc_hits_by_level": [0] * 6, "accesses_by_size": sizes,
                   "l1_misses_by_size": {k: (n(l1) if k == page else 0) for k in sizes},
                   "walks_by_size": {k: (n(walks) if k == page else 0) for k in sizes},
                   "walk_ref_cache_hits": [0] * 4, "walk_ref_memory": wr, "data_cache_hits": [0] * 4,
                   "data_memory": acc, "sw_walk_cache_hits": [0] * 4, "sw_walk_memory": 0},
        "per_op": {"refs": refs, "sw_walk_loads": sw, "l1_misses": l1, "walks": walks,
                   "walk_refs": walk_refs, "translation_refs": walk_refs + sw},
        "halves": {"translation_refs_per_ref": [0.1, 0.1 * (1 + rel_diff)],
                   "walks_per_ref": [0.01, 0.01], "rel_diff": rel_diff},
        "sim_seconds": 0.01, "refs_per_second": 6.5e7,
    }


def tlbsim(ok=True, min_rps=6.5e7, cpu="AMD EPYC", all_rps=None):
    """A result file's ``tlbsim`` (python/physmem_lab/tlbsim.py) with these outcomes
    (``all_rps``: the slowest rate of ``bench --preset all``, by default ``min_rps``)."""
    all_rps = min_rps if all_rps is None else all_rps
    cases = [{"name": "sequential scan misses = pages", "preset": "zen5", "quantity": "l1_misses",
              "expected": 256, "got": 256, "tolerance": 0, "ok": True},
             {"name": "random over N pages", "preset": "zen5", "quantity": "miss_rate",
              "expected": 0.9, "got": 0.9 if ok else 0.8, "tolerance": 0.02, "ok": ok}]
    return {"program": "physmem-tlbsim", "cpu": cpu, "errors": {}, "machine_load": {},
            "detect": {"vendor": "AuthenticAMD", "family": 26, "model": 2, "table_preset": "zen5",
                       "preset": "zen5", "base": "zen5", "source": "table",
                       "reason": "CPUID 0x80000005/0x80000006 give no L1 and L2 data TLB; family/model table: zen5"},
            "presets": {"presets": [{"name": "zen5", "description": "AMD Zen 5",
                                     "sources": ["https://example.invalid/zen5-optimization-guide"]}]},
            "validate": {"tool": "physmem-tlbsim", "version": 1, "cases": cases, "ok": ok},
            "bench": {"tool": "physmem-tlbsim", "version": 1, "preset": "zen5", "caches_modelled": False,
                      "patterns": [{"pattern": "sequential", "refs": 10 ** 7, "seconds": 0.1,
                                    "refs_per_second": 1e8},
                                   {"pattern": "random", "refs": 10 ** 7, "seconds": 0.15,
                                    "refs_per_second": min_rps}],
                      "min_refs_per_second": min_rps, "min_refs_per_cpu_second": min_rps * 1.25},
            "bench_all": {"tool": "physmem-tlbsim", "version": 1, "preset": "zen4", "asked": "all",
                          "caches_modelled": False,
                          "patterns": [{"pattern": "random", "refs": 10 ** 7, "seconds": 0.15,
                                        "refs_per_second": all_rps}],
                          "min_refs_per_second": all_rps, "min_refs_per_cpu_second": all_rps * 1.25,
                          "every_preset": [{"preset": "zen5", "asked": "auto", "min_refs_per_second": min_rps,
                                            "min_refs_per_cpu_second": min_rps * 1.25},
                                           {"preset": "zen4", "asked": "zen4", "min_refs_per_second": all_rps,
                                            "min_refs_per_cpu_second": all_rps * 1.25}],
                          "skipped": []}}
