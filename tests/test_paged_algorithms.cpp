// tests/test_paged_algorithms.cpp — standard algorithms over a PagedArray's iterators, at
// budgets of 1 to 8 leaves on arrays of about 9 leaves, against a std::vector doing the
// same (issue 22: the iterators' references died when another leaf was loaded, so an
// algorithm holding two of them wrote through a dead one — a value duplicated, another
// lost — or crashed). Every result must equal the vector's and no algorithm may throw:
// the references are proxies that find their element again (paged_array.hpp). These are
// correctness tests, not benchmarks; a budget of one leaf makes every algorithm thrash.
#include <gtest/gtest.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <random>
#include <span>
#include <stdexcept>
#include <ranges>
#include <string>
#include <vector>

#include "physmem/paged_array.hpp"

namespace {

using physmem::BlockPool;
using physmem::PagedArray;

constexpr std::size_t kBlock = 4096;

// 64 bytes (64 to a leaf): a class type, ordered by every field; `key` repeats, so a
// stable sort by key alone shows the order of equal keys (`tag`, the first position).
struct Wide {
    std::uint64_t key;
    std::uint64_t tag;
    std::uint64_t pad[6];
    friend bool operator==(const Wide&, const Wide&) = default;
    friend auto operator<=>(const Wide&, const Wide&) = default;
};

std::uint64_t key_of(std::uint64_t x) { return x >> 3; }
std::uint64_t key_of(const Wide& w) { return w.key; }

// A comparator on keys only (equal keys for different values): parameters of the element
// type, as a comparator over a proxy reference takes them.
template <class T>
struct ByKey {
    bool operator()(const T& x, const T& y) const { return key_of(x) < key_of(y); }
};
template <class T>
struct IsSmall {
    std::uint64_t below;
    bool operator()(const T& x) const { return key_of(x) < below; }
};

template <class T>
T make(std::uint64_t i, std::uint64_t r, std::size_t n) {
    if constexpr (std::is_same_v<T, Wide>) return Wide{r % (n / 4), i, {i, r, ~i, ~r, i ^ r, 7}};
    else return r % (4 * n);
}

static_assert(std::random_access_iterator<PagedArray<Wide>::iterator>);
static_assert(std::random_access_iterator<PagedArray<Wide>::const_iterator>);
static_assert(std::sortable<PagedArray<Wide>::iterator>);
static_assert(std::sortable<PagedArray<std::uint64_t>::iterator>);
static_assert(std::sortable<PagedArray<std::uint64_t>::iterator, ByKey<std::uint64_t>>);
static_assert(std::indirectly_swappable<PagedArray<Wide>::iterator>);
static_assert(std::permutable<PagedArray<std::uint64_t>::iterator>);
static_assert(std::ranges::random_access_range<PagedArray<Wide>>);
static_assert(std::ranges::sized_range<PagedArray<Wide>>);

enum class Algo {
    iter_swap, ranges_iter_swap, swap_ranges, sort, sort_by_key, ranges_sort, sort_reversed, stable_sort,
    ranges_stable_sort, partial_sort, nth_element, ranges_nth_element, heap, inplace_merge, rotate,
    ranges_rotate, reverse, ranges_reverse, shuffle, ranges_shuffle, partition, stable_partition, copy,
    copy_backward, ranges_copy, move, next_permutation,
};

// The algorithm on r (a std::vector or a PagedArray): the same calls for both.
template <class T, class R>
void apply(Algo algo, R& r) {
    auto first = std::ranges::begin(r), last = std::ranges::end(r);
    const auto n = last - first;
    switch (algo) {
        case Algo::iter_swap: {
            std::mt19937_64 g(11);
            for (int s = 0; s < 312; ++s) std::iter_swap(first + g() % n, first + g() % n);
            break;
        }
        case Algo::ranges_iter_swap: {
            std::mt19937_64 g(12);
            for (int s = 0; s < 312; ++s) std::ranges::iter_swap(first + g() % n, first + g() % n);
            break;
        }
        case Algo::swap_ranges: std::swap_ranges(first, first + n / 3, first + n / 2); break;
        case Algo::sort: std::sort(first, last); break;
        case Algo::sort_by_key: std::sort(first, last, ByKey<T>{}); break;
        case Algo::ranges_sort: std::ranges::sort(r); break;
        case Algo::sort_reversed: std::sort(std::make_reverse_iterator(last), std::make_reverse_iterator(first)); break;
        case Algo::stable_sort: std::stable_sort(first, last, ByKey<T>{}); break;
        case Algo::ranges_stable_sort: std::ranges::stable_sort(first, last, ByKey<T>{}); break;
        case Algo::partial_sort: std::partial_sort(first, first + n / 3, last); break;
        case Algo::nth_element: std::nth_element(first, first + n / 3, last); break;
        case Algo::ranges_nth_element: std::ranges::nth_element(r, first + 2 * n / 3); break;
        case Algo::heap:
            std::make_heap(first, last);
            std::sort_heap(first, last);
            break;
        case Algo::inplace_merge:
            std::sort(first, first + n / 2, ByKey<T>{});
            std::sort(first + n / 2, last, ByKey<T>{});
            std::inplace_merge(first, first + n / 2, last, ByKey<T>{});
            break;
        case Algo::rotate: std::rotate(first, first + n / 3 + 7, last); break;
        case Algo::ranges_rotate: std::ranges::rotate(r, first + 1); break;
        case Algo::reverse: std::reverse(first, last); break;
        case Algo::ranges_reverse: std::ranges::reverse(r); break;
        case Algo::shuffle: std::shuffle(first, last, std::mt19937_64(5)); break;
        case Algo::ranges_shuffle: std::ranges::shuffle(r, std::mt19937_64(6)); break;
        case Algo::partition: std::partition(first, last, IsSmall<T>{key_of(T(first[n / 2]))}); break;
        case Algo::stable_partition: std::stable_partition(first, last, IsSmall<T>{key_of(T(first[n / 2]))}); break;
        case Algo::copy: std::copy(first + n / 2, last, first + 5); break;  // overlapping, forward
        case Algo::copy_backward: std::copy_backward(first, first + n / 2, last - 3); break;
        case Algo::ranges_copy: std::ranges::copy(first + 1, last, first); break;
        case Algo::move: std::move(first + n / 3, last, first); break;
        case Algo::next_permutation:
            std::sort(first + n - 9, last);
            for (int s = 0; s < 500; ++s) std::next_permutation(first + n - 9, last);
            break;
    }
}

// The original contents of a case: the same for the vector and the array.
template <class T>
std::vector<T> original(std::size_t n) {
    std::mt19937_64 g(n);
    std::vector<T> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(make<T>(i, g(), n));
    return v;
}

// n elements over about 9.3 leaves (no budget below 9 holds them all).
template <class T>
std::size_t elements() {
    std::size_t per_leaf = kBlock / sizeof(T);
    return 9 * per_leaf + per_leaf / 3;
}

template <class T>
void check(Algo algo) {
    const std::size_t n = elements<T>();
    const std::vector<T> start = original<T>(n);
    std::vector<T> want = start;
    apply<T>(algo, want);
    for (std::size_t budget = 1; budget <= 8; ++budget) {
        SCOPED_TRACE("budget " + std::to_string(budget) + " leaves");
        BlockPool pool({.block_size = kBlock, .capacity = 4 << 20});
        PagedArray<T> a(n, pool, {.budget = budget * kBlock, .readahead = 2, .direct = false});
        std::copy(start.begin(), start.end(), a.begin());
        try {
            apply<T>(algo, a);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "threw: " << e.what();
        }
        std::size_t wrong = 0, first_wrong = n;
        for (std::size_t i = 0; i < n; ++i)
            if (!(a.get(i) == want[i]) && wrong++ == 0) first_wrong = i;
        ASSERT_EQ(wrong, 0u) << "elements differ from the vector's, the first at " << first_wrong;
        EXPECT_LE(a.stats().resident, budget);
    }
}

std::string algo_name(Algo a) {
    static const char* const names[] = {
        "iter_swap", "ranges_iter_swap", "swap_ranges", "sort", "sort_by_key", "ranges_sort", "sort_reversed",
        "stable_sort", "ranges_stable_sort", "partial_sort", "nth_element", "ranges_nth_element", "heap",
        "inplace_merge", "rotate", "ranges_rotate", "reverse", "ranges_reverse", "shuffle", "ranges_shuffle",
        "partition", "stable_partition", "copy", "copy_backward", "ranges_copy", "move", "next_permutation"};
    return names[static_cast<int>(a)];
}

class PagedAlgorithms : public ::testing::TestWithParam<Algo> {};

TEST_P(PagedAlgorithms, MatchAVectorAtEveryBudget) {
    {
        SCOPED_TRACE("uint64_t");
        check<std::uint64_t>(GetParam());
    }
    if (HasFatalFailure()) return;
    SCOPED_TRACE("64-byte struct");
    check<Wide>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Std, PagedAlgorithms,
    ::testing::Values(Algo::iter_swap, Algo::ranges_iter_swap, Algo::swap_ranges, Algo::sort, Algo::sort_by_key,
                      Algo::ranges_sort, Algo::sort_reversed, Algo::stable_sort, Algo::ranges_stable_sort,
                      Algo::partial_sort, Algo::nth_element, Algo::ranges_nth_element, Algo::heap,
                      Algo::inplace_merge, Algo::rotate, Algo::ranges_rotate, Algo::reverse, Algo::ranges_reverse,
                      Algo::shuffle, Algo::ranges_shuffle, Algo::partition, Algo::stable_partition, Algo::copy,
                      Algo::copy_backward, Algo::ranges_copy, Algo::move, Algo::next_permutation),
    [](const auto& info) { return algo_name(info.param); });

// The case: two leaves, one frame; the swap must carry both values.
TEST(PagedIterators, IterSwapAcrossLeavesWithOneFrame) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<std::uint64_t> a(1024, pool, {.budget = kBlock});
    a.set(0, 1);
    a.set(512, 2);
    std::iter_swap(a.begin(), a.begin() + 512);
    EXPECT_EQ(a.get(0), 2u);
    EXPECT_EQ(a.get(512), 1u);
    std::ranges::swap(*a.begin(), *(a.begin() + 512));  // the references themselves
    EXPECT_EQ(a.get(0), 1u);
    EXPECT_EQ(a.get(512), 2u);
}

