// lab/kernels/alias_micro.hpp — seed 002's microkernel: three static counters bumped from a
// loop whose counter and increment live on the stack.
//
// The point of the kernel is where its variables sit: a store to a counter followed by a
// load of a stack variable whose address has the same low 12 bits is a 4K-aliasing pair
// (the load is held back as if it depended on the store). The environment's size moves
// the stack, so one environment size in every 4 KiB makes such a pair.
//
// Contract: every access stays in memory whatever the optimisation level — the counters
// and both stack variables are volatile — so an -O2 build keeps the -O0 access pattern
// (load inc, load counter, store counter, per counter; load, bump, store the loop
// counter) without the -O0 spills of everything else. Internal linkage (static): each
// object compiled with its own flags keeps its own copy (no ODR merging across builds).
#pragma once

#include <cstdint>

namespace lab::alias {

// The three counters, adjacent like three statics (4 bytes apart).
struct Counters {
    volatile int i = 0, j = 0, k = 0;
};

// Where the loop's variables were: full addresses (the low 12 bits are what matters).
struct MicroAddrs {
    std::uintptr_t g = 0, inc = 0, i = 0, j = 0, k = 0;
};

// Runs `iters` iterations, each adding 1 to c.i, c.j and c.k. pre: iters <= INT_MAX.
// Writes the addresses of the stack variables and counters to *where when non-null.
static inline void micro_loop(Counters& c, int iters, MicroAddrs* where) {
    volatile int g = 0;
    volatile int inc = 1;
    if (where) {
        *where = {reinterpret_cast<std::uintptr_t>(&g), reinterpret_cast<std::uintptr_t>(&inc),
                  reinterpret_cast<std::uintptr_t>(&c.i), reinterpret_cast<std::uintptr_t>(&c.j),
                  reinterpret_cast<std::uintptr_t>(&c.k)};
    }
    while (g < iters) {
        c.i = c.i + inc;
        c.j = c.j + inc;
        c.k = c.k + inc;
        g = g + 1;
    }
}

}  // namespace lab::alias
