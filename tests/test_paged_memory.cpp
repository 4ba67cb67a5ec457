// tests/test_paged_memory.cpp — a PagedArray's memory over its life: the budget changed
// at run time (shrinking evicts, writes dirty leaves and gives frames back to the pool;
// pinned leaves refuse it without loss), and its blocks (frames and table) moved by the
// pool's relocate() and compact() while the contents and paging stay right.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <memory>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "physmem/block_owner.hpp"
#include "physmem/paged_array.hpp"
#include "support.hpp"

namespace {

using physmem::BlockPool;
using physmem::PagedArray;
using physmem::PagingIo;
using Array = PagedArray<std::uint64_t>;

constexpr std::size_t kMiB = 1 << 20;

physmem::PoolOptions held(std::size_t bs, std::size_t capacity) {
    physmem::PoolOptions o = physmem_test::pool_options(bs, capacity);
    o.give_back_delay_ms = 60000;  // the tests release and compact themselves
    return o;
}

std::uint64_t value(std::size_t i, std::uint64_t salt) { return (i + 1) * 0x9E3779B97F4A7C15ull ^ salt; }

void fill(Array& a, std::uint64_t salt) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = value(i, salt);
}

// Every element through get() and through a const iteration.
void expect_all(const Array& a, std::uint64_t salt) {
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.get(i), value(i, salt)) << "index " << i;
    std::size_t i = 0;
    for (std::uint64_t v : a) ASSERT_EQ(v, value(i++, salt)) << "index " << i - 1;
    ASSERT_EQ(i, a.size());
}

// Random writes and reads against a std::vector model: the array keeps paging right.
void churn(Array& a, std::vector<std::uint64_t>& m, std::uint32_t seed, int ops = 2000) {
    std::mt19937_64 rng(seed);
    for (int op = 0; op < ops; ++op) {
        std::size_t i = rng() % a.size();
        if (rng() % 3 == 0) {
            std::uint64_t v = rng();
            a.set(i, v);
            m[i] = v;
        } else {
            ASSERT_EQ(a.get(i), m[i]) << "index " << i << " at op " << op;
        }
    }
}

std::vector<std::uint64_t> model(const Array& a, std::uint64_t salt) {
    std::vector<std::uint64_t> m(a.size());
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = value(i, salt);
    return m;
}

// Moves every block of the array (pool.relocate) and checks that the walk now reaches
// only the new blocks: each leaf's table slot and each present leaf's frame.
void move_every_block(BlockPool& pool, Array& a) {
    std::vector<void*> before = a.pager().blocks();
    for (void* b : before) {
        void* q = pool.relocate(b);
        ASSERT_NE(q, nullptr) << "room to move";
        ASSERT_NE(q, b);
    }
    std::vector<void*> after = a.pager().blocks();
    ASSERT_EQ(after.size(), before.size());
    std::set<std::uintptr_t> now;
    for (void* b : after) now.insert(reinterpret_cast<std::uintptr_t>(b));
    const std::uintptr_t mask = ~(std::uintptr_t{pool.block_size()} - 1);
    auto& p = a.pager();
    for (std::size_t k = 0; k < a.leaf_count(); ++k) {
        ASSERT_TRUE(now.count(reinterpret_cast<std::uintptr_t>(p.slot(k)) & mask)) << "leaf " << k << "'s table slot";
        if (void* f = p.lookup(k)) ASSERT_TRUE(now.count(reinterpret_cast<std::uintptr_t>(f) & mask)) << "leaf " << k;
    }
}

// Every leaf out through a one-leaf budget, then back: what the frames held reached the
// file. The budget is restored.
void expect_model_through_the_file(Array& a, const std::vector<std::uint64_t>& m) {
    std::size_t budget = a.budget();
    a.set_budget(0);
    for (std::size_t i = 0; i < m.size(); ++i) ASSERT_EQ(a.get(i), m[i]) << "index " << i;
    a.set_budget(budget);
}

std::size_t pages_of(const std::vector<void*>& blocks, std::size_t page) {
    std::set<std::uintptr_t> pages;
    for (void* b : blocks) pages.insert(reinterpret_cast<std::uintptr_t>(b) / page);
    return pages.size();
}

// --- the budget at run time --------------------------------------------------------------

