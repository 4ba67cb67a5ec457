// lab/kernels/alias_conv.hpp — seed 002's convolution: a 5-tap float filter from one buffer
// into another, whose speed depends on how far apart the two buffers' low 12 bits are.
//
//   out[i] = w0*in[i-2] + w1*in[i-1] + w2*in[i] + w3*in[i+1] + w4*in[i+2],  2 <= i < n-2
//
// The two end elements on each side are not written (the caller's values stay). The sum is
// taken in that order, so every build gives the same result up to floating-point
// contraction (FMA), which -march flags may allow: compare with a relative tolerance.
// Internal linkage (static): lab/alias/conv.cpp is compiled four times (-O2/-O3, with and
// without restrict) and each object must keep its own code.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lab::alias {

inline constexpr float kTaps[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};

// pre: n >= 5 or nothing is written; in and out may overlap only if the caller accepts
// the result of an in-place filter.
static inline void conv5(const float* in, float* out, std::size_t n) {
    for (std::size_t i = 2; i + 2 < n; ++i)
        out[i] = kTaps[0] * in[i - 2] + kTaps[1] * in[i - 1] + kTaps[2] * in[i] + kTaps[3] * in[i + 1] +
                 kTaps[4] * in[i + 2];
}

// The same with restrict: the compiler may assume in and out do not overlap (pre).
static inline void conv5_restrict(const float* __restrict in, float* __restrict out, std::size_t n) {
    for (std::size_t i = 2; i + 2 < n; ++i)
        out[i] = kTaps[0] * in[i - 2] + kTaps[1] * in[i - 1] + kTaps[2] * in[i] + kTaps[3] * in[i + 1] +
                 kTaps[4] * in[i + 2];
}

// The input every run uses: small integers, exact in float.
inline float conv_input(std::size_t i) { return static_cast<float>(i % 251); }

// Reference value of out[i] (2 <= i < n-2) in double, from conv_input.
inline double conv_expected(std::size_t i) {
    double s = 0;
    for (int t = 0; t < 5; ++t) s += static_cast<double>(kTaps[t]) * conv_input(i + t - 2);
    return s;
}

// Offset of out relative to in, in floats, modulo 1024 (one 4 KiB page of floats):
// 0 when their low 12 bits are equal. pre: both 4-byte aligned.
inline unsigned offset_floats(const void* in, const void* out) {
    auto d = reinterpret_cast<std::uintptr_t>(out) - reinterpret_cast<std::uintptr_t>(in);
    return static_cast<unsigned>((d & 0xfff) / 4);
}

}  // namespace lab::alias
