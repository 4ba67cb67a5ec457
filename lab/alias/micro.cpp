// lab/alias/micro.cpp — the microkernel's object, built at -O2 (lab/cmake/alias.cmake).
// The counters are statics of this file: their addresses are fixed at link time and, with
// ASLR off, their low 12 bits are the same in every run of the program. micro_place can
// move them to a chosen byte offset inside a 64-byte-aligned static block instead.
#include <new>

#include "builds.hpp"

namespace lab::alias {

namespace {
Counters linked;                          // where the linker put them
alignas(64) unsigned char block[128];     // storage for a placed copy
Counters* active = &linked;
}  // namespace

void micro_place(int offset) {
    active = offset < 0 ? &linked : new (block + offset) Counters;
}

long micro_run(int iters, MicroAddrs* where) {
    micro_loop(*active, iters, where);
    return static_cast<long>(active->i) + active->j + active->k;
}

void micro_reset() {
    active->i = 0;
    active->j = 0;
    active->k = 0;
}

}  // namespace lab::alias
