"""The ``protect`` suite (issue 24): what protection costs without address translation,
and whether it catches what it should.

Programs: ``physmem_lab_protect`` and ``physmem_lab_protect_asan`` (lab/protect/: the same
sources, the second built with ``-fsanitize=address``, the compiler's memory-safety tool:
the anchor). One process per variant and program:

- ``array-thp``: the kernels on plain contiguous arrays (no checks);
- ``tree-thp``: the kernels on a ``CheckedTreeArray``'s blocks, each run unchecked (phase
  ``<kernel>``, through ``unchecked()``) and checked (phase ``<kernel>_checked``), side by
  side on the same blocks, each scan's pass (segments, iterator, index, blackscholes) after
  an untimed read of another buffer of the array's size, so neither way's pass finds what
  the other's left in the last-level cache; in ``physmem_lab_protect`` it also runs the seeded bugs, each in
  a child process under the fatal policy (``protect.detection``; ``keyed_unchecked_read``
  only where the CPU has protection keys), and records the protection metadata's bytes.
  Domain switches: phase ``domain_switch`` (a DomainScope in and out around one read, in
  software) and, where a keyed pool got its protection key, ``domain_switch_keyed`` side by
  side (``protect.protection_keys``: what the CPU and kernel offer, whether usable, why not).

Kernels: segments (sum through for_each_segment: the record's main timing), iterator,
index (a[i]), chase (dependent loads), gups (random read-xor-writes, no look-ahead),
blackscholes (array of structs, a leaf at a time), rbtree (lookups in a red-black tree
whose nodes, a quarter of the size, are linked by slot number: a checked a[i] a node
visited; phase ``rbtree_floor``, in turn with the two ways: the unchecked tree behind the
cheapest bounds check, protect-3's note). Size: twice the last-level cache, at least 64 MiB (the suite's largest default
size, where the goals are judged). ``work`` (the row's cap): chase steps, gups updates
and rbtree lookups a pass.

Time budget: 30 s at the default scale (2 programs x 2 variants x 2 rounds = 8 processes;
about 1-2 s each at 64 MiB on the 2-vCPU development VM, the seeded bugs' 16 children
included).
"""
import math
from typing import List, Optional

from .analysis import Goal, Item, PhaseRatio, Records, Tally, obtained, timing
from .suitedef import K, M, Row, SuiteDef, Variant, machine_sizes
from .units import format_size

PLAIN, ASAN = "protect", "protect_asan"
ARRAY, TREE = Variant("array", "thp"), Variant("tree", "thp")
KERNELS = ("segments", "iterator", "index", "chase", "gups", "blackscholes", "rbtree")
MAIN = "segments"  # the kernel of the record's main timing; every other timing is a phase

_OUT = machine_sizes(("llc", 2), floor=64 * M)
_SIZES = {"tiny": (256 * K,), "default": _OUT,
          "full": lambda m: tuple(sorted(set(_OUT(m)) | set(machine_sizes(("llc", 8), floor=256 * M, llc_cap=None)(m))))}

ROWS = tuple(Row(e, (ARRAY, TREE), sizes=_SIZES, cap="work", priority=0) for e in (PLAIN, ASAN))

# warmup 1: every phase (each kernel, each way) starts warm; the checked passes all run
# before any timing, so they warm nothing.
SCALES = {
    "tiny": {"reps": 2, "warmup": 1, "min_rep_ms": 2, "cap": 4096, "budget_s": 30},
    "default": {"reps": 10, "rounds": 2, "warmup": 1, "min_rep_ms": 5, "cap": 1 << 16, "budget_s": 30},
    "full": {"reps": 10, "rounds": 2, "warmup": 1, "min_rep_ms": 20, "cap": 1 << 20, "budget_s": None},
}

