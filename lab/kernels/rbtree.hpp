// lab/kernels/rbtree.hpp — a red-black tree of 64-bit keys with a 64-bit payload, whose
// node allocator is a template parameter (the seed paper's Fig. 4 red-black tree).
//
// The tree is the textbook one (Cormen et al., ch. 13): nodes with parent pointers,
// insertion as in a binary search tree followed by the recolouring/rotation fix-up.
// Absent children are null (no sentinel node). Duplicate keys are not inserted.
//
// Allocation policies (same interface, so the tree code is identical for both):
//   MallocNodes — every node from ::operator new / std::malloc (glibc), freed one by one.
//   PoolNodes   — nodes carved from BlockPool blocks by a bump pointer, with a free list
//                 for nodes given back; reset() rewinds to the first block so a rebuilt
//                 tree gets the same blocks in the same order.
// Both hand out nodes in allocation order from increasing addresses while nothing is
// freed, so the layout of a freshly built tree is the same up to the slot stride
// (malloc: 64-byte chunks incl. its header; pool: sizeof(Node) = 48 bytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "physmem/pool.hpp"

namespace lab::rbtree {

struct Node {
    Node* child[2];  // [0] left, [1] right
    Node* parent;
    std::uint64_t key;
    std::uint64_t value;
    bool red;
};

// splitmix64: the seeded key generator (Steele, Lea and Flood's finaliser).
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The payload stored with a key: a fixed function of it, so the reference needs no tree.
constexpr std::uint64_t payload_of(std::uint64_t key) noexcept { return (key * 0xD6E8FEB86659FD93ull) ^ (key >> 17); }

// n keys from the generator seeded with `seed` (duplicates possible, kept).
inline std::vector<std::uint64_t> make_keys(std::size_t n, std::uint64_t seed) {
    std::vector<std::uint64_t> keys(n);
    for (auto& k : keys) k = splitmix64(seed);
    return keys;
}

// ---- allocators -----------------------------------------------------------------------

// Nodes from the process's malloc.
class MallocNodes {
  public:
    // Storage for one Node (uninitialised, suitably aligned). Throws std::bad_alloc.
    void* allocate() {
        void* p = std::malloc(sizeof(Node));
        if (!p) throw std::bad_alloc();
        return p;
    }
    void deallocate(Node* p) noexcept { std::free(p); }
    // malloc cannot drop everything at once: the tree frees node by node.
    static constexpr bool bulk_release = false;
    void reset() noexcept {}
    // Frees every node of `all` (which it reorders), highest address first: glibc's
    // fast bins are LIFO, so a tree rebuilt next gets chunks in increasing address
    // order again, as on a fresh heap (up to tcache's groups of 7), instead of a layout
    // scrambled by the free order.
    void release(std::vector<Node*>& all) noexcept {
        std::sort(all.begin(), all.end(), std::greater<>());
        for (Node* p : all) std::free(p);
    }
};

// Nodes carved from pool blocks. The pool must outlive this allocator.
class PoolNodes {
  public:
    explicit PoolNodes(physmem::BlockPool& pool)
        : pool_(&pool), per_block_(pool.block_size() / sizeof(Node)), used_in_block_(per_block_) {}
    ~PoolNodes() {
        for (void* b : blocks_) pool_->deallocate(b);
    }
    PoolNodes(const PoolNodes&) = delete;
    PoolNodes& operator=(const PoolNodes&) = delete;

    // Reuses a freed node first, else the next slot of the current block, else a new
    // block (kept for reuse after reset()). Throws std::bad_alloc when the pool is out.
    void* allocate() {
        if (free_) {
            Node* n = free_;
            free_ = n->parent;
            return n;
        }
        if (used_in_block_ == per_block_) next_block();
        return block_base_ + sizeof(Node) * used_in_block_++;
    }
    // pre: p came from allocate() since the last reset(). Pushed on the free list.
    void deallocate(Node* p) noexcept {
        p->parent = free_;
        free_ = p;
    }
    // Every node is released at once: the tree may drop its nodes without visiting them.
    static constexpr bool bulk_release = true;
    // Forgets every node; blocks stay with this allocator and are reused in order.
    void reset() noexcept {
        free_ = nullptr;
        current_ = 0;
        used_in_block_ = per_block_;
        block_base_ = nullptr;
    }
    std::size_t blocks() const noexcept { return blocks_.size(); }
    std::size_t nodes_per_block() const noexcept { return per_block_; }
    // Blocks a tree of n nodes needs (no frees in between).
    static std::size_t blocks_for(std::size_t n, std::size_t block_size) noexcept {
        std::size_t per = block_size / sizeof(Node);
        return (n + per - 1) / per;
    }

