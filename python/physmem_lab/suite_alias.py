"""The ``alias`` suite (issue 5, seed 002): measurement bias from 4K address aliasing.

Programs (lab/alias/*.cpp built by lab/cmake/alias.cmake; lab/PROTOCOL.md):

- ``alias_env`` (array-4k; size = the largest environment padding in bytes): the -O2
  microkernel (three static counters bumped from a loop whose counter ``g`` and increment
  ``inc`` stay on the stack) run in one fresh child process per padding 0, 16, ..., size
  bytes added to the environment. One record per sweep: the top level is the loop in the
  parent itself; ``env_sweep.points`` one entry per padding with its children's ns per
  iteration per repetition (one child per round, ``params.rounds``; only the loop timed,
  not start-up), ``min_ns``/``median_ns``,
  its environment size, ASLR state, and the low 12 bits of ``g``, ``inc``, ``i``, ``j``,
  ``k``. ``params.counters``: ``linked`` (the statics where the linker put them) or a
  byte offset in a 64-byte-aligned block (the program comment says why).
- ``alias_conv``: the 5-tap convolution in four builds (-O2, -O2 + restrict, -O3,
  -O3 + restrict). array-4k: ``conv.offsets`` and, per build, median/min/max ns per
  element at each offset of out from in (floats, mod 1024), over ``conv.rounds`` rounds
  that each sweep every offset (bursts of interference hit one round, not all). malloc-4k with
  ``params.alloc``: in and out from plain malloc under that allocator (LD_PRELOAD);
  ``conv.offset_floats`` where out landed and every build's time on those buffers.

The payloads' contracts (``env_sweep``, ``conv``) are lab/schema/payloads/alias_*.schema.json,
checked with every record.

The dgemv and low-12 tables come from :mod:`physmem_lab.alias_tables` when it is there
(its rows, report and goals are appended to this suite's).

Contract: every number shown comes from the records; the seed's figures are labelled
THEIRS. A spike of the env sweep is a padding whose best repetition is at least
:data:`SPIKE` x the sweep's median of best repetitions.
"""
import statistics
from pathlib import Path
from typing import Dict, List, Optional

from .analysis import Goal, Item, Ratio
from .suitedef import K, M, Point, Row, SuiteDef, Variant
from .plots import plt, save
from .units import format_size

try:
    from . import alias_tables
except ImportError:          # the dgemv/low-12 part is built separately
    alias_tables = None

ENV, CONV = "alias_env", "alias_conv"
ALLOCATORS = ("glibc", "jemalloc", "tcmalloc", "mimalloc", "physmem")
BUILDS = ("o2", "o2-restrict", "o3", "o3-restrict")
SPIKE = 1.3
STAT = "min_ns"      # conv: the best repetition (the VM is shared; interference only adds time)
STACK_VARS, STATIC_VARS = ("g", "inc"), ("i", "j", "k")

_TINY_OFFSETS = "0,1,2,3,4,8,16,64,512,1020,1023"
_DEFAULT_OFFSETS = "0:16:1,16:1008:16,1008:1024:1"   # every offset near the aliasing ends
_FULL_OFFSETS = "0:1024:1"

ROWS = (
    Row(ENV, (Variant("array", "4k"),), params=({"counters": "linked"}, {"counters": "12"}),
        sizes={"tiny": (256,), "default": (4 * K,), "full": (8 * K,)}),  # default: one 4 KiB period
    Row(CONV, (Variant("array", "4k"),), params=({"offsets": _TINY_OFFSETS},), sizes={"tiny": (256 * K,)}, priority=0),
    # two rounds at the default scale (the main job's time; the statistic is the best repetition)
    Row(CONV, (Variant("array", "4k"),), params=({"offsets": _DEFAULT_OFFSETS, "rounds": "2"},),
        sizes={"default": (4 * M,)}, priority=0),
    Row(CONV, (Variant("array", "4k"),), params=({"offsets": _FULL_OFFSETS},), sizes={"full": (4 * M,)}, priority=0),
    Row(CONV, (Variant("malloc", "4k"),), params=tuple({"alloc": a} for a in ALLOCATORS),
        sizes={"tiny": (256 * K,), "default": (4 * M,), "full": (4 * M,)}, priority=0),
) + (alias_tables.ROWS if alias_tables else ())

