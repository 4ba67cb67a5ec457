// physmem/checked_tree_array.hpp — TreeArray in checked mode (issue 24, item 3): bounds and
// the leaf's block tag (generation, domain; PoolOptions::tags) checked on every access.
//
//   physmem::BlockPool pool({.block_size = 64 << 10, .tags = true});
//   physmem::CheckedTreeArray<int> a(1000, pool, physmem::Policy::fatal, "weights");
//   a[999] = 1;                      // checked: index < size, leaf's tag
//   a[1000] = 1;                     // "physmem: fatal: checked array weights ...: out of bounds"
//   auto it = a.begin(); pool.compact(); *it;  // stale iterator (its leaf moved): caught
//
// Why a separate type: TreeArray<T> is untouched, so unchecked code is today's code to the
// instruction (no branch, no field added). This type holds a TreeArray<T> and a table with,
// per leaf, its tag word, the word last seen and its entry (the fast path's walk); it has
// TreeArray's interface (size, operator[], at, iterators, segment, resize, push_back,
// migrate...), plus unchecked() for the raw array (no checks through it).
//
// What is checked, and when:
//   operator[], at, front, back: the index against size(), then the leaf's tag: while the
//     pool's tag epoch (BlockPool::tag_epoch: up on every free, move and set_domain) is
//     the one at which every leaf was seen unchanged and in the array's domain, that is
//     the epoch and the thread's domains (no per-leaf load); after a change, the leaf's
//     own entry (its tag word against the word seen, and a domain the thread holds), and
//     after leaf_count() such checks one look at every leaf re-arms the epoch (so a pool
//     whose tags change all the time costs at most twice the per-leaf checks). A leaf
//     moved by relocate()/compact() or a set_domain() is looked up again (once, out of
//     line) from the tree, which is always current: the array's own accesses never fail
//     because its blocks moved; a leaf freed behind its back (not live any more) fails.
//     In domain 0 (everyone's: every thread holds it) the armed state is also one bound:
//     size() while armed, else 0, so an index below it needs no other check. Under the
//     fatal policy (for an element type whose leaves the tree owns, TreeArray<T>::
//     kLeavesMove) the bound is a field of the array that a loop keeps in a register — one
//     compare an access, no load — and the pool tells the array of every change to one of
//     its own leaves (BlockPool::TagChange): a moved leaf gets its new entry, a leaf freed
//     behind the array's back a poisoned entry through which the next access faults (a
//     non-canonical address), reported as "use after free" (element(): what a loop on
//     another thread sees, and when). Under throw_error (and for pinned leaves) the bound
//     is the limit, a word the pool stores 0 in on every tag change (BlockPool::watch_tags)
//     and every access reads: one load and one compare.
//   for_each_segment / for_each_strided / segment(k), and physmem:: algorithms on the
//     iterators (segmented_iterator.hpp): the leaf's tag once per leaf, then a plain loop.
//   iterators: the leaf's tag (generation and domain) when entering a leaf; every
//     dereference compares the leaf's tag word with the word seen then (one load and one
//     compare), so an iterator into a leaf freed or moved since — the array destroyed,
//     compact(), relocate(), migrate(), a shrinking resize — is caught at its next use;
//     dereferencing end() or any position outside [0, size()) is caught. An iterator does
//     not touch its array until it leaves its leaf, and checks that leaf before it does.
// Not caught: a raw pointer, reference or span kept past a check (the checked
// accesses hand out T&: software cannot stop a kept reference), an end() iterator of a
// destroyed array moved backwards (it holds no leaf to check), a DomainScope ending while
// an iterator stays inside one leaf (domains are checked on entering a leaf), and a leaf
// freed behind the array's back and handed out again before the array's next access, under
// throw_error, when that access is on another thread (the freeing thread marks the leaf
// lost; any later check of it reports it).
//
// A violation goes through the array's Policy (capability.hpp): fatal (the default:
// "physmem: fatal: checked array <name> (0x...): <violation>: <access> at index i (size
// n), leaf k, block 0x... (generation seen g, now g'; domain d; thread holds m)", then
// abort) or a thrown ProtectionError. The pool must keep tags (std::invalid_argument
// otherwise). Metadata: 24 bytes a leaf (beside the pool's 8 a block). Thread safety as
// TreeArray (const access from many threads; the table's refreshes are atomic). Cost
// (measured by examples/bench_checked.cpp, checked vs unchecked on the same blocks): per-leaf
// paths a check per leaf, iterator loops one load and one compare an element, operator[]
// in domain 0 one compare with a register (fatal) or with the limit in memory
// (throw_error), then a walk through the array's own table of leaf entries — its address,
// then the entry: a depth-2 tree's walk at any depth, with no test of the depth (in another
// domain, or while unarmed, a handful). What it cannot remove: the compare at every access,
// and a call to the out-of-line check in the loop, whose registers the compiler must keep
// around it (a loop of many live values spills some: a red-black tree's lookups reload a few
// per lookup); with Clang the check is also an ordinary call, so the loop reloads the
// array's fields every access (element(); the protect suite measures what either costs on
// the machine it runs on).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/capability.hpp"
#include "physmem/checked_access.hpp"
#include "physmem/domain.hpp"
#include "physmem/segmented_iterator.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace physmem {

