// lab/protect/rbtree.hpp — the protect suite's red-black tree: nodes in one array, linked
// by slot number, so the same code runs on a plain span, a TreeArray (unchecked) and a
// CheckedTreeArray (every node visited through a checked a[i]: bounds and the leaf's tag).
// Slot numbers are what a tree over checked memory holds instead of raw pointers: a raw
// pointer kept past a check cannot be checked again (checked_tree_array.hpp).
//
// Insertion is the textbook one (Cormen et al., ch. 13: binary-search insert, then the
// recolouring/rotation fix-up); slot s holds key_of(s), a bijection of s, so keys are
// distinct and every lookup of key_of(s) finds slot s's payload.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/rbtree.hpp"

namespace lab::protect::rb {

constexpr std::uint32_t kNil = ~std::uint32_t{0};

struct Node {
    std::uint64_t key;
    std::uint64_t value;
    std::uint32_t child[2];  // [0] left, [1] right, kNil when absent
    std::uint32_t parent;
    std::uint32_t red;
};
static_assert(sizeof(Node) == 32);

// splitmix64 from state s: a bijection of 64-bit words (distinct slots, distinct keys).
constexpr std::uint64_t key_of(std::uint64_t s) noexcept { return lab::rbtree::splitmix64(s); }
using lab::rbtree::payload_of;  // the payload stored with a key (the rbtree experiment's)

// Rotates x down on side `dir` (0: left rotation, its right child comes up).
template <class C>
void rotate(C& a, std::uint32_t& root, std::uint32_t x, int dir) {
    std::uint32_t y = a[x].child[1 - dir];
    a[x].child[1 - dir] = a[y].child[dir];
    if (a[y].child[dir] != kNil) a[a[y].child[dir]].parent = x;
    a[y].parent = a[x].parent;
    if (a[x].parent == kNil) root = y;
    else a[a[x].parent].child[a[a[x].parent].child[1] == x] = y;
    a[y].child[dir] = x;
    a[x].parent = y;
}

// Inserts slot z (its key and value set, its key not in the tree) under `root`.
template <class C>
void insert(C& a, std::uint32_t& root, std::uint32_t z) {
    std::uint32_t y = kNil;
    int dir = 0;
    for (std::uint32_t x = root; x != kNil; x = a[x].child[dir]) {
        y = x;
        dir = a[z].key > a[x].key;
    }
    a[z].parent = y;
    a[z].child[0] = a[z].child[1] = kNil;
    a[z].red = 1;
    if (y == kNil) root = z;
    else a[y].child[dir] = z;
    while (z != root && a[a[z].parent].red) {
        std::uint32_t p = a[z].parent, g = a[p].parent;  // p red: not the root, so g exists
        int side = a[g].child[1] == p;
        std::uint32_t u = a[g].child[1 - side];
        if (u != kNil && a[u].red) {
            a[p].red = a[u].red = 0;
            a[g].red = 1;
            z = g;
            continue;
        }
        if (z == a[p].child[1 - side]) {
            z = p;
            rotate(a, root, z, side);
            p = a[z].parent;
        }
        a[p].red = 0;
        a[g].red = 1;
        rotate(a, root, g, 1 - side);
    }
    a[root].red = 0;
}

// Fills every slot (key_of(s), payload_of(key)) and inserts them in slot order; the root.
template <class C>
std::uint32_t build(C& a) {
    std::uint32_t root = kNil;
    for (std::uint32_t s = 0; s < a.size(); ++s) {
        a[s].key = key_of(s);
        a[s].value = payload_of(a[s].key);
        insert(a, root, s);
    }
    return root;
}

// Black height of the subtree at x, or -1 when a red-black rule or the key order breaks in
// it (keys strictly between lo and hi: -1 and 2^64 for the whole tree); counts the nodes
// reached into `nodes`.
template <class C>
int black_height(const C& a, std::uint32_t x, __int128 lo, __int128 hi, std::size_t& nodes, int depth = 0) {
    if (x == kNil) return 1;
    const Node& n = a[x];
    ++nodes;
    if (__int128{n.key} <= lo || __int128{n.key} >= hi || depth > 128) return -1;
    for (std::uint32_t c : n.child)
        if (c != kNil && (a[c].parent != x || (n.red && a[c].red))) return -1;
    int l = black_height(a, n.child[0], lo, n.key, nodes, depth + 1);
    int r = black_height(a, n.child[1], n.key, hi, nodes, depth + 1);
    return l < 0 || l != r ? -1 : l + (n.red ? 0 : 1);
}

// The next random slot below n: xorshift64 on x, multiply-shift into [0, n).
inline std::uint64_t next_slot(std::uint64_t& x, unsigned __int128 n) noexcept {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<std::uint64_t>((x * n) >> 64);
}

// `lookups` searches for the keys of random slots (next_slot from `seed`); the sum of the
// payloads found.
template <class C>
std::uint64_t lookups(const C& a, std::uint32_t root, std::uint64_t count, std::uint64_t seed) {
    const std::size_t n = a.size();
    std::uint64_t x = seed, sum = 0;
    for (std::uint64_t k = 0; k < count; ++k) {
        const std::uint64_t key = key_of(next_slot(x, n));
        for (std::uint32_t i = root; i != kNil;) {
            const Node& nd = a[i];
            if (nd.key == key) {
                sum += nd.value;
                break;
            }
            i = nd.child[key > nd.key];
        }
    }
    return sum;
}

// The cheapest bounds check an array could put on a[i]: a compare of i with the size,
// held in a register through a loop (no tag, and the unchecked tree's walk: nothing another
// thread frees is noticed), and a trap (no call in the loop: checked mode's compare is the
// same, its entries see a free, and its failed compare calls the out-of-line check, whose
// registers the loop must keep around the call). The protect suite's control for the lookups (phase
// rbtree_floor, over the unchecked tree): what one compare and branch an access costs
// on a loop whose speed comes from how many independent lookups the CPU overlaps, which
// every instruction added to an access shortens. pre: n <= a.size().
template <class C>
struct BoundsFloor {
    const C& a;
    std::size_t n;
    std::size_t size() const noexcept { return n; }
    const Node& operator[](std::size_t i) const noexcept {
        if (i >= n) [[unlikely]]
            __builtin_trap();
        return a[i];
    }
};

// What lookups(a, root, count, seed) returns on a correct tree (no tree needed).
inline std::uint64_t expected_lookups(std::size_t size, std::uint64_t count, std::uint64_t seed) {
    std::uint64_t x = seed, sum = 0;
    for (std::uint64_t k = 0; k < count; ++k) sum += payload_of(key_of(next_slot(x, size)));
    return sum;
}

}  // namespace lab::protect::rb
