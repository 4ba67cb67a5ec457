// tests/test_tree_relocation.cpp — TreeArray as a block owner: every block (leaf, inner,
// root) moved by relocate() and compact() across block sizes 4 KiB-2 MiB and depths
// 1-4, contents checked against std::vector; migration between pools of other block
// sizes and backings with the strong guarantee; iterators revalidated from indexes.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "physmem/segments.hpp"
#include "physmem/tree_array.hpp"
#include "support.hpp"

using physmem::BlockPool;
using physmem::TreeArray;
using physmem_test::pool_options;
using physmem_test::Tracked;
using physmem_test::value_at;

namespace {

constexpr std::size_t kMiB = 1 << 20;

physmem::PoolOptions held(std::size_t bs, std::size_t capacity) {
    physmem::PoolOptions o = pool_options(bs, capacity);
    o.give_back_delay_ms = 60000;  // the tests call release/compact themselves
    return o;
}

template <class T>
void expect_values(const TreeArray<T>& a, std::size_t n, std::size_t salt) {
    ASSERT_EQ(a.size(), n);
    std::vector<T> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(value_at<T>(i + salt));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], v[i]) << "index " << i;
    ASSERT_TRUE(std::equal(a.begin(), a.end(), v.begin(), v.end()));
}

template <class T>
void fill(TreeArray<T>& a, std::size_t salt) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = value_at<T>(i + salt);
}

// Every block of the tree, root first, the leaves last.
template <class T>
std::vector<void*> all_blocks(const TreeArray<T>& a) {
    std::vector<void*> out, level = {a.root()};
    for (unsigned d = a.depth(); d > 1; --d) {
        out.insert(out.end(), level.begin(), level.end());
        std::vector<void*> below;
        for (void* b : level)
            for (std::size_t s = 0; s < (std::size_t{1} << a.shape().fan_shift); ++s) {
                void* c = static_cast<void**>(b)[s];
                if (below.size() < (a.leaf_count() - 1 >> (a.shape().fan_shift * (d - 2))) + 1) below.push_back(c);
            }
        level = below;
    }
    // the leaves through the API: a leaf's slot holds its entry (TreeArray::leaf_entry)
    for (std::size_t k = 0; k < a.leaf_count(); ++k) out.push_back(a.leaf_data(k));
    return out;
}

template <class T>
class TreeRelocation : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::int64_t, Tracked>;
TYPED_TEST_SUITE(TreeRelocation, ElementTypes);

// Relocating every block, one at a time, keeps the contents: block sizes x depths.
TYPED_TEST(TreeRelocation, EveryBlockMovesAcrossBlockSizesAndDepths) {
    using T = TypeParam;
    for (std::size_t bs : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{2} << 20}) {
        physmem::TreeShape s = physmem::TreeShape::make(bs, sizeof(T));
        for (unsigned depth = 1; depth <= 3; ++depth) {
            std::size_t n = depth == 1 ? s.leaf_len() - 3 : (s.leaf_capacity(depth - 1) << s.leaf_shift) + 5;
            if (s.blocks_for(n) * bs > 48 * kMiB) continue;  // 64 KiB depth 3, 2 MiB depth 3
            BlockPool pool(held(bs, 2 * s.blocks_for(n) * bs + 8 * kMiB));
            TreeArray<T> a(n, pool);
            ASSERT_EQ(a.depth(), depth);
            fill(a, 11);
            std::size_t moved = 0;
            for (void* b : all_blocks(a)) moved += pool.relocate(b) != nullptr;
            EXPECT_EQ(moved, s.blocks_for(n)) << "bs " << bs << " depth " << depth;
            expect_values(a, n, 11);
            a.resize(n + s.leaf_len());  // the tree still grows and shrinks after the moves
            a.resize(n / 2);
            expect_values(a, n / 2, 11);
        }
    }
}