namespace detail {

// LeafTag::seen of a leaf freed behind its array's back (a tag word never reaches it): the
// leaf's checks report it from then on, even once its block is live again for another owner.
constexpr std::uint64_t kLostSeen = ~std::uint64_t{0};

// One leaf of a checked array: its tag word and the word seen at the last check.
struct LeafTag {
    const std::atomic<std::uint64_t>* word = nullptr;
    std::uint64_t seen = 0;
};

// The out-of-line part of a leaf check: leaf (the tree's current pointer for leaf k) is
// looked up in the pool's tags; a live block starting there, in a domain the thread holds,
// updates `t` (atomically) and returns; anything else is reported.
[[gnu::cold]] void refresh_leaf(const BlockPool& pool, const void* leaf, LeafTag& t, CheckedAccess a);

// Quietly: when `leaf` is a live block starting there, points t at its tag word, sets
// t.seen and w to the word now, and returns true (the leaf moved); false otherwise.
bool try_refresh(const BlockPool& pool, const void* leaf, LeafTag& t, std::uint64_t& w);

// A poisoned entry: leaf k's entry once its block was freed behind the array's back, so
// that element i of that leaf (the entry plus i elements) is the address 2^63 plus i's
// offset in the leaf — non-canonical on x86-64 (either paging depth), in no user mapping
// elsewhere: any access through it faults. No live leaf has this entry (it would start at 2^63).
constexpr std::uintptr_t kPoisonBase = std::uintptr_t{1} << 63;
constexpr std::uintptr_t poisoned_entry(std::size_t k, std::size_t leaf_bytes) noexcept {
    return kPoisonBase - static_cast<std::uintptr_t>(k) * leaf_bytes;
}
// Records that `array` (named `name`) poisoned leaf k's entry (its block freed behind its
// back) and makes sure a fault through a poisoned entry is reported (os::on_other_fault):
// "physmem: fatal: checked array <name> ...: use after free", then SIGABRT. Called under
// the pool's lock; allocates nothing.
void note_poisoned(const char* name, const void* array, std::size_t k, const void* block) noexcept;

}  // namespace detail

template <class A, bool Const>
class CheckedTreeIterator;

template <class T>
class CheckedTreeArray {
  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using iterator = CheckedTreeIterator<CheckedTreeArray, false>;
    using const_iterator = CheckedTreeIterator<CheckedTreeArray, true>;

    // n value-initialised elements on tagged `pool`; name (kept by copy) appears in reports.
    CheckedTreeArray(size_type n, BlockPool& pool, Policy policy = Policy::fatal, std::string name = "TreeArray")
        : tree_(0, require_tags(pool)), policy_(policy), name_(std::move(name)) {
        resize(n);
    }
    CheckedTreeArray(size_type n, const T& value, BlockPool& pool, Policy policy = Policy::fatal,
                     std::string name = "TreeArray")
        : tree_(0, require_tags(pool)), policy_(policy), name_(std::move(name)) {
        resize(n, value);
    }
    CheckedTreeArray(const CheckedTreeArray& o)
        : tree_(o.tree_), policy_(o.policy_), name_(o.name_), domain_(o.domain_), domain_bit_(o.domain_bit_) {
        sync_tags();
    }
    CheckedTreeArray(CheckedTreeArray&& o) noexcept
        : tree_(std::move(o.tree_)), tags_(std::move(o.tags_)), entries_(std::move(o.entries_)), epoch_(o.epoch_),
          policy_(o.policy_),
          name_(std::move(o.name_)), domain_(o.domain_), domain_bit_(o.domain_bit_) {
        o.tags_.clear();
        o.entries_.clear();
        if constexpr (kTargeted) bound_ = o.bound_;  // armed as it was: its entries came along
        o.disarm();
        watch(&pool());
    }
    ~CheckedTreeArray() { watch(nullptr); }
    CheckedTreeArray& operator=(CheckedTreeArray o) noexcept {
        swap(o);
        return *this;
    }
    void swap(CheckedTreeArray& o) noexcept {
        tree_.swap(o.tree_);
        tags_.swap(o.tags_);
        entries_.swap(o.entries_);
        std::swap(epoch_, o.epoch_);
        const size_type bound = size_type(bound_), other = size_type(o.bound_);
        disarm();
        o.disarm();
        if constexpr (kTargeted) bound_ = other, o.bound_ = bound;  // each as armed as its entries
        watch(&pool());
        o.watch(&o.pool());
        std::swap(policy_, o.policy_);
        name_.swap(o.name_);
        std::swap(domain_, o.domain_);
        std::swap(domain_bit_, o.domain_bit_);
    }

