// Adaptive repetitions: the stopping rule, and measure() honouring it.
#include <gtest/gtest.h>

#include <string>
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

// Interleaved: every job warmed up and calibrated first, then one repetition of each in
// turn, always in the same order (A B, A B, A B: each follows the other), each job's reset
// before its own passes only; reps repetitions each, whatever o says of adaptive stopping.
TEST(Measure, InterleavedRunsTheJobsInTurnEachAfterTheOther) {
    physmem::EventCounters none;
    std::string log;
    auto job = [&log](char name) {
        return lab::Job{[&log, name] { log += name; return std::uint64_t{1}; }, 1,
                        [&log, name] { log += static_cast<char>(name + 32); }};  // reset: lower case
    };
    lab::MeasureOptions o = adaptive(3, 2, 1e300);  // adaptive would stop at 2: ignored
    o.warmup = 1;
    std::vector<lab::Timing> t = lab::measure_interleaved({job('A'), job('B')}, o, none);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].ns_per_op.size(), 3u);
    EXPECT_EQ(t[1].ns_per_op.size(), 3u);
    EXPECT_EQ(t[0].passes_per_rep, 1u);  // with a reset: one pass a repetition
    EXPECT_EQ(log, "aAbB" "aAbB" "aAbB" "aAbB");
}

// Several passes a repetition (a job with a reset): the passes alternate with the other
// job's, each after its own reset, the order reversed every other pass; a job without a
// reset runs its calibrated passes at its first turn of the repetition only.
TEST(Measure, InterleavedPassesAlternateEachAfterItsReset) {
    physmem::EventCounters none;
    std::string log;
    auto pass = [&log](char name) { return [&log, name] { log += name; return std::uint64_t{1}; }; };
    auto reset = [&log](char name) { return [&log, name] { log += static_cast<char>(name + 32); }; };
    lab::MeasureOptions o = adaptive(2, 0, 0);
    std::vector<lab::Timing> t =
        lab::measure_interleaved({{pass('A'), 1, reset('A'), 3}, {pass('B'), 1, reset('B'), 2}, {pass('C'), 1, {}, 9}}, o, none);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].passes_per_rep, 3u);
    EXPECT_EQ(t[1].passes_per_rep, 2u);
    EXPECT_EQ(t[2].passes_per_rep, 1u);  // no reset: calibrated (min_rep_ms 0: one pass), not `passes`
    // Calibration's one pass of C, then per repetition: a A b B C, b B a A, a A.
    EXPECT_EQ(log, std::string("C") + "aAbBCbBaAaA" + "aAbBCbBaAaA");
    for (const lab::Timing& x : t) EXPECT_EQ(x.ns_per_op.size(), 2u);
}
