// lab/common/measure.hpp — timing a measured region: warm-up, repetitions, counters.
//
// Only the pass itself is timed (a steady clock read before and after), as the seed
// paper's regions of interest: set-up and verification stay outside. Each repetition
// runs the pass `passes` times so that it lasts at least min_rep_ms; the result is
// nanoseconds per op (ops = ops_per_pass * passes) for each repetition, with the
// software and hardware counters counted over the same timed region.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "port/counters.hpp"

namespace lab {

// Keeps a value alive so the compiler cannot drop the work that produced it.
inline void sink(std::uint64_t v) noexcept { asm volatile("" : : "r"(v) : "memory"); }

// What one measured phase gave.
struct Timing {
    std::vector<double> ns_per_op;  // one per repetition
    unsigned passes_per_rep = 1;
    std::uint64_t ops_per_pass = 0;
    // Per event (physmem::Event order), one delta per repetition; empty if unavailable.
    std::vector<std::vector<std::uint64_t>> counters;
    std::uint64_t result = 0;  // XOR of every pass's return value (kept live)
};

struct MeasureOptions {
    unsigned reps = 5;
    unsigned warmup = 1;
    double min_rep_ms = 50;
    // Adaptive: with target_spread > 0, stop after min_reps (or more) repetitions once
    // (max - min) / median of those so far is <= target_spread. reps is the most run.
    unsigned min_reps = 0;
    double target_spread = 0;
    // Called, untimed, before every pass when set (e.g. rebuilding a structure the pass
    // consumes). With a reset, every repetition is exactly one pass.
    std::function<void()> reset;
};

// Runs `pass` (returns a value to keep live) warmup times untimed, then `reps` timed
// repetitions (fewer when adaptive, see MeasureOptions), counting with `counters`.
// pre: ops_per_pass > 0.
// Median, min, max and (max - min) / median (0 when the median is 0) of repetitions.
// pre: !ns_per_op.empty().
struct Spread {
    double median, min, max, rel;
};
Spread spread_of(std::vector<double> ns_per_op);

// Adaptive mode's stopping rule: at least max(2, min_reps) repetitions in `ns_per_op` and
// (max - min) / median <= target_spread. false when target_spread is 0 (fixed reps).
bool spread_reached(const std::vector<double>& ns_per_op, const MeasureOptions& o);

Timing measure(const std::function<std::uint64_t()>& pass, std::uint64_t ops_per_pass, const MeasureOptions& o,
               const physmem::EventCounters& counters);

// One of measure_interleaved's timings: a pass of ops_per_pass ops, and its reset (as
// MeasureOptions::reset, for this job alone). With a reset, `passes` passes a repetition,
// each after its own reset and timed alone (the repetition's time is their sum), the jobs'
// passes in turn (measure_interleaved): a pass too short to average out the
// machine's noise between two of them gets its repetitions that long. Without a reset
// `passes` is unused (calibrated to min_rep_ms). pre: passes >= 1.
struct Job {
    std::function<std::uint64_t()> pass;
    std::uint64_t ops_per_pass = 0;
    std::function<void()> reset;
    unsigned passes = 1;
};
// As measure() for each job (o's warmup, min_rep_ms and reps; o.reset unused, no adaptive
// stop), but one repetition of each in turn, always in the same order (A B A B ...): a
// machine that drifts during the run (a VM's neighbours, the kernel settling memory a
// process before this one freed) drifts under every job alike, so ratios between them
// hold, and every repetition follows another job's. (Reversing every other round (A B,
// B A, ...) ran each job twice in a row every other round; a scan of 64 MiB of data
// after its own pass ran 10-20% faster than after another array's on the development VM,
// its last-level cache keeping part of the data, and the paired ratios see-sawed.) Jobs
// with a reset and several passes (Job::passes) run them within the repetition, a pass of
// each at a time, the order reversed every other pass (a A b B, b B a A, ...: each pass
// after its reset, so no job's pass finds its own data cached): a disturbance of the
// machine that recurs near the period of a pair of passes would otherwise fall on the
// same job for a stretch of repetitions. One Timing per job, in order.
// pre: every ops_per_pass > 0.
std::vector<Timing> measure_interleaved(const std::vector<Job>& jobs, const MeasureOptions& o,
                                        const physmem::EventCounters& counters);

}  // namespace lab
