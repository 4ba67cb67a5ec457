// tests/test_give_back.cpp — BlockPool placement (fullest page first), giving pages back
// (checked in /proc/self/smaps, not only in stats), shrinking a grown pool, and moving
// blocks of a structure that is not a TreeArray through the owner protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "physmem/block_owner.hpp"
#include "physmem/pool.hpp"
#include "support.hpp"

using physmem::Backing;
using physmem::BlockPool;
using physmem::PoolOptions;
using physmem_test::pool_options;

namespace {

constexpr std::size_t kMiB = 1 << 20;

PoolOptions quick(std::size_t bs, std::size_t capacity, unsigned delay_ms = 0) {
    PoolOptions o = pool_options(bs, capacity);
    o.give_back_delay_ms = delay_ms;
    return o;
}

std::size_t smaps_resident(const BlockPool& pool) {
    std::size_t r = 0;
    for (const auto& rep : pool.verify_backing()) r += rep.resident_bytes;
    return r;
}

// A user structure on pool blocks: a table of blocks, each stamped with its index. The
// cookie is the index; relocate copies the bytes and updates the table entry.
class BlockTable final : public physmem::BlockOwner {
  public:
    explicit BlockTable(BlockPool& pool) : pool_(pool) {}
    ~BlockTable() {
        for (void* b : blocks_)
            if (b) pool_.deallocate(b);
    }
    void add(std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t i = blocks_.size();
            void* b = pool_.allocate(this, i);
            stamp(b, i);
            blocks_.push_back(b);
        }
    }
    void drop(std::size_t i) {
        pool_.deallocate(blocks_[i]);
        blocks_[i] = nullptr;
    }
    bool intact() const {
        for (std::size_t i = 0; i < blocks_.size(); ++i)
            if (blocks_[i] && !check(blocks_[i], i)) return false;
        return true;
    }
    std::size_t size() const { return blocks_.size(); }
    void* block(std::size_t i) const { return blocks_[i]; }
    bool refuse = false;  // the death test: lose track of blocks

    bool relocate(std::uintptr_t cookie, void* from, void* to) noexcept override {
        if (refuse || cookie >= blocks_.size() || blocks_[cookie] != from) return false;
        std::memcpy(to, from, pool_.block_size());
        blocks_[cookie] = to;
        return true;
    }

  private:
    void stamp(void* b, std::size_t i) const {
        auto* w = static_cast<std::uint64_t*>(b);
        for (std::size_t k = 0; k < pool_.block_size() / 8; k += 512) w[k] = i * 1000003 + k;
    }
    bool check(const void* b, std::size_t i) const {
        auto* w = static_cast<const std::uint64_t*>(b);
        for (std::size_t k = 0; k < pool_.block_size() / 8; k += 512)
            if (w[k] != i * 1000003 + k) return false;
        return true;
    }
    BlockPool& pool_;
    std::vector<void*> blocks_;
};

TEST(Placement, NextBlockComesFromTheFullestPage) {
    BlockPool pool(quick(64 << 10, 8 * kMiB, 10000));
    std::size_t page = pool.stats().page_size, per_page = page / pool.block_size();
    ASSERT_GE(per_page, 4u);
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) b.push_back(p);
    auto* base = static_cast<char*>(b[0]);
    auto page_of = [&](void* p) { return static_cast<std::size_t>(static_cast<char*>(p) - base) / page; };
    for (std::size_t k = 0; k < 3; ++k) pool.deallocate(b[k]);             // page 0: 3 free
    pool.deallocate(b[per_page + 1]);                                         // page 1: 1 free
    void* fullest = pool.allocate();
    void* next = pool.allocate();
    EXPECT_EQ(page_of(fullest), 1u) << "the fullest page with room goes first";
    EXPECT_EQ(page_of(next), 0u);
    pool.deallocate(fullest);
    pool.deallocate(next);
    for (std::size_t k = 3; k < b.size(); ++k)
        if (k != per_page + 1) pool.deallocate(b[k]);
}