  private:
    void next_block() {
        if (current_ == blocks_.size()) blocks_.push_back(pool_->allocate());
        block_base_ = static_cast<std::byte*>(blocks_[current_++]);
        used_in_block_ = 0;
    }

    physmem::BlockPool* pool_;
    std::size_t per_block_;
    std::vector<void*> blocks_;  // in the order first taken
    std::size_t current_ = 0;    // blocks of blocks_ handed out since reset()
    std::size_t used_in_block_ = 0;
    std::byte* block_base_ = nullptr;
    Node* free_ = nullptr;  // linked through Node::parent
};

// ---- traversal and checks ---------------------------------------------------------------

// Deepest path of a red-black tree of n < 2^64 nodes is below 2*64.
inline constexpr std::size_t kMaxDepth = 128;

// Told the address of each node field a traversal loads (a traced pass: Tracer::data);
// NoTouch, the measured pass's, does nothing.
struct NoTouch {
    void operator()(const void*) const noexcept {}
};

// In-order walk from `root` calling visit(const Node&) per node, with an explicit stack
// (no parent reads); touch(p) before each child-pointer load. pre: root is a valid
// red-black tree (depth < kMaxDepth).
template <class Visit, class Touch = NoTouch>
void in_order(const Node* root, Visit&& visit, Touch touch = {}) {
    const Node* stack[kMaxDepth];
    std::size_t top = 0;
    const Node* n = root;
    while (n || top) {
        while (n) {
            stack[top++] = n;
            touch(&n->child[0]);
            n = n->child[0];
        }
        n = stack[--top];
        visit(*n);
        touch(&n->child[1]);
        n = n->child[1];
    }
}

// ---- the tree -------------------------------------------------------------------------

template <class Alloc>
class RbTree {
  public:
    explicit RbTree(Alloc& alloc) : alloc_(&alloc) {}
    ~RbTree() { clear(); }
    RbTree(const RbTree&) = delete;
    RbTree& operator=(const RbTree&) = delete;

    std::size_t size() const noexcept { return size_; }
    Node* root() const noexcept { return root_; }

    // Inserts key with its payload; false (tree unchanged) when the key is present.
    // Throws std::bad_alloc from the allocator (tree unchanged).
    bool insert(std::uint64_t key, std::uint64_t value) {
        Node* parent = nullptr;
        Node* cur = root_;
        int dir = 0;
        while (cur) {
            if (key == cur->key) return false;
            parent = cur;
            dir = key > cur->key;
            cur = cur->child[dir];
        }
        Node* n = ::new (alloc_->allocate()) Node{{nullptr, nullptr}, parent, key, value, true};
        if (parent) parent->child[dir] = n;
        else root_ = n;
        ++size_;
        fix_after_insert(n);
        return true;
    }

    // The node holding key, or nullptr.
    const Node* find(std::uint64_t key) const noexcept {
        const Node* cur = root_;
        while (cur && cur->key != key) cur = cur->child[key > cur->key];
        return cur;
    }

    // Frees every node: in bulk when the allocator can, else collected and handed to
    // alloc.release() (a post-order walk freeing one by one if collecting fails).
    void clear() noexcept {
        if constexpr (Alloc::bulk_release) {
            alloc_->reset();
        } else {
            try {
                std::vector<Node*> all;
                all.reserve(size_);
                in_order(root_, [&all](const Node& n) { all.push_back(const_cast<Node*>(&n)); });
                alloc_->release(all);
            } catch (const std::bad_alloc&) {
                free_subtree(root_);
            }
        }
        root_ = nullptr;
        size_ = 0;
    }

  private:
    // Rotates x down in direction dir (dir 0: left rotation, x's right child rises).
    void rotate(Node* x, int dir) noexcept {
        Node* y = x->child[1 - dir];
        x->child[1 - dir] = y->child[dir];
        if (y->child[dir]) y->child[dir]->parent = x;
        y->parent = x->parent;
        if (!x->parent) root_ = y;
        else x->parent->child[x == x->parent->child[1]] = y;
        y->child[dir] = x;
        x->parent = y;
    }

