// The protect suite's slot-linked red-black tree (lab/protect/rbtree.hpp) on a plain vector
// and on a TreeArray: every key found with its payload, the red-black rules and key order
// hold, and black_height rejects a tree that breaks them (so the suite's check can fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "physmem/pool.hpp"
#include "physmem/tree_array.hpp"
#include "protect/rbtree.hpp"

namespace {

namespace rb = lab::protect::rb;
constexpr __int128 kLo = -1, kHi = static_cast<__int128>(1) << 64;

template <class C>
void expect_sound(const C& a, std::uint32_t root) {
    std::size_t reached = 0;
    EXPECT_GT(rb::black_height(a, root, kLo, kHi, reached), 0);
    EXPECT_EQ(reached, a.size());
    EXPECT_EQ(rb::lookups(a, root, 5000, 7), rb::expected_lookups(a.size(), 5000, 7));
}

TEST(ProtectRbTree, EveryKeyFoundAndTheRulesHold) {
    for (std::size_t n : {1, 2, 3, 10, 1000, 50000}) {
        std::vector<rb::Node> a(n);
        std::uint32_t root = rb::build(a);
        expect_sound(a, root);
        // Depth at most 2 log2(n + 1): what the rules promise.
        int deepest = 0;
        for (std::uint32_t s = 0; s < n; ++s) {
            int d = 1;
            for (std::uint32_t x = s; a[x].parent != rb::kNil; x = a[x].parent) ++d;
            deepest = std::max(deepest, d);
        }
        EXPECT_LE(deepest, 2 * std::log2(double(n) + 1) + 1e-9) << n;
    }
}

TEST(ProtectRbTree, OnATreeArrayAsOnAVector) {
    physmem::BlockPool pool(physmem::PoolOptions{.block_size = 4096, .capacity = 8 << 20});
    physmem::TreeArray<rb::Node> a(20000, pool);
    std::uint32_t root = rb::build(a);
    expect_sound(a, root);
}

TEST(ProtectRbTree, BrokenTreesAreRejected) {
    std::vector<rb::Node> a(1000);
    std::uint32_t root = rb::build(a);
    std::size_t reached = 0;
    // Two reds in a row: some red node's parent painted red.
    std::uint32_t red = 0;
    while (!(a[red].red && a[red].parent != rb::kNil)) ++red;
    std::vector<rb::Node> b = a;
    b[b[red].parent].red = 1;
    EXPECT_EQ(rb::black_height(b, root, kLo, kHi, reached), -1);
    // A key out of order: the root's key moved past its right child's.
    b = a;
    b[root].key = b[b[root].child[1]].key + 1;
    EXPECT_EQ(rb::black_height(b, root, kLo, kHi, reached), -1);
    // A black leaf painted red: one path fewer black nodes than its sibling's.
    b = a;
    std::uint32_t leafish = 0;
    while (!(b[leafish].child[0] == rb::kNil && b[leafish].child[1] == rb::kNil && !b[leafish].red)) ++leafish;
    b[leafish].red = 1;
    EXPECT_EQ(rb::black_height(b, root, kLo, kHi, reached), -1);
}

}  // namespace
