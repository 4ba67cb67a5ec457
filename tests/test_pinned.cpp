// physmem::with_pinned (physmem/pinned.hpp): a PagedArray that fits its budget seen as a
// tree of pinned frames for one call, the array itself otherwise; and Pager::pin_window,
// which it pins with, leaving nothing pinned when a read fails.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "physmem/pinned.hpp"

namespace {

namespace fs = std::filesystem;
using physmem::BlockPool;
using physmem::FixedDepthView;
using physmem::PagedArray;
using physmem::PagingError;
using U64 = std::uint64_t;
constexpr std::size_t kLeaf = 512;  // 64-bit elements in a 4 KiB leaf

BlockPool make_pool() { return BlockPool({.block_size = 4096, .capacity = 16 << 20}); }

// 0 for the array itself, else the depth of the view f got.
template <class V>
unsigned depth_of(const V&) {
    if constexpr (requires { V::depth; }) return V::depth;
    else return 0;
}

// Fills a[i] = i * 3 + 1 and writes every leaf out.
void fill(PagedArray<U64>& a) {
    for (std::size_t i = 0; i < a.size(); ++i) a.set(i, i * 3 + 1);
    a.flush();
}

TEST(WithPinned, OneLeafIsADepthOneViewOfItsFrame) {
    BlockPool pool = make_pool();
    PagedArray<U64> a(300, pool, {.budget = 4096});
    fill(a);
    unsigned depth = 9;
    U64 sum = physmem::with_pinned(a, [&](auto&& v) {
        depth = depth_of(v);
        U64 s = 0;
        for (std::size_t i = 0; i < v.size(); ++i) s += v[i];
        return s;
    });
    EXPECT_EQ(depth, 1u);
    EXPECT_EQ(sum, 300u * 299 / 2 * 3 + 300);
}

TEST(WithPinned, ManyLeavesAreATwoLevelViewAndItsWritesAreKept) {
    BlockPool pool = make_pool();
    PagedArray<U64> a(kLeaf * 5 + 7, pool, {.budget = 6 * 4096});  // 6 leaves, all fit
    fill(a);
    unsigned depth = 9;
    physmem::with_pinned(a, [&](auto&& v) {
        depth = depth_of(v);
        ASSERT_EQ(v.size(), a.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            ASSERT_EQ(v[i], i * 3 + 1) << i;
            v[i] = i * 5 + 2;
        }
        EXPECT_EQ(a.get(kLeaf * 2 + 3), (kLeaf * 2 + 3) * 5 + 2) << "the view writes the array's own frames";
    });
    EXPECT_EQ(depth, 2u);
    a.set_budget(4096);  // evicts five leaves: written back only if marked written
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.get(i), i * 5 + 2) << i;
}

TEST(WithPinned, ABudgetBelowTheLeavesGetsTheArrayItself) {
    BlockPool pool = make_pool();
    PagedArray<U64> a(kLeaf * 4, pool, {.budget = 3 * 4096});
    fill(a);
    bool itself = false;
    physmem::with_pinned(a, [&](auto&& v) {
        itself = std::is_same_v<std::remove_cvref_t<decltype(v)>, PagedArray<U64>>;
        v[kLeaf * 3] = 9;  // pages as usual
    });
    EXPECT_TRUE(itself);
    EXPECT_EQ(a.get(kLeaf * 3), 9u);
    a.set_budget(4096);  // nothing was left pinned
}

TEST(WithPinned, AConstArrayGetsAConstViewAndStaysClean) {
    BlockPool pool = make_pool();
    PagedArray<U64> a(kLeaf * 3, pool, {.budget = 3 * 4096});
    fill(a);
    const auto& c = a;
    bool is_const = false;
    U64 last = physmem::with_pinned(c, [&](auto&& v) {
        is_const = std::is_const_v<std::remove_reference_t<decltype(v[0])>>;
        return U64{v[v.size() - 1]};
    });
    EXPECT_TRUE(is_const);
    EXPECT_EQ(last, (kLeaf * 3 - 1) * 3 + 1);
    const auto writes = a.stats().writebacks;
    a.set_budget(4096);
    EXPECT_EQ(a.stats().writebacks, writes) << "a read-only call marked leaves written";
}

TEST(WithPinned, AThrowUnpinsAndKeepsWhatWasWritten) {
    BlockPool pool = make_pool();
    PagedArray<U64> a(kLeaf * 3, pool, {.budget = 3 * 4096});
    fill(a);
    EXPECT_THROW(physmem::with_pinned(a, [&](auto&& v) {
                     v[kLeaf + 1] = 77;
                     throw std::logic_error("stop");
                 }),
                 std::logic_error);
    a.set_budget(4096);  // throws when a leaf it must evict is still pinned
    EXPECT_EQ(a.get(kLeaf + 1), 77u);
}

// A read that fails inside a window (leaf 2 truncated) leaves none of the window's leaves
// pinned: shrinking the budget to one leaf then evicts the others.
TEST(WithPinned, AFailedReadLeavesNothingPinned) {
    char dir[] = "/tmp/physmem-pinned-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const fs::path f = fs::path(dir) / "f";
    {
        BlockPool pool = make_pool();
        PagedArray<U64> a(kLeaf * 4, pool, {.budget = 4 * 4096, .path = f.string(), .readahead = 0});
        fill(a);
        a.set_budget(2 * 4096);  // two leaves out; then 0 and 1 in (0 pinned while 1 loads:
        a.pager().pin(0, false);  // CLOCK would take the leaf a sequential pattern just passed)
        (void)a.get(kLeaf);
        a.pager().unpin(0);
        a.set_budget(4 * 4096);
        ASSERT_NE(a.pager().lookup(0), nullptr);
        ASSERT_NE(a.pager().lookup(1), nullptr);
        ASSERT_EQ(a.pager().lookup(2), nullptr);
        ASSERT_EQ(::truncate(f.c_str(), 4096 * 2 + 100), 0);  // leaf 2 short
        void* frames[4];
        EXPECT_THROW(a.pager().pin_window(0, 4, frames), PagingError);
        a.set_budget(4096);  // leaves 0 and 1 unpinned: one of them can go
        EXPECT_LE(a.stats().resident, 1u);
        a.set_budget(4 * 4096);  // every leaf fits again: with_pinned reads them all, and fails on leaf 2
        EXPECT_THROW(physmem::with_pinned(a, [](auto&&) {}), PagingError);
        a.set_budget(4096);  // and left nothing pinned
        EXPECT_LE(a.stats().resident, 1u);
    }
    fs::remove_all(dir);
}

}  // namespace
