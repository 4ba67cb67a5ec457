// lab/kernels/chase.hpp — pointer chase over a random cyclic permutation.
//
// The table holds n 64-bit slot numbers, next = t[cur]: a chain of dependent loads, so
// every step pays the whole latency of the load (and, on a tree, of its walk).
//
// The permutation is one cycle through all n slots, uniformly random: a seeded
// Fisher-Yates shuffle gives the visiting order o[0..n), and linking t[o[k]] = o[k+1]
// (o[n-1] back to o[0]) makes the cycle. This is the same distribution as Sattolo's
// algorithm, and it keeps the order, which makes the cycle cheap to check without a
// dependent walk of n steps (seconds at 1 GiB): `is_single_cycle` proves it from n
// independent reads. A chase from o[0] is at o[s mod n] after s steps.
//
// Every function takes the table as `Table&` with operator[] and size() (std::span,
// TreeArray, FixedDepthView): the same code on every variant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/random.hpp"

namespace lab::chase {

// o = a uniformly random permutation of 0..o.size()-1 from `seed` (Fisher-Yates).
inline void shuffle_order(std::span<std::uint64_t> o, std::uint64_t seed) noexcept {
    for (std::size_t i = 0; i < o.size(); ++i) o[i] = i;
    std::uint64_t state = seed;
    for (std::size_t i = o.size(); i > 1; --i) std::swap(o[i - 1], o[rnd::below(rnd::next(state), i)]);
}

// t[o[k]] = o[k + 1], t[o[n-1]] = o[0]. pre: t.size() == o.size() > 0.
template <class Table>
void link(Table& t, std::span<const std::uint64_t> o) noexcept {
    for (std::size_t k = 0; k + 1 < o.size(); ++k) t[o[k]] = o[k + 1];
    t[o.back()] = o.front();
}

// true when t is one cycle through all n slots: o is a permutation of 0..n-1 (each value
// seen once) and every link t[o[k]] == o[k+1 mod n] holds in t. pre: t.size() == o.size().
template <class Table>
bool is_single_cycle(const Table& t, std::span<const std::uint64_t> o) {
    const std::size_t n = o.size();
    std::vector<bool> seen(n);
    for (std::uint64_t v : o) {
        if (v >= n || seen[v]) return false;
        seen[v] = true;
    }
    for (std::size_t k = 0; k < n; ++k)
        if (t[o[k]] != o[k + 1 == n ? 0 : k + 1]) return false;
    return true;
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

// A copy of a cheap view (span, FixedDepthView) the compiler keeps in registers; a
// TreeArray is used in place (copying it is deep).
template <class Table>
decltype(auto) local_view(Table& t) noexcept {
    if constexpr (std::is_trivially_copyable_v<Table>) return Table(static_cast<const Table&>(t));
    else return (t);
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

// Where a chase of `steps` from o[0] ends, from the order alone.
inline std::uint64_t expected_end(std::span<const std::uint64_t> o, std::uint64_t steps) noexcept {
    return o[steps % o.size()];
}

}  // namespace lab::chase
