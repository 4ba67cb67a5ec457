// tests/test_tree_array.cpp — TreeArray against std::vector: element types, block sizes,
// depths 1-4, sizes one past each block and level boundary; copies, moves, growth,
// shrinking, and the strong guarantee when the pool or a constructor fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <numeric>
#include <vector>

#include "physmem/tree_array.hpp"
#include "support.hpp"

using physmem::BlockPool;
using physmem::TreeArray;
using physmem_test::pool_options;
using physmem_test::Tracked;
using physmem_test::value_at;

namespace {

template <class T>
std::vector<T> reference(std::size_t n) {
    std::vector<T> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(value_at<T>(i));
    return v;
}

template <class T>
void fill(TreeArray<T>& a) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = value_at<T>(i);
}

template <class T>
void expect_equal(const TreeArray<T>& a, const std::vector<T>& v) {
    ASSERT_EQ(a.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(a[i], v[i]) << "index " << i;
    ASSERT_TRUE(std::equal(a.begin(), a.end(), v.begin(), v.end()));
}

// Blocks a tree of n elements needs: leaves plus inner blocks at every level.
std::size_t blocks_needed(const physmem::TreeShape& s, std::size_t n) {
    std::size_t level = s.leaves_for(n), total = 0;
    total += level;
    while (level > 1) {
        level = (level + (std::size_t{1} << s.fan_shift) - 1) >> s.fan_shift;
        total += level;
    }
    return total;
}

// Sizes around the block and level boundaries of shape s, up to `limit` elements.
std::vector<std::size_t> boundary_sizes(const physmem::TreeShape& s, std::size_t limit) {
    std::vector<std::size_t> out = {0, 1, 2};
    for (unsigned d = 1; d <= 4; ++d) {
        std::size_t cap = s.leaf_capacity(d) << s.leaf_shift;  // elements at depth d
        if (cap > limit) break;
        for (std::size_t n : {cap - 1, cap, cap + 1}) out.push_back(n);
    }
    out.push_back(3 * s.leaf_len() + 17);
    return out;
}

template <class T>
class TreeArrayTyped : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::int32_t, double, Tracked>;
TYPED_TEST_SUITE(TreeArrayTyped, ElementTypes);

TYPED_TEST(TreeArrayTyped, MatchesVectorAcrossBlockSizesAndBoundaries) {
    using T = TypeParam;
    for (std::size_t bs : {std::size_t{4} << 10, std::size_t{16} << 10, std::size_t{64} << 10, std::size_t{2} << 20}) {
        BlockPool pool(pool_options(bs, std::size_t{256} << 20));
        physmem::TreeShape shape = physmem::TreeShape::make(bs, sizeof(T));
        for (std::size_t n : boundary_sizes(shape, std::size_t{1} << 20)) {
            SCOPED_TRACE("block " + std::to_string(bs) + " n " + std::to_string(n));
            TreeArray<T> a(n, pool);
            EXPECT_EQ(a.depth(), shape.depth_for(n));
            EXPECT_EQ(pool.stats().blocks_in_use, blocks_needed(shape, n));
            fill(a);
            expect_equal(a, reference<T>(n));
        }
        EXPECT_EQ(pool.stats().blocks_in_use, 0u);
    }
    if constexpr (std::is_same_v<T, Tracked>) EXPECT_EQ(Tracked::live, 0);
}

TYPED_TEST(TreeArrayTyped, DepthFollowsSizeAndBlockSize) {
    using T = TypeParam;
    BlockPool pool(pool_options(4 << 10, std::size_t{64} << 20));
    physmem::TreeShape s = physmem::TreeShape::make(4 << 10, sizeof(T));
    EXPECT_EQ(TreeArray<T>(0, pool).depth(), 0u);
    EXPECT_EQ(TreeArray<T>(1, pool).depth(), 1u);
    EXPECT_EQ(TreeArray<T>(s.leaf_len(), pool).depth(), 1u);
    EXPECT_EQ(TreeArray<T>(s.leaf_len() + 1, pool).depth(), 2u);
    std::size_t two = s.leaf_len() << s.fan_shift;
    EXPECT_EQ(TreeArray<T>(two, pool).depth(), 2u);
    EXPECT_EQ(TreeArray<T>(two + 1, pool).depth(), 3u);
}

TYPED_TEST(TreeArrayTyped, CopyIsDeepAndMoveIsConstantTime) {
    using T = TypeParam;
    BlockPool pool(pool_options(4 << 10, std::size_t{64} << 20));
    std::size_t n = 5000;
    TreeArray<T> a(n, pool);
    fill(a);
    TreeArray<T> b(a);
    expect_equal(b, reference<T>(n));
    b[3] = value_at<T>(99);
    EXPECT_EQ(a[3], value_at<T>(3)) << "copy shares storage";
    const T* first = &a[0];
    std::size_t blocks = pool.stats().blocks_in_use;
    TreeArray<T> c(std::move(a));
    EXPECT_EQ(&c[0], first) << "move copied the elements";
    EXPECT_EQ(pool.stats().blocks_in_use, blocks) << "move allocated blocks";
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.depth(), 0u);
    a = c;  // copy-assign into the moved-from array
    expect_equal(a, reference<T>(n));
    c = std::move(b);
    EXPECT_EQ(c[3], value_at<T>(99));
}

