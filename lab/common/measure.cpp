// lab/common/measure.cpp — warm-up, calibration and timed repetitions.
#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace lab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Passes per repetition so that one lasts at least min_ms, from one timed pass.
unsigned calibrate(const std::function<std::uint64_t()>& pass, double min_ms, std::uint64_t& result) {
    auto t0 = Clock::now();
    result ^= pass();
    double ms = seconds_since(t0) * 1e3;
    if (ms >= min_ms) return 1;
    double want = min_ms / std::max(ms, 1e-6);
    return static_cast<unsigned>(std::clamp(std::ceil(want), 1.0, 1e7));
}

}  // namespace

Spread spread_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::size_t h = v.size() / 2;
    double median = v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
    return {median, v.front(), v.back(), median > 0 ? (v.back() - v.front()) / median : 0.0};
}

bool spread_reached(const std::vector<double>& v, const MeasureOptions& o) {
    if (o.target_spread <= 0 || v.size() < std::max(2u, o.min_reps)) return false;
    Spread s = spread_of(v);
    return s.median > 0 && s.rel <= o.target_spread;
}

namespace {

// Warm-up passes, then the passes per repetition (calibrated; `passes` with a reset).
Timing prepare(const std::function<std::uint64_t()>& pass, std::uint64_t ops_per_pass,
               const std::function<void()>& reset, unsigned warmup, double min_rep_ms, unsigned passes = 1) {
    Timing t;
    t.ops_per_pass = ops_per_pass;
    t.counters.resize(physmem::kEventCount);
    for (unsigned i = 0; i < warmup; ++i) {
        if (reset) reset();
        t.result ^= pass();
    }
    t.passes_per_rep = reset ? std::max(passes, 1u) : calibrate(pass, min_rep_ms, t.result);
    return t;
}

// The timed region of one repetition, possibly in parts: seconds and counter deltas.
struct Region {
    double s = 0;
    std::vector<std::uint64_t> deltas = std::vector<std::uint64_t>(physmem::kEventCount, 0);
    std::vector<bool> counted = std::vector<bool>(physmem::kEventCount, true);
};

// `passes` passes of t's pass timed, added to r.
void timed(Timing& t, const std::function<std::uint64_t()>& pass, unsigned passes,
           const physmem::EventCounters& counters, Region& r) {
    auto before = counters.read();
    auto t0 = Clock::now();
    for (unsigned p = 0; p < passes; ++p) t.result ^= pass();
    r.s += seconds_since(t0);
    auto after = counters.read();
    for (std::size_t e = 0; e < physmem::kEventCount; ++e) {
        if (before[e] && after[e]) r.deltas[e] += *after[e] - *before[e];
        else r.counted[e] = false;
    }
}

// r appended to t as one repetition.
void append(Timing& t, const Region& r) {
    t.ns_per_op.push_back(r.s * 1e9 / (static_cast<double>(t.ops_per_pass) * t.passes_per_rep));
    for (std::size_t e = 0; e < physmem::kEventCount; ++e)
        if (r.counted[e]) t.counters[e].push_back(r.deltas[e]);
}

// Pass p of job j's repetition into r: with a reset, its p-th pass after its reset; without
// one, all of its calibrated passes at p = 0.
void part(Timing& t, const Job& j, unsigned p, const physmem::EventCounters& counters, Region& r) {
    if (!j.reset) {
        if (p == 0) timed(t, j.pass, t.passes_per_rep, counters, r);
    } else if (p < t.passes_per_rep) {
        j.reset();
        timed(t, j.pass, 1, counters, r);
    }
}

}  // namespace

Timing measure(const std::function<std::uint64_t()>& pass, std::uint64_t ops_per_pass, const MeasureOptions& o,
               const physmem::EventCounters& counters) {
    Timing t = prepare(pass, ops_per_pass, o.reset, o.warmup, o.min_rep_ms);
    const Job j{pass, ops_per_pass, o.reset};
    for (unsigned r = 0; r < o.reps; ++r) {
        Region region;
        part(t, j, 0, counters, region);
        append(t, region);
        if (spread_reached(t.ns_per_op, o)) break;
    }
    sink(t.result);
    return t;
}

std::vector<Timing> measure_interleaved(const std::vector<Job>& jobs, const MeasureOptions& o,
                                        const physmem::EventCounters& counters) {
    std::vector<Timing> out;
    unsigned most = 1;
    for (const Job& j : jobs) {
        out.push_back(prepare(j.pass, j.ops_per_pass, j.reset, o.warmup, o.min_rep_ms, j.passes));
        if (j.reset) most = std::max(most, out.back().passes_per_rep);
    }
    for (unsigned r = 0; r < o.reps; ++r) {
        std::vector<Region> regions(jobs.size());
        for (unsigned p = 0; p < most; ++p)
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                std::size_t k = p % 2 ? jobs.size() - 1 - i : i;  // A B, B A, ...: see the header
                part(out[k], jobs[k], p, counters, regions[k]);
            }
        for (std::size_t k = 0; k < jobs.size(); ++k) append(out[k], regions[k]);
    }
    for (const Timing& t : out) sink(t.result);
    return out;
}

}  // namespace lab
