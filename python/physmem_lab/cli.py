"""The ``physmem`` command: argparse subcommands, each mapped to a ``cmd_<name>``.

Exit status: 0 success; 1 when ``bench`` had errors (verification failures, missing
programs, crashes, timeouts) or ``compare``/``report`` could not read their input;
2 for usage errors (argparse); 130 when interrupted.
"""
import argparse
import shlex
import sys
from pathlib import Path

from . import __version__, machine, programs, simulate, suites
from .compare import compare, format_comparison, is_unreliable
from .doctor import diagnose
from .paths import default_bin_dir
from .report import headline, write_report
from .results import load_results
from .runner import Bench
from .schema import SchemaError


# Exit statuses of every subcommand (README, "The lab"): 0 done; 1 an error (a file that
# cannot be read, a failed point, a bad value); 2 a usage error (argparse); 3 `compare`
# ran but printed RESULTS UNRELIABLE (too few samples, spread too high, backings or
# machines differ), so a script cannot take its changes as measured.
EXIT_UNRELIABLE = 3


def _err(msg: str) -> int:
    print(f"physmem: error: {msg}", file=sys.stderr)
    return 1


def cmd_bench(args) -> int:
    suite, scale = args.suite, args.scale
    if args.full:       # the full scale of whatever suites are named (a scale name: the lab)
        suite, scale = ("full", None) if suite in ("tiny", "default", "full") else (suite, "full")
    only = [e.strip() for e in args.only.split(",") if e.strip()] if args.only else None
    known = {e for sd in suites.registry().values() for e in sd.experiments}
    if only and set(only) - known:
        return _err(f"--only: unknown experiment(s) {', '.join(sorted(set(only) - known))} "
                    f"(known: {', '.join(sorted(known))})")
    facts = machine.collect()        # what the plan may depend on (memory, cores)
    catalog = programs.Catalog(args.bin_dir)
    try:
        pl = suites.plan(suite, only=only, reps=args.reps, official=args.official,
                         mem_available=facts.get("mem_available_bytes"), scale=scale,
                         rounds=args.rounds, catalog=catalog, machine=facts)
    except ValueError as e:
        return _err(f"--suite: {e}")
    sim = simulate.Simulation.from_args(args, pl.scale)
    if sim.unknown_preset():
        return _err(f"--simulate: {sim.unknown_preset()}")
    sim.add_estimates(pl.points)
    command = "physmem " + " ".join(shlex.quote(a) for a in args.argv)
    bench = Bench(pl, Path(args.bin_dir), Path(args.output), command,
                  reserve=not args.no_reserve, aslr=args.aslr,
                  layout_random=args.layout_random, order_seed=args.order_seed,
                  catalog=catalog, simulation=sim)
    try:
        results = bench.run()
    except KeyboardInterrupt:
        print(f"physmem: interrupted; partial results in {args.output}", file=sys.stderr)
        return 130
    print(f"physmem: results in {args.output}: {len(results['records'])} records, "
          f"{len(results['skipped'])} skipped, {len(results['errors'])} errors", file=sys.stderr)
    if args.report:
        paths = write_report(results, Path(args.report), source=args.output)
        print(headline(results))
        print(f"physmem: report in {paths['md']} and {paths['html']}", file=sys.stderr)
    if results["errors"]:
        print(f"physmem: {len(results['errors'])} POINT(S) FAILED:", file=sys.stderr)
        for e in results["errors"]:
            print(f"  - {e['experiment']} {e['variant']} {e['size_bytes']}: {e['reason']}",
                  file=sys.stderr)
        return 1
    return 0


def cmd_report(args) -> int:
    try:
        results = load_results(args.results)
    except (OSError, ValueError, SchemaError) as e:
        return _err(f"{args.results}: {e}")
    paths = write_report(results, Path(args.output or Path(args.results).with_suffix("")
                                       .as_posix() + "-report"), source=args.results)
    print(headline(results))
    print(f"physmem: report in {paths['md']} and {paths['html']}", file=sys.stderr)
    return 0


