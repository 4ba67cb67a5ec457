// lab/stack/main.cpp — seeds 000/001: what split stacks cost, and that a deep recursion
// runs on a 32 KiB stack when its frames may live in segments.
//
//   physmem_lab_stack --variant split-4k --size 100000 --param kernel=deepsum
//
// Variants (where the measured thread's stack lives; one variable at a time; --list says
// the same). Older result files name the three kinds array, malloc and pool; records of
// contiguous-4k, split-4k and split-pool-B compare with those of array-4k, malloc-4k and
// pool-B of older result files (same program, same measurement):
//   contiguous-4k  normal build on one contiguous thread stack (8 MiB, or 1 KiB per frame
//                  + 1 MiB for deepsum) — the status quo
//   split-4k       split build (-fsplit-stack) on a thread of --param thread_stack bytes
//                  (32 KiB); more stack comes in segments libgcc maps with mmap. --param
//                  segment=S (a power of two) makes S libgcc's minimum segment size
//   split-pool-B   the same, segments taken from a physmem BlockPool of --block-size
//                  blocks (default 64 KiB) on backing B; the minimum segment is the block
//   --param signals=noblock: libgcc does not block signals around switches (split only)
// --size is the problem size: fib's n, deepsum's depth in frames, the bytes of scan's
// 32-bit ints, the bytes of blackscholes' options (28 bytes each, SoA arrays).
// Timed: ctx.measure runs on the measured thread itself; its segments are mapped during
// the warm-up and reused after (libgcc keeps them until the thread exits). deepsum also
// has phase "first_use": every pass on a fresh thread, so segment mapping, first touch
// and release at exit are in the time. Split fib, scan and blackscholes also time the
// normal build side by side on the same thread (stack.paired: per-pair split / normal),
// which a shared machine's drift between two processes does not bias.
// Recorded under "stack": segments mapped or served (exact, from the wrappers of
// segments.hpp) and the segment list walked on the thread, the normal build's bytes per
// deepsum frame, and for contiguous-4k deepsum the deepest recursion a 32 KiB normal stack
// holds, found in child processes (a crash there does not stop this one).
// Verified: fib and deepsum against closed forms, scan against the sum of the values
// written, blackscholes against scalar prices from the normal build.
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "context.hpp"
#include "kernels/scan.hpp"
#include "core/parse.hpp"
#include "physmem/options.hpp"
#include "process.hpp"
#include "stack/kernels.hpp"
#include "stack/segments.hpp"
#include "stack/thread.hpp"

namespace {

using namespace lab::stack;
namespace bs = lab::blackscholes;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_stack",
    .experiment = "stack",
    .unit = "call",
    .kinds = {lab::Kind::contiguous, lab::Kind::split, lab::Kind::split_pool},
    .default_block_size = 64 << 10,
    .params = {{"kernel", "fib", {"fib", "deepsum", "scan", "blackscholes"}, "what runs on the measured thread"},
               {"segment", "libgcc", {}, "split: libgcc's minimum segment size, 'libgcc' or a power of two >= 4K"},
               {"signals", "block", {"block", "noblock"}, "split: libgcc blocks signals around a switch, or not"},
               {"thread_stack", "32K", {}, "split: the measured thread's initial stack"}},
    .only_backings = {{lab::Kind::contiguous, {physmem::Backing::page_4k}}, {lab::Kind::split, {physmem::Backing::page_4k}}},
};

constexpr std::size_t kSmallStack = 32 << 10;
constexpr std::size_t kFrameBound = 1024;  // bytes per deepsum frame a normal stack is sized for

enum class Kernel { fib, deepsum, scan, blackscholes };

// What this run does, from the command line.
struct Plan {
    Kernel kernel = Kernel::fib;
    bool split = false;
    std::size_t n = 0;             // fib's n, deepsum's depth, scan's ints, options
    std::size_t thread_stack = 0;  // bytes
    std::size_t min_segment = 0;   // asked of libgcc (0: its own)
    bool block_signals = true;
};

Kernel parse_kernel(const std::string& k) {
    if (k == "fib") return Kernel::fib;
    if (k == "deepsum") return Kernel::deepsum;
    return k == "scan" ? Kernel::scan : Kernel::blackscholes;
}

std::size_t problem_size(const lab::Settings& s, Kernel k) {
    std::size_t n = k == Kernel::scan           ? s.size_bytes / 4
                    : k == Kernel::blackscholes ? s.size_bytes / bs::kBytesPerOption
                                                : s.size_bytes;
    if (k == Kernel::fib && n > 50) lab::usage_error(kSpec, "--size: fib's n is at most 50 (2^35 calls)");
    if (k == Kernel::deepsum && n > (std::size_t{1} << 24))
        lab::usage_error(kSpec, "--size: deepsum's depth is at most 2^24");
    if (n == 0) lab::usage_error(kSpec, "--size: too small for one element of this kernel");
    return n;
}

