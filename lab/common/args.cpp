// lab/common/args.cpp — the command line of every experiment program (PROTOCOL.md).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "core/parse.hpp"
#include "physmem/options.hpp"
#include "physmem/tlbsim/config.hpp"
#include "settings.hpp"

namespace lab {

namespace {

// Every kind, in the order of enum Kind: its name, what it means, and the 1 GiB pages it maps
// beside the data (a tree's inner blocks and a pool's block table are mappings of their own).
constexpr KindInfo kKinds[] = {
    {"array", "the data in one flat mapping (an SoA layout's columns share it)", 0},
    {"tree-index", "the data in a tree of --block-size blocks; each access walks the index from the root", 1},
    {"tree-iter", "the data in a tree of blocks, visited by an iterator that keeps its path", 1},
    {"tree-seg", "the data in a tree of blocks, processed one leaf (a contiguous segment) at a time", 1},
    {"malloc", "objects from the C heap (malloc/new) of the allocator in use", 1},
    {"pool", "objects in the blocks of a physmem BlockPool", 1},
    {"contiguous", "the measured thread runs the normal build on one contiguous stack", 0},
    {"split", "the -fsplit-stack build on a small thread stack; more stack in segments libgcc maps", 0},
    {"split-pool", "the -fsplit-stack build; each segment one --block-size block of a physmem BlockPool", 1},
    {"tree-fixed", "the data in a tree of blocks; each access walks a view whose depth is fixed at compile "
                   "time (with_fixed_depth)", 1},
    {"paged", "a physmem::PagedArray: leaves in a file, up to a memory budget in --block-size pool blocks, "
              "loaded by the software walk", 1},
    {"mapped", "a MAP_SHARED file mapping, paged by the kernel inside a memory cgroup limited to the budget", 0},
    {"stxxl", "STXXL's stxxl::vector (an out-of-core vector with its own block cache of the budget)", 0},
    {"tree", "a physmem::TreeArray of --block-size blocks, read every way the program's kernels read "
             "(iterators, operator[], segmented algorithms)", 1},
    {"device", "the storage device under a file of --size bytes, read by fio with O_DIRECT in --block-size "
               "requests (the limit a pager reading that file can reach)", 0},
};

constexpr physmem::Backing kBackings[] = {physmem::Backing::page_4k, physmem::Backing::thp,
                                          physmem::Backing::page_2m, physmem::Backing::page_1g};

std::size_t parse_bytes(const ProgramSpec& spec, std::string_view flag, std::string_view v) {
    auto n = physmem::parse_size(v);
    if (!n || *n == 0) usage_error(spec, std::string(flag) + ": '" + std::string(v) + "' is not a positive size (e.g. 64M)");
    return *n;
}

template <class N>
N parse_number(const ProgramSpec& spec, std::string_view flag, std::string_view v, N lo, N hi) {
    N x{};
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc{} || end != v.data() + v.size() || x < lo || x > hi)
        usage_error(spec, std::string(flag) + ": '" + std::string(v) + "' is out of range");
    return x;
}

// A fraction in (0, 1], e.g. "0.05"; exits 2 otherwise.
double parse_fraction(const ProgramSpec& spec, std::string_view flag, std::string_view v) {
    double x = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc{} || end != v.data() + v.size() || !(x > 0 && x <= 1))
        usage_error(spec, std::string(flag) + ": '" + std::string(v) + "' is not a fraction in (0, 1]");
    return x;
}

bool parse_on_off(const ProgramSpec& spec, std::string_view flag, std::string_view v) {
    if (v != "on" && v != "off") usage_error(spec, std::string(flag) + ": '" + std::string(v) + "' is not on or off");
    return v == "on";
}

// The translation model's options (SimSettings), declared once: flag, value, help and
// parser. Only a traceable program accepts them.
struct SimOption {
    std::string_view flag, value, help;
    void (*parse)(const ProgramSpec& spec, std::string_view flag, std::string_view v, SimSettings& s);
};

void parse_simulate(const ProgramSpec& spec, std::string_view flag, std::string_view v, SimSettings& s) {
    if (v != "off" && v != "auto") {
        try {
            physmem::tlbsim::preset(v);
        } catch (const std::invalid_argument& e) {
            usage_error(spec, std::string(flag) + ": " + e.what());
        }
    }
    s.simulate = v;
}

