// physmem/paged_iterator.hpp — PagedArray's iterators and the reference they hand out.
//
// A leaf in memory can leave it whenever another is loaded (the pager's CLOCK, a small
// budget), so an iterator cannot hand out a T& the way TreeArray's does: an algorithm
// holding two references (std::iter_swap, a sort's pivot) wrote through the dead one.
// Instead:
//
//   const_iterator  reference = T, by value. A read copies the element out.
//   iterator        reference = PagedRef<T>, a proxy naming (array, index) with the
//                   element's address cached: reading converts it to T, assigning writes
//                   the element. Before either it checks the pager's epoch (bumped when
//                   any leaf leaves memory, is cleaned or moves) and, when it changed,
//                   walks to the element again — loading its leaf if needed — so it never
//                   uses a dead address.
//
// Contract: a PagedRef stays valid, whatever is loaded or evicted meanwhile, as long as
// its array lives; no algorithm needs any number of leaves pinned, so every standard
// algorithm (std:: and std::ranges::, sort to shuffle) is correct at every budget, one
// leaf included (where it thrashes: each access to another leaf is a load). Both
// iterators satisfy std::random_access_iterator, and iterator std::sortable:
// iter_move, iter_swap and swap of references are customised; std::common_reference of
// PagedRef<T> and T is T. A PagedArray is a std::ranges::random_access_range.
// Errors: an access may load a leaf and so throw PagingError (or std::runtime_error when
// every frame is pinned by segment callbacks); an algorithm stopped by one leaves its
// elements as a std::vector's would be after a throwing move — the basic guarantee.
//
// What a proxy is not: `auto& x = *it` and `for (auto& x : a)` do not compile (write
// `auto&&` or `auto`: both are a PagedRef); a comparator or projection for a non-const
// array takes `const T&` (or T), not `const auto&` (the proxy has no members) nor a
// pointer to member. `auto x = *it` is a reference to the element, not a copy of it
// (as with std::vector<bool>): write `T x = *it` for a value. Moving a PagedRef
// (`auto t = std::move(*it)`) does copy the value out, which std::swap and libstdc++'s
// ranges::rotate rely on.
// operator-> returns the element's address, valid as operator[]'s references are: until
// the next access to another leaf.
//
// Cost: the iterator is a cursor into its leaf (one walk when it crosses into another leaf
// or after an eviction, detected by the epoch); ++ is two increments, * a compare with the
// leaf's end and one of the epoch; a PagedRef's read or write compares the epoch once
// more (the compiler folds it into the iterator's when nothing is stored between). The
// epoch is of a type of its own (detail::Unaliased), so a store to an element does not
// make the next access reload it.
// Non-const iterators mark a leaf dirty when they first reach it (dereferencing for a read
// too); const ones never do.
#pragma once

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

#include "physmem/tree_shape.hpp"  // detail::Unaliased: the pager's epoch

namespace physmem {

template <class T>
class PagedArray;

// A reference to element i of a PagedArray<T> (above): assign to write, convert to read.
template <class T>
class PagedRef {
    static constexpr bool kClass = std::is_class_v<T>;  // scalars compare through the conversion
    static constexpr std::uint64_t kDetached = ~std::uint64_t{0};  // an epoch the pager never reaches

  public:
    // `ep` is the pager's epoch_address(), `epoch` its value when p was resolved.
    [[gnu::always_inline]] PagedRef(PagedArray<T>* a, std::size_t i, T* p, std::uint64_t epoch,
                                    const detail::Unaliased<std::uint64_t>* ep) noexcept
        : a_(a), i_(i), p_(p), epoch_(epoch), ep_(ep) {}
    // The same element (the value, when detached: copied only then).
    PagedRef(const PagedRef& o) noexcept
        : a_(o.a_), i_(o.i_), p_(o.p_), epoch_(o.epoch_), ep_(o.ep_), detached_(o.detached_) {
        if (detached_) std::construct_at(&value_, o.value_);
    }
    // Moving takes the value out: the new PagedRef holds a copy of the element, detached
    // from the array, as `auto t = std::move(*it)` in generic code (std::swap, libstdc++'s
    // ranges::rotate) expects of a value.
    PagedRef(PagedRef&& o)
        : a_(o.a_), i_(o.i_), p_(nullptr), epoch_(kDetached), ep_(o.ep_), detached_(true), value_(static_cast<T>(o)) {}