# Published overheads of software memory-safety schemes (run time over uninstrumented),
# shown beside the measured ones; not measured here.
PUBLISHED = (
    ("LowFat pointers, hardened mode (SPEC CPU2006)", "1.08-1.10x"),
    ("SoftBound+CETS (SPEC)", "2.16x"),
    ("AddressSanitizer (SPEC CPU2006, its paper)", "1.73x"),
)


# Rough seconds (development VM, 64 MiB: 7.6 s for the default scale's 8 processes): one
# timed pass of every kernel (both ways on the tree), and the setup beyond mapping — the
# cycle's links and options, each kernel's checked pass, on the tree the seeded bugs' children.
def pass_s(p, cap: Optional[int]) -> float:
    return 0.01 + (0.8 if p.kind == "tree" else 0.4) * p.size_bytes / (1 << 30)


def setup_s(p) -> float:
    return (0.6 if p.kind == "tree" else 0.05) + (8.0 if p.kind == "tree" else 4.0) * p.size_bytes / (1 << 30)


# ---------------------------------------------------------------- lookups

def _phase(kernel: str, checked: bool = False) -> Optional[str]:
    name = kernel + ("_checked" if checked else "")
    return None if name == MAIN else name


def _has(r: dict, phase: Optional[str]) -> bool:
    return phase is None or phase in (r.get("phases") or {})


def _largest(recs: Records, exp: str) -> Optional[int]:
    sizes = recs.sizes(exp)
    return sizes[-1] if sizes else None


def checked_cost(recs: Records, size: int, kernel: str) -> Optional[PhaseRatio]:
    """checked / unchecked for one kernel, same record (same blocks, one process)."""
    t = recs.find(PLAIN, TREE.name, size)
    if t is None or not _has(t, _phase(kernel, True)) or not _has(t, _phase(kernel)):
        return None
    return PhaseRatio(t, t, _phase(kernel, True), _phase(kernel))


def asan_cost(recs: Records, size: int, kernel: str, variant: Variant = ARRAY) -> Optional[PhaseRatio]:
    """ASan build / plain build for one kernel on the same variant (two processes)."""
    a, p = recs.find(ASAN, variant.name, size), recs.find(PLAIN, variant.name, size)
    if a is None or p is None or not _has(a, _phase(kernel)) or not _has(p, _phase(kernel)):
        return None
    return PhaseRatio(a, p, _phase(kernel), _phase(kernel))


def _detection(recs: Records) -> List[dict]:
    for r in recs.all:
        if r["experiment"] == PLAIN and "detection" in (r.get("protect") or {}):
            return r["protect"]["detection"]
    return []


def _switches(t: Optional[dict]) -> str:
    """The domain-switch sentence of a tree record: ns to enter and leave a DomainScope
    around one read, in software and with protection keys (or why not measured)."""
    if not t or not _has(t, "domain_switch"):
        return ""
    soft = timing(t, "domain_switch")["median_ns"]
    keys = (t.get("protect") or {}).get("protection_keys") or {}
    text = f"Domain switches (enter and leave a DomainScope around one read): {soft:.3g} ns in software"
    if "domain_switch_keyed" in t["phases"]:
        hard = timing(t, "domain_switch_keyed")["median_ns"]
        text += (f", {hard:.3g} ns with protection keys (key {keys.get('key', '?')}: WRPKRU in and out, "
                 f"{hard / soft:.2f}x the software switch)")
    else:
        text += f"; protection keys not measured: {keys.get('why') or 'not available'}"
    return text + "."


# ---------------------------------------------------------------- report

