// physmem/fixed_depth.hpp — dispatch on a tree's depth once, then walk without tests.
//
// The seed blog's "No Branches" result: a tree whose depth is known at compile time is
// walked by straight-line code (D-1 loads, shifts and masks), which the compiler inlines
// and schedules freely. with_fixed_depth reads the depth once and calls f with a view
// whose depth is a template parameter:
//
//   physmem::with_fixed_depth(a, [&](auto view) {
//       for (std::size_t i = 0; i < view.size(); ++i) sum += view[i];
//   });
#pragma once

#include <cstddef>
#include <stdexcept>
#include <utility>

#include "physmem/tree_array.hpp"

namespace physmem {

// The largest depth with its own instantiation; deeper trees (more than 2^54 elements
// for any block size) are rejected by with_fixed_depth.
inline constexpr unsigned kMaxFixedDepth = 8;

// A non-owning view of a TreeArray<T> of depth D (D >= 1). Valid while the array is
// neither resized nor destroyed.
template <class T, unsigned D>
class FixedDepthView {
  public:
    using value_type = T;
    static constexpr unsigned depth = D;

    template <class A>
    explicit FixedDepthView(A& a) noexcept
        : root_(a.root()), size_(a.size()), leaf_shift_(a.shape().leaf_shift), fan_shift_(a.shape().fan_shift) {}

    std::size_t size() const noexcept { return size_; }
    // pre: i < size(). D-1 dependent loads, no branches: the leaf's entry (TreeArray::
    // leaf_entry) plus i elements.
    T& operator[](std::size_t i) const noexcept {
        return *reinterpret_cast<T*>(entry(i >> leaf_shift_) + i * sizeof(T));
    }
    // First element of leaf `leaf`.
    T* walk(std::size_t leaf) const noexcept {
        return reinterpret_cast<T*>(entry(leaf) + (leaf << leaf_shift_) * sizeof(T));
    }

  private:
    std::uintptr_t entry(std::size_t leaf) const noexcept {
        return step(root_, leaf, std::make_integer_sequence<unsigned, D - 1>{});
    }
    template <unsigned... L>
    std::uintptr_t step(void* node, std::size_t leaf, std::integer_sequence<unsigned, L...>) const noexcept {
        std::size_t mask = (std::size_t{1} << fan_shift_) - 1;
        // level D-1-L for L = 0..D-2: the root first, leaves' parents last
        ((node = static_cast<void**>(node)[(leaf >> (fan_shift_ * (D - 2 - L))) & mask]), ...);
        return reinterpret_cast<std::uintptr_t>(node);
    }

    void* root_;
    // (tree_shape.hpp: Unaliased, so a loop storing elements keeps them in registers)
    detail::Unaliased<std::size_t> size_;
    detail::Unaliased<unsigned> leaf_shift_;
    detail::Unaliased<unsigned> fan_shift_;
};

namespace detail {
template <unsigned D, class T, class A, class F>
decltype(auto) dispatch_depth(A& a, F&& f) {
    if constexpr (D > kMaxFixedDepth) {
        throw std::length_error("physmem::with_fixed_depth: tree deeper than kMaxFixedDepth");
        return f(FixedDepthView<T, 1>(a));  // for the return type only
    } else {
        if (a.depth() <= D) return f(FixedDepthView<T, D>(a));
        return dispatch_depth<D + 1, T>(a, std::forward<F>(f));
    }
}
}  // namespace detail

// Calls f(FixedDepthView<T, a.depth()>) — one dispatch for the whole call. An empty
// array gets a depth-1 view of size 0. f must return the same type for every depth.
template <class T, class F>
decltype(auto) with_fixed_depth(TreeArray<T>& a, F&& f) {
    return detail::dispatch_depth<1, T>(a, std::forward<F>(f));
}
template <class T, class F>
decltype(auto) with_fixed_depth(const TreeArray<T>& a, F&& f) {
    return detail::dispatch_depth<1, const T>(a, std::forward<F>(f));
}

}  // namespace physmem
