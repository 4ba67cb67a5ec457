// Chase kernels: the shuffled order links into one cycle on arrays and trees, chases
// end where the order says, and broken cycles are detected.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/chase.hpp"
#include "physmem/fixed_depth.hpp"

namespace {

using namespace lab::chase;
using Tree = physmem::TreeArray<std::uint64_t>;

physmem::BlockPool small_pool() {
    return physmem::BlockPool({.block_size = 4096, .capacity = 32 << 20, .backing = physmem::Backing::page_4k});
}

std::vector<std::uint64_t> order_of(std::size_t n, std::uint64_t seed) {
    std::vector<std::uint64_t> o(n);
    shuffle_order(o, seed);
    return o;
}

TEST(ChaseOrder, IsASeededPermutation) {
    auto o = order_of(10000, 7);
    auto sorted = o;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::uint64_t> iota(10000);
    std::iota(iota.begin(), iota.end(), 0);
    EXPECT_EQ(sorted, iota);
    EXPECT_EQ(o, order_of(10000, 7));
    EXPECT_NE(o, order_of(10000, 8));
    EXPECT_NE(o, iota);
}

// Links the order into t and checks the cycle and chases of several lengths.
template <class Table>
void expect_cycle(Table& t, const std::vector<std::uint64_t>& o) {
    link(t, std::span<const std::uint64_t>(o));
    EXPECT_TRUE(is_single_cycle(t, std::span<const std::uint64_t>(o)));
    EXPECT_EQ(cycle_length(t, o[0], o.size()), o.size());
    for (std::uint64_t steps : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{o.size() - 1},
                                std::uint64_t{o.size()}, std::uint64_t{3 * o.size() + 5}}) {
        EXPECT_EQ(chase(t, o[0], steps), expected_end(o, steps)) << steps;
        physmem::with_fixed_depth(t, [&](auto view) { EXPECT_EQ(chase(view, o[0], steps), expected_end(o, steps)); });
    }
}

TEST(ChaseKernel, ArrayAndTreesHoldOneCycle) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{511}, std::size_t{512}, std::size_t{513},
                          std::size_t{300000}}) {  // 300000: depth 3 on 4 KiB blocks
        auto o = order_of(n, 42 + n);
        std::vector<std::uint64_t> v(n);
        std::span<std::uint64_t> a(v);
        link(a, std::span<const std::uint64_t>(o));
        EXPECT_TRUE(is_single_cycle(a, std::span<const std::uint64_t>(o))) << n;
        EXPECT_EQ(cycle_length(a, o[0], n), n);
        EXPECT_EQ(chase(a, o[0], 3 * n + 1), expected_end(o, 3 * n + 1));
        auto pool = small_pool();
        Tree t(n, pool);
        expect_cycle(t, o);
    }
}

TEST(ChaseVerify, SwappedLinksSplitTheCycleAndAreDetected) {
    const std::size_t n = 5000;
    auto o = order_of(n, 3);
    auto pool = small_pool();
    Tree t(n, pool);
    link(t, std::span<const std::uint64_t>(o));
    std::swap(t[o[10]], t[o[2000]]);  // two cycles now: 11..2000 and the rest
    EXPECT_FALSE(is_single_cycle(t, std::span<const std::uint64_t>(o)));
    EXPECT_NE(cycle_length(t, o[0], n), n);
}

TEST(ChaseVerify, OutOfRangeSlotOrBadOrderIsDetected) {
    const std::size_t n = 1000;
    auto o = order_of(n, 5);
    std::vector<std::uint64_t> v(n);
    std::span<std::uint64_t> a(v);
    link(a, std::span<const std::uint64_t>(o));
    a[o[500]] = n + 3;
    EXPECT_FALSE(is_single_cycle(a, std::span<const std::uint64_t>(o)));
    EXPECT_EQ(cycle_length(a, o[0], n), n + 1);
    link(a, std::span<const std::uint64_t>(o));
    auto dup = o;
    dup[7] = dup[8];  // not a permutation
    EXPECT_FALSE(is_single_cycle(a, std::span<const std::uint64_t>(dup)));
}

}  // namespace
