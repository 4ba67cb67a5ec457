// swar::match_bytes, the portable fingerprint compare SmallSets uses where SSE2 is missing
// (so this is its only test on x86), against a byte-by-byte compare.
#include <gtest/gtest.h>

#include <random>

#include "tlbsim/swar.hpp"

namespace {

using physmem::tlbsim::swar::match_bytes;
using physmem::tlbsim::swar::set_byte;

unsigned by_bytes(const std::uint64_t* words, unsigned n, std::uint64_t byte) {
    unsigned bits = 0;
    for (unsigned i = 0; i < 8 * n; ++i)
        if (((words[i / 8] >> (8 * (i % 8))) & 0xFF) == byte) bits |= 1u << i;
    return bits;
}

TEST(Swar, MatchBytesFlagsExactlyTheEqualBytes) {
    std::mt19937_64 rng(5);
    const std::uint64_t edges[] = {0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF};
    for (int round = 0; round < 20000; ++round) {
        std::uint64_t words[2];
        const std::uint64_t byte = round % 3 == 0 ? edges[rng() % 7] : rng() & 0xFF;
        for (std::uint64_t& w : words) {
            w = rng();
            for (unsigned j = 0; j < 8; ++j) {  // plant the byte, its neighbours and edge values
                const unsigned pick = unsigned(rng() % 6);
                const std::uint64_t v = pick == 0 ? byte : pick == 1 ? (byte ^ 1) : pick == 2 ? edges[rng() % 7] : 256;
                if (v < 256) w = (w & ~(std::uint64_t{0xFF} << (8 * j))) | (v << (8 * j));
            }
        }
        for (unsigned n : {1u, 2u}) ASSERT_EQ(match_bytes(words, n, byte), by_bytes(words, n, byte)) << std::hex << words[0] << " " << words[1] << " byte " << byte;
    }
}

TEST(Swar, SetByteIsTheByteMatchBytesReads) {
    std::uint64_t words[4] = {~0ull, ~0ull, ~0ull, ~0ull};
    for (unsigned i = 0; i < 32; ++i) {
        set_byte(words, i, 0x5A);
        EXPECT_EQ(match_bytes(words, 4, 0x5A), (i == 31 ? ~0u : (2u << i) - 1)) << i;
    }
}

}  // namespace
