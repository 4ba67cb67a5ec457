"""The ``paging`` suite (issue 14, seed 001 Table 1 "swapping"): data larger than a memory
budget, paged in software by physmem's PagedArray, by the kernel (a MAP_SHARED mapping in
a cgroup-v1 memory cgroup limited to the budget), and by STXXL's ``stxxl::vector``; the
in-memory TreeArray is the ceiling (at 1x, also timed in turn inside the paged array's
process: phase ``in_memory``, what paging-3 judges pair by pair).

Programs: lab/experiments/paging.cpp, and lab/experiments/device.cpp for the device's own
limits (fio with O_DIRECT on the same file system); the paged seq and randread points above 1x
run the same fio reads just before and after their measured passes (``fio_beside``), the bar
paging-5 and -6 compare them with. Kernels (``kernel``): ``seq`` (a sum in order),
``strided`` (the same sum over block-sized chunks 8 apart), ``gups`` (HPCC updates with
the 128-slot look-ahead: a ``prefetch()`` hint for the paged array) and ``randread``
(random reads in batches of 128, each batch hinted one batch ahead of its reads:
``prefetch()`` for the paged array, ``MADV_WILLNEED`` on each element's page for the
mapping; issue 30). ``ratio`` is data / budget (1, 2, 4 and 10; randread 2 and 10; 20 and the mapping at
10 in ``--full``). Scans use 64 KiB blocks; GUPS uses 4 KiB blocks (a random update wants
the smallest unit; the mapping's unit is a 4 KiB page) — STXXL gets the same block size as
the paged array in every row. Random reads also run on 64 KiB blocks with their own leaves
and with 4 KiB leaves (``leaf``: PagingOptions::leaf_bytes), reported apart. The payloads (``paging``, ``paged``, ``mapped``, ``stxxl``)
are lab/schema/payloads/paging.schema.json, checked with every record.
"""
from typing import List, NamedTuple, Optional

from .analysis import Goal, Item, PhaseRatio, Ratio, Scalar, Value, timed_faults
from .suitedef import K, M, G, Point, Row, SuiteDef, Variant
from .units import format_size

EXP = "paging"
PAGED, MAPPED, STXXL, MEMORY = (Variant("paged", "thp"), Variant("mapped", "4k"), Variant("stxxl", "4k"),
                                Variant("tree-index", "thp"))
KINDS = {"paged": "PagedArray", "mapped": "kernel mmap (cgroup)", "stxxl": "STXXL vector",
         "tree-index": "in memory (TreeArray)"}
SCAN_BLOCK, GUPS_BLOCK = 64 * K, 4 * K
RATIOS = ("1", "2", "4")
READ_RATIOS = ("2", "10")  # randread's (issue 30: "2x and 10x at default scale")
ALL_RATIOS = ("1", "2", "4", "10", "20")
GET_READS = 1 << 20  # the get kernel's reads per pass (1x: hits)
GET_MISS_READS = 1 << 12  # at 2x (half miss, ~25 us each)
THREADS_GAIN = 1.8   # paging-7: two threads' reads per second over one's

_SIZES = {"tiny": (16 * M,), "default": (64 * M,), "full": (1 * G,)}
_NOT_DEFAULT = {k: v for k, v in _SIZES.items() if k != "default"}
_FULL = {"full": _SIZES["full"]}


def _p(kernel, ratios):
    return tuple({"kernel": kernel, "ratio": r} for r in ratios)