    // --- size and shape (as TreeArray) ------------------------------------------------
    size_type size() const noexcept { return tree_.size(); }
    bool empty() const noexcept { return tree_.empty(); }
    size_type leaf_length() const noexcept { return tree_.leaf_length(); }
    size_type leaf_count() const noexcept { return tree_.leaf_count(); }
    const TreeShape& shape() const noexcept { return tree_.shape(); }
    BlockPool& pool() const noexcept { return tree_.pool(); }
    Policy policy() const noexcept { return policy_; }
    const std::string& name() const noexcept { return name_; }
    // The raw array: no checks through it (and the contracts of tree_array.hpp). Its
    // elements may be written through it; its shape may not be changed through it (resize,
    // push_back, migrate...: use this class's own) — a checked access then finds the
    // table's length wrong and reports it rather than reading past the table.
    // Taking it disarms the fast path (the caller may be about to change the shape): the
    // limit, and the bound (kTargeted) down to the start of the last leaf — a shrink that
    // frees leaves reaches the array through their entries (poisoned), a shrink inside the
    // last leaf or a growth meets the checked path there — so a loop over the array after
    // it still runs armed but for its last leaf (element(): a loop that starts unarmed
    // stays unarmed).
    TreeArray<T>& unchecked() noexcept {
        const size_type last_leaf = size() ? ((size() - 1) >> shape().leaf_shift) << shape().leaf_shift : 0;
        const size_type bound = std::min(size_type(bound_), last_leaf);
        disarm();
        if constexpr (kTargeted) bound_ = bound;
        return tree_;
    }
    const TreeArray<T>& unchecked() const noexcept { return tree_; }

    // --- checked element access -------------------------------------------------------
    // a[i] whose result is discarded (no access) may be dropped by the compiler with its
    // check (element()); at(), front() and back() are checked even then.
    T& operator[](size_type i) { return *element(i, "operator[]"); }
    const T& operator[](size_type i) const { return *element(i, "operator[]"); }
    T& at(size_type i) { return *element<true>(i, "at"); }
    const T& at(size_type i) const { return *element<true>(i, "at"); }
    T& front() { return *element<true>(0, "front"); }
    const T& front() const { return *element<true>(0, "front"); }
    T& back() { return *element<true>(size() - 1, "back"); }
    const T& back() const { return *element<true>(size() - 1, "back"); }

    // First element of leaf k, its tag checked (k < leaf_count() checked too).
    T* leaf_data(size_type k, const char* access = "leaf_data") const {
        if (k >= leaf_count()) [[unlikely]]
            report(Violation::bounds, access, k << shape().leaf_shift, k, nullptr);
        T* leaf = tree_.leaf_data(k);
        check_leaf(k, leaf, access, k << shape().leaf_shift);
        return leaf;
    }
    // Reports unless first <= last <= size().
    void check_range(size_type first, size_type last, const char* access) const {
        if (last > size() || first > last) [[unlikely]]
            report(Violation::bounds, access, std::max(first, last), std::max(first, last) >> shape().leaf_shift, nullptr);
    }
    // The elements of leaf k in use, checked once.
    std::span<T> segment(size_type k) { return {leaf_data(k, "segment"), segment_length(k)}; }
    std::span<const T> segment(size_type k) const { return {leaf_data(k, "segment"), segment_length(k)}; }
    size_type segment_length(size_type k) const noexcept {
        return std::min(leaf_length(), size() - (k << shape().leaf_shift));
    }