SCALES = {
    "tiny": {"reps": 2, "warmup": 1, "min_rep_ms": 2, "cap": None, "budget_s": 40},
    "default": {"reps": 3, "warmup": 1, "min_rep_ms": 5, "cap": None, "budget_s": 80},
    "full": {"reps": 7, "warmup": 1, "min_rep_ms": 10, "cap": None, "budget_s": None},
}

# Seed 002 (theirs): Haswell i7-4770K, GCC 4.8, microkernel at -O0, cycles (perf, mean of
# 10) over 512 environment sizes; convolution n = 2^20 at -O2 and -O3.
THEIRS = {
    "env_spikes": (3184, 7280),
    "addrs": "&i = 0x60103c, &j = 0x601040, &k = 0x601044; at the spikes &g = 0x...e038 / "
             "0x...d038 and &inc = 0x...e03c / 0x...d03c (inc and i share 0x03c)",
    "alias_events": "about 320,000 alias events (ld_blocks_partial.address_alias) at a spike, "
                    "close to 0 elsewhere",
    "conv": "about 1.7x (-O2; 1.69x) and up to 2x (-O3) more cycles at offset 0 (malloc's "
            "default: both buffers end in 0x010) than at larger offsets",
}


def _n_offsets(text: str) -> int:
    n = 0
    for item in text.split(","):
        if ":" in item:
            a, b, s = (int(x) for x in item.split(":"))
            n += len(range(a, b, s))
        else:
            n += 1
    return n


def pass_s(p: Point, cap: Optional[int]) -> float:
    """Rough seconds of one timed pass (ETA and budget only; development VM). The sweeps
    run inside one point, so their whole cost is spread over the point's repetitions."""
    reps = (p.reps or 5) + (p.warmup if p.warmup is not None else 1)
    rep_s = max((p.min_rep_ms or 5) / 1000, 0.001)
    rounds = int(p.params.get("rounds", 2 if p.experiment == ENV else 3))
    if p.experiment == ENV:
        children = p.size_bytes // int(p.params.get("step", 16)) + 1
        return rounds * children * (0.01 + reps * 0.0016) / reps
    if p.experiment == CONV:
        if p.kind == "malloc":
            return rounds * 4 * rep_s
        return rounds * _n_offsets(p.params.get("offsets", "0:1024:4")) * 4 * rep_s
    got = alias_tables.pass_s(p, cap) if alias_tables else None
    return got if got is not None else 0.1


# ---------------------------------------------------------------- lookups

def _recs(recs, exp, kind=None) -> List[dict]:
    return [r for r in recs.all if r["experiment"] == exp and (kind is None or r["kind"] == kind)]


def env_points(rec: dict) -> List[dict]:
    return (rec.get("env_sweep") or {}).get("points") or []


def alias_pairs(low12: Dict[str, int]) -> List[str]:
    """'inc~i' for each stack variable whose low 12 bits equal a counter's."""
    return [f"{s}~{c}" for s in STACK_VARS for c in STATIC_VARS if low12[s] == low12[c]]


def env_spikes(rec: dict) -> List[dict]:
    """Paddings whose best repetition is >= SPIKE x the sweep's median of best repetitions."""
    pts = env_points(rec)
    if not pts:
        return []
    mid = statistics.median(p["min_ns"] for p in pts)
    return [p for p in pts if p["min_ns"] >= SPIKE * mid]