TEST(PagedBudget, ShrinkingWritesDirtyLeavesAndKeepsEveryElement) {
    for (PagingIo io : {PagingIo::automatic, PagingIo::sync}) {
        BlockPool pool(held(4096, 16 * kMiB));
        Array a(40 * 512 - 100, pool, {.budget = 16 * 4096, .io = io, .movable = true});
        fill(a, 1);  // the last 16 leaves in memory, dirty
        std::size_t table = pool.stats().blocks_in_use - a.stats().resident;
        a.set_budget(3 * 4096);
        physmem::PagingStats s = a.stats();
        EXPECT_EQ(a.budget(), 3u * 4096);
        EXPECT_EQ(s.frames, 3u);
        EXPECT_LE(s.resident, 3u);
        EXPECT_EQ(pool.stats().blocks_in_use, table + s.resident) << "frames beyond the budget go back to the pool";
        EXPECT_EQ(s.writebacks, 40u - s.resident) << "every dirty leaf that left was written once";
        expect_all(a, 1);
        move_every_block(pool, a);  // the frames kept changed index: the pool still finds them
        expect_all(a, 1);
        EXPECT_LE(a.stats().resident, 3u);
        // Grown again: every leaf fits and stays.
        a.set_budget(1 << 20);
        EXPECT_EQ(a.stats().frames, 40u);
        expect_all(a, 1);
        std::uint64_t loads = a.stats().loads;
        expect_all(a, 1);
        EXPECT_EQ(a.stats().loads, loads) << "all 40 leaves fit the grown budget";
        EXPECT_EQ(a.stats().resident, 40u);
        std::vector<std::uint64_t> m = model(a, 1);
        a.set_budget(5 * 4096);
        churn(a, m, 11);
        expect_model_through_the_file(a, m);
    }
}

TEST(PagedBudget, AtLeastOneLeafAndAtMostAll) {
    BlockPool pool(held(4096, 4 * kMiB));
    Array a(10 * 512, pool, {.budget = 4 * 4096});
    fill(a, 2);
    a.set_budget(0);
    EXPECT_EQ(a.budget(), 4096u);
    EXPECT_EQ(a.stats().resident, 1u);
    expect_all(a, 2);
    a.set_budget(std::size_t{1} << 40);
    EXPECT_EQ(a.budget(), 10u * 4096);
}

TEST(PagedBudget, PinnedLeavesRefuseAShrinkAndNothingIsLost) {
    BlockPool pool(held(4096, 4 * kMiB));
    Array a(12 * 512, pool, {.budget = 6 * 4096});
    fill(a, 3);
    auto& p = a.pager();
    p.pin(10, true);
    p.pin(11, true);
    EXPECT_THROW(a.set_budget(4096), std::runtime_error);
    EXPECT_EQ(a.budget(), 6u * 4096) << "the budget stays as it was";
    // A shrink that leaves room for the pinned leaves works, and they stay where they are.
    void* at10 = p.lookup(10);
    a.set_budget(2 * 4096);
    EXPECT_EQ(p.lookup(10), at10);
    p.unpin(10);
    p.unpin(11);
    expect_all(a, 3);
}

TEST(PagedBudget, ShrinkInsideASegmentCallbackKeepsTheSpanValid) {
    BlockPool pool(held(4096, 4 * kMiB));
    Array a(16 * 512, pool, {.budget = 8 * 4096});
    fill(a, 4);
    std::size_t seen = 0;
    physmem::for_each_segment(a, [&](std::span<std::uint64_t> s) {
        if (seen == 7 * 512) a.set_budget(4096);  // only the pinned leaf may stay
        for (std::uint64_t& v : s) v ^= 5;
        seen += s.size();
    });
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.get(i), value(i, 4) ^ 5) << "index " << i;
    EXPECT_EQ(a.budget(), 4096u);
}

TEST(PagedBudget, ShrinkGivesThePagesBackToTheSystem) {
    const std::size_t bs = 64 << 10;
    BlockPool pool(held(bs, 64 * kMiB));
    Array a(512 * (bs / 8), pool, {.budget = 32 * kMiB, .movable = true});  // 32 MiB of data, all in memory
    fill(a, 6);
    std::size_t page = pool.stats().page_size;
    EXPECT_GE(pool.stats().resident_bytes, 32 * kMiB);
    a.set_budget(2 * kMiB);
    pool.compact();
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.blocks_in_use, a.pager().blocks().size());
    EXPECT_LE(st.resident_bytes, st.blocks_in_use * bs + page) << "resident: only the frames and table left";
    expect_all(a, 6);
}

