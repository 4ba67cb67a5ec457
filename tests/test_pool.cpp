// tests/test_pool.cpp — BlockPool: arguments, alignment, exhaustion, growth, misuse,
// threads, and every backing rung forced and verified (or skipped, saying why).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "port/counters.hpp"
#include "physmem/hugepages.hpp"
#include "physmem/pool.hpp"
#include "support.hpp"

using physmem::Backing;
using physmem::BlockPool;
using physmem::PoolOptions;
using physmem_test::pool_options;

namespace {

bool is_aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(BlockPool, RejectsBadBlockSizesAndCapacities) {
    for (std::size_t bs : {std::size_t{0}, std::size_t{2048}, std::size_t{3000}, std::size_t{12288},
                           std::size_t{2} << 30})
        EXPECT_THROW(BlockPool(pool_options(bs, 1 << 30)), std::invalid_argument) << bs;
    EXPECT_THROW(BlockPool(pool_options(64 << 10, 4096)), std::invalid_argument);
}

// Every field out of its range: std::invalid_argument naming the field and the value,
// never a crash (backing 77 was a SIGFPE), a wrap (capacity SIZE_MAX rounded to 0) or a
// silent change of meaning.
TEST(BlockPool, OptionsOutOfRangeThrowNamingTheField) {
    struct Case {
        const char* expect;
        void (*set)(PoolOptions&);
    };
    const Case cases[] = {
        {"PoolOptions::block_size = 3000: not a power of two", [](PoolOptions& o) { o.block_size = 3000; }},
        {"PoolOptions::capacity = 0: smaller than one block", [](PoolOptions& o) { o.capacity = 0; }},
        {"PoolOptions::capacity = 18446744073709551615: more than 2^32 blocks",
         [](PoolOptions& o) { o.capacity = SIZE_MAX; }},
        {"PoolOptions::capacity = 281474976710657: more than 2^32 blocks of 64 KiB (at most 256 TiB",
         [](PoolOptions& o) { o.capacity = (std::size_t{64} << 42) + 1; }},
        {"PoolOptions::max_capacity = 1024: smaller than capacity (1 MiB)",
         [](PoolOptions& o) { o.grow = true, o.max_capacity = 1024; }},
        {"PoolOptions::backing = 77: not a Backing", [](PoolOptions& o) { o.backing = static_cast<Backing>(77); }},
        {"PoolOptions::give_back_delay_ms = 86400001: more than one day",
         [](PoolOptions& o) { o.give_back_delay_ms = 86'400'001; }},
        {"PoolOptions::give_back_delay_ms = 18446744073709551615",
         [](PoolOptions& o) { o.give_back_delay_ms = UINT64_MAX; }},
        {"PoolOptions::compact_threshold = -1: not a fraction from 0 to 1", [](PoolOptions& o) { o.compact_threshold = -1; }},
        {"PoolOptions::compact_threshold = nan", [](PoolOptions& o) { o.compact_threshold = std::nan(""); }},
        {"PoolOptions::compact_threshold = 5", [](PoolOptions& o) { o.compact_threshold = 5; }},
    };
    for (const Case& c : cases) {
        PoolOptions o = pool_options(64 << 10, 1 << 20);
        c.set(o);
        try {
            BlockPool pool(o);
            ADD_FAILURE() << "accepted: " << c.expect;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
        }
    }
}

TEST(BlockPool, OptionsAtTheEndsOfTheirRangesAreAccepted) {
    PoolOptions o = pool_options(64 << 10, 64 << 10);  // capacity: one block
    o.grow = true;
    o.max_capacity = 64 << 10;  // = capacity
    o.give_back_delay_ms = 86'400'000;
    o.compact_threshold = 1;
    EXPECT_NO_THROW(BlockPool{o});
    o.max_capacity = 0;
    o.compact_threshold = 0;
    o.give_back_delay_ms = 0;
    EXPECT_NO_THROW(BlockPool{o});
    o.block_size = std::size_t{1} << 30;
    o.capacity = std::size_t{1} << 62;  // 2^32 blocks: in range, and no machine maps it
    o.max_capacity = 0;
    EXPECT_THROW(BlockPool{o}, std::bad_alloc);
}

TEST(Region, RejectsABackingThatIsNotAnEnumerator) {
    physmem::RegionOptions o{.bytes = 1 << 20, .backing = static_cast<Backing>(77)};
    EXPECT_THROW(physmem::Region{o}, std::invalid_argument);
}

TEST(BlockPool, DesignatedInitialisersWork) {
    physmem::BlockPool pool({.block_size = 32 << 10, .capacity = 1ull << 30});
    EXPECT_EQ(pool.block_size(), 32u << 10);
    EXPECT_EQ(pool.stats().blocks_total, (1u << 30) / (32u << 10));
}

TEST(BlockPool, BlocksAreAlignedDistinctAndExhaustionThrows) {
    for (std::size_t bs : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{2} << 20}) {
        BlockPool pool(pool_options(bs, 8 * bs));
        std::set<void*> seen;
        for (int i = 0; i < 8; ++i) {
            void* p = pool.allocate();
            EXPECT_TRUE(is_aligned(p, bs));
            EXPECT_TRUE(pool.owns(static_cast<char*>(p) + bs - 1));
            std::memset(p, i, bs);  // the whole block is usable
            EXPECT_TRUE(seen.insert(p).second);
        }
        EXPECT_THROW(pool.allocate(), std::bad_alloc);
        EXPECT_EQ(pool.try_allocate(), nullptr);
        EXPECT_EQ(pool.stats().blocks_in_use, 8u);
        void* back = *seen.begin();
        pool.deallocate(back);
        EXPECT_EQ(pool.allocate(), back) << "freed block not reused";
        for (void* p : seen) pool.deallocate(p);
        EXPECT_EQ(pool.stats().blocks_in_use, 0u);
    }
}