def conv_sweep(rec: dict) -> Dict[str, dict]:
    """Per build of an offset sweep record: {offsets, median, min, max (lists), best, worst
    (dicts offset/median_ns/min_ns/max_ns/rel_spread)}."""
    c = rec["conv"]
    out = {}
    for b in c["builds"]:
        n = len(c["offsets"])
        cyc, ali = b.get("cycles_per_elem") or [None] * n, b.get("alias_per_elem") or [None] * n
        pts = [{"offset": o, "median_ns": m, "min_ns": lo, "max_ns": hi, "rel_spread": sp,
                "cycles_per_elem": cy, "alias_per_elem": al}
               for o, m, lo, hi, sp, cy, al in zip(c["offsets"], b["median_ns"], b["min_ns"], b["max_ns"],
                                                   b["rel_spread"], cyc, ali)]
        out[b["name"]] = {"points": pts, "best": min(pts, key=lambda p: p[STAT]),
                          "worst": max(pts, key=lambda p: p[STAT]),
                          "flags": b["flags"], "restrict": b["restrict"]}
    return out


def slow_offsets(build: dict) -> List[int]:
    """Offsets of one build of conv_sweep whose best time is >= SPIKE x the sweep's median."""
    mid = statistics.median(p[STAT] for p in build["points"])
    return [p["offset"] for p in build["points"] if p[STAT] >= SPIKE * mid]


def ranges(xs: List[int]) -> str:
    """'1-10, 17, 996-1000' from sorted integers ('none' when empty)."""
    out, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] - xs[j] <= 8:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(out) or "none"


def default_allocs(recs) -> Dict[str, dict]:
    """alloc -> {'offset', 'in_low12', 'out_low12', 'active', 'builds': {name: timing}} of the
    malloc records (the largest size when there are several)."""
    out = {}
    for r in sorted(_recs(recs, CONV, "malloc"), key=lambda r: r["size_bytes"]):
        c = r["conv"]
        out[c["alloc"]] = {"offset": c["offset_floats"], "in_low12": c["in_low12"], "out_low12": c["out_low12"],
                           "distance": c.get("out_minus_in_bytes"),
                           "active": c["active"], "n": c["n"], "builds": {b["name"]: b for b in c["builds"]}}
    return out


def _sweep_rec(recs) -> Optional[dict]:
    got = sorted(_recs(recs, CONV, "array"), key=lambda r: (r["size_bytes"], len(r["conv"]["offsets"])))
    return got[-1] if got else None


# ---------------------------------------------------------------- env sweep

def _env_label(rec: dict) -> str:
    c = rec["params"].get("counters", "linked")
    return "counters as linked" if c == "linked" else f"counters at byte {c} of a 64-byte block"


def _env_section(doc, recs, out_dir, plots):
    doc.h(3, "Environment size: the microkernel over 0-8 KiB of padding")
    doc.p("One fresh child per padding (16-byte steps), ASLR off; only the loop is timed "
          "(ns per iteration, best of the repetitions). The loop keeps g and inc on the stack and "
          "i, j, k in static storage at -O2 (all volatile). Low 12 bits in decimal. A pair "
          "'inc~i' means inc and i share their low 12 bits: a 4K-aliasing pair. "
          f"Spike: best time >= {SPIKE}x the sweep's median.")
    for r in _recs(recs, ENV):
        _env_table(doc, r)
    doc.p(f"THEIRS (seed 002, Haswell, -O0, cycles): spikes at {THEIRS['env_spikes'][0]} and "
          f"{THEIRS['env_spikes'][1]} bytes added (one per 4 KiB); {THEIRS['addrs']}; "
          f"{THEIRS['alias_events']}.")
    if out_dir and _recs(recs, ENV):
        plots.append(("alias: microkernel time vs environment size", _env_plot(recs, out_dir)))