def report(doc, recs, results, out_dir):
    size = _largest(recs, PLAIN)
    if size is None:
        doc.p("No protect records.")
        return
    rows = []
    t = recs.find(PLAIN, TREE.name, size)
    for k in KERNELS:
        base = f"{timing(t, _phase(k))['median_ns']:.3g}" if t and _has(t, _phase(k)) else "-"
        cells = [checked_cost(recs, size, k), asan_cost(recs, size, k), asan_cost(recs, size, k, TREE)]
        rows.append([k, base] + [c.cell() if c else "-" for c in cells])
    block = format_size((t.get("tree") or {}).get("block_size", 0)) if t else "?"
    doc.h(3, f"Cost at {format_size(size)} (64-bit words, {block} blocks, {TREE.backing}; obtained "
             f"{obtained(t) if t else '-'})")
    doc.table(["kernel", "unchecked tree ns/op", "checked / unchecked (tree, same blocks)",
               "ASan / plain (array)", "ASan / plain (tree, unchecked)"], rows)
    doc.p("Ratios: median [best-worst case of the repetitions]. Checked and unchecked run side by side in one "
          "process on the same blocks; ASan and plain builds are two processes of the same sources.")
    doc.table(["published software scheme", "overhead"], [list(x) for x in PUBLISHED])
    det = _detection(recs)
    if det:
        doc.h(3, "Seeded bugs (each in a child process, fatal policy)")
        doc.table(["bug", "expected", "ok", "child ended", "report"],
                  [[d["bug"], d["expected"], "yes" if d["ok"] else "NO", d["status"], d["report"][:120]] for d in det])
    sw = _switches(t)
    if sw:
        doc.p(sw)
    meta = next((r.get("protect_metadata") for r in recs.all if r.get("protect_metadata")), None)
    if meta:
        doc.p(f"Metadata: pool tags {meta['pool_tag_bytes']} B + checked arrays' tables "
              f"{meta['array_table_bytes']} B for a pool of {meta['pool_bytes']} B.")


# ---------------------------------------------------------------- goals

GOAL_TITLES = {
    1: "every seeded bug caught (100%), no false positive (the clean child and the checked runs)",
    2: "checked / unchecked <= 1.05x on segment scans and blackscholes (largest size, same blocks)",
    3: "checked / unchecked <= 1.10x on the iterator loop, pointer chase, GUPS and red-black tree",
    4: "checked mode's cost below AddressSanitizer's over the same kernels (geometric means)",
    5: "protection metadata <= 1% of the pool's memory",
}


def _false_positives(recs: Records, det: List[dict]) -> Item:
    """The clean child reporting something, a checked run whose kernels' results were
    wrong, and a checked run that ended in an error (the fatal policy aborts the process on
    a false positive, so it leaves an error, not a record)."""
    clean_bad = sum(not d["ok"] for d in det if d["expected"] == "silent")
    checked = [r for e in (PLAIN, ASAN) for r in recs.find(e, TREE.name)]
    unverified = sum(not r.get("verified") for r in checked)
    errors = sum(e["experiment"] in (PLAIN, ASAN) and e["variant"] == TREE.name
                 for e in recs.results.get("errors", []))
    fp = clean_bad + unverified + errors
    return Item(f"false positives (clean child {clean_bad}, wrong checked runs {unverified}, checked runs "
                f"ended in an error {errors})", Tally(fp, str(fp)), 0)


def _detect_goal(recs: Records) -> Goal:
    g = Goal("protect-1", GOAL_TITLES[1])
    det = _detection(recs)
    if not det:
        g.missing.append("no detection records (protect tree-thp)")
        fp = _false_positives(recs, det)
        if fp.ratio.value > 0:  # the run that should have recorded them ended in an error
            g.items.append(fp)
        return g
    bugs = [d for d in det if d["expected"] == "caught"]
    caught = sum(d["ok"] for d in bugs)
    g.items.append(Item("seeded bugs caught", Tally(caught / len(bugs), f"{caught} of {len(bugs)}"), 1.0,
                        at_least=True))
    g.items.append(_false_positives(recs, det))
    for d in bugs:
        if not d["ok"]:
            g.notes.append(f"{d['bug']} not caught: child ended {d['status']}: {d['report'][:120]}")
    return g


