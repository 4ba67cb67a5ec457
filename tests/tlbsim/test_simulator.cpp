// The TLB simulator on hand-built traces: the analytic cases of issue 15 (exact where the
// model makes them exact), associativity conflicts, page-walk-cache hits per level, mixed
// page sizes in one trace, 5-level paging, the no-translation mode and the data-cache model.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "physmem/tlbsim/simulator.hpp"

namespace {

using namespace physmem::tlbsim;

constexpr std::uint64_t kBase = std::uint64_t{1} << 40;  // 1 GiB- and 512 GiB-aligned
constexpr std::uint64_t k4K = 4096, k2M = 2 << 20, k1G = 1 << 30;
constexpr std::uint8_t kAll = 7;

// A Skylake-shaped machine, written out here so the tests do not depend on a preset's
// numbers: L1 4K 64x4-way, 2M 32x4-way, 1G 4 fully associative; L2 1536x12-way (4K+2M),
// 1G 16x4-way; split page-walk caches; 4 levels.
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

// Only an L1 TLB of `entries` x `ways` for 4 KiB pages; no L2, no page-walk caches.
MachineConfig l1_only(unsigned entries, unsigned ways) {
    MachineConfig m;
    m.name = "l1";
    m.l1.arrays = {{entries, ways, size_bit(PageSize::k4K)}};
    return m;
}

TEST(TlbSim, SequentialScanMissesOncePerPageAndWalksThroughThePdeCache) {
    Simulator sim(skylake_like());
    const std::uint64_t pages = 2048;  // four page tables' worth
    for (std::uint64_t a = kBase; a < kBase + pages * k4K; a += 64) sim.access(a, PageSize::k4K);
    const Stats& s = sim.stats();
    EXPECT_EQ(s.accesses, pages * 64);
    EXPECT_EQ(s.l1_misses, pages);
    EXPECT_EQ(s.walks, pages);  // never seen before: every L1 miss walks
    // First walk: all 4 levels. Inside a page table the PDE cache gives the table: 1 ref.
    // Entering the next table: the PDPTE cache gives the directory: 2 refs.
    EXPECT_EQ(s.walk_refs, 4 + 511 + 3 * (2 + 511));
    EXPECT_EQ(s.pwc_hits_by_level[2], pages - 4);
    EXPECT_EQ(s.pwc_hits_by_level[3], 3u);
    EXPECT_EQ(s.pwc_hits_by_level[4], 0u);
    EXPECT_EQ(s.walk_refs_by_level[1], pages);
    EXPECT_EQ(s.walk_refs_by_level[4], 1u);
}

// Uniform random references over N pages, N far above the entries: LRU holds `entries`
// distinct pages, so a reference hits with probability entries / N.
double random_miss_rate(MachineConfig m, unsigned entries, std::uint64_t pages) {
    Simulator sim(m);
    std::mt19937_64 rng(42);
    auto touch = [&] { sim.access(kBase + (rng() % pages) * k4K, PageSize::k4K); };
    for (int i = 0; i < 200000; ++i) touch();
    sim.reset_stats();
    for (int i = 0; i < 2000000; ++i) touch();
    (void)entries;
    return double(sim.stats().l1_misses) / double(sim.stats().accesses);
}

TEST(TlbSim, RandomAccessMissRateIsOneMinusEntriesOverPages) {
    struct Case {
        unsigned entries, ways;
        std::uint64_t pages;
    };
    for (Case c : {Case{64, 0, 1024}, Case{96, 0, 4096}, Case{64, 4, 1024}, Case{1536, 12, 16384},
                   Case{48, 4, 960} /* 12 sets: not a power of two */}) {
        double expect = 1.0 - double(c.entries) / double(c.pages);
        double got = random_miss_rate(l1_only(c.entries, c.ways), c.entries, c.pages);
        EXPECT_NEAR(got, expect, 0.02 * expect) << c.entries << "x" << c.ways << " over " << c.pages;
    }
}

TEST(TlbSim, OneGigPageArrayNeverMissesAfterWarmUp) {
    Simulator sim(skylake_like());
    std::mt19937_64 rng(7);
    const std::uint64_t bytes = 4 * k1G;  // 4 pages: the L1's 1 GiB entries
    for (std::uint64_t g = 0; g < 4; ++g) sim.access(kBase + g * k1G, PageSize::k1G);
    EXPECT_EQ(sim.stats().walks, 4u);
    sim.reset_stats();
    for (int i = 0; i < 1000000; ++i) sim.access(kBase + (rng() % bytes), PageSize::k1G);
    EXPECT_EQ(sim.stats().l1_misses, 0u);
    EXPECT_EQ(sim.stats().walks, 0u);
}

TEST(TlbSim, AssociativityConflictsMissEveryTimeOneWayTooMany) {
    // 64 entries, 4 ways: 16 sets; pages 16 apart share a set.
    for (unsigned n : {4u, 5u}) {
        Simulator sim(l1_only(64, 4));
        for (int round = 0; round < 100; ++round)
            for (unsigned p = 0; p < n; ++p) sim.access(kBase + p * 16 * k4K, PageSize::k4K);
        EXPECT_EQ(sim.stats().l1_misses, n == 4 ? 4u : 500u) << n << " pages in one 4-way set";
    }
    // The same 5 pages fully associative: only the cold misses.
    Simulator fa(l1_only(64, 0));
    for (int round = 0; round < 100; ++round)
        for (unsigned p = 0; p < 5; ++p) fa.access(kBase + p * 16 * k4K, PageSize::k4K);
    EXPECT_EQ(fa.stats().l1_misses, 5u);
}

TEST(TlbSim, PageWalkCacheHitsPerLevelForEachPageSize) {
    Simulator sim(skylake_like());
    // 2 MiB pages: the leaf is the PDE; the first walk reads levels 4, 3, 2; the next page
    // of the same 1 GiB range starts from the PDPTE cache: 1 ref.
    sim.access(kBase, PageSize::k2M);
    sim.access(kBase + k2M, PageSize::k2M);
    EXPECT_EQ(sim.stats().walk_refs, 3u + 1u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[3], 1u);
    EXPECT_EQ(sim.stats().walk_refs_by_level[2], 2u);
    // 1 GiB pages: the leaf is the PDPTE; the next one starts from the PML4E cache.
    sim.access(kBase + 8 * k1G, PageSize::k1G);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[4], 1u) << "PML4E of kBase cached by the 2M walk";
    EXPECT_EQ(sim.stats().walk_refs, 4u + 1u);
    EXPECT_EQ(sim.stats().walk_refs_by_level[3], 2u);  // the first 2M walk and this one
}

