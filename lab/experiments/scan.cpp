// lab/experiments/scan.cpp — Table 2 of the seed paper: linear and strided sums of
// 32-bit ints, contiguous array vs tree array (operator[], iterator, per leaf).
//
//   physmem_lab_scan --variant tree-seg-1g --size 1G --param access=strided
//
// n = size / 4 elements hold value_at(i). linear: one pass reads all n (ops = n).
// strided: one read per 4 KiB down `columns` columns (param columns: a count from 1 to
// 1024, or "auto" = all 1024 up to 2^24 reads per pass, fewer columns above that so big
// arrays stay affordable; ops = reads). Verified against the closed-form sum of the
// values written.
#include <algorithm>
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
    .kinds = {lab::Kind::array, lab::Kind::tree_index, lab::Kind::tree_iter, lab::Kind::tree_seg},
    .default_block_size = 64 << 10,
    .params = {{"access", "linear", {"linear", "strided"}, "linear or strided (one read per 4 KiB)"},
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

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / sizeof(Elem), 1);
    const bool linear_access = s.param("access") == "linear";
    const auto offsets = column_offsets(linear_access ? kStride : choose_columns(s, n));
    ctx.set_elements(n);
    if (!linear_access) ctx.set_param("columns", offsets.size());
    const std::uint64_t ops = linear_access ? n : strided_reads(n, offsets);
    const std::uint64_t expected = linear_access ? expected_linear(n) : expected_strided(n, offsets);

    if (s.kind == lab::Kind::array) {
        auto a = ctx.array<Elem>("data", n);
        for (std::size_t i = 0; i < n; ++i) a[i] = value_at(i);
        std::span<const Elem> c = a;
        if (linear_access) run_pass(ctx, c, ops, expected, [](auto& d) { return linear(d); });
        else run_pass(ctx, c, ops, expected, [&](auto& d) { return strided(d, offsets); });
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
    switch (s.kind) {
        case lab::Kind::tree_index:
            if (linear_access) run_pass(ctx, c, ops, expected, [](auto& d) { return linear_index(d); });
            else run_pass(ctx, c, ops, expected, [&](auto& d) { return strided_index(d, offsets); });
            break;
        case lab::Kind::tree_iter:
            if (linear_access) run_pass(ctx, c, ops, expected, [](auto& d) { return linear_iter(d); });
            else run_pass(ctx, c, ops, expected, [&](auto& d) { return strided_iter(d, offsets); });
            break;
        default:
            if (linear_access) run_pass(ctx, c, ops, expected, [](auto& d) { return linear_seg(d); });
            else run_pass(ctx, c, ops, expected, [&](auto& d) { return strided_seg(d, offsets); });
    }
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