// The iterator is a cursor into its leaf: ++, --, += and -= move it within the leaf and
// leave it to walk again when they leave it (or when a leaf was evicted meanwhile).
// Random moves over 5 leaves with 2 frames, reading and writing through const and
// non-const iterators, against a vector.
TEST(PagedIterators, CursorMovesReachTheRightElement) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    const std::size_t n = 512 * 5 - 3;
    PagedArray<std::uint64_t> a(n, pool, {.budget = 2 * kBlock, .readahead = 0});
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) a.set(i, v[i] = i * 7);
    std::mt19937_64 rng(5);
    auto it = a.begin();
    auto cit = std::as_const(a).begin() + 100;
    std::ptrdiff_t at = 0, cat = 100;
    for (int step = 0; step < 20000; ++step) {
        std::ptrdiff_t d = 0;
        switch (rng() % 6) {
            case 0: ++it, d = 1; break;
            case 1: if (at > 0) --it, d = -1; break;
            case 2: d = static_cast<std::ptrdiff_t>(rng() % 1100) - 550; if (at + d < 0 || at + d >= std::ptrdiff_t(n)) d = 0; it += d; break;
            case 3: d = static_cast<std::ptrdiff_t>(rng() % 9) - 4; if (at - d < 0 || at - d >= std::ptrdiff_t(n)) d = 0; it -= d; d = -d; break;
            case 4: cit = std::as_const(a).begin() + (cat = static_cast<std::ptrdiff_t>(rng() % n)); break;
            default: (void)std::as_const(a)[rng() % n];  // another leaf loaded: one may go
        }
        at += d;
        if (at >= std::ptrdiff_t(n)) it = a.begin() + (at = 0);
        ASSERT_EQ(it.index(), std::size_t(at));
        ASSERT_EQ(std::uint64_t(*it), v[at]) << "step " << step;
        if (step % 3 == 0) *it = v[at] = rng();
        ASSERT_EQ(*cit, v[cat]) << "step " << step;
        if (cat + 1 < std::ptrdiff_t(n)) ASSERT_EQ(*++cit, v[++cat]);
        if (cat > 0) ASSERT_EQ(*--cit, v[--cat]);
    }
    a.flush();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a.get(i), v[i]) << i;
}