def cmd_compare(args) -> int:
    try:
        a, b = load_results(args.a), load_results(args.b)
    except (OSError, ValueError, SchemaError) as e:
        return _err(str(e))
    c = compare(a, b, alpha=args.alpha)
    print(format_comparison(c, args.a, args.b))
    return EXIT_UNRELIABLE if is_unreliable(c) else 0


def cmd_doctor(args) -> int:
    print(diagnose(Path(args.bin_dir)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="physmem", description="physmem's lab harness "
                                "(lab/PROTOCOL.md): run, report, compare, check the machine")
    p.add_argument("--version", action="version", version=f"physmem-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="run a suite of measurement points")
    b.add_argument("--suite", default="default",
                   help="tiny, default or full (the lab at that scale), or a comma-separated "
                        "list of suites (lab, alloc, alias, prefault, stack ...) or all, "
                        "each at --scale")
    b.add_argument("--scale", choices=["tiny", "default", "full"],
                   help="sizes and repetitions of the suites named (default: default)")
    b.add_argument("--full", action="store_true",
                   help="the full scale (the seed papers' sizes): --scale full for the suites "
                        "named; alone, the lab at full scale (--suite full)")
    b.add_argument("--reps", type=int, help="timed repetitions per point, over all its "
                   "rounds (suite default)")
    b.add_argument("--rounds", type=int, help="run every point this many times, each in a "
                   "fresh process with its share of --reps, odd rounds in the reverse order "
                   "of the round before (suite default; lab: 2)")
    b.add_argument("--order-seed", type=int, help="seed of the random point order "
                   "(default: a fresh one, recorded in the result file)")
    b.add_argument("--only", help="experiments to run, comma-separated (e.g. scan,gups)")
    b.add_argument("-o", "--output", default="results.json", help="result file")
    b.add_argument("--report", metavar="DIR", help="also write the report into DIR")
    b.add_argument("--no-reserve", action="store_true",
                   help="do not reserve 1 GiB huge pages (as root the default reserves "
                        "what the suite needs and restores it at the end)")
    b.add_argument("--official", action="store_true",
                   help="gups: HPCC's 4*N updates per pass instead of the suite's cap")
    b.add_argument("--aslr", choices=["off", "on"], default="off",
                   help="address-space randomisation in the programs (default off: each "
                        "program disables it for itself, lab/PROTOCOL.md)")
    b.add_argument("--layout-random", type=int, default=0, metavar="N",
                   help="also run every point N more times with layout seeds 1..N "
                        "(environment padding, heap offset) and report the spread they cause")
    simulate.add_arguments(b)
    b.add_argument("--bin-dir", default=str(default_bin_dir()),
                   help="directory of physmem_lab_* (default: $PHYSMEM_LAB_BIN or build/lab)")
    b.set_defaults(func=cmd_bench)

    r = sub.add_parser("report", help="write report.md, report.html and plots")
    r.add_argument("results")
    r.add_argument("-o", "--output", metavar="DIR", help="default: RESULTS-report/")
    r.set_defaults(func=cmd_report)

    c = sub.add_parser("compare", help="compare two result files point by point",
                       epilog="exit status: 0 compared; 1 a file could not be read; 3 RESULTS "
                              "UNRELIABLE (printed with the reasons)")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--alpha", type=float, default=0.05)
    c.set_defaults(func=cmd_compare)

    d = sub.add_parser("doctor", help="what this machine offers and what to change")
    d.add_argument("--bin-dir", default=str(default_bin_dir()))
    d.set_defaults(func=cmd_doctor)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    if getattr(args, "reps", None) is not None and args.reps < 1:
        return _err("--reps must be at least 1")
    if getattr(args, "rounds", None) is not None and args.rounds < 1:
        return _err("--rounds must be at least 1")
    if getattr(args, "layout_random", 0) < 0:
        return _err("--layout-random must be 0 or more")
    if getattr(args, "sim_refs", None) is not None and args.sim_refs < 1:
        return _err("--sim-refs must be at least 1")
    return args.func(args)
