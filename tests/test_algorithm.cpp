// tests/test_algorithm.cpp — physmem's segmented algorithms (algorithm.hpp) give what
// std:: gives on a std::vector: the same results, returned iterators, order of
// application and final contents, for every pair of containers (vector, trees with two
// leaf sizes, PagedArrays with budgets of 1 and 2 leaves), sizes that are not leaf
// multiples, empty ranges and sub-ranges that start and end mid-leaf. Correctness tests,
// not benchmarks.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <random>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "physmem/algorithm.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/tree_array.hpp"
#include "support.hpp"

namespace {

using physmem::BlockPool;
using physmem::PagedArray;
using physmem::TreeArray;
using physmem_test::pool_options;
using u32 = std::uint32_t;
using Values = std::vector<u32>;

struct Pools {
    BlockPool p4{pool_options(4 << 10, std::size_t{32} << 20)};  // 1024 elements a leaf
    BlockPool p8{pool_options(8 << 10, std::size_t{32} << 20)};  // 2048
};

struct Vec {
    static constexpr const char* kName = "vector";
    Values c;
    Vec(Pools&, const Values& v) : c(v) {}
    Values values() const { return c; }
};
template <std::size_t Block>
struct Tree {
    TreeArray<u32> c;
    Tree(Pools& p, const Values& v) : c(v.size(), Block == 4096 ? p.p4 : p.p8) { std::copy(v.begin(), v.end(), c.begin()); }
    Values values() const { return Values(c.begin(), c.end()); }
};
template <std::size_t Budget>
struct Paged {
    PagedArray<u32> c;
    static physmem::PagingOptions options() {
        physmem::PagingOptions o;
        o.budget = Budget * 4096;
        o.readahead = 0;
        o.direct = false;
        return o;
    }
    Paged(Pools& p, const Values& v) : c(v.size(), p.p4, options()) {
        for (std::size_t i = 0; i < v.size(); ++i) c.set(i, v[i]);
    }
    Values values() const {
        Values out(c.size());
        for (std::size_t i = 0; i < c.size(); ++i) out[i] = c.get(i);
        return out;
    }
};

// Values with many repeats (first/last match semantics) and no order.
Values pattern(std::size_t n, u32 seed) {
    Values v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<u32>((i * 2654435761u + seed) % 97);
    return v;
}

struct Case {
    std::size_t n, a, b, c;  // source [a, b) of n elements, destination at c of n + 700
};
std::vector<Case> cases() {
    std::vector<Case> out;
    for (std::size_t n : {1, 1024, 3000, 5000}) {
        out.push_back({n, 0, n, 0});
        out.push_back({n, n / 3, n / 3, 5});                    // empty
        out.push_back({n, n / 2, n, 699});                      // to the end, from mid-leaf
        if (n > 20) out.push_back({n, 7, n - 5, 333});          // mid-leaf to mid-leaf
        if (n > 2100) out.push_back({n, 1000, 2100, 1030});     // across one boundary
    }
    return out;
}

template <class P>
class Algorithms : public ::testing::Test {};
using Pairs = ::testing::Types<
    std::pair<Tree<4096>, Vec>, std::pair<Vec, Tree<4096>>, std::pair<Tree<4096>, Tree<8192>>,
    std::pair<Tree<8192>, Tree<4096>>, std::pair<Tree<4096>, Tree<4096>>, std::pair<Paged<1>, Vec>,
    std::pair<Vec, Paged<1>>, std::pair<Paged<1>, Paged<1>>, std::pair<Paged<2>, Tree<8192>>,
    std::pair<Tree<4096>, Paged<2>>, std::pair<Vec, Vec>>;
TYPED_TEST_SUITE(Algorithms, Pairs);

#define AT(cont, i) (std::next((cont).begin(), static_cast<std::ptrdiff_t>(i)))
#define CAT(cont, i) (std::next(std::as_const(cont).begin(), static_cast<std::ptrdiff_t>(i)))

// One-range reads of the source: results and returned positions.
TYPED_TEST(Algorithms, ReadsMatchStd) {
    using S = typename TypeParam::first_type;
    for (Case k : cases()) {
        SCOPED_TRACE(::testing::Message() << "n " << k.n << " [" << k.a << ", " << k.b << ")");
        Pools pools;
        Values v = pattern(k.n, 3);
        S s(pools, v);
        auto f = CAT(s.c, k.a), l = CAT(s.c, k.b);
        auto vf = v.cbegin() + k.a, vl = v.cbegin() + k.b;
        auto pos = [&](auto it) { return std::distance(std::as_const(s.c).begin(), it); };
        auto vpos = [&](auto it) { return it - v.cbegin(); };
        auto hash = [](std::uint64_t h, u32 x) { return h * 31 + x; };  // order-dependent

        std::uint64_t h1 = 0, h2 = 0;
        physmem::for_each(f, l, [&](u32 x) { h1 = hash(h1, x); });
        std::for_each(vf, vl, [&](u32 x) { h2 = hash(h2, x); });
        EXPECT_EQ(h1, h2);
        EXPECT_EQ(pos(physmem::for_each_n(f, k.b - k.a, [](u32) {})), vpos(vl));
        EXPECT_EQ(physmem::accumulate(f, l, std::uint64_t{1}, hash), std::accumulate(vf, vl, std::uint64_t{1}, hash));
        EXPECT_EQ(physmem::reduce(f, l, std::uint64_t{0}), std::reduce(vf, vl, std::uint64_t{0}));
        EXPECT_EQ(physmem::reduce(f, l), std::reduce(vf, vl));
        auto sq = [](u32 x) { return std::uint64_t{x} * x; };
        EXPECT_EQ(physmem::transform_reduce(f, l, std::uint64_t{0}, std::plus<>(), sq),
                  std::transform_reduce(vf, vl, std::uint64_t{0}, std::plus<>(), sq));
        for (u32 x : {0u, 50u, 96u, 200u}) {
            EXPECT_EQ(pos(physmem::find(f, l, x)), vpos(std::find(vf, vl, x)));
            EXPECT_EQ(physmem::count(f, l, x), std::count(vf, vl, x));
        }
        auto big = [](u32 x) { return x > 90; };
        auto small = [](u32 x) { return x < 96; };
        EXPECT_EQ(pos(physmem::find_if(f, l, big)), vpos(std::find_if(vf, vl, big)));
        EXPECT_EQ(pos(physmem::find_if_not(f, l, small)), vpos(std::find_if_not(vf, vl, small)));
        EXPECT_EQ(physmem::count_if(f, l, big), std::count_if(vf, vl, big));
        EXPECT_EQ(physmem::all_of(f, l, small), std::all_of(vf, vl, small));
        EXPECT_EQ(physmem::any_of(f, l, big), std::any_of(vf, vl, big));
        EXPECT_EQ(physmem::none_of(f, l, big), std::none_of(vf, vl, big));
        EXPECT_EQ(pos(physmem::min_element(f, l)), vpos(std::min_element(vf, vl)));
        EXPECT_EQ(pos(physmem::max_element(f, l)), vpos(std::max_element(vf, vl)));
        EXPECT_EQ(pos(physmem::max_element(f, l, std::greater<>())), vpos(std::max_element(vf, vl, std::greater<>())));
        auto [lo, hi] = physmem::minmax_element(f, l);
        auto [vlo, vhi] = std::minmax_element(vf, vl);
        EXPECT_EQ(pos(lo), vpos(vlo));
        EXPECT_EQ(pos(hi), vpos(vhi));
        // Through non-const iterators too (a paged array pins for writing).
        EXPECT_EQ(std::distance(s.c.begin(), physmem::find(AT(s.c, k.a), AT(s.c, k.b), 96u)),
                  vpos(std::find(vf, vl, 96u)));
        EXPECT_EQ(s.values(), v);
    }
}

// One-range writes of the destination: the final contents and returned positions.
TYPED_TEST(Algorithms, WritesMatchStd) {
    using D = typename TypeParam::second_type;
    for (Case k : cases()) {
        SCOPED_TRACE(::testing::Message() << "n " << k.n << " [" << k.a << ", " << k.b << ")");
        Pools pools;
        Values v = pattern(k.n, 5);
        D d(pools, v);
        auto f = [&] { return AT(d.c, k.a); };
        auto l = [&] { return AT(d.c, k.b); };
        auto vf = v.begin() + k.a, vl = v.begin() + k.b;
        std::size_t m = k.b - k.a;

        physmem::fill(f(), l(), 7u);
        std::fill(vf, vl, 7u);
        EXPECT_EQ(d.values(), v);
        EXPECT_EQ(std::distance(d.c.begin(), physmem::fill_n(f(), m / 2, 9u)), std::fill_n(vf, m / 2, 9u) - v.begin());
        EXPECT_EQ(d.values(), v);
        physmem::iota(f(), l(), 11u);
        std::iota(vf, vl, 11u);
        EXPECT_EQ(d.values(), v);
        u32 g1 = 0, g2 = 0;
        physmem::generate(f(), l(), [&] { return g1 += 3; });
        std::generate(vf, vl, [&] { return g2 += 3; });
        EXPECT_EQ(d.values(), v);
        EXPECT_EQ(std::distance(d.c.begin(), physmem::generate_n(f(), m / 3, [&] { return g1 *= 5; })),
                  std::generate_n(vf, m / 3, [&] { return g2 *= 5; }) - v.begin());
        EXPECT_EQ(d.values(), v);
        physmem::for_each(f(), l(), [](auto&& x) { x = x % 13; });
        std::for_each(vf, vl, [](auto&& x) { x = x % 13; });
        EXPECT_EQ(d.values(), v);
        physmem::replace(f(), l(), 3u, 1000u);
        std::replace(vf, vl, 3u, 1000u);
        physmem::replace_if(f(), l(), [](u32 x) { return x > 7; }, 2000u);
        std::replace_if(vf, vl, [](u32 x) { return x > 7; }, 2000u);
        EXPECT_EQ(d.values(), v);
    }
}

// Source to destination, at another offset (other leaf boundaries).
TYPED_TEST(Algorithms, TwoRangesMatchStd) {
    using S = typename TypeParam::first_type;
    using D = typename TypeParam::second_type;
    for (Case k : cases()) {
        SCOPED_TRACE(::testing::Message() << "n " << k.n << " [" << k.a << ", " << k.b << ") to " << k.c);
        Pools pools;
        Values vs = pattern(k.n, 3), vd = pattern(k.n + 700, 8);
        S s(pools, vs);
        D d(pools, vd);
        std::size_t m = k.b - k.a;
        auto f = CAT(s.c, k.a), l = CAT(s.c, k.b);
        auto vf = vs.cbegin() + k.a, vl = vs.cbegin() + k.b;
        auto out = [&] { return AT(d.c, k.c); };
        auto vout = vd.begin() + k.c;
        auto dpos = [&](auto it) { return std::distance(d.c.begin(), it); };

        EXPECT_EQ(physmem::inner_product(f, l, out(), std::uint64_t{1}), std::inner_product(vf, vl, vout, std::uint64_t{1}));
        EXPECT_EQ(physmem::transform_reduce(f, l, out(), std::uint64_t{0}), std::transform_reduce(vf, vl, vout, std::uint64_t{0}));
        EXPECT_EQ(dpos(physmem::copy(f, l, out())), std::copy(vf, vl, vout) - vd.begin());
        EXPECT_EQ(d.values(), vd);
        EXPECT_TRUE(physmem::equal(f, l, out()));
        EXPECT_TRUE(physmem::equal(f, l, out(), AT(d.c, k.c + m)));
        EXPECT_EQ(physmem::equal(f, l, out(), AT(d.c, k.c + m + 1)), m + 1 == 0);
        if (m > 0) {
            std::size_t j = k.c + m * 2 / 3;  // one difference, late
            vd[j] += 1;
            physmem::fill_n(AT(d.c, j), 1, vd[j]);
            auto [p, q] = physmem::mismatch(f, l, out());
            auto [vp, vq] = std::mismatch(vf, vl, vout);
            EXPECT_EQ(std::distance(std::as_const(s.c).begin(), p), vp - vs.cbegin());
            EXPECT_EQ(dpos(q), vq - vd.begin());
            auto [p4, q4] = physmem::mismatch(f, l, out(), AT(d.c, j));
            auto [vp4, vq4] = std::mismatch(vf, vl, vout, vd.begin() + j);
            EXPECT_EQ(dpos(q4), vq4 - vd.begin());
            EXPECT_EQ(std::distance(std::as_const(s.c).begin(), p4), vp4 - vs.cbegin());
            EXPECT_FALSE(physmem::equal(f, l, out()));
        }
        EXPECT_EQ(dpos(physmem::copy_n(f, m / 2, out())), std::copy_n(vf, m / 2, vout) - vd.begin());
        auto twice = [](u32 x) { return x * 2 + 1; };
        EXPECT_EQ(dpos(physmem::transform(f, l, out(), twice)), std::transform(vf, vl, vout, twice) - vd.begin());
        EXPECT_EQ(d.values(), vd);
        EXPECT_EQ(dpos(physmem::transform(f, l, out(), out(), std::minus<>())),
                  std::transform(vf, vl, vout, vout, std::minus<>()) - vd.begin());
        EXPECT_EQ(d.values(), vd);
        EXPECT_EQ(dpos(physmem::move(AT(s.c, k.a), AT(s.c, k.b), out())), std::move(vf, vl, vout) - vd.begin());
        EXPECT_EQ(d.values(), vd);
        EXPECT_EQ(s.values(), vs);
        // To and from iterators that are not random access.
        Values back;
        physmem::copy(f, l, std::back_inserter(back));
        EXPECT_EQ(back, Values(vf, vl));
        std::list<u32> lst(vf, vl);
        physmem::copy(lst.begin(), lst.end(), out());
        EXPECT_EQ(physmem::inner_product(lst.begin(), lst.end(), f, std::uint64_t{0}),
                  std::inner_product(vf, vl, vf, std::uint64_t{0}));
        EXPECT_EQ(d.values(), vd);
    }
}

TEST(AlgorithmRanges, RangeFormsAreTheIteratorForms) {
    Pools pools;
    Values v = pattern(3000, 1);
    TreeArray<u32> t(v.size(), pools.p4);
    physmem::copy(v, t.begin());
    EXPECT_TRUE(physmem::equal(t, v.begin()));
    EXPECT_EQ(physmem::accumulate(t, std::uint64_t{0}), std::accumulate(v.begin(), v.end(), std::uint64_t{0}));
    EXPECT_EQ(physmem::find(t, 96u).index(), static_cast<std::size_t>(std::find(v.begin(), v.end(), 96u) - v.begin()));
    EXPECT_EQ(physmem::count(std::as_const(t), 5u), std::count(v.begin(), v.end(), 5u));
    physmem::fill(t, 4u);
    EXPECT_TRUE(physmem::all_of(t, [](u32 x) { return x == 4; }));
    TreeArray<u32> empty(0, pools.p4);
    EXPECT_EQ(physmem::accumulate(empty, 5), 5);
    EXPECT_EQ(physmem::min_element(empty), empty.end());
    EXPECT_EQ(physmem::find(empty, 0u), empty.end());
}

// count, count_if and unary transform run one out-of-line loop over each leaf's run and
// over a contiguous range (algorithm.hpp): the predicate or operation is applied once per
// element, in order, on every kind of range (odd and even lengths, leaf ends mid-run); an
// in-place transform (output = input) takes its own loop, and its result is std::'s.
template <class R>
void expect_count_and_transform_like_std(R& r, Values v) {
    std::vector<std::size_t> seen, want;
    auto odd_seen = [&](u32 x) { return seen.push_back(x), (x & 1) != 0; };
    auto odd_want = [&](u32 x) { return want.push_back(x), (x & 1) != 0; };
    EXPECT_EQ(physmem::count_if(std::begin(r), std::end(r), odd_seen), std::count_if(v.begin(), v.end(), odd_want));
    EXPECT_EQ(seen, want);
    EXPECT_EQ(physmem::count(std::begin(r), std::end(r), 5u), std::count(v.begin(), v.end(), 5u));
    seen.clear(), want.clear();
    auto step_seen = [&](u32 x) { return seen.push_back(x), x * 3 + 1; };
    auto step_want = [&](u32 x) { return want.push_back(x), x * 3 + 1; };
    auto end = physmem::transform(std::begin(r), std::end(r), std::begin(r), step_seen);  // in place
    std::transform(v.begin(), v.end(), v.begin(), step_want);
    EXPECT_EQ(seen, want);
    EXPECT_TRUE(end == std::end(r));
    EXPECT_TRUE(std::equal(std::begin(r), std::end(r), v.begin(), v.end()));
    std::vector<std::uint64_t> wide(v.size() + 3, 9), wide_want(v.size() + 3, 9);  // another type, offset
    auto out = physmem::transform(std::begin(r), std::end(r), wide.begin() + 2, [](u32 x) { return std::uint64_t{x} << 33; });
    std::transform(v.begin(), v.end(), wide_want.begin() + 2, [](u32 x) { return std::uint64_t{x} << 33; });
    EXPECT_EQ(out - wide.begin(), static_cast<std::ptrdiff_t>(v.size() + 2));
    EXPECT_EQ(wide, wide_want);
}

TEST(AlgorithmRuns, CountAndTransformOnEveryKindOfRange) {
    for (std::size_t n : {0, 1, 2, 7, 1024, 3001}) {
        SCOPED_TRACE("n " + std::to_string(n));
        Pools pools;
        const Values v = pattern(n, 9);
        Values vec = v;
        expect_count_and_transform_like_std(vec, v);
        Tree<4096> tree(pools, v);
        expect_count_and_transform_like_std(tree.c, v);
        Paged<2> paged(pools, v);
        expect_count_and_transform_like_std(paged.c, v);
        std::list<u32> list(v.begin(), v.end());  // not contiguous: std::'s own
        expect_count_and_transform_like_std(list, v);
        std::unique_ptr<u32[]> raw(new u32[n + 1]);
        std::copy(v.begin(), v.end(), raw.get());
        std::span<u32> span(raw.get(), n);
        expect_count_and_transform_like_std(span, v);
    }
}

// minmax_element of integers runs by value (minmax_run: 2048-element chunks, a second look
// only where a chunk improves): the first smallest and the last largest, with ties placed
// on either side of chunk and leaf boundaries, signed values, and another order (std::'s).
template <class T>
void expect_minmax_like_std(const std::vector<T>& v) {
    auto want = std::minmax_element(v.begin(), v.end());
    auto want_gt = std::minmax_element(v.begin(), v.end(), std::greater<>());
    auto vpos = [&](auto it) { return it - v.begin(); };
    std::vector<T> vec = v;  // contiguous
    auto [clo, chi] = physmem::minmax_element(vec.begin(), vec.end());
    EXPECT_EQ(clo - vec.begin(), vpos(want.first));
    EXPECT_EQ(chi - vec.begin(), vpos(want.second));
    BlockPool pool(pool_options(64 << 10, std::size_t{32} << 20));  // 8192 or 16384 a leaf
    TreeArray<T> tree(v.size(), pool);
    std::copy(v.begin(), v.end(), tree.begin());
    for (auto order : {0, 1}) {
        auto [lo, hi] = order ? physmem::minmax_element(tree.cbegin(), tree.cend(), std::greater<>())
                              : physmem::minmax_element(tree.cbegin(), tree.cend());
        auto w = order ? want_gt : want;
        EXPECT_EQ(lo - tree.cbegin(), vpos(w.first)) << "order " << order;
        EXPECT_EQ(hi - tree.cbegin(), vpos(w.second)) << "order " << order;
    }
    EXPECT_EQ(physmem::minmax_element(tree.cbegin(), tree.cbegin()).first, tree.cbegin());
}

TEST(AlgorithmRuns, MinmaxElementOfIntegersFindsFirstSmallestAndLastLargest) {
    std::mt19937_64 rng(7);
    for (std::size_t n : {1, 2, 2047, 2048, 2049, 8192, 20000}) {
        SCOPED_TRACE("n " + std::to_string(n));
        std::vector<std::uint64_t> u(n);
        std::vector<std::int32_t> s(n);
        for (std::size_t i = 0; i < n; ++i) u[i] = rng() >> 8, s[i] = static_cast<std::int32_t>(rng());
        expect_minmax_like_std(u);
        expect_minmax_like_std(s);
        // Ties of the extremes on both sides of each chunk (2048) and leaf (8192) boundary.
        for (std::size_t b : {std::size_t{2048}, std::size_t{8192}, std::size_t{16384}}) {
            if (b >= n) continue;
            u[b - 1] = u[b] = 0, u[b + 1 < n ? b + 1 : b] = ~std::uint64_t{0};
            u[b - 2 < n ? b - 2 : 0] = ~std::uint64_t{0};
            s[b - 1] = s[b] = INT32_MIN, s[b - 2] = INT32_MAX;
        }
        expect_minmax_like_std(u);
        expect_minmax_like_std(s);
        expect_minmax_like_std(std::vector<std::uint8_t>(n, 5));  // every element a tie
    }
}

static_assert(physmem::segmented_v<TreeArray<u32>::iterator> && physmem::segmented_v<TreeArray<u32>::const_iterator>);
static_assert(physmem::segmented_v<PagedArray<u32>::iterator> && physmem::segmented_v<PagedArray<u32>::const_iterator>);
static_assert(!physmem::segmented_v<Values::iterator> && !physmem::segmented_v<u32*>);

// The runs of a PagedArray are pinned: under a one-leaf budget the callback cannot load
// another leaf (a clear error), and the elements are intact afterwards.
TEST(AlgorithmPaged, EachRunIsPinnedWhileItsCallbackRuns) {
    Pools pools;
    Values v = pattern(3000, 4);
    Paged<1> p(pools, v);
    int calls = 0;
    physmem::for_each(p.c.cbegin(), p.c.cbegin() + 10, [&](u32) {
        ++calls;
        EXPECT_THROW((void)p.c.get(2500), std::runtime_error);
    });
    EXPECT_EQ(calls, 10);
    EXPECT_EQ(p.values(), v);
}

// Two ranges of one PagedArray: pinned leaf by leaf when two frames fit the budget, else
// through the proxy iterators — the same result either way.
TEST(AlgorithmPaged, TwoRangesOfOneArrayAtEveryBudget) {
    for (std::size_t budget : {1, 2, 3}) {
        SCOPED_TRACE("budget " + std::to_string(budget));
        Pools pools;
        Values v = pattern(5000, 2);
        Paged<1> p(pools, v);
        p.c.set_budget(budget * 4096);
        physmem::copy(p.c.begin() + 100, p.c.begin() + 2500, p.c.begin() + 2600);
        std::copy(v.begin() + 100, v.begin() + 2500, v.begin() + 2600);
        EXPECT_EQ(p.values(), v);
        physmem::transform(p.c.begin(), p.c.begin() + 2000, p.c.begin() + 3000, p.c.begin(), std::plus<>());
        std::transform(v.begin(), v.begin() + 2000, v.begin() + 3000, v.begin(), std::plus<>());
        EXPECT_EQ(p.values(), v);
        EXPECT_EQ(physmem::inner_product(p.c.cbegin(), p.c.cbegin() + 2000, p.c.cbegin() + 2999, std::uint64_t{0}),
                  std::inner_product(v.begin(), v.begin() + 2000, v.begin() + 2999, std::uint64_t{0}));
    }
}

// Two or more PagedArrays in one algorithm pin a window of up to eight leaves of each at a
// time (segmented_iterator.hpp). Windows over ranges that start mid-leaf and at other
// offsets give std::'s results; what the runs wrote reaches the file after the budget
// shrinks; and a search that stops early marks only the leaves it reached dirty.
TEST(AlgorithmPaged, WindowsOfSeveralLeavesGiveStdResults) {
    Pools pools;
    Values v = pattern(12 * 1024 + 300, 5), w = pattern(12 * 1024 + 300, 6), out(v.size());
    Paged<64> a(pools, v), b(pools, w), c(pools, out);
    c.c.flush();  // clean: only the runs' marks can make the leaves written below dirty
    physmem::transform(a.c.cbegin() + 7, a.c.cend(), b.c.cbegin() + 3, c.c.begin() + 1, std::plus<>());
    std::transform(v.begin() + 7, v.end(), w.begin() + 3, out.begin() + 1, std::plus<>());
    c.c.set_budget(4096);  // every dirty leaf but one written and dropped
    EXPECT_EQ(c.values(), out);
    EXPECT_EQ(physmem::inner_product(a.c.cbegin() + 5, a.c.cend(), b.c.cbegin(), std::uint64_t{0}),
              std::inner_product(v.begin() + 5, v.end(), w.begin(), std::uint64_t{0}));
    physmem::copy(a.c.cbegin() + 1000, a.c.cbegin() + 11000, b.c.begin() + 20);
    std::copy(v.begin() + 1000, v.begin() + 11000, w.begin() + 20);
    EXPECT_EQ(b.values(), w);
    EXPECT_TRUE(physmem::equal(b.c.cbegin() + 20, b.c.cbegin() + 10020, a.c.cbegin() + 1000));

    physmem::copy(a.c.cbegin(), a.c.cend(), b.c.begin());
    a.c.flush();
    b.c.flush();
    const auto before = a.c.stats().writebacks;
    b.c.set(1500, b.c.get(1500) + 1);  // leaf 1 of b: the first difference from a
    auto [x, y] = physmem::mismatch(b.c.begin(), b.c.end(), a.c.begin());
    EXPECT_EQ(x - b.c.begin(), 1500);
    EXPECT_EQ(y - a.c.begin(), 1500);
    a.c.flush();
    EXPECT_EQ(a.c.stats().writebacks - before, 2u);  // leaves 0 and 1, not the window's rest
}

// One PagedArray in an algorithm pins a window of its leaves at a time too (a quarter of
// its budget, at most eight; segmented_iterator.hpp's LeafWindow). Runs that start mid-leaf
// give std::'s results; what they wrote reaches the file when the budget shrinks; a search
// that stops early marks only the leaves it reached dirty and leaves nothing pinned; and
// with a budget of one leaf every run still works, a leaf at a time.
TEST(AlgorithmPaged, OneArrayPinsAWindowAtATime) {
    Pools pools;
    const std::size_t n = 12 * 1024 + 300;  // 13 leaves of 1024
    Values v = pattern(n, 7);
    Paged<64> a(pools, v);
    a.c.flush();  // clean: only the runs' marks can make a leaf dirty below
    auto step = [k = u32{0}]() mutable { return k += 3; };
    physmem::generate(a.c.begin() + 5, a.c.end() - 7, step);
    std::generate(v.begin() + 5, v.end() - 7, step);
    a.c.set_budget(4096);  // every dirty leaf but one written and dropped
    EXPECT_EQ(a.values(), v);
    EXPECT_EQ(physmem::accumulate(a.c.cbegin() + 3, a.c.cend(), std::uint64_t{0}),
              std::accumulate(v.begin() + 3, v.end(), std::uint64_t{0}));  // a window of one leaf

    a.c.set_budget(64 * 4096);
    (void)physmem::count(a.c.cbegin(), a.c.cend(), 0u);  // every leaf in memory, clean
    a.c.flush();
    const auto before = a.c.stats().writebacks;
    v[100] = a.c.get(100) ^ 1u;  // in leaf 0: the search stops in the first window (leaves 0-2)
    a.c.set(100, v[100]);
    a.c.flush();
    const auto marked = a.c.stats().writebacks;
    EXPECT_EQ(marked - before, 1u);
    auto it = physmem::find(a.c.begin(), a.c.end(), v[100]);
    ASSERT_NE(it, a.c.end());
    EXPECT_EQ(it - a.c.begin(), std::find(v.begin(), v.end(), v[100]) - v.begin());
    a.c.flush();
    EXPECT_EQ(a.c.stats().writebacks - marked, 1u);  // leaf 0 only, not the window's rest
    a.c.set_budget(4096);  // nothing left pinned: every leaf but one can go
    EXPECT_EQ(a.values(), v);
    EXPECT_LE(a.c.stats().resident, 1u);
}

}  // namespace