// Leaves smaller than the blocks: the leaves left in frames beyond the new budget move
// down into free slices, and every block no kept frame uses goes back to the pool.
TEST(PagedBudget, ShrinkWithSmallLeavesPacksThemAndGivesBlocksBack) {
    const std::size_t bs = 64 << 10, leaf = 4096;
    BlockPool pool(held(bs, 64 * kMiB));
    Array a(300 * (leaf / 8) - 5, pool, {.budget = 200 * leaf, .readahead = 0, .leaf_bytes = leaf});
    fill(a, 12);
    EXPECT_EQ(a.pager().blocks().size(), 1u + 13u) << "the root and ceil(200 / 16) frame blocks";
    std::vector<std::uint64_t> m = model(a, 12);
    churn(a, m, 13);
    a.set_budget(21 * leaf);
    EXPECT_EQ(a.stats().frames, 21u);
    EXPECT_LE(a.stats().resident, 21u);
    EXPECT_EQ(a.pager().blocks().size(), 1u + 2u);
    EXPECT_EQ(pool.stats().blocks_in_use, 3u);
    churn(a, m, 14);
    expect_model_through_the_file(a, m);
    a.set_budget(100 * leaf);  // grows again into new blocks
    churn(a, m, 15, 4000);
    EXPECT_LE(a.pager().blocks().size(), 1u + 7u);
    expect_model_through_the_file(a, m);
}

// A leaf copied down must not be one a segment callback holds: the shrink is refused
// before anything changes when one beyond the new budget is pinned.
TEST(PagedBudget, ShrinkWithSmallLeavesRefusesToMoveAPinnedLeaf) {
    const std::size_t bs = 64 << 10, leaf = 4096;
    BlockPool pool(held(bs, 64 * kMiB));
    Array a(40 * (leaf / 8), pool, {.budget = 40 * leaf, .readahead = 0, .leaf_bytes = leaf});
    fill(a, 16);
    const std::size_t last = a.size() - 1;
    bool threw = false;
    physmem::for_each_segment(a, last, last + 1, [&](std::span<std::uint64_t> s) {
        try {
            a.set_budget(2 * leaf);
        } catch (const std::runtime_error&) {
            threw = true;
        }
        s[0] = 77;  // the span is still the leaf's
    });
    EXPECT_TRUE(threw);
    EXPECT_EQ(a.budget(), 40 * leaf);
    std::vector<std::uint64_t> m = model(a, 16);
    m[last] = 77;
    expect_model_through_the_file(a, m);
}

// --- blocks moved by the pool ------------------------------------------------------------

// Every block (root, inner, frames) relocated one at a time, across block sizes and
// table depths; the contents stay, and paging goes on into the moved frames.
TEST(PagedRelocation, EveryBlockMovesAndPagingGoesOn) {
    struct Case {
        std::size_t bs, leaves, budget, leaf = 0;  // leaf: PagingOptions::leaf_bytes
    };
    for (Case c : {Case{4096, 20, 6}, Case{4096, 600, 40}, Case{16 << 10, 2100, 64}, Case{64 << 10, 30, 8},
                   Case{64 << 10, 300, 37, 4096}, Case{16 << 10, 50, 6, 8192}}) {
        SCOPED_TRACE(testing::Message() << c.bs << " B blocks, " << c.leaf << " B leaves, " << c.leaves
                                        << " leaves, budget " << c.budget);
        BlockPool pool(held(c.bs, 64 * kMiB));
        const std::size_t leaf = c.leaf ? c.leaf : c.bs;
        Array a(c.leaves * (leaf / 8) - 7, pool,
                {.budget = c.budget * leaf, .readahead = 4, .movable = true, .leaf_bytes = c.leaf});
        fill(a, 7);
        move_every_block(pool, a);
        expect_all(a, 7);
        std::vector<std::uint64_t> m = model(a, 7);
        churn(a, m, 8);
        move_every_block(pool, a);
        expect_model_through_the_file(a, m);
    }
}

// A one-level table's root is walked from the array's own copy of it (paged_array.hpp):
// moving the array and then relocating the root must leave the copy current.
TEST(PagedRelocation, TheRootMovesAfterTheArrayMoved) {
    const std::size_t bs = 4096;
    BlockPool pool(held(bs, 4 * kMiB));
    Array a(20 * (bs / 8), pool, {.budget = 8 * bs, .movable = true});
    fill(a, 11);
    Array b(std::move(a));
    Array c(bs / 8, pool, {.movable = true});
    c = std::move(b);
    ASSERT_EQ(c.pager().fixed_root(), c.pager().slot(0));
    void* q = pool.relocate(const_cast<void**>(c.pager().fixed_root()));
    ASSERT_NE(q, nullptr);
    ASSERT_EQ(static_cast<const void*>(c.pager().fixed_root()), q);
    // The pool's free blocks (the old root among them) now point every entry at zeros: a
    // walk from a stale copy of the root reads them.
    std::vector<std::uint64_t> zeros(c.size());  // an entry plus any index stays inside it
    std::vector<void*> taken;
    while (void* p = pool.try_allocate()) {
        taken.push_back(p);
        std::fill_n(static_cast<std::uintptr_t*>(p), bs / sizeof(void*), reinterpret_cast<std::uintptr_t>(zeros.data()));
    }
    expect_all(c, 11);
    for (void* p : taken) pool.deallocate(p);
    c[5] = 99;
    EXPECT_EQ(c.get(5), 99u);
}