    // --- iteration --------------------------------------------------------------------
    iterator begin() { return iterator(this, 0); }
    iterator end() { return iterator::past_end(this); }
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator::past_end(this); }
    const_iterator cbegin() const { return begin(); }
    const_iterator cend() const { return end(); }

    // --- modifiers (TreeArray's guarantees; the table follows) ---------------------------
    void resize(size_type n) {
        {
            Changing own(own_change_);
            tree_.resize(n);
        }
        sync_tags();
    }
    void resize(size_type n, const T& value) {
        {
            Changing own(own_change_);
            tree_.resize(n, value);
        }
        sync_tags();
    }
    void clear() noexcept {
        Changing own(own_change_);
        tree_.clear();
        tags_.clear();
        entries_.clear();
        disarm();
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    template <class... Args>
    T& emplace_back(Args&&... args) {
        T& r = tree_.emplace_back(std::forward<Args>(args)...);
        if (tags_.size() != leaf_count()) sync_tags();
        else rearm_limit(size() - 1);
        return r;
    }
    // pre: !empty() (checked).
    void pop_back() {
        if (empty()) [[unlikely]] report(Violation::bounds, "pop_back", 0, 0, nullptr);
        {
            Changing own(own_change_);
            tree_.pop_back();
        }
        if (tags_.size() != leaf_count()) sync_tags();
        else rearm_limit(size() + 1);
    }
    // TreeArray::migrate to tagged `target`; iterators into the old blocks become stale (caught).
    void migrate(BlockPool& target) {
        require_tags(target);
        {
            Changing own(own_change_);
            tree_.migrate(target);
        }
        tags_.clear();
        sync_tags();
    }
    // Puts every leaf, now and later, in domain d (< 64): accesses need a DomainScope
    // holding d (domain.hpp). 0: everyone's.
    void set_domain(std::uint32_t d) {
        if (d > BlockTag::kDomainMask) throw std::invalid_argument("CheckedTreeArray::set_domain: domain not below 64");
        domain_ = d;
        domain_bit_ = std::uint64_t{1} << d;
        {
            Changing own(own_change_);
            for (size_type k = 0; k < leaf_count(); ++k) pool().set_domain(tree_.leaf_data(k), d);  // also back to 0
        }
        tags_.clear();
        sync_tags();
    }
    std::uint32_t domain() const noexcept { return domain_; }
    // The bytes of this array's protection metadata: a tag and a word seen, and the entry
    // the fast path walks, for each leaf (beside the pool's tag a block: BlockPool::tag_bytes).
    std::size_t metadata_bytes() const noexcept {
        return leaf_count() * (sizeof(detail::LeafTag) + sizeof(std::uintptr_t));
    }

  private:
    template <class, bool>
    friend class CheckedTreeIterator;

    static BlockPool& require_tags(BlockPool& pool) {
        if (!pool.tagged())
            throw std::invalid_argument("physmem::CheckedTreeArray: the pool keeps no tags (PoolOptions::tags = true)");
        return pool;
    }

    // operator[] and at: below the armed limit (domain 0), no other check, and the walk is
    // the entry from entries_ (the leaves' entries as of the arming, which stores them before
    // the limit) added to the index, at any depth — no test of the tree's depth.
    // In a caller's loop the table and the shift stay in registers: they are read before
    // the test (a load the compiler may hoist must happen on every path). The limit is a
    // volatile read (peek: one mov every access and no barrier to other loads; an acquire,
    // or even a relaxed atomic, load kept GCC from hoisting the table and the shift). The
    // entry is a plain load the compiler may fold into the access (an asm or volatile
    // load adds an address computation or a load to every step, which the protect suite
    // measured on tree lookups), ordered after the limit by its address depending on it
    // (depend_on) where the limit is a volatile read; on x86-64 the limit is a compare with
    // memory (detail::below: one op fewer an access) and the entry is not ordered after it,
    // which the race below allows. Its race with the stores of other threads is benign: an
    // entry changes when its leaf moves, which takes the array exclusively, and when its
    // block is freed behind the array's back (poisoned, below, under the fatal policy; the
    // limit is zeroed before); arming stores the value already there (where leaves are
    // pinned; else arming stores none). Unless Kept the out-of-line check is declared pure
    // (PHYSMEM_CHECK_PURE) and passed the limit read (a volatile read the compiler never
    // merges), so no two accesses share one check; an access whose result is discarded
    // may lose its check.
    //
    // Under the fatal policy where the leaves can move (kTargeted: TreeArray<T>::kLeavesMove,
    // so each leaf has the tree as its owner and the pool's TagChange names it) the fast
    // path reads no shared word at all: the bound is bound_, a field of this array (size() while armed, else 0)
    // that a loop keeps in a register, and the entry is the only load on the element's path,
    // as in TreeArray's own walk (the protect suite measured the limit's load at 16-24% of a
    // red-black tree's lookups: they are bound by how many loads the CPU keeps in flight).
    // What another thread does reaches this fast path through the entries (on_tag_change,
    // under the pool's lock): a leaf moved gets its new entry, a leaf freed behind the
    // array's back a poisoned one (detail::poisoned_entry), through which the access faults
    // and is reported (detail::note_poisoned). A leaf put in another domain, and a free on
    // this thread, also clear bound_, which a loop reloads after any call it cannot see
    // into, so its next access takes the checked path. (Under throw_error a fault could not
    // be thrown: that policy keeps the limit, which the pool zeroes, and an entry that is
    // never poisoned.) The branch on the policy is on a field the loop keeps in a register
    // (GCC unswitches the loop on it at -O3). A loop on another thread that already holds bound_ meets a
    // leaf's new domain only at its next reload of the array's fields (as an iterator meets
    // it on entering a leaf). A loop that starts unarmed keeps the bound it loaded in its
    // register, the slow call being pure, and takes the checked path past it to its end
    // (an index loop over an unarmed array: 8x its time); a store of the re-armed bound in
    // the loop made GCC reload the bound at every access, and a second, cold test of the
    // bound in memory cost the lookups 5%. So little disarms it: a change to one of its own
    // leaves by someone else (a free, a domain), and the non-const unchecked(), which
    // keeps every leaf but the last armed; construction, the array's own modifiers, moves
    // and swaps leave it armed.
    template <bool Kept = false>
    T* element(size_type i, const char* access) const {
        const std::uintptr_t* table = entries_.data();
        size_type k = i >> shape().leaf_shift;
        static_assert(sizeof(size_type) == sizeof(std::uint64_t));
        if (kTargeted && policy_ != Policy::throw_error) {
            // The second test (cold: only past the bound the loop holds) reads the bound from
            // memory, so a loop that began unarmed runs at about the limit's cost once an
            // access has re-armed it, instead of taking the checked path to its end.
            if (i < size_type(bound_)) [[likely]]
                return reinterpret_cast<T*>(table[k] + i * sizeof(T));
        } else {
            if (detail::below(i, limit_, k)) [[likely]]  // k's table load after the limit's read
                return reinterpret_cast<T*>(table[k] + i * sizeof(T));
        }
        if constexpr (Kept) return element_kept(i, access);
        else return element_pure(i, access, detail::peek(limit_));  // a read of its own
    }
    // The out-of-line check, as a call the compiler must keep (element_kept) and as one it
    // may treat as pure (element_pure): as far as a caller can tell it returns the
    // element's address or reports a violation. Its other effects re-arm the fast path:
    // limit_, armed_, misses_ and the tags, which callers read only with volatile or
    // atomic loads, and entries_, which it sets to the values they already hold unless a
    // leaf moved (and a move is a call no caller's copy of an entry survives).
    [[gnu::noinline]] T* element_kept(size_type i, const char* access) const { return element_epoch(i, access); }
    [[gnu::noinline]] PHYSMEM_CHECK_PURE T* element_pure(size_type i, const char* access, size_type) const {
        return element_epoch(i, access);
    }
    // The check when the limit is not armed (or i is past it): while the pool's tag epoch
    // is the one at which every leaf was last seen unchanged and in domain_ (armed_), no
    // tag can have changed, so the check is the epoch and the thread's domains; otherwise
    // the leaf's own check (check_leaf), out of line.
    [[gnu::always_inline]] T* element_epoch(size_type i, const char* access) const {
        if (i >= size()) [[unlikely]]
            report(Violation::bounds, access, i, i >> shape().leaf_shift, nullptr);
        size_type k = i >> shape().leaf_shift;
        T* leaf = tree_.leaf_data(k);
        if (detail::peek_word(epoch_) != detail::peek(armed_) || !(held_domains() & domain_bit_)) [[unlikely]]
            check_unarmed(k, leaf, access, i);
        return leaf + (i & shape().leaf_mask());
    }
    // The leaf's own check, and every leaf_count() of them a look at every leaf (moved
    // ones looked up again): when all are live and in domain_, the fast path is armed at
    // the epoch read before. So a
    // pool whose tags change all the time costs at most twice the per-leaf checks.
    [[gnu::noinline]] void check_unarmed(size_type k, const T* leaf, const char* access, size_type i) const {
        std::uint64_t e = epoch_->load(std::memory_order_acquire);
        check_leaf(k, leaf, access, i);
        if (std::atomic_ref(misses_).fetch_add(1, std::memory_order_relaxed) + 1 < leaf_count()) return;
        std::atomic_ref(misses_).store(0, std::memory_order_relaxed);
        for (size_type j = 0; j < tags_.size(); ++j) {
            detail::LeafTag& t = tags_[j];
            std::uint64_t w = std::atomic_ref(t.word).load(std::memory_order_relaxed)->load(std::memory_order_acquire);
            bool same = w == std::atomic_ref(t.seen).load(std::memory_order_relaxed);
            if (!same && !detail::try_refresh(pool(), tree_.leaf_data(j), t, w))
                return;  // leaf j is not a live block starting there: reported when next used
            if ((w & BlockTag::kDomainMask) != domain_) return;
            if (domain_ == 0 && !kTargeted)  // moved or not; only domain 0 arms the limit that reads them
                std::atomic_ref(entries_[j]).store(tree_.leaf_entry(j), std::memory_order_relaxed);
        }
        std::atomic_ref(armed_).store(e, std::memory_order_relaxed);
        if (domain_ != 0) return;
        // Armed after the pool's last store of 0, or the epoch read again shows its change.
        std::atomic_ref limit(limit_);
        limit.store(size(), std::memory_order_seq_cst);
        if constexpr (kTargeted) bound_ = size();
        if (epoch_->load(std::memory_order_seq_cst) != e) {
            limit.store(0, std::memory_order_relaxed);
            if constexpr (kTargeted) bound_ = 0;
        }
    }
    // After a push_back or pop_back inside the last leaf: an armed limit follows the size
    // (was: the size before); one the pool cleared meanwhile stays 0.
    void rearm_limit(size_type was) noexcept {
        if (size_type(bound_) != 0) bound_ = size();
        if (was == 0) return;  // 0 is the unarmed limit
        std::size_t expected = was;
        std::atomic_ref(limit_).compare_exchange_strong(expected, size(), std::memory_order_seq_cst);
    }
    void disarm() noexcept {
        armed_ = kUnarmed;
        bound_ = 0;
        std::atomic_ref(limit_).store(0, std::memory_order_seq_cst);
    }
    // Watches pool p's tag changes (nullptr: none), leaving the one watched before.
    void watch(BlockPool* p) noexcept {
        if (watched_ == p) return;
        if (watched_) watched_->unwatch_tags(watch_);
        watched_ = p;
        if (p) p->watch_tags(watch_);
    }

    // The hot check: the tag word seen last for leaf k is still the word, and the thread
    // holds its domain; otherwise refresh (out of line).
    void check_leaf(size_type k, const T* leaf, const char* access, size_type i) const {
        if (tags_.size() != leaf_count()) [[unlikely]]
            report(Violation::bounds, "access after the shape changed through unchecked()", i, k, leaf);
        detail::LeafTag& t = tags_[k];
        std::uint64_t w = detail::peek_word(detail::peek(t.word));
        if (w != detail::peek(t.seen) || !detail::domain_held(w)) [[unlikely]]
            detail::refresh_leaf(pool(), leaf, t, site(access, i, k, leaf));
    }
    // Grows or shrinks the table to leaf_count(): new leaves are looked up (and put in
    // domain_).
    void sync_tags() {
        epoch_ = &pool().tag_epoch();
        disarm();
        watch(&pool());
        size_type n = leaf_count();
        if (tags_.size() > n) tags_.resize(n);
        entries_.resize(n);  // kTargeted: the new leaves' below; else filled when armed
        for (size_type k = tags_.size(); k < n; ++k) {
            void* leaf = tree_.leaf_data(k);
            if (domain_) {
                Changing own(own_change_);
                pool().set_domain(leaf, domain_);
            }
            const auto* w = pool().tag_word(leaf, nullptr);
            tags_.push_back({w, w->load(std::memory_order_acquire)});
            if constexpr (kTargeted) std::atomic_ref(entries_[k]).store(tree_.leaf_entry(k), std::memory_order_relaxed);
        }
        if constexpr (kTargeted)  // the leaves are this array's own: armed at once in domain 0
            if (domain_ == 0) bound_ = size();
    }
    // The pool's TagChange for a block of this array's tree (kTargeted; under the pool's
    // lock, on the thread that made the change): a leaf moved gets its new entry; a leaf
    // freed behind the array's back (by anything but this array's own modifiers, which
    // rebuild the table after: own_change_) is marked lost (kLostSeen: its checks report it
    // from then on) and, under the fatal policy, gets a poisoned entry and the fast path is
    // disarmed (under throw_error the fast path re-reads the limit the pool has just
    // zeroed, and a fault could not be thrown); a leaf put in another domain disarms it.
    // Changes to other blocks do nothing here.
    static void on_tag_change(BlockPool::TagWatch& w, const BlockPool::TagChange& c) noexcept {
        auto* self = static_cast<CheckedTreeArray*>(w.context);
        size_type k;
        if (!c.owner || c.owner != self->tree_.owner() || !TreeArray<T>::leaf_of_cookie(c.cookie, k)) return;
        if (self->own_change_ || k >= self->entries_.size() || k >= self->tags_.size()) return;
        if (c.domain) {
            self->bound_ = 0;
            return;
        }
        const std::uintptr_t bytes = self->leaf_length() * sizeof(T);
        std::atomic_ref e(self->entries_[k]);
        if (e.load(std::memory_order_relaxed) + k * bytes != reinterpret_cast<std::uintptr_t>(c.block)) return;
        if (c.moved_to) {
            e.store(reinterpret_cast<std::uintptr_t>(c.moved_to) - k * bytes, std::memory_order_relaxed);
            return;
        }
        std::atomic_ref(self->tags_[k].seen).store(detail::kLostSeen, std::memory_order_seq_cst);
        if (self->policy_ == Policy::throw_error) return;
        detail::note_poisoned(self->name_.c_str(), self, k, c.block);  // first: a fault may follow at once
        e.store(detail::poisoned_entry(k, bytes), std::memory_order_seq_cst);
        self->bound_ = 0;
    }
    // Marks this array's own modification of its tree for its lifetime (on_tag_change
    // ignores the blocks it frees or re-domains: the table is rebuilt after).
    struct Changing {
        explicit Changing(bool& f) noexcept : f_(f) { f_ = true; }
        ~Changing() { f_ = false; }
        bool& f_;
    };
    detail::CheckedAccess site(const char* access, size_type i, size_type k, const void* block) const {
        return {name_.c_str(), this, policy_, access, i, size(), k, block, 0, 0};
    }
    [[noreturn]] void report(Violation v, const char* access, size_type i, size_type k, const void* block) const {
        detail::checked_violation(v, site(access, i, k, block));
    }

    static constexpr std::uint64_t kUnarmed = ~std::uint64_t{0};  // an epoch never reached

    TreeArray<T> tree_;
    mutable std::vector<detail::LeafTag> tags_;  // one per leaf; entries refreshed atomically
    // Each leaf's entry (TreeArray::leaf_entry) as of the last arming, which rewrites them
    // all (atomically: other threads may read them) before it arms; read only while armed.
    mutable std::vector<std::uintptr_t> entries_;
    const std::atomic<std::uint64_t>* epoch_ = nullptr;  // pool().tag_epoch()
    mutable std::uint64_t armed_ = kUnarmed;  // the epoch the fast path holds at (atomic_ref)
    // Domain 0's fast path (element): size() while every leaf was seen unchanged at the
    // pool's current tags, else 0; the pool zeroes it (watch_) on every tag change.
    mutable std::size_t limit_ = 0;
    // The fast path's bound where leaves are owned (kTargeted): size() while armed, else 0;
    // a field a loop keeps in a register (see element()).
    static constexpr bool kTargeted = TreeArray<T>::kLeavesMove;
    mutable detail::Unaliased<size_type> bound_ = 0;
    bool own_change_ = false;  // this array is changing its own tree (Changing)
    BlockPool::TagWatch watch_{&limit_, kTargeted ? &on_tag_change : nullptr, this};
    BlockPool* watched_ = nullptr;  // the pool watch_ is registered with
    mutable std::size_t misses_ = 0;          // per-leaf checks since the last look at all
    Policy policy_;
    std::string name_;
    std::uint32_t domain_ = 0;
    // 1 << domain_: the hot check tests it against the thread's set (Unaliased, tree_shape.hpp:
    // a loop storing 64-bit elements need not reload it)
    detail::Unaliased<std::uint64_t> domain_bit_ = 1;
};

