// src/malloc/bits.hpp — bitmaps of the 512 4 KiB pages of a 2 MiB page (HugePage::used,
// HugePage::dirty): runs of clear bits, set and test. Pure functions, no state; inline
// because the filler's and the large placement's span operations run them on every call.
#pragma once

#include <algorithm>
#include <cstdint>

#include "malloc/internal.hpp"

#pragma GCC visibility push(hidden)

namespace physmem::malloc {

inline bool bit(const std::uint64_t* u, unsigned i) noexcept { return (u[i / 64] >> (i % 64)) & 1; }

// First index of a run of n clear bits, or -1.
inline int find_run(const std::uint64_t* u, unsigned n) noexcept {
    unsigned run = 0, start = 0;
    for (unsigned i = 0; i < kPagesPerHuge;) {
        std::uint64_t w = u[i / 64];
        if (i % 64 == 0 && w == 0) {
            if (run == 0) start = i;
            run += 64;
            i += 64;
        } else if (i % 64 == 0 && w == ~std::uint64_t{0}) {
            run = 0;
            i += 64;
            continue;
        } else {
            if (bit(u, i)) run = 0;
            else if (run++ == 0) start = i;
            ++i;
        }
        if (run >= n) return static_cast<int>(start);
    }
    return -1;
}

inline bool any_bit(const std::uint64_t* u, unsigned first, unsigned n) noexcept {
    for (unsigned i = first; i < first + n; ++i)
        if (bit(u, i)) return true;
    return false;
}

// Clear bits at the start (bit 0 up) and at the end (bit 511 down) of a 512-bit map.
inline unsigned leading_free(const std::uint64_t* u) noexcept {
    unsigned n = 0;
    for (unsigned w = 0; w < kPagesPerHuge / 64; ++w, n += 64)
        if (u[w]) return n + static_cast<unsigned>(__builtin_ctzll(u[w]));
    return n;
}

inline unsigned trailing_free(const std::uint64_t* u) noexcept {
    unsigned n = 0;
    for (unsigned w = kPagesPerHuge / 64; w-- > 0; n += 64)
        if (u[w]) return n + static_cast<unsigned>(__builtin_clzll(u[w]));
    return n;
}

// Longest run of clear bits, a word at a time (runs inside a word by shifting past them).
inline unsigned longest_free(const std::uint64_t* u) noexcept {
    unsigned best = 0, run = 0;
    for (unsigned w = 0; w < kPagesPerHuge / 64; ++w) {
        std::uint64_t x = u[w];
        if (x == 0) { run += 64; continue; }
        unsigned low = static_cast<unsigned>(__builtin_ctzll(x));
        best = std::max(best, run + low);
        x >>= low;  // bit 0 set
        for (;;) {
            unsigned ones = x == ~std::uint64_t{0} ? 64 : static_cast<unsigned>(__builtin_ctzll(~x));
            x = ones == 64 ? 0 : x >> ones;
            if (x == 0) break;  // only the word's high zeros remain: they start the next run
            unsigned zeros = static_cast<unsigned>(__builtin_ctzll(x));
            best = std::max(best, zeros);
            x >>= zeros;
        }
        run = static_cast<unsigned>(__builtin_clzll(u[w]));
    }
    return std::max(best, run);
}

inline void set_bits(std::uint64_t* u, unsigned first, unsigned n, bool on) noexcept {
    for (unsigned i = first; i < first + n; ++i) {
        std::uint64_t m = std::uint64_t{1} << (i % 64);
        u[i / 64] = on ? (u[i / 64] | m) : (u[i / 64] & ~m);
    }
}

}  // namespace physmem::malloc

#pragma GCC visibility pop