    // The element accesses are inlined always, their slow path (refresh) never: std::sort's
    // comparisons through the iterators then inline too, and its loops keep the cursors in
    // registers (g++ 12 left the comparison a call, or not, as the file around it grew).
    [[gnu::always_inline]] operator T() const { return target(); }
    [[gnu::always_inline]] const PagedRef& operator=(const T& v) const {
        target() = v;
        return *this;
    }
    const PagedRef& operator=(const PagedRef& o) const { return *this = static_cast<T>(o); }  // the value
    std::size_t index() const noexcept { return i_; }

    friend void swap(const PagedRef& x, const PagedRef& y) {
        T t = x;
        x = static_cast<T>(y);
        y = t;
    }

    // Compound assignment and increments, where T has them: one walk at most.
    template <class U>
    const PagedRef& operator+=(const U& u) const requires requires(T& t) { t += u; } { return target() += u, *this; }
    template <class U>
    const PagedRef& operator-=(const U& u) const requires requires(T& t) { t -= u; } { return target() -= u, *this; }
    template <class U>
    const PagedRef& operator*=(const U& u) const requires requires(T& t) { t *= u; } { return target() *= u, *this; }
    template <class U>
    const PagedRef& operator/=(const U& u) const requires requires(T& t) { t /= u; } { return target() /= u, *this; }
    template <class U>
    const PagedRef& operator%=(const U& u) const requires requires(T& t) { t %= u; } { return target() %= u, *this; }
    template <class U>
    const PagedRef& operator&=(const U& u) const requires requires(T& t) { t &= u; } { return target() &= u, *this; }
    template <class U>
    const PagedRef& operator|=(const U& u) const requires requires(T& t) { t |= u; } { return target() |= u, *this; }
    template <class U>
    const PagedRef& operator^=(const U& u) const requires requires(T& t) { t ^= u; } { return target() ^= u, *this; }
    template <class U>
    const PagedRef& operator<<=(const U& u) const requires requires(T& t) { t <<= u; } { return target() <<= u, *this; }
    template <class U>
    const PagedRef& operator>>=(const U& u) const requires requires(T& t) { t >>= u; } { return target() >>= u, *this; }
    const PagedRef& operator++() const requires requires(T& t) { ++t; } { return ++target(), *this; }
    const PagedRef& operator--() const requires requires(T& t) { --t; } { return --target(), *this; }
    T operator++(int) const requires requires(T& t) { t++; } { return target()++; }
    T operator--(int) const requires requires(T& t) { t--; } { return target()--; }

    // Comparisons of a class T (a scalar T uses the built-in operators through the
    // conversion): those T has, on values.
    friend bool operator==(const PagedRef& x, const PagedRef& y)
        requires kClass && std::equality_comparable<T> { return static_cast<T>(x) == static_cast<T>(y); }
    friend bool operator==(const PagedRef& x, const T& y)
        requires kClass && std::equality_comparable<T> { return static_cast<T>(x) == y; }
    friend auto operator<=>(const PagedRef& x, const PagedRef& y)
        requires kClass && std::three_way_comparable<T> { return static_cast<T>(x) <=> static_cast<T>(y); }
    friend auto operator<=>(const PagedRef& x, const T& y)
        requires kClass && std::three_way_comparable<T> { return static_cast<T>(x) <=> y; }
    friend bool operator<(const PagedRef& x, const PagedRef& y)
        requires kClass && (!std::three_way_comparable<T>) && requires(const T& t) { t < t; }
    { return static_cast<T>(x) < static_cast<T>(y); }
    friend bool operator<(const PagedRef& x, const T& y)
        requires kClass && (!std::three_way_comparable<T>) && requires(const T& t) { t < t; }
    { return static_cast<T>(x) < y; }
    friend bool operator<(const T& x, const PagedRef& y)
        requires kClass && (!std::three_way_comparable<T>) && requires(const T& t) { t < t; }
    { return x < static_cast<T>(y); }

  private:
    // Whether a leaf left memory since p_ was resolved; always for a detached reference
    // (its epoch is one the pager never reaches, so the fast path tests nothing else).
    [[gnu::always_inline]] bool stale() const { return epoch_ != *ep_; }
    // p_ walked to again: its leaf loaded if needed and marked dirty, as the iterator that
    // made this reference did. pre: not detached.
    // The walk is a function of the array and the index, not of this reference: a
    // reference whose address reached an out-of-line call would be built in memory on
    // every access, fast path or not.
    [[gnu::always_inline]] void refresh() const {
        auto [p, e] = relocate(a_, i_);
        p_ = p, epoch_ = e;
    }
    struct Where {
        T* p;
        std::uint64_t epoch;
    };
    [[gnu::noinline]] static Where relocate(PagedArray<T>* a, std::size_t i) {
        const auto& s = a->shape();
        T* p = a->leaf(i >> s.leaf_shift, true) + (i & s.leaf_mask());
        return {p, a->pager().epoch()};
    }
    // The element (its address walked to again when stale), or the detached value. The
    // hot path: one compare of the epoch.
    [[gnu::always_inline]] T& target() const {
        if (stale()) [[unlikely]] {
            if (detached_) return value_;
            refresh();
        }
        return *p_;
    }

