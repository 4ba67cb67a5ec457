// tests/test_checked_array.cpp — TreeArray in checked mode (issue 24, item 3) and the seeded
// bug suite: every seeded bug caught — under the throwing policy here, and in a child
// process under the fatal policy (CheckedArrayDeathTest) with the message naming the array,
// the access and the index — and the ordinary kernels (scans, GUPS-like updates, a sort,
// with compaction and migration between them, two reader threads) raise nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include "physmem/algorithm.hpp"
#include "physmem/capability.hpp"
#include "physmem/checked_tree_array.hpp"
#include "physmem/domain.hpp"
#include "support.hpp"
#include "violation.hpp"

using namespace physmem;

namespace {

constexpr std::size_t kBlock = 4096;  // 512 uint64 a leaf: many leaves in small arrays
using u64 = std::uint64_t;
using Checked = CheckedTreeArray<u64>;

PoolOptions tagged(std::size_t bs = kBlock, std::size_t capacity = 32 << 20) {
    PoolOptions o = physmem_test::pool_options(bs, capacity);
    o.give_back_delay_ms = 0;
    o.tags = true;
    return o;
}

using physmem_test::caught;
using physmem_test::use;

void fill_iota(Checked& a) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = i;
}

// A one-leaf array whose leaf compact() moves: page A full but one block, the leaf alone
// on page B (blocks are placed fullest page first), then one block of A freed.
struct MovableLeaf {
    BlockPool& pool;
    std::vector<void*> filler;
    MovableLeaf(BlockPool& p) : pool(p) {
        std::size_t per_page = pool.stats().page_size / kBlock;
        for (std::size_t i = 0; i < per_page; ++i) filler.push_back(pool.allocate());
    }
    void make_room() {
        pool.deallocate(filler.back());
        filler.pop_back();
    }
    ~MovableLeaf() {
        for (void* b : filler) pool.deallocate(b);
    }
};

}  // namespace

TEST(CheckedArray, NeedsATaggedPool) {
    BlockPool plain(physmem_test::pool_options(kBlock, 8 << 20));
    EXPECT_THROW(Checked(10, plain), std::invalid_argument);
    BlockPool pool(tagged());
    Checked a(10, pool);
    EXPECT_THROW(a.migrate(plain), std::invalid_argument);
    EXPECT_EQ(a.size(), 10u);
}

TEST(CheckedArray, BehavesLikeTreeArray) {
    BlockPool pool(tagged());
    Checked a(0, pool, Policy::throw_error, "grown");
    std::vector<u64> v;
    for (u64 i = 0; i < 5000; ++i) {
        a.push_back(i * 7 % 1000);
        v.push_back(i * 7 % 1000);
    }
    EXPECT_EQ(a.leaf_count(), (5000 + 511) / 512);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), v.begin(), v.end()));
    EXPECT_EQ(physmem::accumulate(a.begin(), a.end(), u64{0}), std::accumulate(v.begin(), v.end(), u64{0}));
    u64 s = 0;
    for_each_segment(a, [&](std::span<u64> seg) { for (u64 x : seg) s += x; });
    EXPECT_EQ(s, std::accumulate(v.begin(), v.end(), u64{0}));
    u64 part = 0;
    for_each_segment(a, 100, 1500, [&](std::span<u64> seg) { for (u64 x : seg) part += x; });
    EXPECT_EQ(part, std::accumulate(v.begin() + 100, v.begin() + 1500, u64{0}));
    u64 strided = 0;
    for_each_strided(a, 3, 700, [&](u64& x) { strided += x; });
    u64 want = 0;
    for (std::size_t i = 3; i < v.size(); i += 700) want += v[i];
    EXPECT_EQ(strided, want);
    // Backwards across leaves, and random access.
    std::size_t i = a.size();
    for (auto it = a.end(); it != a.begin();) EXPECT_EQ(*--it, v[--i]);
    EXPECT_EQ(a.begin()[4321], v[4321]);
    EXPECT_EQ(a.end() - a.begin(), 5000);
    while (a.size() > 700) a.pop_back();
    EXPECT_EQ(a.leaf_count(), 2u);
    EXPECT_EQ(a.back(), v[699]);
    a.resize(3000, 9);
    EXPECT_EQ(a[2999], 9u);
    Checked copy = a;
    EXPECT_TRUE(std::equal(copy.begin(), copy.end(), a.begin(), a.end()));
    Checked moved = std::move(copy);
    EXPECT_EQ(moved[2999], 9u);
    a.clear();
    EXPECT_EQ(a.begin(), a.end());
}

