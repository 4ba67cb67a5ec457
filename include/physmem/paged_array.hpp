// physmem/paged_array.hpp — a tree array larger than memory: leaves live in a file and,
// up to a budget, in pool blocks; the software walk that meets a leaf not in memory
// loads it (seed 001, Table 1, "swapping under application control").
//
//   physmem::BlockPool pool({.block_size = 64 << 10, .capacity = 256 << 20});
//   physmem::PagedArray<std::uint64_t> a(1 << 30, pool, {.budget = 128 << 20});  // 8 GiB of data
//   a[12] = 7;                      // a walk; a software fault if leaf 0 is out
//   std::uint64_t v = a.get(12);    // by value (safe beside other readers)
//   a.prefetch(indices);            // start reading these elements' leaves (a batch)
//   physmem::for_each_segment(std::as_const(a), [](std::span<const std::uint64_t> s) { ... });
//
// Elements: T trivially copyable (leaves are written and read as bytes), value-initialised.
// The size is fixed at construction. The file (PagingOptions: a path created new, or an
// unnamed temporary file) is removed when the array goes. Policy, I/O and errors:
// pager.hpp. A leaf that was never written is never read: its first touch makes it in memory.
//
// Validity: a reference or pointer returned by operator[] is valid until the next
// access to another leaf (which may evict this one), flush(), or prefetch(); copy the
// value (get) when two leaves are in play: `a.set(i, a.get(j))`, not `a[i] = a[j]`.
// Iterators revalidate themselves (they cache a leaf and check an eviction counter), and
// what they hand out stays valid: a const_iterator's reference is a T by value, an
// iterator's a proxy (PagedRef) that finds its element again after an eviction — so
// every standard algorithm is correct at every budget (paged_iterator.hpp: the contract,
// and what a proxy does not do). for_each_segment pins each leaf while the callback runs.
//
// Dirty tracking: the non-const operator[], set(), non-const iterators and the non-const
// segment algorithms mark the leaf dirty; const access does not, so a clean leaf is
// dropped without a write when evicted. Use std::as_const(a) for reads.
//
// Threads: any number of threads may call get(), prefetch(), stats() and the const
// for_each_segment / for_each_strided on one array at the same time (they lock; each
// leaf is pinned while a callback reads it). Everything else (operator[], at, set,
// iterators, the non-const algorithms, flush, set_budget) needs the array to itself.
//
// Memory over the program's life: set_budget() shrinks (or grows) the leaves held in
// memory at run time. With PagingOptions::movable the array's blocks (frames and table)
// are movable, so BlockPool::compact() packs them with a pool's other movable blocks and
// gives the emptied pages back — under the pool's contract: no thread uses the array
// while it runs; iterators and their references revalidate afterwards, operator[]'s do
// not. By default they
// are pinned, and readers may go on beside a compaction of the pool's other structures.
//
// Cost when nothing pages: operator[] is TreeArray's walk — one load from the array's own
// copy of the root when the table has one level (up to a block's worth of leaves; a deeper
// table's accesses all take the pager's walk, out of line), added to the index — plus one
// test of the entry's tag bits (pager.hpp: the software accessed/dirty bits), which
// TreeArray, which does not page, does not pay. An iterator is a cursor into its leaf
// (paged_iterator.hpp). A leaf's elements (leaf_length() of them) must take a multiple of
// 4 bytes (std::invalid_argument otherwise: the entry's low bits hold the tags), as any
// element of up to a quarter of a leaf does.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/paged_iterator.hpp"
#include "physmem/pager.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_shape.hpp"

namespace physmem {

#ifdef PHYSMEM_TEST_HOOKS
// Tests only: a function get() calls once, between reading a leaf's entry and copying the
// element, where another thread's eviction could land (tests/test_paged_array.cpp).
namespace detail {
inline void (*paged_read_hook)() = nullptr;
}
#define PHYSMEM_PAGED_READ_HOOK() \
    if (auto hook = std::exchange(::physmem::detail::paged_read_hook, nullptr)) hook()
#else
#define PHYSMEM_PAGED_READ_HOOK() (void)0
#endif

template <class T>
class PagedArray {
    static_assert(std::is_trivially_copyable_v<T>, "PagedArray<T>: T must be trivially copyable (leaves go to a file)");

  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using iterator = PagedIterator<PagedArray, false>;
    using const_iterator = PagedIterator<PagedArray, true>;

