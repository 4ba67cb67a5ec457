// bench/scan_bench.cpp — what reading a tree of pool blocks costs next to a flat array.
//
// For each block size, a TreeArray<uint32_t> on a BlockPool and a flat uint32_t array on
// a Region of the SAME backing rung hold the same n values. Six ways of reading them are
// timed side by side, contiguous and tree runs interleaved (A B A B ...), and printed as
// ratios tree/contiguous of the median ns per element read:
//
//   1 for_each_segment scan      4 with_fixed_depth view operator[] scan
//   2 iterator (range-for) scan  5 random operator[] reads (same index sequence for both)
//   3 operator[] scan            6 one read per 4 KiB (for_each_strided), all offsets
//
// Every sum is checked against the contiguous one (and, for full reads, against the sum
// of the values written): a mismatch exits 1. This is a benchmark, not a test: it
// asserts nothing about speed; it prints the goals next to the ratios.
//
//   physmem_scan_bench [--elements N] [--block-size SIZE[,SIZE...]]...
//                      [--backing best|1g|2m|thp|4k] [--reps R] [--json] [--smoke]
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "physmem/backing.hpp"
#include "common/counters.hpp"
#include "physmem/fixed_depth.hpp"
#include "core/parse.hpp"
#include "physmem/options.hpp"
#include "physmem/pool.hpp"
#include "physmem/region.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using Elem = std::uint32_t;
using Tree = physmem::TreeArray<Elem>;
using physmem::Backing;

constexpr std::string_view kSchema = "physmem.scan_bench/1";
constexpr std::size_t kStride = 4096 / sizeof(Elem);  // one read per 4 KiB
constexpr std::size_t kFlatAlignment = std::size_t{2} << 20;
constexpr std::size_t kDefaultElements = std::size_t{1} << 26;  // 256 MiB of uint32
constexpr std::size_t kSmokeElements = std::size_t{1} << 20;    // still depth 3 at 4 KiB
constexpr double kSegmentGoal = 1.00;  // issue goal: segmented scan <= 1.00x
constexpr double kIndexGoal = 1.50;    // issue goal: operator[] scan at depth 3 <= 1.5x

// ---- arguments ------------------------------------------------------------------------

constexpr char kUsage[] =
    "usage: physmem_scan_bench [--elements N] [--block-size SIZE[,SIZE...]]...\n"
    "                          [--backing best|1g|2m|thp|4k] [--reps R] [--json] [--smoke]\n"
    "  --elements N     uint32 elements per array (suffixes K/M/G = 2^10/2^20/2^30); default 64M\n"
    "  --block-size S   pool block size, a power of two from 4K to 1G; repeatable or a comma\n"
    "                   list; default 4K,64K\n"
    "  --backing B      page size asked for the pool; the flat array gets the rung the pool got\n"
    "                   (default thp)\n"
    "  --reps R         timed repetitions after one warm-up (default 5)\n"
    "  --json           one JSON object per line (schema physmem.scan_bench/1) instead of a table\n"
    "  --smoke          1M elements, 1 rep (explicit --elements/--reps still win)\n";

struct Args {
    std::optional<std::size_t> elements;
    std::vector<std::size_t> block_sizes;  // empty: 4 KiB and 64 KiB
    Backing backing = Backing::thp;
    std::optional<unsigned> reps;
    bool json = false;
    bool smoke = false;
};

// Prints why the arguments are bad and the usage on stderr; exits 2.
[[noreturn]] void bad_args(const std::string& why) {
    std::fprintf(stderr, "physmem_scan_bench: %s\n%s", why.c_str(), kUsage);
    std::exit(2);
}

std::size_t parse_elements(std::string_view v) {
    auto n = physmem::parse_size(v);
    if (!n || *n == 0) bad_args("--elements: '" + std::string(v) + "' is not a positive count (e.g. 64M)");
    if (*n > (~std::size_t{0}) / sizeof(Elem)) bad_args("--elements: '" + std::string(v) + "' is too large");
    return *n;
}

// Appends each size of a comma list; each must be a valid pool block size.
void add_block_sizes(std::vector<std::size_t>& out, std::string_view list) {
    while (true) {
        std::string_view item = list.substr(0, list.find(','));
        auto b = physmem::parse_size(item);
        if (!b || *b < (4u << 10) || *b > (std::size_t{1} << 30) || (*b & (*b - 1)))
            bad_args("--block-size: '" + std::string(item) + "' is not a power of two from 4K to 1G");
        out.push_back(*b);
        if (item.size() == list.size()) return;
        list.remove_prefix(item.size() + 1);
    }
}