// Random access over a CheckedTreeArray (see the contract at the top). Representation as
// TreeIterator, plus the leaf's tag word and the word seen on entering the leaf; lend_ is
// the end of the leaf's elements in use, so a valid position always has first_ <= cur_ <
// lend_; positions outside [0, size()) hold no leaf (cur_ null, tag_ = no_leaf_word).
template <class A, bool Const>
class CheckedTreeIterator {
    using C = std::conditional_t<Const, const A, A>;
    using T = typename A::value_type;

  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;

    CheckedTreeIterator() noexcept = default;
    CheckedTreeIterator(C* a, std::size_t i) : CheckedTreeIterator(sought(a, a->policy(), i)) {}
    // The position past the last element, as sought() finds it but inline: no leaf (cur_
    // null). A loop's compare with it then reads as "cur_ is null", which the compiler can
    // drop inside a leaf, where cur_ was just dereferenced.
    static CheckedTreeIterator past_end(C* a) noexcept {
        CheckedTreeIterator it;
        it.a_ = a, it.policy_ = a->policy(), it.base_ = a->size();
        return it;
    }
    template <bool WasConst, class = std::enable_if_t<Const && !WasConst>>
    CheckedTreeIterator(const CheckedTreeIterator<A, WasConst>& o) noexcept
        : a_(o.a_), cur_(o.cur_), lend_(o.lend_), first_(o.first_), base_(o.base_), tag_(o.tag_), seen_(o.seen_),
          policy_(o.policy_) {}

