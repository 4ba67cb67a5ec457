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
