#!/usr/bin/env python3
"""A fake ``physmem-tlbsim`` (detect, presets, validate, bench, bench --preset all) printing the JSON the real
one prints. $PHYSMEM_FAKE_TLBSIM: ``fail`` makes one validation case fail (exit 1),
``slow`` makes bench report 20 M refs/s, ``nopreset`` makes detect find no preset."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import synth  # noqa: E402


def main(argv):
    mode = os.environ.get("PHYSMEM_FAKE_TLBSIM", "")
    t = synth.tlbsim(ok=mode != "fail", min_rps=2e7 if mode == "slow" else 6.5e7)
    if not argv or argv[0] not in ("detect", "presets", "validate", "bench"):
        print("usage: physmem-tlbsim detect|presets|validate|bench [--preset P]", file=sys.stderr)
        return 2
    what = argv[0]
    if what == "bench" and "--preset" in argv and argv[argv.index("--preset") + 1:][:1] == ["all"]:
        what = "bench_all"
    out = dict(t[what])
    if what == "detect" and mode == "nopreset":
        out["preset"] = None
    if what == "bench" and "--preset" in argv:
        asked = argv[argv.index("--preset") + 1]
        out["preset"] = t["detect"]["preset"] if asked == "auto" else asked
        if asked == "auto":   # as the real one: auto's choice beside the numbers
            out["auto"] = {k: t["detect"][k] for k in ("preset", "base", "source", "reason")}
    print(json.dumps(out, indent=2))   # the real one indents
    return 1 if what == "validate" and not out["ok"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
