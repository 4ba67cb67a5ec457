// tests/test_prefault_allocator.cpp — containers on prefault_allocator take no page
// fault when they first touch memory they reserved, and hold the right contents.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

#include "port/counters.hpp"
#include "physmem/prefault_allocator.hpp"
#include "support.hpp"

namespace {

template <class T>
using pf = physmem::prefault_allocator<T>;

// Sanity check of the counter itself: first touch of fresh anonymous memory faults.
TEST(PrefaultAllocator, CounterSeesFaultsOnOrdinaryMemory) {
    physmem::PageFaultCounter faults;
    std::size_t bytes = 64 << 20;
    auto* p = static_cast<char*>(std::malloc(bytes));  // fresh mmap: untouched
    ASSERT_NE(p, nullptr);
    std::uint64_t before = faults.read();
    for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    EXPECT_GT(faults.read() - before, 100u) << "source " << faults.source();
    std::free(p);
}

TEST(PrefaultAllocator, VectorReserveIsBackedBeforeFirstTouch) {
    PHYSMEM_SKIP_IF_SHADOW_FAULTS();
    std::vector<int, pf<int>> v;
    std::size_t n = 8 << 20;  // 32 MiB
    v.reserve(n);
    physmem::PageFaultCounter faults;
    std::uint64_t before = faults.read();
    for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<int>(i));
    std::uint64_t taken = faults.read() - before;
    EXPECT_EQ(taken, 0u) << "source " << faults.source();
    for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], static_cast<int>(i));
}

TEST(PrefaultAllocator, UnorderedMapReserveIsBackedBeforeFirstTouch) {
    PHYSMEM_SKIP_IF_SHADOW_FAULTS();
    std::size_t n = 200000;
    physmem::prefault_reserve(n * 64);  // the nodes
    std::unordered_map<std::uint64_t, std::uint64_t, std::hash<std::uint64_t>, std::equal_to<>,
                       pf<std::pair<const std::uint64_t, std::uint64_t>>>
        m;
    m.reserve(n);  // the buckets
    physmem::PageFaultCounter faults;
    std::uint64_t before = faults.read();
    for (std::uint64_t i = 0; i < n; ++i) m.emplace(i * 2654435761u, i);
    std::uint64_t taken = faults.read() - before;
    EXPECT_EQ(taken, 0u) << "source " << faults.source();
    ASSERT_EQ(m.size(), n);
    for (std::uint64_t i = 0; i < n; i += 97) ASSERT_EQ(m.at(i * 2654435761u), i);
}

TEST(PrefaultAllocator, MapNodesComeFromPrefaultedMemory) {
    PHYSMEM_SKIP_IF_SHADOW_FAULTS();
    std::size_t n = 100000;
    physmem::prefault_reserve(n * 64);
    std::map<int, int, std::less<>, pf<std::pair<const int, int>>> m;
    physmem::PageFaultCounter faults;
    std::uint64_t before = faults.read();
    for (int i = 0; i < static_cast<int>(n); ++i) m.emplace(i * 7 % 100003, i);
    std::uint64_t taken = faults.read() - before;
    EXPECT_EQ(taken, 0u) << "source " << faults.source();
    EXPECT_EQ(m.size(), n);
    m.clear();  // nodes go back to the arena's free lists
    auto stats = physmem::prefault_stats();
    EXPECT_GT(stats.chunks, 0u);
    EXPECT_GE(stats.bytes_prefaulted, stats.chunks * (2u << 20));
}

TEST(PrefaultAllocator, LargeBlocksAreReturnedOnDeallocate) {
    std::size_t live = physmem::prefault_stats().large_mappings;
    {
        std::vector<double, pf<double>> v(1 << 20, 1.5);
        EXPECT_EQ(physmem::prefault_stats().large_mappings, live + 1);
        EXPECT_EQ(v[12345], 1.5);
    }
    EXPECT_EQ(physmem::prefault_stats().large_mappings, live);
}

TEST(PrefaultAllocator, OverAlignedTypesAreAligned) {
    struct alignas(64) Line {
        char bytes[64];
    };
    std::vector<Line, pf<Line>> v(10);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
}

TEST(PrefaultAllocator, AllInstancesCompareEqual) {
    pf<int> a;
    pf<double> b(a);
    EXPECT_TRUE(a == pf<int>(b));
}

}  // namespace