// Value-initialized iterators: equal, 0 apart, movable by 0, an empty range to algorithms.
TEST(PagedIterators, ValueInitializedIteratorsAreAnEmptyRange) {
    using It = PagedArray<std::uint64_t>::iterator;
    using CIt = PagedArray<std::uint64_t>::const_iterator;
    It a{}, b{};
    EXPECT_TRUE(a == b);
    EXPECT_EQ(b - a, 0);
    a += 0;
    a -= 0;
    EXPECT_TRUE(a + 0 == b);
    std::sort(a, b);
    std::ranges::sort(a, b);
    CIt c = a;
    EXPECT_EQ(std::count(c, CIt{}, std::uint64_t{0}), 0);
}

// A moved-from array is empty: its iterators are an empty range, algorithms do nothing.
TEST(PagedIterators, AMovedFromArrayIsAnEmptyRange) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<std::uint64_t> a(3 * 512, pool, {.budget = 2 * kBlock});
    a.set(7, 7);
    PagedArray<std::uint64_t> b(std::move(a));
    EXPECT_EQ(a.size(), 0u);
    EXPECT_TRUE(a.empty());
    EXPECT_TRUE(a.begin() == a.end());
    EXPECT_TRUE(std::as_const(a).begin() == std::as_const(a).end());
    std::size_t seen = 0;
    for (std::uint64_t v : std::as_const(a)) seen += v + 1;
    EXPECT_EQ(seen, 0u);
    std::sort(a.begin(), a.end());
    EXPECT_EQ(b.get(7), 7u);
    PagedArray<std::uint64_t> c(512, pool, {.budget = kBlock});
    c = std::move(b);
    EXPECT_EQ(b.size(), 0u);
    EXPECT_TRUE(b.begin() == b.end());
    EXPECT_EQ(c.get(7), 7u);
    EXPECT_EQ(std::as_const(c).begin()[7], 7u);
}

