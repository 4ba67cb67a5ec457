// tests/test_sort.cpp — physmem::sort (sort.hpp) leaves what std::sort leaves on a
// std::vector: on TreeArrays (one and several leaves, an odd and an even number of runs,
// sub-ranges that start and end mid-leaf, within one leaf, empty and one element), with the
// default order, a comparator and a struct sorted by one field (the result sorted by the
// key and a permutation of the input), on a PagedArray range that fits its budget (sorted
// as a copy), and on iterators it hands to std::sort (a vector's, a PagedArray's at a
// two-leaf budget). Correctness tests, not benchmarks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "physmem/checked_tree_array.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/sort.hpp"
#include "physmem/tree_array.hpp"
#include "support.hpp"

namespace {

using physmem::BlockPool;
using physmem::TreeArray;
using u64 = std::uint64_t;

constexpr std::size_t kLeaf = 512;  // u64 in a 4 KiB block

std::vector<u64> random_values(std::size_t n, u64 seed, u64 range = ~u64{0}) {
    std::mt19937_64 rng(seed);
    std::vector<u64> v(n);
    for (u64& x : v) x = range == ~u64{0} ? rng() : rng() % range;
    return v;
}

struct Sort : ::testing::Test {
    BlockPool pool{physmem_test::pool_options(4096, 32 << 20)};
    TreeArray<u64> tree_of(const std::vector<u64>& v) {
        TreeArray<u64> t(v.size(), pool);
        std::copy(v.begin(), v.end(), t.begin());
        return t;
    }
};

TEST_F(Sort, WholeTreesOfOneToManyLeavesEqualAVectorSort) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, kLeaf, kLeaf + 1, 3 * kLeaf, 3 * kLeaf + 7,
                          4 * kLeaf, 17 * kLeaf + 300}) {
        SCOPED_TRACE(n);
        std::vector<u64> v = random_values(n, n + 1, n / 3 + 1);  // repeats
        TreeArray<u64> t = tree_of(v);
        physmem::sort(t.begin(), t.end());
        std::sort(v.begin(), v.end());
        EXPECT_TRUE(std::equal(t.begin(), t.end(), v.begin(), v.end()));
    }
}

TEST_F(Sort, SubRangesMidLeafLeaveTheRestAlone) {
    std::vector<u64> v = random_values(9 * kLeaf + 11, 7);
    TreeArray<u64> t = tree_of(v);
    struct Span {
        std::size_t first, last;
    };
    for (Span s : {Span{3, 9 * kLeaf}, Span{kLeaf - 1, kLeaf + 1}, Span{100, 400}, Span{kLeaf + 5, 6 * kLeaf + 9},
                   Span{0, 9 * kLeaf + 11}}) {
        SCOPED_TRACE(s.first);
        physmem::sort(t.begin() + std::ptrdiff_t(s.first), t.begin() + std::ptrdiff_t(s.last));
        std::sort(v.begin() + std::ptrdiff_t(s.first), v.begin() + std::ptrdiff_t(s.last));
        EXPECT_TRUE(std::equal(t.begin(), t.end(), v.begin(), v.end()));
    }
}

