// lab/kernels/scan.hpp — the seed paper's Table 2 kernels: sums of 32-bit ints.
//
// linear:  every element once, in order.
// strided: one read per 4 KiB (every 1024th int) down a "column", for `columns` columns
//          spread evenly over the 1024 offsets of a 4 KiB page (1024 columns read every
//          element once, as the paper's repeated strided scan does). Each column starts
//          at offset o and reads o, o + 1024, o + 2048, ... below n.
//
// random:  reads at indexes drawn from one xorshift sequence (the same for every layout),
//          mapped onto [0, n) by a multiply.
//
// Each kernel exists for a contiguous span and for a TreeArray read four ways:
// operator[] (a software walk per read), a fixed-depth view's operator[] (the walk with
// the depth a template parameter: with_fixed_depth), iterators (a walk per leaf crossed)
// and per-leaf loops (for_each_segment / for_each_strided). Sums are uint64: no overflow
// below 2^32 elements of any value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "physmem/fixed_depth.hpp"
#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"

namespace lab::scan {

using Elem = std::uint32_t;
using Tree = physmem::TreeArray<Elem>;
inline constexpr std::size_t kStride = 4096 / sizeof(Elem);

// The value stored at index i: varied, so a wrong index changes the sum.
constexpr Elem value_at(std::size_t i) noexcept { return static_cast<Elem>(i * 2654435761u) >> 7; }

// The first element of each of `columns` columns (pre: 1 <= columns <= kStride), evenly
// spread over one 4 KiB page.
inline std::vector<std::size_t> column_offsets(std::size_t columns) {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < columns; ++j) out.push_back(j * kStride / columns);
    return out;
}

// Reads a strided pass makes: the elements of the chosen columns below n.
inline std::uint64_t strided_reads(std::size_t n, const std::vector<std::size_t>& offsets) {
    std::uint64_t reads = 0;
    for (std::size_t o : offsets)
        if (o < n) reads += (n - o + kStride - 1) / kStride;
    return reads;
}

// The expected sum of a pass, from the values written (no array needed).
inline std::uint64_t expected_linear(std::size_t n) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += value_at(i);
    return s;
}
inline std::uint64_t expected_strided(std::size_t n, const std::vector<std::size_t>& offsets) {
    std::uint64_t s = 0;
    for (std::size_t o : offsets)
        for (std::size_t i = o; i < n; i += kStride) s += value_at(i);
    return s;
}

// ---- linear -------------------------------------------------------------------------
// Kernels are templates over the array (a std::span<const Elem> or a traced view of one)
// and the tree (Tree or a traced view, lab/common/traced.hpp); the per-leaf algorithms
// and with_fixed_depth are found by argument-dependent lookup for the traced views.

template <class Array>
std::uint64_t linear(const Array& a) noexcept(std::is_same_v<Array, std::span<const Elem>>) {
    std::uint64_t s = 0;
    for (Elem x : a) s += x;
    return s;
}
template <class A>
std::uint64_t linear_index(const A& a) noexcept(std::is_same_v<A, Tree>) {
    std::uint64_t s = 0;
    for (std::size_t i = 0, n = a.size(); i < n; ++i) s += a[i];
    return s;
}
template <class A>
std::uint64_t linear_iter(const A& a) noexcept(std::is_same_v<A, Tree>) {
    std::uint64_t s = 0;
    for (Elem x : a) s += x;
    return s;
}
template <class A>
std::uint64_t linear_fixed(const A& a) {
    using physmem::with_fixed_depth;
    return with_fixed_depth(a, [](auto view) {
        std::uint64_t s = 0;
        for (std::size_t i = 0, n = view.size(); i < n; ++i) s += view[i];
        return s;
    });
}
template <class A>
std::uint64_t linear_seg(const A& a) noexcept(std::is_same_v<A, Tree>) {
    using physmem::for_each_segment;
    std::uint64_t s = 0;
    for_each_segment(a, [&s](auto seg) { s += linear(seg); });
    return s;
}