// end() is built inline and == against it tests "no leaf and the same index" (so a loop's
// own end test folds into ++'s): every way of reaching the end equals it, and no position
// before it does, whether or not the size ends a leaf.
TEST(CheckedArray, EveryWayToTheEndEqualsEnd) {
    BlockPool pool(tagged());
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{511}, std::size_t{512}, std::size_t{513},
                          std::size_t{1024}, std::size_t{1500}}) {
        Checked a(n, pool, Policy::throw_error, "ends");
        const Checked& c = a;
        std::size_t steps = 0;
        for (auto it = a.begin(); it != a.end(); ++it) ASSERT_LT(steps++, n) << n;
        EXPECT_EQ(steps, n);
        EXPECT_EQ(a.begin() + std::ptrdiff_t(n), a.end()) << n;
        EXPECT_EQ(c.cbegin() + std::ptrdiff_t(n), c.cend()) << n;
        EXPECT_EQ(Checked::const_iterator(a.end()), c.end()) << n;
        EXPECT_EQ(std::ranges::distance(a.begin(), a.end()), std::ptrdiff_t(n));
        if (n == 0) continue;
        EXPECT_NE(a.begin() + std::ptrdiff_t(n - 1), a.end()) << n;
        EXPECT_EQ(a.end() - 1 + 1, a.end()) << n;
        auto it = a.end();
        --it;
        EXPECT_EQ(it.index(), n - 1);
        EXPECT_NE(it, a.end());
        EXPECT_EQ(++it, a.end()) << n;
        EXPECT_NE(a.begin(), a.end());
    }
    EXPECT_EQ(Checked::iterator(), Checked::iterator());
}

// --- seeded bugs, throwing policy ------------------------------------------------------------

TEST(CheckedArraySeeded, OutOfBoundsByOneElement) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    EXPECT_EQ(caught([&] { a[1000] = 1; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.at(1000); }), Violation::bounds);
    EXPECT_EQ(caught([&] { use(a[~std::size_t{0}]); }), Violation::bounds);  // "index -1"
    EXPECT_EQ(caught([&] { for_each_segment(a, 0, 1001, [](auto) {}); }), Violation::bounds);
    Checked empty(0, pool, Policy::throw_error);
    EXPECT_EQ(caught([&] { (void)empty.front(); }), Violation::bounds);
    EXPECT_EQ(caught([&] { empty.pop_back(); }), Violation::bounds);
}

TEST(CheckedArraySeeded, OutOfBoundsByOneLeaf) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);  // 2 leaves of 512; the second holds 488
    EXPECT_EQ(caught([&] { use(a[1000 + 512]); }), Violation::bounds);
    EXPECT_EQ(caught([&] { use(a[1020]); }), Violation::bounds);  // allocated slot, past size
    EXPECT_EQ(caught([&] { (void)a.segment(2); }), Violation::bounds);
    EXPECT_EQ(a.segment(1).size(), 488u);
}

TEST(CheckedArraySeeded, PastTheEndThroughAnIterator) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    EXPECT_EQ(caught([&] { (void)*a.end(); }), Violation::bounds);
    auto it = a.end() - 1;
    EXPECT_EQ(*it, 0u);
    ++it;
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.begin()[1000]; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.begin()[1000 + 512]; }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)*(a.begin() - 1); }), Violation::bounds);
    // A range past the end handed to a segmented algorithm: its first element is checked.
    EXPECT_EQ(caught([&] { physmem::fill(a.end(), a.end() + 3, u64{1}); }), Violation::bounds);
}