TEST(TlbSim, UnifiedPageWalkCacheHoldsEveryLevel) {
    MachineConfig m = skylake_like();
    m.pwc = {};
    m.pwc.unified = ArrayConfig{64, 0, kAll};
    Simulator sim(m);
    sim.access(kBase, PageSize::k4K);           // 4 refs; caches L4, L3, L2 entries
    sim.access(kBase + k4K, PageSize::k4K);     // PDE hit: 1
    sim.access(kBase + k2M, PageSize::k4K);     // PDPTE hit: 2
    sim.access(kBase + k1G, PageSize::k4K);     // PML4E hit: 3
    EXPECT_EQ(sim.stats().walk_refs, 4u + 1u + 2u + 3u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[2], 1u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[3], 1u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[4], 1u);
}

TEST(TlbSim, PdesInTheL2TlbShareItsCapacity) {
    MachineConfig m;
    m.name = "amd-like";
    m.l1.arrays = {{4, 0, kAll}};
    m.l2.arrays = {{8, 0, std::uint8_t(size_bit(PageSize::k4K) | size_bit(PageSize::k2M))}};
    m.pwc.unified = ArrayConfig{4, 0, kAll};
    m.pwc.unified_levels = 0b111000;
    m.pwc.pde_in_l2_tlb = true;
    Simulator sim(m);
    sim.access(kBase, PageSize::k4K);        // 4 refs; PDE into the L2 TLB, PDPE/PML4E into the PDC
    sim.access(kBase + k4K, PageSize::k4K);  // the PDE from the L2 TLB: 1 ref
    EXPECT_EQ(sim.stats().walk_refs, 5u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[2], 1u);
    // 8 more pages in 8 other 2 MiB ranges: translations and their PDEs (16 entries) push the
    // first PDE out of the 8-entry L2 TLB; a page beside kBase then walks from the PDPE: 2 refs.
    for (std::uint64_t i = 1; i <= 8; ++i) sim.access(kBase + i * k2M, PageSize::k4K);
    sim.reset_stats();
    sim.access(kBase + 2 * k4K, PageSize::k4K);
    EXPECT_EQ(sim.stats().walk_refs, 2u);
    EXPECT_EQ(sim.stats().pwc_hits_by_level[3], 1u);
    m.l2.arrays[0].sizes = size_bit(PageSize::k2M);
    EXPECT_THROW(Simulator{m}, std::invalid_argument);
}

TEST(TlbSim, MixedPageSizesInOneTraceUseTheirOwnArrays) {
    Simulator sim(skylake_like());
    // 60 pages of 4 KiB (L1 4K array: 64) and 30 of 2 MiB (L1 2M array: 32), interleaved,
    // each set holding at most 4: only cold misses in the arrays of each size.
    const std::uint64_t small = kBase, large = kBase + 64 * k1G;
    for (int round = 0; round < 50; ++round)
        for (unsigned i = 0; i < 60; ++i) {
            sim.access(small + i * k4K, PageSize::k4K);
            if (i < 30) sim.access(large + i * k2M, PageSize::k2M);
        }
    const Stats& s = sim.stats();
    EXPECT_EQ(s.l1_misses_by_size[0], 60u);
    EXPECT_EQ(s.l1_misses_by_size[1], 30u);
    EXPECT_EQ(s.walks_by_size[0], 60u);
    EXPECT_EQ(s.walks_by_size[1], 30u);
    EXPECT_EQ(s.accesses_by_size[0], 50u * 60);
    EXPECT_EQ(s.accesses_by_size[1], 50u * 30);
}