TEST(BlockPool, GrowsByAddingRegionsWhenAllowed) {
    PoolOptions o = pool_options(4 << 10, 4 << 10);
    o.grow = true;
    o.max_capacity = 64 << 10;
    BlockPool pool(o);
    std::vector<void*> blocks;
    while (void* p = pool.try_allocate()) blocks.push_back(p);
    EXPECT_EQ(blocks.size(), 16u) << "growth should stop at max_capacity";
    EXPECT_GT(pool.stats().regions, 1u);
    for (void* p : blocks) pool.deallocate(p);
}

TEST(BlockPool, PrefaultedPoolTakesNoFaultsOnFirstTouch) {
    PHYSMEM_SKIP_IF_SHADOW_FAULTS();
    PoolOptions o = pool_options(64 << 10, 32 << 20);
    o.prefault = true;
    BlockPool pool(o);
    EXPECT_EQ(pool.stats().bytes_prefaulted, pool.stats().bytes_mapped);
    // Blocks are taken before counting: the count is about the pool's memory, and the first
    // run of the allocator's exhausted path can fault in its own code page (a text fault).
    std::vector<void*> blocks;
    blocks.reserve(pool.stats().blocks_total);
    while (void* p = pool.try_allocate()) blocks.push_back(p);
    ASSERT_FALSE(blocks.empty());
    physmem::PageFaultCounter faults;
    std::uint64_t before = faults.read();
    for (void* p : blocks) std::memset(p, 1, pool.block_size());
    EXPECT_EQ(faults.read() - before, 0u) << "source " << faults.source();
    for (void* p : blocks) pool.deallocate(p);
}

TEST(BlockPool, LockedPoolReportsLocked) {
    PoolOptions o = pool_options(64 << 10, 4 << 20);
    o.lock = true;
    try {
        BlockPool pool(o);
        EXPECT_TRUE(pool.stats().locked);
    } catch (const std::system_error& e) {
        GTEST_SKIP() << "mlock refused here: " << e.what();
    }
}