TEST(CheckedArraySeeded, UseAfterTheArrayIsDestroyed) {
    BlockPool pool(tagged());
    Checked::iterator it, last_leaf;
    {
        Checked a(1000, pool, Policy::throw_error);
        fill_iota(a);
        it = a.begin() + 3;
        last_leaf = a.begin() + 999;
        EXPECT_EQ(*it, 3u);
    }
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::stale);
    EXPECT_EQ(caught([&] { ++last_leaf; }), Violation::stale);  // leaving a freed leaf
    // Even after the blocks are handed out again (the generation only grows).
    Checked b(1000, pool, Policy::throw_error);
    EXPECT_EQ(caught([&] { *it = 1; }), Violation::stale);
}

TEST(CheckedArraySeeded, UseAfterCompactMovedALeaf) {
    BlockPool pool(tagged());
    MovableLeaf room(pool);
    Checked a(100, pool, Policy::throw_error, "moved");
    fill_iota(a);
    auto it = a.begin() + 7;
    const u64* before = a.unchecked().leaf_data(0);
    room.make_room();
    pool.compact();
    ASSERT_NE(a.unchecked().leaf_data(0), before) << "compact() did not move the leaf";
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::stale);
    // The array itself follows its leaf: no false positive, values kept.
    EXPECT_EQ(a[7], 7u);
    EXPECT_EQ(*(a.begin() + 7), 7u);
}

TEST(CheckedArraySeeded, UseAfterRelocate) {
    BlockPool pool(tagged());
    Checked a(2000, pool, Policy::throw_error);
    fill_iota(a);
    auto it = a.begin() + 600;  // leaf 1
    ASSERT_NE(pool.relocate(a.unchecked().leaf_data(1)), nullptr);
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::stale);
    EXPECT_EQ(a[600], 600u);
}

TEST(CheckedArraySeeded, UseAfterMigrate) {
    BlockPool pool(tagged()), other(tagged(16384));
    Checked a(3000, pool, Policy::throw_error);
    fill_iota(a);
    auto it = a.cbegin() + 2500;
    a.migrate(other);
    EXPECT_EQ(caught([&] { (void)*it; }), Violation::stale);
    EXPECT_EQ(a[2500], 2500u);
    EXPECT_EQ(&a.pool(), &other);
    EXPECT_EQ(physmem::accumulate(a.begin(), a.end(), u64{0}), u64{2999} * 3000 / 2);
}

TEST(CheckedArraySeeded, LeafFreedBehindTheArraysBack) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    for (int r = 0; r < 3; ++r)  // warm: past leaf_count() per-leaf checks the epoch fast path arms
        for (std::size_t i = 0; i < a.size(); ++i) use(a[i]);
    void* leaf = std::as_const(a).unchecked().leaf_data(1);  // as_const: the fast path stays armed
    std::uint64_t epoch = pool.tag_epoch().load();
    pool.deallocate(leaf);  // the seeded bug: someone else frees the array's block
    EXPECT_GT(pool.tag_epoch().load(), epoch);
    EXPECT_EQ(caught([&] { use(a[600]); }), Violation::stale);
    EXPECT_EQ(caught([&] { for_each_segment(a, [](auto) {}); }), Violation::stale);
    EXPECT_EQ(a[5], 0u);  // leaf 0 is fine
    // Put a block back where the leaf was so the array's destructor frees a live block.
    ASSERT_EQ(pool.allocate(), leaf);
}

void warm(Checked& a) {  // past leaf_count() per-leaf checks the fast paths arm
    for (int r = 0; r < 3; ++r)
        for (std::size_t i = 0; i < a.size(); ++i) use(a[i]);
}