Backing parse_backing_arg(std::string_view v) {
    auto b = physmem::parse_backing(v);
    if (!b) bad_args("--backing: '" + std::string(v) + "' is not one of best, 1g, 2m, thp, 4k");
    return *b;
}

unsigned parse_reps(std::string_view v) {
    unsigned r = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), r);
    if (ec != std::errc{} || end != v.data() + v.size() || r == 0 || r > 1000)
        bad_args("--reps: '" + std::string(v) + "' is not a count from 1 to 1000");
    return r;
}

// Accepts "--flag value" and "--flag=value". Exits 2 on anything it does not know.
Args parse_args(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        std::optional<std::string_view> value;
        if (auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        auto need = [&]() -> std::string_view {
            if (value) return *value;
            if (i + 1 >= argc) bad_args(std::string(arg) + " needs a value");
            return argv[++i];
        };
        if (arg == "--elements") a.elements = parse_elements(need());
        else if (arg == "--block-size") add_block_sizes(a.block_sizes, need());
        else if (arg == "--backing") a.backing = parse_backing_arg(need());
        else if (arg == "--reps") a.reps = parse_reps(need());
        else if (value && (arg == "--json" || arg == "--smoke" || arg == "--help")) bad_args(std::string(arg) + " takes no value");
        else if (arg == "--json") a.json = true;
        else if (arg == "--smoke") a.smoke = true;
        else if (arg == "--help" || arg == "-h") { std::fputs(kUsage, stdout); std::exit(0); }
        else bad_args("unknown argument '" + std::string(argv[i]) + "'");
    }
    return a;
}

// The run after defaults are applied.
struct Settings {
    std::size_t n;
    std::vector<std::size_t> block_sizes;
    Backing backing;
    unsigned reps;
    bool json;
    bool smoke;  // passes of well under a millisecond: the ratios are not meaningful
};

Settings resolve(const Args& a) {
    Settings s{a.elements.value_or(a.smoke ? kSmokeElements : kDefaultElements), a.block_sizes,
               a.backing, a.reps.value_or(a.smoke ? 1u : 5u), a.json, a.smoke};
    if (s.block_sizes.empty()) s.block_sizes = {4u << 10, 64u << 10};
    return s;
}

// ---- the two layouts ----------------------------------------------------------------

// A tree and a flat array of the same n elements on one backing rung. Members are
// destroyed in reverse order, so the tree goes back to the pool before the pool goes.
struct Layouts {
    std::unique_ptr<physmem::BlockPool> pool;
    std::unique_ptr<Tree> tree;
    std::unique_ptr<physmem::Region> flat;
    std::vector<std::string> notes;  // why rungs were skipped

    Elem* flat_data() const noexcept { return reinterpret_cast<Elem*>(flat->data()); }
};

// Blocks a tree of n elements holds: its leaves plus each inner level up to one root.
std::size_t tree_blocks(std::size_t block_size, std::size_t n) {
    return physmem::TreeShape::make(block_size, sizeof(Elem)).blocks_for(n);
}

// Maps the pool on `requested` (the library walks down the ladder as needed), then the
// flat array strictly on the rung the pool got. When that rung has no room left for the
// flat array (hugetlb pages used up by the pool), both move one rung down, so the
// comparison is always made on one page size. Throws what the library throws.
Layouts map_layouts(std::size_t block_size, std::size_t n, Backing requested) {
    Layouts l;
    Backing rung = requested;
    for (;;) {
        l.pool = std::make_unique<physmem::BlockPool>(physmem::PoolOptions{
            .block_size = block_size, .capacity = tree_blocks(block_size, n) * block_size, .backing = rung});
        for (const std::string& s : l.pool->backing_notes()) l.notes.push_back("pool skipped " + s);
        rung = l.pool->backing();
        try {
            l.flat = std::make_unique<physmem::Region>(physmem::RegionOptions{
                .bytes = n * sizeof(Elem), .alignment = kFlatAlignment, .backing = rung, .strict_backing = true});
            break;
        } catch (const physmem::backing_unavailable& e) {
            l.notes.push_back(std::string("contiguous: ") + e.what() + "; both layouts move one rung down");
            l.pool.reset();
            rung = physmem::next_rung(rung);
        }
    }
    l.tree = std::make_unique<Tree>(n, *l.pool);
    return l;
}