// Depth 4 needs more than 1 GiB of 4 KiB leaves; one block of every level moves.
TEST(TreeRelocationDepth, FourLevelsEachLevelMoves) {
    struct PageElement {
        std::uint64_t index;
        char rest[4096 - 8];
    };
    std::size_t bs = 4 << 10;
    physmem::TreeShape s = physmem::TreeShape::make(bs, sizeof(PageElement));
    std::size_t n = s.leaf_capacity(3) + 1;
    BlockPool pool(held(bs, (n + 4096) * bs));
    TreeArray<PageElement> a(n, pool);
    ASSERT_EQ(a.depth(), 4u);
    for (std::size_t i = 0; i < n; i += 997) a[i].index = i;
    a[n - 1].index = n - 1;
    void* l3 = a.root();
    void* l2 = static_cast<void**>(l3)[1];
    void* l1 = static_cast<void**>(l2)[0];
    for (void* b : {static_cast<void*>(a.leaf_data(n - 1)), static_cast<void*>(a.leaf_data(0)), l1, l2, l3})
        ASSERT_NE(pool.relocate(b), nullptr);
    EXPECT_NE(a.root(), l3);
    for (std::size_t i = 0; i < n; i += 997) ASSERT_EQ(a[i].index, i);
    EXPECT_EQ(a[n - 1].index, n - 1);
}

// Many arrays interleaved in one pool, half their blocks freed by shrinking and
// dropping; compact() packs them and gives the emptied pages back.
TYPED_TEST(TreeRelocation, CompactPacksFragmentedArraysAndKeepsContents) {
    using T = TypeParam;
    for (std::size_t bs : {std::size_t{4} << 10, std::size_t{64} << 10}) {
        BlockPool pool(held(bs, 64 * kMiB));
        physmem::TreeShape s = physmem::TreeShape::make(bs, sizeof(T));
        std::vector<TreeArray<T>> arrays;
        for (int k = 0; k < 12; ++k) arrays.emplace_back(0, pool);
        std::size_t leaves = (24 * kMiB / bs) / arrays.size();
        for (std::size_t r = 0; r < leaves; ++r)
            for (auto& a : arrays) a.resize(a.size() + s.leaf_len());
        for (std::size_t k = 0; k < arrays.size(); ++k) fill(arrays[k], k);
        std::mt19937 rng(3);
        for (std::size_t k = 0; k < arrays.size(); ++k) {
            if (k % 3 == 0) arrays[k].clear();
            else arrays[k].resize(arrays[k].size() * (1 + rng() % 3) / 4);
        }
        std::size_t live = pool.stats().blocks_in_use * bs;
        physmem::CompactResult r = pool.compact();
        EXPECT_GT(r.blocks_moved, 0u);
        physmem::PoolStats st = pool.stats();
        EXPECT_LE(st.resident_bytes, live + st.page_size) << "bs " << bs;
        for (std::size_t k = 0; k < arrays.size(); ++k) expect_values(arrays[k], arrays[k].size(), k);
    }
}

TEST(TreeRelocationIterators, IndexesSurviveAndRevalidateIterators) {
    BlockPool pool(held(4 << 10, 16 * kMiB));
    TreeArray<int> gap(5000, pool), a(20000, pool);
    std::iota(a.begin(), a.end(), 0);
    auto it = a.begin() + 12345;
    gap.clear();
    pool.compact();
    it = a.begin() + static_cast<std::ptrdiff_t>(it.index());  // revalidated, as documented
    EXPECT_EQ(*it, 12345);
    EXPECT_EQ(*(it + 4000), 16345);
}

TEST(TreeRelocationIterators, MovedAndSwappedArraysStayOwners) {
    BlockPool pool(held(4 << 10, 16 * kMiB));
    TreeArray<int> gap(0, pool), a(0, pool), b(0, pool);
    for (int r = 0; r < 400; ++r) {  // interleaved over two pages: clearing gap fragments both
        gap.resize(gap.size() + 2048);
        a.resize(a.size() + 25);
        b.resize(b.size() + 17);
    }
    a.resize(10000);
    b.resize(7000);
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), 100);
    TreeArray<int> moved(std::move(a));
    swap(moved, b);  // moved: 7000 from 100; b: 10000 from 0
    std::vector<TreeArray<int>> holder;
    holder.push_back(std::move(b));
    holder.reserve(100);  // and the vector moves them again
    gap.clear();
    EXPECT_GT(pool.compact().blocks_moved, 0u);
    for (int i = 0; i < 7000; ++i) ASSERT_EQ(moved[i], 100 + i);
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(holder[0][i], i);
}

// A T whose move may throw: leaves stay put, inner blocks still move.
struct MayThrowOnMove {
    int v = 0;
    MayThrowOnMove() = default;
    MayThrowOnMove(int x) : v(x) {}
    MayThrowOnMove(const MayThrowOnMove& o) : v(o.v) {}
    MayThrowOnMove& operator=(const MayThrowOnMove&) = default;
    ~MayThrowOnMove() {}
};