// A loop of armed a[i] on one thread sees a free on another at a later access: the limit
// is read at every access (never kept in a register across iterations, nor one check's
// result reused for the same index), so the free that zeroes it sends the loop to the
// check, which reports the stale leaf. The loop has nothing else that the compiler must
// redo each time (no atomic, no call), and 2^32 accesses take seconds, the free comes
// after 20 ms.
TEST(CheckedArraySeeded, ALoopOfAccessesSeesAnotherThreadsFree) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    warm(a);
    void* leaf = std::as_const(a).unchecked().leaf_data(1);  // as_const: the fast path stays armed
    std::atomic<bool> started{false};
    bool caught_it = false;
    Violation kind = Violation::bounds;
    std::thread reader([&] {
        started = true;
        u64 s = 0;
        try {
            for (u64 r = 0; r < (u64{1} << 32); ++r) s += std::as_const(a)[600];  // leaf 1, one index
        } catch (const ProtectionError& e) {
            kind = e.kind;
            caught_it = true;
        }
        use(s);
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool.deallocate(leaf);  // the seeded bug: another thread frees the array's block
    reader.join();
    EXPECT_TRUE(caught_it) << "the loop ran to its end after the free without a report";
    EXPECT_EQ(kind, Violation::stale);
    ASSERT_EQ(pool.allocate(), leaf);  // a live block where the leaf was, for the destructor
}

// Runs `loop` (reading `a` until it dies) on another thread and, once it runs, frees
// `a`'s leaf 1 behind the array's back on this one; returns only if the loop ends.
template <class Loop>
void free_leaf_under(BlockPool& pool, Checked& a, Loop loop) {
    void* leaf = std::as_const(a).unchecked().leaf_data(1);
    std::atomic<bool> started{false};
    std::thread reader([&] {
        started = true;
        loop();
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pool.deallocate(leaf);
    reader.join();
}

// Under the fatal policy the armed fast path reads no shared word: a loop keeps the bound
// in a register, and another thread's free reaches it through the leaf's poisoned entry,
// on which the access faults: reported as a use after free, never read.
TEST(CheckedArrayDeathTest, ALoopSeesAnotherThreadsFreeThroughThePoisonedEntry) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            BlockPool pool(tagged());
            Checked a(1000, pool, Policy::fatal, "hot");
            warm(a);
            free_leaf_under(pool, a, [&a] {
                u64 s = 0;
                for (u64 r = 0; r < (u64{1} << 34); ++r) s += std::as_const(a)[600];  // leaf 1, one index
                use(s);
            });
        },
        "physmem: fatal: checked array hot \\(0x[0-9a-f]+\\): (use after free: operator\\[\\] faulted on leaf 1|stale)");
}

// A segment scan checks each leaf's tag as it reaches the leaf: a free of one of its leaves
// on another thread during the scans is reported at the next scan's check of that leaf.
TEST(CheckedArrayDeathTest, ASegmentScanSeesAnotherThreadsFree) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            BlockPool pool(tagged());
            Checked a(1000, pool, Policy::fatal, "scanned");
            warm(a);
            free_leaf_under(pool, a, [&a] {
                u64 s = 0;
                for (u64 r = 0; r < (u64{1} << 30); ++r)
                    for_each_segment(std::as_const(a), [&s](auto seg) { s += seg[seg.size() / 2]; });
                use(s);
            });
        },
        "physmem: fatal: checked array scanned \\(0x[0-9a-f]+\\): stale");
}

// The same free on the scanning thread: the next scan's tag check of the leaf reports it
// before any element of it is read.
TEST(CheckedArraySeeded, ASegmentScanAfterAFreeBehindTheArraysBackUnderTheFatalPolicy) {
    EXPECT_DEATH(
        {
            BlockPool pool(tagged());
            Checked a(1000, pool, Policy::fatal, "scanned");
            warm(a);
            pool.deallocate(std::as_const(a).unchecked().leaf_data(1));
            u64 s = 0;
            for_each_segment(std::as_const(a), [&s](auto seg) { s += seg[0]; });
            use(s);
        },
        "physmem: fatal: checked array scanned \\(0x[0-9a-f]+\\): stale.*segment");
}

// A poisoned entry stays poisoned: growing the array afterwards (its own change, which
// rebuilds the table's new leaves) does not make the freed leaf readable again, and the
// checked path reports it even when the block is live again under another owner.
TEST(CheckedArraySeeded, AFreedLeafStaysCaughtAfterTheArrayChanges) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    warm(a);
    void* leaf = std::as_const(a).unchecked().leaf_data(1);
    pool.deallocate(leaf);  // behind the array's back, on this thread
    EXPECT_EQ(caught([&] { use(a[600]); }), Violation::stale);
    void* again = pool.allocate();  // the block handed out again
    EXPECT_EQ(again, leaf);
    a.resize(3000);
    EXPECT_EQ(caught([&] { use(a[600]); }), Violation::stale);
    EXPECT_EQ(a[2500], 0u);  // the new leaves are fine
}  // the destructor frees the block handed out again (the array still holds it)

