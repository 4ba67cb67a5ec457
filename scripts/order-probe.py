#!/usr/bin/env python3
"""Order-effect probes of lab/PROTOCOL.md, "Order and rounds" (issue 16). Not a test.

Runs lab programs one process at a time and prints, per process, its median ns/op, its
setup_s, and what the rest of the machine did meanwhile: the other processes' share of
all CPUs ('others', from /proc/stat less this process's own CPU time) and steal.

  order-probe.py position  EXP SIZE ROUNDS  # suite order (arrays, then trees) and its reverse
  order-probe.py after-free EXP SIZE VARIANTS N  # right after a 4 GiB process freed, vs 8 s later
  order-probe.py fresh-1g N                 # gups array-1g 1G on just-reserved pages (0 or 20 s
                                            # before), then again on the same, touched pages
  order-probe.py repeat-1g EXP VARIANT N    # VARIANT at 1G N times back to back on freshly
                                            # reserved pages (does it change over time?)
fresh-1g and repeat-1g (root) set nr_hugepages of 1 GiB pages and restore the old value.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(os.environ.get("PHYSMEM_LAB_BIN") or Path(__file__).resolve().parents[1] / "build" / "lab")
CAP = {"gups": "updates=4194304", "chase": "steps=1048576", "hashtable": "probes=4194304"}
NR_1G = Path("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")
SUITE_ORDER = ["array-4k", "array-thp", "array-1g", "tree-index-4k", "tree-index-thp", "tree-index-1g"]


def _cpu():
    v = list(map(int, open("/proc/stat").readline().split()[1:9]))
    return v[0] + v[1] + v[2] + v[5] + v[6], v[7], sum(v)      # busy, steal, total (jiffies)


def run(exp, variant, size, tag):
    argv = [str(BIN / f"physmem_lab_{exp}"), "--variant", variant, "--size", size, "--reps", "5",
            "--warmup", "1"] + (["--param", CAP[exp]] if exp in CAP else [])
    (b0, s0, t0), c0 = _cpu(), os.times()
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    (b1, s1, t1), c1 = _cpu(), os.times()
    mine = (c1.children_user + c1.children_system - c0.children_user - c0.children_system) * 100
    tot = max(1, t1 - t0)
    r = json.loads(out.stdout)
    print(f"{tag:<18} {exp:<6} {variant:<14} med {r['median_ns']:7.2f} [{r['min_ns']:6.2f}-"
          f"{r['max_ns']:6.2f}] setup {r['setup_s']:.2f}s others {max(0, b1 - b0 - mine) / tot:.0%} "
          f"steal {(s1 - s0) / tot:.1%}", flush=True)


def position(exp, size, rounds):
    for i in range(int(rounds)):
        for tag, order in (("forward", SUITE_ORDER), ("reverse", SUITE_ORDER[::-1])):
            for pos, v in enumerate(order):
                run(exp, v, size, f"r{i} {tag} pos{pos}")


def after_free(exp, size, variants, n):
    for i in range(int(n)):
        for cond in (("right-after", "8s-after") if i % 2 == 0 else ("8s-after", "right-after")):
            for v in variants.split(","):
                subprocess.run([str(BIN / "physmem_lab_scan"), "--variant", "array-4k", "--size",
                                "4G", "--reps", "1", "--warmup", "0", "--min-rep-ms", "0"],
                               check=True, stdout=subprocess.DEVNULL)
                time.sleep(8 if cond == "8s-after" else 0)
                run(exp, v, size, f"i{i} {cond}")


def fresh_1g(n):
    old = int(NR_1G.read_text())
    try:
        for i in range(int(n)):
            for wait in ((0, 20) if i % 2 == 0 else (20, 0)):
                NR_1G.write_text("0")
                time.sleep(5)                 # freed pages reported back to the host
                NR_1G.write_text("2")
                time.sleep(wait)
                run("gups", "array-1g", "1G", f"i{i} fresh wait{wait}s")
                run("gups", "array-1g", "1G", f"i{i} touched")
    finally:
        NR_1G.write_text(str(old))
        print(f"nr_hugepages (1 GiB) restored to {NR_1G.read_text().strip()} (was {old})")


def repeat_1g(exp, variant, n):
    old = int(NR_1G.read_text())
    try:
        NR_1G.write_text("0")
        time.sleep(5)
        NR_1G.write_text("3")
        t0 = time.monotonic()
        for i in range(int(n)):
            run(exp, variant, "1G", f"t+{time.monotonic() - t0:5.0f}s")
    finally:
        NR_1G.write_text(str(old))
        print(f"nr_hugepages (1 GiB) restored to {NR_1G.read_text().strip()} (was {old})")


if __name__ == "__main__":
    {"position": position, "after-free": after_free, "fresh-1g": fresh_1g,
     "repeat-1g": repeat_1g}[sys.argv[1]](*sys.argv[2:])
