// lab/experiments/blackscholes.cpp — PARSEC's blackscholes over a contiguous array or
// tree arrays (seed paper Fig. 5; the seed blog's five arrays vs array of structs).
//
//   physmem_lab_blackscholes --variant tree-seg-thp --size 28M --block-size 16K --param layout=soa
//
// n = size / 28 options (5 float inputs, an int type, a float output). One pass prices
// every option `repeat` times (the outer loop, as PARSEC's runs), so ops = n * repeat,
// unit "option". layout=soa: seven arrays (five inputs, type, output) whose trees share
// one block size, so leaf k of each covers the same indices; layout=aos: one array of
// 28-byte structs. Verified: every output within 1e-5 relative of a contiguous reference
// computed by the same scalar formula, and put-call parity on a sample of inputs.
#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"
#include "kernels/blackscholes.hpp"
#include "kernels/tree_sizing.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace {

using namespace lab::blackscholes;
template <class T>
using Tree = physmem::TreeArray<T>;

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_blackscholes",
    .experiment = "blackscholes",
    .unit = "option",
    .kinds = {lab::Kind::array, lab::Kind::tree_index, lab::Kind::tree_iter, lab::Kind::tree_seg},
    .default_block_size = 64 << 10,
    .params = {{"layout", "soa", {"soa", "aos"}, "five input arrays + type + output, or one array of structs"},
               {"repeat", "10", {}, "times each option is priced per pass (PARSEC: 100)"}},
};

// ---- storage: the same seven columns (or one struct array) as spans or as trees ---------

// SoA columns of any container type C<T> (std::span or TreeArray).
template <template <class> class C>
struct Columns {
    C<float> spot, strike, rate, volatility, time;
    C<std::int32_t> type;
    C<float> price;
};

template <class T>
using Span = std::span<T>;

// Writes option i's inputs into column/struct storage.
template <class Cols>
void store(Cols& c, std::size_t i, const Option& o) {
    c.spot[i] = o.spot, c.strike[i] = o.strike, c.rate[i] = o.rate;
    c.volatility[i] = o.volatility, c.time[i] = o.time, c.type[i] = o.type;
}

// ---- passes -----------------------------------------------------------------------------

// The span kernels, out of line: the array and every tree leaf run one copy of the machine
// code. Inlined into each caller, g++ scheduled the two copies of the struct loop apart
// and the tree's ran ~2% slower on a CPU of the lab's (the commit that made this change
// gives the figures): the compiler's difference, not the layout's. A call a leaf is
// thousands of options' work apart.
[[gnu::noinline]] void soa_kernel(const SoaSpans& s) noexcept { price_soa(s); }
[[gnu::noinline]] void aos_kernel(std::span<Option> s) noexcept { price_aos(s); }

SoaSpans spans_of(const Columns<Span>& c) {
    return {c.spot, c.strike, c.rate, c.volatility, c.time, c.type, c.price};
}

// tree-seg, SoA: leaf k of every column together (same block size and element size, so
// the same index range). pre: all columns have the same size.
void price_soa_seg(Columns<Tree>& c) {
    for (std::size_t k = 0; k < c.price.leaf_count(); ++k)
        soa_kernel({c.spot.segment(k), c.strike.segment(k), c.rate.segment(k), c.volatility.segment(k),
                   c.time.segment(k), c.type.segment(k), c.price.segment(k)});
}

// tree-iter, SoA: seven iterators advanced together, the scalar formula per option.
void price_soa_iter(Columns<Tree>& c) {
    auto sp = c.spot.cbegin(), st = c.strike.cbegin(), ra = c.rate.cbegin(), vo = c.volatility.cbegin();
    auto ti = c.time.cbegin();
    auto ty = c.type.cbegin();
    for (auto out = c.price.begin(), end = c.price.end(); out != end; ++out, ++sp, ++st, ++ra, ++vo, ++ti, ++ty)
        *out = price(*sp, *st, *ra, *vo, *ti, *ty);
}

// tree-index, SoA: operator[] (a software walk) per column per option.
void price_soa_index(Columns<Tree>& c) {
    for (std::size_t i = 0, n = c.price.size(); i < n; ++i)
        c.price[i] = price(c.spot[i], c.strike[i], c.rate[i], c.volatility[i], c.time[i], c.type[i]);
}

void price_aos_seg(Tree<Option>& a) { physmem::for_each_segment(a, [](std::span<Option> s) { aos_kernel(s); }); }
void price_aos_iter(Tree<Option>& a) {
    for (Option& o : a) o.price = price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
}
void price_aos_index(Tree<Option>& a) {
    for (std::size_t i = 0, n = a.size(); i < n; ++i) {
        Option& o = a[i];
        o.price = price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
    }
}

// ---- measure and verify -----------------------------------------------------------------

struct Expected {
    std::vector<float> price;   // reference, contiguous
    std::vector<float> strike;  // for the tolerance's scale
};

Expected reference(std::uint64_t seed, std::size_t n) {
    Expected e{std::vector<float>(n), std::vector<float>(n)};
    for (std::size_t i = 0; i < n; ++i) {
        Option o = make_option(seed, i);
        e.price[i] = price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type);
        e.strike[i] = o.strike;
    }
    return e;
}

