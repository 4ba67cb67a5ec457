// physmem/tree_array.hpp — an array laid across pool blocks as a tree walked in software.
//
// Leaves are pool blocks holding elements; inner blocks hold pointers to the level below,
// like a page table. No part of the array needs more contiguous memory than one block.
//
//   physmem::BlockPool pool({.block_size = 64 << 10, .capacity = 1ull << 30});
//   physmem::TreeArray<int> a(1'000'000, pool);   // depth 2: 245 leaves under one root
//   a[12] = 7;                                     // a software page walk
//   for (int& x : a) ...                           // iterator: walks once per leaf
//   physmem::for_each_segment(a, [](std::span<int> s) { ... });  // plain loops per leaf
//
// Costs: operator[] is depth-1 dependent loads plus the element (the inner blocks of a
// scan stay in cache): straight-line code for depths 1 and 2 (one predictable test of the
// depth), a level loop over the depth stored in the object beyond. For a walk with the
// depth fixed at compile time, dispatch once with physmem::with_fixed_depth
// (fixed_depth.hpp). Iterators hold the element pointer and the leaf's end, and walk
// only when they cross into another leaf.
//
// Copying makes a deep copy in the same pool; moving is O(1) and leaves the source empty.
// Elements are value-initialised. Every block comes from the pool: when the pool runs
// out, std::bad_alloc is thrown and the array is left as it was before the call.
//
// Moving blocks (BlockPool::relocate/compact, block_owner.hpp): a TreeArray owns its
// blocks through a small heap-allocated anchor (created with the first block; its
// address never changes, moving or swapping the array re-points it in O(1)). The
// cookie of a block is (level, index in level): level 0 = leaves. Relocating a block is
// an O(depth) walk to its parent slot (the root is the array's own field); a leaf's
// elements are copied with memcpy when T is trivially copyable, else move-constructed
// and the originals destroyed. Leaves of a T that is neither trivially copyable nor
// nothrow-move-constructible are pinned (its inner blocks still move). Element access
// pays nothing for this: no extra load, the anchor is off the access path.
//
// During a compaction the pool's contract holds (pool.hpp): no thread may use the array.
// Afterwards element pointers, references, spans, iterators and FixedDepthViews taken
// before are stale; indexes stay valid: revalidate an iterator `it` with
// `a.begin() + it.index()`.
//
// migrate(target) moves the array to another pool (any block size or backing) with the
// strong guarantee: every block is taken from the target before an element moves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "physmem/pool.hpp"
#include "physmem/tree_iterator.hpp"
#include "physmem/tree_shape.hpp"

namespace physmem {

template <class T>
class TreeArray {
    static_assert(!std::is_reference_v<T> && !std::is_const_v<T>, "TreeArray<T>: T must be an object type");

  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using iterator = TreeIterator<TreeArray, false>;
    using const_iterator = TreeIterator<TreeArray, true>;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    // Empty, on the default pool (physmem::default_pool()).
    TreeArray() : TreeArray(0) {}
    // n value-initialised elements on `pool` (or the default pool).
    explicit TreeArray(size_type n) : TreeArray(n, default_pool()) {}
    // (Each delegates to the empty one, so a throw from its body runs the destructor,
    // which frees the anchor the first block created.)
    TreeArray(size_type n, BlockPool& pool) : TreeArray(Empty{}, pool) { resize(n); }
    TreeArray(size_type n, const T& value, BlockPool& pool) : TreeArray(Empty{}, pool) { resize(n, value); }

    ~TreeArray() {
        clear();
        delete anchor_;
    }

    TreeArray(const TreeArray& other) : TreeArray(Empty{}, *other.pool_) { copy_from(other); }
    TreeArray(TreeArray&& other) noexcept
        : pool_(other.pool_), shape_(other.shape_), root_(std::exchange(other.root_, nullptr)),
          size_(std::exchange(other.size_, 0)), leaves_(std::exchange(other.leaves_, 0)),
          depth_(std::exchange(other.depth_, 0)), anchor_(std::exchange(other.anchor_, nullptr)) {
        if (anchor_) anchor_->array = this;
    }
    TreeArray& operator=(const TreeArray& other) {
        if (this != &other) {
            TreeArray copy(other);
            swap(copy);
        }
        return *this;
    }
    TreeArray& operator=(TreeArray&& other) noexcept {
        if (this != &other) {
            TreeArray moved(std::move(other));
            swap(moved);
        }
        return *this;
    }
    void swap(TreeArray& o) noexcept {
        std::swap(pool_, o.pool_);
        std::swap(shape_, o.shape_);
        std::swap(root_, o.root_);
        std::swap(size_, o.size_);
        std::swap(leaves_, o.leaves_);
        std::swap(depth_, o.depth_);
        std::swap(anchor_, o.anchor_);
        if (anchor_) anchor_->array = this;
        if (o.anchor_) o.anchor_->array = &o;
    }
    friend void swap(TreeArray& a, TreeArray& b) noexcept { a.swap(b); }

