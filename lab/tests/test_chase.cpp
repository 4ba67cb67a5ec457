// Chase kernels: the seeded order is a bijection, links into one cycle on arrays and
// trees, chases end where the order says, and broken cycles are detected.
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

std::vector<std::uint64_t> listed(const RandomOrder& o) {
    std::vector<std::uint64_t> v(o.size());
    for (std::uint64_t k = 0; k < o.size(); ++k) v[k] = o(k);
    return v;
}

TEST(ChaseOrder, IsASeededBijection) {
    for (std::uint64_t n : {1u, 2u, 3u, 1000u, 1024u, 1025u, 77777u}) {
        auto v = listed(RandomOrder(n, 7));
        auto sorted = v;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::uint64_t> iota(n);
        std::iota(iota.begin(), iota.end(), 0);
        ASSERT_EQ(sorted, iota) << n;
        EXPECT_TRUE(sums_match(RandomOrder(n, 7)));
        if (n >= 1000) {
            EXPECT_NE(v, iota);
            EXPECT_EQ(v, listed(RandomOrder(n, 7)));
            EXPECT_NE(v, listed(RandomOrder(n, 8)));
        }
    }
}

TEST(ChaseOrder, ConsecutiveSlotsAreFarApart) {
    RandomOrder o(1 << 20, 1);
    std::uint64_t near = 0;
    for (std::uint64_t k = 0; k + 1 < 10000; ++k) {
        std::uint64_t a = o(k), b = o(k + 1);
        near += (a > b ? a - b : b - a) < 512;  // same 4 KiB page, give or take
    }
    EXPECT_LT(near, 50u);  // ~10 expected at random
}

// Links o into t and checks the cycle and chases of several lengths.
template <class Table>
void expect_cycle(Table& t, const RandomOrder& o) {
    const std::uint64_t n = o.size();
    link(t, o);
    EXPECT_TRUE(is_single_cycle(t, o));
    EXPECT_EQ(cycle_length(t, o(0), n), n);
    for (std::uint64_t steps : {std::uint64_t{0}, std::uint64_t{1}, n - 1, n, 3 * n + 5}) {
        EXPECT_EQ(chase(t, o(0), steps), expected_end(o, steps)) << steps;
        if constexpr (!std::is_same_v<Table, std::span<std::uint64_t>>)
            physmem::with_fixed_depth(t, [&](auto view) { EXPECT_EQ(chase(view, o(0), steps), expected_end(o, steps)); });
    }
}

TEST(ChaseKernel, ArrayAndTreesHoldOneCycle) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{511}, std::size_t{512}, std::size_t{513},
                          std::size_t{300000}}) {  // 300000: depth 3 on 4 KiB blocks
        RandomOrder o(n, 42 + n);
        std::vector<std::uint64_t> v(n);
        std::span<std::uint64_t> a(v);
        expect_cycle(a, o);
        auto pool = small_pool();
        Tree t(n, pool);
        expect_cycle(t, o);
    }
}

TEST(ChaseVerify, SwappedLinksSplitTheCycleAndAreDetected) {
    const std::size_t n = 5000;
    RandomOrder o(n, 3);
    auto pool = small_pool();
    Tree t(n, pool);
    link(t, o);
    std::swap(t[o(10)], t[o(2000)]);  // two cycles now: 11..2000 and the rest
    EXPECT_FALSE(is_single_cycle(t, o));
    EXPECT_NE(cycle_length(t, o(0), n), n);
    EXPECT_NE(chase(t, o(0), 3000), expected_end(o, 3000));
}

TEST(ChaseVerify, OutOfRangeOrMisplacedSlotIsDetected) {
    const std::size_t n = 1000;
    RandomOrder o(n, 5);
    std::vector<std::uint64_t> v(n);
    std::span<std::uint64_t> a(v);
    link(a, o);
    a[o(500)] = n + 3;
    EXPECT_FALSE(is_single_cycle(a, o));
    EXPECT_EQ(cycle_length(a, o(0), n), n + 1);
    link(a, o);
    a[o(500)] = o(502);  // skips one slot: a cycle of n - 1
    EXPECT_FALSE(is_single_cycle(a, o));
    EXPECT_EQ(cycle_length(a, o(0), n), n - 1);
}

}  // namespace
