// lab/common/traced.hpp — views that run the lab's kernel templates on a Tracer.
//
// Each view has the interface the kernels use on the real structure (operator[], size(),
// iterators, for_each_segment / for_each_strided found by argument-dependent lookup) and
// touches the same addresses in the same order, recording each one:
//
//   TracedSpan<T>  over std::span<T>: operator[] and *it record the element (data).
//   TracedTree<T>  over physmem::TreeArray: operator[] records every inner-block slot the
//                  software walk loads (walk), root first, then the element (data) — the
//                  slots TreeArray::leaf_data and FixedDepthView::walk load; iterators
//                  and the per-leaf algorithms walk once per leaf they enter, then
//                  record each element, as TreeIterator and segments.hpp do.
//
// T may be const (a read-only kernel). Views are cheap to copy (the kernels copy them
// into registers, as they do spans) and valid while the structure is neither resized nor
// moved.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <span>
#include <type_traits>

#include "physmem/tree_array.hpp"
#include "tracer.hpp"

namespace lab {

// Records the element each dereference reaches: a pointer that tells the tracer.
template <class T>
class TracedPointer {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::remove_const_t<T>;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&;

    TracedPointer() noexcept = default;
    TracedPointer(T* p, Tracer* tr) noexcept : p_(p), tr_(tr) {}
    T& operator*() const {
        tr_->data(p_);
        return *p_;
    }
    TracedPointer& operator++() noexcept { return ++p_, *this; }
    TracedPointer& operator+=(difference_type n) noexcept { return p_ += n, *this; }
    friend bool operator==(const TracedPointer& a, const TracedPointer& b) noexcept { return a.p_ == b.p_; }

  private:
    T* p_ = nullptr;
    Tracer* tr_ = nullptr;
};

template <class T>
class TracedSpan {
  public:
    using value_type = std::remove_const_t<T>;

    TracedSpan(std::span<T> s, Tracer& tr) noexcept : s_(s), tr_(&tr) {}
    std::size_t size() const noexcept { return s_.size(); }
    // pre: i < size().
    T& operator[](std::size_t i) const {
        tr_->data(&s_[i]);
        return s_[i];
    }
    TracedPointer<T> begin() const noexcept { return {s_.data(), tr_}; }
    TracedPointer<T> end() const noexcept { return {s_.data() + s_.size(), tr_}; }

  private:
    std::span<T> s_;
    Tracer* tr_;
};

template <class T>
class TracedTree;

// TreeIterator's walk-once-per-leaf behaviour on a TracedTree: jumps inside a leaf move
// the pointer, crossing into another leaf walks (recorded); * records the element.
template <class T>
class TracedTreeIterator {
  public:
    TracedTreeIterator(const TracedTree<T>* t, std::size_t i) : t_(t), i_(i) { reload(); }
    T& operator*() const {
        t_->tracer().data(cur_);
        return *cur_;
    }
    TracedTreeIterator& operator++() {
        ++i_, ++cur_;
        if ((i_ & t_->shape().leaf_mask()) == 0) reload();
        return *this;
    }
    TracedTreeIterator& operator+=(std::ptrdiff_t n) {
        std::size_t j = i_ + static_cast<std::size_t>(n);
        bool same_leaf = cur_ && ((j ^ i_) >> t_->shape().leaf_shift) == 0;
        i_ = j;
        if (same_leaf) cur_ += n;
        else reload();
        return *this;
    }
    friend TracedTreeIterator operator+(TracedTreeIterator it, std::ptrdiff_t n) { return it += n; }
    friend bool operator==(const TracedTreeIterator& a, const TracedTreeIterator& b) noexcept { return a.i_ == b.i_; }

  private:
    void reload() {
        std::size_t leaf = i_ >> t_->shape().leaf_shift;
        cur_ = leaf < t_->leaf_count() ? t_->leaf_data(leaf) + (i_ & t_->shape().leaf_mask()) : nullptr;
    }
    const TracedTree<T>* t_;
    std::size_t i_;
    T* cur_ = nullptr;
};

template <class T>
class TracedTree {
  public:
    using value_type = std::remove_const_t<T>;

    TracedTree(const physmem::TreeArray<value_type>& t, Tracer& tr) noexcept
        : root_(t.root()), size_(t.size()), leaves_(t.leaf_count()), depth_(t.depth()), shape_(t.shape()),
          tr_(&tr) {}

    std::size_t size() const noexcept { return size_; }
    std::size_t leaf_count() const noexcept { return leaves_; }
    unsigned depth() const noexcept { return depth_; }
    const physmem::TreeShape& shape() const noexcept { return shape_; }
    Tracer& tracer() const noexcept { return *tr_; }

    // pre: i < size(). The walk's slots, then the element.
    T& operator[](std::size_t i) const {
        T* e = leaf_data(i >> shape_.leaf_shift) + (i & shape_.leaf_mask());
        tr_->data(e);
        return *e;
    }
    // TreeArray::leaf_data with each slot load recorded (a leaf's slot holds its entry,
    // TreeArray::leaf_entry: the leaf's address less k leaves). pre: k < leaf_count().
    T* leaf_data(std::size_t k) const {
        void* node = root_;
        for (unsigned level = depth_ - 1; level > 0; --level) {
            void** slot = &static_cast<void**>(node)[(k >> (shape_.fan_shift * (level - 1))) & shape_.fan_mask()];
            tr_->walk(slot);
            node = *slot;
        }
        return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(node) + (k << shape_.leaf_shift) * sizeof(T));
    }
    std::span<T> segment(std::size_t k) const {
        return {leaf_data(k), std::min(shape_.leaf_len(), size_ - (k << shape_.leaf_shift))};
    }
    TracedTreeIterator<T> begin() const { return {this, 0}; }
    TracedTreeIterator<T> end() const { return {this, size_}; }

  private:
    void* root_;
    std::size_t size_;
    std::size_t leaves_;
    unsigned depth_;
    physmem::TreeShape shape_;
    Tracer* tr_;
};

// physmem::with_fixed_depth on a traced tree: f(the tree itself). A FixedDepthView loads
// the same slots as operator[] (FixedDepthView::walk), so one traced walk serves both.
template <class T, class F>
decltype(auto) with_fixed_depth(const TracedTree<T>& a, F&& f) {
    return f(a);
}

// physmem::for_each_segment on a traced tree: one walk per leaf, then f(TracedSpan) over
// the leaf's elements.
template <class T, class F>
void for_each_segment(const TracedTree<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) f(TracedSpan<T>(a.segment(k), a.tracer()));
}

// physmem::for_each_strided on a traced tree: the same loop, one walk per leaf visited.
// pre: stride > 0.
template <class T, class F>
void for_each_strided(const TracedTree<T>& a, std::size_t first, std::size_t stride, F&& f) {
    const physmem::TreeShape& s = a.shape();
    std::size_t n = a.size(), i = first;
    while (i < n) {
        std::size_t k = i >> s.leaf_shift;
        T* leaf = a.leaf_data(k);
        std::size_t base = k << s.leaf_shift, end = std::min(n, base + s.leaf_len());
        for (; i < end; i += stride) {
            a.tracer().data(&leaf[i - base]);
            f(leaf[i - base]);
            if (n - i <= stride) return;
        }
    }
}

}  // namespace lab
