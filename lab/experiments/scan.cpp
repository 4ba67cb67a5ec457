// lab/experiments/scan.cpp — Table 2 of the seed paper: linear and strided sums of
// 32-bit ints, contiguous array vs tree array (operator[], fixed-depth view, iterator,
// per leaf), and random reads.
//
//   physmem_lab_scan --variant tree-seg-1g --size 1G --param access=strided
//
// n = size / 4 elements hold value_at(i). linear: one pass reads all n (ops = n).
// strided: one read per 4 KiB down `columns` columns (param columns: a count from 1 to
// 1024, or "auto" = all 1024 up to 2^24 reads per pass, fewer columns above that so big
// arrays stay affordable; ops = reads). random: n/8 reads (at least min(n, 64K)) at one
// fixed pseudo-random index sequence (array, tree-index and tree-fixed only). Verified
// against the closed-form sum of the values read.
//
// pair=on (tree variants): the same passes also over two contiguous arrays of the same
// values, one on 4 KiB pages and one on the variant's backing, the three timed in turn a
// repetition at a time (the tree the main timing, the arrays phases "array-4k" and
// "array-<backing>"), so the share of the translation cost the tree recovers is a ratio
// of timings that ran side by side, not of three processes. Each array's sum is verified.
#include <algorithm>
#include <memory>
#include <string>

#include "context.hpp"
#include "traced.hpp"
#include "kernels/scan.hpp"
#include "kernels/tree_sizing.hpp"

namespace {

using namespace lab::scan;

constexpr std::uint64_t kAutoReads = std::uint64_t{1} << 24;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_scan",
    .experiment = "scan",
    .unit = "element",
    .kinds = {lab::Kind::array, lab::Kind::tree_index, lab::Kind::tree_fixed, lab::Kind::tree_iter,
              lab::Kind::tree_seg},
    .default_block_size = 64 << 10,
    .params = {{"access", "linear", {"linear", "strided", "random"},
                "linear, strided (one read per 4 KiB) or random (n/8 reads; array, tree-index, tree-fixed)"},
               {"columns", "auto", {}, "strided: columns of one 4 KiB page read (1..1024 or auto)"},
               {"pair", "off", {"off", "on"}, "tree variants: also time the passes over contiguous arrays on "
                                              "4k and on the variant's backing, in turn (phases array-4k, "
                                              "array-<backing>)"}},
    .traceable = true,
};

// Columns for a strided pass over n elements.
std::size_t choose_columns(const lab::Settings& s, std::size_t n) {
    if (s.param("columns") != "auto") {
        std::size_t c = s.param_size("columns");
        if (c < 1 || c > kStride) lab::usage_error(kSpec, "--param columns: must be 1..1024 or auto");
        return c;
    }
    std::size_t per_column = std::max<std::size_t>((n + kStride - 1) / kStride, 1);
    return std::clamp<std::size_t>(kAutoReads / per_column, 1, kStride);
}

enum class Access { linear, strided, random };

// What one pass reads, for every layout.
struct Plan {
    Access access = Access::linear;
    std::vector<std::size_t> offsets;  // strided: the columns
    std::uint64_t ops = 0, expected = 0;
};

Plan plan_of(const lab::Settings& s, lab::Context& ctx, std::size_t n) {
    const std::string& access = s.param("access");
    if (access == "linear") return {Access::linear, {}, n, expected_linear(n)};
    if (access == "random") {
        if (s.kind == lab::Kind::tree_iter || s.kind == lab::Kind::tree_seg)
            lab::usage_error(kSpec, "--param access=random: for array, tree-index and tree-fixed only");
        std::uint64_t c = random_reads(n);
        return {Access::random, {}, c, expected_random(n, c)};
    }
    Plan p{Access::strided, column_offsets(choose_columns(s, n)), 0, 0};
    p.ops = strided_reads(n, p.offsets);
    p.expected = expected_strided(n, p.offsets);
    ctx.set_param("columns", p.offsets.size());
    return p;
}

// One pass over the array: a std::span<const Elem> or its traced view.
template <class Array>
std::uint64_t array_pass(const Plan& p, const Array& a) {
    switch (p.access) {
        case Access::linear: return linear(a);
        case Access::random: return random(a, p.ops);
        default: return strided(a, p.offsets);
    }
}