std::size_t segment_param(const lab::Settings& s) {
    if (s.kind == lab::Kind::split_pool) return s.block_size;
    if (s.kind != lab::Kind::split || s.param("segment") == "libgcc") return 0;
    auto n = physmem::parse_size(s.param("segment"));
    if (!n || *n < 4096 || *n > (std::size_t{1} << 30) || (*n & (*n - 1)))
        lab::usage_error(kSpec, "--param segment: 'libgcc' or a power of two in [4K, 1G]");
    return *n;
}

Plan make_plan(const lab::Settings& s) {
    Plan p;
    p.kernel = parse_kernel(s.param("kernel"));
    p.split = s.kind != lab::Kind::contiguous;
    p.n = problem_size(s, p.kernel);
    p.min_segment = segment_param(s);
    p.block_signals = s.param("signals") == "block";
    p.thread_stack = p.split ? s.param_size("thread_stack")
                             : (p.kernel == Kernel::deepsum ? p.n * kFrameBound + (1 << 20) : 8 << 20);
    if (p.split && p.thread_stack < 16384) lab::usage_error(kSpec, "--param thread_stack: at least 16K");
    return p;
}

// libgcc reads its minimum segment size once, before main: re-executes with the
// environment variable set when this run asks for another one.
void ensure_min_segment(const Plan& p) {
    if (!p.split || segments::requested_minimum() == p.min_segment) return;
    if (p.min_segment) ::setenv(segments::kSegmentEnv, std::to_string(p.min_segment).c_str(), 1);
    else ::unsetenv(segments::kSegmentEnv);
    lab::process::reexec_self("libgcc's minimum stack segment is read at start-up");
}

// The inputs of scan and blackscholes, in arrays of the context (4k pages).
struct Inputs {
    std::span<const std::uint32_t> ints;
    bs::SoaSpans options;
};

Inputs make_inputs(lab::Context& ctx, const Plan& p) {
    Inputs in;
    if (p.kernel == Kernel::scan) {
        auto a = ctx.array<std::uint32_t>("ints", p.n);
        for (std::size_t i = 0; i < p.n; ++i) a[i] = lab::scan::value_at(i);
        in.ints = a;
    } else if (p.kernel == Kernel::blackscholes) {
        std::span<float> col[5];
        const char* names[5] = {"spot", "strike", "rate", "volatility", "time"};
        for (int c = 0; c < 5; ++c) col[c] = ctx.array<float>(names[c], p.n);
        auto type = ctx.array<std::int32_t>("type", p.n);
        for (std::size_t i = 0; i < p.n; ++i) {
            bs::Option o = bs::make_option(ctx.settings().seed, i);
            col[0][i] = o.spot, col[1][i] = o.strike, col[2][i] = o.rate, col[3][i] = o.volatility, col[4][i] = o.time;
            type[i] = o.type;
        }
        in.options = {col[0], col[1], col[2], col[3], col[4], type, ctx.array<float>("price", p.n)};
    }
    return in;
}

// One call of the kernel in the plan's build; a value that depends on the whole result.
std::uint64_t call(const Plan& p, const Inputs& in) {
    switch (p.kernel) {
        case Kernel::fib: return p.split ? split::fib(p.n) : normal::fib(p.n);
        case Kernel::deepsum: return p.split ? split::deepsum(p.n) : normal::deepsum(p.n);
        case Kernel::scan: return p.split ? split::scan_sum(in.ints) : normal::scan_sum(in.ints);
        case Kernel::blackscholes:
            p.split ? split::blackscholes(in.options) : normal::blackscholes(in.options);
            return std::bit_cast<std::uint32_t>(in.options.price[p.n - 1]);
    }
    return 0;
}

std::uint64_t ops_per_call(const Plan& p) {
    return p.kernel == Kernel::fib ? fib_calls(p.n) : p.kernel == Kernel::deepsum ? p.n + 1 : p.n;
}

// Checks one call's result; says what was compared.
bool verify_result(const Plan& p, const Inputs& in, std::uint64_t got, std::uint64_t seed, std::string* how) {
    switch (p.kernel) {
        case Kernel::fib: *how = "fib(n) equals the iterative Fibonacci number"; return got == fib_reference(p.n);
        case Kernel::deepsum:
            *how = "deepsum equals the closed-form sum over its frames";
            return got == deepsum_reference(p.n);
        case Kernel::scan:
            *how = "sum equals the sum of the values written";
            return got == lab::scan::expected_linear(p.n);
        case Kernel::blackscholes: break;
    }
    *how = "every price within 1e-5 of the normal build's scalar price";
    for (std::size_t i = 0; i < p.n; ++i) {
        bs::Option o = bs::make_option(seed, i);
        float want = bs::price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
        if (!bs::close(in.options.price[i], want, o.strike)) return false;
    }
    return true;
}