TEST(GiveBack, EmptyPagesLeaveTheProcessAsSmapsShows) {
    BlockPool pool(quick(64 << 10, 32 * kMiB));
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) {
        std::memset(p, 1, pool.block_size());
        b.push_back(p);
    }
    std::size_t page = pool.stats().page_size, per_page = page / pool.block_size();
    std::size_t before = smaps_resident(pool);
    EXPECT_GE(before, 30 * kMiB);
    for (std::size_t i = 0; i < b.size() / 2; ++i) pool.deallocate(b[i]);  // the first half of the pages
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.given_back_bytes, 16 * kMiB) << "delay 0: given back on the last free";
    EXPECT_EQ(st.resident_bytes, 16 * kMiB);
    EXPECT_LE(smaps_resident(pool), before - 15 * kMiB);
    for (std::size_t i = 0; i < per_page; ++i) {
        b[i] = pool.allocate();
        EXPECT_EQ(*static_cast<char*>(b[i]), 0);
    }
    (void)page;
    for (std::size_t i = 0; i < per_page; ++i) pool.deallocate(b[i]);
    for (std::size_t i = b.size() / 2; i < b.size(); ++i) pool.deallocate(b[i]);
}

TEST(GiveBack, DelayHoldsEmptyPagesUntilReleaseIsAsked) {
    BlockPool pool(quick(64 << 10, 8 * kMiB, 60000));
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) {
        std::memset(p, 1, pool.block_size());
        b.push_back(p);
    }
    for (void* p : b) pool.deallocate(p);
    EXPECT_EQ(pool.stats().resident_bytes, 8 * kMiB) << "within the delay nothing is given back";
    EXPECT_GE(smaps_resident(pool), 7 * kMiB);
    EXPECT_EQ(pool.release(), 8 * kMiB);
    EXPECT_EQ(pool.stats().resident_bytes, 0u);
    EXPECT_LT(smaps_resident(pool), 1 * kMiB);
}

// release() gives back adjacent empty pages as one range: the run must stop at a page
// that still holds a live block (its bytes intact, the page resident) and take the empty
// pages on both sides of it.
TEST(GiveBack, ReleaseGivesBackRunsAroundALiveNeighbour) {
    BlockPool pool(quick(64 << 10, 8 * kMiB, 60000));
    std::size_t page = pool.stats().page_size, per_page = page / pool.block_size();
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) {
        std::memset(p, 1, pool.block_size());
        b.push_back(p);
    }
    ASSERT_EQ(b.size(), 4 * per_page) << "four give-back pages";
    auto* base = static_cast<char*>(b[0]);
    std::sort(b.begin(), b.end());
    ASSERT_EQ(static_cast<char*>(b[0]), base);
    void* kept = b[2 * per_page + 3];  // one live block on page 2
    std::memset(kept, 7, pool.block_size());
    for (void* p : b)
        if (p != kept) pool.deallocate(p);
    EXPECT_EQ(pool.release(), 3 * page) << "pages 0, 1 and 3 went, page 2 stayed";
    EXPECT_EQ(pool.stats().resident_bytes, page);
    EXPECT_LE(smaps_resident(pool), page + kMiB / 2);
    for (std::size_t k = 0; k < pool.block_size(); k += 4096)
        ASSERT_EQ(static_cast<char*>(kept)[k], 7) << "the live block's bytes at " << k;
    std::vector<void*> again;
    while (void* p = pool.try_allocate()) again.push_back(p);
    for (void* p : again)
        if (static_cast<std::size_t>(static_cast<char*>(p) - base) / page != 2)
            ASSERT_EQ(*static_cast<char*>(p), 0) << "a page given back reads as zero";
    for (void* p : again) pool.deallocate(p);
    pool.deallocate(kept);
}