// One pass over the tree, as the variant's kind reads it: a Tree or its traced view.
template <class A>
std::uint64_t tree_pass(const Plan& p, lab::Kind kind, const A& t) {
    switch (p.access) {
        case Access::linear:
            switch (kind) {
                case lab::Kind::tree_index: return linear_index(t);
                case lab::Kind::tree_fixed: return linear_fixed(t);
                case lab::Kind::tree_iter: return linear_iter(t);
                default: return linear_seg(t);
            }
        case Access::random: return kind == lab::Kind::tree_fixed ? random_fixed(t, p.ops) : random_index(t, p.ops);
        default:
            switch (kind) {
                case lab::Kind::tree_index: return strided_index(t, p.offsets);
                case lab::Kind::tree_fixed: return strided_fixed(t, p.offsets);
                case lab::Kind::tree_iter: return strided_iter(t, p.offsets);
                default: return strided_seg(t, p.offsets);
            }
    }
}

// Runs the traced twin of a pass (ctx.simulate: a no-op unless --simulate or --trace
// asked), whose sum must equal the expected one.
template <class TracedPass>
void simulate_and_check(lab::Context& ctx, const Plan& p, TracedPass traced) {
    bool traced_ok = true;
    ctx.simulate(p.ops, [&](lab::Tracer& tr) { traced_ok = traced_ok && traced(tr) == p.expected; });
    if (!traced_ok) ctx.verify(false, "the traced pass's sum equals it too");
}

// Measures `pass`, verifies its sum, then simulate_and_check.
template <class Pass, class TracedPass>
void measure_and_verify(lab::Context& ctx, const Plan& p, Pass pass, TracedPass traced) {
    ctx.measure(p.ops, pass);
    std::uint64_t got = pass();
    ctx.checksum(got);
    ctx.verify(got == p.expected,
               "sum equals the closed-form sum of the values written (" + std::to_string(p.expected) + ")");
    simulate_and_check(ctx, p, traced);
}

// A contiguous array of the values on `backing`.
std::span<const Elem> filled_array(lab::Context& ctx, const std::string& name, std::size_t n,
                                   physmem::Backing backing) {
    auto a = ctx.array<Elem>(name, n, backing);
    for (std::size_t i = 0; i < n; ++i) a[i] = value_at(i);
    return a;
}

// pair=on: the tree's pass (`tree`) and the same pass over contiguous arrays on 4k and on
// the variant's backing, timed in turn; every sum verified (the tree's is the checksum).
template <class Pass>
void measure_paired(lab::Context& ctx, const Plan& p, std::size_t n, Pass tree) {
    const lab::Settings& s = ctx.settings();
    const std::string b(physmem::to_string(s.backing));
    std::span<const Elem> a4 = filled_array(ctx, "data_4k", n, physmem::Backing::page_4k);
    std::span<const Elem> as = filled_array(ctx, "data_" + b, n, s.backing);
    auto on = [&p](std::span<const Elem> a) { return [&p, a] { return array_pass(p, a); }; };
    ctx.measure_interleaved({{"", {tree, p.ops, nullptr}}, {"array-4k", {on(a4), p.ops, nullptr}},
                             {"array-" + b, {on(as), p.ops, nullptr}}});
    const std::uint64_t got = tree(), g4 = on(a4)(), gs = on(as)();
    ctx.checksum(got);
    ctx.verify(got == p.expected && g4 == p.expected && gs == p.expected,
               "the tree's, array-4k's and array-" + b + "'s sums each equal the closed-form sum of the values "
               "written (" + std::to_string(p.expected) + ")");
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Elem), 1);
    ctx.set_elements(n);
    const Plan p = plan_of(s, ctx, n);
    const bool pair = s.param("pair") == "on";

    if (s.kind == lab::Kind::array) {
        if (pair) lab::usage_error(kSpec, "--param pair=on: tree variants only");
        std::span<const Elem> c = filled_array(ctx, "data", n, s.backing);
        measure_and_verify(ctx, p, [&] { return array_pass(p, c); },
                           [&](lab::Tracer& tr) { return array_pass(p, lab::TracedSpan<const Elem>(c, tr)); });
        return;
    }
    physmem::BlockPool& pool = ctx.pool("tree", lab::tree_bytes<Elem>(s.block_size, n));
    Tree t(n, pool);
    std::size_t i = 0;
    physmem::for_each_segment(t, [&i](std::span<Elem> seg) {
        for (Elem& x : seg) x = value_at(i++);
    });
    ctx.set_tree(s.block_size, t.depth(), t.leaf_length());
    const Tree& c = t;
    auto traced = [&](lab::Tracer& tr) { return tree_pass(p, s.kind, lab::TracedTree<const Elem>(c, tr)); };
    if (!pair) {
        measure_and_verify(ctx, p, [&] { return tree_pass(p, s.kind, c); }, traced);
        return;
    }
    measure_paired(ctx, p, n, [&] { return tree_pass(p, s.kind, c); });
    simulate_and_check(ctx, p, traced);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