def _env_table(doc, r):
    pts = env_points(r)
    if not pts:
        return
    mid = statistics.median(p["min_ns"] for p in pts)
    aslr = sorted({p.get("aslr", "?") for p in pts})
    parent = (r.get("env_sweep") or {}).get("parent_low12") or {}
    doc.p(f"{_env_label(r)}: {len(pts)} paddings 0-{pts[-1]['pad']} B, median {mid:.3f} ns/iter, "
          f"children's ASLR: {', '.join(aslr)}; statics' low 12 bits "
          + ", ".join(f"{v} = {parent.get(v, pts[0]['low12'][v])}" for v in STATIC_VARS) + ".")
    rows = []
    spikes = env_spikes(r)
    paired = [p for p in pts if alias_pairs(p["low12"])]
    hw = [k for k in ("cycles_per_iter", "alias_per_iter") if any(p.get(k) is not None for p in pts)]
    for p in sorted({id(p): p for p in spikes + paired}.values(), key=lambda p: p["pad"]):
        rows.append([p["pad"], p["env_bytes"], f"{p['min_ns']:.3f}", f"{p['min_ns'] / mid:.2f}x",
                     "yes" if p in spikes else "no", p["low12"]["g"], p["low12"]["inc"],
                     ", ".join(alias_pairs(p["low12"])) or "none"] + [_num(p.get(k)) for k in hw])
    doc.table(["pad B", "env B", "best ns/iter", "vs median", "spike", "g low12", "inc low12",
               "alias pair"] + [HW_LABEL[k] for k in hw], rows)
    if "alias_per_iter" in hw:
        quiet = statistics.median(p["alias_per_iter"] for p in pts if p.get("alias_per_iter") is not None)
        doc.p(f"4K-alias events per iteration, median over all paddings: {quiet:.3f}.")
    doc.ul(_env_findings(r, mid, spikes, paired))


HW_LABEL = {"cycles_per_iter": "cycles/iter", "alias_per_iter": "alias events/iter",
            "cycles_per_elem": "cycles/elem", "alias_per_elem": "alias events/elem"}