// Times `pass` repeated `repeat` times, then compares the outputs read by get(i).
template <class Pass, class Get>
void measure_and_verify(lab::Context& ctx, std::size_t n, std::size_t repeat, Pass pass, Get get) {
    ctx.measure(std::uint64_t{n} * repeat, [&] {
        for (std::size_t r = 0; r < repeat; ++r) pass();
        return std::uint64_t{n};
    });
    Expected want = reference(ctx.settings().seed, n);
    std::size_t bad = 0, exact = 0;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        float got = get(i);
        bad += !close(got, want.price[i], want.strike[i]);
        exact += std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want.price[i]);
        sum += std::bit_cast<std::uint32_t>(got);
    }
    ctx.checksum(sum);
    ctx.verify(bad == 0, "every price within 1e-5 relative of the contiguous scalar reference (" + std::to_string(exact) +
                             " of " + std::to_string(n) + " bit-exact; " + std::to_string(bad) + " off)");
    std::size_t step = std::max<std::size_t>(n / 1000, 1), parity_bad = 0;
    for (std::size_t i = 0; i < n; i += step) parity_bad += !parity_holds(make_option(ctx.settings().seed, i));
    ctx.verify(parity_bad == 0, "put-call parity C - P = S - K exp(-rT) on every " + std::to_string(step) + "th option");
}

void run_soa(lab::Context& ctx, std::size_t n, std::size_t repeat) {
    const lab::Settings& s = ctx.settings();
    if (s.kind == lab::Kind::array) {
        // One mapping for the seven columns (so array-1g needs as few 1 GiB pages as the
        // data does), each column starting on a 4 KiB boundary as separate mappings would.
        const std::size_t stride = (n * 4 + 4095) / 4096 * 4096;
        std::byte* base = ctx.array<std::byte>("columns", 7 * stride).data();
        auto col = [&](int k) { return reinterpret_cast<float*>(base + k * stride); };
        Columns<Span> c{{col(0), n}, {col(1), n}, {col(2), n}, {col(3), n}, {col(4), n},
                        {reinterpret_cast<std::int32_t*>(base + 5 * stride), n}, {col(6), n}};
        for (std::size_t i = 0; i < n; ++i) store(c, i, make_option(s.seed, i));
        SoaSpans spans = spans_of(c);
        measure_and_verify(ctx, n, repeat, [&] { soa_kernel(spans); }, [&](std::size_t i) { return c.price[i]; });
        return;
    }
    physmem::BlockPool& pool = ctx.pool("columns", 7 * lab::tree_bytes<float>(s.block_size, n));
    Columns<Tree> c{Tree<float>(n, pool), Tree<float>(n, pool), Tree<float>(n, pool), Tree<float>(n, pool),
                    Tree<float>(n, pool), Tree<std::int32_t>(n, pool), Tree<float>(n, pool)};
    for (std::size_t i = 0; i < n; ++i) store(c, i, make_option(s.seed, i));
    ctx.set_tree(s.block_size, c.price.depth(), c.price.leaf_length());
    auto get = [&](std::size_t i) { return c.price[i]; };
    if (s.kind == lab::Kind::tree_seg) measure_and_verify(ctx, n, repeat, [&] { price_soa_seg(c); }, get);
    else if (s.kind == lab::Kind::tree_iter) measure_and_verify(ctx, n, repeat, [&] { price_soa_iter(c); }, get);
    else measure_and_verify(ctx, n, repeat, [&] { price_soa_index(c); }, get);
}

void run_aos(lab::Context& ctx, std::size_t n, std::size_t repeat) {
    const lab::Settings& s = ctx.settings();
    if (s.kind == lab::Kind::array) {
        std::span<Option> a = ctx.array<Option>("options", n);
        for (std::size_t i = 0; i < n; ++i) a[i] = make_option(s.seed, i);
        measure_and_verify(ctx, n, repeat, [&] { aos_kernel(a); }, [&](std::size_t i) { return a[i].price; });
        return;
    }
    physmem::BlockPool& pool = ctx.pool("options", lab::tree_bytes<Option>(s.block_size, n));
    Tree<Option> a(n, pool);
    for (std::size_t i = 0; i < n; ++i) a[i] = make_option(s.seed, i);
    ctx.set_tree(s.block_size, a.depth(), a.leaf_length());
    auto get = [&](std::size_t i) { return a[i].price; };
    if (s.kind == lab::Kind::tree_seg) measure_and_verify(ctx, n, repeat, [&] { price_aos_seg(a); }, get);
    else if (s.kind == lab::Kind::tree_iter) measure_and_verify(ctx, n, repeat, [&] { price_aos_iter(a); }, get);
    else measure_and_verify(ctx, n, repeat, [&] { price_aos_index(a); }, get);
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t n = std::max<std::size_t>(s.size_bytes / kBytesPerOption, 1);
    const std::size_t repeat = s.param_size("repeat");
    if (repeat < 1) lab::usage_error(kSpec, "--param repeat: must be at least 1");
    ctx.set_elements(n);
    if (s.param("layout") == "soa") run_soa(ctx, n, repeat);
    else run_aos(ctx, n, repeat);
}

}  // namespace

int main(int argc, char** argv) { return lab::run(kSpec, argc, argv, body); }
