// lab/kernels/prefault.hpp — kernels of the prefault suite (seed 003): filling a buffer,
// a latency histogram with percentiles, a tick clock, random reads, and the TLB
// shootdown count of /proc/interrupts.
//
// Pure functions and small value types (no OS calls): the experiment programs
// (lab/experiments/prefault_*.cpp) time them; lab/tests/prefault_test.cpp checks them.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>

#include "kernels/random.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace lab::prefault {

// ---------------------------------------------------------------- fill

// The value written at word i (odd multiplier: distinct, cheap, not all-zero pages).
constexpr std::uint64_t fill_value(std::uint64_t i) noexcept { return i * 0x9e3779b97f4a7c15ull + 1; }

// Writes fill_value(first + i) to every word a[i]: one store per 8 bytes, in order (the
// seed's 2 GB fill without its random generator, so page faults are not hidden).
inline void fill(std::span<std::uint64_t> a, std::uint64_t first = 0) noexcept {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = fill_value(first + i);
}

// Sum (mod 2^64) of fill_value(0..n-1), computed without memory.
constexpr std::uint64_t expected_sum(std::uint64_t n) noexcept {
    // sum(i*k + 1) = k * n(n-1)/2 + n, mod 2^64; n(n-1)/2 halving the even factor first.
    std::uint64_t tri = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
    return tri * 0x9e3779b97f4a7c15ull + n;
}

inline std::uint64_t sum(std::span<const std::uint64_t> a) noexcept {
    std::uint64_t s = 0;
    for (std::uint64_t x : a) s += x;
    return s;
}

// ---------------------------------------------------------------- latency histogram

// Log-linear histogram of non-negative values (ns): exact below 64, then 32 sub-buckets
// per power of two (relative error < 1/32 ≈ 3%). Record is a handful of instructions
// and allocates nothing, so it can sit inside a timed loop.
class Histogram {
  public:
    static constexpr unsigned kSub = 5;  // 2^5 sub-buckets per octave
    static constexpr std::size_t kBuckets = (64 - kSub) * (1u << kSub) + (1u << (kSub + 1));

    void record(std::uint64_t v) noexcept {
        ++counts_[index(v)];
        ++n_;
        max_ = std::max(max_, v);
    }
    std::uint64_t count() const noexcept { return n_; }
    std::uint64_t max() const noexcept { return max_; }
    // The smallest bucket value v with at least q of the samples <= v (upper edge of
    // the bucket, capped at max()). pre: 0 <= q <= 1. 0 when empty.
    std::uint64_t percentile(double q) const noexcept {
        if (n_ == 0) return 0;
        auto want = static_cast<std::uint64_t>(q * static_cast<double>(n_) + 0.5);
        want = std::clamp<std::uint64_t>(want, 1, n_);
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < kBuckets; ++i)
            if ((seen += counts_[i]) >= want) return std::min(upper(i), max_);
        return max_;
    }
    void merge(const Histogram& o) noexcept {
        for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
        n_ += o.n_;
        max_ = std::max(max_, o.max_);
    }

    static std::size_t index(std::uint64_t v) noexcept {
        constexpr std::uint64_t linear = 1u << (kSub + 1);
        if (v < linear) return v;
        unsigned top = 63 - static_cast<unsigned>(std::countl_zero(v));  // >= kSub + 1
        unsigned shift = top - kSub;
        return linear + (top - kSub - 1) * (1u << kSub) + ((v >> shift) - (1u << kSub));
    }
    // Largest value that falls in bucket i.
    static std::uint64_t upper(std::size_t i) noexcept {
        constexpr std::uint64_t linear = 1u << (kSub + 1);
        if (i < linear) return i;
        std::size_t k = i - linear;
        unsigned shift = static_cast<unsigned>(k >> kSub) + 1;
        std::uint64_t mant = (k & ((1u << kSub) - 1)) + (1u << kSub);
        return ((mant + 1) << shift) - 1;
    }

  private:
    std::array<std::uint64_t, kBuckets> counts_{};
    std::uint64_t n_ = 0;
    std::uint64_t max_ = 0;
};

// ---------------------------------------------------------------- tick clock

// A cheap per-operation clock: rdtsc on x86-64 (invariant TSC: constant_tsc and
// nonstop_tsc), else steady_clock's count. ticks_per_ns() is calibrated against
// steady_clock over the caller's own run (start() ... ticks_per_ns()).
class TickClock {
  public:
    static std::uint64_t now() noexcept {
#if defined(__x86_64__)
        return __rdtsc();
#else
        return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    }
    static const char* name() noexcept {
#if defined(__x86_64__)
        return "rdtsc";
#else
        return "steady_clock";
#endif
    }
    void start() noexcept {
        t0_ = std::chrono::steady_clock::now();
        c0_ = now();
    }
    // Ticks per nanosecond since start(). pre: start() was called some time ago.
    double ticks_per_ns() const noexcept {
        auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0_).count();
        return ns > 0 ? static_cast<double>(now() - c0_) / ns : 1.0;
    }

  private:
    std::chrono::steady_clock::time_point t0_{};
    std::uint64_t c0_ = 0;
};

// ---------------------------------------------------------------- reader

// `reads` random 8-byte reads of `a` (indices from a seeded splitmix stream), summed.
// pre: !a.empty().
inline std::uint64_t random_reads(std::span<const std::uint64_t> a, std::uint64_t reads, std::uint64_t seed) noexcept {
    std::uint64_t s = 0, state = seed;
    for (std::uint64_t r = 0; r < reads; ++r) s += a[rnd::below(rnd::next(state), a.size())];
    return s;
}

// Reference for random_reads when a holds fill_value(i): the same indices, no memory.
inline std::uint64_t expected_random_reads(std::size_t n, std::uint64_t reads, std::uint64_t seed) noexcept {
    std::uint64_t s = 0, state = seed;
    for (std::uint64_t r = 0; r < reads; ++r) s += fill_value(rnd::below(rnd::next(state), n));
    return s;
}

// Writes one word per `page` bytes of a (the churner's "touch"); returns pages touched.
inline std::size_t touch_pages(std::span<std::byte> a, std::size_t page, std::uint64_t value) noexcept {
    std::size_t n = 0;
    for (std::size_t at = 0; at + sizeof value <= a.size(); at += page, ++n)
        *reinterpret_cast<volatile std::uint64_t*>(a.data() + at) = value;
    return n;
}

// ---------------------------------------------------------------- /proc/interrupts

// Sum over CPUs of the "TLB:" line (TLB shootdowns) of /proc/interrupts text; -1 when
// the text has no such line (not x86, or the kernel does not expose it).
inline long long tlb_shootdowns(const std::string& interrupts) {
    std::istringstream in(interrupts);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string label;
        words >> label;
        if (label != "TLB:") continue;
        long long total = 0, v = 0;
        while (words >> v) total += v;
        return total;
    }
    return -1;
}

}  // namespace lab::prefault
