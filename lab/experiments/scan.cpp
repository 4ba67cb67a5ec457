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
#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "context.hpp"
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
               {"columns", "auto", {}, "strided: columns of one 4 KiB page read (1..1024 or auto)"}},
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

// Fills and measures; `sum` is the kernel for this variant.
template <class Data, class Sum>
void run_pass(lab::Context& ctx, Data& data, std::uint64_t ops, std::uint64_t expected, Sum sum) {
    ctx.measure(ops, [&] { return sum(data); });
    std::uint64_t got = sum(data);
    ctx.checksum(got);
    ctx.verify(got == expected, "sum equals the closed-form sum of the values written (" + std::to_string(expected) + ")");
}

// The kernels of one access mode, per layout.
struct Kernels {
    std::uint64_t ops, expected;
    std::function<std::uint64_t(std::span<const Elem>)> array;
    std::function<std::uint64_t(const Tree&)> index, fixed, iter, seg;
};

Kernels kernels(const lab::Settings& s, lab::Context& ctx, std::size_t n) {
    const std::string& access = s.param("access");
    if (access == "linear")
        return {n, expected_linear(n), [](auto d) { return linear(d); }, linear_index, linear_fixed, linear_iter,
                linear_seg};
    if (access == "random") {
        if (s.kind == lab::Kind::tree_iter || s.kind == lab::Kind::tree_seg)
            lab::usage_error(kSpec, "--param access=random: for array, tree-index and tree-fixed only");
        std::uint64_t c = random_reads(n);
        return {c, expected_random(n, c), [c](auto d) { return random(d, c); },
                [c](const Tree& t) { return random_index(t, c); }, [c](const Tree& t) { return random_fixed(t, c); },
                {}, {}};
    }
    auto offsets = column_offsets(choose_columns(s, n));
    ctx.set_param("columns", offsets.size());
    return {strided_reads(n, offsets), expected_strided(n, offsets),
            [offsets](auto d) { return strided(d, offsets); },
            [offsets](const Tree& t) { return strided_index(t, offsets); },
            [offsets](const Tree& t) { return strided_fixed(t, offsets); },
            [offsets](const Tree& t) { return strided_iter(t, offsets); },
            [offsets](const Tree& t) { return strided_seg(t, offsets); }};
}

// The tree kernel of the variant's kind.
const std::function<std::uint64_t(const Tree&)>& tree_kernel(const Kernels& k, lab::Kind kind) {
    switch (kind) {
        case lab::Kind::tree_index: return k.index;
        case lab::Kind::tree_fixed: return k.fixed;
        case lab::Kind::tree_iter: return k.iter;
        default: return k.seg;
    }
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Elem), 1);
    ctx.set_elements(n);
    const Kernels k = kernels(s, ctx, n);

    if (s.kind == lab::Kind::array) {
        auto a = ctx.array<Elem>("data", n);
        for (std::size_t i = 0; i < n; ++i) a[i] = value_at(i);
        std::span<const Elem> c = a;
        run_pass(ctx, c, k.ops, k.expected, k.array);
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
    run_pass(ctx, c, k.ops, k.expected, tree_kernel(k, s.kind));
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