// The timed give-back (maintain(), the background thread) takes a neighbour into its
// range only when that page is due too: an adjacent page emptied just now stays.
TEST(GiveBack, TimedGiveBackLeavesAnAdjacentPageThatIsNotDue) {
    PoolOptions o = quick(64 << 10, 8 * kMiB, 100);
    o.background_give_back = false;  // maintain() is the only caller: deterministic
    BlockPool pool(o);
    std::size_t page = pool.stats().page_size, per_page = page / pool.block_size();
    std::vector<void*> b;
    while (void* p = pool.try_allocate()) {
        std::memset(p, 1, pool.block_size());
        b.push_back(p);
    }
    ASSERT_EQ(b.size(), 4 * per_page);
    std::sort(b.begin(), b.end());
    for (std::size_t i = 0; i < per_page; ++i) pool.deallocate(b[i]);  // page 0 empties
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    for (std::size_t i = per_page; i < 2 * per_page; ++i) pool.deallocate(b[i]);  // page 1, now
    pool.maintain();
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.given_back_bytes, page) << "page 0 was due, page 1 (adjacent) was not";
    EXPECT_EQ(st.resident_bytes, 3 * page);
    for (std::size_t i = 2 * per_page; i < b.size(); ++i) pool.deallocate(b[i]);
}

// A prefaulted pool is resident from the start: its stats say so, the timed give-back
// leaves the pages no block has used alone (the prefault is the point), and release()
// gives them back with the rest.
TEST(GiveBack, PrefaultedPagesCountAsResidentAndGoOnlyWhenReleaseIsAsked) {
    PoolOptions o = quick(64 << 10, 8 * kMiB);  // delay 0: emptied pages go on the last free
    o.prefault = true;
    BlockPool pool(o);
    if (pool.stats().bytes_prefaulted == 0) GTEST_SKIP() << "prefaulting refused here";
    std::size_t page = pool.stats().page_size;
    EXPECT_EQ(pool.stats().resident_bytes, 8 * kMiB);
    EXPECT_GE(smaps_resident(pool), 7 * kMiB);
    void* p = pool.allocate();
    std::memset(p, 1, pool.block_size());
    pool.deallocate(p);  // its page emptied: given back at once (delay 0); the others stay
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.given_back_bytes, page);
    EXPECT_EQ(st.resident_bytes, 8 * kMiB - page) << "pages never used are not given back on the timer";
    EXPECT_EQ(pool.release(), 8 * kMiB - page);
    EXPECT_EQ(pool.stats().resident_bytes, 0u);
    EXPECT_LT(smaps_resident(pool), 1 * kMiB);
    void* q = pool.allocate();  // still usable, zeroed
    EXPECT_EQ(*static_cast<char*>(q), 0);
    pool.deallocate(q);
}

// maintain() (the automatic policy) compacts, and its release leaves the prefaulted
// pages no block has used: only the page the compaction emptied goes.
TEST(GiveBack, MaintainKeepsAPrefaultNoBlockHasUsed) {
    PoolOptions o = quick(64 << 10, 8 * kMiB, 60000);
    o.prefault = true;
    BlockPool pool(o);
    if (pool.stats().bytes_prefaulted == 0) GTEST_SKIP() << "prefaulting refused here";
    std::size_t page = pool.stats().page_size, per_page = page / pool.block_size();
    if (pool.stats().blocks_total < 3 * per_page) GTEST_SKIP() << "fewer than three give-back pages";
    BlockTable t(pool);
    t.add(per_page + 1);  // page 0 full, one block on page 1
    for (std::size_t i = 0; i < per_page / 2; ++i) t.drop(i);
    pool.maintain();
    EXPECT_GT(pool.stats().blocks_moved, 0u) << "maintain compacted";
    EXPECT_EQ(pool.stats().resident_bytes, 8 * kMiB - page) << "only the page the compaction emptied went";
    EXPECT_TRUE(t.intact());
}

