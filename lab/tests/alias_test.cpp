// lab/tests/alias_test.cpp — seed 002's kernels compute what they should: the convolution
// (header and each of the four compiled builds) against a double-precision reference with
// the ends untouched, and the microkernel's counters reach exactly the expected counts.
// Not benchmarks: nothing here is timed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "alias/builds.hpp"
#include "kernels/alias_conv.hpp"
#include "kernels/alias_micro.hpp"

namespace {

using namespace lab::alias;

constexpr float kUnset = -3.0f;

std::vector<float> input(std::size_t n) {
    std::vector<float> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = conv_input(i);
    return in;
}

// Checks out against the reference: ends untouched, the rest within 1e-5 relative.
void expect_conv(const std::vector<float>& out, const std::string& what) {
    const std::size_t n = out.size();
    ASSERT_GE(n, 5u);
    EXPECT_EQ(out[0], kUnset) << what;
    EXPECT_EQ(out[1], kUnset) << what;
    EXPECT_EQ(out[n - 2], kUnset) << what;
    EXPECT_EQ(out[n - 1], kUnset) << what;
    for (std::size_t i = 2; i + 2 < n; ++i) {
        double want = conv_expected(i);
        ASSERT_NEAR(out[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << what << " at " << i;
    }
}

TEST(AliasConv, ReferenceIsTheWeightedSum) {
    // in = i % 251: away from the wrap, out[i] = sum w_t * (i + t - 2) = i (weights sum to 1,
    // symmetric).
    EXPECT_NEAR(conv_expected(10), 10.0, 1e-6);
    EXPECT_NEAR(conv_expected(100), 100.0, 1e-5);
    // At the wrap (250, 0): 0.1*248 + 0.2*249 + 0.4*250 + 0.2*0 + 0.1*1.
    EXPECT_NEAR(conv_expected(250), 0.1 * 248 + 0.2 * 249 + 0.4 * 250 + 0.1 * 1, 1e-4);
}

TEST(AliasConv, HeaderKernelsMatchTheReference) {
    for (std::size_t n : {5u, 6u, 7u, 64u, 1001u, 4096u}) {
        auto in = input(n);
        std::vector<float> a(n, kUnset), b(n, kUnset);
        conv5(in.data(), a.data(), n);
        conv5_restrict(in.data(), b.data(), n);
        expect_conv(a, "conv5 n=" + std::to_string(n));
        expect_conv(b, "conv5_restrict n=" + std::to_string(n));
    }
}

TEST(AliasConv, TooShortWritesNothing) {
    auto in = input(4);
    std::vector<float> out(4, kUnset);
    conv5(in.data(), out.data(), 4);
    for (float v : out) EXPECT_EQ(v, kUnset);
}

TEST(AliasConv, EveryCompiledBuildMatchesTheReferenceAtEveryAlignment) {
    const std::size_t n = 3000;
    auto in = input(n);
    std::vector<float> room(n + 1024 + 16);
    const ConvBuild* builds = conv_builds();
    for (std::size_t b = 0; b < kConvBuildCount; ++b) {
        for (std::size_t off : {0u, 1u, 2u, 3u, 5u, 17u, 1023u}) {
            std::vector<float> out(n, kUnset);
            builds[b].fn(in.data(), out.data(), n);
            expect_conv(out, std::string(builds[b].name) + " off " + std::to_string(off));
            float* o = room.data() + off;   // out at an unaligned place too
            for (std::size_t i = 0; i < n; ++i) o[i] = kUnset;
            builds[b].fn(in.data(), o, n);
            expect_conv(std::vector<float>(o, o + n), std::string(builds[b].name) + " in room +" + std::to_string(off));
        }
    }
}

TEST(AliasConv, BuildTableNamesFourDistinctBuilds) {
    const ConvBuild* builds = conv_builds();
    EXPECT_STREQ(builds[0].name, "o2");
    EXPECT_STREQ(builds[3].name, "o3-restrict");
    EXPECT_FALSE(builds[0].restrict_);
    EXPECT_TRUE(builds[1].restrict_);
    EXPECT_NE(std::string(builds[0].flags), std::string(builds[2].flags));
    for (std::size_t i = 0; i < kConvBuildCount; ++i)
        for (std::size_t j = i + 1; j < kConvBuildCount; ++j) EXPECT_NE(builds[i].fn, builds[j].fn);
}

TEST(AliasConv, OffsetFloatsIsTheLow12BitDistanceInFloats) {
    alignas(4096) static float page[3 * 1024];
    EXPECT_EQ(offset_floats(page, page), 0u);
    EXPECT_EQ(offset_floats(page, page + 1024), 0u);
    EXPECT_EQ(offset_floats(page, page + 1024 + 5), 5u);
    EXPECT_EQ(offset_floats(page + 5, page + 1024), 1019u);   // out 5 floats behind: -5 mod 1024
}

TEST(AliasMicro, CountersReachTheExpectedCounts) {
    Counters c;
    micro_loop(c, 1000, nullptr);
    EXPECT_EQ(c.i, 1000);
    EXPECT_EQ(c.j, 1000);
    EXPECT_EQ(c.k, 1000);
    micro_loop(c, 0, nullptr);
    EXPECT_EQ(c.i, 1000);
    micro_loop(c, 7, nullptr);
    EXPECT_EQ(c.k, 1007);
}

TEST(AliasMicro, ReportsWhereItsVariablesAre) {
    Counters c;
    MicroAddrs at;
    micro_loop(c, 3, &at);
    EXPECT_EQ(at.i, reinterpret_cast<std::uintptr_t>(&c.i));
    EXPECT_EQ(at.j, at.i + 4);
    EXPECT_EQ(at.k, at.i + 8);
    int here = 0;   // the loop's stack variables are on this thread's stack, near here
    auto h = reinterpret_cast<std::uintptr_t>(&here);
    EXPECT_LT(at.g > h ? at.g - h : h - at.g, 1u << 16);
    // Adjacent in an optimised build; AddressSanitizer puts redzones between locals.
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_NE(at.inc, at.g);
#else
    EXPECT_EQ(at.inc > at.g ? at.inc - at.g : at.g - at.inc, sizeof(int));
#endif
}

TEST(AliasMicro, CompiledObjectCountsAndPlacesItsCounters) {
    micro_place(-1);
    micro_reset();
    MicroAddrs linked;
    EXPECT_EQ(micro_run(500, &linked), 1500);
    EXPECT_EQ(micro_run(500, nullptr), 3000);   // statics keep counting
    for (int off : {0, 12, 60}) {
        micro_place(off);
        MicroAddrs at;
        EXPECT_EQ(micro_run(100, &at), 300) << "placed at " << off;
        EXPECT_EQ(at.i % 64, static_cast<std::uintptr_t>(off) % 64) << "placed at " << off;
        EXPECT_NE(at.i, linked.i);
    }
    micro_place(-1);
    MicroAddrs back;
    micro_reset();
    EXPECT_EQ(micro_run(1, &back), 3);
    EXPECT_EQ(back.i, linked.i);
}

}  // namespace