    PagedArray<T>* a_;
    std::size_t i_;
    mutable T* p_;
    mutable std::uint64_t epoch_;  // kDetached when detached
    const detail::Unaliased<std::uint64_t>* ep_;  // the pager's epoch
    bool detached_ = false;        // moved into: the value in value_, not the element's
    union {
        mutable T value_;  // only while detached
    };
};

// A random-access iterator over a PagedArray A: a cursor into its leaf's frame (the
// element's address and the leaf's end, as TreeIterator's) plus the pager's epoch when
// it was resolved (kUnresolved, which the pager never reaches, when it is not). Making an
// iterator and moving it into another leaf (++, --, +=) resolve it when that leaf is ready (present,
// and referenced — and dirty, for a non-const iterator: leaf_if_ready), else leave it
// unresolved; nothing is loaded before a *, which resolves it — one walk, loading the
// leaf if needed — when it is unresolved or the epoch moved (a leaf left memory or was
// cleaned since). So copies (algorithms pass iterators by value) start resolved.
template <class A, bool Const>
class PagedIterator {
    using T = typename A::value_type;
    using Array = std::conditional_t<Const, const A, A>;

  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;  // as vector<bool>'s: <algorithm> dispatch
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<Const, T, PagedRef<T>>;
    using pointer = std::conditional_t<Const, const T*, T*>;

    PagedIterator() = default;
    // Inlined always: an iterator whose constructor is a call lives in memory, and the loop
    // over it stores and reloads its members every element (g++ 12 made that call when the
    // translation unit grew).
    [[gnu::always_inline]] PagedIterator(Array* a, std::size_t i) noexcept : a_(a), i_(i), ep_(epoch_of(a)) {
        set(peek(a, i));
    }
    operator PagedIterator<A, true>() const noexcept
        requires(!Const)
    {
        PagedIterator<A, true> c;
        c.a_ = a_, c.i_ = i_, c.cur_ = cur_, c.lend_ = lend_, c.ep_ = ep_, c.epoch_ = epoch_;
        return c;
    }

    [[gnu::always_inline]] reference operator*() const {
        T* p = address();  // first: it refreshes epoch_
        if constexpr (Const) return *p;
        else return reference(a_, i_, p, epoch_, ep_);
    }
    // The element's address: valid until the next access to another leaf (operator[]'s rule).
    pointer operator->() const { return address(); }
    reference operator[](difference_type n) const { return *(*this + n); }
    std::size_t index() const noexcept { return i_; }
    // The array iterated (segmented algorithms, algorithm.hpp, pin its leaves).
    Array* container() const noexcept { return a_; }

    friend T iter_move(const PagedIterator& it) { return *it; }
    // Swaps through the cached addresses when resolving y evicted nothing (x's is still
    // valid), else through the references, which walk again.
    friend void iter_swap(const PagedIterator& x, const PagedIterator& y)
        requires(!Const)
    {
        T* p = x.address();
        T* q = y.address();
        if (x.epoch_ == y.epoch_) [[likely]] std::swap(*p, *q);
        else swap(*x, *y);
    }