// Two arrays' blocks interleaved in one pool; the second goes; compact() packs the
// first into fewer pages, gives the rest back, and the first goes on paging right —
// iterators made before the compaction included.
TEST(PagedRelocation, CompactionPacksFramesAndTableAndGivesPagesBack) {
    const std::size_t bs = 4096;
    BlockPool pool(held(bs, 16 * kMiB));
    std::size_t page = pool.stats().page_size;
    if (page <= bs) GTEST_SKIP() << "the pool's pages are its blocks (no huge pages): nothing to pack";
    auto a = std::make_unique<Array>(1200 * 512, pool, physmem::PagingOptions{.budget = 700 * bs, .movable = true});
    auto b = std::make_unique<Array>(1200 * 512, pool, physmem::PagingOptions{.budget = 700 * bs, .movable = true});
    for (std::size_t i = 0; i < a->size(); ++i) (*a)[i] = value(i, 9), (*b)[i] = value(i, 10);
    Array::const_iterator it = std::as_const(*a).begin() + 1100 * 512 + 3;
    ASSERT_EQ(*it, value(1100 * 512 + 3, 9));
    std::size_t spread = pages_of(a->pager().blocks(), page);
    b.reset();
    physmem::CompactResult r = pool.compact();
    EXPECT_GT(r.blocks_moved, 0u);
    EXPECT_GT(r.pages_emptied, 0u);
    std::vector<void*> blocks = a->pager().blocks();
    EXPECT_LT(pages_of(blocks, page), spread);
    physmem::PoolStats st = pool.stats();
    EXPECT_EQ(st.blocks_in_use, blocks.size());
    EXPECT_LE(st.resident_bytes, blocks.size() * bs + page);
    EXPECT_EQ(*it, value(1100 * 512 + 3, 9)) << "the iterator revalidates";
    expect_all(*a, 9);
    std::vector<std::uint64_t> m = model(*a, 9);
    churn(*a, m, 12);
    expect_model_through_the_file(*a, m);
}

// By default the blocks are pinned: the pool never moves them, and a thread reading the
// array goes on beside a compaction of the pool's other movable blocks.
TEST(PagedRelocation, ByDefaultBlocksArePinnedAndReadersRunBesideACompaction) {
    const std::size_t bs = 4096;
    BlockPool pool(held(bs, 16 * kMiB));
    Array a(600 * 512, pool, {.budget = 64 * bs});
    fill(a, 13);
    for (void* b : a.pager().blocks()) EXPECT_EQ(pool.relocate(b), nullptr) << "a pinned block moved";
    struct Table final : physmem::BlockOwner {  // another structure's movable blocks
        std::vector<void*> blocks;
        std::size_t bytes = 0;
        bool relocate(std::uintptr_t cookie, void* from, void* to) noexcept override {
            if (cookie >= blocks.size() || blocks[cookie] != from) return false;
            std::memcpy(to, from, bytes);
            blocks[cookie] = to;
            return true;
        }
    } t;
    t.bytes = bs;
    std::atomic<bool> stop{false}, bad{false};
    std::thread reader([&] {
        std::mt19937_64 rng(14);
        while (!stop.load(std::memory_order_relaxed))
            for (int k = 0; k < 256; ++k) {
                std::size_t i = rng() % a.size();
                if (a.get(i) != value(i, 13)) bad = true;
            }
    });
    for (int round = 0; round < 6; ++round) {  // about 512 more live blocks a round
        for (std::size_t i = 0; i < 1024; ++i) {
            t.blocks.push_back(pool.allocate(&t, t.blocks.size()));
            std::memset(t.blocks.back(), static_cast<int>(t.blocks.size() & 0xff), bs);
        }
        for (std::size_t i = 0; i < t.blocks.size(); i += 2)
            if (t.blocks[i]) pool.deallocate(t.blocks[i]), t.blocks[i] = nullptr;
        pool.compact();
    }
    stop = true;
    reader.join();
    EXPECT_FALSE(bad) << "a reader saw a wrong value beside a compaction";
    for (std::size_t i = 0; i < t.blocks.size(); ++i)
        if (t.blocks[i]) {
            EXPECT_EQ(*static_cast<unsigned char*>(t.blocks[i]), (i + 1) & 0xff);
            pool.deallocate(t.blocks[i]);
        }
    expect_all(a, 13);
}

}  // namespace
