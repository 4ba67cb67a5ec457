"""``physmem doctor``: what this machine offers the lab, and what to change, as commands.

Contract: read-only (changes nothing), never fails for a missing file or program, and
returns the text to print; the command exits 0.
"""
from . import machine, programs, suites
from .hugepages import nr_path
from .units import format_size

G = 1 << 30


def _probe(bin_dir):
    """(probe dict or None, built experiments, missing experiments)."""
    built, missing, probe = [], [], None
    for exp in dict.fromkeys(e for sd in suites.registry().values() for e in sd.experiments):
        try:
            path = programs.find(bin_dir, exp)
        except programs.ProgramMissing:
            missing.append(exp)
            continue
        built.append(exp)
        if probe is None:
            try:
                probe = programs.query(path, "--probe")
            except RuntimeError:
                pass
    return probe, built, missing


def diagnose(bin_dir) -> str:
    probe, built, missing = _probe(bin_dir)
    m = machine.collect(probe)
    mem = machine.meminfo()
    need = suites.reservation_pages(
        suites.plan("default", mem_available=mem.get("MemAvailable"),
                    catalog=programs.Catalog(bin_dir)).pages_1g_needed(),
        mem.get("MemAvailable"))
    out, todo = ["physmem doctor: what this machine offers the lab"], []
    out += [f"  {line}" for line in machine.summary_lines(m)]
    out.append(f"  MemAvailable: {format_size((mem.get('MemAvailable', 0) >> 20) << 20)}")
    out.append(f"  programs built in {bin_dir}: {', '.join(built) or 'none'}"
               + (f"; missing: {', '.join(missing)}" if missing else ""))
    if missing:
        todo.append("build the experiment programs: cmake -S . -B build -G Ninja && cmake --build build")
    if probe is None:
        todo.append("counters unknown: no program could be probed (build the lab first)")
    elif any(v.startswith("unavailable") for k, v in m["counters"].items() if k != "page_faults"):
        out.append("  hardware counters unavailable (e.g. a VM without a PMU): the lab "
                   "measures wall-clock time and software page faults only")
    if m["thp_enabled"] == "never":
        todo.append("THP is off, thp variants get 4 KiB pages: "
                    "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
    hp1 = m["hugepages"].get("1g", {})
    if not (hp1.get("supported") and m["pdpe1gb"]):
        out.append("  no 1 GiB pages on this CPU/kernel: *-1g points will be skipped")
    elif hp1["free"] < need:
        cmd = f"echo {hp1['nr'] + need - hp1['free']} > {nr_path('1g')}"
        note = ("`physmem bench` does this itself as root and restores it (--no-reserve: off)"
                if m["root"] else "needs root; without it *-1g points are skipped")
        todo.append(f"the default suite wants {need} free 1 GiB pages ({hp1['free']} free): "
                    f"{cmd}   # {note}; undo: echo {hp1['nr']} > {nr_path('1g')}")
    if m["aslr"] not in ("0", "unknown"):
        out.append(f"  ASLR {m['aslr']} system-wide: every lab program turns it off for itself "
                   "(personality ADDR_NO_RANDOMIZE; `physmem bench --aslr on` keeps it)")
    if not m["governor"].startswith("n/a") and m["governor"] != "performance":
        todo.append(f"governor is {m['governor']}: cpupower frequency-set -g performance")
    if not m["root"]:
        todo.append("not root: huge pages cannot be reserved and pagemap is unreadable; run as root for *-1g points")
    out.append("what to change:" if todo else "nothing to change: the lab can run everything here")
    out += [f"  - {t}" for t in todo]
    return "\n".join(out)
