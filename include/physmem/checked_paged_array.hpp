// physmem/checked_paged_array.hpp — PagedArray in checked mode (issue 24, item 3): bounds,
// the array's life and its protection domain checked on every access.
//
//   physmem::BlockPool pool({.block_size = 64 << 10});
//   physmem::CheckedPagedArray<int> a(1 << 30, pool, {.budget = 64 << 20}, physmem::Policy::fatal, "big");
//   a.set(5, 1);                       // checked: index < size, the thread holds the domain
//   a[a.size()] = 1;                   // "physmem: fatal: checked array big ...: out of bounds"
//   auto it = a.begin(); { auto b = std::move(a); } *it;  // iterator into a moved-from array: caught
//
// Why a separate type: PagedArray<T> is untouched (unchecked code is today's code). This
// type holds a PagedArray<T> (unchecked() hands it out, with no checks through it), the
// size, a domain and an identity word (array_life.hpp) that outlives the array.
//
// What is checked, and when:
//   operator[], at, get, set, prefetch (every index): the index against size(), then that
//     the thread holds the array's domain (set_domain; 0, everyone's, by default).
//   for_each_segment / for_each_strided: the range, and the domain once per call.
//   iterators: every dereference (*, ->, [], iter_move, iter_swap) compares the array's
//     identity word with the one seen when the iterator was made (one load and one
//     compare), the index with the size, and the domain: an iterator into an array since
//     destroyed or moved from is caught, as are end() and any position outside
//     [0, size()), without touching the array. Moving an iterator checks nothing.
// Not caught: a raw reference or pointer (operator[]'s, operator->'s, a segment's span)
// kept past a check — after another leaf is loaded it may point into a frame that now
// holds another leaf (PagedArray's validity rule); a PagedRef (a non-const iterator's
// reference) kept after its array is gone; a DomainScope ending while an iterator is used.
//
// Unlike CheckedTreeArray, no block tag is read: a paged array's frames hold one leaf and
// then another, so a frame's tag does not name a leaf; the pager owns them (they are freed
// only with the array, which the identity word covers), and any pool will do. The domain is
// the array's own: its frames' tags in the pool are not changed.
//
// A violation goes through the array's Policy (capability.hpp): fatal (the default) or a
// thrown ProtectionError, with the report of checked_access.hpp. Cost: operator[] and the
// others two compares and a thread_local load; an iterator's dereference one more load and
// compare. Metadata: 8 bytes an array (its word) plus the wrapper's fields. Threads: as
// PagedArray (get, prefetch, the const segment algorithms from many threads at once).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "physmem/array_life.hpp"
#include "physmem/capability.hpp"
#include "physmem/checked_access.hpp"
#include "physmem/domain.hpp"
#include "physmem/paged_array.hpp"

namespace physmem {

template <class T, bool Const>
class CheckedPagedIterator;

template <class T>
class CheckedPagedArray {
  public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using iterator = CheckedPagedIterator<T, false>;
    using const_iterator = CheckedPagedIterator<T, true>;

    // As PagedArray's constructor (its exceptions), plus the policy and the name reports use.
    CheckedPagedArray(size_type n, BlockPool& pool, const PagingOptions& o = {}, Policy policy = Policy::fatal,
                      std::string name = "PagedArray")
        : a_(n, pool, o), size_(n), life_(std::make_unique<detail::ArrayLife>()), policy_(policy),
          name_(std::move(name)) {}
    // Moves the data; both arrays get a new identity, so iterators made on either before
    // the move are caught at their next use. The moved-from array is empty: size 0, domain
    // 0, every checked access reported; what PagedArray says of a moved-from array holds for
    // the rest (leaf_count, file, stats, flush, budget: not to be called). Throws
    // std::bad_alloc (the new identity words, the name) with nothing moved.
    CheckedPagedArray(CheckedPagedArray&& o) : CheckedPagedArray(o, Fresh(o)) {}
    CheckedPagedArray& operator=(CheckedPagedArray&& o) {
        if (this != &o) take(o, Fresh(o));
        return *this;
    }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    size_type leaf_length() const noexcept { return a_.leaf_length(); }
    size_type leaf_count() const noexcept { return a_.leaf_count(); }
    const TreeShape& shape() const noexcept { return a_.shape(); }
    const std::string& file() const noexcept { return a_.file(); }
    PagingStats stats() const { return a_.stats(); }
    Policy policy() const noexcept { return policy_; }
    const std::string& name() const noexcept { return name_; }
    PagedArray<T>& unchecked() noexcept { return a_; }
    const PagedArray<T>& unchecked() const noexcept { return a_; }

    // --- element access: PagedArray's, checked (its validity rules stand) --------------
    T& operator[](size_type i) { return check(i, "operator[]"), a_[i]; }
    const T& operator[](size_type i) const { return check(i, "operator[]"), a_[i]; }
    T& at(size_type i) { return check(i, "at"), a_[i]; }
    const T& at(size_type i) const { return check(i, "at"), a_[i]; }
    T get(size_type i) const { return check(i, "get"), a_.get(i); }
    void set(size_type i, const T& v) { check(i, "set"), a_.set(i, v); }