def _num(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def _env_findings(r, mid, spikes, paired) -> List[str]:
    out = []
    if paired:
        ratios = [p["min_ns"] / mid for p in paired]
        out.append(f"{len(paired)} paddings make an alias pair; their best time is "
                   f"{min(ratios):.2f}x-{max(ratios):.2f}x the median "
                   + ("— the pair is what costs time here" if min(ratios) >= SPIKE else
                      "— on this machine an alias pair alone does not make the loop slower"
                      if max(ratios) < SPIKE else "— some but not all pairs are slower"))
    else:
        out.append("no padding makes an exact alias pair: the stack moves in steps that never "
                   "put g or inc on a counter's low 12 bits for this placement")
    unexplained = [p for p in spikes if not alias_pairs(p["low12"])]
    if unexplained:
        out.append(f"{len(unexplained)} spike{'s' if len(unexplained) > 1 else ''} without an alias pair (paddings "
                   + ", ".join(str(p["pad"]) for p in unexplained[:10])
                   + (" ..." if len(unexplained) > 10 else "")
                   + "): not explained by 4K aliasing of these variables — noise from the shared "
                     "VM or another effect; repeat the point to tell")
    return out


def _env_plot(recs, out_dir) -> Path:
    rs = _recs(recs, ENV)
    fig, axes = plt.subplots(len(rs), 1, figsize=(9, 2.8 * len(rs)), dpi=100, squeeze=False)
    for ax, r in zip(axes[:, 0], rs):
        pts = env_points(r)
        ax.plot([p["pad"] for p in pts], [p["min_ns"] for p in pts], lw=0.8, label="ours: best ns/iter")
        for p in env_spikes(r):
            ax.annotate(str(p["pad"]), (p["pad"], p["min_ns"]), fontsize=6, color="C3")
        paired = [p for p in pts if alias_pairs(p["low12"])]
        ax.scatter([p["pad"] for p in paired], [p["min_ns"] for p in paired], color="C3", s=14, zorder=3,
                   label="alias pair (stack low12 = static low12)")
        for x in THEIRS["env_spikes"]:
            ax.axvline(x, ls=":", color="k", lw=0.8)
        ax.set_title(f"{_env_label(r)} (dotted: THEIRS' spikes, Haswell)", fontsize=9)
        ax.set_ylabel("ns / iteration")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("bytes added to the environment")
    return save(fig, Path(out_dir) / "plot-alias-env.png")


# ---------------------------------------------------------------- convolution

def _conv_section(doc, recs, out_dir, plots):
    doc.h(3, "Convolution: time against out's offset from in, four builds")
    sw, allocs = _sweep_rec(recs), default_allocs(recs)
    if sw:
        per = conv_sweep(sw)
        c = sw["conv"]
        have_alias = any(p["alias_per_elem"] is not None for b in per.values() for p in b["points"])
        doc.p(f"5-tap float filter, n = {c['n']} floats; in on a page boundary, out at the given "
              f"offset (floats, mod 1024: 0 = same low 12 bits) in one {sw['variant']} mapping; "
              f"{len(c['offsets'])} offsets, ns per element, best of the repetitions at each "
              "offset (every build timed at one offset before the next offset).")
        rows = []
        for name, b in per.items():
            at0 = next((p for p in b["points"] if p["offset"] == 0), None)
            rows.append([name, b["flags"] + (" + restrict" if b["restrict"] else ""),
                         f"{at0[STAT]:.3f}" if at0 else "-",
                         f"{b['best'][STAT]:.3f} at {b['best']['offset']}",
                         f"{b['worst'][STAT]:.3f} at {b['worst']['offset']}",
                         f"{b['worst'][STAT] / b['best'][STAT]:.2f}x"])
            rows[-1].append(ranges(slow_offsets(b)))
            if have_alias:
                rows[-1].append(f"{_num(at0 and at0['alias_per_elem'])} / {_num(b['best']['alias_per_elem'])} / "
                                f"{_num(b['worst']['alias_per_elem'])}")
        doc.table(["build", "flags", "offset 0 ns/elem", "best (offset)", "worst (offset)", "worst / best",
                   f"slow offsets (>= {SPIKE}x median)"]
                  + (["alias events/elem at 0 / best / worst"] if have_alias else []), rows)
        doc.ul(_conv_findings(per))
        doc.p(f"THEIRS (seed 002, Haswell, cycles): {THEIRS['conv']}.")
    if allocs:
        _alloc_table(doc, allocs, conv_sweep(sw) if sw else None)
    if out_dir and sw:
        plots.append(("alias: convolution time vs offset, allocator markers", _conv_plot(sw, allocs, out_dir)))


def _conv_findings(per) -> List[str]:
    out = []
    for name, b in per.items():
        mid = statistics.median(p[STAT] for p in b["points"])
        at0 = next((p for p in b["points"] if p["offset"] == 0), None)
        if at0:
            out.append(f"{name}: offset 0 (equal low 12 bits, malloc's usual default) is "
                       f"{at0[STAT] / mid:.2f}x the sweep's median and {at0[STAT] / b['worst'][STAT]:.2f}x its worst"
                       + (" — near the worst, as in the seed" if at0[STAT] >= 0.9 * b["worst"][STAT] else
                          " — not the worst case on this machine"))
    return out


def _alloc_table(doc, allocs, per):
    doc.p("Default allocations: in = malloc(n * 4), then out = malloc(n * 4), under each "
          "allocator (LD_PRELOAD); where out landed relative to in, and each build's time "
          "on those buffers (best of the repetitions)"
          + (" against the best and worst offset of the sweep (other process, same n when "
             "the sizes match)." if per else "."))
    rows = []
    for a in ALLOCATORS:
        if a not in allocs:
            continue
        e = allocs[a]
        row = [a + ("" if e["active"] == a else f" (served by {e['active']})"), e["in_low12"], e["out_low12"],
               e["offset"], "-" if e.get("distance") is None else e["distance"]]
        for b in BUILDS:
            t = e["builds"].get(b)
            if not t:
                row.append("-")
                continue
            cell = f"{t[STAT]:.3f}"
            if per and b in per:
                cell += (f" ({t[STAT] / per[b]['best'][STAT]:.2f}x best, "
                         f"{t[STAT] / per[b]['worst'][STAT]:.2f}x worst)")
            row.append(cell)
        rows.append(row)
    doc.table(["allocator", "in low12", "out low12", "out offset (floats)", "out - in (bytes)"]
              + [f"{b} ns/elem" for b in BUILDS], rows)


def _conv_plot(sw, allocs, out_dir) -> Path:
    per = conv_sweep(sw)
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=100)
    markers = dict(zip(ALLOCATORS, ("o", "s", "^", "D", "*")))
    for i, (name, b) in enumerate(per.items()):
        ax.plot([p["offset"] for p in b["points"]], [p[STAT] for p in b["points"]], lw=0.9,
                color=f"C{i}", label=f"{name} ({b['flags']}{' restrict' if b['restrict'] else ''})")
        for a, e in allocs.items():
            t = e["builds"].get(name)
            if t:
                ax.scatter([e["offset"]], [t[STAT]], color=f"C{i}", marker=markers.get(a, "x"),
                           s=60, edgecolor="k", zorder=3, label=a if i == 0 else None)
    ax.text(0.99, 0.02, "THEIRS (seed 002, Haswell, cycles): offset 0 ~1.7x (-O2), ~2x (-O3)\n"
            "the time at larger offsets", transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
            bbox={"boxstyle": "round", "fc": "white", "alpha": 0.8})
    ax.set_xlabel("offset of out from in (floats, mod 1024)")
    ax.set_ylabel("ns per element (best of repetitions)")
    ax.set_title(f"convolution n = {sw['conv']['n']} (ours; markers: each allocator's default "
                 "allocations, black edge)", fontsize=9)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return save(fig, Path(out_dir) / "plot-alias-conv.png")