// Blocks moved under an armed fatal-policy array (compaction, relocate) get their new
// entries at once: a loop that kept the bound in a register reads the moved leaves'
// values, and nothing faults.
TEST(CheckedArraySeeded, MovedLeavesKeepTheArmedFastPathRight) {
    BlockPool pool(tagged());
    Checked a(4000, pool, Policy::fatal, "moving");
    fill_iota(a);
    warm(a);
    for (std::size_t k = 0; k < a.leaf_count(); k += 2) ASSERT_NE(pool.relocate(a.unchecked().leaf_data(k)), nullptr);
    u64 sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += std::as_const(a)[i];
    EXPECT_EQ(sum, u64{4000} * 3999 / 2);
    sum = 0;  // a segment scan reaches the moved leaves at their new blocks too
    for_each_segment(std::as_const(a), [&sum](auto seg) {
        for (u64 v : seg) sum += v;
    });
    EXPECT_EQ(sum, u64{4000} * 3999 / 2);
    std::thread t([&] {
        u64 s = 0;
        for (int r = 0; r < 50; ++r)
            for (std::size_t i = 0; i < a.size(); ++i) s += std::as_const(a)[i];
        EXPECT_EQ(s, u64{50} * 4000 * 3999 / 2);
    });
    t.join();
}

// Domain 0's one-compare fast path (the limit) goes wherever it could be wrong: pop_back
// (the limit follows the size), a shrink through unchecked() inside the last leaf (no block
// freed, so no tag changes: taking unchecked() disarms), and an array moved into another
// object (the pool zeroes the new object's limit, not the old one's).
TEST(CheckedArraySeeded, TheArmedFastPathFollowsEveryChange) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);  // two leaves of 512
    warm(a);
    a.pop_back();
    EXPECT_EQ(caught([&] { use(a[999]); }), Violation::bounds);
    a.push_back(7);
    EXPECT_EQ(a[999], 7u);
    warm(a);
    a.unchecked().resize(990);
    EXPECT_EQ(caught([&] { use(a[995]); }), Violation::bounds);
    a.resize(1000);
    warm(a);
    Checked b(std::move(a));
    warm(b);
    void* leaf = std::as_const(b).unchecked().leaf_data(1);
    pool.deallocate(leaf);
    EXPECT_EQ(caught([&] { use(b[600]); }), Violation::stale);
    ASSERT_EQ(pool.allocate(), leaf);
}

// Arrays come and go while the pool changes tags: each destroyed or moved-from array stops
// being watched (the pool never writes into it), and the survivors still catch a free.
TEST(CheckedArraySeeded, ArraysComeAndGoWhileThePoolChangesTags) {
    BlockPool pool(tagged());
    std::vector<Checked> arrays;
    for (int k = 0; k < 20; ++k) {
        arrays.emplace_back(700 + k, pool, Policy::throw_error);  // moves the others as it grows
        warm(arrays.back());
        if (k % 3 == 0) arrays.erase(arrays.begin());
        pool.deallocate(pool.allocate());  // a tag change: every watched limit to 0
    }
    for (Checked& c : arrays) warm(c);
    Checked& last = arrays.back();
    void* leaf = std::as_const(last).unchecked().leaf_data(1);
    pool.deallocate(leaf);
    EXPECT_EQ(caught([&] { use(last[600]); }), Violation::stale);
    ASSERT_EQ(pool.allocate(), leaf);
    EXPECT_EQ(arrays.front()[5], 0u);
}