ROWS = (
    Row(EXP, (PAGED,), params=_p("seq", RATIOS) + _p("strided", RATIOS), sizes=_SIZES,
        block_sizes=(SCAN_BLOCK,), priority=0),
    Row(EXP, (PAGED,), params=_p("gups", ("1", "2")), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates",
        priority=0),
    # The peers where a goal reads them (paging-1: the scan at 2x; paging-2: GUPS at 2x),
    # and the rest of the tables' grid, which the main job leaves out (its 10 minutes: the
    # mapping's strided scans at 2x and 4x and its GUPS at 1x took 14 s of a 10 min 7 s
    # main job; `--suite paging` and --full run them).
    Row(EXP, (MAPPED,), params=_p("seq", ("2",)), sizes=_SIZES, block_sizes=(SCAN_BLOCK,), priority=0),
    Row(EXP, (MAPPED,), params=_p("gups", ("2",)), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates",
        priority=0),
    Row(EXP, (STXXL,), params=_p("seq", ("2",)), sizes=_SIZES, block_sizes=(SCAN_BLOCK,), priority=0),
    Row(EXP, (MAPPED,), params=_p("seq", ("1", "4")) + _p("strided", RATIOS), sizes=_SIZES,
        block_sizes=(SCAN_BLOCK,)),
    Row(EXP, (MAPPED,), params=_p("gups", ("1",)), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates"),
    Row(EXP, (STXXL,), params=_p("strided", ("2",)), sizes=_SIZES, block_sizes=(SCAN_BLOCK,)),
    # GUPS at 4x (paged and mapped) and STXXL's GUPS: the tables' grid, no goal reads them;
    # not at the default scale (the main job's 10 minutes): the mapped peer's random faults
    # take 6-8 s a process at 4x, STXXL's fill and verification on 4 KiB blocks 8-10 s.
    Row(EXP, (PAGED, MAPPED), params=_p("gups", ("4",)), sizes=_NOT_DEFAULT, block_sizes=(GUPS_BLOCK,),
        cap="updates", priority=2),
    Row(EXP, (STXXL,), params=_p("gups", ("2",)), sizes=_NOT_DEFAULT, block_sizes=(GUPS_BLOCK,), cap="updates"),
    # STXXL at the other ratios: the tables' full grid, no goal reads them.
    Row(EXP, (STXXL,), params=_p("seq", ("1", "4")) + _p("strided", ("1", "4")), sizes=_SIZES,
        block_sizes=(SCAN_BLOCK,)),
    Row(EXP, (STXXL,), params=_p("gups", ("1", "4")), sizes=_NOT_DEFAULT,
        block_sizes=(GUPS_BLOCK,), cap="updates", priority=2),
    Row(EXP, (MEMORY,), params=_p("seq", ("1",)) + _p("strided", ("1",)), sizes=_SIZES, block_sizes=(SCAN_BLOCK,),
        priority=0),
    Row(EXP, (MEMORY,), params=_p("gups", ("1",)), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates",
        priority=0),
    # Hinted random reads (issue 30), against fio's random reads below; 4 KiB leaves, as GUPS.
    # Not STXXL: its vector takes no hint, so it is no peer for hinted reads.
    Row(EXP, (PAGED, MAPPED), params=_p("randread", READ_RATIOS), sizes=_SIZES, block_sizes=(GUPS_BLOCK,),
        cap="updates", priority=0),
    Row(EXP, (MEMORY,), params=_p("randread", ("1",)), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates",
        priority=0),
    # Many budgets of data (issue 30): 10x at every scale for the paged array; the mapping
    # only in --full, whose budget holds its read-ahead (at 10x of 64 MiB, 6.4 MiB cannot
    # hold two 16 MiB MADV_SEQUENTIAL windows: the point would be skipped) and whose random
    # faults take seconds a pass; 20x in --full.
    Row(EXP, (PAGED,), params=_p("seq", ("10",)) + _p("strided", ("10",)), sizes=_SIZES, block_sizes=(SCAN_BLOCK,),
        priority=0),
    Row(EXP, (PAGED,), params=_p("gups", ("10",)), sizes=_SIZES, block_sizes=(GUPS_BLOCK,), cap="updates", priority=0),
    Row(EXP, (MAPPED,), params=_p("seq", ("10",)) + _p("strided", ("10",)), sizes=_FULL, block_sizes=(SCAN_BLOCK,)),
    Row(EXP, (MAPPED,), params=_p("gups", ("10",)), sizes=_FULL, block_sizes=(GUPS_BLOCK,), cap="updates"),
    Row(EXP, (PAGED, MAPPED), params=_p("seq", ("20",)) + _p("strided", ("20",)), sizes=_FULL,
        block_sizes=(SCAN_BLOCK,)),
    Row(EXP, (PAGED, MAPPED), params=_p("gups", ("20",)) + _p("randread", ("20",)), sizes=_FULL,
        block_sizes=(GUPS_BLOCK,), cap="updates"),
    # The leaf a random read moves (issue 30, I/O sized to the access): hinted random reads on
    # the scans' 64 KiB blocks, with leaves of the block and with 4 KiB leaves cut from it
    # (PagingOptions::leaf_bytes), beside the 4 KiB blocks' row above. No goal reads them,
    # so they run no fio beside them.
    Row(EXP, (PAGED,), params=tuple({"kernel": "randread", "ratio": "2", "leaf": leaf, "fio": "off"}
                                    for leaf in ("0", "4096")),
        sizes=_SIZES, block_sizes=(SCAN_BLOCK,), cap="updates", priority=1),
    # Reads from threads (issue 30, item 4): random get()s at 1x (every read hits), one
    # thread and two in turn in one process; 2^20 reads a pass (tens of ms: a thread's start
    # is noise). At 2x half of them miss: their reads overlap (2^12 reads a pass, ~0.1 s).
    Row(EXP, (PAGED,), params=({"kernel": "get", "ratio": "1", "threads": "2", "updates": str(GET_READS)},),
        sizes=_SIZES, block_sizes=(GUPS_BLOCK,), priority=0),
    Row(EXP, (PAGED,), params=({"kernel": "get", "ratio": "2", "threads": "2", "updates": str(GET_MISS_READS)},),
        sizes=_SIZES, block_sizes=(GUPS_BLOCK,)),
)

# The device's own limits (issue 30): fio with O_DIRECT on a file of the data's size in the
# same directory, at the pager's request sizes: 4 KiB random reads and 64 KiB sequential
# reads, io_uring at the pager's queue depth (128) and psync one at a time; sequential reads
# also into 2 MiB hugetlb buffers (iomem=shmhuge; root reserves them for the run), as the
# paged array's frames are huge pages (the development VM: 2.5 GB/s into them, 1.3 GB/s into
# 4 KiB pages).
# A table, not a goal's read (priority 1: --suite paging and --full run it, the main job
# does not): paging-5 and -6 compare each paged point with fio run beside it (fio_beside),
# and fall back to these rows only for a record without that (in the main job a point
# whose fio failed beside it then has no bar: the goal says so).
DEVICE = "device"
_DEV = Variant("device", "4k")
ROWS += (
    Row(DEVICE, (_DEV,), params=({"pattern": "randread", "engine": "io_uring", "depth": "128"},
                                 {"pattern": "randread", "engine": "psync"}),
        sizes=_SIZES, block_sizes=(GUPS_BLOCK,), priority=1, rounds=1),
    Row(DEVICE, (_DEV,), params=({"pattern": "read", "engine": "io_uring", "depth": "128"},
                                 {"pattern": "read", "engine": "io_uring", "depth": "128", "iomem": "shmhuge"},
                                 {"pattern": "read", "engine": "psync"}),
        sizes=_SIZES, block_sizes=(SCAN_BLOCK,), priority=1, rounds=1),
)

# cap: GUPS updates per pass (each pass continues the stream).
SCALES = {
    "tiny": {"reps": 2, "warmup": 0, "min_rep_ms": 5, "cap": 2048, "budget_s": 55},
    "default": {"reps": 6, "rounds": 2, "warmup": 0, "min_rep_ms": 20, "cap": 4096, "budget_s": 85,
                "min_reps": 4, "target_spread": 0.05},
    "full": {"reps": 5, "rounds": 2, "warmup": 0, "min_rep_ms": 50, "cap": 65536, "budget_s": None},
}

# Rough ns per element (scans) or per update (gups) when half the data is out: ETA only.
_NS = {("seq", "paged"): 2, ("seq", "mapped"): 6, ("seq", "stxxl"): 15, ("strided", "paged"): 3,
       ("strided", "mapped"): 35, ("strided", "stxxl"): 16, ("gups", "paged"): 5000, ("gups", "mapped"): 30000,
       ("gups", "stxxl"): 40000, ("randread", "paged"): 8000, ("randread", "mapped"): 8000}


def pass_s(p: Point, cap: Optional[int]) -> float:
    if p.experiment == DEVICE:
        return 0.6   # one fio run: its start-up (~0.25 s) and 300 ms of reads
    if p.params.get("kernel") == "get":  # one thread's pass and the threads' (40 ns a hit, 50 us a miss)
        return 1.5 * (40e-9 * GET_READS if p.params.get("ratio") == "1" else 25e-6 * GET_MISS_READS)
    if p.params.get("kernel") in ("gups", "randread"):
        return _NS.get((p.params.get("kernel"), p.kind), 30) * 1e-9 * (cap or 4096)
    return _NS.get((p.params.get("kernel"), p.kind), 0.3) * 1e-9 * p.size_bytes / 8


def setup_s(p: Point) -> float:
    """Writing the data out (and, for GUPS, the verifying replay); STXXL on 4 KiB blocks
    writes, warms and verifies at about 40 s per GiB here."""
    slow = 40.0 if p.kind == "stxxl" and p.params.get("kernel") == "gups" else 0.0
    return 0.3 + _fio_beside_s(p) + (2.0 + slow) * p.size_bytes / G


def _fio_beside_s(p: Point) -> float:
    """fio beside a paged seq or randread point above 1x: writing its file and two 200 ms
    runs, each with fio's start-up (~0.25 s)."""
    beside = p.kind == "paged" and p.params.get("kernel") in ("seq", "randread") and p.params.get("ratio") != "1"
    return 1.2 if beside and p.params.get("fio", "on") == "on" else 0.0


def _of(recs) -> List[dict]:
    return [r for r in recs.all if r["experiment"] == EXP]


def _leaf_param(r) -> int:
    return int(r["params"].get("leaf") or 0)


def _standard(r) -> bool:
    """A record of the kernel's own block size with leaves of that block: what the tables and
    goals compare (the leaf-size rows are reported apart)."""
    block = GUPS_BLOCK if r["params"].get("kernel") in ("gups", "randread", "get") else SCAN_BLOCK
    return r["paging"]["block_bytes"] == block and _leaf_param(r) == 0


def _find(recs, kind: str, kernel: str, ratio: str) -> Optional[dict]:
    for r in _of(recs):
        if r["kind"] == kind and r["params"].get("kernel") == kernel and _standard(r) and (
                kind == "tree-index" or str(r["params"].get("ratio")) == ratio):
            return r
    return None


def _io_unit(r) -> int:
    """Bytes of one read or write of a paged record: its leaf (a block unless smaller leaves
    were asked for)."""
    return r.get("paged", {}).get("leaf_bytes") or r["paging"]["block_bytes"]


def _per_op(r) -> str:
    ns = r["median_ns"]
    return f"{ns / 1000:.1f} us" if ns >= 1000 else f"{ns:.2f} ns"


def _io(r) -> str:
    """Storage bytes per op of the measured passes: the pager's own count for the paged
    array (io_uring's workers are not always charged to /proc/self/io), else the process's.
    Divided by the ops those passes did in the same process (``measured.ops``: a record
    pooled over rounds keeps its first round's payload but every round's repetitions, and
    the calibration pass is counted too); older records: estimated from the repetitions."""
    ops = r["paging"]["measured"].get("ops") or (
        r.get("ops_per_pass", 1) * r.get("passes_per_rep", 1) * (r.get("reps", 1) + r.get("warmup", 0)))
    if "paged" in r:
        rd, wr = r["paged"]["bytes_read"], r["paged"]["bytes_written"]
    elif "stxxl" in r:
        rd, wr = r["stxxl"]["measured"]["bytes_read"], r["stxxl"]["measured"]["bytes_written"]
    else:
        rd, wr = r["paging"]["measured"]["read_bytes"], r["paging"]["measured"]["write_bytes"]
    return f"{rd / ops:.1f} / {wr / ops:.1f}"


def _faults(r) -> str:
    m = r["paging"]["measured"]
    return f"{m['major_faults']} / {m['minor_faults']}"


def _extra(r) -> str:
    if "paged" in r:
        p = r["paged"]
        return (f"{p['io']}{' O_DIRECT' if p['direct'] else ''}; loads {p['loads']}, read-ahead hits "
                f"{p['readahead_hits']}, hinted {p['hinted']}, write-backs {p['writebacks']}")
    if "mapped" in r:
        m = r["mapped"]
        own = (f"budget + {format_size(m['own_allowance_bytes'])} for its own pages" if "own_allowance_bytes" in m
               else f"budget + {format_size(m['held_before_bytes'])} held")
        return (f"limit {format_size(m['limit_bytes'])} ({own}), "
                f"madvise {m['madvise']}{' + willneed per batch' if m.get('read_hint') == 'willneed' else ''}, {m['cached_pages_after_drop']} pages cached after the drop"
                + (f", {m['cached_pages_after_warm']} after the warm read" if "cached_pages_after_warm" in m else "")
                + (f", {m['cached_pages_after_passes']} after the passes" if "cached_pages_after_passes" in m else ""))
    if "stxxl" in r:
        s = r["stxxl"]
        return f"{s['cache_pages']} pages of {format_size(s['block_bytes'])}, {s.get('version', '')}"
    return ""


def report(doc, recs, results, out_dir):
    """One table per kernel: every variant and ratio, time per op, its ratio to the
    in-memory array, storage bytes per op and kernel faults of the measured passes."""
    for kernel, title in (("seq", "Sequential scan"), ("strided", "Strided scan (chunks 8 apart)"),
                          ("gups", "Random updates (GUPS, 128-slot look-ahead)"),
                          ("randread", "Random reads (batches of 128, each hinted a batch ahead)")):
        mem = _find(recs, "tree-index", kernel, "1")
        rows = []
        for ratio in ALL_RATIOS:
            for kind in ("paged", "mapped", "stxxl", "tree-index"):
                r = _find(recs, kind, kernel, ratio) if kind != "tree-index" or ratio == "1" else None
                if r is None:
                    continue
                vs = f"{r['median_ns'] / mem['median_ns']:.2f}x" if mem else "-"
                rows.append([f"{ratio}x" if kind != "tree-index" else "-", KINDS[kind], format_size(r["size_bytes"]),
                             format_size(r["paging"]["block_bytes"]), _per_op(r), f"{r['rel_spread']:.0%}", vs,
                             _io(r), _faults(r), _extra(r)])
        if not rows:
            continue
        doc.h(3, title)
        unit = {"gups": "update", "randread": "read"}.get(kernel, "element")
        doc.table(["data / budget", "variant", "data", "block", "time per " + unit,
                   "spread", "vs in memory", "bytes read / written per op", "major / minor faults", "details"], rows)
        if kernel == "randread":
            _leaf_section(doc, recs)
            _threads_section(doc, recs)
    doc.p("Faults and bytes are those of the measured passes (calibration included) of the point's first "
          "process; bytes per op divide by the ops of those passes. The mapping's cgroup limit is the budget plus "
          "a 1 MiB allowance for the process's own pages charged inside (older records: plus what it held before, which "
          "the group is never charged: the data got more than the budget); a point whose budget cannot hold two of the "
          "kernel's read-ahead windows for the file is skipped (the group's OOM killer would kill a fault); the "
          "file's page cache is dropped (and checked with mincore), "
          "then the file is read once in order inside the limit, untimed: every variant starts warm, "
          "where the paged array starts after its fill (a budget's worth in memory; STXXL's vector is "
          "read once through its cache too). STXXL's sequential scan is its bufreader (overlapped "
          "streaming reads past the vector's cache: it reads every block at 1x too); its strided scan and "
          "GUPS go through the cache. STXXL is Debian's libstxxl build (its version string, shown per row, names "
          "the build's phase). THEIRS: AIFM (OSDI 2020) reports up to 13x "
          "the throughput of kernel swapping (Fastswap) for application-integrated far memory.")
    _device_section(doc, recs)


def _leaf_section(doc, recs):
    """Hinted random reads at 2x by the paged array's block and leaf sizes: what one read of
    an element moves from the file, and what it costs."""
    rs = sorted((r for r in _of(recs) if r["kind"] == "paged" and r["params"].get("kernel") == "randread"
                 and str(r["params"].get("ratio")) == "2"),
                key=lambda r: (r["size_bytes"], -r["paging"]["block_bytes"], -_io_unit(r)))
    if not any(not _standard(r) for r in rs):
        return
    rows = [[format_size(r["size_bytes"]), format_size(r["paging"]["block_bytes"]), format_size(_io_unit(r)),
             _per_op(r), f"{r['rel_spread']:.0%}", _io(r)] for r in rs]
    doc.p("The leaf a random read moves (issue 30: I/O sized to the access). Random reads at 2x the budget "
          "on the scans' 64 KiB blocks, with leaves of the block and with 4 KiB leaves cut from it "
          "(`PagingOptions::leaf_bytes`), beside 4 KiB blocks; one process each (`--param leaf=BYTES`).")
    doc.table(["data", "block", "leaf", "time per read", "spread", "bytes read / written per op"], rows)


def _threads_section(doc, recs):
    """Random get()s from one thread and from several, in turn in one process."""
    rs = sorted((r for r in _of(recs) if r["kind"] == "paged" and r["params"].get("kernel") == "get"
                 and "threads" in (r.get("phases") or {})), key=lambda r: (r["size_bytes"], int(r["params"]["ratio"])))
    if not rs:
        return
    rows = []
    for r in rs:
        many = r["phases"]["threads"]
        pr = PhaseRatio(r, r, "threads", None)
        rows.append([format_size(r["size_bytes"]), f"{r['params']['ratio']}x", str(r["params"].get("threads")),
                     _per_op(r), _per_op(many), f"{1 / pr.value:.2f}x [{1 / pr.hi:.2f}-{1 / pr.lo:.2f}]",
                     f"{r['paged']['loads'] / max(r['paging']['measured'].get('ops') or 1, 1):.2f}"])
    doc.p("Random `get()`s from threads (issue 30): one thread, then the same reads split over the threads, "
          "in turn a repetition at a time in one process (`--param kernel=get --param threads=N`). At 1x every "
          "read hits and takes no lock; at 2x half miss, and a fault reads its leaf with the lock released.")
    doc.table(["data", "data / budget", "threads", "time per read, one thread", "with the threads",
               "reads per second, threads / one [range]", "leaf loads per read"], rows)


# ---------------------------------------------------------------- the device

def _device(recs, pattern: str, engine: str, block: int) -> Optional[dict]:
    """The fastest fio record of that pattern, engine and request size (over its buffers)."""
    best = None
    for r in recs.all:
        d = r.get("device")
        if r["experiment"] == DEVICE and d and d["pattern"] == pattern and d["engine"] == engine and (
                d["block_bytes"] == block) and (best is None or _dev_bw(r) > _dev_bw(best)):
            best = r
    return best


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0.0


def _dev_bw(r) -> float:
    return _median([p["bw_bytes"] for p in r["device"]["passes"]])


def _dev_iops(r) -> float:
    return _median([p["iops"] for p in r["device"]["passes"]])


WORD = 8  # bytes of an element of the paging program's data


def _load_rate(r) -> float:
    """Leaves a paged record read from its file per second: its loads per op over the
    measured passes (the ``paged`` counts span the same passes as ``paging.measured``)
    over its median time per op."""
    per_op = _loads_per_op(r)
    return per_op / (r["median_ns"] * 1e-9) if per_op is not None and r["median_ns"] > 0 else 0.0


def _loads_per_op(r) -> Optional[float]:
    """Leaves a paged record loaded per op over its measured passes (None without ops)."""
    ops = r["paging"]["measured"].get("ops") or 0
    return r["paged"]["loads"] / ops if ops else None


def _scan_bw(r) -> float:
    """A scan's throughput in bytes of data per second (its median time per element), what
    the device's bandwidth bounds once the data is many budgets large (at 2x, about half
    the scan is served from memory, and it may run above the device)."""
    return WORD / (r["median_ns"] * 1e-9)


_BUFFERS = {"malloc": "4 KiB pages", "shmhuge": "2 MiB hugetlb"}


def _device_section(doc, recs):
    """The device rows (fio alone: --suite paging and --full) when the run has them, and each
    paged point above 1x against its bar (fio beside it, else those rows)."""
    devs = [r for r in recs.all if r["experiment"] == DEVICE]
    rows = _bar_rows(recs)
    if not devs and not rows:
        return
    doc.h(3, "The device (fio, O_DIRECT, a file of the data's size in the same directory)")
    if devs:
        doc.table(["pattern", "engine", "depth", "request", "buffers", "file", "IOPS", "MiB/s", "fio"],
                  [[r["device"]["pattern"], r["device"]["engine"], str(r["device"]["depth"]),
                    format_size(r["device"]["block_bytes"]), _BUFFERS.get(r["device"].get("iomem", "malloc"), "?"),
                    format_size(r["device"]["file_bytes"]), f"{_dev_iops(r):.0f}", f"{_dev_bw(r) / M:.0f}",
                    r["device"].get("fio", "")] for r in devs])
    else:
        doc.p("No device rows in this run (a table of --suite paging and --full; the main job leaves them "
              "out): each point's bar is fio run beside it.")
    if rows:
        doc.table(["kernel", "data / budget", "block", "what", "paged array", "device (io_uring, depth 128)",
                   "share", "fio measured"], rows)
        doc.p("The paged array's rate from its median time per element (scans) or update (GUPS); what part "
              "of it came from memory depends on the ratio (at 2x about half, at 4x a quarter). For hinted "
              "random reads the rate is of leaves read from the file (the pager's loads per read over the "
              "measured passes, divided by the time per read): what the device serves. The bar is fio "
              "on the same file system at the same request size, its fastest buffers (issue 30): for sequential "
              "scans and hinted random reads above 1x, fio run in the point's own process just before and just "
              "after its measured passes (their mean; --param fio, the record's fio_beside), as this device's "
              "speed drifts from one minute to the next; else the device rows, when the run has them. The "
              "buffers' page size matters: a 64 KiB request into 4 KiB pages is sixteen segments for the "
              "device, into a huge page one (the development VM: 1.3 against 2.5 GB/s); the paged array's "
              "frames are huge pages.")


def _bar_rows(recs) -> List[list]:
    """The table of each paged point above 1x against its bar (_bar), as _device_section prints it."""
    rows = []
    for r in _of(recs):
        if r["kind"] != "paged" or str(r["params"].get("ratio")) == "1":
            continue
        k, block = r["params"]["kernel"], _io_unit(r)
        if k == "gups":
            bar = _bar(recs, r, "iops", "randread", block)
            mine, unit = 1e9 / r["median_ns"], "updates/s vs random reads/s"
        elif k == "randread":
            bar = _bar(recs, r, "iops", "randread", block)
            mine, unit = _load_rate(r), "leaf reads/s vs random reads/s"
        else:
            bar = _bar(recs, r, "bw_bytes", "read", block)
            bar = bar and bar._replace(value=bar.value / M)
            mine, unit = _scan_bw(r) / M, "MiB/s of data vs read"
        v = bar.value if bar else None
        rows.append([k, f"{r['params']['ratio']}x", format_size(block), unit, f"{mine:.0f}",
                     f"{v:.0f}" if v else "-", f"{mine / v:.2f}x" if v else "-",
                     ("beside the point" if bar.beside else "device rows") if bar else "-"])
    return rows


GOAL_TITLES = {
    1: "sequential scan at 2x the budget: >= 1.2x the throughput of the cgroup-limited mapping and >= 1.0x STXXL's",
    2: "random updates (GUPS with look-ahead) at 2x the budget: >= 3x the mapping's throughput",
    3: "at 1x the budget (everything fits): within 1.05x of the in-memory array (issue 30; 1.10x before)",
    4: "zero kernel page faults in the paged array's measured passes",
    5: "sequential scan at 2x the budget and more: the paged array scans its data at >= 0.9x the bandwidth fio "
       "reads from the same file system with O_DIRECT (io_uring, the same request size, huge-page buffers; "
       "run beside each point)",
    6: "hinted random reads at 2x and 10x the budget: the paged array reads leaves at >= 0.9x fio's random 4 KiB "
       "reads per second (io_uring, depth 128; run beside each point) and reads elements >= 1.5x as fast as the "
       "mapping with MADV_WILLNEED on the same batches",
    7: f"random get() that hit (1x the budget): two threads read >= {THREADS_GAIN}x as many elements per second "
       "as one (in turn, one process)",
}


def _item(g: Goal, what: str, num, den, target: float, absent: str):
    if num is None or den is None:
        g.missing.append(absent)
    else:
        g.items.append(Item(what, Ratio(num, den), target))


def _goal_scan(recs):
    g = Goal("paging-1", GOAL_TITLES[1])
    paged = _find(recs, "paged", "seq", "2")
    _item(g, "seq 2x: paged / mapped time", paged, _find(recs, "mapped", "seq", "2"), 1 / 1.2,
          "no seq ratio=2 record of paged and mapped")
    _item(g, "seq 2x: paged / STXXL time", paged, _find(recs, "stxxl", "seq", "2"), 1.0,
          "no seq ratio=2 record of paged and stxxl")
    for kind in ("mapped", "stxxl"):
        n, d = _find(recs, "paged", "strided", "2"), _find(recs, kind, "strided", "2")
        if n and d:
            g.notes.append(f"strided 2x: paged / {kind} time {n['median_ns'] / d['median_ns']:.2f}x")
    return g


def _goal_gups(recs):
    g = Goal("paging-2", GOAL_TITLES[2])
    _item(g, "gups 2x: paged / mapped time", _find(recs, "paged", "gups", "2"), _find(recs, "mapped", "gups", "2"),
          1 / 3, "no gups ratio=2 record of paged and mapped")
    n, d = _find(recs, "paged", "gups", "2"), _find(recs, "stxxl", "gups", "2")
    if n and d:
        g.notes.append(f"gups 2x: paged / STXXL time {n['median_ns'] / d['median_ns']:.2f}x")
    return g


FITS = 1.05  # paging-3's bound: the hit path costs (almost) nothing


def _goal_fits(recs):
    """At 1x the paged program times the same data in memory in turn with the paged array
    (phase ``in_memory``): judged pair by pair within the process. Older records: against
    the tree-index process."""
    g = Goal("paging-3", GOAL_TITLES[3])
    for kernel in ("seq", "strided", "gups"):
        r = _find(recs, "paged", kernel, "1")
        if r is not None and "in_memory" in (r.get("phases") or {}):
            g.items.append(Item(f"{kernel} 1x: paged / in-memory time (in turn, one process)",
                                PhaseRatio(r, r, None, "in_memory"), FITS))
            continue
        _item(g, f"{kernel} 1x: paged / in-memory time", r,
              _find(recs, "tree-index", kernel, "1"), FITS, f"no {kernel} record of paged ratio=1 and tree-index")
    return g


class Faults(Scalar):
    """Kernel page faults of a record's timed repetitions (the lab's per-repetition
    counter: perf's page-faults software event, else getrusage) plus the major faults of
    the whole process over the measured region; target 0. (The process's minor faults
    over the region also count the lab's own first touches between repetitions, so they
    are shown, not judged.) A count: a sanity finding on the record's timing leaves it
    judged (``timed``)."""
    timed = False

    @property
    def value(self):
        return timed_faults(self.num) + self.num["paging"]["measured"]["major_faults"]

    def cell(self):
        m = self.num["paging"]["measured"]
        src = ((self.num.get("counters") or {}).get("page_faults") or {}).get("source", "?")
        return (f"{timed_faults(self.num):.0f} in the timed repetitions ({src}), {m['major_faults']} major "
                f"in the process")


def _goal_faults(recs):
    g = Goal("paging-4", GOAL_TITLES[4])
    for r in _of(recs):
        if r["kind"] == "paged":
            p = r["params"]
            g.items.append(Item(f"{p['kernel']} {p['ratio']}x: kernel faults while paging", Faults(r, r), 0))
    if not g.items:
        g.missing.append("no paged records")
    return g


class Bar(NamedTuple):
    """What a paged point is compared with: fio's rate, the words that say where it came
    from, and whether fio ran beside the point (False: the device rows, another time)."""
    value: float
    words: str
    beside: bool


def _beside(r, key: str) -> Optional[Bar]:
    """fio's rate beside a paged point (the record's ``fio_beside``: its reads of a file of
    the data's size, just before and just after the measured passes; ``key`` "bw_bytes" or
    "iops"): their mean and the words for it, or None when the record has none that read."""
    b = r.get("fio_beside")
    if not b or not b.get("ok") or not b.get("passes"):
        return None
    vals = [p[key] for p in b["passes"]]
    unit = (lambda v: f"{v / M:.0f}") if key == "bw_bytes" else (lambda v: f"{v:.0f}")
    whens = ", ".join(f"{p['when']} {unit(p[key])}" for p in b["passes"])
    what = "MiB/s" if key == "bw_bytes" else "reads/s"
    return Bar(sum(vals) / len(vals), f"beside it: {whens} {what}, buffers: {_BUFFERS.get(b['iomem'], b['iomem'])}",
               True)


def _bar(recs, r, key: str, pattern: str, block: int) -> Optional[Bar]:
    """The bar for paged record ``r``: fio beside it (_beside) when it has that, else the
    fastest fio record of ``pattern`` at ``block`` bytes (the device rows, another time)."""
    b = _beside(r, key)
    if b:
        return b
    d = _device(recs, pattern, "io_uring", block)
    if d is None:
        return None
    return Bar(_dev_bw(d) if key == "bw_bytes" else _dev_iops(d), "from the device rows, run at another time", False)


def _goal_device(recs):
    g = Goal("paging-5", GOAL_TITLES[5])
    for r in _of(recs):
        if r["kind"] != "paged" or r["params"].get("kernel") != "seq" or str(r["params"].get("ratio")) == "1":
            continue
        bar = _bar(recs, r, "bw_bytes", "read", r["paging"]["block_bytes"])
        if bar is None:
            g.missing.append(f"seq {r['params']['ratio']}x: no fio record of sequential reads at its block size")
            continue
        mine, bw, how = _scan_bw(r), bar.value, bar.words
        g.items.append(Item(f"seq {r['params']['ratio']}x: fio's bandwidth / the scan's",
                            Value(r, bw / mine, f"{mine / M:.0f} MiB/s of data vs fio's {bw / M:.0f} MiB/s "
                                  f"({mine / bw:.2f}x; fio {how})"), 1 / 0.9))
    if not g.items and not g.missing:
        g.missing.append("no paged seq record above 1x the budget")
    return g


def _goal_reads(recs):
    g = Goal("paging-6", GOAL_TITLES[6])
    for ratio in READ_RATIOS:
        r = _find(recs, "paged", "randread", ratio)
        if r is None:
            g.missing.append(f"randread {ratio}x: no paged record")
            continue
        bar = _bar(recs, r, "iops", "randread", _io_unit(r))
        if bar is None:
            g.missing.append(f"randread {ratio}x: no fio record of random reads at its leaf size")
        else:
            mine, iops, how = _load_rate(r), bar.value, bar.words
            g.items.append(Item(f"randread {ratio}x: fio's reads/s / the pager's leaf reads/s",
                                Value(r, iops / mine if mine else float("inf"),
                                      f"{mine:.0f} leaves/s vs fio's {iops:.0f} reads/s ({mine / iops:.2f}x; "
                                      f"fio {how})"), 1 / 0.9))
        m = _find(recs, "mapped", "randread", ratio)
        beyond = _beyond_device(r, m, bar, READ_GAIN)
        if beyond:
            g.not_applicable.append(f"randread {ratio}x: paged / mapped (willneed) time: {beyond}")
        else:
            _item(g, f"randread {ratio}x: paged / mapped (willneed) time", r, m, 1 / READ_GAIN,
                  f"randread {ratio}x: no mapped record")
    return g


READ_GAIN = 1.5   # paging-6: the paged array's reads >= 1.5x as fast as the hinted mapping's


def _beyond_device(paged, mapped, dev: Optional[Bar], gain: float) -> Optional[str]:
    """Why ``gain`` x the mapping's reads per second is out of any pager's reach on this
    device, or None: reading that fast at the paged array's own leaf loads per read would
    take more leaf reads per second than fio gets from the device (``dev``: _bar's random
    reads/s, the mapping already reads near its limit). None when a record is missing (the
    item then says so)."""
    per_read = _loads_per_op(paged)
    if not (mapped and dev and mapped["median_ns"] > 0) or per_read is None:
        return None
    need, bar = gain * per_read * 1e9 / mapped["median_ns"], dev.value
    if need <= bar:
        return None
    return (f"not applicable on this device: the mapping reads {1e9 / mapped['median_ns']:.0f} elements/s; "
            f"{gain:g}x that at the paged array's {per_read:.3f} leaf loads a read needs {need:.0f} leaf "
            f"reads/s, above fio's {bar:.0f} random reads/s (the device's limit; fio {dev.words})")


def _goal_threads(recs):
    g = Goal("paging-7", GOAL_TITLES[7])
    r = _find(recs, "paged", "get", "1")
    if r is None or "threads" not in (r.get("phases") or {}):
        g.missing.append("no paged get record at 1x with its threads phase")
    else:
        g.items.append(Item(f"get 1x: {r['params'].get('threads')} threads / one thread, time per read (in turn, "
                            "one process)", PhaseRatio(r, r, "threads", None), 1 / THREADS_GAIN))
    return g


def goals(recs) -> List[Goal]:
    return [_goal_scan(recs), _goal_gups(recs), _goal_fits(recs), _goal_faults(recs), _goal_device(recs),
            _goal_reads(recs), _goal_threads(recs)]


def _did_storage_io(r) -> bool:
    """Whether the measured passes read or wrote storage or took a major fault."""
    m = r["paging"]["measured"]
    return m["read_bytes"] > 0 or m["write_bytes"] > 0 or m["major_faults"] > 0


def sanity(recs):
    """(rule, record, the record it may not beat, True): nothing that pages beats the
    in-memory TreeArray on the same kernel, data size and block size (the paged array does
    the same walk plus its own bookkeeping; a mapping or STXXL at best holds the same bytes).
    A mapping or STXXL whose measured passes did no storage I/O and took no major fault
    (at 1x, everything held) is a flat array in memory, which may beat a tree; the paged
    array is held to the rule always (it is the tree). Every pair is across processes
    (:mod:`physmem_lab.sanity`): each side runs in its own, and at 1x the paged array and
    the tree run the same loop (``for_each_segment``), so a faster paged process inside the
    tree's spread between processes is noise (issue 30: 0.7% below 1 beside a tree whose
    two processes were 12% apart)."""
    out = []
    for r in _of(recs):
        if r["kind"] == "tree-index" or (r["kind"] != "paged" and not _did_storage_io(r)):
            continue
        mem = _find(recs, "tree-index", r["params"].get("kernel"), "1")
        if mem is not None and mem["size_bytes"] == r["size_bytes"] and (
                mem["paging"]["block_bytes"] == r["paging"]["block_bytes"]):
            out.append(("a paged variant faster than the same data in memory", r, mem, True))
    return out


SUITE = SuiteDef("paging", "Application-controlled swapping: data larger than memory (seed 001, Table 1)", ROWS,
                 SCALES, pass_s=pass_s, setup_s=setup_s, report=report, goals=goals, rank=60, sanity=sanity,
                 sanity_note="nothing that pages may beat the in-memory TreeArray on the same kernel, size and "
                             "block size (a mapping or STXXL that did no storage I/O in its measured passes "
                             "held everything in memory, as a flat array, and is not held to it); the two sides "
                             "run in separate processes, so a paged variant is faster only beyond the tree's "
                             "spread between processes")
