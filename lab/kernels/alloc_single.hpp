// lab/kernels/alloc_single.hpp — single-threaded workloads: glibc-simple (glibc's
// bench-malloc-simple), small-churn (many small objects), malloc-large (buffers of
// 64 KiB..32 MiB), large-live (thousands of live 64..512 KiB blocks replaced at random)
// and realloc-grow (one buffer grown by 1 MiB steps to twice its size). Contracts:
// alloc_common.hpp; `threads` is ignored here.
#pragma once

#include "alloc_threads.hpp"

namespace lab::alloc {

// glibc-simple: for blocks of 16, 32 and 64 B, size / B blocks are allocated then freed
// first-in-first-out, allocated again and freed last-in-first-out (seed 004's glibc
// bench: FIFO then LIFO frees).
inline Outcome glibc_simple(const Params& p) {
    Outcome out;
    bool peaked = false;
    for (std::size_t b : {16u, 32u, 64u}) {
        const std::size_t n = std::max<std::size_t>(16, p.size / b);
        std::vector<void*> v(n);
        for (int order = 0; order < 2; ++order) {
            for (std::size_t i = 0; i < n; ++i) v[i] = get(b), stamp(v[i], b, i);
            if (b == 64 && !peaked) p.peak(), peaked = true;
            for (std::size_t k = 0; k < n; ++k) {
                std::size_t i = order == 0 ? k : n - 1 - k;
                out.ok &= holds(v[i], b, i);
                std::free(v[i]);
            }
            out.ops += n, out.checksum += n * b;
        }
    }
    return out;
}

// small-churn: size bytes of objects of 16..112 B; every other one is freed and
// replaced by one of another size, twice; then all are read back and freed.
inline Outcome small_churn(const Params& p) {
    std::uint64_t st = rnd::mix(p.seed);
    const std::size_t n = std::max<std::size_t>(16, p.size / 64);
    std::vector<Obj> v(n);
    Outcome out;
    for (auto& o : v) o = make(st, 16, 112), out.checksum += o.n, ++out.ops;
    for (int round = 0; round < 2; ++round)
        for (std::size_t i = round; i < n; i += 2) {
            out.ok &= release(v[i]);
            v[i] = make(st, 16, 112), out.checksum += v[i].n, ++out.ops;
        }
    p.peak();
    for (auto& o : v) out.ok &= release(o);
    return out;
}

// malloc-large: buffers of 64 KiB..32 MiB (log-uniform), every 4 KiB page written once,
// kept in a FIFO of at most size bytes (at least one buffer); 4x as many allocations as
// fit, at least 16.
inline Outcome malloc_large(const Params& p) {
    std::uint64_t st = rnd::mix(p.seed);
    std::deque<Obj> live;
    std::size_t bytes = 0, made = 0, total = 16;
    bool peaked = false;
    Outcome out;
    while (made < total) {
        Obj o;
        o.n = static_cast<std::uint32_t>(std::size_t{64} << (10 + rnd::below(rnd::next(st), 10)));
        o.n = static_cast<std::uint32_t>(pick(st, o.n / 2 + 1, o.n));
        o.tag = rnd::next(st);
        while (!live.empty() && bytes + o.n > p.size) {
            if (!peaked) p.peak(), peaked = true;
            bytes -= live.front().n, out.ok &= release(live.front()), live.pop_front();
        }
        o.p = get(o.n);
        auto* c = static_cast<unsigned char*>(o.p);
        for (std::size_t i = 0; i < o.n; i += 4096) c[i] = 1;
        stamp(o.p, o.n, o.tag);
        live.push_back(o), bytes += o.n, ++made, out.checksum += o.n;
        if (made == 4) total = std::max<std::size_t>(16, 4 * made * p.size / bytes);  // 4x what fits
    }
    if (!peaked) p.peak();
    for (auto& o : live) out.ok &= release(o);
    out.ops = made;
    return out;
}

// large-live: size / 288 KiB live blocks of 64..512 KiB (uniform sizes, 288 KiB
// on average), each stamped at both ends; then as many replacements: a block chosen at
// random is checked and freed and a new one of a new size takes its place. Per-operation
// cost as the number of live blocks grows (issue 11: it grew with them).
inline Outcome large_live(const Params& p) {
    std::uint64_t st = rnd::mix(p.seed);
    const std::size_t n = std::max<std::size_t>(16, p.size / (288 << 10));
    std::vector<Obj> v(n);
    Outcome out;
    for (auto& o : v) o = make(st, 64 << 10, 512 << 10), out.checksum += o.n, ++out.ops;
    p.peak();
    for (std::size_t k = 0; k < n; ++k) {
        Obj& o = v[rnd::below(rnd::next(st), n)];
        out.ok &= release(o);
        o = make(st, 64 << 10, 512 << 10), out.checksum += o.n, ++out.ops;
    }
    for (auto& o : v) out.ok &= release(o);
    return out;
}

// realloc-grow: one buffer of size bytes, grown by realloc in 1 MiB steps to 2 x size; its
// first and last bytes are written at every step and the first checked (a copy must carry
// them). ops = realloc calls.
inline Outcome realloc_grow(const Params& p) {
    constexpr std::size_t kStep = std::size_t{1} << 20;
    const std::size_t start = std::max(p.size, kStep);
    auto* b = static_cast<unsigned char*>(get(start));
    b[0] = 0x5a, b[start - 1] = 1;
    Outcome out;
    for (std::size_t n = start + kStep; n <= 2 * start; n += kStep) {
        b = static_cast<unsigned char*>(std::realloc(b, n));
        if (!b) throw std::bad_alloc();
        out.ok &= b[0] == 0x5a && b[n - kStep - 1] == 1;
        b[n - 1] = 1;
        ++out.ops, out.checksum += n >> 20;
    }
    p.peak();
    std::free(b);
    return out;
}

}  // namespace lab::alloc
