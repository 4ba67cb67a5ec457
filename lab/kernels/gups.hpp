// lab/kernels/gups.hpp — HPCC RandomAccess (GUPS): XOR updates at pseudo-random places.
//
// The table holds N = 2^k 64-bit words, T[i] = i at the start. The update stream is
// HPCC's: a 64-bit LFSR, ran <- ran * x mod (x^64 + x^2 + x + 1) over GF(2), i.e.
//   ran = (ran << 1) ^ (top bit of ran ? 7 : 0),
// and each value updates T[ran & (N - 1)] ^= ran. The i-th value (i >= 1) of the stream
// that starts at 1 is x^i mod P; starts(n) jumps straight to x^n.
//
// A pass applies the values x^1 .. x^U (U = updates) split into kStreams interleaved
// streams (stream j runs x^(jU/S + 1) ..), HPCC's look-ahead: kStreams independent
// updates per step let the core keep many misses in flight. Every pass applies the same
// sequence; XOR commutes, so two passes undo each other and the result of one pass is
// the same as a plain sequential replay of x^1 .. x^U.
//
// Every function takes the table as `Table&` with operator[] (std::span<uint64_t>,
// physmem::TreeArray<uint64_t>, a FixedDepthView): the same code on every variant, so
// only the data structure changes between variants.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "kernels/random.hpp"
#include "physmem/segments.hpp"