// The value stored at index i: cheap, deterministic and not constant.
Elem value_at(std::size_t i) noexcept { return static_cast<Elem>(i * 0x9E3779B1u) ^ static_cast<Elem>(i >> 11); }

// Writes value_at(i) at every index of both layouts; returns the sum of all values,
// computed independently of every kernel below.
std::uint64_t fill(Layouts& l) {
    Elem* flat = l.flat_data();
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < l.tree->size(); ++i) total += flat[i] = value_at(i);
    std::size_t i = 0;
    physmem::for_each_segment(*l.tree, [&i](std::span<Elem> s) {
        for (Elem& x : s) x = value_at(i++);
    });
    return total;
}

// ---- kernels: each returns the sum (mod 2^64) of the elements it reads ----------------

// Keeps `v` alive in a register or memory, so the computation of it cannot be dropped.
template <class T>
inline void do_not_optimize(const T& v) {
    asm volatile("" : : "r,m"(v) : "memory");
}

#define KERNEL __attribute__((noinline)) std::uint64_t

// Sums one span with a plain loop (the compiler vectorizes it).
inline std::uint64_t sum_span(std::span<const Elem> s) noexcept {
    std::uint64_t t = 0;
    for (Elem x : s) t += x;
    return t;
}

KERNEL flat_segments(const Elem* p, std::size_t n) {
    std::uint64_t t = 0;
    physmem::for_each_segment(std::span<const Elem>(p, n), [&t](std::span<const Elem> s) { t += sum_span(s); });
    return t;
}
KERNEL tree_segments(const Tree& a) {
    std::uint64_t t = 0;
    physmem::for_each_segment(a, [&t](std::span<const Elem> s) { t += sum_span(s); });
    return t;
}

KERNEL flat_iterators(const Elem* p, std::size_t n) {
    std::uint64_t t = 0;
    for (Elem x : std::span<const Elem>(p, n)) t += x;
    return t;
}
KERNEL tree_iterators(const Tree& a) {
    std::uint64_t t = 0;
    for (Elem x : a) t += x;
    return t;
}

// The contiguous baseline of both operator[] scans (3 and 4).
KERNEL flat_index(const Elem* p, std::size_t n) {
    std::uint64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) t += p[i];
    return t;
}
KERNEL tree_index(const Tree& a) {
    std::uint64_t t = 0;
    for (std::size_t i = 0; i < a.size(); ++i) t += a[i];
    return t;
}
KERNEL tree_fixed_depth(const Tree& a) {
    return physmem::with_fixed_depth(a, [](auto view) {
        std::uint64_t t = 0;
        for (std::size_t i = 0; i < view.size(); ++i) t += view[i];
        return t;
    });
}

