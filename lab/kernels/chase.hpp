// lab/kernels/chase.hpp — pointer chase over a random cyclic permutation.
//
// The table holds n 64-bit slot numbers, next = t[cur]: a chain of dependent loads, so
// every step pays the whole latency of the load (and, on a tree, of its walk).
//
// The permutation is one cycle through all n slots in a seeded pseudo-random order
// o(0), o(1), ..., o(n-1): linking t[o(k)] = o(k+1) (o(n-1) back to o(0)) makes the
// cycle. o is a bijection computed on the fly (multiply-xorshift rounds, cycle-walked
// into [0, n)), not a shuffled vector: no second n-word array and no shuffle, whose random
// swaps took seconds at 1 GiB here. Keeping the order, instead of Sattolo's in-place
// swaps, also makes the cycle cheap to check without a dependent walk of n steps:
// `is_single_cycle` proves it from n independent reads (o being a bijection). A chase from o(0) is at
// o(s mod n) after s steps.
//
// Every function takes the table as `Table&` with operator[] and size() (std::span,
// TreeArray, FixedDepthView): the same code on every variant.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/random.hpp"

namespace lab::chase {

// A seeded pseudo-random bijection of [0, n). Four rounds of x = (x ^ a) * m (m odd)
// and x ^= x >> (b/2), all modulo 2^b, permute the integers of b = bit_width(n - 1)
// bits (each step is invertible); cycle-walking (applying it again while the result is
// >= n) restricts that to a bijection of [0, n): no walk when n is a power of two, under
// 2 rounds on average otherwise. A few ns per slot, independent across slots.
// pre: n > 0.
class RandomOrder {
  public:
    RandomOrder(std::uint64_t n, std::uint64_t seed) noexcept : n_(n) {
        unsigned bits = std::max(1u, static_cast<unsigned>(std::bit_width(n - 1)));
        mask_ = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
        shift_ = (bits + 1) / 2;
        for (auto& r : round_) r = {rnd::next(seed) & mask_, rnd::next(seed) | 1};
    }
    std::uint64_t size() const noexcept { return n_; }
    // The k-th slot of the cycle. pre: k < size().
    std::uint64_t operator()(std::uint64_t k) const noexcept {
        do k = permute(k);
        while (k >= n_);
        return k;
    }

  private:
    struct Round {
        std::uint64_t add, mul;  // mul odd
    };
    std::uint64_t permute(std::uint64_t x) const noexcept {
        for (const Round& r : round_) {
            x = ((x ^ r.add) * r.mul) & mask_;
            x ^= x >> shift_;
        }
        return x;
    }
    std::uint64_t n_;
    std::uint64_t mask_ = 0;
    unsigned shift_ = 1;
    Round round_[4]{};
};

// A copy of a cheap view (span, FixedDepthView) the compiler keeps in registers; a
// TreeArray is used in place (copying it is deep).
template <class Table>
decltype(auto) local_view(Table& t) noexcept {
    if constexpr (std::is_trivially_copyable_v<Table>) return Table(static_cast<const Table&>(t));
    else return (t);
}

// t[o(k)] = o(k + 1), t[o(n-1)] = o(0). pre: t.size() == o.size().
template <class Table>
void link(Table& table, const RandomOrder& o) noexcept {
    decltype(auto) t = local_view(table);
    const std::uint64_t n = o.size();
    std::uint64_t first = o(0), cur = first;
    for (std::uint64_t k = 1; k < n; ++k) {
        std::uint64_t next = o(k);
        t[cur] = next;
        cur = next;
    }
    t[cur] = first;
}

// A cheap run-time guard on o being a permutation of 0..n-1 (it is one by construction,
// and the tests check it value by value): the sum and the sum of squares of o(k)
// (mod 2^64) equal those of 0..n-1.
inline bool sums_match(const RandomOrder& o) noexcept {
    const std::uint64_t n = o.size();
    std::uint64_t s1 = 0, s2 = 0, w1 = 0, w2 = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
        std::uint64_t v = o(k);
        s1 += v, s2 += v * v, w1 += k, w2 += k * k;
    }
    return s1 == w1 && s2 == w2;
}

// true when t is one cycle through all n slots, given that o is a bijection of
// [0, n): every link t[o(k)] == o(k+1 mod n) holds in t, so following t from o(0)
// visits o(0), o(1), ..., o(n-1) and comes back. The links are read kBatch at a time,
// prefetched first, so the n reads overlap. pre: t.size() == o.size().
template <class Table>
bool is_single_cycle(Table& table, const RandomOrder& o) {
    decltype(auto) t = local_view(table);
    constexpr std::uint64_t kBatch = 64;
    const std::uint64_t n = o.size();
    std::uint64_t slot[kBatch + 1], bad = 0;
    for (std::uint64_t k = 0; k < n; k += kBatch) {
        const std::uint64_t m = std::min(kBatch, n - k);
        for (std::uint64_t i = 0; i <= m; ++i) slot[i] = o(k + i < n ? k + i : k + i - n);
        for (std::uint64_t i = 0; i < m; ++i) __builtin_prefetch(&t[slot[i]]);
        for (std::uint64_t i = 0; i < m; ++i) bad |= t[slot[i]] ^ slot[i + 1];
    }
    return bad == 0 && sums_match(o);
}

// Steps from `start` until the chase first comes back to it, or `limit` + 1 when it has
// not after `limit` steps (or leaves the table). A direct check for small tables.
template <class Table>
std::uint64_t cycle_length(const Table& t, std::uint64_t start, std::uint64_t limit) {
    std::uint64_t cur = start;
    for (std::uint64_t s = 1; s <= limit; ++s) {
        cur = t[cur];
        if (cur >= t.size()) break;
        if (cur == start) return s;
    }
    return limit + 1;
}

// The measured kernel: `steps` dependent loads from `start`; returns where it ends.
// pre: t holds slot numbers below t.size().
template <class Table>
std::uint64_t chase(Table& table, std::uint64_t start, std::uint64_t steps) noexcept {
    decltype(auto) t = local_view(table);
    std::uint64_t cur = start;
    for (std::uint64_t s = 0; s < steps; ++s) cur = t[cur];
    return cur;
}

// Where a chase of `steps` from o(0) ends, from the order alone.
inline std::uint64_t expected_end(const RandomOrder& o, std::uint64_t steps) noexcept { return o(steps % o.size()); }

}  // namespace lab::chase
