// Scan kernels: every way of reading a tree gives the contiguous sum, and the closed-form
// reference catches a wrong element.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/scan.hpp"

namespace {

using namespace lab::scan;

struct Fixture {
    explicit Fixture(std::size_t n, std::size_t block)
        : pool({.block_size = block, .capacity = 64 << 20, .backing = physmem::Backing::page_4k}),
          flat(n), tree(n, pool) {
        for (std::size_t i = 0; i < n; ++i) flat[i] = tree[i] = value_at(i);
    }
    physmem::BlockPool pool;
    std::vector<Elem> flat;
    Tree tree;
};

class ScanKernels : public ::testing::TestWithParam<std::pair<std::size_t, std::size_t>> {};

TEST_P(ScanKernels, LinearReadsAgreeWithClosedForm) {
    auto [n, block] = GetParam();
    Fixture f(n, block);
    std::uint64_t want = expected_linear(n);
    EXPECT_EQ(linear(f.flat), want);
    EXPECT_EQ(linear_index(f.tree), want);
    EXPECT_EQ(linear_fixed(f.tree), want);
    EXPECT_EQ(linear_iter(f.tree), want);
    EXPECT_EQ(linear_seg(f.tree), want);
}

TEST_P(ScanKernels, StridedReadsAgreeWithClosedForm) {
    auto [n, block] = GetParam();
    Fixture f(n, block);
    for (std::size_t columns : {std::size_t{1}, std::size_t{7}, std::size_t{64}, kStride}) {
        auto offsets = column_offsets(columns);
        std::uint64_t want = expected_strided(n, offsets);
        EXPECT_EQ(strided(f.flat, offsets), want) << columns;
        EXPECT_EQ(strided_index(f.tree, offsets), want) << columns;
        EXPECT_EQ(strided_fixed(f.tree, offsets), want) << columns;
        EXPECT_EQ(strided_iter(f.tree, offsets), want) << columns;
        EXPECT_EQ(strided_seg(f.tree, offsets), want) << columns;
    }
}

TEST_P(ScanKernels, RandomReadsAgreeWithTheSameIndexSequence) {
    auto [n, block] = GetParam();
    Fixture f(n, block);
    std::uint64_t count = random_reads(n), want = expected_random(n, count);
    EXPECT_EQ(random(f.flat, count), want);
    EXPECT_EQ(random_index(f.tree, count), want);
    EXPECT_EQ(random_fixed(f.tree, count), want);
}

// Sizes below one page, one leaf, a leaf plus one, and depth 3 with 4 KiB blocks.
INSTANTIATE_TEST_SUITE_P(Shapes, ScanKernels,
                         ::testing::Values(std::pair{std::size_t{100}, std::size_t{4096}},
                                           std::pair{std::size_t{1024}, std::size_t{4096}},
                                           std::pair{std::size_t{1025}, std::size_t{4096}},
                                           std::pair{std::size_t{(1u << 19) + 3}, std::size_t{4096}},
                                           std::pair{std::size_t{(1u << 18) + 5}, std::size_t{65536}}));

TEST(ScanKernels, StridedCountsEveryReadOnceWithAllColumns) {
    auto offsets = column_offsets(kStride);
    EXPECT_EQ(strided_reads(5000, offsets), 5000u);
    EXPECT_EQ(expected_strided(5000, offsets), expected_linear(5000));
}

TEST(ScanKernels, RandomIndexesStayInRangeAndSpread) {
    RandomIndex r;
    std::vector<int> hits(16);
    for (int k = 0; k < 16000; ++k) ++hits.at(r.next(16));
    for (int h : hits) EXPECT_GT(h, 800);      // ~1000 each: no bucket starved
    EXPECT_EQ(random_reads(1000), 1000u);     // small arrays: every element's worth
    EXPECT_EQ(random_reads(1u << 24), (1u << 24) / 8);
}

TEST(ScanKernels, AWrongElementIsDetected) {
    Fixture f(5000, 4096);
    f.tree[4097] += 1;
    EXPECT_NE(linear_seg(f.tree), expected_linear(5000));
    auto offsets = column_offsets(kStride);
    EXPECT_NE(strided_iter(f.tree, offsets), expected_strided(5000, offsets));
}

}  // namespace