TEST(CheckedArraySeeded, AnotherDomainsBlocks) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error, "secret");
    fill_iota(a);
    fill_iota(a);  // armed
    std::uint64_t epoch = pool.tag_epoch().load();
    a.set_domain(5);
    EXPECT_GT(pool.tag_epoch().load(), epoch);
    EXPECT_EQ(pool.tag(a.unchecked().leaf_data(1))->domain, 5u);
    EXPECT_EQ(caught([&] { use(a[3]); }), Violation::domain);
    EXPECT_EQ(caught([&] { (void)*a.begin(); }), Violation::domain);
    EXPECT_EQ(caught([&] { for_each_segment(a, [](auto) {}); }), Violation::domain);
    {
        DomainScope s{5};
        EXPECT_EQ(a[3], 3u);
        EXPECT_EQ(physmem::accumulate(a.begin(), a.end(), u64{0}), u64{999} * 1000 / 2);
        a.resize(2000);  // new leaves join the domain
        EXPECT_EQ(pool.tag(a.unchecked().leaf_data(3))->domain, 5u);
    }
    EXPECT_EQ(caught([&] { use(a[1500]); }), Violation::domain);
    DomainScope other{6};
    EXPECT_EQ(caught([&] { use(a[3]); }), Violation::domain);
}

// Back to domain 0 (everyone's): every leaf's tag says 0 again, and a thread holding no
// domain reads and writes the array (set_domain(0) once left the blocks in the old domain).
TEST(CheckedArraySeeded, BackToDomainZeroIsEveryones) {
    BlockPool pool(tagged());
    Checked a(3000, pool, Policy::throw_error, "shared again");
    fill_iota(a);
    a.set_domain(5);
    EXPECT_EQ(caught([&] { use(a[3]); }), Violation::domain);
    a.set_domain(0);
    for (std::size_t k = 0; k < a.leaf_count(); ++k) EXPECT_EQ(pool.tag(a.unchecked().leaf_data(k))->domain, 0u) << k;
    EXPECT_NO_THROW(a[3] = 3);
    EXPECT_NO_THROW((void)*a.begin());
    EXPECT_EQ(physmem::accumulate(a.begin(), a.end(), u64{0}), u64{2999} * 3000 / 2);
}

// The shape changed behind the checked array's back (resize through unchecked(), which
// its contract forbids): a checked access that looks at the table reports it instead of
// reading past the table.
TEST(CheckedArraySeeded, ShapeChangedThroughUncheckedIsReported) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error, "grown behind its back");
    fill_iota(a);
    a.unchecked().resize(a.size() + 4 * a.leaf_length());
    pool.deallocate(pool.allocate());  // the tag epoch moves: checks look at the table
    EXPECT_EQ(caught([&] { use(a[a.size() - 1]); }), Violation::bounds);
    EXPECT_EQ(caught([&] { (void)a.leaf_data(a.leaf_count() - 1); }), Violation::bounds);
}

TEST(CheckedArraySeeded, WideningACapability) {
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::throw_error);
    void* leaf = a.unchecked().leaf_data(0);
    Capability c = Capability::make(pool, leaf, 512, Perm::read, Policy::throw_error);
    EXPECT_EQ(caught([&] { (void)c.narrow(0, 513, Perm::read); }), Violation::widen);
    EXPECT_EQ(caught([&] { (void)c.narrow(0, 8, Perm::read_write); }), Violation::widen);
    EXPECT_EQ(caught([&] { (void)c.narrow(500, 13, Perm::read); }), Violation::widen);
    EXPECT_EQ(c.narrow(8, 8, Perm::read).load<u64>(0), 0u);
}

// --- no false positives: the lab's ordinary kernels in checked mode -----------------------