# ---------------------------------------------------------------- report and goals

def report(doc, recs, results, out_dir):
    """The env-size and convolution sections, then alias_tables' (dgemv, low 12 bits)."""
    plots = []
    if _recs(recs, ENV):
        _env_section(doc, recs, out_dir, plots)
    if _recs(recs, CONV):
        _conv_section(doc, recs, out_dir, plots)
    if _recs(recs, ENV) or _recs(recs, CONV):
        doc.p(_counter_note(recs, results))
    for title, path in plots:
        doc.img(title, path)
    if alias_tables:
        alias_tables.report(doc, recs, results, out_dir)


def _availability(recs) -> Dict[str, dict]:
    """The programs' own account of the cycles and address_alias counters (first found)."""
    for r in _recs(recs, ENV) + _recs(recs, CONV):
        got = (r.get("env_sweep") or r.get("conv") or {}).get("counters")
        if got:
            return got
    return {}


def _counter_note(recs, results) -> str:
    """What stands in for the seed's alias counter, from the records and the machine."""
    av = _availability(recs)
    if (av.get("address_alias") or {}).get("available"):
        return ("The seed's evidence, the Intel event ld_blocks_partial.address_alias, was counted "
                "here (alias events per iteration / element in the tables, one counted pass per "
                "point beside the timed ones).")
    if av:
        reasons = "; ".join(f"{k}: {v.get('reason') or 'available'}" for k, v in av.items())
        return ("The seed's evidence is the Intel event ld_blocks_partial.address_alias beside "
                f"cycles; on this machine the programs could not count it ({reasons}). "
                "Wall time per iteration / element (best of repetitions over rounds, fresh "
                "processes, ASLR off) is measured instead, with the low 12 bits of every address "
                "involved. That answers the seed's question — does layout alone change the time? — "
                "but not why: a slowdown exactly where the low 12 bits match is consistent with "
                "false store-to-load dependencies; no slowdown there means this CPU does not pay "
                "for the 12-bit match in that loop.")
    cpu = ((results or {}).get("machine") or {}).get("cpu_model", "this CPU")
    cyc = [r for r in _recs(recs, ENV) + _recs(recs, CONV) if (r.get("counters") or {}).get("cycles")]
    why = next((r["counters"].get("unavailable", {}).get("cycles") for r in recs.all
                if (r.get("counters") or {}).get("unavailable", {}).get("cycles")), None)
    intel = "intel" in cpu.lower()
    return ("The seed's evidence is the Intel event ld_blocks_partial.address_alias beside cycles. "
            + ("Hardware counters were available (cycles in the records), but the alias event is "
               "not read by the lab. " if cyc else
               f"No hardware counter could be read here ({why or 'no PMU'}), "
               + ("" if intel else f"and {cpu} is not an Intel CPU, which has no such event in any case. "))
            + "Wall time per iteration / element (best or median of repetitions, fresh processes, "
            "ASLR off) is measured instead, with the low 12 bits of every address involved. That "
            "answers the seed's question — does layout alone change the time? — but not why: a "
            "slowdown exactly where the low 12 bits match is consistent with false store-to-load "
            "dependencies; no slowdown there means this CPU does not pay for the 12-bit match "
            "in that loop.")


