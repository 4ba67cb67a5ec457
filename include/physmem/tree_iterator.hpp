// physmem/tree_iterator.hpp — a random-access iterator that caches its leaf.
//
// The software page-walk cache of the seed paper: the iterator keeps a pointer to its
// element, so ++, --, * and jumps that stay inside the leaf cost what a pointer's do;
// crossing into another leaf walks the tree once (depth-1 loads). Satisfies
// std::random_access_iterator, so <algorithm> and <ranges> work on TreeArray.
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
    TreeIterator(C* a, std::size_t i) noexcept : a_(a), i_(i) { reload(); }
    // iterator -> const_iterator
    template <bool WasConst, class = std::enable_if_t<Const && !WasConst>>
    TreeIterator(const TreeIterator<Container, WasConst>& o) noexcept : a_(o.a_), i_(o.i_), cur_(o.cur_) {}

    reference operator*() const noexcept { return *cur_; }
    pointer operator->() const noexcept { return cur_; }
    reference operator[](difference_type n) const noexcept { return *(*this + n); }
    std::size_t index() const noexcept { return i_; }
    // The array iterated (segmented algorithms, algorithm.hpp, walk its leaves).
    C* container() const noexcept { return a_; }

    TreeIterator& operator++() noexcept {
        ++i_;
        ++cur_;
        if ((i_ & mask()) == 0) reload();  // crossed into the next leaf
        return *this;
    }
    TreeIterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
    TreeIterator& operator--() noexcept {
        bool crossing = (i_ & mask()) == 0;
        --i_;
        if (crossing) reload();
        else --cur_;
        return *this;
    }
    TreeIterator operator--(int) noexcept { auto t = *this; --*this; return t; }

    TreeIterator& operator+=(difference_type n) noexcept {
        std::size_t j = i_ + static_cast<std::size_t>(n);
        bool same_leaf = cur_ && ((j ^ i_) >> a_->shape().leaf_shift) == 0;
        i_ = j;
        if (same_leaf) cur_ += n;
        else reload();
        return *this;
    }
    TreeIterator& operator-=(difference_type n) noexcept { return *this += -n; }
    friend TreeIterator operator+(TreeIterator it, difference_type n) noexcept { return it += n; }
    friend TreeIterator operator+(difference_type n, TreeIterator it) noexcept { return it += n; }
    friend TreeIterator operator-(TreeIterator it, difference_type n) noexcept { return it -= n; }
    friend difference_type operator-(const TreeIterator& a, const TreeIterator& b) noexcept {
        return static_cast<difference_type>(a.i_ - b.i_);
    }
    friend bool operator==(const TreeIterator& a, const TreeIterator& b) noexcept { return a.i_ == b.i_; }
    friend auto operator<=>(const TreeIterator& a, const TreeIterator& b) noexcept { return a.i_ <=> b.i_; }

  private:
    template <class, bool>
    friend class TreeIterator;

    std::size_t mask() const noexcept { return a_->shape().leaf_mask(); }
    // Walk to the leaf of i_; null past the last allocated leaf (an end iterator).
    void reload() noexcept {
        std::size_t leaf = i_ >> a_->shape().leaf_shift;
        cur_ = leaf < a_->leaf_count() ? a_->leaf_data(leaf) + (i_ & mask()) : nullptr;
    }

    C* a_ = nullptr;
    std::size_t i_ = 0;
    pointer cur_ = nullptr;
};

}  // namespace physmem
