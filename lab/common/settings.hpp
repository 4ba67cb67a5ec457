// lab/common/settings.hpp — what one run of an experiment program is asked to do.
//
// Parsed once from the command line (args.cpp) following lab/PROTOCOL.md. An experiment
// declares which variant kinds and parameters it accepts in a ProgramSpec; anything
// else is a usage error (exit 2) naming the argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "physmem/backing.hpp"

namespace lab {

// How the measured data is laid out: see PROTOCOL.md, "--variant". The stack program's
// kinds say where the measured thread's stack lives (contiguous, split into libgcc's
// segments, split into BlockPool blocks).
enum class Kind {
    array, tree_index, tree_iter, tree_seg, malloc, pool, contiguous, split, split_pool, tree_fixed,
    paged, mapped, stxxl,  // the paging suite: data larger than a memory budget
    tree,                  // the algorithms suite: a TreeArray read every way its kernels read
    device,                // the paging suite's bar: the file's storage device, read by fio
};

// "array", "tree-index", "tree-iter", "tree-seg", "malloc", "pool", "contiguous", "split",
// "split-pool", "tree-fixed", "paged", "mapped", "stxxl", "tree", "device".
std::string_view to_string(Kind k) noexcept;

// What a kind means and what it maps, as --list declares it (args.cpp's one table).
struct KindInfo {
    std::string_view name;
    std::string_view meaning;
    int extra_1g_pages;  // 1 GiB pages mapped beside the data on backing 1g (tree inner blocks, ...)
};
const KindInfo& info(Kind k) noexcept;

// What a backing asks the kernel for, as --list declares it.
std::string_view backing_meaning(physmem::Backing b) noexcept;

// One program-specific parameter: --param name=value, with its default and the values
// it accepts ("" in `choices` accepts any value the program parses itself).
struct ParamSpec {
    std::string name;
    std::string default_value;
    std::vector<std::string> choices;
    std::string help;
};

// What an experiment program accepts. Declared once in each program's main().
struct ProgramSpec {
    std::string name;        // e.g. "physmem_lab_scan"
    std::string experiment;  // e.g. "scan"
    std::string unit;        // what one op is: "element", "update", "step", ...
    std::vector<Kind> kinds;
    std::size_t default_block_size = 64 << 10;
    std::vector<ParamSpec> params;
    // Kinds measured on some backings only (kinds not named here: 4k thp 2m 1g).
    std::vector<std::pair<Kind, std::vector<physmem::Backing>>> only_backings = {};
    // Whether the program runs a traced pass of its kernel (Context::simulate) and so
    // accepts --simulate, --sim-* and --trace; other programs refuse them (exit 2).
    bool traceable = false;

    // The backings `k` is measured on.
    std::vector<physmem::Backing> backings(Kind k) const;
};

// The translation model's options (PROTOCOL.md, "Translation"): a traced pass of the
// kernel fed to physmem::tlbsim after the measurement (lab/common/translation.*).
struct SimSettings {
    // Default cap on the references counted (N; W + N = 10M simulated): measured on the
    // development VM (Zen 5 preset), the worst default-scale points — gups on 1 GiB of
    // 4 KiB pages (a walk per update, ~15M refs/s) and chase on a tree (its traced passes
    // are as slow as its timed ones) — spend under about a second here.
    static constexpr std::uint64_t kDefaultRefs = std::uint64_t{1} << 23;

    std::string simulate = "off";  // a preset name, "auto" (this CPU's preset) or "off"
    bool caches = false;           // model the preset's data caches (--sim-caches on)
    unsigned levels = 4;           // page-table levels: 4, or 5 (LA57)
    std::uint64_t refs = kDefaultRefs;  // N: references counted after the warm-up (the cap)
    std::string trace;             // --trace FILE: the references simulated, to a trace file
    // W: references simulated before counting starts (structures warm): N / 4.
    std::uint64_t warmup() const noexcept { return refs / 4; }
    // Whether a traced pass runs at all.
    bool active() const noexcept { return simulate != "off" || !trace.empty(); }
};

struct Settings {
    Kind kind = Kind::array;
    physmem::Backing backing = physmem::Backing::page_4k;  // never `best`
    std::string variant;       // as given, e.g. "tree-seg-1g"
    std::size_t size_bytes = 0;
    std::size_t block_size = 0;
    unsigned reps = 5;
    unsigned warmup = 1;
    double min_rep_ms = 50;
    // Adaptive repetitions: with target_spread > 0, measuring stops after min_reps (>= 2)
    // repetitions once (max - min) / median of those so far is <= target_spread; `reps`
    // stays the most that run. 0: every one of `reps` runs (the default).
    unsigned min_reps = 0;
    double target_spread = 0;
    std::uint64_t seed = 42;
    bool aslr = false;                          // --aslr on: keep the kernel's randomisation
    std::optional<std::uint64_t> layout_seed;   // --layout-seed S (>= 1): layout.hpp
    std::map<std::string, std::string> params;  // every declared param, defaults filled in
    SimSettings sim;                            // only a traceable program's may differ from the defaults

    const std::string& param(const std::string& name) const { return params.at(name); }
    // The param as an unsigned integer (size suffixes allowed); exits 2 when it is not.
    std::size_t param_size(const std::string& name) const;
    bool is_tree() const noexcept {
        return kind == Kind::tree_index || kind == Kind::tree_iter || kind == Kind::tree_seg ||
               kind == Kind::tree_fixed || kind == Kind::tree;
    }
    // Whether the data (or stack) comes in blocks of --block-size (pool kinds).
    bool is_pool() const noexcept { return kind == Kind::pool || kind == Kind::split_pool; }
    // Whether --block-size shapes what is measured: then the record's params name it, so
    // points of one variant at two block sizes stay two points.
    bool uses_blocks() const noexcept {
        return is_tree() || is_pool() || kind == Kind::paged || kind == Kind::stxxl;
    }
};

// What the command line asked for.
struct Invocation {
    enum class Mode { run, probe, list } mode = Mode::run;
    Settings settings;
};

// Parses argv against `spec`. Prints usage and exits 0 for --help, exits 2 with a
// message naming the argument for anything invalid.
Invocation parse_args(const ProgramSpec& spec, int argc, char** argv);

// Prints a usage-error message and the usage line on stderr, then exits 2.
[[noreturn]] void usage_error(const ProgramSpec& spec, const std::string& why);

// The directory of a program's data files: --param dir when given, else $TMPDIR, else
// /var/tmp. pre: the program declares a "dir" param.
std::string data_dir(const Settings& s);

}  // namespace lab