def _cost_goal(recs: Records, number: int, ks, target: float) -> Goal:
    g = Goal(f"protect-{number}", GOAL_TITLES[number])
    size = _largest(recs, PLAIN)
    for k in ks:
        rt = checked_cost(recs, size, k) if size else None
        if rt is None:
            g.missing.append(f"{k}: no checked and unchecked tree records")
        else:
            g.items.append(Item(f"{format_size(size)} {k}: checked / unchecked", rt, target))
    return g


def _gm(xs: List[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _anchor_goal(recs: Records) -> Goal:
    g = Goal("protect-4", GOAL_TITLES[4])
    size = _largest(recs, PLAIN)
    pairs = [(checked_cost(recs, size, k), asan_cost(recs, size, k)) for k in KERNELS] if size else []
    pairs = [(c, a) for c, a in pairs if c and a]
    if not pairs:
        g.missing.append("no checked and ASan records")
        return g
    ours, theirs = _gm([c.value for c, _ in pairs]), _gm([a.value for _, a in pairs])
    g.items.append(Item(f"{format_size(size)} checked cost {ours:.2f}x / ASan cost {theirs:.2f}x "
                        f"({len(pairs)} kernels)", Tally(ours / theirs, f"{ours / theirs:.2f}"), 1.0))
    return g


def _metadata_goal(recs: Records) -> Goal:
    g = Goal("protect-5", GOAL_TITLES[5])
    for r in recs.all:
        m = r.get("protect_metadata")
        if r["experiment"] in (PLAIN, ASAN) and m and m["pool_bytes"]:
            share = (m["pool_tag_bytes"] + m["array_table_bytes"]) / m["pool_bytes"]
            g.items.append(Item(f"{r['experiment']} {format_size(r['size_bytes'])}: tags and tables / pool bytes",
                                Tally(share, f"{share:.3%}"), 0.01))
    if not g.items:
        g.missing.append("no protect tree records")
    g.notes.append("by construction 8 B of tag a block and 24 B of table a leaf: 0.05% at 64 KiB blocks, "
                   "0.78% at 4 KiB (the smallest block)")
    return g


def _floor_note(recs: Records, g: Goal) -> None:
    """protect-3's control on the red-black tree: the same lookups over the unchecked tree
    behind the cheapest bounds check (phase rbtree_floor), in turn with the two ways."""
    size = _largest(recs, PLAIN)
    t = recs.find(PLAIN, TREE.name, size) if size else None
    if t is None or not _has(t, "rbtree_floor") or not _has(t, _phase("rbtree")):
        return
    g.notes.append(f"{format_size(size)} rbtree: the cheapest bounds check (the size in a register, no tag, "
                   f"no poisoned entry: blind to another thread's free) / unchecked: "
                   f"{PhaseRatio(t, t, 'rbtree_floor', _phase('rbtree')).cell()}; checked mode (the fatal "
                   "policy) compares with a bound in a register too, and sees a free on another thread "
                   "through the leaf's poisoned entry, so what it adds over the control is the call to its "
                   "out-of-line check in the loop, whose registers the compiler keeps around it (lookups "
                   "overlap only as far as the CPU's window of loads and instructions reaches, so each op "
                   "an access adds shortens it); the compiler lays each way's loop out on its own, so this "
                   "is the control's cost, not one instruction's")


def goals(recs: Records) -> List[Goal]:
    g3 = _cost_goal(recs, 3, ("iterator", "chase", "gups", "rbtree"), 1.10)
    _floor_note(recs, g3)
    return [_detect_goal(recs), _cost_goal(recs, 2, ("segments", "blackscholes"), 1.05), g3,
            _anchor_goal(recs), _metadata_goal(recs)]


SUITE = SuiteDef("protect", "Protection without address translation: checked arrays' cost and detection (issue 24)",
                 ROWS, SCALES, pass_s=pass_s, setup_s=setup_s, report=report, goals=goals, rank=75)