TEST(TreeRelocationPinned, LeavesOfTypesWithThrowingMovesArePinned) {
    BlockPool pool(held(4 << 10, 16 * kMiB));
    TreeArray<MayThrowOnMove> a(3000, pool);
    EXPECT_EQ(pool.relocate(a.leaf_data(0)), nullptr);
    EXPECT_NE(pool.relocate(a.root()), nullptr);
    a[2999].v = 7;
    EXPECT_EQ(a[2999].v, 7);
}

// --- migration -----------------------------------------------------------------------

TYPED_TEST(TreeRelocation, MigratesAcrossBlockSizes) {
    using T = TypeParam;
    BlockPool small(held(4 << 10, 32 * kMiB)), mid(held(64 << 10, 32 * kMiB)), big(held(2 * kMiB, 64 * kMiB));
    std::size_t n = 300000;
    TreeArray<T> a(n, small);
    fill(a, 5);
    long live = Tracked::live;
    for (BlockPool* p : {&mid, &big, &small, &big}) {
        a.migrate(*p);
        EXPECT_EQ(&a.pool(), p);
        EXPECT_EQ(a.block_size(), p->block_size());
        expect_values(a, n, 5);
        for (BlockPool* q : {&small, &mid, &big})
            if (q != p) EXPECT_EQ(q->stats().blocks_in_use, 0u);
        EXPECT_EQ(Tracked::live, live);
    }
    big.compact();  // and the migrated array is still an owner
    expect_values(a, n, 5);
}

TYPED_TEST(TreeRelocation, MigrationToATooSmallPoolChangesNothing) {
    using T = TypeParam;
    BlockPool from(held(4 << 10, 64 * kMiB)), tiny(held(64 << 10, 1 * kMiB));
    TreeArray<T> a(300000, from);  // more than 1 MiB whatever T
    fill(a, 9);
    void* root = a.root();
    std::size_t used = from.stats().blocks_in_use;
    EXPECT_THROW(a.migrate(tiny), std::bad_alloc);
    EXPECT_EQ(&a.pool(), &from);
    EXPECT_EQ(a.root(), root);
    EXPECT_EQ(from.stats().blocks_in_use, used);
    EXPECT_EQ(tiny.stats().blocks_in_use, 0u);
    expect_values(a, 300000, 9);
}

TEST(TreeRelocationMigrate, ThrowingCopyDuringMigrationChangesNothing) {
    BlockPool from(held(4 << 10, 16 * kMiB)), to(held(64 << 10, 16 * kMiB));
    struct Fragile {
        Tracked t;
        Fragile() = default;
        Fragile(const Fragile& o) : t(o.t) {}  // copies may throw; no noexcept move
    };
    {
        TreeArray<Fragile> a(20000, from);
        long live = Tracked::live;
        Tracked::throw_after = 15000;
        EXPECT_THROW(a.migrate(to), std::runtime_error);
        Tracked::throw_after = -1;
        EXPECT_EQ(&a.pool(), &from);
        EXPECT_EQ(Tracked::live, live);
        EXPECT_EQ(to.stats().blocks_in_use, 0u);
        a.migrate(to);
        EXPECT_EQ(a.size(), 20000u);
        EXPECT_EQ(from.stats().blocks_in_use, 0u);
    }
    EXPECT_EQ(Tracked::live, 0);
}

// 4 KiB-backed -> 1 GiB-backed (skipped when no 1 GiB page is free).
TEST(TreeRelocationMigrate, FourKibToOneGigPage) {
    physmem::PoolOptions o = held(64 << 10, std::size_t{1} << 30);
    o.backing = physmem::Backing::page_1g;
    o.strict_backing = true;
    const char* v = std::getenv("PHYSMEM_TEST_RESERVE_HUGE_PAGES");
    o.reserve_huge_pages = v && v[0] == '1';
    physmem::PoolOptions f = held(4 << 10, 64 * kMiB);
    f.backing = physmem::Backing::page_4k;
    BlockPool from(f);
    TreeArray<std::int64_t> a(4 << 20, from);
    fill(a, 1);
    try {
        BlockPool gig(o);
        a.migrate(gig);
        EXPECT_EQ(a.pool().backing(), physmem::Backing::page_1g);
        expect_values(a, 4 << 20, 1);
        a.migrate(from);  // back, before gig goes away
    } catch (const physmem::backing_unavailable& e) {
        GTEST_SKIP() << e.what();
    }
}

}  // namespace
