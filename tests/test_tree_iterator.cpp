// tests/test_tree_iterator.cpp — TreeArray iterators model std::random_access_iterator
// and give the standard algorithms (classic and ranges) the same answers as std::vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <string>
#include <ranges>
#include <vector>

#include "physmem/tree_array.hpp"
#include "support.hpp"

using physmem::BlockPool;
using physmem::TreeArray;
using physmem_test::pool_options;
using physmem_test::value_at;

static_assert(std::random_access_iterator<TreeArray<int>::iterator>);
static_assert(std::random_access_iterator<TreeArray<int>::const_iterator>);
static_assert(std::sortable<TreeArray<int>::iterator>);
static_assert(std::ranges::random_access_range<TreeArray<double>>);
static_assert(std::ranges::sized_range<TreeArray<double>>);
static_assert(std::convertible_to<TreeArray<int>::iterator, TreeArray<int>::const_iterator>);

namespace {

class TreeIteratorTest : public ::testing::Test {
  protected:
    // 4 KiB blocks: 1024 ints per leaf, so 300000 elements span 293 leaves at depth 2.
    BlockPool pool{pool_options(4 << 10, std::size_t{16} << 20)};
    std::size_t n = 300000;
    TreeArray<int> a{n, pool};
    std::vector<int> v = std::vector<int>(n);

    void SetUp() override {
        for (std::size_t i = 0; i < n; ++i) a[i] = v[i] = value_at<int>(i);
    }
};

TEST_F(TreeIteratorTest, WalksForwardAndBackwardAcrossLeaves) {
    EXPECT_TRUE(std::equal(a.begin(), a.end(), v.begin(), v.end()));
    EXPECT_TRUE(std::equal(a.rbegin(), a.rend(), v.rbegin(), v.rend()));
    auto it = a.end();
    for (std::size_t i = n; i-- > 0;) ASSERT_EQ(*--it, v[i]) << i;
    EXPECT_EQ(it, a.begin());
}

TEST_F(TreeIteratorTest, JumpsLandOnTheRightElement) {
    auto it = a.begin();
    std::size_t pos = 0;
    for (std::ptrdiff_t step : {1, 1023, 1, 5000, -4999, 70000, -1, -71024, 299000, -299000}) {
        it += step;
        pos += static_cast<std::size_t>(step);
        ASSERT_EQ(*it, v[pos]) << "after step " << step;
        ASSERT_EQ(it - a.begin(), static_cast<std::ptrdiff_t>(pos));
        ASSERT_EQ(a.begin()[static_cast<std::ptrdiff_t>(pos)], v[pos]);
    }
    EXPECT_EQ((a.end() - 1)[0], v.back());
    EXPECT_EQ(*(a.begin() + 1024), v[1024]);
    EXPECT_EQ(*(1024 + a.cbegin()), v[1024]);
    EXPECT_LT(a.begin(), a.end());
    EXPECT_EQ(a.end() - a.begin(), static_cast<std::ptrdiff_t>(n));
}

TEST_F(TreeIteratorTest, EndOnALeafBoundaryDecrementsIntoTheLastLeaf) {
    TreeArray<int> b(2048, pool);  // exactly two full leaves
    std::iota(b.begin(), b.end(), 0);
    auto e = b.end();
    EXPECT_EQ(*(e - 1), 2047);
    EXPECT_EQ(*--e, 2047);
    EXPECT_EQ(b.end()[-1025], 1023);
}

// An iterator holds an element pointer and its leaf's end (== compares pointers): every
// position, leaf boundaries and end() included, has one representation however it was
// reached (++, --, +=, from begin or end), and index() and ordering agree with it.
TEST_F(TreeIteratorTest, EveryPositionHasOneRepresentation) {
    for (std::size_t m : {0, 1, 1023, 1024, 1025, 2048, 3000}) {
        SCOPED_TRACE("size " + std::to_string(m));
        TreeArray<int> b(m, pool);
        std::iota(b.begin(), b.end(), 0);
        auto fwd = b.begin();
        for (std::size_t i = 0; i <= m; ++i, fwd != b.end() ? void(++fwd) : void()) {
            auto jump = b.begin() + static_cast<std::ptrdiff_t>(i);
            auto back = b.end() - static_cast<std::ptrdiff_t>(m - i);
            ASSERT_EQ(fwd, jump) << i;
            ASSERT_EQ(back, jump) << i;
            ASSERT_EQ(jump.index(), i);
            ASSERT_EQ(fwd.index(), i);
            ASSERT_EQ(back.index(), i);
            ASSERT_EQ(jump == b.end(), i == m);
            ASSERT_EQ(jump < b.end(), i < m);
            if (i < m) ASSERT_EQ(*jump, static_cast<int>(i));
            if (i > 0) {
                auto prev = jump;
                --prev;
                ASSERT_EQ(*prev, static_cast<int>(i - 1));
                ASSERT_EQ(prev + 1, jump);
                ASSERT_NE(prev, jump);
            }
        }
        EXPECT_EQ(fwd, b.end());
        EXPECT_EQ(static_cast<std::size_t>(b.end() - b.begin()), m);
        TreeArray<int>::const_iterator ce = b.end();
        EXPECT_EQ(ce, b.cend());
    }
    EXPECT_EQ(TreeArray<int>::iterator(), TreeArray<int>::iterator());
}

TEST_F(TreeIteratorTest, StandardAlgorithmsAgreeWithVector) {
    EXPECT_EQ(std::accumulate(a.begin(), a.end(), 0LL), std::accumulate(v.begin(), v.end(), 0LL));
    std::sort(a.begin(), a.end());
    std::sort(v.begin(), v.end());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), v.begin()));
    int probe = v[v.size() / 3];
    EXPECT_EQ(std::lower_bound(a.begin(), a.end(), probe) - a.begin(),
              std::lower_bound(v.begin(), v.end(), probe) - v.begin());
    std::reverse(a.begin(), a.end());
    std::reverse(v.begin(), v.end());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), v.begin()));
    std::nth_element(a.begin(), a.begin() + 1234, a.end());
    std::nth_element(v.begin(), v.begin() + 1234, v.end());
    EXPECT_EQ(a[1234], v[1234]);
}

TEST_F(TreeIteratorTest, RangesAlgorithmsWork) {
    std::ranges::sort(a, std::greater<>());
    std::ranges::sort(v, std::greater<>());
    EXPECT_TRUE(std::ranges::equal(a, v));
    EXPECT_EQ(std::ranges::count_if(a, [](int x) { return x % 7 == 0; }),
              std::ranges::count_if(v, [](int x) { return x % 7 == 0; }));
    auto evens = a | std::views::filter([](int x) { return x % 2 == 0; }) | std::views::take(10);
    auto evens_v = v | std::views::filter([](int x) { return x % 2 == 0; }) | std::views::take(10);
    EXPECT_TRUE(std::ranges::equal(evens, evens_v));
    std::ranges::fill(a, 3);
    EXPECT_EQ(std::ranges::count(a, 3), static_cast<std::ptrdiff_t>(n));
}

TEST_F(TreeIteratorTest, ConstIterationReadsTheSameElements) {
    const TreeArray<int>& c = a;
    long long sum = 0;
    for (int x : c) sum += x;
    EXPECT_EQ(sum, std::accumulate(v.begin(), v.end(), 0LL));
    TreeArray<int>::const_iterator ci = a.begin();
    EXPECT_EQ(*ci, v[0]);
}

}  // namespace