    // --- paging ---------------------------------------------------------------------------
    void prefetch(std::span<const size_type> indices) const {
        for (size_type i : indices) check(i, "prefetch");
        a_.prefetch(indices);
    }
    void flush() { a_.flush(); }
    void set_budget(std::size_t bytes) { a_.set_budget(bytes); }
    std::size_t budget() const noexcept { return a_.budget(); }

    // --- protection -----------------------------------------------------------------------
    // Checked accesses from now on need domain d (< 64; std::invalid_argument otherwise).
    void set_domain(std::uint32_t d) {
        if (d > BlockTag::kDomainMask) throw std::invalid_argument("CheckedPagedArray::set_domain: domain not below 64");
        domain_ = d;
        life_->set_domain(d);
    }
    std::uint32_t domain() const noexcept { return domain_; }
    // Reports unless [first, last) is within the array and the thread holds its domain.
    void check_range(size_type first, size_type last, const char* access) const {
        if (last > size_ || first > last) [[unlikely]]
            report(Violation::bounds, access, std::max(first, last));
        check_domain(access, first);
    }

    // --- iteration ------------------------------------------------------------------------
    iterator begin() { return iterator(this, 0); }
    iterator end() { return iterator(this, size_); }
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator(this, size_); }
    const_iterator cbegin() const { return begin(); }
    const_iterator cend() const { return end(); }

  private:
    template <class, bool>
    friend class CheckedPagedIterator;

    // What a move allocates, made before anything moves: a throw leaves both arrays as they were.
    struct Fresh {
        std::unique_ptr<detail::ArrayLife> mine = std::make_unique<detail::ArrayLife>();
        std::unique_ptr<detail::ArrayLife> theirs = std::make_unique<detail::ArrayLife>();
        std::string name;
        explicit Fresh(const CheckedPagedArray& o) : name(o.name_) {}
    };
    CheckedPagedArray(CheckedPagedArray& o, Fresh f) noexcept : a_(std::move(o.a_)) { take(o, std::move(f), false); }
    // This array becomes o's (a_ already moved when !move_data), o an empty one. No throw.
    void take(CheckedPagedArray& o, Fresh f, bool move_data = true) noexcept {
        if (move_data) a_ = std::move(o.a_);
        size_ = std::exchange(o.size_, 0);
        life_ = std::move(f.mine);  // this array's old word back: its old iterators are caught
        policy_ = o.policy_;
        name_ = std::move(f.name);
        domain_ = std::exchange(o.domain_, 0);
        life_->set_domain(domain_);
        o.life_ = std::move(f.theirs);  // o's old word back: iterators made on o are caught
    }
    void check(size_type i, const char* access) const {
        if (i >= size_) [[unlikely]]
            report(Violation::bounds, access, i);
        check_domain(access, i);
    }
    void check_domain(const char* access, size_type i) const {
        if (!(held_domains() >> domain_ & 1)) [[unlikely]]
            report(Violation::domain, access, i);
    }
    [[noreturn]] void report(Violation v, const char* access, size_type i) const {
        std::uint64_t w = life_->load();
        detail::checked_violation(v, {name_.c_str(), this, policy_, access, i, size_, i >> shape().leaf_shift, nullptr,
                                      w, w});
    }

    PagedArray<T> a_;
    detail::Unaliased<size_type> size_;  // (tree_shape.hpp: the bounds check's, kept in a register)
    std::unique_ptr<detail::ArrayLife> life_;  // never null
    Policy policy_;
    std::string name_;
    std::uint32_t domain_ = 0;
};

// A PagedIterator (paged_iterator.hpp: its references, proxies and contract) that checks
// its array's identity, the index and the domain at every dereference.
template <class T, bool Const>
class CheckedPagedIterator {
    using Inner = PagedIterator<PagedArray<T>, Const>;
    using Outer = std::conditional_t<Const, const CheckedPagedArray<T>, CheckedPagedArray<T>>;

  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using reference = typename Inner::reference;
    using pointer = typename Inner::pointer;

    CheckedPagedIterator() = default;  // dereferencing it is reported
    CheckedPagedIterator(Outer* a, std::size_t i)
        : it_(&a->a_, i), a_(a), word_(a->life_->word()), seen_(a->life_->load()), size_(a->size_),
          policy_(a->policy_) {}
    operator CheckedPagedIterator<T, true>() const noexcept
        requires(!Const)
    {
        CheckedPagedIterator<T, true> c;
        c.it_ = it_;
        c.a_ = a_;
        c.word_ = word_;
        c.seen_ = seen_;
        c.size_ = size_;
        c.policy_ = policy_;
        return c;
    }

    reference operator*() const {
        verify("iterator *");
        return *it_;
    }
    pointer operator->() const {
        verify("iterator ->");
        return it_.operator->();
    }
    reference operator[](difference_type n) const { return *(*this + n); }
    std::size_t index() const noexcept { return it_.index(); }

