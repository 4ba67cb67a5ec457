// src/tlbsim/swar.hpp — "SIMD within a register": compare every byte or nibble of a 64-bit
// word with one value in a few integer operations (portable C++, no intrinsics). Lane i of
// a word is bits [8i, 8i+8) for bytes, [4i, 4i+4) for nibbles (by value, not memory order).
#pragma once

#include <bit>
#include <cstdint>

namespace physmem::tlbsim::swar {

constexpr std::uint64_t kBytesOf1 = 0x0101010101010101ull;
constexpr std::uint64_t kNibblesOf1 = 0x1111111111111111ull;

// The top bit of each byte of x that is zero, 0 elsewhere (exact: no borrow between lanes).
constexpr std::uint64_t zero_bytes(std::uint64_t x) noexcept {
    constexpr std::uint64_t k7F = 0x7F * kBytesOf1;
    return ~(((x & k7F) + k7F) | x | k7F);
}

// The top bit of each nibble of x that is zero, 0 elsewhere (exact).
constexpr std::uint64_t zero_nibbles(std::uint64_t x) noexcept {
    constexpr std::uint64_t k7 = 0x7 * kNibblesOf1;
    return ~(((x & k7) + k7) | x | k7);
}

// The lowest lane flagged by zero_bytes / zero_nibbles. pre: flags != 0.
inline unsigned first_byte(std::uint64_t flags) noexcept { return unsigned(std::countr_zero(flags)) >> 3; }
inline unsigned first_nibble(std::uint64_t flags) noexcept { return unsigned(std::countr_zero(flags)) >> 2; }

}  // namespace physmem::tlbsim::swar
