// Allocator suite kernels (lab/kernels/alloc_*.hpp), run on plain malloc at small sizes:
// each workload passes its own checks, is deterministic, calls its peak hook, and the
// checks do fail when an object's bytes change. Also the /proc readers.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/alloc_procfs.hpp"
#include "kernels/alloc_workloads.hpp"

namespace {

using namespace lab::alloc;

TEST(AllocWorkloads, EveryWorkloadVerifiesAndIsDeterministic) {
    for (const Workload& w : kWorkloads) {
        for (unsigned threads : {1u, 2u, 3u}) {
            int peaks = 0;
            Params p{.size = 256 << 10, .threads = threads, .seed = 7, .peak = [&] { ++peaks; }};
            Outcome a = w.run(p), b = w.run(p);
            EXPECT_TRUE(a.ok) << w.name << " threads=" << threads;
            EXPECT_GT(a.ops, 0u) << w.name;
            EXPECT_EQ(a.checksum, b.checksum) << w.name << " threads=" << threads;
            EXPECT_EQ(a.ops, b.ops) << w.name;
            EXPECT_EQ(peaks, 2) << w.name << ": the peak hook runs once per run";
        }
    }
}

TEST(AllocWorkloads, SeedChangesTheRandomWorkloads) {
    for (const char* name : {"larson", "glibc-thread", "small-churn", "malloc-large"}) {
        const Workload* w = find(name);
        ASSERT_NE(w, nullptr) << name;
        Params a{.size = 256 << 10, .threads = 2, .seed = 1}, b = a;
        b.seed = 2;
        EXPECT_NE(w->run(a).checksum, w->run(b).checksum) << name;
    }
}

TEST(AllocWorkloads, FindRejectsUnknownNames) {
    EXPECT_EQ(find("nope"), nullptr);
    EXPECT_NE(find("richards"), nullptr);
}

TEST(AllocWorkloads, StampDetectsChangedBytes) {
    for (std::size_t n : {1u, 8u, 9u, 15u, 16u, 17u, 100u}) {
        std::vector<unsigned char> buf(n);
        stamp(buf.data(), n, 0x0123456789abcdefull);
        EXPECT_TRUE(holds(buf.data(), n, 0x0123456789abcdefull)) << n;
        EXPECT_FALSE(holds(buf.data(), n, 0x1123456789abcdeeull)) << n;
        buf[n - 1] ^= 1;
        EXPECT_FALSE(holds(buf.data(), n, 0x0123456789abcdefull)) << n;
    }
}

TEST(AllocWorkloads, HammerChecksTheLastRound) {
    unsigned char obj[8];
    EXPECT_TRUE(hammer(obj, 64, 3));
    EXPECT_EQ(obj[0], static_cast<unsigned char>(63 + 3));
}

TEST(AllocRichards, StandardCountGivesTheBenchmarksOwnCheck) {
    auto [qpkt, hold] = richards::run(richards::kCount);
    EXPECT_EQ(qpkt, 23246);
    EXPECT_EQ(hold, 9297);
    EXPECT_NE(richards::run(1000).first, qpkt);  // the counts follow Count
}

TEST(AllocLinkedList, ChecksumIsTheClosedForm) {
    Params p{.size = 64 * 1000, .threads = 1};
    Outcome o = linked_list(p);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.checksum, 8u * (1000u * 999u / 2));
    EXPECT_EQ(o.ops, 8000u);
}

TEST(AllocLarge, WorkingSetBoundsLiveBytes) {
    Params p{.size = 8 << 20, .threads = 1};
    Outcome o = malloc_large(p);
    EXPECT_TRUE(o.ok);
    EXPECT_GE(o.ops, 16u);
}

TEST(AllocProcfs, ReadsThisProcess) {
    std::vector<char> big(32 << 20);
    std::memset(big.data(), 1, big.size());
    procfs::Heap h = procfs::heap_now();
    EXPECT_GE(h.anon, std::size_t{32} << 20);
    EXPECT_GE(procfs::peak_rss(), std::size_t{32} << 20);
    EXPECT_GE(h.huge_share(), 0.0);
    EXPECT_LE(h.huge_share(), 1.0);
    EXPECT_EQ(procfs::field_kb("/proc/self/status", "NoSuchField"), 0u);
}

}  // namespace