    // --- size and shape ---------------------------------------------------------------
    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    // Levels of blocks: 0 when empty, 1 when the elements fit one leaf, then as needed.
    unsigned depth() const noexcept { return depth_; }
    size_type block_size() const noexcept { return pool_->block_size(); }
    // Elements per leaf block (a power of two).
    size_type leaf_length() const noexcept { return shape_.leaf_len(); }
    // Leaf blocks allocated (= leaves needed for size()).
    size_type leaf_count() const noexcept { return leaves_; }
    // Elements the allocated leaves hold without allocating.
    size_type capacity() const noexcept { return leaves_ << shape_.leaf_shift; }
    const TreeShape& shape() const noexcept { return shape_; }
    BlockPool& pool() const noexcept { return *pool_; }
    // Root block (a leaf when depth() == 1), for fixed-depth views. nullptr when empty.
    void* root() const noexcept { return root_; }
    // The owner its blocks are allocated with (block_owner.hpp; leaves only when T can be
    // relocated, kLeavesMove: else they are pinned, owner null), and the leaf a block with
    // that owner and `cookie` is (its index k), if a leaf: lets a watcher of the pool's tags
    // (BlockPool::TagChange) tell this array's leaves from other blocks. null when empty.
    const BlockOwner* owner() const noexcept { return anchor_; }
    static bool leaf_of_cookie(std::uintptr_t cookie, size_type& k) noexcept {
        if ((cookie & 63) != 0) return false;
        k = static_cast<size_type>(cookie >> 6);
        return true;
    }
    static constexpr bool kLeavesMove = std::is_trivially_copyable_v<T> || std::is_nothrow_move_constructible_v<T>;

    // --- element access ---------------------------------------------------------------
    // pre: i < size(). No bounds check. The walk's last load gives leaf k's entry, which
    // holds the leaf's address less k leaves' bytes (see leaf_entry): element i is at that
    // entry plus i elements, with no mask of i's offset in its leaf.
    T& operator[](size_type i) noexcept { return *element(i); }
    const T& operator[](size_type i) const noexcept { return *element(i); }
    T& at(size_type i) { return check(i), (*this)[i]; }
    const T& at(size_type i) const { return check(i), (*this)[i]; }
    T& front() noexcept { return (*this)[0]; }
    const T& front() const noexcept { return (*this)[0]; }
    T& back() noexcept { return (*this)[size_ - 1]; }
    const T& back() const noexcept { return (*this)[size_ - 1]; }

    // First element of leaf k: the software page walk, depth-1 dependent loads. Depths 1
    // and 2 (up to fan-out leaves: 512 MiB on 64 KiB blocks) are straight-line code, one
    // predictable branch on the depth; deeper trees loop over the levels.
    // pre: k < leaf_count().
    T* leaf_data(size_type k) const noexcept { return static_cast<T*>(leaf_of(k, leaf_entry(k))); }
    // Leaf k's entry in its parent block (the root itself at depth 1): the leaf's address
    // less k * leaf_length() elements' bytes (mod 2^64) — 0 less for leaf 0, so a depth-1
    // root and the first slot of every root above it hold the leaf's own address. Element
    // i of leaf k is then at the entry plus i elements: the walk of operator[] costs the
    // cheapest software walk, a load added to the index, not a load and a mask.
    // pre: k < leaf_count().
    //
    // The entry passes through an empty asm: it costs nothing, and it stops the compiler
    // from vectorizing a loop of operator[] into gathers of the table and then of the
    // elements (GCC does with AVX-512 at -O3), which ran an index loop 3.5x slower than
    // the scalar walk on a CPU with slow gathers.
    std::uintptr_t leaf_entry(size_type k) const noexcept {
        void* e;
        if (depth_ == 2) [[likely]] e = static_cast<void* const*>(root_)[k];
        else if (depth_ == 1) e = root_;
        else e = deep_leaf_entry(root_, k, depth_, shape_.fan_shift);
        asm("" : "+r"(e));
        return reinterpret_cast<std::uintptr_t>(e);
    }
    // The elements of leaf k that are in use. pre: k < leaf_count().
    std::span<T> segment(size_type k) noexcept { return {leaf_data(k), segment_length(k)}; }
    std::span<const T> segment(size_type k) const noexcept { return {leaf_data(k), segment_length(k)}; }