    reference operator*() const {
        verify("iterator *");
        return *cur_;
    }
    pointer operator->() const {
        verify("iterator ->");
        return cur_;
    }
    reference operator[](difference_type n) const { return *(*this + n); }
    std::size_t index() const noexcept { return cur_ ? base_ + static_cast<std::size_t>(cur_ - first_) : base_; }
    C* container() const noexcept { return a_; }
    // Elements from here to the end of this leaf's part in use (0 outside the array).
    std::size_t left_in_leaf() const noexcept { return static_cast<std::size_t>(lend_ - cur_); }

    CheckedTreeIterator& operator++() {
        if (++cur_ == lend_) [[unlikely]] seek(base_ + static_cast<std::size_t>(lend_ - first_));
        return *this;
    }
    CheckedTreeIterator operator++(int) {
        auto t = *this;
        ++*this;
        return t;
    }
    CheckedTreeIterator& operator--() {
        if (!cur_ || cur_ == first_) [[unlikely]] seek(index() - 1);
        else --cur_;
        return *this;
    }
    CheckedTreeIterator operator--(int) {
        auto t = *this;
        --*this;
        return t;
    }
    CheckedTreeIterator& operator+=(difference_type n) {
        if (cur_ && n < lend_ - cur_ && -n <= cur_ - first_) cur_ += n;
        else seek(index() + static_cast<std::size_t>(n));
        return *this;
    }
    CheckedTreeIterator& operator-=(difference_type n) { return *this += -n; }
    friend CheckedTreeIterator operator+(CheckedTreeIterator it, difference_type n) { return it += n; }
    friend CheckedTreeIterator operator+(difference_type n, CheckedTreeIterator it) { return it += n; }
    friend CheckedTreeIterator operator-(CheckedTreeIterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const CheckedTreeIterator& a, const CheckedTreeIterator& b) noexcept {
        return static_cast<difference_type>(a.index() - b.index());
    }
    // A position without a leaf is the one with cur_ == lend_ (both null; at an element cur_ <
    // lend_). Against end() (past_end: inline, so its two nulls are constants) == is then
    // "cur_ == lend_ and the same index", which a loop's ++ has just tested false inside a
    // leaf: the compiler drops the loop's own end test, one branch an element.
    friend bool operator==(const CheckedTreeIterator& a, const CheckedTreeIterator& b) noexcept {
        if (b.cur_ == b.lend_) return a.cur_ == a.lend_ && a.base_ == b.base_;
        return a.cur_ == b.cur_;
    }
    friend auto operator<=>(const CheckedTreeIterator& a, const CheckedTreeIterator& b) noexcept {
        return a.index() <=> b.index();
    }