long thread_minor_faults() {
    struct rusage u{};
    ::getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

// For the normal build of deepsum: the deepest recursion a 32 KiB thread holds, found by
// bisection in child processes (each either completes or dies of SIGSEGV on the guard page).
lab::Json probe_small_normal_stack(std::size_t depth) {
    auto fits = [](std::size_t d) {
        return run_in_child(kSmallStack, [d] { lab::sink(normal::deepsum(d)); }).completed;
    };
    ChildRun asked = run_in_child(kSmallStack, [depth] { lab::sink(normal::deepsum(depth)); });
    lab::Json j{{"thread_stack_bytes", kSmallStack}, {"depth", depth}, {"completed", asked.completed},
                {"signal", signal_name(asked.signal)}};
    j["max_depth"] = asked.completed ? depth : largest_fitting(depth, fits);
    return j;
}

// The pool of the pool variant: enough blocks for deepsum's depth at kFrameBound bytes a frame.
physmem::BlockPool& segment_pool(lab::Context& ctx, const Plan& p) {
    const std::size_t bs_bytes = ctx.settings().block_size, usable = bs_bytes > 8192 ? bs_bytes - 4096 : 1024;
    std::size_t n = 8 + (p.kernel == Kernel::deepsum ? p.n * kFrameBound / usable : 0);
    return ctx.pool("segments", n * bs_bytes);
}

lab::Json counts_json(const segments::Counts& c) {
    return {{"mapped", c.mapped}, {"mapped_bytes", c.mapped_bytes}, {"served", c.served},
            {"served_bytes", c.served_bytes}, {"released", c.unmapped}, {"largest_bytes", c.largest}};
}

// Nanoseconds per op of k back-to-back calls of the plan's kernel.
double block_ns(const Plan& p, const Inputs& in, std::uint64_t k) {
    auto t0 = std::chrono::steady_clock::now();
    std::uint64_t x = 0;
    for (std::uint64_t i = 0; i < k; ++i) x ^= call(p, in);
    lab::sink(x);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           double(k * ops_per_call(p));
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// split / normal timed side by side on the calling thread (a split plan whose kernel
// stays shallow, so the normal build fits the same 32 KiB stack): settings().reps pairs
// of blocks of k calls, each block about min_rep_ms / 2, in ABBA order (split first in
// odd pairs). Drift in the machine's load hits both halves of a pair alike.
lab::Json paired_ratio(const lab::Settings& s, const Plan& p, const Inputs& in) {
    Plan normal_plan = p;
    normal_plan.split = false;
    std::uint64_t k = 1;
    auto block_ms = [&](std::uint64_t calls) { return block_ns(normal_plan, in, calls) * double(calls * ops_per_call(p)) / 1e6; };
    while (block_ms(k) < s.min_rep_ms / 2 && k < (1u << 30)) k *= 2;
    std::vector<double> ratios, split_ns, normal_ns;
    for (unsigned i = 0; i < s.reps; ++i) {
        const bool split_first = i % 2 == 1;
        double a = block_ns(split_first ? p : normal_plan, in, k);
        double b = block_ns(split_first ? normal_plan : p, in, k);
        split_ns.push_back(split_first ? a : b), normal_ns.push_back(split_first ? b : a);
        ratios.push_back(split_ns.back() / normal_ns.back());
    }
    return {{"pairs", s.reps}, {"calls_per_block", k}, {"ratio_median", median_of(ratios)},
            {"ratio_min", *std::min_element(ratios.begin(), ratios.end())},
            {"ratio_max", *std::max_element(ratios.begin(), ratios.end())},
            {"split_median_ns", median_of(split_ns)}, {"normal_median_ns", median_of(normal_ns)}};
}

// The main timing, on a thread of the plan's stack. Fills `st` with what the thread saw.
std::uint64_t measure_on_thread(lab::Context& ctx, const Plan& p, const Inputs& in, lab::Json& st) {
    std::uint64_t result = 0;
    segments::reset();
    run_on_thread(p.thread_stack, [&] {
        if (p.split) segments::set_block_signals(p.block_signals);
        long faults = thread_minor_faults();
        ctx.measure(ops_per_call(p), [&] { return call(p, in); });
        st["thread_minor_faults"] = thread_minor_faults() - faults;
        const char* top = static_cast<const char*>(__builtin_frame_address(0));
        result = call(p, in);
        if (!p.split && p.kernel == Kernel::deepsum)
            st["frame_bytes"] = double(top - static_cast<const char*>(normal::deepest_frame())) / double(p.n + 1);
        if (p.split && p.kernel != Kernel::deepsum) st["paired"] = paired_ratio(ctx.settings(), p, in);
        auto walk = segments::walk_list();
        st["segments"] = counts_json(segments::counts());
        st["list"] = {{"segments", walk.segments}, {"bytes", walk.bytes}};
    });
    st["segments"]["released"] = segments::counts().unmapped;  // at thread exit
    return result;
}

// deepsum's "first_use" phase: every pass on a fresh thread (segments mapped, touched and
// released inside the pass). Records the segments per run.
void measure_first_use(lab::Context& ctx, const Plan& p, const Inputs& in, lab::Json& st) {
    std::uint64_t runs = 0;
    segments::reset();
    ctx.measure_phase("first_use", ops_per_call(p), [&] {
        std::uint64_t r = 0;
        run_on_thread(p.thread_stack, [&] {
            if (p.split) segments::set_block_signals(p.block_signals);
            r = call(p, in);
        });
        ++runs;
        return r;
    });
    auto c = segments::counts();
    st["first_use"] = {{"runs", runs}, {"segments_per_run", double(c.mapped + c.served) / double(runs ? runs : 1)}};
}

// The params as they took effect: the normal build has no segments or signal switches;
// a pool's minimum segment is its block.
void record_params(lab::Context& ctx, const Plan& p) {
    ctx.set_param("thread_stack", std::to_string(p.thread_stack));
    if (!p.split) ctx.set_param("segment", "none"), ctx.set_param("signals", "none");
    if (ctx.settings().kind == lab::Kind::split_pool) ctx.set_param("segment", "block");
}

// What the running CPU makes libgcc's minimum segment (segments.hpp): the kernel's minimum
// signal frame (AT_MINSIGSTKSZ, from the xsave size; 0 when the kernel does not say), the
// sysconf(_SC_SIGSTKSZ) glibc gives as MINSIGSTKSZ, and the segment that makes.
lab::Json signal_stack() {
    long sig = sysconf(_SC_SIGSTKSZ), page = sysconf(_SC_PAGESIZE);  // getpagesize is wrapped here
    long seg = sig > 0 ? (sig + 56 + page - 1) / page * page : 0;
    return {{"at_minsigstksz", getauxval(AT_MINSIGSTKSZ)}, {"sc_sigstksz", sig}, {"libgcc_min_segment_bytes", seg}};
}

const char* source_of(const lab::Settings& s) {
    if (s.kind == lab::Kind::contiguous) return "contiguous thread stack";
    return s.kind == lab::Kind::split ? "libgcc mmap" : "physmem BlockPool";
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const Plan p = make_plan(s);
    ensure_min_segment(p);
    lab::Json st{{"build", p.split ? "split" : "normal"}, {"kernel", s.param("kernel")},
                 {"thread_stack_bytes", p.thread_stack}, {"segment_source", source_of(s)},
                 {"min_segment_bytes", p.split ? lab::Json(p.min_segment) : lab::Json()},
                 {"signals_blocked", p.split ? lab::Json(p.block_signals) : lab::Json()},
                 {"signal_stack", signal_stack()}};
    if (!p.split && p.kernel == Kernel::deepsum) st["normal_32k"] = probe_small_normal_stack(p.n);
    Inputs in = make_inputs(ctx, p);
    std::vector<void*> blocks;  // all of the pool's, served as segments
    physmem::BlockPool* pool = s.kind == lab::Kind::split_pool ? &segment_pool(ctx, p) : nullptr;
    if (pool) {
        while (void* b = pool->try_allocate()) blocks.push_back(b);
        segments::serve_from(blocks, s.block_size);
    }
    ctx.set_elements(p.n);
    record_params(ctx, p);
    if (p.kernel == Kernel::scan) ctx.set_field("unit", "element");
    if (p.kernel == Kernel::blackscholes) ctx.set_field("unit", "option");
    std::uint64_t got = measure_on_thread(ctx, p, in, st);
    if (p.kernel == Kernel::deepsum) measure_first_use(ctx, p, in, st);
    if (!blocks.empty()) st["pool_blocks"] = {{"total", blocks.size()}, {"free_after", segments::blocks_free()}};
    // Every segment is back once its thread exited: the blocks go back to the pool before
    // the context destroys it (a block still out would be a live block there, and fatal).
    const bool all_back = segments::blocks_free() == blocks.size();
    segments::serve_from({}, 0);
    if (all_back)
        for (void* b : blocks) pool->deallocate(b);
    ctx.set_field("stack", st);
    ctx.note("counters count the main thread (perf is per thread); the measured thread's faults are "
             "stack.thread_minor_faults");
    std::string how;
    bool ok = verify_result(p, in, got, s.seed, &how);
    ctx.checksum(got);
    ctx.verify(ok, how + " (" + st["build"].get<std::string>() + " build)");
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
