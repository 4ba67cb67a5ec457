// lab/stack/kernels.hpp — the split-stack suite's kernels, declared once for two builds.
//
// kernels.cpp is compiled twice: into namespace lab::stack::normal with the lab's flags,
// and into lab::stack::split with -fsplit-stack added (lab/cmake/stack.cmake). Each
// function of the split build checks the stack limit in its prologue and, when the
// frame does not fit, calls libgcc's __morestack, which switches to another segment.
//
// Kernels (pure functions of their arguments):
//   fib(n)          the naive recursive Fibonacci number: call-bound, shallow (the seeds'
//                   pessimistic case: the limit check on every call, no new segment)
//   deepsum(depth)  a recursion `depth` frames deep, each frame holding a 256-byte array
//                   kept in memory; returns the sum over k = 0..depth of k + k % 32
//   scan_sum(a)     the lab's linear scan (lab/kernels/scan.hpp) of 32-bit ints
//   blackscholes(s) the lab's structure-of-arrays pricing loop (lab/kernels/blackscholes.hpp)
// scan_sum and blackscholes are flattened: every call in them is inlined, so the split
// build runs split code only (no inline function shared with the normal build, whose
// out-of-line copy the linker could pick for both).
#pragma once

#include <cstdint>
#include <span>

#include "kernels/blackscholes.hpp"

#define PHYSMEM_LAB_STACK_KERNELS(NS)                                                    \
    namespace lab::stack::NS {                                                           \
    std::uint64_t fib(unsigned n) noexcept;                                              \
    std::uint64_t deepsum(std::uint64_t depth) noexcept;                                 \
    std::uint64_t scan_sum(std::span<const std::uint32_t> a) noexcept;                   \
    void blackscholes(const lab::blackscholes::SoaSpans& s) noexcept;                    \
    /* The frame address of the deepest deepsum call of the last pass (its leaf). */     \
    const void* deepest_frame() noexcept;                                                \
    }

PHYSMEM_LAB_STACK_KERNELS(normal)
PHYSMEM_LAB_STACK_KERNELS(split)

namespace lab::stack {

// Closed forms the kernels are checked against.
constexpr std::uint64_t fib_reference(unsigned n) noexcept {
    std::uint64_t a = 0, b = 1;
    for (unsigned i = 0; i < n; ++i) b += a, a = b - a;
    return a;
}
// Calls the naive fib(n) makes: 2 fib(n + 1) - 1.
constexpr std::uint64_t fib_calls(unsigned n) noexcept { return 2 * fib_reference(n + 1) - 1; }
constexpr std::uint64_t deepsum_reference(std::uint64_t depth) noexcept {
    std::uint64_t s = 0;
    for (std::uint64_t k = 0; k <= depth; ++k) s += k + k % 32;
    return s;
}

}  // namespace lab::stack