TEST(CheckedArrayClean, ScansUpdatesAndSortRaiseNothing) {
    BlockPool pool(tagged()), other(tagged(65536));
    MovableLeaf room(pool);
    const std::size_t n = 200'000;
    Checked a(n, pool, Policy::throw_error, "kernels");
    TreeArray<u64> plain(n, pool);
    std::vector<u64> v(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = plain[i] = v[i] = (i * 2654435761u) % 100'003;
    auto run_all = [&] {
        // scans: segments, iterators, index, segmented algorithm
        u64 seg = 0, itr = 0, idx = 0;
        for_each_segment(a, [&](std::span<const u64> s) { for (u64 x : s) seg += x; });
        for (u64 x : a) itr += x;
        for (std::size_t i = 0; i < a.size(); ++i) idx += a[i];
        u64 want = std::accumulate(v.begin(), v.end(), u64{0});
        EXPECT_EQ(seg, want);
        EXPECT_EQ(itr, want);
        EXPECT_EQ(idx, want);
        EXPECT_EQ(physmem::accumulate(a.cbegin(), a.cend(), u64{0}), want);
        // GUPS-like random updates, checked and unchecked side by side
        u64 x = 88172645463325252ull;
        for (int k = 0; k < 100'000; ++k) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[x % n] ^= x;
            plain[x % n] ^= x;
            v[x % n] ^= x;
        }
        EXPECT_TRUE(std::equal(a.begin(), a.end(), plain.begin(), plain.end()));
    };
    run_all();
    room.make_room();
    EXPECT_GT(pool.compact().blocks_moved, 0u);  // moves blocks of both arrays
    run_all();
    // a sort on the checked iterators
    std::sort(a.begin(), a.end());
    std::sort(v.begin(), v.end());
    std::sort(plain.begin(), plain.end());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), v.begin(), v.end()));
    a.migrate(other);
    run_all();
    // readers on two threads, right after the blocks moved (both refresh the table)
    std::size_t moved = 0;
    for (std::size_t k = 0; k < a.leaf_count(); k += 3) moved += other.relocate(a.unchecked().leaf_data(k)) != nullptr;
    EXPECT_GT(moved, 0u);
    u64 sums[2] = {};
    std::thread t([&] { for (std::size_t i = 0; i < n; ++i) sums[0] += a[i]; });
    for (std::size_t i = 0; i < n; ++i) sums[1] += a[i];
    t.join();
    EXPECT_EQ(sums[0], sums[1]);
}

// --- the same bugs in child processes under the fatal policy --------------------------------

TEST(CheckedArrayDeathTest, EverySeededBugStopsTheProgramWithAMessage) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    BlockPool pool(tagged());
    Checked a(1000, pool, Policy::fatal, "weights");
    fill_iota(a);
    EXPECT_DEATH(use(a[1000]),
                 "physmem: fatal: checked array weights \\(0x[0-9a-f]+\\): out of bounds: operator\\[\\] at index 1000 "
                 "\\(size 1000\\), leaf 1, block \\(nil\\)");
    EXPECT_DEATH((void)a.at(1512), "checked array weights .*out of bounds: at at index 1512");
    EXPECT_DEATH((void)*a.end(), "checked array iterator .*out of bounds: iterator \\* at index 1000");
    EXPECT_DEATH((void)*Checked::iterator{}, "checked array iterator \\(\\(nil\\)\\): out of bounds: iterator \\* at index 0");
    auto it = a.begin() + 5;
    EXPECT_DEATH(
        {
            a.clear();
            (void)*it;
        },
        "checked array iterator .*stale generation .*: iterator \\* at index 5 .*block 0x[0-9a-f]+ \\(generation seen 0, now 1");
    EXPECT_DEATH(
        {
            BlockPool other(tagged());
            a.migrate(other);
            (void)*it;
        },
        "stale generation");
    EXPECT_DEATH(
        {
            BlockPool fresh(tagged());
            MovableLeaf room(fresh);
            Checked one(10, fresh, Policy::fatal, "one");
            auto i1 = one.begin();
            room.make_room();
            fresh.compact();
            (void)*i1;
        },
        "stale generation");
    EXPECT_DEATH(
        {
            a.set_domain(9);
            use(a[3]);
        },
        "checked array weights .*domain not held by this thread: operator\\[\\] at index 3 .*domain 9; thread holds 0x1\\)");
    EXPECT_DEATH(
        {
            void* b = pool.allocate();
            pool.deallocate(b);
            pool.deallocate(b);
        },
        "block is not live \\(double free\\?\\)");
    EXPECT_DEATH(
        {
            Capability c = Capability::make(pool, a.unchecked().leaf_data(0), 64, Perm::read);
            (void)c.narrow(0, 65, Perm::read);
        },
        "widening refused");
    EXPECT_EQ(a[999], 999u);  // the parent's array untouched
}
