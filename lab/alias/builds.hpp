// lab/alias/builds.hpp — the kernel objects of the alias programs, each compiled with its
// own flags by lab/cmake/alias.cmake (not the lab's -O3 -march=native).
#pragma once

#include <cstddef>

#include "kernels/alias_micro.hpp"

namespace lab::alias {

// lab/alias/micro.cpp at -O2: micro_loop on the object's own static Counters (i, j, k are
// statics of that file, as in the seed). Returns i + j + k after the loop, which is
// 3 * iters more than before. where: as micro_loop.
long micro_run(int iters, MicroAddrs* where);
// Sets the static counters back to 0.
void micro_reset();
// Where the counters live from now on: offset < 0, the statics as linked; else at byte
// `offset` of a 64-byte-aligned static block. pre: offset < 0 or (offset % 4 == 0 and
// offset <= 64). Their values after a move are 0.
void micro_place(int offset);

// One build of conv5: lab/alias/conv.cpp compiled with `flags`, using conv5_restrict
// when `restrict_`.
using ConvFn = void (*)(const float* in, float* out, std::size_t n);
struct ConvBuild {
    const char* name;   // "o2", "o2-restrict", "o3", "o3-restrict"
    const char* flags;  // the compiler flags of its object
    bool restrict_;
    ConvFn fn;
};
inline constexpr std::size_t kConvBuildCount = 4;
// The four builds, in that order.
const ConvBuild* conv_builds();

}  // namespace lab::alias