// A reference outlives the iterator it came from and the loads of other leaves.
TEST(PagedIterators, ReferencesStayValidAcrossLoads) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<std::uint64_t> a(512 * 4, pool, {.budget = kBlock, .readahead = 0});
    auto r0 = *a.begin();
    auto r3 = *(a.begin() + 3 * 512);  // loads leaf 3: leaf 0 goes
    r0 = 10;
    r3 = 13;
    auto r1 = a.begin()[512];
    r1 = r0;  // an element's value, not a rebinding
    a.flush();
    EXPECT_EQ(a.get(0), 10u);
    EXPECT_EQ(a.get(512), 10u);
    EXPECT_EQ(a.get(3 * 512), 13u);
    EXPECT_EQ(std::uint64_t(r3) + 0, 13u);
    r1 = 11;
    EXPECT_EQ(std::as_const(a)[512], 11u);
    EXPECT_EQ(r0 + r1, 21u);
    EXPECT_TRUE(r0 < r1 && r1 != r0 && r0 == 10u);
}

// Copying a reference names the same element; moving one takes the value out (what
// std::swap and `auto t = std::move(*it)` in generic code expect).
TEST(PagedIterators, MovingAReferenceTakesTheValue) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<std::uint64_t> a(512 * 4, pool, {.budget = kBlock, .readahead = 0});
    a.set(0, 1);
    a.set(3 * 512, 4);
    auto r0 = *a.begin(), r3 = a.begin()[3 * 512];
    std::swap(r0, r3);
    EXPECT_EQ(a.get(0), 4u);
    EXPECT_EQ(a.get(3 * 512), 1u);
    auto alias = r0;
    auto taken = std::move(r0);
    r0 = 7;
    EXPECT_EQ(std::uint64_t(alias), 7u);
    EXPECT_EQ(std::uint64_t(taken), 4u);
    taken = 9;  // the detached value, not the element
    EXPECT_EQ(a.get(0), 7u);
}

