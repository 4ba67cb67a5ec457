#!/usr/bin/env python3
"""A fake experiment program following lab/PROTOCOL.md, for the harness's error paths.

Usage: fake_lab.py EXPERIMENT [protocol arguments]. Behaviour per variant comes from
$PHYSMEM_FAKE, e.g. ``array-1g=3,tree-index-4k=1,array-thp=badschema,tree-seg-4k=v2``:
an integer is the exit code (1 still prints a record with verified false), ``badschema``
prints an invalid record, ``v2`` a record of major version 2, ``hang`` sleeps, ``3later``
succeeds the first time a point runs and exits 3 after (a marker file per point in
$PHYSMEM_FAKE_STATE: another process took the backing between rounds).

``--simulate P`` (P not off) adds a synthetic ``translation`` field to the record of scan,
gups, rbtree and chase (preset P, or zen5 for auto); with $PHYSMEM_FAKE_NO_SIMULATE=1 the
program refuses the option (exit 2), as one built before issue 15 does; with
$PHYSMEM_FAKE_NO_MODEL=1 the field says no machine was simulated (as before issue 23).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import synth  # noqa: E402


SIMULATED = ("scan", "gups", "rbtree", "chase")


def main(argv):
    exp, args = argv[0], argv[1:]
    if "--simulate" in args and os.environ.get("PHYSMEM_FAKE_NO_SIMULATE") == "1":
        print("fake: unknown argument '--simulate'", file=sys.stderr)
        return 2
    if "--list" in args:
        kinds = ["array", "tree-index", "tree-fixed", "tree-iter", "tree-seg", "malloc", "pool"]
        backings = ["4k", "thp", "2m", "1g"]
        print(json.dumps({"schema": "physmem.lab.list/1", "program": f"physmem_lab_{exp}",
                          "experiment": exp, "kinds": kinds, "backings": backings,
                          "variants": [{"name": f"{k}-{b}", "kind": k, "backing": b}
                                       for k in kinds for b in backings],
                          "axes": {"kind": [{"name": k, "meaning": "fake",
                                             "extra_1g_pages": int(k != "array")} for k in kinds],
                                   "backing": [{"name": b, "meaning": "fake"} for b in backings]},
                          "params": [{"name": n} for n in ("access", "layout", "updates")]}))
        return 0
    if "--probe" in args:
        print(json.dumps({"schema": "physmem.lab.probe/1", "counters": {
            "page_faults": {"available": True, "source": "getrusage"},
            "cycles": {"available": False, "reason": "fake"}}}))
        return 0
    opt = {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2) if args[i].startswith("--")}
    params = {}
    for i, a in enumerate(args):
        if a == "--param":
            k, v = args[i + 1].split("=", 1)
            params[k] = v
    variant, size, reps = opt["--variant"], int(opt["--size"]), int(opt["--reps"])
    mode = dict(kv.split("=") for kv in os.environ.get("PHYSMEM_FAKE", "").split(",") if kv)
    how = mode.get(variant, "0")
    if how == "hang":
        time.sleep(3600)
    if how == "3later":
        mark = os.path.join(os.environ["PHYSMEM_FAKE_STATE"],
                            "-".join([exp, variant, str(size)] + sorted(params.values())))
        how = "3" if os.path.exists(mark) else "0"
        open(mark, "a").close()
    if how in ("2", "3", "4", "5"):
        print(f"fake: exit {how} for {variant}", file=sys.stderr)
        return int(how)
    r = synth.record(exp, variant, size, synth.tight(1.0, reps), params, verified=how != "1")
    if how == "badschema":
        del r["median_ns"]
    if how == "v2":
        r["schema"] = "physmem.lab.record/2"
    sim = opt.get("--simulate", "off")
    if sim != "off" and exp in SIMULATED:
        t = synth.translation(**({"sw": 2.0, "refs": 3.0} if variant.startswith("tree-index") else {}),
                              preset="zen5" if sim == "auto" else sim)
        t["chosen"] = "auto" if sim == "auto" else "asked"
        t["caches_modelled"] = opt.get("--sim-caches") == "on"
        r["translation"] = t
        if os.environ.get("PHYSMEM_FAKE_NO_MODEL") == "1":
            r["translation"] = {"preset": None, "reason": "fake: no preset matches", "chosen": "auto"}
    print(json.dumps(r))
    return 1 if how == "1" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