    // The leaf's word is still the one seen on entering it (else reported).
    void verify(const char* access) const {
        if (!detail::word_is(tag_, seen_)) [[unlikely]]
            seen_ = revalidate(tag_, seen_, a_, policy_, access, index(), first_);
    }

  private:
    template <class, bool>
    friend class CheckedTreeIterator;

    // Out of line: past the end, a stale leaf (freed or moved: reported without touching
    // the array, which may be gone), or only the domain changed (held: go on).
    // Static, with the state by value: the iterator's address never escapes the loop, so
    // the compiler keeps it in registers. Returns the word to see from now on.
    [[gnu::cold, gnu::noinline]] static std::uint64_t revalidate(const std::atomic<std::uint64_t>* tag,
                                                                 std::uint64_t seen, const void* a, Policy policy,
                                                                 const char* access, std::size_t index,
                                                                 const void* block) {
        std::uint64_t now = tag->load(std::memory_order_acquire);
        detail::CheckedAccess s{nullptr, a, policy, access, index, ~std::size_t{0}, 0, block, seen, now};
        if (tag == &detail::no_leaf_word) {
            s.now = 0;
            detail::checked_violation(Violation::bounds, s);
        }
        if ((now >> BlockTag::kDomainBits) != (seen >> BlockTag::kDomainBits))
            detail::checked_violation(Violation::stale, s);
        if (!detail::domain_held(now)) detail::checked_violation(Violation::domain, s);
        return now;
    }
    // Leaves the current leaf (checked first: the array may be gone) for index i.
    void seek(std::size_t i) {
        if (tag_ != &detail::no_leaf_word) verify("iterator (leaving a leaf)");
        *this = sought(a_, policy_, i);
    }
    // The iterator at index i of a. Static and returning by value, as revalidate: the
    // iterator's own address never escapes, so a loop keeps it in registers (when seek
    // took `this`, GCC kept the iterator on the stack and stored cur_ at every element).
    [[gnu::noinline]] static CheckedTreeIterator sought(C* a, Policy policy, std::size_t i) {
        CheckedTreeIterator it;
        it.a_ = a;
        it.policy_ = policy;
        std::size_t n = a->size();
        if (i >= n) {
            it.base_ = i;
            return it;  // no leaf: cur_ null, tag_ no_leaf_word
        }
        const TreeShape& s = a->shape();
        std::size_t k = i >> s.leaf_shift;
        it.base_ = k << s.leaf_shift;
        it.first_ = a->leaf_data(k, "iterator");  // checks the tag (refreshing the table)
        const detail::LeafTag& t = a->tags_[k];
        it.tag_ = std::atomic_ref(const_cast<detail::LeafTag&>(t).word).load(std::memory_order_relaxed);
        it.seen_ = std::atomic_ref(const_cast<detail::LeafTag&>(t).seen).load(std::memory_order_relaxed);
        it.cur_ = it.first_ + (i - it.base_);
        it.lend_ = it.first_ + std::min(s.leaf_len(), n - it.base_);
        return it;
    }

