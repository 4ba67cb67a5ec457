// lab/kernels/graph/arrays.hpp — element and range access that is correct on every array
// the graph kernels run on: std::span<T>, physmem::TreeArray<T>, physmem::PagedArray<T>.
//
// The one rule (PagedArray's): a reference from operator[] dies at the next access to
// another leaf of the same array, which may evict its leaf. So an element is read into a
// value (load: the copy is made inside the call, before any other access) and written
// from a value (store); no reference outlives its statement. Reads go through the const
// operator[], so a PagedArray leaf that is only read stays clean (dropped, not written,
// when evicted).
//
// Ranges are read a segment at a time (scan): on a TreeArray or PagedArray each leaf's
// part of the range is handed over as one std::span by physmem::for_each_segment's range
// form (one walk per leaf, not per element; a PagedArray pins the leaf meanwhile), on a
// contiguous array the range is one span.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/paged_array.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace lab::graph {

// The element type of an array with operator[].
template <class A>
using element_t = std::remove_cvref_t<decltype(std::declval<const A&>()[0])>;

// a[i] by value. pre: i < a.size().
template <class A>
element_t<A> load(const A& a, std::size_t i) {
    return a[i];
}
// a[i] = v. pre: i < a.size().
template <class A>
void store(A& a, std::size_t i, element_t<A> v) {
    a[i] = v;
}

// Arrays stored in leaves, with physmem::for_each_segment's range form (TreeArray,
// PagedArray).
template <class A>
concept Segmented = requires(const A& a, std::size_t i) {
    { a.leaf_length() } -> std::convertible_to<std::size_t>;
    physmem::for_each_segment(a, i, i, [](std::span<const element_t<A>>) {});
};
template <class A>
concept Contiguous = requires(const A& a) {
    { a.data() } -> std::convertible_to<const element_t<A>*>;
};

// f(std::span<const T>) for the pieces of a[first, last) in index order — one per leaf
// touched, or the whole range on a contiguous array — until f returns true. Returns
// whether f did (the range was left early). pre: first <= last <= a.size().
template <class A, class F>
bool scan(const A& a, std::size_t first, std::size_t last, F&& f) {
    using T = element_t<A>;
    if constexpr (Segmented<A>) {
        const std::size_t leaf = a.leaf_length();  // a power of two
        bool stop = false;
        while (first < last && !stop) {
            const std::size_t end = std::min(last, (first / leaf + 1) * leaf);
            physmem::for_each_segment(a, first, end, [&](std::span<const T> s) { stop = f(s); });
            first = end;
        }
        return stop;
    } else if constexpr (Contiguous<A>) {
        return first < last && f(std::span<const T>(a.data() + first, last - first));
    } else {
        for (; first < last; ++first) {
            const T x = a[first];
            if (f(std::span<const T>(&x, 1))) return true;
        }
        return false;
    }
}

// Every element = v.
template <class A>
void fill(A& a, element_t<A> v) {
    physmem::for_each_segment(a, [v](auto s) { std::fill(s.begin(), s.end(), v); });
}
// a = src, element by element. pre: a.size() == src.size().
template <class A>
void copy_in(A& a, std::span<const element_t<A>> src) {
    std::size_t at = 0;
    physmem::for_each_segment(a, [&](auto s) {
        std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(at), s.size(), s.begin());
        at += s.size();
    });
}
// A copy of a's elements, for the validators.
template <class A>
std::vector<element_t<A>> to_vector(const A& a) {
    std::vector<element_t<A>> out;
    out.reserve(a.size());
    physmem::for_each_segment(a, [&](auto s) { out.insert(out.end(), s.begin(), s.end()); });
    return out;
}

}  // namespace lab::graph