class TimingRatio(Ratio):
    """num / den of two timing dicts (median_ns, min_ns, max_ns, rel_spread) that are not
    whole records: a sweep point or one build of a malloc record."""

    def __init__(self, num: dict, den: dict, what: str):
        super().__init__(num, den)
        self.what = what

    @property
    def value(self):
        return self.num[STAT] / self.den[STAT]

    @property
    def lo(self):
        return self.num["min_ns"] / self.den["max_ns"]

    @property
    def hi(self):
        return self.num["max_ns"] / self.den["min_ns"]

    def spreads(self):
        return (self.num.get("rel_spread", 0.0), self.den.get("rel_spread", 0.0))

    def doubts(self):
        return [f"{self.what}: spread {s:.0%}" for s in self.spreads() if s >= 0.10]


GOAL_TITLE = ("default allocations: physmem within 5% of the best manual offset (<= 1.05x) "
              "while glibc sits at the worst (worst offset <= 1.05x glibc's time); builds o2 and o3, "
              "best of repetitions")


def goals(recs) -> List[Goal]:
    return [_goal_default_alloc(recs)] + (alias_tables.goals(recs) if alias_tables else [])


def _goal_default_alloc(recs) -> Goal:
    g = Goal("alias-1", GOAL_TITLE)
    sw, allocs = _sweep_rec(recs), default_allocs(recs)
    if not sw or "physmem" not in allocs or "glibc" not in allocs:
        g.missing.append("needs an alias_conv offset sweep and malloc records for physmem and glibc")
        return g
    per = conv_sweep(sw)
    for b in ("o2", "o3"):
        pm, gl = allocs["physmem"]["builds"].get(b), allocs["glibc"]["builds"].get(b)
        if not (pm and gl and b in per):
            continue
        best, worst = per[b]["best"], per[b]["worst"]
        g.items.append(Item(f"{b}: physmem default (offset {allocs['physmem']['offset']}) / best offset "
                            f"({best['offset']})", TimingRatio(pm, best, "physmem/best"), 1.05))
        g.items.append(Item(f"{b}: worst offset ({worst['offset']}) / glibc default (offset "
                            f"{allocs['glibc']['offset']})", TimingRatio(worst, gl, "worst/glibc"), 1.05))
        mid = statistics.median(p[STAT] for p in per[b]["points"])
        g.notes.append(f"{b}: physmem default / the sweep's median over offsets = {pm[STAT] / mid:.2f}x, "
                       f"glibc default / median = {gl[STAT] / mid:.2f}x (the best offset is the minimum "
                       f"of {len(per[b]['points'])} noisy points, a hard bar)")
        g.notes.append(f"{b}: the sweep's worst / best = {worst[STAT] / best[STAT]:.2f}x "
                       f"(THEIRS: ~1.7x at -O2, ~2x at -O3); glibc / physmem default = "
                       f"{gl[STAT] / pm[STAT]:.2f}x (best of repetitions)")
    if not g.items:
        g.missing.append("no o2/o3 timings in the records")
    return g


SUITE = SuiteDef("alias", "4K aliasing: layout bias (seed 002)", ROWS, SCALES,
                 pass_s=pass_s, report=report, goals=goals)