// An element type with operator< only, a projection and a comparison against a value:
// the proxy forwards to the element's own operators.
struct OnlyLess {
    std::uint32_t v;
    std::uint32_t w;
    friend bool operator<(const OnlyLess& x, const OnlyLess& y) { return x.v < y.v; }
};

TEST(PagedIterators, ComparisonsAndProjectionsSeeTheElement) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<OnlyLess> a(512 * 3, pool, {.budget = kBlock, .readahead = 0});
    for (std::size_t i = 0; i < a.size(); ++i) a.set(i, {static_cast<std::uint32_t>((i * 7919) % a.size()), 1});
    std::sort(a.begin(), a.end());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.get(i).v, i);
    EXPECT_TRUE((*a.begin() < *(a.begin() + 1) && *a.begin() < OnlyLess{1, 0} && !(OnlyLess{1, 0} < *a.begin())));
    PagedArray<Wide> w(64 * 3, pool, {.budget = kBlock, .readahead = 0});
    for (std::size_t i = 0; i < w.size(); ++i) w.set(i, Wide{w.size() - i, i, {}});
    std::ranges::sort(w, std::ranges::less{}, [](const Wide& x) { return x.key; });
    EXPECT_TRUE(std::ranges::is_sorted(std::as_const(w), {}, &Wide::key));  // const: values, members work
    EXPECT_TRUE((*w.begin() == Wide{1, w.size() - 1, {}}));
    EXPECT_TRUE(*w.begin() < *(w.begin() + 1));
    auto found = std::ranges::find(w, Wide{5, w.size() - 5, {}});
    EXPECT_EQ(found - w.begin(), 4);
}

// An algorithm run where no frame is free (a segment callback pins the only one) fails
// at its first load with a clear error and changes nothing; one frame more suffices.
TEST(PagedIterators, NoFreeFrameIsAClearErrorAndChangesNothing) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    const std::vector<std::uint64_t> start = original<std::uint64_t>(512 * 4);
    for (std::size_t budget : {1, 2}) {
        SCOPED_TRACE("budget " + std::to_string(budget) + " leaves");
        PagedArray<std::uint64_t> a(start.size(), pool, {.budget = budget * kBlock, .readahead = 0});
        std::copy(start.begin(), start.end(), a.begin());
        std::string error;
        physmem::for_each_segment(a, 0, 1, [&](std::span<std::uint64_t>) {
            try {
                std::sort(a.begin(), a.end());
            } catch (const std::runtime_error& e) {
                error = e.what();
            }
        });
        std::vector<std::uint64_t> got(a.cbegin(), a.cend()), want = start;
        if (budget == 1) {
            EXPECT_NE(error.find("is pinned (1 pins; the budget is 1 leaves, 4096 bytes)"), std::string::npos) << error;
            EXPECT_EQ(got, want) << "the failed sort changed the array";
        } else {
            EXPECT_EQ(error, "");
            std::sort(want.begin(), want.end());
            EXPECT_EQ(got, want);
        }
    }
}

// Dereferencing a non-const iterator marks its leaf dirty as before, and a write through
// a reference whose leaf went out and came back clean marks it dirty again.
TEST(PagedIterators, WritesThroughOldReferencesReachTheFile) {
    BlockPool pool({.block_size = kBlock, .capacity = 1 << 20});
    PagedArray<std::uint64_t> a(512 * 3, pool, {.budget = kBlock, .readahead = 0});
    auto r = *a.begin();
    r = 5;
    a.flush();  // leaf 0 clean
    (void)a.get(512);  // leaf 0 out
    (void)a.get(1);    // leaf 0 back, clean
    r = 6;
    (void)a.get(1024);  // leaf 0 out again: the write must have been kept
    EXPECT_EQ(a.get(0), 6u);
}

}  // namespace
