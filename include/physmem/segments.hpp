// physmem/segments.hpp — algorithms that take a TreeArray one leaf at a time.
//
// A loop over a tree element by element walks (or at least tests for a leaf change)
// at every step and does not vectorize. These algorithms hand each leaf to the caller
// as a std::span, so the loop inside is a plain pointer loop the compiler vectorizes;
// the walk costs once per leaf (the libc++ "segmented iterator" idea, and immer's
// for_each_chunk). They also accept any contiguous range, as one segment, so the same
// kernel runs on std::vector and TreeArray alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>

#include "physmem/tree_array.hpp"

namespace physmem {

// f(std::span<T>) once per leaf, in index order; the last span may be short.
template <class T, class F>
void for_each_segment(TreeArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) f(a.segment(k));
}
template <class T, class F>
void for_each_segment(const TreeArray<T>& a, F&& f) {
    for (std::size_t k = 0; k < a.leaf_count(); ++k) f(a.segment(k));
}

// The range form: f(std::span) for the parts of [first, last) in each leaf.
// pre: first <= last <= a.size().
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, TreeArray<typename A::value_type>>
void for_each_segment(A& a, std::size_t first, std::size_t last, F&& f) {
    const TreeShape& s = a.shape();
    while (first < last) {
        std::size_t k = first >> s.leaf_shift;
        std::size_t end = std::min(last, (k + 1) << s.leaf_shift);
        f(std::span(a.leaf_data(k) + (first & s.leaf_mask()), end - first));
        first = end;
    }
}

// Contiguous ranges are one segment.
template <class T, class F>
void for_each_segment(std::span<T> s, F&& f) {
    f(s);
}

// f(T&) for a[first], a[first + stride], ... below a.size(): a plain strided loop inside
// each leaf, one walk per leaf visited. pre: stride > 0.
template <class A, class F>
    requires std::is_same_v<std::remove_const_t<A>, TreeArray<typename A::value_type>>
void for_each_strided(A& a, std::size_t first, std::size_t stride, F&& f) {
    const TreeShape& s = a.shape();
    std::size_t n = a.size(), i = first;
    while (i < n) {
        std::size_t k = i >> s.leaf_shift;
        auto* leaf = a.leaf_data(k);
        std::size_t base = k << s.leaf_shift, end = std::min(n, base + s.leaf_len());
        for (; i < end; i += stride) {
            f(leaf[i - base]);
            if (n - i <= stride) return;
        }
    }
}

// The same over a contiguous range.
template <class T, class F>
void for_each_strided(std::span<T> s, std::size_t first, std::size_t stride, F&& f) {
    for (std::size_t i = first; i < s.size(); i += stride) {
        f(s[i]);
        if (s.size() - i <= stride) return;
    }
}

}  // namespace physmem