    // n value-initialised elements on `pool` (blocks: the leaves' frames and the table).
    // Leaves of o.leaf_bytes (default: one block; pager.hpp). Throws PagingError when the
    // file cannot be created, std::invalid_argument when T does not fit a leaf, a leaf's
    // elements take bytes not a multiple of 4 or leaf_bytes is not allowed, std::bad_alloc
    // when the pool cannot hold the table and one frame.
    PagedArray(size_type n, BlockPool& pool, const PagingOptions& o = {})
        : shape_(TreeShape::make(detail::Pager::leaf_bytes_for(pool, o), sizeof(T))), size_(n),
          pager_(std::make_unique<detail::Pager>(pool, shape_.leaves_for(n), shape_.leaf_len() * sizeof(T), &init_leaf,
                                                 o)) {
        if (alignof(T) > pager_->leaf_bytes())
            throw std::invalid_argument("physmem::PagedArray: alignment exceeds leaf size");
        attach_root();
    }
    // Moving leaves the source empty: size() 0, no leaves, begin() == end(); beyond those,
    // only assigning to it and destroying it are allowed.
    PagedArray(PagedArray&& o) noexcept
        : shape_(o.shape_), size_(std::exchange(o.size_, 0)), pager_(std::move(o.pager_)) {
        if (pager_) attach_root();
        o.root_ = o.reads_ = nullptr;
    }
    PagedArray& operator=(PagedArray&& o) noexcept {
        if (this == &o) return *this;
        shape_ = o.shape_, size_ = std::exchange(o.size_, 0), pager_ = std::move(o.pager_), root_ = reads_ = nullptr;
        o.root_ = o.reads_ = nullptr;
        if (pager_) attach_root();
        return *this;
    }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    size_type leaf_length() const noexcept { return shape_.leaf_len(); }
    size_type leaf_count() const noexcept { return pager_ ? pager_->leaves() : 0; }
    const TreeShape& shape() const noexcept { return shape_; }
    const std::string& file() const noexcept { return pager_->file(); }
    PagingStats stats() const { return pager_->stats(); }

    // --- element access (pre: i < size(); no bounds check) ------------------------------
    const T& operator[](size_type i) const { return *at_entry(walk(i, false), i); }
    T& operator[](size_type i) { return *at_entry(walk(i, true), i); }
    const T& at(size_type i) const { return check(i), (*this)[i]; }
    T& at(size_type i) { return check(i), (*this)[i]; }
    // By value: safe beside other readers. A hit on a leaf whose reference bit is set takes
    // no lock (a seqlock read over the pager's epoch: pager.hpp, Threads), so readers of
    // what is in memory scale with threads; a miss, a leaf CLOCK has just passed, or an
    // eviction meanwhile takes the lock.
    T get(size_type i) const {
        using P = detail::Pager;
        const size_type k = i >> shape_.leaf_shift;
        const std::uint64_t before = pager_->epoch_acquire();
        const std::uintptr_t e = pager_->raw_relaxed(k);
        if (!(e & P::kCold)) [[likely]] {
            PHYSMEM_PAGED_READ_HOOK();
            T v = racy_copy(at_entry(e & ~P::kTags, i));
            std::atomic_thread_fence(std::memory_order_acquire);
            if (pager_->epoch_relaxed() == before) [[likely]] return v;
        }
        return get_locked(i);
    }
    void set(size_type i, const T& v) { (*this)[i] = v; }

