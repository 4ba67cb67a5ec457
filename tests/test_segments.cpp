// tests/test_segments.cpp — for_each_segment, its range form, for_each_strided and
// with_fixed_depth visit exactly the right elements in order.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "physmem/fixed_depth.hpp"
#include "physmem/segments.hpp"
#include "support.hpp"

using physmem::BlockPool;
using physmem::TreeArray;
using physmem_test::pool_options;

namespace {

class SegmentsTest : public ::testing::TestWithParam<std::size_t> {
  protected:
    BlockPool pool{pool_options(4 << 10, std::size_t{64} << 20)};
};

TEST_P(SegmentsTest, SegmentsCoverTheArrayInOrder) {
    std::size_t n = GetParam();
    TreeArray<std::uint32_t> a(n, pool);
    std::iota(a.begin(), a.end(), 0u);
    std::size_t next = 0, calls = 0;
    physmem::for_each_segment(a, [&](std::span<std::uint32_t> s) {
        ++calls;
        EXPECT_LE(s.size(), a.leaf_length());
        for (std::uint32_t x : s) ASSERT_EQ(x, next++);
    });
    EXPECT_EQ(next, n);
    EXPECT_EQ(calls, a.leaf_count());
}

TEST_P(SegmentsTest, RangeFormVisitsExactlyTheRange) {
    std::size_t n = GetParam();
    TreeArray<std::uint32_t> a(n, pool);
    std::iota(a.begin(), a.end(), 0u);
    for (std::size_t first : {std::size_t{0}, n / 3, n > 1025 ? std::size_t{1023} : std::size_t{0}}) {
        for (std::size_t last : {n, (n + first) / 2, first}) {
            if (last < first) continue;
            std::size_t next = first;
            physmem::for_each_segment(a, first, last, [&](std::span<std::uint32_t> s) {
                for (std::uint32_t x : s) ASSERT_EQ(x, next++);
            });
            EXPECT_EQ(next, last) << first << ".." << last;
        }
    }
}

TEST_P(SegmentsTest, StridedVisitsEveryStrideth) {
    std::size_t n = GetParam();
    TreeArray<std::uint32_t> a(n, pool);
    std::iota(a.begin(), a.end(), 0u);
    for (std::size_t stride : {std::size_t{1}, std::size_t{3}, std::size_t{1023}, std::size_t{1024},
                               std::size_t{1025}, std::size_t{4096}, n + 1}) {
        for (std::size_t first : {std::size_t{0}, std::size_t{5}}) {
            std::vector<std::uint32_t> seen;
            physmem::for_each_strided(a, first, stride, [&](std::uint32_t& x) { seen.push_back(x); });
            std::vector<std::uint32_t> want;
            for (std::size_t i = first; i < n; i += stride) want.push_back(static_cast<std::uint32_t>(i));
            ASSERT_EQ(seen, want) << "stride " << stride << " first " << first;
        }
    }
}

TEST_P(SegmentsTest, FixedDepthViewReadsWhatOperatorIndexReads) {
    std::size_t n = GetParam();
    TreeArray<std::uint32_t> a(n, pool);
    std::iota(a.begin(), a.end(), 7u);
    unsigned seen_depth = physmem::with_fixed_depth(a, [&](auto view) {
        EXPECT_EQ(view.size(), n);
        for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(&view[i], &a[i]) << i;
        return decltype(view)::depth;
    });
    EXPECT_EQ(seen_depth, std::max(1u, a.depth()));
    const TreeArray<std::uint32_t>& c = a;
    std::uint64_t sum = physmem::with_fixed_depth(c, [](auto view) {
        std::uint64_t s = 0;
        for (std::size_t i = 0; i < view.size(); ++i) s += view[i];
        return s;
    });
    EXPECT_EQ(sum, std::accumulate(a.begin(), a.end(), std::uint64_t{0}));
}

// Sizes at depth 0, 1, 2 and 3 with 4 KiB blocks (1024 ints per leaf, 512 per inner).
INSTANTIATE_TEST_SUITE_P(Depths, SegmentsTest,
                         ::testing::Values(0, 1, 1024, 1025, 5000, 524288, 524289, 600000));

TEST(Segments, ContiguousRangesAreOneSegment) {
    std::vector<int> v(1000);
    std::iota(v.begin(), v.end(), 0);
    int calls = 0;
    physmem::for_each_segment(std::span<int>(v), [&](std::span<int> s) {
        ++calls;
        EXPECT_EQ(s.size(), 1000u);
    });
    EXPECT_EQ(calls, 1);
    long sum = 0;
    physmem::for_each_strided(std::span<int>(v), 0, 100, [&](int& x) { sum += x; });
    EXPECT_EQ(sum, 0 + 100 + 200 + 300 + 400 + 500 + 600 + 700 + 800 + 900);
}

}  // namespace
