// lab/kernels/random.hpp — small seeded generators shared by the random-access kernels.
#pragma once

#include <cstdint>

namespace lab::rnd {

// splitmix64's finaliser: a bijective 64-bit mix (Steele, Lea and Flood). mix(x) for
// x = seed + i gives the i-th value of a seeded stream without any state to carry.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Next value of a splitmix64 stream whose state is `state`.
constexpr std::uint64_t next(std::uint64_t& state) noexcept {
    std::uint64_t out = mix(state);
    state += 0x9e3779b97f4a7c15ull;
    return out;
}

// A value in [0, bound) from 64 random bits (Lemire's multiply-shift; bias below
// bound / 2^64, irrelevant for the sizes here). pre: bound > 0.
constexpr std::uint64_t below(std::uint64_t bits, std::uint64_t bound) noexcept {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * bound) >> 64);
}

}  // namespace lab::rnd