// xorshift64 (Marsaglia): both layouts replay the same sequence from the same seed.
struct XorShift {
    std::uint64_t s = 0x9E3779B97F4A7C15ull;
    std::uint64_t next() noexcept {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
};
// Maps a 64-bit random value onto [0, n) with a multiply (no division, no modulo bias
// worth mentioning).
__extension__ using U128 = unsigned __int128;
inline std::size_t below(std::uint64_t r, std::size_t n) noexcept {
    return static_cast<std::size_t>((static_cast<U128>(r) * n) >> 64);
}

KERNEL flat_random(const Elem* p, std::size_t n, std::size_t count) {
    std::uint64_t t = 0;
    XorShift g;
    for (std::size_t k = 0; k < count; ++k) t += p[below(g.next(), n)];
    return t;
}
KERNEL tree_random(const Tree& a, std::size_t count) {
    std::uint64_t t = 0;
    XorShift g;
    for (std::size_t k = 0; k < count; ++k) t += a[below(g.next(), a.size())];
    return t;
}

// Strided: offsets 0..kStride-1, each read every kStride-th element, so every element is
// read once. The barrier per offset keeps the compiler from interchanging the loops
// (which would turn the contiguous baseline into a linear scan).
KERNEL flat_strided(const Elem* p, std::size_t n) {
    std::uint64_t t = 0;
    for (std::size_t off = 0; off < std::min(n, kStride); ++off) {
        for (std::size_t i = off; i < n; i += kStride) t += p[i];
        asm volatile("" : "+r"(t));
    }
    return t;
}
KERNEL tree_strided(const Tree& a) {
    std::uint64_t t = 0;
    for (std::size_t off = 0; off < std::min(a.size(), kStride); ++off) {
        physmem::for_each_strided(a, off, kStride, [&t](const Elem& x) { t += x; });
        asm volatile("" : "+r"(t));
    }
    return t;
}

#undef KERNEL

// ---- measurement ----------------------------------------------------------------------

struct Variant {
    std::string_view key;    // JSON name
    std::string_view label;  // table name
    std::function<std::uint64_t()> flat, tree;
    std::size_t reads;       // elements read per pass (the ns/element denominator)
    bool reads_all;          // reads every element once: its sum must equal the total
    double goal;             // the goal for the ratio (<=); 0: none
};

// Random reads per pass: n/8 (at least min(n, 64K)). A random read costs ~30x a scanned
// element here, so n of them would take most of the run's time budget.
std::size_t random_reads(std::size_t n) noexcept { return std::max(n / 8, std::min<std::size_t>(n, 1u << 16)); }

// The six variants over `a` and the flat copy `p` of it. Goals for operator[] apply at
// depth 3 only (that is what the issue states).
std::vector<Variant> make_variants(const Tree& a, const Elem* p) {
    std::size_t n = a.size();
    double index_goal = a.depth() == 3 ? kIndexGoal : 0;
    return {
        {"segment_scan", "1 for_each_segment scan", [=] { return flat_segments(p, n); },
         [&a] { return tree_segments(a); }, n, true, kSegmentGoal},
        {"iterator_scan", "2 iterator scan", [=] { return flat_iterators(p, n); },
         [&a] { return tree_iterators(a); }, n, true, 0},
        {"index_scan", "3 operator[] scan", [=] { return flat_index(p, n); },
         [&a] { return tree_index(a); }, n, true, index_goal},
        {"fixed_depth_scan", "4 fixed-depth [] scan", [=] { return flat_index(p, n); },
         [&a] { return tree_fixed_depth(a); }, n, true, index_goal},
        {"random_index", "5 random operator[] n/8", [=] { return flat_random(p, n, random_reads(n)); },
         [&a, n] { return tree_random(a, random_reads(n)); }, random_reads(n), false, 0},
        {"strided_4k", "6 strided 1 per 4 KiB", [=] { return flat_strided(p, n); },
         [&a] { return tree_strided(a); }, n, true, 0},
    };
}

// ns per element read, over the timed repetitions.
struct Stats {
    double median = 0, min = 0, max = 0;
    double spread() const noexcept { return median > 0 ? (max - min) / median : 0; }
};

Stats summarize(std::vector<double> ns, std::size_t reads) {
    std::sort(ns.begin(), ns.end());
    std::size_t m = ns.size() / 2;
    double med = ns.size() % 2 ? ns[m] : (ns[m - 1] + ns[m]) / 2;
    double d = static_cast<double>(reads);
    return {med / d, ns.front() / d, ns.back() / d};
}

// Calls f once between two clock reads; returns the wall time in ns, f's result in sum.
double timed_run(const std::function<std::uint64_t()>& f, std::uint64_t& sum) {
    asm volatile("" : : : "memory");
    auto t0 = std::chrono::steady_clock::now();
    sum = f();
    do_not_optimize(sum);
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

// Exits 1 naming the variant when a sum is not the expected one.
void check_sum(const Variant& v, const char* side, int rep, std::uint64_t got, std::uint64_t want) {
    if (got == want) return;
    std::fprintf(stderr, "physmem_scan_bench: %.*s: %s sum %llu != expected %llu (%s)\n",
                 static_cast<int>(v.key.size()), v.key.data(), side, static_cast<unsigned long long>(got),
                 static_cast<unsigned long long>(want), rep < 0 ? "warm-up" : ("rep " + std::to_string(rep)).c_str());
    std::exit(1);
}

struct Result {
    Stats flat, tree;
    double ratio = 0;  // tree median / contiguous median
};

// One warm-up pass of each layout, then `reps` timed pairs, contiguous then tree.
Result measure(const Variant& v, unsigned reps, std::uint64_t total) {
    std::uint64_t want = 0, got = 0;
    timed_run(v.flat, want);
    if (v.reads_all) check_sum(v, "contiguous", -1, want, total);
    timed_run(v.tree, got);
    check_sum(v, "tree", -1, got, want);
    std::vector<double> flat_ns, tree_ns;
    for (unsigned r = 0; r < reps; ++r) {
        flat_ns.push_back(timed_run(v.flat, got));
        check_sum(v, "contiguous", static_cast<int>(r), got, want);
        tree_ns.push_back(timed_run(v.tree, got));
        check_sum(v, "tree", static_cast<int>(r), got, want);
    }
    Result res{summarize(flat_ns, v.reads), summarize(tree_ns, v.reads)};
    res.ratio = res.tree.median / res.flat.median;
    return res;
}

// ---- output ---------------------------------------------------------------------------

// What one block size ran on.
struct RunInfo {
    std::size_t block_size = 0, n = 0;
    unsigned depth = 0, reps = 0;
    bool smoke = false;
    Backing requested = Backing::best, pool_rung = Backing::best, flat_rung = Backing::best;
    physmem::BackingReport pool_smaps, flat_smaps;  // read after the fill
    std::string fault_source;
    std::vector<std::string> notes;
};

RunInfo describe(const Layouts& l, const Settings& s, const physmem::PageFaultCounter& faults) {
    RunInfo r;
    r.block_size = l.pool->block_size();
    r.n = s.n;
    r.depth = l.tree->depth();
    r.reps = s.reps;
    r.smoke = s.smoke;
    r.requested = s.backing;
    r.pool_rung = l.pool->backing();
    r.flat_rung = l.flat->backing();
    std::vector<physmem::BackingReport> reports = l.pool->verify_backing();
    if (!reports.empty()) r.pool_smaps = reports.front();
    r.flat_smaps = l.flat->verify();
    r.fault_source = std::string(faults.source());
    r.notes = l.notes;
    return r;
}

std::string name(Backing b) { return std::string(physmem::to_string(b)); }

// "thp (smaps: kernel page 4 KiB, huge 256 MiB, rss 256 MiB, verified)"
std::string backing_text(Backing rung, const physmem::BackingReport& r) {
    return name(rung) + " (smaps: " + name(r.backing) + ", kernel page " + physmem::format_size(r.kernel_page_size) +
           ", huge " + physmem::format_size(r.huge_bytes) + ", rss " + physmem::format_size(r.resident_bytes) +
           (r.verified ? ", verified)" : ", NOT verified)");
}

void print_header(const RunInfo& r) {
    std::printf("\n== backing %s (requested %s) | block %s | depth %u | n %zu (%s) | reps %u | page faults via %s ==\n",
                name(r.pool_rung).c_str(), name(r.requested).c_str(), physmem::format_size(r.block_size).c_str(),
                r.depth, r.n, physmem::format_size(r.n * sizeof(Elem)).c_str(), r.reps, r.fault_source.c_str());
    std::printf("   pool:       %s\n", backing_text(r.pool_rung, r.pool_smaps).c_str());
    std::printf("   contiguous: %s\n", backing_text(r.flat_rung, r.flat_smaps).c_str());
    for (const std::string& note : r.notes) std::printf("   note: %s\n", note.c_str());
    std::printf("   %-24s %12s %12s %8s %16s   %s\n", "variant", "contig ns/el", "tree ns/el", "ratio",
                "spread c / t", "issue goal");
    std::fflush(stdout);
}

// "<= 1.50x: met", "<= 1.00x: missed (best rep 0.99x)", or "" when there is no goal.
// The best-rep hint (fastest tree rep over the contiguous median) shows when a miss is
// within the noise; met/missed itself is judged on the ratio of medians only.
std::string goal_text(const Variant& v, const Result& res) {
    if (v.goal <= 0) return "";
    char buf[96];
    double best = res.tree.min / res.flat.median;
    if (res.ratio <= v.goal) std::snprintf(buf, sizeof buf, "<= %.2fx: met", v.goal);
    else std::snprintf(buf, sizeof buf, "<= %.2fx: missed (best rep %.2fx)", v.goal, best);
    std::string s = buf;
    if (v.key == "index_scan") s += "  [seed paper: 3.37x]";
    return s;
}

void print_row(const Variant& v, const Result& res) {
    char spread[40];
    std::snprintf(spread, sizeof spread, "%.1f%% / %.1f%%", 100 * res.flat.spread(), 100 * res.tree.spread());
    std::printf("   %-24.*s %12.3f %12.3f %7.2fx %16s   %s\n", static_cast<int>(v.label.size()), v.label.data(),
                res.flat.median, res.tree.median, res.ratio, spread, goal_text(v, res).c_str());
    std::fflush(stdout);
}

// JSON string with the escapes a note can need.
std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\', out += c;
        else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
        else out += c;
    }
    return out + "\"";
}