    // Restores "no red node has a red child" and a black root after inserting red z.
    void fix_after_insert(Node* z) noexcept {
        while (z->parent && z->parent->red) {
            Node* p = z->parent;
            Node* g = p->parent;  // exists: a red node is never the root
            int side = p == g->child[1];
            Node* uncle = g->child[1 - side];
            if (uncle && uncle->red) {
                p->red = uncle->red = false;
                g->red = true;
                z = g;
                continue;
            }
            if (z == p->child[1 - side]) {  // inner grandchild: make it outer
                rotate(p, side);
                z = p;
                p = z->parent;
            }
            p->red = false;
            g->red = true;
            rotate(g, 1 - side);
        }
        root_->red = false;
    }

    // Iterative post-order free (no recursion: depth is bounded but stack frames are not needed).
    void free_subtree(Node* n) noexcept {
        while (n) {
            if (n->child[0]) {
                n = n->child[0];
            } else if (n->child[1]) {
                n = n->child[1];
            } else {
                Node* p = n->parent;
                if (p) p->child[p->child[1] == n] = nullptr;
                alloc_->deallocate(n);
                n = p;
            }
        }
    }

    Alloc* alloc_;
    Node* root_ = nullptr;
    std::size_t size_ = 0;
};

// The measured pass: sum of key + payload over every node, in key order (wrapping).
// touch(p) sees every node field loaded (child pointers, key, value), as in_order says.
template <class Touch = NoTouch>
std::uint64_t traverse_sum(const Node* root, Touch touch = {}) noexcept(std::is_same_v<Touch, NoTouch>) {
    std::uint64_t s = 0;
    in_order(root, [&s, &touch](const Node& n) {
        touch(&n.key);
        touch(&n.value);
        s += n.key + n.value;
    }, touch);
    return s;
}

// Reference: the same sum over the distinct keys, from a plain vector.
inline std::uint64_t reference_sum(std::vector<std::uint64_t> keys, std::size_t* distinct = nullptr) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::uint64_t s = 0;
    for (std::uint64_t k : keys) s += k + payload_of(k);
    if (distinct) *distinct = keys.size();
    return s;
}

// What check() found. ok is true only when every invariant holds.
struct Check {
    bool ok = true;
    std::size_t nodes = 0;
    unsigned black_height = 0;  // black nodes on every root-to-null path (nulls excluded)
    std::string error;          // the first violation, in words
};

namespace detail {
// Returns the subtree's black height (0 for null); records the first error in c.
inline unsigned check_subtree(const Node* n, const Node* parent, Check& c, unsigned depth) {
    if (!n) return 0;
    if (depth >= kMaxDepth) {
        if (c.ok) c.ok = false, c.error = "tree deeper than " + std::to_string(kMaxDepth);
        return 0;
    }
    auto fail = [&](const std::string& why) {
        if (c.ok) c.ok = false, c.error = why + " at key " + std::to_string(n->key);
    };
    if (n->parent != parent) fail("wrong parent pointer");
    if (n->red && parent && parent->red) fail("red node with a red parent");
    for (int d = 0; d < 2; ++d)
        if (n->child[d] && (d ? n->child[d]->key <= n->key : n->child[d]->key >= n->key))
            fail("child out of order");
    ++c.nodes;
    unsigned lh = check_subtree(n->child[0], n, c, depth + 1);
    unsigned rh = check_subtree(n->child[1], n, c, depth + 1);
    if (lh != rh) fail("unequal black heights " + std::to_string(lh) + " vs " + std::to_string(rh));
    return lh + !n->red;
}
}  // namespace detail

// Red-black invariants of the tree at `root` holding `size` nodes: black root, no red
// node with a red child, equal black height on every path, parent pointers consistent,
// node count equal to size, and keys strictly increasing in order (checked over the
// whole in-order sequence, not just parent/child pairs).
inline Check check(const Node* root, std::size_t size) {
    Check c;
    if (root && root->red) c.ok = false, c.error = "red root";
    c.black_height = detail::check_subtree(root, nullptr, c, 0);
    if (!c.ok) return c;
    bool first = true;
    std::uint64_t prev = 0;
    std::size_t seen = 0;
    in_order(root, [&](const Node& n) {
        if (!first && n.key <= prev && c.ok) c.ok = false, c.error = "in-order keys not increasing at " + std::to_string(n.key);
        first = false;
        prev = n.key;
        ++seen;
    });
    if (c.ok && (seen != size || c.nodes != size))
        c.ok = false, c.error = "node count " + std::to_string(seen) + " != size " + std::to_string(size);
    return c;
}

}  // namespace lab::rbtree
