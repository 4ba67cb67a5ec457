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

// zero_bytes' flags packed into 8 bits: bit i set when byte i was flagged (a multiply gathers
// each byte's top bit into the top byte; no carries, as each product bit has one source).
constexpr unsigned byte_flags_to_bits(std::uint64_t flags) noexcept {
    return unsigned(((flags >> 7) * 0x0102040810204080ull) >> 56);
}

// Sets byte i (by value: bits 8(i%8).. of words[i/8]) to `byte`. pre: byte < 256. On a
// little-endian target one byte store (a byte store may alias anything: still fewer
// instructions than the word's read, mask and write).
inline void set_byte(std::uint64_t* words, unsigned i, std::uint64_t byte) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
        reinterpret_cast<unsigned char*>(words)[i] = static_cast<unsigned char>(byte);
    } else {
        std::uint64_t& word = words[i / 8];
        const unsigned at = 8 * (i % 8);
        word = (word & ~(std::uint64_t{0xFF} << at)) | (byte << at);
    }
}

// The bytes of words[0..n) equal to `byte`, as bits: bit 8i + j for byte j of words[i] (by
// value). pre: n <= 4, byte < 256. The portable twin of an SSE2 byte compare + movemask.
inline unsigned match_bytes(const std::uint64_t* words, unsigned n, std::uint64_t byte) noexcept {
    const std::uint64_t splat = kBytesOf1 * byte;
    unsigned bits = 0;
    for (unsigned i = 0; i < n; ++i) bits |= byte_flags_to_bits(zero_bytes(words[i] ^ splat)) << (8 * i);
    return bits;
}

// The lowest lane flagged by zero_nibbles. pre: flags != 0.
inline unsigned first_nibble(std::uint64_t flags) noexcept { return unsigned(std::countr_zero(flags)) >> 2; }

}  // namespace physmem::tlbsim::swar
