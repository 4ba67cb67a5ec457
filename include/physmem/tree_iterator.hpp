// physmem/tree_iterator.hpp — a random-access iterator that caches its leaf.
//
// The software page-walk cache of the seed paper: the iterator holds a pointer to its
// element and the end of its leaf, so * is a load and ++ an increment and one compare
// against the leaf's end (== compares the element pointers): the loop the compiler sees is
// a pointer loop with one extra, predictable, test. Crossing into another leaf walks the
// tree once (depth-1 loads); jumps that stay inside the leaf cost what a pointer's do.
// Satisfies std::random_access_iterator (contiguous only within a leaf), so <algorithm>
// and <ranges> work on TreeArray; physmem/algorithm.hpp runs them leaf by leaf.
//
// Representation: cur_ points at the element, lend_ one past the leaf's last slot, base_
// is the index of the leaf's first element. An index at a leaf boundary always sits at
// the start of the next leaf; the one past the last leaf (size() a multiple of the leaf
// length) has cur_ = lend_ = null and base_ = that index, so no two positions share a
// pointer (another block may start where the last leaf ends).
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <type_traits>

namespace physmem {

template <class Container, bool Const>
class TreeIterator {
    using C = std::conditional_t<Const, const Container, Container>;
    using T = typename Container::value_type;

  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;

    TreeIterator() noexcept = default;
    TreeIterator(C* a, std::size_t i) noexcept : a_(a) { seek(i); }
    // iterator -> const_iterator
    template <bool WasConst, class = std::enable_if_t<Const && !WasConst>>
    TreeIterator(const TreeIterator<Container, WasConst>& o) noexcept
        : a_(o.a_), cur_(o.cur_), lend_(o.lend_), base_(o.base_) {}

    reference operator*() const noexcept { return *cur_; }
    pointer operator->() const noexcept { return cur_; }
    reference operator[](difference_type n) const noexcept { return *(*this + n); }
    std::size_t index() const noexcept { return cur_ ? base_ + len() - static_cast<std::size_t>(lend_ - cur_) : base_; }
    // The array iterated (segmented algorithms, algorithm.hpp, walk its leaves).
    C* container() const noexcept { return a_; }

    // The hot path: an increment and a compare with the leaf's end; the next leaf's walk is
    // out of line (next_leaf), so the loop keeps cur_ and lend_ in registers. always_inline:
    // GCC would otherwise split the rare branch off into a function taking `this` (partial
    // inlining), and an iterator whose address escapes lives in memory.
    [[gnu::always_inline]] TreeIterator& operator++() noexcept {
        if (++cur_ == lend_) [[unlikely]] set(next_leaf(a_, base_ + len()));  // crossed into the next leaf
        return *this;
    }
    TreeIterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
    [[gnu::always_inline]] TreeIterator& operator--() noexcept {
        if (!cur_ || cur_ == lend_ - len()) [[unlikely]] seek(index() - 1);
        else --cur_;
        return *this;
    }
    TreeIterator operator--(int) noexcept { auto t = *this; --*this; return t; }

    [[gnu::always_inline]] TreeIterator& operator+=(difference_type n) noexcept {
        if (cur_ && n < lend_ - cur_ && -n <= cur_ - (lend_ - len())) cur_ += n;  // same leaf
        else seek(index() + static_cast<std::size_t>(n));
        return *this;
    }
    TreeIterator& operator-=(difference_type n) noexcept { return *this += -n; }
    friend TreeIterator operator+(TreeIterator it, difference_type n) noexcept { return it += n; }
    friend TreeIterator operator+(difference_type n, TreeIterator it) noexcept { return it += n; }
    friend TreeIterator operator-(TreeIterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const TreeIterator& a, const TreeIterator& b) noexcept {
        return static_cast<difference_type>(a.index() - b.index());
    }
    friend bool operator==(const TreeIterator& a, const TreeIterator& b) noexcept {
        return a.cur_ == b.cur_ && (a.cur_ || a.base_ == b.base_);
    }
    friend auto operator<=>(const TreeIterator& a, const TreeIterator& b) noexcept { return a.index() <=> b.index(); }

  private:
    template <class, bool>
    friend class TreeIterator;

    std::size_t len() const noexcept { return a_->shape().leaf_len(); }

    // A position (the three members), computed by functions that never see the iterator:
    // an iterator whose address reached an out-of-line call would live in memory, and the
    // hot loop would store and reload cur_ on every element.
    struct Pos {
        pointer cur, lend;
        std::size_t base;
    };
    void set(const Pos& p) noexcept { cur_ = p.cur, lend_ = p.lend, base_ = p.base; }
    // Index i: its leaf when allocated, else the null position past the last leaf.
    [[gnu::noinline]] static Pos locate(C* a, std::size_t i) noexcept {
        const auto& s = a->shape();
        std::size_t k = i >> s.leaf_shift;
        if (k >= a->leaf_count()) return {nullptr, nullptr, i};
        pointer leaf = a->leaf_data(k);
        return {leaf + (i & s.leaf_mask()), leaf + s.leaf_len(), k << s.leaf_shift};
    }
    // ++ leaving a leaf: rare (once per leaf_length() elements), kept out of the loop.
    [[gnu::cold, gnu::noinline]] static Pos next_leaf(C* a, std::size_t i) noexcept { return locate(a, i); }
    void seek(std::size_t i) noexcept { set(locate(a_, i)); }

    C* a_ = nullptr;
    pointer cur_ = nullptr;
    pointer lend_ = nullptr;
    std::size_t base_ = 0;
};

}  // namespace physmem
