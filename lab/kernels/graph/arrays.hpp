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
// Ranges are read a piece at a time (RangeReader, below): on a TreeArray or PagedArray
// each leaf's part of the range is handed over as one std::span (one walk per leaf, not
// per element), on a contiguous array the range is one span.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "physmem/fixed_depth.hpp"
#include "physmem/paged_array.hpp"
#include "physmem/pinned.hpp"
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

// f(a), or on a TreeArray f(its physmem::FixedDepthView): the tree's depth dispatched once
// for the call (physmem::with_fixed_depth), so a loop of random a[i] walks without a test
// of the depth at each (CC's hooking loop through TreeArray::operator[] ran 1.21-1.30x
// the contiguous arrays' time, 1.04-1.08x through the view: physmem_lab_graph --variant
// tree-thp --size 64M --param pair=on, three processes each). On a PagedArray whose
// budget holds all its leaves, f(the same view over its frames, all pinned for the call:
// physmem::with_pinned), else f(a): operator[] paid a load of the table's address, a tag
// test and a call on its slow path at each a[i] (CC at 1.29-1.37x the arrays beside it,
// 0.95-1.01x through the view; PageRank 1.26x, 1.02x: --variant paged-thp --reps 8
// --min-rep-ms 0, three processes alternated with the old binary). For the one array a
// kernel's hot loop reads at random (each call instantiates f once per depth); the view
// has operator[] and size() only, valid while the array is neither resized nor its blocks
// moved.
template <class A, class F>
decltype(auto) with_walk(A& a, F&& f) {
    if constexpr (requires { physmem::with_fixed_depth(a, f); }) return physmem::with_fixed_depth(a, std::forward<F>(f));
    else if constexpr (requires { physmem::with_pinned(a, f); }) return physmem::with_pinned(a, std::forward<F>(f));
    else return f(a);
}

// Arrays whose leaves can leave memory (PagedArray): nothing of theirs is held between calls.
template <class A>
concept Paged = Segmented<A> && requires(const A& a) { a.pager(); };

// sum + a[at[0]] + a[at[1]] + ..., added in that order. On a PagedArray the inner loop
// reads only elements that are ready (PagedArray::element_if_ready: present and
// referenced, no call) and leaves it at the first that is not, which one load (the walk's slow path, a
// call) brings in: an x86-64 call clobbers every vector register, and with one in the
// adding loop g++ keeps a floating-point sum in memory, a store and a reload an element
// (measured: PageRank's pull at 4x the TreeArray's time).
template <class A, class I>
[[gnu::always_inline]] inline element_t<A> sum_at(const A& a, std::span<const I> at, element_t<A> sum) {
    if constexpr (Paged<A>) {
        for (std::size_t j = 0, n = at.size(); j < n; ++j) {
            for (; j < n; ++j) {
                const element_t<A>* x = a.element_if_ready(at[j], false);
                if (!x) [[unlikely]] break;
                sum += *x;
            }
            if (j < n) sum += load(a, at[j]);
        }
    } else {
        for (I i : at) sum += load(a, i);
    }
    return sum;
}

// Reads ranges that mostly follow one another through the same leaf (a CSR's lists read
// in vertex order) a piece at a time: piece(first, last) is the part of [first, last) in
// first's leaf, as a std::span, and a piece inside the leaf the reader last reached costs
// two compares instead of a walk (TreeArray) or a pin and an unpin (PagedArray, each a lock).
//   TreeArray   the last leaf's bounds and address are kept; a piece outside it walks.
//               Valid while the array is neither resized nor its blocks moved (the
//               kernels only read it).
//   PagedArray  a piece is handed over from the leaf's frame right after its walk (pins
//               nothing, takes no lock on a hit; a PagedArray has its own pager, so only an
//               access to it or a prefetch() of it could evict the leaf meanwhile); the last
//               leaf is kept as TreeArray's is while the pager's epoch says no leaf has left
//               memory since.
//   contiguous  the whole range.
// A piece stays valid until the next access to the array or prefetch() of it: a loop over
// a piece must make neither (on a PagedArray either may evict its leaf).
// The loops over pieces are the caller's own, with the piece a value: a callback handed
// to an out-of-line walk would make whatever it captures live in memory, and an index
// kept there chains every element of the loop through a store and a load (SSSP's
// weighted loop ran 1.4x the contiguous arrays' time on a TreeArray that way).
template <class A>
class RangeReader {
    using T = element_t<A>;
    static_assert(Segmented<A> || Contiguous<A>, "RangeReader: a TreeArray, a PagedArray or a contiguous array");

  public:
    explicit RangeReader(const A& a) : a_(a) {}

    // The part of [first, last) in first's leaf (all of it on a contiguous array).
    // pre: first < last <= a.size().
    std::span<const T> piece(std::size_t first, std::size_t last) {
        if constexpr (Contiguous<A> && !Segmented<A>) {
            return {a_.data() + first, last - first};
        } else {
            bool kept = first >= lo_ && first < hi_;
            if constexpr (Paged<A>) kept = kept && epoch_ == a_.pager().epoch();
            if (!kept) [[unlikely]] reach(first);
            return {base_ + (first - lo_), std::min(last, hi_) - first};
        }
    }

    // f(std::span<const T>) for the pieces of [first, last) in order until f returns true;
    // returns whether it did. f must not access the array nor prefetch() it.
    // pre: first <= last <= a.size().
    template <class F>
    bool scan(std::size_t first, std::size_t last, F&& f) {
        while (first < last) {
            const std::span<const T> s = piece(first, last);
            if (f(s)) return true;
            first += s.size();
        }
        return false;
    }

  private:
    // The leaf holding `first` becomes the kept one (a PagedArray's loaded when it is out).
    void reach(std::size_t first) {
        const auto& s = a_.shape();
        const std::size_t k = first >> s.leaf_shift;
        if constexpr (Paged<A>) {
            base_ = a_.leaf(k, false);
            epoch_ = a_.pager().epoch();  // after the walk, which may have evicted
        } else {
            base_ = a_.leaf_data(k);
        }
        lo_ = k << s.leaf_shift;
        hi_ = std::min(a_.size(), lo_ + s.leaf_len());
    }

    const A& a_;
    std::size_t lo_ = 1, hi_ = 0;  // the kept leaf's index range (empty at first)
    const T* base_ = nullptr;      // and its first element
    std::uint64_t epoch_ = 0;      // PagedArray: the pager's epoch when it was reached
};

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