TEST(TlbSim, SecondLevelCatchesWhatTheFirstEvicts) {
    Simulator sim(skylake_like());
    // 1024 pages: more than L1 (64) but within L2 (1536). Second pass: all L2 hits.
    for (int pass = 0; pass < 2; ++pass) {
        for (std::uint64_t p = 0; p < 1024; ++p) sim.access(kBase + p * k4K, PageSize::k4K);
        if (pass == 0) sim.reset_stats();
    }
    EXPECT_EQ(sim.stats().l1_misses, 1024u);
    EXPECT_EQ(sim.stats().l2_hits, 1024u);
    EXPECT_EQ(sim.stats().walks, 0u);
}

TEST(TlbSim, FiveLevelPagingWalksOneLevelMore) {
    Simulator four(skylake_like()), five(with_five_levels(skylake_like()));
    four.access(kBase, PageSize::k4K);
    five.access(kBase, PageSize::k4K);
    EXPECT_EQ(four.stats().walk_refs, 4u);
    EXPECT_EQ(five.stats().walk_refs, 5u);
    EXPECT_EQ(five.stats().walk_refs_by_level[5], 1u);
}

TEST(TlbSim, NoTranslationCountsOnlyTheReferences) {
    Simulator sim(without_translation(skylake_like()));
    std::mt19937_64 rng(1);
    for (int i = 0; i < 10000; ++i)
        sim.access(kBase + (rng() % (1u << 30)), PageSize::k4K, i % 3 ? Ref::data : Ref::sw_walk);
    const Stats& s = sim.stats();
    EXPECT_EQ(s.accesses, 10000u);
    EXPECT_EQ(s.sw_walk_loads, 3334u);
    EXPECT_EQ(s.l1_misses, 0u);
    EXPECT_EQ(s.walks, 0u);
    EXPECT_EQ(s.walk_refs, 0u);
}

TEST(TlbSim, WalkReferencesHitInTheDataCacheEightPtesPerLine) {
    MachineConfig m = skylake_like();
    m.caches = {{32 << 10, 8}, {1 << 20, 16}};
    Simulator sim(with_caches(m));
    const std::uint64_t pages = 4096;
    for (std::uint64_t p = 0; p < pages; ++p) sim.access(kBase + p * k4K, PageSize::k4K);
    const Stats& s = sim.stats();
    // Level-1 refs: one new line of PTEs per 8 pages; the upper levels' few lines on top.
    EXPECT_GE(s.walk_ref_memory, pages / 8);
    EXPECT_LE(s.walk_ref_memory, pages / 8 + 16);
    EXPECT_EQ(s.walk_ref_cache_hits[0] + s.walk_ref_cache_hits[1] + s.walk_ref_memory, s.walk_refs);
    EXPECT_EQ(s.data_memory, pages);  // every page's first line is new
}

TEST(TlbSim, SoftwareWalkLoadsAreCountedThroughTheCachesApart) {
    MachineConfig m = skylake_like();
    m.caches = {{32 << 10, 8}};
    Simulator sim(with_caches(m));
    // One inner-block slot (one line) read before each of 1000 elements on distinct lines.
    for (std::uint64_t i = 0; i < 1000; ++i) {
        sim.access(kBase, PageSize::k2M, Ref::sw_walk);
        sim.access(kBase + k2M + i * 4096, PageSize::k2M);
    }
    const Stats& s = sim.stats();
    EXPECT_EQ(s.sw_walk_memory, 1u);  // the slot's line stays in L1d: one cold miss
    EXPECT_EQ(s.sw_walk_cache_hits[0], 999u);
    EXPECT_EQ(s.data_memory, 1001u);  // every element line plus the slot's first
    EXPECT_EQ(s.data_cache_hits[0], 999u);
}

TEST(TlbSim, FlushForgetsAndResetKeepsContents) {
    Simulator sim(skylake_like());
    sim.access(kBase, PageSize::k4K);
    sim.reset_stats();
    sim.access(kBase, PageSize::k4K);
    EXPECT_EQ(sim.stats().l1_misses, 0u);
    sim.flush();
    sim.access(kBase, PageSize::k4K);
    EXPECT_EQ(sim.stats().walks, 1u);
}

TEST(TlbSim, InvalidConfigurationsAreRefusedWithTheReason) {
    MachineConfig m = skylake_like();
    m.l2.arrays[0].entries = 1000;  // not a multiple of 12 ways
    EXPECT_THROW(Simulator{m}, std::invalid_argument);
    m = skylake_like();
    m.l1.arrays.push_back({8, 0, size_bit(PageSize::k4K)});  // 4K in two L1 arrays
    try {
        Simulator sim(m);
        ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("two arrays"), std::string::npos) << e.what();
    }
    m = skylake_like();
    m.levels = 3;
    EXPECT_THROW(Simulator{m}, std::invalid_argument);
}

}  // namespace
