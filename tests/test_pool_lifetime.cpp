// tests/test_pool_lifetime.cpp — a pool's end: destroyed with live blocks it aborts naming
// them (leak_check) or, opted out, leaves their regions mapped; the default pool is never
// destroyed, so a program may exit with arrays still on it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "physmem/hugepages.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_array.hpp"
#include "support.hpp"

using physmem::BlockPool;
using physmem::PoolOptions;
using physmem_test::pool_options;

namespace {

TEST(PoolLifetimeDeathTest, DestroyedWithLiveBlocksAbortsNamingTheirCount) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            BlockPool pool(pool_options(64 << 10, 1 << 20));
            for (int i = 0; i < 3; ++i) (void)pool.allocate();
        },
        "fatal: BlockPool destroyed with 3 live blocks of 64 KiB \\(192 KiB\\).*leak_check");
}

// The audit's case: the pool goes before the array on it. It used to unmap the blocks
// under the array and ~TreeArray faulted; now the pool's destructor stops it, by name.
TEST(PoolLifetimeDeathTest, PoolDestroyedBeforeItsArrayAbortsInsteadOfFaulting) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto pool = std::make_unique<BlockPool>(pool_options(4 << 10, 4 << 20));
            physmem::TreeArray<int> a(100'000, *pool);
            pool.reset();
        },
        "BlockPool destroyed with [0-9]+ live blocks of 4 KiB");
}

TEST(PoolLifetime, LeakCheckOffLeavesTheLiveBlocksMapped) {
    PoolOptions o = pool_options(64 << 10, 4 << 20);
    o.leak_check = false;
    auto pool = std::make_unique<BlockPool>(o);
    auto* p = static_cast<unsigned char*>(pool->allocate());
    std::memset(p, 0x5a, pool->block_size());
    pool.reset();  // no abort; the region holding p stays mapped (leaked until exit)
    for (std::size_t i = 0; i < (64 << 10); i += 4096) ASSERT_EQ(p[i], 0x5a) << i;
    p[0] = 1;  // still writable
}

TEST(PoolLifetime, FreedPoolsAreDestroyedWithoutComplaint) {
    BlockPool pool(pool_options(64 << 10, 1 << 20));
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) b.push_back(p);
    for (void* p : b) pool.deallocate(p);
}  // leak_check on: nothing live, nothing said

// A program may end — by exit() or by returning from main — with arrays still on the
// default pool: static arrays, arrays exit() skipped, arrays in a static container made
// before the pool and destroyed after it. Nothing aborts and no late destructor faults.
TEST(PoolLifetimeDeathTest, ExitWithArraysOnTheDefaultPoolIsNormal) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            static std::vector<physmem::TreeArray<int>> made_first;  // before the pool
            made_first.emplace_back(100'000);                          // destroyed after it
            static physmem::TreeArray<int> on_it(100'000);
            physmem::TreeArray<int> skipped(100'000);  // exit() runs no local destructor
            made_first[0][7] = on_it[7] = skipped[7] = 1;
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

// The default pool is never destroyed, yet the nr_hugepages it raised comes back at exit
// (an exit handler; its block is still live then). Changes the system: only when the test
// command asks (PHYSMEM_TEST_RESERVE_HUGE_PAGES=1, root); "Hugetlb" in the name runs it
// with the serial huge-page tests.
TEST(PoolLifetimeDeathTest, DefaultPoolRestoresItsHugetlbReservationAtExit) {
    const char* ask = std::getenv("PHYSMEM_TEST_RESERVE_HUGE_PAGES");
    if (!ask || std::strcmp(ask, "1") != 0) GTEST_SKIP() << "set PHYSMEM_TEST_RESERVE_HUGE_PAGES=1 as root";
    const std::size_t page = 2 << 20;
    physmem::HugePageCounts c = physmem::huge_page_counts(page);
    if (!c.supported) GTEST_SKIP() << "no 2 MiB hugetlb pages here";
    if (c.free - c.reserved > 0) GTEST_SKIP() << "free 2 MiB pages already: the pool would reserve none";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::pair<const char*, const char*> env[] = {
        {"PHYSMEM_BACKING", "2m"}, {"PHYSMEM_STRICT_BACKING", "1"}, {"PHYSMEM_RESERVE_HUGE_PAGES", "1"},
        {"PHYSMEM_BLOCK_SIZE", "64K"}, {"PHYSMEM_CAPACITY", "2M"}};
    for (auto [k, v] : env) ::setenv(k, v, 1);
    EXPECT_EXIT(
        {
            std::memset(physmem::default_pool().allocate(), 1, 4096);  // live at exit
            std::exit(0);
        },
        ::testing::ExitedWithCode(0),
        "reserved huge pages: nr_hugepages \\(2 MiB\\).*restored nr_hugepages \\(2 MiB\\) to [0-9]+");
    for (auto [k, v] : env) ::unsetenv(k);
    EXPECT_EQ(physmem::huge_page_counts(page).total, c.total) << "nr_hugepages not restored";
}

}  // namespace