namespace lab::gups {

inline constexpr std::uint64_t kPoly = 7;
inline constexpr std::uint64_t kPeriod = 1317624576693539401ull;  // of the stream from 1
inline constexpr unsigned kStreams = 128;  // look-ahead (HPCC allows up to 1024)

// One LFSR step: multiply by x modulo x^64 + x^2 + x + 1.
constexpr std::uint64_t step(std::uint64_t ran) noexcept {
    return (ran << 1) ^ ((ran >> 63) ? kPoly : 0);
}

// a(x)^2 mod P: squaring over GF(2) spreads bit j to bit 2j; x^(2j) mod P comes from
// a table built by stepping.
constexpr std::uint64_t square(std::uint64_t a) noexcept {
    std::array<std::uint64_t, 64> even{};  // even[j] = x^(2j) mod P
    std::uint64_t p = 1;
    for (auto& e : even) e = p, p = step(step(p));
    std::uint64_t out = 0;
    for (unsigned j = 0; j < 64; ++j)
        if ((a >> j) & 1) out ^= even[j];
    return out;
}

// x^n mod P: the value n steps after 1 (HPCC_starts), by square-and-multiply over the
// bits of n mod kPeriod, most significant first.
constexpr std::uint64_t starts(std::uint64_t n) noexcept {
    n %= kPeriod;
    std::uint64_t r = 1;
    for (int bit = 63; bit >= 0; --bit) {
        r = square(r);
        if ((n >> bit) & 1) r = step(r);
    }
    return r;
}

// The update sequence of a pass. pre: updates a positive multiple of kStreams.
struct Plan {
    std::uint64_t updates = 0;
    std::array<std::uint64_t, kStreams> start{};  // stream j: x^(j * updates / kStreams)
};
inline Plan make_plan(std::uint64_t updates) {
    Plan p{updates, {}};
    for (unsigned j = 0; j < kStreams; ++j) p.start[j] = starts(j * (updates / kStreams));
    return p;
}
// Updates actually made for a request: rounded up to a multiple of kStreams (>= 1 each).
constexpr std::uint64_t round_updates(std::uint64_t requested) noexcept {
    std::uint64_t per = (requested + kStreams - 1) / kStreams;
    return (per ? per : 1) * kStreams;
}

// T[i] = i for every i.
template <class Table>
void reset(Table& t) {
    std::uint64_t i = 0;
    physmem::for_each_segment(t, [&i](std::span<std::uint64_t> s) {
        for (auto& x : s) x = i++;
    });
}

// A copy of a cheap view (span, FixedDepthView) that the compiler can keep in registers
// across the table stores; a TreeArray itself is used in place (copying it is deep).
template <class Table>
decltype(auto) local_view(Table& t) noexcept {
    if constexpr (std::is_trivially_copyable_v<Table>) return Table(static_cast<const Table&>(t));
    else return (t);
}

// The measured kernel: one pass of p.updates updates, kStreams at a time. With
// Prefetch, each step first finds the kStreams slots (the walk, for a tree) and
// prefetches them, then updates them: prefetches retire at once, so misses overlap up to
// the core's miss buffers rather than its reorder window. Without, each update is done
// as its value is made (HPCC's reference loop). pre: t.size() is a power of two,
// mask = t.size() - 1. Returns a value to keep live.
template <bool Prefetch = true, class Table>
std::uint64_t update_pass(Table& table, const Plan& p, std::uint64_t mask) noexcept {
    decltype(auto) t = local_view(table);
    std::array<std::uint64_t, kStreams> ran = p.start;
    std::array<std::uint64_t*, kStreams> slot;
    for (std::uint64_t i = 0, per = p.updates / kStreams; i < per; ++i) {
        if constexpr (Prefetch) {
            for (unsigned j = 0; j < kStreams; ++j) {
                ran[j] = step(ran[j]);
                slot[j] = &t[ran[j] & mask];
                __builtin_prefetch(slot[j], 1);
            }
            for (unsigned j = 0; j < kStreams; ++j) *slot[j] ^= ran[j];
        } else {
            for (unsigned j = 0; j < kStreams; ++j) {
                ran[j] = step(ran[j]);
                t[ran[j] & mask] ^= ran[j];
            }
        }
    }
    return ran[0];
}

// The plain reference: one stream, x^1 .. x^updates, in order (HPCC's verification).
template <class Table>
void replay(Table& t, std::uint64_t updates, std::uint64_t mask) noexcept {
    std::uint64_t ran = 1;
    for (std::uint64_t i = 0; i < updates; ++i) {
        ran = step(ran);
        t[ran & mask] ^= ran;
    }
}

// Entries with T[i] != i (HPCC's error count after pass + replay).
template <class Table>
std::uint64_t count_errors(Table& t) {
    std::uint64_t i = 0, errors = 0;
    physmem::for_each_segment(t, [&](std::span<std::uint64_t> s) {
        for (auto x : s) errors += x != i++;
    });
    return errors;
}

// A position-sensitive signature, linear over XOR: sig = XOR_i (T[i] & mix(i)). An
// update applied at the wrong index changes it (with probability 1 - 2^-popcount of the
// masks' difference), which the error count alone cannot see.
template <class Table>
std::uint64_t signature(Table& t) {
    std::uint64_t i = 0, sig = 0;
    physmem::for_each_segment(t, [&](std::span<std::uint64_t> s) {
        for (auto x : s) sig ^= x & rnd::mix(i++);
    });
    return sig;
}
// The signature one pass leaves on the table T[i] = i of n words, computed from the
// stream alone (no table): linearity splits it into the initial table and each update.
inline std::uint64_t expected_signature(std::uint64_t n, std::uint64_t updates) noexcept {
    std::uint64_t sig = 0, ran = 1, mask = n - 1;
    for (std::uint64_t i = 0; i < n; ++i) sig ^= i & rnd::mix(i);
    for (std::uint64_t i = 0; i < updates; ++i) {
        ran = step(ran);
        sig ^= ran & rnd::mix(ran & mask);
    }
    return sig;
}

// What verification found. ok: no more than 1% errors (HPCC's rule) and the signature
// after the pass matched the stream's.
struct Check {
    std::uint64_t errors = 0;
    std::uint64_t signature = 0;  // of the table after the pass
    bool signature_ok = false;
    bool ok(std::uint64_t n) const noexcept { return signature_ok && errors * 100 <= n; }
};

// HPCC-style verification of `pass` (the measured kernel on t): reset, one pass, the
// signature, then the plain replay and the error count. Leaves T[i] = i when correct.
template <class Table, class Pass>
Check verify(Table& t, std::uint64_t updates, Pass&& pass) {
    const std::uint64_t n = t.size();
    reset(t);
    pass();
    Check c;
    c.signature = signature(t);
    c.signature_ok = c.signature == expected_signature(n, updates);
    replay(t, updates, n - 1);
    c.errors = count_errors(t);
    return c;
}

}  // namespace lab::gups
