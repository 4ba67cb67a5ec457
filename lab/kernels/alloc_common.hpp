// lab/kernels/alloc_common.hpp — what every allocator workload shares: its parameters,
// its outcome, the byte pattern objects carry, and running a body on T threads.
//
// A workload allocates through plain malloc/free (whatever allocator serves the
// process), writes a pattern into every object it gets and checks it before the free, so
// a workload also verifies the allocator: `ok` is false when any object lost its bytes
// or the workload's own result differs from its reference.
#pragma once

#include <algorithm>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <thread>
#include <vector>

#include "random.hpp"

namespace lab::alloc {

// One run of a workload. size: the heap / working set it keeps live (each workload says
// how it reads it); threads >= 1; peak(): called once, by one thread, when the live
// heap is at its largest (the caller samples /proc there).
struct Params {
    std::size_t size = 1 << 20;
    unsigned threads = 2;
    std::uint64_t seed = 42;
    std::function<void()> peak = [] {};
};

struct Outcome {
    std::uint64_t ops = 0;       // allocations (or the workload's unit) done
    std::uint64_t checksum = 0;  // deterministic for (size, threads, seed)
    bool ok = true;              // every check passed
};

// Allocates n bytes or throws std::bad_alloc. pre: n > 0.
inline void* get(std::size_t n) {
    void* p = std::malloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}

// Writes the tag's pattern into the first 8 bytes and the last 8 (the bytes after the
// first 8 when shorter; the whole of an object of 8 bytes or less); holds() checks it. Touching both ends is what a real object's header and
// trailer do, without making the workload a memset benchmark.
inline void stamp(void* p, std::size_t n, std::uint64_t tag) noexcept {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n && i < 8; ++i) b[i] = static_cast<unsigned char>(tag >> (8 * i));
    for (std::size_t i = n > 16 ? n - 8 : 8; i < n; ++i) b[i] = static_cast<unsigned char>(tag + i);
}
inline bool holds(const void* p, std::size_t n, std::uint64_t tag) noexcept {
    auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n && i < 8; ++i)
        if (b[i] != static_cast<unsigned char>(tag >> (8 * i))) return false;
    for (std::size_t i = n > 16 ? n - 8 : 8; i < n; ++i)
        if (b[i] != static_cast<unsigned char>(tag + i)) return false;
    return true;
}

// Runs body(t) on threads 0..n-1 (thread 0 is the caller) and joins them.
inline void on_threads(unsigned n, const std::function<void(unsigned)>& body) {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(body, t);
    body(0);
    for (auto& th : pool) th.join();
}

// A size in [lo, hi] from the stream `state`.
inline std::size_t pick(std::uint64_t& state, std::size_t lo, std::size_t hi) noexcept {
    return lo + rnd::below(rnd::next(state), hi - lo + 1);
}

}  // namespace lab::alloc