    C* a_ = nullptr;
    pointer cur_ = nullptr;
    pointer lend_ = nullptr;
    pointer first_ = nullptr;
    std::size_t base_ = 0;
    const std::atomic<std::uint64_t>* tag_ = &detail::no_leaf_word;
    mutable std::uint64_t seen_ = 0;  // updated when only the domain changed (still held)
    Policy policy_ = Policy::fatal;
};

// physmem:: algorithms run checked iterators leaf by leaf: one check per run.
template <class A, bool Const>
struct Segmented<CheckedTreeIterator<A, Const>> : std::true_type {
    template <class F>
    static void run(const CheckedTreeIterator<A, Const>& it, std::size_t n, F&& f) {
        auto* p = it.operator->();  // checked (past the end, stale leaf)
        f(p, std::min(n, it.left_in_leaf()));
    }
};

// --- per-leaf algorithms (segments.hpp) on checked arrays: one tag check per leaf ----------
template <class T, class F>
void for_each_segment(CheckedTreeArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) f(a.segment(k));
}
template <class T, class F>
void for_each_segment(const CheckedTreeArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) f(a.segment(k));
}
// pre (checked): first <= last <= a.size().
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, CheckedTreeArray<typename A::value_type>>
void for_each_segment(A& a, std::size_t first, std::size_t last, F&& f) {
    a.check_range(first, last, "for_each_segment");
    const TreeShape& s = a.shape();
    while (first < last) {
        std::size_t k = first >> s.leaf_shift;
        std::size_t end = std::min(last, (k + 1) << s.leaf_shift);
        f(std::span(a.leaf_data(k, "for_each_segment") + (first & s.leaf_mask()), end - first));
        first = end;
    }
}
// f(T&) for a[first], a[first + stride], ... below a.size(), one check per leaf visited.
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, CheckedTreeArray<typename A::value_type>>
void for_each_strided(A& a, std::size_t first, std::size_t stride, F&& f) {
    const TreeShape& s = a.shape();
    std::size_t n = a.size(), i = first;
    while (i < n) {
        std::size_t k = i >> s.leaf_shift;
        auto* leaf = a.leaf_data(k, "for_each_strided");
        std::size_t base = k << s.leaf_shift, end = std::min(n, base + s.leaf_len());
        for (; i < end; i += stride) {
            f(leaf[i - base]);
            if (n - i <= stride) return;
        }
    }
}

}  // namespace physmem