TEST(BlockPoolDeathTest, DoubleFreeAndForeignPointersAbortWithTheirAddress) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    BlockPool pool(pool_options(4 << 10, 64 << 10));
    void* p = pool.allocate();
    pool.deallocate(p);
    EXPECT_DEATH(pool.deallocate(p), "double free");
    int local = 0;
    EXPECT_DEATH(pool.deallocate(&local), "not from this pool");
    void* q = pool.allocate();
    EXPECT_DEATH(pool.deallocate(static_cast<char*>(q) + 8), "not the start of a block");
    pool.deallocate(q);
}

TEST(BlockPool, ConcurrentAllocateDeallocateNeverHandsOutABlockTwice) {
    BlockPool pool(pool_options(4 << 10, 1 << 20));  // 256 blocks for 4 threads
    std::vector<std::atomic<int>> owner(pool.stats().blocks_total);
    char* base = nullptr;
    {
        void* p = pool.allocate();
        base = static_cast<char*>(p);
        pool.deallocate(p);
    }
    std::atomic<long> errors{0};
    auto worker = [&](int id) {
        std::vector<void*> mine;
        std::uint64_t x = 88172645463325252ull + static_cast<unsigned>(id);
        for (int step = 0; step < 40000; ++step) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (mine.size() < 40 && (x & 1)) {
                void* p = pool.try_allocate();
                if (!p) continue;
                auto slot = static_cast<std::size_t>(static_cast<char*>(p) - base) / pool.block_size();
                int expected = 0;
                if (slot >= owner.size() || !owner[slot].compare_exchange_strong(expected, id + 1)) ++errors;
                *static_cast<int*>(p) = id;
                mine.push_back(p);
            } else if (!mine.empty()) {
                void* p = mine.back();
                mine.pop_back();
                if (*static_cast<int*>(p) != id) ++errors;
                owner[static_cast<std::size_t>(static_cast<char*>(p) - base) / pool.block_size()] = 0;
                pool.deallocate(p);
            }
        }
        for (void* p : mine) {
            owner[static_cast<std::size_t>(static_cast<char*>(p) - base) / pool.block_size()] = 0;
            pool.deallocate(p);
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(pool.stats().blocks_in_use, 0u);
}

// --- backing rungs -------------------------------------------------------------------

// Reserving huge pages changes the system: tests do it only when asked
// (PHYSMEM_TEST_RESERVE_HUGE_PAGES=1, set by the test command) and the pool restores
// nr_hugepages when it is destroyed.
bool reserve_for_tests() {
    const char* v = std::getenv("PHYSMEM_TEST_RESERVE_HUGE_PAGES");
    return v && std::strcmp(v, "1") == 0;
}

class BackingRung : public ::testing::TestWithParam<Backing> {};

TEST_P(BackingRung, ForcedRungIsObtainedAndVerifiedOrSkippedWithReason) {
    Backing rung = GetParam();
    std::size_t page = physmem::page_size_of(rung);
    PoolOptions o{.block_size = 64 << 10, .capacity = std::max<std::size_t>(page, 8 << 20), .backing = rung,
                  .strict_backing = true, .prefault = true, .reserve_huge_pages = reserve_for_tests()};
    long before = physmem::huge_page_counts(page).total;
    try {
        BlockPool pool(o);
        EXPECT_EQ(pool.backing(), rung);
        auto reports = pool.verify_backing();
        ASSERT_EQ(reports.size(), 1u);
        EXPECT_TRUE(reports[0].verified) << "smaps disagrees: kernel page " << reports[0].kernel_page_size;
        EXPECT_EQ(reports[0].backing, rung);
        if (rung != Backing::page_4k) EXPECT_GT(reports[0].huge_bytes, 0u);
        if (rung == Backing::page_4k) EXPECT_EQ(reports[0].huge_bytes, 0u);
        void* p = pool.allocate();
        std::memset(p, 0xab, pool.block_size());
        pool.deallocate(p);
    } catch (const physmem::backing_unavailable& e) {
        GTEST_SKIP() << "this machine cannot give " << physmem::to_string(rung) << ": " << e.what()
                     << (reserve_for_tests() ? "" : " (set PHYSMEM_TEST_RESERVE_HUGE_PAGES=1 as root to reserve)");
    }
    if (page_size_of(rung) >= (2u << 20) && rung != Backing::thp)
        EXPECT_EQ(physmem::huge_page_counts(page).total, before) << "nr_hugepages not restored";
}

INSTANTIATE_TEST_SUITE_P(Ladder, BackingRung,
                         ::testing::Values(Backing::page_1g, Backing::page_2m, Backing::thp, Backing::page_4k),
                         [](const auto& info) { return std::string("rung_") + std::string(physmem::to_string(info.param)); });

TEST(BlockPool, BestBackingTakesTheFirstRungAvailableAndExplainsTheRest) {
    PoolOptions o{.block_size = 64 << 10, .capacity = 8 << 20};
    BlockPool best(o);
    Backing got = best.backing();
    auto notes = best.backing_notes();
    // every rung above the one obtained has a note saying why it was skipped
    std::size_t skipped = 0;
    for (Backing b = Backing::page_1g; b != got; b = physmem::next_rung(b)) ++skipped;
    EXPECT_EQ(notes.size(), skipped);
}

TEST(BlockPool, BlocksOnAOneGigPageArePhysicallyContiguous) {
    PoolOptions o{.block_size = 2 << 20, .capacity = 1 << 30, .backing = Backing::page_1g,
                  .strict_backing = true, .prefault = true, .reserve_huge_pages = reserve_for_tests()};
    try {
        BlockPool pool(o);
        std::vector<void*> blocks{pool.allocate()};
        auto base = BlockPool::physical_address(blocks[0]);
        for (std::size_t i = 1; base && i < 16; ++i) {
            void* p = blocks.emplace_back(pool.allocate());
            auto pa = BlockPool::physical_address(p);
            EXPECT_TRUE(pa);
            if (pa) EXPECT_EQ(*pa - *base, static_cast<std::uint64_t>(static_cast<char*>(p) - static_cast<char*>(blocks[0])));
        }
        for (void* p : blocks) pool.deallocate(p);  // before the pool goes (leak_check)
        if (!base) GTEST_SKIP() << "physical addresses need root";
    } catch (const physmem::backing_unavailable& e) {
        GTEST_SKIP() << "no 1 GiB page: " << e.what();
    }
}

TEST(BlockPool, DefaultPoolServesBlocks) {
    BlockPool& pool = physmem::default_pool();
    void* p = pool.allocate();
    EXPECT_TRUE(is_aligned(p, pool.block_size()));
    pool.deallocate(p);
}

}  // namespace

namespace {

// smaps entries of neighbouring mappings can merge; each Region must be reported alone.
TEST(Region, VerifyDescribesThisRegionOnlyNotItsNeighbours) {
    physmem::RegionOptions o{.bytes = 8 << 20, .alignment = 2 << 20, .backing = Backing::thp, .strict_backing = true};
    try {
        physmem::Region touched(o), untouched(o);
        std::memset(touched.data(), 1, touched.size());
        EXPECT_GT(touched.verify().huge_bytes, 0u);
        EXPECT_LE(touched.verify().resident_bytes, touched.size());
        EXPECT_EQ(untouched.verify().resident_bytes, 0u);
        EXPECT_FALSE(untouched.verify().verified) << "untouched THP region reported as on huge pages";
    } catch (const physmem::backing_unavailable& e) {
        GTEST_SKIP() << e.what();
    }
}

}  // namespace