// ---- strided ------------------------------------------------------------------------

template <class Array>
std::uint64_t strided(const Array& a, const std::vector<std::size_t>& offsets) noexcept(
    std::is_same_v<Array, std::span<const Elem>>) {
    std::uint64_t s = 0;
    for (std::size_t o : offsets)
        for (std::size_t i = o; i < a.size(); i += kStride) s += a[i];
    return s;
}
template <class A>
std::uint64_t strided_index(const A& a, const std::vector<std::size_t>& offsets) noexcept(std::is_same_v<A, Tree>) {
    std::uint64_t s = 0;
    for (std::size_t o : offsets)
        for (std::size_t i = o, n = a.size(); i < n; i += kStride) s += a[i];
    return s;
}
template <class A>
std::uint64_t strided_fixed(const A& a, const std::vector<std::size_t>& offsets) {
    using physmem::with_fixed_depth;
    return with_fixed_depth(a, [&offsets](auto view) {
        std::uint64_t s = 0;
        for (std::size_t o : offsets)
            for (std::size_t i = o, n = view.size(); i < n; i += kStride) s += view[i];
        return s;
    });
}
template <class A>
std::uint64_t strided_iter(const A& a, const std::vector<std::size_t>& offsets) noexcept(std::is_same_v<A, Tree>) {
    std::uint64_t s = 0;
    for (std::size_t o : offsets) {
        if (o >= a.size()) continue;
        auto it = a.begin() + static_cast<std::ptrdiff_t>(o);
        for (std::size_t i = o, n = a.size(); i < n; i += kStride, it += kStride) s += *it;
    }
    return s;
}
template <class A>
std::uint64_t strided_seg(const A& a, const std::vector<std::size_t>& offsets) noexcept(std::is_same_v<A, Tree>) {
    using physmem::for_each_strided;
    std::uint64_t s = 0;
    for (std::size_t o : offsets)
        if (o < a.size()) for_each_strided(a, o, kStride, [&s](const Elem& x) { s += x; });
    return s;
}

// ---- random -------------------------------------------------------------------------

// Random reads a pass makes over n elements: n/8, at least min(n, 64K).
inline std::uint64_t random_reads(std::size_t n) noexcept {
    return std::max<std::uint64_t>(n / 8, std::min<std::uint64_t>(n, 1u << 16));
}

// The index sequence: xorshift64 from a fixed seed, r -> floor(r * n / 2^64).
struct RandomIndex {
    std::uint64_t s = 0x9E3779B97F4A7C15ull;
    std::size_t next(std::size_t n) noexcept {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<std::size_t>((static_cast<unsigned __int128>(s) * n) >> 64);
    }
};

// Sum of `count` reads at the sequence's indexes, through `at(i)`.
template <class At>
std::uint64_t random_sum(std::size_t n, std::uint64_t count, At at) {
    std::uint64_t s = 0;
    RandomIndex r;
    for (std::uint64_t k = 0; k < count; ++k) s += at(r.next(n));
    return s;
}
inline std::uint64_t expected_random(std::size_t n, std::uint64_t count) {
    return random_sum(n, count, [](std::size_t i) { return std::uint64_t{value_at(i)}; });
}
template <class Array>
std::uint64_t random(const Array& a, std::uint64_t count) {
    return random_sum(a.size(), count, [a](std::size_t i) { return a[i]; });
}
template <class A>
std::uint64_t random_index(const A& a, std::uint64_t count) {
    return random_sum(a.size(), count, [&a](std::size_t i) { return a[i]; });
}
template <class A>
std::uint64_t random_fixed(const A& a, std::uint64_t count) {
    using physmem::with_fixed_depth;
    return with_fixed_depth(a, [count](auto view) {
        return random_sum(view.size(), count, [&view](std::size_t i) { return view[i]; });
    });
}

}  // namespace lab::scan