    // The hot path: two increments and a compare with the leaf's end (the next leaf's
    // look is out of line).
    [[gnu::always_inline]] PagedIterator& operator++() noexcept {
        ++i_;
        if ((cur_ += sizeof(T)) == lend_) [[unlikely]] set(peek(a_, i_));
        return *this;
    }
    PagedIterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
    [[gnu::always_inline]] PagedIterator& operator--() noexcept {
        if (cur_ < lend_ && (i_ & a_->shape().leaf_mask()) != 0) cur_ -= sizeof(T), --i_;
        else set(peek(a_, --i_));  // into another leaf (or was unresolved)
        return *this;
    }
    PagedIterator operator--(int) noexcept { auto t = *this; --*this; return t; }
    [[gnu::always_inline]] PagedIterator& operator+=(difference_type n) noexcept {
        std::size_t j = i_ + static_cast<std::size_t>(n);
        if (cur_ < lend_ && ((j ^ i_) >> a_->shape().leaf_shift) == 0) cur_ += static_cast<std::uintptr_t>(n) * sizeof(T);
        else set(peek(a_, j));
        return i_ = j, *this;
    }
    // Inlined always, as the constructor: an iterator returned by a call is returned in
    // memory (std::sort's partition, which adds to its iterators, spilled them when g++
    // made these calls).
    [[gnu::always_inline]] PagedIterator& operator-=(difference_type n) noexcept { return *this += -n; }
    [[gnu::always_inline]] friend PagedIterator operator+(PagedIterator it, difference_type n) noexcept {
        return it += n;
    }
    [[gnu::always_inline]] friend PagedIterator operator+(difference_type n, PagedIterator it) noexcept {
        return it += n;
    }
    [[gnu::always_inline]] friend PagedIterator operator-(PagedIterator it, difference_type n) noexcept {
        return it -= n;
    }
    friend difference_type operator-(const PagedIterator& a, const PagedIterator& b) noexcept {
        return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const PagedIterator& a, const PagedIterator& b) noexcept { return a.i_ == b.i_; }
    friend auto operator<=>(const PagedIterator& a, const PagedIterator& b) noexcept { return a.i_ <=> b.i_; }

  private:
    template <class, bool>
    friend class PagedIterator;

    // A resolved cursor, computed by a function that never sees the iterator: an iterator
    // whose address reached an out-of-line call would live in memory, and the hot loop
    // would store and reload its members on every element.
    struct Pos {
        std::uintptr_t cur, lend;
        std::uint64_t epoch;
    };
    // Element i's leaf walked to (loaded if needed; marked dirty for a non-const iterator).
    [[gnu::noinline]] static Pos locate(Array* a, std::size_t i) {
        return in_leaf(a, a->leaf(i >> a->shape().leaf_shift, !Const), i);
    }
    // Element i's leaf when ready (leaf_if_ready), else unresolved; i may be past the end,
    // a null (a value-initialized iterator moved by 0).
    [[gnu::noinline]] static Pos peek(Array* a, std::size_t i) noexcept {
        if (!a) return {0, 0, kUnresolved};
        std::size_t k = i >> a->shape().leaf_shift;
        T* leaf = k < a->leaf_count() ? a->leaf_if_ready(k, !Const) : nullptr;
        return leaf ? in_leaf(a, leaf, i) : Pos{0, 0, kUnresolved};
    }
    // Element i's position in `leaf`, its leaf's frame, at the pager's epoch now.
    static Pos in_leaf(Array* a, T* leaf, std::size_t i) noexcept {
        const auto& s = a->shape();
        return {reinterpret_cast<std::uintptr_t>(leaf + (i & s.leaf_mask())),
                reinterpret_cast<std::uintptr_t>(leaf + s.leaf_len()), a->pager().epoch()};
    }
    void set(const Pos& p) const noexcept { cur_ = p.cur, lend_ = p.lend, epoch_ = p.epoch; }
    // The array's pager's epoch, or a constant one for an array moved from (no pager).
    [[gnu::always_inline]] static const detail::Unaliased<std::uint64_t>* epoch_of(Array* a) noexcept {
        static constexpr detail::Unaliased<std::uint64_t> kNone{};
        return a->leaf_count() ? a->pager().epoch_address() : &kNone;
    }
    // The hot path: the cursor when resolved and nothing left memory since.
    [[gnu::always_inline]] T* address() const {
        if (epoch_ != *ep_) [[unlikely]] set(locate(a_, i_));
        return reinterpret_cast<T*>(cur_);
    }

    Array* a_ = nullptr;
    std::size_t i_ = 0;
    static constexpr std::uint64_t kUnresolved = ~std::uint64_t{0};
    mutable std::uintptr_t cur_ = 0;   // element i_'s address while resolved (cur_ < lend_)
    mutable std::uintptr_t lend_ = 0;  // one past its leaf's last slot
    const detail::Unaliased<std::uint64_t>* ep_ = nullptr;   // the pager's epoch
    mutable std::uint64_t epoch_ = kUnresolved;  // its value when resolved
};

}  // namespace physmem

// The common reference of a PagedRef<T> and T is T (what std::indirectly_readable asks of
// a proxy reference).
template <class T, template <class> class TQ, template <class> class UQ>
struct std::basic_common_reference<physmem::PagedRef<T>, T, TQ, UQ> {
    using type = T;
};
template <class T, template <class> class TQ, template <class> class UQ>
struct std::basic_common_reference<T, physmem::PagedRef<T>, TQ, UQ> {
    using type = T;
};