    // First element of leaf k, present (loaded if needed) and marked accessed (and dirty
    // when `write`). Valid as operator[]'s references are. pre: k < leaf_count().
    T* leaf(size_type k, bool write) const {
        const size_type i = k << shape_.leaf_shift;
        return at_entry(walk(i, write), i);
    }
    // Leaf k's first element when it is present and its tags need no slow path for this
    // access (leaf() would be the walk alone), else nullptr; nothing is loaded or marked.
    // pre: k < leaf_count().
    T* leaf_if_ready(size_type k, bool write) const noexcept {
        using P = detail::Pager;
        std::uintptr_t e = entry(k);
        return e & (write ? P::kTags : P::kCold) ? nullptr : at_entry(e & ~P::kTags, k << shape_.leaf_shift);
    }
    // Element i when its leaf is present and its tags need no slow path for this access
    // (operator[] would be the walk alone), else nullptr; nothing is loaded or marked, and
    // nothing is called (a deeper table is walked inline). pre: i < size().
    // A read walks the read table (reads_, as walk() does): a ready entry there has no tag
    // set, so the element is the entry plus i elements, with no mask on the load's path.
    T* element_if_ready(size_type i, bool write) const noexcept {
        using P = detail::Pager;
        const std::uintptr_t need = write ? P::kTags : P::kCold;
        // The table in a variable of its own: g++ 12.2 computes the index of
        // `(write ? root_ : reads_)[i >> root_shift_]` in the first arm only (the call to
        // root_shift_'s conversion), and the other arm reads slot 0 — the wrong leaf.
        void* const* table = write ? root_ : reads_;
        std::uintptr_t e = reinterpret_cast<std::uintptr_t>(table[i >> root_shift_]);
        if (e & need) [[unlikely]] {  // not ready, or a deeper table: the pager's walk, inline
            e = entry(i >> shape_.leaf_shift);
            if (e & need) return nullptr;
            e &= ~P::kTags;  // a read's entry in the table may hold kClean
        }
        T* p = at_entry(e, i);
        if (!p) __builtin_unreachable();  // an element's address: the caller tests only the tags
        return p;
    }
    // Elements of leaf k in use.
    size_type segment_length(size_type k) const noexcept {
        return std::min(shape_.leaf_len(), size_ - (k << shape_.leaf_shift));
    }

    // --- paging -------------------------------------------------------------------------
    // A hint that these elements come next: an element whose leaf is in memory gets a CPU
    // prefetch of its cache line; the leaves that are not start reading, asynchronously
    // and as one batch (at most half the budget per call), and those in memory count as
    // referenced (the CLOCK passes over them once). Errors are left for the access that
    // needs the leaf. Takes the lock only when a leaf is missing or not referenced (its
    // entry cold: the hand cleared its bit).
    void prefetch(std::span<const size_type> indices) const {
        bool missing = false;
        for (size_type i : indices) {
            const std::size_t k = i >> shape_.leaf_shift;
            const std::uintptr_t e = pager_->raw_relaxed(k);  // as peek() reads it
            if (const void* p = pager_->frame_of(k, e))
                __builtin_prefetch(static_cast<const T*>(p) + (i & shape_.leaf_mask()), 1);
            missing |= (e & detail::Pager::kCold) != 0;  // absent or cold
        }
        if (!missing) return;
        thread_local std::vector<size_type> leaves;  // reused: no allocation per batch
        leaves.clear();
        for (size_type i : indices) leaves.push_back(i >> shape_.leaf_shift);  // the present ones stay for the batch
        pager_->prefetch(leaves);
    }
    void prefetch_leaves(std::span<const size_type> leaves) const { pager_->prefetch(leaves); }
    // Look-ahead for a batch about to be updated (HPCC's 128 slots): when the leaves of
    // all these elements are in memory, marks them accessed (and dirty: the batch will
    // write), prefetches the elements' cache lines, stores their addresses in
    // slots[0..indices.size()) and returns true — one walk per element, as an in-memory
    // look-ahead kernel makes. The addresses stay valid until the next call on this array
    // that may load a leaf (any access but through them). Otherwise it is prefetch() and
    // returns false: access the batch with operator[].
    bool prefetch_slots(std::span<const size_type> indices, T** slots) {
        using P = detail::Pager;
        for (size_type j = 0; j < indices.size(); ++j) {
            size_type i = indices[j], k = i >> shape_.leaf_shift;
            std::uintptr_t e = entry(k);
            if (e & P::kTags) [[unlikely]] {
                if (e == P::kAbsent) {  // not in memory: load the batch instead
                    prefetch(indices);
                    return false;
                }
                e = pager_->entry_of(k, pager_->access(k, true));  // present: sets its bits
            }
            T* p = at_entry(e & ~P::kTags, i);
            __builtin_prefetch(p, 1);
            slots[j] = p;
        }
        return true;
    }
    // Writes every dirty leaf (they stay in memory). Throws PagingError on an I/O error.
    void flush() { pager_->flush(); }
    // The residency budget, changeable at run time (pager.hpp: set_budget): shrinking
    // evicts and returns frames to the pool, which then gives their pages back.
    void set_budget(std::size_t bytes) { pager_->set_budget(bytes); }
    std::size_t budget() const noexcept { return pager_->budget(); }
    detail::Pager& pager() const noexcept { return *pager_; }

