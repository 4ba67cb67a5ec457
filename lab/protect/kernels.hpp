// lab/protect/kernels.hpp — the protect suite's kernels (issue 24, item 5): the lab's access
// patterns written once over any container — a contiguous std::span, a TreeArray, or a
// CheckedTreeArray (every access checked) — so checked and unchecked run the same source.
//
// Each kernel is a noinline function template: the loop the compiler builds for it is
// the one a user's function of the same body gets, and the checked and the unchecked
// instantiations differ only in the container's accessors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/blackscholes.hpp"
#include "physmem/checked_tree_array.hpp"  // its for_each_segment overloads
#include "physmem/segments.hpp"

namespace lab::protect {

using Word = std::uint64_t;

// Sum of every element through for_each_segment (one check a leaf when checked).
template <class C>
[[gnu::noinline]] Word segments(const C& a) {
    Word s = 0;
    physmem::for_each_segment(a, [&s](auto span) {
        for (Word v : span) s += v;
    });
    return s;
}

// Sum through the iterators (a check an element when checked: one load and one compare).
template <class C>
[[gnu::noinline]] Word iterator(const C& a) {
    Word s = 0;
    for (auto it = a.begin(), e = a.end(); it != e; ++it) s += *it;
    return s;
}

// Sum through a[i] (bounds and the leaf's tag every access when checked).
template <class C>
[[gnu::noinline]] Word index(const C& a) {
    Word s = 0;
    for (std::size_t i = 0, n = a.size(); i < n; ++i) s += a[i];
    return s;
}

// `steps` dependent loads a[a[...a[start]]]: the pointer chase over slot numbers.
// pre: every element is a slot number below a.size().
template <class C>
[[gnu::noinline]] Word chase(const C& a, Word start, std::uint64_t steps) {
    Word cur = start;
    for (std::uint64_t s = 0; s < steps; ++s) cur = a[cur];
    return cur;
}

// `updates` random read-xor-writes a[r] ^= x, one at a time (GUPS without look-ahead):
// x from xorshift64 seeded with `seed`, r its multiply-shift into [0, size). Two passes
// with one seed leave the array as it was. Returns the last x.
template <class C>
[[gnu::noinline]] Word gups(C& a, std::uint64_t updates, Word seed) {
    const unsigned __int128 n = a.size();
    Word x = seed;
    for (std::uint64_t k = 0; k < updates; ++k) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[static_cast<std::size_t>((x * n) >> 64)] ^= x;
    }
    return x;
}

// Prices every option once, a leaf at a time (array of structs; lab/kernels/blackscholes.hpp).
template <class O>
[[gnu::noinline]] Word blackscholes(O& opts) {
    physmem::for_each_segment(opts, [](auto span) { lab::blackscholes::price_aos(span); });
    return 0;
}

}  // namespace lab::protect