// A number, or null when it is not finite (a zero-time baseline).
std::string json_number(double x) {
    if (!(x == x) || x > 1e300 || x < -1e300) return "null";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

std::string json_backing(const char* prefix, Backing rung, const physmem::BackingReport& r) {
    std::string p = std::string(",\"") + prefix;
    return p + "_backing\":" + json_string(name(rung)) + p + "_smaps_backing\":" + json_string(name(r.backing)) +
           p + "_kernel_page_size\":" + std::to_string(r.kernel_page_size) + p +
           "_huge_bytes\":" + std::to_string(r.huge_bytes) + p + "_resident_bytes\":" +
           std::to_string(r.resident_bytes) + p + "_verified\":" + (r.verified ? "true" : "false");
}

std::string json_stats(const char* prefix, const Stats& s) {
    std::string p = std::string(",\"") + prefix;
    return p + "_ns_median\":" + json_number(s.median) + p + "_ns_min\":" + json_number(s.min) + p +
           "_ns_max\":" + json_number(s.max);
}

void print_json(const RunInfo& r, const Variant& v, const Result& res, std::uint64_t timed_faults) {
    std::string notes;
    for (const std::string& n : r.notes) {
        if (!notes.empty()) notes += ',';
        notes += json_string(n);
    }
    std::string line = "{\"schema\":" + json_string(kSchema) + ",\"variant\":" + json_string(v.key) +
                       ",\"block_size\":" + std::to_string(r.block_size) + ",\"depth\":" + std::to_string(r.depth) +
                       ",\"elements\":" + std::to_string(r.n) + ",\"reads\":" + std::to_string(v.reads) +
                       ",\"reps\":" + std::to_string(r.reps) + ",\"smoke\":" + (r.smoke ? "true" : "false") + ",\"backing_requested\":" + json_string(name(r.requested)) +
                       json_backing("pool", r.pool_rung, r.pool_smaps) + json_backing("contiguous", r.flat_rung, r.flat_smaps) +
                       ",\"fault_source\":" + json_string(r.fault_source) +
                       ",\"timed_page_faults\":" + std::to_string(timed_faults) + json_stats("contiguous", res.flat) +
                       json_stats("tree", res.tree) + ",\"ratio\":" + json_number(res.ratio) +
                       ",\"goal\":" + (v.goal > 0 ? json_number(v.goal) : "null") +
                       ",\"goal_met\":" + (v.goal > 0 ? (res.ratio <= v.goal ? "true" : "false") : "null") +
                       ",\"notes\":[" + notes + "]}";
    std::puts(line.c_str());
}

// ---- driver ---------------------------------------------------------------------------

// Maps, fills and measures one block size; prints a table (or JSON lines at the end).
void run_block_size(const Settings& s, std::size_t block_size, physmem::PageFaultCounter& faults) {
    Layouts l = map_layouts(block_size, s.n, s.backing);
    std::uint64_t total = fill(l);
    RunInfo info = describe(l, s, faults);
    if (!s.json) print_header(info);
    std::vector<Variant> variants = make_variants(*l.tree, l.flat_data());
    std::vector<Result> results;
    std::uint64_t before = faults.read();
    for (const Variant& v : variants) {
        results.push_back(measure(v, s.reps, total));
        if (!s.json) print_row(v, results.back());
    }
    std::uint64_t timed_faults = faults.read() - before;
    if (!s.json) std::printf("   page faults during warm-up and timed runs: %llu\n", static_cast<unsigned long long>(timed_faults));
    for (std::size_t i = 0; s.json && i < variants.size(); ++i) print_json(info, variants[i], results[i], timed_faults);
}

}  // namespace

int main(int argc, char** argv) {
    Settings s = resolve(parse_args(argc, argv));
    auto t0 = std::chrono::steady_clock::now();
    physmem::PageFaultCounter faults;
    if (!s.json)
        std::printf("physmem_scan_bench: ratio = tree / contiguous median ns per element read; spread = "
                    "(max - min) / median over the reps;\ncontiguous and tree runs alternate; every sum is checked.\n%s",
                    s.smoke ? "SMOKE RUN: passes take well under a millisecond, so these ratios are not meaningful.\n" : "");
    try {
        for (std::size_t bs : s.block_sizes) run_block_size(s, bs, faults);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "physmem_scan_bench: error: %s (elements %zu, backing %s)\n", e.what(), s.n,
                     name(s.backing).c_str());
        return 1;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!s.json) std::printf("\ntotal run time %.1f s\n", secs);
    return 0;
}