TEST(GiveBack, PoolThatGrewShrinksWhenRegionsEmpty) {
    PoolOptions o = quick(64 << 10, 4 * kMiB, 60000);
    o.grow = true;
    o.max_capacity = 64 * kMiB;
    BlockPool pool(o);
    std::vector<void*> b;
    for (int i = 0; i < 400; ++i) b.push_back(pool.allocate());  // 25 MiB: regions of 4, 8, 16
    std::size_t mapped = pool.stats().bytes_mapped;
    ASSERT_GE(pool.stats().regions, 3u);
    for (void* p : b) pool.deallocate(p);
    pool.release();
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.regions, 1u);
    EXPECT_EQ(st.regions_unmapped, 2u);
    EXPECT_LT(st.bytes_mapped, mapped);
    EXPECT_EQ(st.blocks_total, 4 * kMiB / (64 << 10));
    b.clear();
    for (int i = 0; i < 101; ++i) b.push_back(pool.allocate());  // and can grow again
    EXPECT_GE(pool.stats().regions, 2u);
    for (void* p : b) pool.deallocate(p);
}

// hugetlb pages (2 MiB reserved as root with PHYSMEM_TEST_RESERVE_HUGE_PAGES=1, or the
// 1 GiB pages the machine has): MADV_DONTNEED frees them; smaps Private_Hugetlb says so.
void hugetlb_give_back(Backing rung, std::size_t page) {
    PoolOptions o = quick(2 * kMiB, page);
    o.backing = rung;
    o.strict_backing = true;
    const char* v = std::getenv("PHYSMEM_TEST_RESERVE_HUGE_PAGES");
    o.reserve_huge_pages = v && v[0] == '1';
    try {
        BlockPool pool(o);
        void* p = pool.allocate();
        std::memset(p, 1, 4096);
        EXPECT_EQ(pool.verify_backing()[0].huge_bytes, page);
        pool.deallocate(p);
        EXPECT_EQ(pool.stats().given_back_bytes, page);
        EXPECT_EQ(pool.verify_backing()[0].huge_bytes, 0u) << "the hugetlb page is still mapped";
        p = pool.allocate();  // a touch after giving back is safe: the reservation came back
        EXPECT_EQ(*static_cast<char*>(p), 0);
        std::memset(p, 2, 4096);
        EXPECT_EQ(pool.verify_backing()[0].huge_bytes, page);
        pool.deallocate(p);
    } catch (const physmem::backing_unavailable& e) {
        GTEST_SKIP() << e.what();
    }
}

TEST(GiveBack, HugetlbTwoMegPage) { hugetlb_give_back(Backing::page_2m, 2 * kMiB); }
TEST(GiveBack, HugetlbOneGigPage) { hugetlb_give_back(Backing::page_1g, std::size_t{1} << 30); }

// --- moving blocks of a user structure --------------------------------------------------

TEST(OwnerProtocol, CompactMovesAUserStructureAndGivesPagesBack) {
    BlockPool pool(quick(64 << 10, 64 * kMiB, 60000));
    BlockTable t(pool);
    t.add(1024);  // the whole pool
    std::mt19937 rng(7);
    std::size_t live = t.size();
    for (std::size_t i = 0; i < t.size(); ++i)
        if (rng() % 2) t.drop(i), --live;
    ASSERT_TRUE(t.intact());
    std::size_t page = pool.stats().page_size;
    physmem::CompactResult r = pool.compact();
    EXPECT_GT(r.blocks_moved, 0u);
    EXPECT_TRUE(t.intact());
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.blocks_in_use, live);
    EXPECT_LE(st.resident_bytes, live * pool.block_size() + page);
    EXPECT_LE(smaps_resident(pool), live * pool.block_size() + page + 64 * 1024);
    EXPECT_EQ(st.blocks_moved, r.blocks_moved);
}

TEST(OwnerProtocol, PinnedBlocksNeverMoveAndKeepTheirPage) {
    BlockPool pool(quick(64 << 10, 16 * kMiB, 60000));
    std::size_t per_page = pool.stats().page_size / pool.block_size();
    BlockTable t(pool);
    t.add(per_page * 2);
    void* pinned = pool.allocate();  // page 2, alone with movable blocks after it
    t.add(per_page - 1);
    for (std::size_t i = 0; i < t.size(); i += 2) t.drop(i);
    pool.compact();
    EXPECT_TRUE(t.intact());
    EXPECT_TRUE(pool.owns(pinned));
    EXPECT_EQ(pool.relocate(pinned), nullptr);
    pool.deallocate(pinned);
}