    // --- iteration ----------------------------------------------------------------------
    iterator begin() noexcept { return iterator(this, 0); }
    iterator end() noexcept { return iterator(this, size_); }
    const_iterator begin() const noexcept { return const_iterator(this, 0); }
    const_iterator end() const noexcept { return const_iterator(this, size_); }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }

  private:
    // get()'s slow path: under the lock, the leaf loaded if needed and marked accessed.
    [[gnu::noinline]] T get_locked(size_type i) const {
        std::lock_guard lock(pager_->mutex());  // held while copying: another reader may evict
        size_type k = i >> shape_.leaf_shift;
        void* p = pager_->lookup(k);
        if (!p) p = pager_->fault_locked(k);
        pager_->touch(k, false);
        return static_cast<const T*>(p)[i & shape_.leaf_mask()];
    }
    // A copy of *p that another thread's eviction may be overwriting: one relaxed atomic
    // load for a word-sized T (no torn value, no data race), else bytes (the caller's
    // epoch check throws a torn copy away, as a seqlock reader does).
    static T racy_copy(const T* p) noexcept {
        if constexpr (sizeof(T) == 8 && alignof(T) >= 8) {
            return std::bit_cast<T>(__atomic_load_n(reinterpret_cast<const std::uint64_t*>(p), __ATOMIC_RELAXED));
        } else if constexpr (sizeof(T) == 4 && alignof(T) >= 4) {
            return std::bit_cast<T>(__atomic_load_n(reinterpret_cast<const std::uint32_t*>(p), __ATOMIC_RELAXED));
        } else {
            struct Bytes {
                unsigned char b[sizeof(T)];
            } raw;
            std::memcpy(raw.b, p, sizeof(T));
            return std::bit_cast<T>(raw);
        }
    }
    // The entry of element i's leaf with its tags cleared (pager.hpp: the frame less k
    // leaves of elements, so element i is at_entry(entry, i)), the leaf present (loaded if
    // needed) and marked accessed (and dirty when `write`). The fast path is one load and
    // a tag that needs nothing, the entry then used as it is: a write loads from root_
    // (attach_root) and finds kCold and kClean clear; a read loads from the pager's read
    // table (reads_: the entries without kClean) and finds kCold clear. (With one table a
    // read cleared kClean first: `a[i]` loops 1.12x, without the mask 1.05x the tree's.)
    // No test of the table's depth: a deeper table's roots are a one-entry table of
    // kAbsent, so every access takes walk_slow.
    std::uintptr_t walk(size_type i, bool write) const {
        using P = detail::Pager;
        if (write) {
            const std::uintptr_t e = reinterpret_cast<std::uintptr_t>(root_[i >> root_shift_]);
            if (!(e & P::kTags)) [[likely]] return e;
        } else {
            const std::uintptr_t e = reinterpret_cast<std::uintptr_t>(reads_[i >> root_shift_]);
            if (!(e & P::kCold)) [[likely]] return e;
        }
        return walk_slow(i >> shape_.leaf_shift, write);
    }
    // walk()'s other paths, out of line (kept out of the loops that call operator[]): the
    // pager's walk when the table has more than one level, the slow path when the tags ask.
    [[gnu::noinline]] std::uintptr_t walk_slow(size_type k, bool write) const {
        using P = detail::Pager;
        std::uintptr_t e = entry(k);
        if (e & (write ? P::kTags : P::kCold)) return pager_->entry_of(k, pager_->access(k, write));
        return e & ~P::kTags;
    }
    // Element i from an entry with its tags cleared: the entry plus i elements.
    static T* at_entry(std::uintptr_t entry, size_type i) noexcept {
        return reinterpret_cast<T*>(entry + i * sizeof(T));
    }
    // Leaf k's table entry (pager.hpp: the frame less k strides, and its tags), from the
    // array's copy of a
    // one-level table's root, else by the pager's walk. No lock.
    std::uintptr_t entry(size_type k) const noexcept {
        return root_shift_ == shape_.leaf_shift ? reinterpret_cast<std::uintptr_t>(root_[k]) : pager_->raw(k);
    }
    // root_ and root_shift_ for the pager's table: a one-level table's root (kept current by
    // the pager when it moves) and the leaf shift, else no_root_ and 63 (i >> 63 is 0).
    void attach_root() noexcept {
        if (pager_->fixed_root()) {
            root_shift_ = shape_.leaf_shift;
            reads_ = pager_->read_root();
            pager_->keep_root_at(&root_);
        } else {
            root_shift_ = 63;
            root_ = reads_ = no_root_;
            pager_->keep_root_at(nullptr);
        }
    }
    static void init_leaf(void* p, std::size_t bytes) {
        std::uninitialized_value_construct_n(static_cast<T*>(p), bytes / sizeof(T));
    }
    void check(size_type i) const {
        if (i >= size_)
            throw std::out_of_range("physmem::PagedArray::at: index " + std::to_string(i) + " >= size " +
                                    std::to_string(size_));
    }