TEST_F(Sort, AComparatorAndAKeyOfAStruct) {
    std::vector<u64> v = random_values(5 * kLeaf + 3, 11);
    TreeArray<u64> t = tree_of(v);
    physmem::sort(t, std::greater<>());
    std::sort(v.begin(), v.end(), std::greater<>());
    EXPECT_TRUE(std::equal(t.begin(), t.end(), v.begin(), v.end()));

    struct Rec {
        std::uint32_t key, id;
    };
    const std::size_t n = 7 * 1024 + 5;  // 1024 Rec a leaf
    TreeArray<Rec> r(n, pool);
    std::mt19937 rng(3);
    for (std::size_t i = 0; i < n; ++i) r[i] = {static_cast<std::uint32_t>(rng() % 50), static_cast<std::uint32_t>(i)};
    physmem::sort(r, [](const Rec& a, const Rec& b) { return a.key < b.key; });
    std::vector<std::uint32_t> ids;
    for (std::size_t i = 0; i < n; ++i) {
        if (i) EXPECT_LE(r[i - 1].key, r[i].key) << i;
        ids.push_back(r[i].id);
    }
    std::sort(ids.begin(), ids.end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(ids[i], i);  // a permutation: nothing lost or doubled
}

TEST_F(Sort, OtherIteratorsGoToStdSort) {
    std::vector<u64> v = random_values(3000, 5), want = v;
    std::sort(want.begin(), want.end());
    std::vector<u64> w = v;
    physmem::sort(w.begin(), w.end());
    EXPECT_EQ(w, want);
    physmem::PagedArray<u64> p(v.size(), pool, {.budget = 2 * 4096, .readahead = 0, .direct = false});
    std::copy(v.begin(), v.end(), p.begin());
    physmem::sort(p.begin(), p.end());
    EXPECT_TRUE(std::equal(std::as_const(p).begin(), std::as_const(p).end(), want.begin(), want.end()));
}

// A PagedArray range whose leaves fit the budget is sorted as a scratch copy: sub-ranges
// starting and ending mid-leaf, with a comparator, equal a vector's sort and leave the
// rest of the array alone; a comparator that throws leaves the range as it was (the copy
// is sorted, not the range: std::sort through the iterators would leave it half done).
TEST_F(Sort, PagedRangesThatFitTheBudgetSortAsACopy) {
    const std::size_t n = 9 * kLeaf + 5;
    std::vector<u64> v = random_values(n, 21, 1000);
    physmem::PagedArray<u64> p(n, pool, {.budget = 10 * 4096, .readahead = 0, .direct = false});
    for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{0, n}, {kLeaf / 2, 7 * kLeaf + 3}, {3, 4 * kLeaf - 9}}) {
        SCOPED_TRACE(lo);
        std::copy(v.begin(), v.end(), p.begin());
        std::vector<u64> want = v;
        std::sort(want.begin() + std::ptrdiff_t(lo), want.begin() + std::ptrdiff_t(hi), std::greater<>());
        physmem::sort(p.begin() + std::ptrdiff_t(lo), p.begin() + std::ptrdiff_t(hi), std::greater<>());
        ASSERT_TRUE(std::equal(std::as_const(p).begin(), std::as_const(p).end(), want.begin(), want.end()));
    }
    std::copy(v.begin(), v.end(), p.begin());
    int calls = 0;
    auto throwing = [&calls](u64 a, u64 b) {
        if (++calls == 5000) throw std::runtime_error("comp");
        return a < b;
    };
    EXPECT_THROW(physmem::sort(p.begin(), p.end(), throwing), std::runtime_error);
    EXPECT_TRUE(std::equal(std::as_const(p).begin(), std::as_const(p).end(), v.begin(), v.end())) << "the range changed";
}

TEST_F(Sort, WhatCannotGoByLeavesStillSorts) {
    std::vector<u64> v = random_values(3 * kLeaf + 9, 13), want = v;
    std::sort(want.begin(), want.end());
    // A CheckedTreeArray's iterators (checked on every access, through std::sort).
    BlockPool tagged({.block_size = 4096, .capacity = 32 << 20, .backing = physmem::Backing::thp, .tags = true});
    physmem::CheckedTreeArray<u64> c(v.size(), tagged, physmem::Policy::throw_error);
    std::copy(v.begin(), v.end(), c.begin());
    physmem::sort(c.begin(), c.end());
    EXPECT_TRUE(std::equal(c.begin(), c.end(), want.begin(), want.end()));
    // A comparator that takes non-const references (std::sortable, but not for the merges).
    TreeArray<u64> t = tree_of(v);
    physmem::sort(t.begin(), t.end(), [](u64& a, u64& b) { return a < b; });
    EXPECT_TRUE(std::equal(t.begin(), t.end(), want.begin(), want.end()));
    // An empty range of default iterators.
    physmem::sort(TreeArray<u64>::iterator{}, TreeArray<u64>::iterator{});
}

}  // namespace
