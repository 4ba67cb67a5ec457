// Prefault suite kernels: fill and its closed form, the latency histogram's percentiles
// against a sorted reference, random reads against their memory-free reference, and
// the /proc/interrupts TLB line parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/prefault.hpp"

namespace {

using namespace lab::prefault;

TEST(PrefaultFill, SumMatchesClosedForm) {
    for (std::size_t n : {1u, 2u, 7u, 4096u, 100001u}) {
        std::vector<std::uint64_t> a(n);
        fill(a);
        EXPECT_EQ(sum(a), expected_sum(n)) << n;
    }
}

TEST(PrefaultFill, PiecewiseFillEqualsWholeFill) {
    std::vector<std::uint64_t> whole(1000), parts(1000);
    fill(whole);
    fill(std::span(parts).first(300));
    fill(std::span(parts).subspan(300), 300);
    EXPECT_EQ(whole, parts);
}

TEST(PrefaultFill, ClosedFormCatchesAWrongWord) {
    std::vector<std::uint64_t> a(64);
    fill(a);
    a[17] += 1;
    EXPECT_NE(sum(a), expected_sum(64));
}

TEST(PrefaultHistogram, BucketsAreMonotoneAndContainTheirValues) {
    for (std::uint64_t v : {0ull, 1ull, 63ull, 64ull, 65ull, 1000ull, 123456789ull, 1ull << 40}) {
        auto i = Histogram::index(v);
        ASSERT_LT(i, Histogram::kBuckets);
        EXPECT_LE(v, Histogram::upper(i)) << v;
        if (i > 0) EXPECT_GT(v, Histogram::upper(i - 1)) << v;
    }
}

TEST(PrefaultHistogram, PercentilesWithinThreePercentOfSorted) {
    std::vector<std::uint64_t> xs;
    Histogram h;
    std::uint64_t state = 3;
    for (int i = 0; i < 100000; ++i) {
        std::uint64_t v = 20 + lab::rnd::below(lab::rnd::next(state), i % 1000 == 0 ? 1000000 : 500);
        xs.push_back(v);
        h.record(v);
    }
    std::sort(xs.begin(), xs.end());
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
        double want = static_cast<double>(xs[static_cast<std::size_t>(q * xs.size()) - 1]);
        EXPECT_NEAR(static_cast<double>(h.percentile(q)), want, want * 0.035 + 1) << q;
    }
    EXPECT_EQ(h.max(), xs.back());
    EXPECT_EQ(h.count(), xs.size());
}

TEST(PrefaultHistogram, MergeAddsCounts) {
    Histogram a, b;
    for (int i = 0; i < 10; ++i) a.record(10), b.record(1000);
    a.merge(b);
    EXPECT_EQ(a.count(), 20u);
    EXPECT_EQ(a.percentile(0.5), 10u);
    EXPECT_EQ(a.max(), 1000u);
    EXPECT_EQ(Histogram{}.percentile(0.5), 0u);
}

TEST(PrefaultReader, RandomReadsMatchReference) {
    std::vector<std::uint64_t> a(12345);
    fill(a);
    EXPECT_EQ(random_reads(a, 5000, 9), expected_random_reads(a.size(), 5000, 9));
    a[0] ^= 1;
    a[6000] ^= 1;
    EXPECT_NE(random_reads(a, 50000, 9), expected_random_reads(a.size(), 50000, 9));
}

TEST(PrefaultReader, TouchWritesOneWordPerPage) {
    std::vector<std::byte> buf(3 * 4096 + 100);
    EXPECT_EQ(touch_pages(buf, 4096, 5), 4u);
    EXPECT_EQ(*reinterpret_cast<std::uint64_t*>(buf.data() + 4096), 5u);
}

TEST(PrefaultInterrupts, SumsTheTlbLineOverCpus) {
    std::string text = "           CPU0       CPU1\n  0:   10  0  IO-APIC 2-edge timer\n"
                       "TLB:      22895      19223   TLB shootdowns\nNMI: 1 2 Non-maskable\n";
    EXPECT_EQ(tlb_shootdowns(text), 22895 + 19223);
    EXPECT_EQ(tlb_shootdowns("NMI: 1 2 Non-maskable\n"), -1);
}

TEST(PrefaultClock, CalibrationIsPositive) {
    TickClock c;
    c.start();
    volatile std::uint64_t x = 0;
    for (int i = 0; i < 1000000; ++i) x = x + i;
    EXPECT_GT(c.ticks_per_ns(), 0.0);
}

}  // namespace