const SimOption kSimOptions[] = {
    {"--simulate", "PRESET|auto|off",
     "after measuring, run a traced pass through the TLB simulator with this machine preset (auto: the "
     "preset of this CPU; default off)", parse_simulate},
    {"--sim-caches", "on|off", "model the preset's data caches for the walks' and the data's references (default off)",
     [](const ProgramSpec& spec, std::string_view f, std::string_view v, SimSettings& s) {
         s.caches = parse_on_off(spec, f, v);
     }},
    {"--sim-levels", "4|5", "page-table levels of the simulated machine (default 4; 5 = LA57)",
     [](const ProgramSpec& spec, std::string_view f, std::string_view v, SimSettings& s) {
         s.levels = parse_number<unsigned>(spec, f, v, 4, 5);
     }},
    {"--sim-refs", "N", "references simulated and counted, after a warm-up of N/4 (default 8M; suffixes K/M/G)",
     [](const ProgramSpec& spec, std::string_view f, std::string_view v, SimSettings& s) {
         auto n = physmem::parse_size(v);
         if (!n || *n < 2) usage_error(spec, std::string(f) + ": '" + std::string(v) + "' is not a count >= 2");
         s.refs = *n;
     }},
    {"--trace", "FILE", "write the simulated references (warm-up and window) to FILE, a physmem::tlbsim trace",
     [](const ProgramSpec& spec, std::string_view f, std::string_view v, SimSettings& s) {
         if (v.empty()) usage_error(spec, std::string(f) + ": needs a file name");
         s.trace = v;
     }},
};

const SimOption* sim_option(std::string_view flag) {
    for (const SimOption& o : kSimOptions)
        if (o.flag == flag) return &o;
    return nullptr;
}

std::string usage(const ProgramSpec& spec) {
    std::string u = "usage: ";
    u += spec.name;
    u += " --variant KIND-BACKING --size BYTES [--block-size B] [--reps R] [--warmup W]\n"
         "       [--min-rep-ms MS] [--min-reps N --target-spread F] [--seed S] [--aslr on|off] [--layout-seed S] [--param KEY=VALUE]...\n       ";
    u += spec.name;
    u += " --probe | --list | --help\n  variants:";
    for (Kind k : spec.kinds)
        for (physmem::Backing b : spec.backings(k)) u.append(" ").append(to_string(k)).append("-").append(physmem::to_string(b));
    u += "\n";
    for (const ParamSpec& p : spec.params)
        u.append("  --param ").append(p.name).append("=... ").append(p.help).append(" (default ").append(p.default_value).append(")\n");
    if (spec.traceable)
        for (const SimOption& o : kSimOptions)
            u.append("  ").append(o.flag).append(" ").append(o.value).append(": ").append(o.help).append("\n");
    return u;
}

// "tree-seg-1g" -> (tree_seg, page_1g); exits 2 on an unknown or undeclared kind.
void parse_variant(const ProgramSpec& spec, std::string_view v, Settings& s) {
    auto dash = v.rfind('-');
    if (dash == std::string_view::npos) usage_error(spec, "--variant: '" + std::string(v) + "' is not KIND-BACKING");
    std::string_view kind = v.substr(0, dash), backing = v.substr(dash + 1);
    auto it = std::find_if(std::begin(kKinds), std::end(kKinds), [&](const KindInfo& k) { return k.name == kind; });
    auto b = physmem::parse_backing(backing);
    if (it == std::end(kKinds) || !b || *b == physmem::Backing::best)
        usage_error(spec, "--variant: '" + std::string(v) + "' is not KIND-BACKING with BACKING one of 4k thp 2m 1g");
    s.kind = static_cast<Kind>(it - std::begin(kKinds));
    if (std::find(spec.kinds.begin(), spec.kinds.end(), s.kind) == spec.kinds.end())
        usage_error(spec, "--variant: kind '" + std::string(kind) + "' is not measured by " + spec.experiment);
    auto on = spec.backings(s.kind);
    if (std::find(on.begin(), on.end(), *b) == on.end())
        usage_error(spec, "--variant: kind '" + std::string(kind) + "' is not measured on " + std::string(backing) + " by " + spec.experiment);
    s.backing = *b;
    s.variant = v;
}

void parse_param(const ProgramSpec& spec, std::string_view kv, Settings& s) {
    auto eq = kv.find('=');
    std::string key(kv.substr(0, eq));
    auto p = std::find_if(spec.params.begin(), spec.params.end(), [&](const ParamSpec& ps) { return ps.name == key; });
    if (eq == std::string_view::npos || p == spec.params.end())
        usage_error(spec, "--param: '" + std::string(kv) + "' is not KEY=VALUE with a known KEY");
    std::string value(kv.substr(eq + 1));
    if (!p->choices.empty() && std::find(p->choices.begin(), p->choices.end(), value) == p->choices.end())
        usage_error(spec, "--param " + key + ": '" + value + "' is not one of the accepted values");
    s.params[key] = value;
}

}  // namespace

std::string_view to_string(Kind k) noexcept { return kKinds[static_cast<int>(k)].name; }

const KindInfo& info(Kind k) noexcept { return kKinds[static_cast<int>(k)]; }

