// Adaptive repetitions: the stopping rule, and measure() honouring it.
#include <gtest/gtest.h>

#include <vector>

#include "common/measure.hpp"

namespace {

lab::MeasureOptions adaptive(unsigned reps, unsigned min_reps, double spread) {
    lab::MeasureOptions o;
    o.reps = reps;
    o.warmup = 0;
    o.min_rep_ms = 0;
    o.min_reps = min_reps;
    o.target_spread = spread;
    return o;
}

TEST(Measure, SpreadRuleNeedsTheMinimumAndATightSpread) {
    auto o = adaptive(10, 3, 0.05);
    EXPECT_FALSE(lab::spread_reached({10, 10}, o));           // fewer than min_reps
    EXPECT_TRUE(lab::spread_reached({10, 10.2, 10.4}, o));    // (10.4 - 10) / 10.2 < 5%
    EXPECT_FALSE(lab::spread_reached({10, 10.2, 11}, o));     // 1 / 10.2 > 5%
    EXPECT_FALSE(lab::spread_reached({10, 10, 10}, adaptive(10, 3, 0)));  // fixed mode
    EXPECT_TRUE(lab::spread_reached({5, 5}, adaptive(10, 0, 0.01)));      // at least 2
    EXPECT_FALSE(lab::spread_reached({5}, adaptive(10, 0, 0.01)));
}

TEST(Measure, AdaptiveStopsAtTheMinimumWhenTheSpreadIsMet) {
    physmem::EventCounters none;
    unsigned passes = 0;
    auto pass = [&] { return std::uint64_t{++passes}; };
    // Any spread is within an unbounded target: exactly min_reps repetitions run.
    lab::Timing t = lab::measure(pass, 1, adaptive(10, 3, 1e300), none);
    EXPECT_EQ(t.ns_per_op.size(), 3u);
    // Without a target every one of reps runs.
    t = lab::measure(pass, 1, adaptive(10, 0, 0), none);
    EXPECT_EQ(t.ns_per_op.size(), 10u);
}

}  // namespace