    friend T iter_move(const CheckedPagedIterator& it) {
        it.verify("iter_move");
        return T(*it.it_);
    }
    friend void iter_swap(const CheckedPagedIterator& x, const CheckedPagedIterator& y)
        requires(!Const)
    {
        x.verify("iter_swap");
        y.verify("iter_swap");
        std::ranges::iter_swap(x.it_, y.it_);
    }

    CheckedPagedIterator& operator++() noexcept { return ++it_, *this; }
    CheckedPagedIterator operator++(int) noexcept {
        auto t = *this;
        ++it_;
        return t;
    }
    CheckedPagedIterator& operator--() noexcept { return --it_, *this; }
    CheckedPagedIterator operator--(int) noexcept {
        auto t = *this;
        --it_;
        return t;
    }
    CheckedPagedIterator& operator+=(difference_type n) noexcept { return it_ += n, *this; }
    CheckedPagedIterator& operator-=(difference_type n) noexcept { return it_ -= n, *this; }
    friend CheckedPagedIterator operator+(CheckedPagedIterator it, difference_type n) noexcept { return it += n; }
    friend CheckedPagedIterator operator+(difference_type n, CheckedPagedIterator it) noexcept { return it += n; }
    friend CheckedPagedIterator operator-(CheckedPagedIterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const CheckedPagedIterator& a, const CheckedPagedIterator& b) noexcept {
        return a.it_ - b.it_;
    }
    friend bool operator==(const CheckedPagedIterator& a, const CheckedPagedIterator& b) noexcept {
        return a.it_ == b.it_;
    }
    friend auto operator<=>(const CheckedPagedIterator& a, const CheckedPagedIterator& b) noexcept {
        return a.it_ <=> b.it_;
    }

  private:
    template <class, bool>
    friend class CheckedPagedIterator;

    // The hot path: one load of the identity word; the rest in registers.
    void verify(const char* access) const {
        std::uint64_t w = detail::peek_word(word_);
        if (((w ^ seen_) >> BlockTag::kDomainBits) != 0 || it_.index() >= size_ || !detail::domain_held(w)) [[unlikely]]
            report(access, w);
    }
    // Stale first (the array and its size may be gone), then bounds, then the domain.
    [[noreturn, gnu::cold, gnu::noinline]] void report(const char* access, std::uint64_t w) const {
        const bool alive = ((w ^ seen_) >> BlockTag::kDomainBits) == 0;
        Violation v = !alive ? Violation::stale : it_.index() >= size_ ? Violation::bounds : Violation::domain;
        detail::checked_violation(v, {alive ? a_->name().c_str() : nullptr, a_, policy_, access, it_.index(),
                                      alive ? size_ : ~std::size_t{0}, 0, nullptr, seen_, w});
    }

    Inner it_;
    Outer* a_ = nullptr;
    const std::atomic<std::uint64_t>* word_ = &detail::no_leaf_word;  // a default iterator: never seen
    std::uint64_t seen_ = 0;
    std::size_t size_ = 0;
    Policy policy_ = Policy::fatal;
};

// --- segment algorithms: PagedArray's (each leaf loaded and pinned while f runs on it),
// after checking the range and the domain -----------------------------------------------

// (An empty array calls f on nothing: a moved-from one has no pager to ask.)
template <class T, class F>
void for_each_segment(CheckedPagedArray<T>& a, F&& f) {
    a.check_range(0, a.size(), "for_each_segment");
    if (!a.empty()) for_each_segment(a.unchecked(), std::forward<F>(f));
}
template <class T, class F>
void for_each_segment(const CheckedPagedArray<T>& a, F&& f) {
    a.check_range(0, a.size(), "for_each_segment");
    if (!a.empty()) for_each_segment(a.unchecked(), std::forward<F>(f));
}
// The parts of [first, last) in each leaf; reported unless first <= last <= a.size().
template <class T, class F>
void for_each_segment(CheckedPagedArray<T>& a, std::size_t first, std::size_t last, F&& f) {
    a.check_range(first, last, "for_each_segment");
    for_each_segment(a.unchecked(), first, last, std::forward<F>(f));
}
template <class T, class F>
void for_each_segment(const CheckedPagedArray<T>& a, std::size_t first, std::size_t last, F&& f) {
    a.check_range(first, last, "for_each_segment");
    for_each_segment(a.unchecked(), first, last, std::forward<F>(f));
}
// f(element) for a[first], a[first + stride], ... below a.size() (none when first >= size).
template <class T, class F>
void for_each_strided(CheckedPagedArray<T>& a, std::size_t first, std::size_t stride, F&& f) {
    a.check_range(0, a.size(), "for_each_strided");
    if (!a.empty()) for_each_strided(a.unchecked(), first, stride, std::forward<F>(f));
}
template <class T, class F>
void for_each_strided(const CheckedPagedArray<T>& a, std::size_t first, std::size_t stride, F&& f) {
    a.check_range(0, a.size(), "for_each_strided");
    if (!a.empty()) for_each_strided(a.unchecked(), first, stride, std::forward<F>(f));
}

}  // namespace physmem
