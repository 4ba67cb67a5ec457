// What-if page sizes (physmem/tlbsim/what_if.hpp): sizes as text, the range and power-of-two
// checks, the walk's depth, the analytic cases for sizes no hardware has, the hardware
// sizes reproduced, and the tree over blocks of B.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"

namespace {

using namespace physmem::tlbsim;

constexpr std::uint64_t kBase = std::uint64_t{1} << 42;
constexpr std::uint8_t kAll = 7;

// The same Skylake-shaped machine as test_simulator.cpp, written out here.
MachineConfig skylake_like() {
    MachineConfig m;
    m.name = "test";
    m.l1.arrays = {{64, 4, size_bit(PageSize::k4K)}, {32, 4, size_bit(PageSize::k2M)}, {4, 0, size_bit(PageSize::k1G)}};
    m.l2.arrays = {{1536, 12, std::uint8_t(size_bit(PageSize::k4K) | size_bit(PageSize::k2M))},
                   {16, 4, size_bit(PageSize::k1G)}};
    m.pwc.split[2] = {32, 4, kAll};
    m.pwc.split[3] = {4, 0, kAll};
    m.pwc.split[4] = {2, 0, kAll};
    return m;
}

std::string error_of(std::uint64_t bytes) {
    try {
        with_page_size(skylake_like(), bytes);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(TlbSimWhatIf, ParsesSizesAndRejectsOthers) {
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("64K"), 65536u);
    EXPECT_EQ(parse_size("64kib"), 65536u);
    EXPECT_EQ(parse_size("32M"), std::uint64_t{32} << 20);
    EXPECT_EQ(parse_size("1G"), std::uint64_t{1} << 30);
    for (const char* bad : {"", "K", "64Q", "-4K", "1.5M", "99999999999999999999"})
        EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
    EXPECT_EQ(size_name(65536), "64k");
    EXPECT_EQ(size_name(std::uint64_t{32} << 20), "32m");
    EXPECT_EQ(size_name(std::uint64_t{1} << 30), "1g");
}

TEST(TlbSimWhatIf, OnlyPowersOfTwoFrom4KiBTo1GiB) {
    EXPECT_NE(error_of(3 * 4096).find("not a power of two"), std::string::npos);
    EXPECT_NE(error_of(2048).find("outside 4 KiB..1 GiB"), std::string::npos);
    EXPECT_NE(error_of(std::uint64_t{2} << 30).find("outside 4 KiB..1 GiB"), std::string::npos);
    EXPECT_EQ(error_of(4096), "");
    EXPECT_EQ(error_of(std::uint64_t{1} << 30), "");
    MachineConfig m = with_page_size(skylake_like(), 65536);
    EXPECT_EQ(m.what_if_shift, 16u);
    EXPECT_EQ(m.name, "test@64k");
    m.what_if_shift = 31;
    EXPECT_THROW(Simulator{m}, std::invalid_argument);
}

TEST(TlbSimWhatIf, WalkDepthFollowsFromPageSizeAndAddressWidth) {
    EXPECT_EQ(walk_levels(12, 4), 4u);  // the hardware's 4 KiB, 2 MiB, 1 GiB walks
    EXPECT_EQ(walk_levels(21, 4), 3u);
    EXPECT_EQ(walk_levels(30, 4), 2u);
    EXPECT_EQ(walk_levels(16, 4), 4u);  // 64 KiB: 32 bits to translate, 4 levels
    EXPECT_EQ(walk_levels(25, 4), 3u);  // 32 MiB: 23 bits
    EXPECT_EQ(walk_levels(29, 4), 3u);  // 512 MiB: 19 bits
    EXPECT_EQ(walk_levels(12, 5), 5u);
    EXPECT_EQ(walk_levels(30, 5), 3u);
    for (unsigned b = 12; b <= 30; ++b) {
        Simulator sim(with_page_size(skylake_like(), std::uint64_t{1} << b));
        sim.access(kBase, PageSize::k4K);
        EXPECT_EQ(sim.stats().walk_refs, walk_levels(b, 4)) << "shift " << b;
    }
}

// A sequential scan over N bytes with pages of B on a cold TLB: exactly N / B misses and
// walks, for sizes no hardware has.
TEST(TlbSimWhatIf, SequentialScanMissesOncePerPage) {
    for (unsigned b : {13u, 16u, 18u, 25u, 29u}) {
        const std::uint64_t page = std::uint64_t{1} << b, bytes = 3000 * page;
        Simulator sim(with_page_size(skylake_like(), page));
        for (std::uint64_t off = 0; off < bytes; off += page / 16) sim.access(kBase + off, PageSize::k4K);
        EXPECT_EQ(sim.stats().l1_misses, bytes / page) << "shift " << b;
        EXPECT_EQ(sim.stats().walks, bytes / page) << "shift " << b;
        EXPECT_EQ(sim.stats().walks_by_size[0], bytes / page);  // counted as the 4 KiB arrays' size
    }
}

// Random references over a footprint of (L1 entries) x B after one touch a page: no misses.
TEST(TlbSimWhatIf, FootprintThatFitsTheEntriesNeverMisses) {
    for (unsigned b : {14u, 17u, 23u, 28u}) {
        const std::uint64_t page = std::uint64_t{1} << b, pages = 64;
        Simulator sim(with_page_size(skylake_like(), page));
        for (std::uint64_t p = 0; p < pages; ++p) sim.access(kBase + p * page, PageSize::k1G);
        sim.reset_stats();
        std::mt19937_64 rng(7);
        for (int i = 0; i < 50000; ++i) sim.access(kBase + rng() % (pages * page), PageSize::k4K);
        EXPECT_EQ(sim.stats().l1_misses, 0u) << "shift " << b;
        // One page more than the entries: LRU over a cyclic scan misses every time.
        MachineConfig l1only = with_page_size(skylake_like(), page);
        l1only.l2.arrays.clear();
        Simulator cyc(l1only);
        for (int round = 0; round < 3; ++round)
            for (std::uint64_t p = 0; p <= 1536 + 64; ++p) cyc.access(kBase + p * page, PageSize::k4K);
        EXPECT_EQ(cyc.stats().l1_misses, 3 * (1536 + 65u)) << "shift " << b;
    }
}

// At B = 2 MiB the what-if machine walks as the hardware does for 2 MiB pages (3 levels,
// the same page-walk caches); only its TLB arrays differ (the 4 KiB ones).
TEST(TlbSimWhatIf, TwoMegabytePagesWalkAsTheHardwares) {
    MachineConfig hw = skylake_like();
    hw.l1.arrays = {{64, 4, kAll}};  // one geometry for every size: the TLB arrays agree too
    hw.l2.arrays = {{1536, 12, kAll}};
    Simulator real(hw), what_if(with_page_size(hw, 2 << 20));
    std::mt19937_64 rng(5);
    for (int i = 0; i < 200000; ++i) {
        const std::uint64_t a = kBase + rng() % (std::uint64_t{64} << 30);
        real.access(a, PageSize::k2M);
        what_if.access(a, PageSize::k4K);
    }
    EXPECT_GT(real.stats().walks, 1000u);
    EXPECT_EQ(what_if.stats().walks, real.stats().walks);
    EXPECT_EQ(what_if.stats().walk_refs, real.stats().walk_refs);
    EXPECT_EQ(what_if.stats().pwc_hits_by_level, real.stats().pwc_hits_by_level);
}

TEST(TlbSimWhatIf, TreeOverBlocksWalksOncePerBlockEntered) {
    // 64 MiB over 64 KiB blocks: 1024 leaves, fan-out 8192: one inner level.
    BlockTree t(kBase, std::uint64_t{64} << 20, 16);
    EXPECT_EQ(t.inner_levels(), 1u);
    EXPECT_EQ(BlockTree(kBase, std::uint64_t{1} << 30, 30).inner_levels(), 0u);
    EXPECT_EQ(BlockTree(kBase, std::uint64_t{1} << 30, 12).inner_levels(), 2u);  // 2^18 leaves / 512
    EXPECT_EQ(BlockTree(kBase, std::uint64_t{1} << 40, 12).inner_levels(), 4u);
    Simulator sim(without_translation(skylake_like()));
    for (std::uint64_t off = 0; off < (std::uint64_t{64} << 20); off += 64) t.access(sim, kBase + off, PageSize::k4K);
    EXPECT_EQ(t.walks(), 1024u);
    EXPECT_EQ(sim.stats().sw_walk_loads, 1024u);
    EXPECT_EQ(sim.stats().walks, 0u);
    t.access(sim, kBase - 64, PageSize::k4K);  // outside the tree: data only
    EXPECT_EQ(sim.stats().sw_walk_loads, 1024u);
}

}  // namespace