    TreeShape shape_;
    detail::Unaliased<size_type> size_;  // (tree_shape.hpp)
    std::unique_ptr<detail::Pager> pager_;
    // The pager's fixed_root(), kept current by it (keep_root_at; a one-level table: up
    // to a block's worth of leaves), else no_root_: walk() is then one load from the
    // array's root, not three, and the depth is never tested (attach_root). nullptr once
    // moved from.
    void* const* root_ = nullptr;
    void* const* reads_ = nullptr;  // the pager's read_root() (it never moves), else no_root_
    detail::Unaliased<unsigned> root_shift_ = 0;  // (tree_shape.hpp: not aliased by element stores)
    inline static void* const no_root_[1] = {reinterpret_cast<void*>(detail::Pager::kAbsent)};
};

// --- segment algorithms: each leaf loaded (read ahead along the pattern) and pinned
// while f runs on it --------------------------------------------------------------------

namespace detail {
// f(span of leaf k's elements [lo, hi)), pinned; const arrays read, others mark dirty.
template <class A, class F>
void with_leaf(A& a, std::size_t k, std::size_t lo, std::size_t hi, F&& f) {
    using T = typename std::remove_const_t<A>::value_type;
    constexpr bool write = !std::is_const_v<A>;
    Pager& p = a.pager();
    T* base = static_cast<T*>(p.pin(k, write));
    struct Unpin {
        Pager& p;
        std::size_t k;
        ~Unpin() { p.unpin(k); }
    } unpin{p, k};
    using Span = std::conditional_t<write, std::span<T>, std::span<const T>>;
    f(Span(base + lo, hi - lo));
}
}  // namespace detail

// f(std::span<T>) (or std::span<const T> for a const array) once per leaf, in order.
template <class T, class F>
void for_each_segment(PagedArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) detail::with_leaf(a, k, 0, a.segment_length(k), f);
}
template <class T, class F>
void for_each_segment(const PagedArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) detail::with_leaf(a, k, 0, a.segment_length(k), f);
}
// The parts of [first, last) in each leaf. pre: first <= last <= a.size().
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, PagedArray<typename A::value_type>>
void for_each_segment(A& a, std::size_t first, std::size_t last, F&& f) {
    const TreeShape& s = a.shape();
    while (first < last) {
        std::size_t k = first >> s.leaf_shift, base = k << s.leaf_shift;
        std::size_t end = std::min(last, base + s.leaf_len());
        detail::with_leaf(a, k, first - base, end - base, f);
        first = end;
    }
}
// f(element) for a[first], a[first + stride], ... below a.size(): one pinned leaf at a
// time; leaves the stride skips are not loaded. pre: stride > 0.
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, PagedArray<typename A::value_type>>
void for_each_strided(A& a, std::size_t first, std::size_t stride, F&& f) {
    const TreeShape& s = a.shape();
    std::size_t n = a.size(), i = first;
    while (i < n) {
        std::size_t k = i >> s.leaf_shift, base = k << s.leaf_shift;
        std::size_t end = std::min(n, base + s.leaf_len());
        detail::with_leaf(a, k, 0, end - base, [&](auto span) {
            for (; i < end; i += stride) {
                f(span[i - base]);
                if (n - i <= stride) {  // the last one (i + stride may wrap past SIZE_MAX)
                    i = n;
                    return;
                }
            }
        });
    }
}

}  // namespace physmem