TYPED_TEST(TreeArrayTyped, GrowsAndShrinksLikeVector) {
    using T = TypeParam;
    BlockPool pool(pool_options(4 << 10, std::size_t{64} << 20));
    physmem::TreeShape s = physmem::TreeShape::make(4 << 10, sizeof(T));
    std::size_t n = (s.leaf_len() << s.fan_shift) + 3;  // crosses into depth 3
    TreeArray<T> a(0, pool);
    std::vector<T> v;
    for (std::size_t i = 0; i < n; ++i) {
        a.push_back(value_at<T>(i));
        v.push_back(value_at<T>(i));
    }
    EXPECT_EQ(a.depth(), 3u);
    expect_equal(a, v);
    while (a.size() > s.leaf_len() - 1) {
        a.pop_back();
        v.pop_back();
    }
    EXPECT_EQ(a.depth(), 1u);
    expect_equal(a, v);
    a.resize(2 * s.leaf_len() + 5);
    v.resize(2 * s.leaf_len() + 5);
    expect_equal(a, v);
    a.resize(7, value_at<T>(1));
    v.resize(7, value_at<T>(1));
    expect_equal(a, v);
    EXPECT_EQ(pool.stats().blocks_in_use, 1u);
    a.clear();
    EXPECT_EQ(pool.stats().blocks_in_use, 0u);
}

TEST(TreeArray, AtChecksBounds) {
    BlockPool pool(pool_options(4 << 10, 1 << 20));
    TreeArray<int> a(10, pool);
    EXPECT_NO_THROW(a.at(9));
    EXPECT_THROW(a.at(10), std::out_of_range);
    const TreeArray<int>& c = a;
    EXPECT_THROW(c.at(1000), std::out_of_range);
}

TEST(TreeArray, ValueConstructorFillsEveryElement) {
    BlockPool pool(pool_options(4 << 10, 4 << 20));
    TreeArray<double> a(3000, 2.5, pool);
    EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](double x) { return x == 2.5; }));
    TreeArray<int> z(3000, pool);
    EXPECT_TRUE(std::all_of(z.begin(), z.end(), [](int x) { return x == 0; })) << "not value-initialised";
}

TEST(TreeArray, PoolTooSmallThrowsAndLeavesNothingBehind) {
    BlockPool pool(pool_options(4 << 10, 64 << 10));  // 16 blocks
    EXPECT_THROW(TreeArray<int>(1 << 20, pool), std::bad_alloc);
    EXPECT_EQ(pool.stats().blocks_in_use, 0u);
    TreeArray<int> a(5000, pool);  // 5 leaves + root
    fill(a);
    EXPECT_THROW(a.resize(1 << 20), std::bad_alloc);
    expect_equal(a, reference<int>(5000));
    EXPECT_EQ(pool.stats().blocks_in_use, 6u);
    while (true) {
        try {
            a.push_back(1);
        } catch (const std::bad_alloc&) {
            break;
        }
    }
    EXPECT_EQ(pool.stats().blocks_in_use, pool.stats().blocks_total);
    EXPECT_EQ(a.size(), 15u * 1024);  // 16 blocks: one root, 15 full leaves
}

TEST(TreeArray, ThrowingConstructorLeavesArrayUnchanged) {
    BlockPool pool(pool_options(4 << 10, 16 << 20));
    {
        TreeArray<Tracked> a(100, pool);
        long live = Tracked::live;
        std::size_t blocks = pool.stats().blocks_in_use;
        Tracked::throw_after = 5000;
        EXPECT_THROW(a.resize(20000), std::runtime_error);
        Tracked::throw_after = -1;
        EXPECT_EQ(a.size(), 100u);
        EXPECT_EQ(Tracked::live, live);
        EXPECT_EQ(pool.stats().blocks_in_use, blocks);
        Tracked::throw_after = 0;
        EXPECT_THROW(a.push_back(Tracked(1)), std::runtime_error);  // Tracked(1) itself throws
        Tracked::throw_after = -1;
        EXPECT_EQ(a.size(), 100u);
    }
    EXPECT_EQ(Tracked::live, 0);
    EXPECT_EQ(pool.stats().blocks_in_use, 0u);
}

TEST(TreeArray, ElementTooLargeForBlockIsRejected) {
    struct Big {
        char bytes[8192];
    };
    BlockPool pool(pool_options(4 << 10, 1 << 20));
    EXPECT_THROW(TreeArray<Big>(1, pool), std::invalid_argument);
}

// Depth 4 needs more than leaf bytes x fan^2 = 1 GiB of leaves with 4 KiB blocks,
// whatever the element type; a 4 KiB element keeps the element count small.
TEST(TreeArray, DepthFour) {
    struct PageElement {
        std::uint64_t index;
        char rest[4096 - 8];
    };
    std::size_t bs = 4 << 10;
    physmem::TreeShape s = physmem::TreeShape::make(bs, sizeof(PageElement));
    std::size_t n = s.leaf_capacity(3) + 1;  // one leaf past depth 3
    BlockPool pool(pool_options(bs, (n + 2048) * bs));
    TreeArray<PageElement> a(n, pool);
    ASSERT_EQ(a.depth(), 4u);
    for (std::size_t i = 0; i < n; ++i) a[i].index = i;
    std::size_t i = 0, bad = 0;
    for (const PageElement& e : a) bad += e.index != i++;
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(a[n - 1].index, n - 1);
    a.pop_back();
    EXPECT_EQ(a.depth(), 3u);
}

TEST(TreeArray, DefaultPoolIsUsedWithoutOne) {
    TreeArray<int> a(100000);
    EXPECT_EQ(&a.pool(), &physmem::default_pool());
    std::iota(a.begin(), a.end(), 0);
    EXPECT_EQ(a[99999], 99999);
}

}  // namespace
