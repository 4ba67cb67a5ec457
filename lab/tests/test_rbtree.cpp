// Red-black tree kernel: both allocators build valid trees whose traversal matches a
// sorted-vector reference, and the checker catches each kind of corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "kernels/rbtree.hpp"

namespace {

using namespace lab::rbtree;

physmem::BlockPool make_pool(std::size_t block) {
    return physmem::BlockPool({.block_size = block, .capacity = 16 << 20, .backing = physmem::Backing::page_4k});
}

template <class Alloc>
void build(RbTree<Alloc>& t, const std::vector<std::uint64_t>& keys) {
    for (std::uint64_t k : keys) t.insert(k, payload_of(k));
}

template <class Alloc>
void expect_matches_reference(RbTree<Alloc>& t, const std::vector<std::uint64_t>& keys) {
    std::size_t distinct = 0;
    std::uint64_t want = reference_sum(keys, &distinct);
    Check c = check(t.root(), t.size());
    EXPECT_TRUE(c.ok) << c.error;
    EXPECT_EQ(t.size(), distinct);
    EXPECT_EQ(traverse_sum(t.root()), want);
    std::vector<std::uint64_t> seen;
    in_order(t.root(), [&seen](const Node& n) { seen.push_back(n.key); });
    std::set<std::uint64_t> unique(keys.begin(), keys.end());
    std::vector<std::uint64_t> sorted(unique.begin(), unique.end());
    EXPECT_EQ(seen, sorted);
}

TEST(RbTree, MallocTreeMatchesReference) {
    for (std::size_t n : {0u, 1u, 2u, 3u, 100u, 5000u}) {
        MallocNodes a;
        RbTree t(a);
        auto keys = make_keys(n, 7);
        build(t, keys);
        expect_matches_reference(t, keys);
    }
}

TEST(RbTree, PoolTreeMatchesReferenceAcrossBlocksAndRebuilds) {
    auto pool = make_pool(4096);  // 85 nodes per block: many blocks
    PoolNodes a(pool);
    RbTree t(a);
    auto keys = make_keys(20000, 3);
    for (int round = 0; round < 3; ++round) {  // clear() rewinds: same blocks reused
        t.clear();
        build(t, keys);
        expect_matches_reference(t, keys);
        EXPECT_EQ(a.blocks(), PoolNodes::blocks_for(keys.size(), 4096));
    }
}

TEST(RbTree, SortedAndDuplicateKeysStayBalanced) {
    MallocNodes a;
    RbTree t(a);
    std::vector<std::uint64_t> keys;
    for (std::uint64_t k = 0; k < 4096; ++k) keys.push_back(k);  // ascending: worst case for a plain BST
    for (std::uint64_t k = 0; k < 4096; k += 3) keys.push_back(k);  // duplicates are skipped
    build(t, keys);
    expect_matches_reference(t, keys);
    EXPECT_FALSE(t.insert(5, 0));
    Check c = check(t.root(), t.size());
    EXPECT_LE(c.black_height, 13u);  // black height <= log2(n + 1)
}

TEST(RbTree, PoolFreeListReusesNodes) {
    auto pool = make_pool(4096);
    PoolNodes a(pool);
    void* x = a.allocate();
    a.deallocate(static_cast<Node*>(x));
    EXPECT_EQ(a.allocate(), x);
}

TEST(RbTree, PoolExhaustionThrowsAndLeavesTreeValid) {
    physmem::BlockPool pool({.block_size = 4096, .capacity = 4096, .backing = physmem::Backing::page_4k});
    PoolNodes a(pool);
    RbTree t(a);
    auto keys = make_keys(200, 1);
    EXPECT_THROW(build(t, keys), std::bad_alloc);
    EXPECT_EQ(t.size(), a.nodes_per_block());
    EXPECT_TRUE(check(t.root(), t.size()).ok);
}

// ---- corruption is detected ---------------------------------------------------------

struct Built {
    Built() : t(a) { build(t, make_keys(1000, 11)); }
    MallocNodes a;
    RbTree<MallocNodes> t;
    Node* root() { return t.root(); }
    // Some node found by walking left/right alternately `steps` times.
    Node* descend(int steps) {
        Node* n = root();
        for (int i = 0; i < steps && n->child[i % 2]; ++i) n = n->child[i % 2];
        return n;
    }
};

TEST(RbTreeCheck, DetectsRedRoot) {
    Built b;
    b.root()->red = true;
    Check c = check(b.root(), b.t.size());
    EXPECT_FALSE(c.ok);
    EXPECT_NE(c.error.find("red root"), std::string::npos);
    b.root()->red = false;
}

TEST(RbTreeCheck, DetectsRedRedOrBlackHeight) {
    Built b;
    // Recolouring any non-root node breaks an invariant: a red node turned black
    // changes its paths' black height; a black one turned red does too.
    Node* n = b.descend(3);
    n->red = !n->red;
    EXPECT_FALSE(check(b.root(), b.t.size()).ok);
    n->red = !n->red;
    EXPECT_TRUE(check(b.root(), b.t.size()).ok);
}

TEST(RbTreeCheck, DetectsRedChildOfRed) {
    Built b;
    // Find a red node with a child; make the child red too.
    Node* red = nullptr;
    in_order(b.root(), [&](const Node& n) {
        if (!red && n.red && (n.child[0] || n.child[1])) red = const_cast<Node*>(&n);
    });
    ASSERT_NE(red, nullptr);
    Node* child = red->child[0] ? red->child[0] : red->child[1];
    child->red = true;
    Check c = check(b.root(), b.t.size());
    EXPECT_FALSE(c.ok);
}

TEST(RbTreeCheck, DetectsKeysOutOfOrder) {
    Built b;
    Node* n = b.descend(4);
    std::uint64_t saved = n->key;
    n->key = b.root()->key;  // a duplicate key somewhere below the root
    Check c = check(b.root(), b.t.size());
    EXPECT_FALSE(c.ok);
    n->key = saved;
    EXPECT_TRUE(check(b.root(), b.t.size()).ok);
}

TEST(RbTreeCheck, DetectsOrderViolationBeyondParentChild) {
    // A grandchild on the wrong side of its grandparent: parent/child pairs are fine,
    // only the in-order sequence shows it.
    MallocNodes a;
    RbTree t(a);
    for (std::uint64_t k : {20, 10, 30, 5, 15}) t.insert(k, payload_of(k));
    Node* fifteen = const_cast<Node*>(t.find(15));
    ASSERT_NE(fifteen, nullptr);
    fifteen->key = 25;  // > 20 in 20's left subtree, still > its parent 10
    EXPECT_FALSE(check(t.root(), t.size()).ok);
    fifteen->key = 15;
}

TEST(RbTreeCheck, DetectsWrongCountAndSum) {
    Built b;
    EXPECT_FALSE(check(b.root(), b.t.size() + 1).ok);
    auto keys = make_keys(1000, 11);
    keys[0] ^= 1;  // a reference of other keys
    EXPECT_NE(traverse_sum(b.root()), reference_sum(keys));
    Node* n = b.descend(2);
    n->value ^= 4;  // a payload changed in the tree
    EXPECT_NE(traverse_sum(b.root()), reference_sum(make_keys(1000, 11)));
    n->value ^= 4;
}

TEST(RbTreeCheck, DetectsBrokenParentLink) {
    Built b;
    Node* n = b.descend(3);
    Node* saved = n->parent;
    n->parent = n;
    EXPECT_FALSE(check(b.root(), b.t.size()).ok);
    n->parent = saved;
}

}  // namespace