TEST(OwnerProtocol, RelocateOneBlockOrReportNoRoom) {
    BlockPool pool(quick(64 << 10, 4 * kMiB, 60000));
    std::size_t per_page = pool.stats().page_size / pool.block_size();
    BlockTable t(pool);
    t.add(per_page * 2);  // the pool is full
    void* old = t.block(3);
    EXPECT_EQ(pool.relocate(old), nullptr) << "no room elsewhere";
    EXPECT_EQ(t.block(3), old);
    t.drop(per_page + 5);  // a hole in the other page
    void* moved = pool.relocate(old);
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(t.block(3), moved);
    EXPECT_TRUE(t.intact());
    EXPECT_EQ(pool.stats().blocks_in_use, 2 * per_page - 1);
}

TEST(OwnerProtocol, SetOwnerPinsAndUnpins) {
    BlockPool pool(quick(64 << 10, 4 * kMiB, 60000));
    BlockTable t(pool);
    t.add(2);
    t.drop(1);
    pool.set_owner(t.block(0), nullptr, 0);
    EXPECT_EQ(pool.relocate(t.block(0)), nullptr);
    pool.set_owner(t.block(0), &t, 0);
    EXPECT_NE(pool.relocate(t.block(0)), nullptr);
    EXPECT_TRUE(t.intact());
}

TEST(OwnerProtocolDeathTest, OwnerThatCannotFollowAbortsNamingTheBlock) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    BlockPool pool(quick(64 << 10, 4 * kMiB, 60000));
    BlockTable t(pool);
    t.add(4);
    t.drop(0);
    t.refuse = true;
    EXPECT_DEATH(pool.relocate(t.block(1)), "failed to relocate block 0x[0-9a-f]+ \\(cookie 0x1\\)");
    t.refuse = false;
}

TEST(Maintain, CompactsOnlyAboveTheThreshold) {
    PoolOptions o = quick(64 << 10, 32 * kMiB, 60000);
    o.compact_threshold = 0;
    BlockPool off(o);
    o.compact_threshold = 0.25;
    BlockPool on(o);
    for (BlockPool* pool : {&off, &on}) {
        BlockTable t(*pool);
        t.add(512);
        for (std::size_t i = 0; i < t.size(); i += 4) t.drop(i), t.drop(i + 1), t.drop(i + 2);
        pool->maintain();
        EXPECT_TRUE(t.intact());
        if (pool == &off) EXPECT_EQ(pool->stats().blocks_moved, 0u);
        else EXPECT_LE(pool->stats().resident_bytes, 128 * (64u << 10) + pool->stats().page_size);
    }
}

// The contract: while compact() runs, other threads may allocate and free pinned blocks
// (they wait on the lock) — never touch the movable structure.
TEST(Concurrency, PinnedTrafficDuringCompactionIsSafe) {
    BlockPool pool(quick(64 << 10, 128 * kMiB, 0));
    BlockTable t(pool);
    t.add(1024);
    for (std::size_t i = 0; i < t.size(); i += 2) t.drop(i);
    std::atomic<bool> stop{false};
    std::atomic<long> bad{0};
    std::thread churn([&] {
        std::vector<void*> mine;
        for (unsigned r = 0; !stop.load() || r < 100; ++r) {
            if (void* p = pool.try_allocate()) {
                std::memset(p, 0x5a, 4096);
                mine.push_back(p);
            }
            if (mine.size() > 16 || (!mine.empty() && r % 3 == 0)) {
                void* p = mine.back();
                mine.pop_back();
                bad += static_cast<unsigned char*>(p)[4095] != 0x5a;
                pool.deallocate(p);
            }
        }
        for (void* p : mine) pool.deallocate(p);
    });
    for (int k = 0; k < 20; ++k) {
        pool.compact();
        ASSERT_TRUE(t.intact());
    }
    stop = true;
    churn.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(t.intact());
}

}  // namespace
