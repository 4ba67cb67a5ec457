// Hashtable kernels: the prefetching pass on arrays and trees gives the contiguous
// reference's counts and table, and corrupted tables or wrong bucket maps are detected.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/hashtable.hpp"
#include "physmem/fixed_depth.hpp"

namespace {

using namespace lab::hashtable;
using Tree = physmem::TreeArray<Bucket>;

physmem::BlockPool small_pool() {
    return physmem::BlockPool({.block_size = 4096, .capacity = 64 << 20, .backing = physmem::Backing::page_4k});
}

struct Reference {
    Reference(std::size_t nb, const Stream& s, std::uint64_t probes) : table(nb) {
        stats = reference_pass(table, s, probes);
        std::span<Bucket> v(table);
        sum = checksum(v);
    }
    std::vector<Bucket> table;
    Stats stats;
    std::uint64_t sum = 0;
};

TEST(HashtableKernel, StatsAddUp) {
    const std::size_t nb = 1000;
    Stream s{9, 2 * nb * kWays};
    Reference r(nb, s, 50000);
    EXPECT_EQ(r.stats.hits + r.stats.misses, 50000u);
    EXPECT_GT(r.stats.hits, 0u);
    EXPECT_GT(r.stats.replaced, 0u);
    EXPECT_LE(r.stats.replaced, r.stats.misses);
    EXPECT_GE(r.stats.misses - r.stats.replaced, 1u);  // inserts into empty entries
    EXPECT_LE(r.stats.misses - r.stats.replaced, nb * kWays);
}

TEST(HashtableKernel, ArrayAndTreesEqualTheReference) {
    for (std::size_t nb : {std::size_t{1}, std::size_t{64}, std::size_t{65}, std::size_t{70000}}) {  // 70000: depth 3 on 4 KiB blocks
        Stream s{nb, 2 * nb * kWays};
        const std::uint64_t probes = 4 * nb + 1000;
        Reference r(nb, s, probes);
        std::vector<Bucket> v(nb);
        std::span<Bucket> a(v);
        EXPECT_EQ(probe_pass(a, s, probes), r.stats) << nb;
        EXPECT_EQ(checksum(a), r.sum);
        auto pool = small_pool();
        Tree t(nb, pool);
        EXPECT_EQ(probe_pass(t, s, probes), r.stats) << nb;
        EXPECT_EQ(checksum(t), r.sum);
        clear(t);
        physmem::with_fixed_depth(t, [&](auto view) { EXPECT_EQ(probe_pass(view, s, probes), r.stats); });
        EXPECT_EQ(checksum(t), r.sum);
    }
}

TEST(HashtableVerify, CorruptedEntryChangesTheChecksum) {
    const std::size_t nb = 5000;
    Stream s{1, 2 * nb * kWays};
    Reference r(nb, s, 30000);
    auto pool = small_pool();
    Tree t(nb, pool);
    ASSERT_EQ(probe_pass(t, s, 30000), r.stats);
    t[1234].way[2].data ^= 0x100;
    EXPECT_NE(checksum(t), r.sum);
    t[1234].way[2].data ^= 0x100;
    std::swap(t[10].way[0], t[11].way[0]);  // same entries, wrong places
    EXPECT_NE(checksum(t), r.sum);
}

TEST(HashtableVerify, WrongBucketMapChangesTheCounts) {
    const std::size_t nb = 5000;
    Stream s{1, 2 * nb * kWays};
    Reference r(nb, s, 30000);
    std::vector<Bucket> v(nb);
    std::span<Bucket> half(v.data(), nb / 2);  // a kernel that only sees half the buckets
    EXPECT_NE(probe_pass(half, s, 30000), r.stats);
}

TEST(HashtableKernel, BucketOfStaysInRange) {
    for (std::uint64_t nb : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1} << 40})
        for (std::uint64_t key : {std::uint64_t{1}, ~std::uint64_t{0}, std::uint64_t{1} << 63})
            EXPECT_LT(bucket_of(key, nb), nb);
}

}  // namespace