    // --- iteration --------------------------------------------------------------------
    iterator begin() noexcept { return iterator(this, 0); }
    iterator end() noexcept { return iterator(this, size_); }
    const_iterator begin() const noexcept { return const_iterator(this, 0); }
    const_iterator end() const noexcept { return const_iterator(this, size_); }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }
    reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
    reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    // --- modifiers --------------------------------------------------------------------
    // Grows with value-initialised (or copied) elements, or shrinks (freeing blocks).
    // Strong guarantee: on std::bad_alloc or an element constructor's exception the
    // array is unchanged.
    void resize(size_type n) { resize_with(n, [](T* p, size_type k) { std::uninitialized_value_construct_n(p, k); }); }
    void resize(size_type n, const T& value) {
        resize_with(n, [&value](T* p, size_type k) { std::uninitialized_fill_n(p, k, value); });
    }
    void clear() noexcept {
        destroy_range(0, size_);
        size_ = 0;
        trim_leaves(0);
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    template <class... Args>
    T& emplace_back(Args&&... args) {
        bool added = size_ == capacity();
        if (added) add_leaf();
        T* slot = &(*this)[size_];
        try {
            ::new (static_cast<void*>(slot)) T(std::forward<Args>(args)...);
        } catch (...) {
            if (added) trim_leaves(leaves_ - 1);
            throw;
        }
        ++size_;
        return *slot;
    }
    // pre: !empty().
    void pop_back() noexcept {
        std::destroy_at(&back());
        --size_;
        trim_leaves(shape_.leaves_for(size_));
    }

    // --- moving between pools -----------------------------------------------------------
    // Moves every element to `target` (any block size and backing; the shape follows its
    // block size) and frees the blocks held here. Elements are copied with memcpy when T
    // is trivially copyable, else moved (nothrow move) or copied. Strong guarantee: on
    // std::bad_alloc (target too small), a copy constructor's exception, or
    // std::invalid_argument (T does not fit target's blocks) the array is unchanged and
    // target holds nothing of it. Pointers, references and iterators become stale.
    void migrate(BlockPool& target) {
        if (&target == pool_) return;
        TreeArray next(0, target);
        next.resize_with(size_, [this, pos = size_type{0}](T* p, size_type k) mutable {
            export_to(pos, k, p);
            pos += k;
        });
        swap(next);
    }

  private:
    // Element i through the walk. pre: i < capacity().
    T* element(size_type i) const noexcept {
        return reinterpret_cast<T*>(leaf_entry(i >> shape_.leaf_shift) + i * sizeof(T));
    }
    // The entry of leaf k for a leaf at `leaf` (leaf_entry), and back.
    std::uintptr_t entry_of(size_type k, const void* leaf) const noexcept {
        return reinterpret_cast<std::uintptr_t>(leaf) - leaf_offset(k);
    }
    void* leaf_of(size_type k, std::uintptr_t entry) const noexcept { return reinterpret_cast<void*>(entry + leaf_offset(k)); }
    // Bytes of the k leaves before leaf k: what its entry is less than its address.
    std::uintptr_t leaf_offset(size_type k) const noexcept { return (k << shape_.leaf_shift) * sizeof(T); }

    // leaf_entry's loop over the levels of a tree deeper than 2, out of line: kept out of
    // the loops that call operator[], whose registers it would take (the shift count).
    // Given the values, not the array: a call that sees `this` could write it, so a loop
    // calling it (on its depth > 2 path) reloaded the root from the array every element.
    [[gnu::noinline]] static void* deep_leaf_entry(void* root, size_type k, unsigned depth, unsigned fan_shift) noexcept {
        const size_type mask = (size_type{1} << fan_shift) - 1;
        void* node = root;
        for (unsigned level = depth - 1; level > 0; --level)
            node = static_cast<void**>(node)[(k >> (fan_shift * (level - 1))) & mask];
        return node;
    }


    // The owner registered with every block (block_owner.hpp): stable address, points
    // back at whichever TreeArray holds the blocks now.
    struct Anchor final : BlockOwner {
        explicit Anchor(TreeArray* a) noexcept : array(a) {}
        bool relocate(std::uintptr_t cookie, void* from, void* to) noexcept override {
            return array->relocate_block(cookie, from, to);
        }
        TreeArray* array;
    };
    static std::uintptr_t cookie(unsigned level, size_type index) noexcept {
        return static_cast<std::uintptr_t>(index) << 6 | level;
    }

    // The owner side of a move: copy or move the block's contents, then re-point the
    // one slot that referenced it. false when (level, index) does not lead to `from`.
    bool relocate_block(std::uintptr_t c, void* from, void* to) noexcept {
        unsigned level = static_cast<unsigned>(c & 63);
        size_type j = c >> 6;
        if (level >= depth_ || j > ((leaves_ - 1) >> (shape_.fan_shift * level))) return false;
        void** slot = level + 1 == depth_ ? &root_ : parent_slot(level, j);
        const bool leaf = level == 0;  // a leaf's slot holds its entry (leaf_entry), j its number
        if (*slot != (leaf ? reinterpret_cast<void*>(entry_of(j, from)) : from)) return false;
        if (leaf) move_leaf(j, static_cast<T*>(from), static_cast<T*>(to));
        else std::memcpy(to, from, block_size());
        *slot = leaf ? reinterpret_cast<void*>(entry_of(j, to)) : to;
        return true;
    }
    // The slot, in a block of level+1, that points at block j of `level`. pre: level+1 < depth_.
    void** parent_slot(unsigned level, size_type j) const noexcept {
        void** node = static_cast<void**>(root_);
        for (unsigned l = depth_ - 1; l > level + 1; --l)
            node = static_cast<void**>(node[(j >> (shape_.fan_shift * (l - 1 - level))) & shape_.fan_mask()]);
        return &node[j & shape_.fan_mask()];
    }
    void move_leaf(size_type k, T* from, T* to) noexcept {
        size_type n = segment_length(k);
        if constexpr (std::is_trivially_copyable_v<T>) {
            std::memcpy(static_cast<void*>(to), static_cast<const void*>(from), n * sizeof(T));
        } else {
            std::uninitialized_move_n(from, n, to);
            std::destroy_n(from, n);
        }
    }
    // Constructs elements [pos, pos+k) of this array at dst (memcpy, nothrow move, or copy);
    // all or nothing.
    void export_to(size_type pos, size_type k, T* dst) {
        T* start = dst;
        try {
            for_runs(pos, pos + k, [&dst](T* p, size_type m) {
                if constexpr (std::is_trivially_copyable_v<T>)
                    std::memcpy(static_cast<void*>(dst), static_cast<const void*>(p), m * sizeof(T));
                else if constexpr (std::is_nothrow_move_constructible_v<T>)
                    std::uninitialized_move_n(p, m, dst);
                else
                    std::uninitialized_copy_n(p, m, dst);
                dst += m;
            });
        } catch (...) {
            std::destroy(start, dst);
            throw;
        }
    }

    static TreeShape make_shape(const BlockPool& pool) {
        if (alignof(T) > pool.block_size()) throw std::invalid_argument("physmem::TreeArray: alignment exceeds block size");
        return TreeShape::make(pool.block_size(), sizeof(T));
    }
    void check(size_type i) const {
        if (i >= size_) throw std::out_of_range("physmem::TreeArray::at: index " + std::to_string(i) +
                                                " >= size " + std::to_string(size_));
    }
    size_type segment_length(size_type k) const noexcept {
        return std::min(shape_.leaf_len(), size_ - (k << shape_.leaf_shift));
    }

    // Calls f(T* first, count) for each leaf-contained run of [lo, hi).
    template <class F>
    void for_runs(size_type lo, size_type hi, F&& f) {
        while (lo < hi) {
            size_type end = std::min(hi, ((lo >> shape_.leaf_shift) + 1) << shape_.leaf_shift);
            f(&(*this)[lo], end - lo);
            lo = end;
        }
    }
    void destroy_range(size_type lo, size_type hi) noexcept {
        if constexpr (!std::is_trivially_destructible_v<T>)
            for_runs(lo, hi, [](T* p, size_type k) { std::destroy_n(p, k); });
    }

    template <class Construct>
    void resize_with(size_type n, Construct&& construct) {
        if (n <= size_) {
            destroy_range(n, size_);
            size_ = n;
            trim_leaves(shape_.leaves_for(n));
            return;
        }
        size_type old_leaves = leaves_, done = size_;
        try {
            while (leaves_ < shape_.leaves_for(n)) add_leaf();
            for_runs(size_, n, [&](T* p, size_type k) { construct(p, k); done += k; });
        } catch (...) {
            destroy_range(size_, done);
            trim_leaves(old_leaves);
            throw;
        }
        size_ = n;
    }

    // Copy-constructs other's elements; both trees have the same shape, so every run
    // of this tree is one run of the other too.
    void copy_from(const TreeArray& other) {
        resize_with(other.size_, [&other, pos = size_type{0}](T* p, size_type k) mutable {
            std::uninitialized_copy_n(&other[pos], k, p);
            pos += k;
        });
    }

    // Appends leaf number leaves_, with any inner blocks it needs and, when the tree is
    // full, a new root above the old one. All blocks are taken before anything is
    // linked, so a bad_alloc leaves the tree unchanged.
    void add_leaf() {
        if (!anchor_) anchor_ = new Anchor(this);
        size_type k = leaves_;
        unsigned depth = depth_ + (k == shape_.leaf_capacity(depth_));
        std::uintptr_t cookies[80];  // in the order link_leaf links the blocks
        unsigned fresh = 0;
        if (depth > depth_) cookies[fresh++] = cookie(depth - 1, 0);  // first block or new root
        for (unsigned level = depth - 1; level > 0; --level) {
            unsigned span = shape_.fan_shift * (level - 1);
            if ((k & ((std::size_t{1} << span) - 1)) == 0) cookies[fresh++] = cookie(level - 1, k >> span);
        }
        void* blocks[80];
        unsigned got = 0;
        try {
            for (; got < fresh; ++got) {
                bool leaf = (cookies[got] & 63) == 0;
                blocks[got] = pool_->allocate(leaf && !kLeavesMove ? nullptr : anchor_, cookies[got]);
            }
        } catch (...) {
            while (got) pool_->deallocate(blocks[--got]);
            throw;
        }
        link_leaf(k, depth, blocks);
    }

    void link_leaf(size_type k, unsigned depth, void** blocks) noexcept {
        unsigned used = 0;
        if (depth_ == 0) {
            root_ = blocks[used++];
        } else if (depth > depth_) {
            void** r = static_cast<void**>(blocks[used++]);
            r[0] = root_;
            root_ = r;
        }
        depth_ = depth;
        void** node = static_cast<void**>(root_);
        for (unsigned level = depth_ - 1; level > 1; --level) {
            unsigned span = shape_.fan_shift * (level - 1);
            void*& slot = node[(k >> span) & shape_.fan_mask()];
            if ((k & ((std::size_t{1} << span) - 1)) == 0) slot = blocks[used++];
            node = static_cast<void**>(slot);
        }
        if (depth_ > 1) node[k & shape_.fan_mask()] = reinterpret_cast<void*>(entry_of(k, blocks[used]));
        ++leaves_;
    }

    // Frees leaves [target, leaves_) and the inner blocks left empty, then lowers the
    // root while the tree is deeper than the remaining leaves need.
    void trim_leaves(size_type target) noexcept {
        while (leaves_ > target) drop_last_leaf();
        while (depth_ > 1 && leaves_ <= shape_.leaf_capacity(depth_ - 1)) {
            void* old = root_;
            root_ = static_cast<void**>(old)[0];
            pool_->deallocate(old);
            --depth_;
        }
    }

    void drop_last_leaf() noexcept {
        size_type k = --leaves_;
        void* path[80];  // path[level]: block at that level on the way to leaf k
        path[depth_ - 1] = root_;
        for (unsigned level = depth_ - 1; level > 0; --level)
            path[level - 1] = static_cast<void**>(path[level])[(k >> (shape_.fan_shift * (level - 1))) & shape_.fan_mask()];
        path[0] = leaf_of(k, reinterpret_cast<std::uintptr_t>(path[0]));  // a leaf's slot holds its entry (leaf_entry)
        for (unsigned level = 0; level + 1 < depth_; ++level)
            if ((k & ((std::size_t{1} << (shape_.fan_shift * level)) - 1)) == 0) pool_->deallocate(path[level]);
        if (k == 0) {
            pool_->deallocate(root_);
            root_ = nullptr;
            depth_ = 0;
        }
    }

    BlockPool* pool_;
    TreeShape shape_;
    void* root_ = nullptr;
    detail::Unaliased<size_type> size_ = 0;  // (tree_shape.hpp: a loop to i < size() keeps it in a register)
    size_type leaves_ = 0;
    detail::Unaliased<unsigned> depth_ = 0;  // (tree_shape.hpp: kept in registers across element stores)
    Anchor* anchor_ = nullptr;  // owner of the blocks; off the element-access path

    struct Empty {};
    TreeArray(Empty, BlockPool& pool) : pool_(&pool), shape_(make_shape(pool)) {}
};

}  // namespace physmem
