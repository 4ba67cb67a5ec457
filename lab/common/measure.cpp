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

// Warm-up passes, then the passes per repetition (calibrated; 1 with a reset).
Timing prepare(const std::function<std::uint64_t()>& pass, std::uint64_t ops_per_pass,
               const std::function<void()>& reset, unsigned warmup, double min_rep_ms) {
    Timing t;
    t.ops_per_pass = ops_per_pass;
    t.counters.resize(physmem::kEventCount);
    for (unsigned i = 0; i < warmup; ++i) {
        if (reset) reset();
        t.result ^= pass();
    }
    if (!reset) t.passes_per_rep = calibrate(pass, min_rep_ms, t.result);
    return t;
}

// One timed repetition appended to t.
void repetition(Timing& t, const std::function<std::uint64_t()>& pass, const std::function<void()>& reset,
                const physmem::EventCounters& counters) {
    if (reset) reset();
    auto before = counters.read();
    auto t0 = Clock::now();
    for (unsigned p = 0; p < t.passes_per_rep; ++p) t.result ^= pass();
    double s = seconds_since(t0);
    auto after = counters.read();
    t.ns_per_op.push_back(s * 1e9 / (static_cast<double>(t.ops_per_pass) * t.passes_per_rep));
    for (std::size_t e = 0; e < physmem::kEventCount; ++e)
        if (before[e] && after[e]) t.counters[e].push_back(*after[e] - *before[e]);
}

}  // namespace

Timing measure(const std::function<std::uint64_t()>& pass, std::uint64_t ops_per_pass, const MeasureOptions& o,
               const physmem::EventCounters& counters) {
    Timing t = prepare(pass, ops_per_pass, o.reset, o.warmup, o.min_rep_ms);
    for (unsigned r = 0; r < o.reps; ++r) {
        repetition(t, pass, o.reset, counters);
        if (spread_reached(t.ns_per_op, o)) break;
    }
    sink(t.result);
    return t;
}

std::vector<Timing> measure_interleaved(const std::vector<Job>& jobs, const MeasureOptions& o,
                                        const physmem::EventCounters& counters) {
    std::vector<Timing> out;
    for (const Job& j : jobs) out.push_back(prepare(j.pass, j.ops_per_pass, j.reset, o.warmup, o.min_rep_ms));
    for (unsigned r = 0; r < o.reps; ++r)
        for (std::size_t k = 0; k < jobs.size(); ++k) repetition(out[k], jobs[k].pass, jobs[k].reset, counters);
    for (const Timing& t : out) sink(t.result);
    return out;
}

}  // namespace lab