std::string_view backing_meaning(physmem::Backing b) noexcept {
    switch (b) {
        case physmem::Backing::page_4k: return "4 KiB pages; transparent huge pages refused (MADV_NOHUGEPAGE)";
        case physmem::Backing::thp: return "transparent huge pages asked for (MADV_HUGEPAGE, 2 MiB aligned); the kernel decides";
        case physmem::Backing::page_2m: return "2 MiB hugetlb pages from the reserved pool (MAP_HUGETLB)";
        case physmem::Backing::page_1g: return "1 GiB hugetlb pages from the reserved pool (MAP_HUGETLB)";
        default: return "";
    }
}

std::vector<physmem::Backing> ProgramSpec::backings(Kind k) const {
    for (const auto& [kind, on] : only_backings)
        if (kind == k) return on;
    return {std::begin(kBackings), std::end(kBackings)};
}

void usage_error(const ProgramSpec& spec, const std::string& why) {
    std::fprintf(stderr, "%s: %s\n%s", spec.name.c_str(), why.c_str(), usage(spec).c_str());
    std::exit(2);
}

std::size_t Settings::param_size(const std::string& name) const {
    auto n = physmem::parse_size(param(name));
    if (!n) {
        std::fprintf(stderr, "--param %s: '%s' is not a number\n", name.c_str(), param(name).c_str());
        std::exit(2);
    }
    return *n;
}

Invocation parse_args(const ProgramSpec& spec, int argc, char** argv) {
    Invocation inv;
    Settings& s = inv.settings;
    s.block_size = spec.default_block_size;
    for (const ParamSpec& p : spec.params) s.params[p.name] = p.default_value;
    bool have_variant = false, have_size = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        std::optional<std::string_view> value;
        if (auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos && arg != "--param") {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        auto need = [&]() -> std::string_view {
            if (value) return *value;
            if (i + 1 >= argc) usage_error(spec, std::string(arg) + " needs a value");
            return argv[++i];
        };
        if (arg == "--variant") parse_variant(spec, need(), s), have_variant = true;
        else if (arg == "--size") s.size_bytes = parse_bytes(spec, arg, need()), have_size = true;
        else if (arg == "--block-size") s.block_size = parse_bytes(spec, arg, need());
        else if (arg == "--reps") s.reps = parse_number<unsigned>(spec, arg, need(), 1, 1000);
        else if (arg == "--warmup") s.warmup = parse_number<unsigned>(spec, arg, need(), 0, 100);
        else if (arg == "--min-rep-ms") s.min_rep_ms = parse_number<unsigned>(spec, arg, need(), 0, 600000);
        else if (arg == "--min-reps") s.min_reps = parse_number<unsigned>(spec, arg, need(), 2, 1000);
        else if (arg == "--target-spread") s.target_spread = parse_fraction(spec, arg, need());
        else if (arg == "--seed") s.seed = parse_number<std::uint64_t>(spec, arg, need(), 0, ~std::uint64_t{0});
        else if (arg == "--aslr") s.aslr = parse_on_off(spec, arg, need());
        else if (arg == "--layout-seed") s.layout_seed = parse_number<std::uint64_t>(spec, arg, need(), 1, ~std::uint64_t{0});
        else if (arg == "--param") parse_param(spec, need(), s);
        else if (arg == "--probe") inv.mode = Invocation::Mode::probe;
        else if (arg == "--list") inv.mode = Invocation::Mode::list;
        else if (arg == "--help" || arg == "-h") std::fputs(usage(spec).c_str(), stdout), std::exit(0);
        else if (const SimOption* o = sim_option(arg)) {
            if (!spec.traceable) usage_error(spec, std::string(arg) + ": " + spec.experiment + " has no traced pass");
            o->parse(spec, arg, need(), s.sim);
        }
        else usage_error(spec, "unknown argument '" + std::string(argv[i]) + "'");
    }
    if (s.block_size < (4u << 10) || s.block_size > (std::size_t{1} << 30) || (s.block_size & (s.block_size - 1)))
        usage_error(spec, "--block-size: must be a power of two from 4K to 1G");
    if (inv.mode == Invocation::Mode::run && (!have_variant || !have_size))
        usage_error(spec, "--variant and --size are required");
    if ((s.min_reps != 0) != (s.target_spread != 0))
        usage_error(spec, "--min-reps and --target-spread go together");
    if (s.sim.levels == 5 && s.sim.simulate != "off" && s.sim.simulate != "auto") {
        try {
            physmem::tlbsim::with_five_levels(physmem::tlbsim::preset(s.sim.simulate));
        } catch (const std::invalid_argument& e) {
            usage_error(spec, std::string("--sim-levels 5: ") + e.what());
        }
    }
    return inv;
}

std::string data_dir(const Settings& s) {
    if (!s.param("dir").empty()) return s.param("dir");
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/var/tmp";
}

}  // namespace lab
