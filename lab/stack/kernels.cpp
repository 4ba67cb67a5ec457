// lab/stack/kernels.cpp — kernels.hpp's functions, in namespace lab::stack::PHYSMEM_STACK_NS
// (normal or split; the build defines it and adds -fsplit-stack to the split one).
#include "stack/kernels.hpp"

#include "kernels/scan.hpp"

#ifndef PHYSMEM_STACK_NS
#error "define PHYSMEM_STACK_NS (normal or split)"
#endif

namespace lab::stack::PHYSMEM_STACK_NS {

namespace {
const void* volatile g_deepest = nullptr;

// Keeps `p`'s bytes in memory: the frame really holds the array.
inline void keep(const void* p) noexcept { asm volatile("" : : "r"(p) : "memory"); }

// One frame: 32 words filled from k (pad[i] = k + i), the call below, then pad[k % 32].
__attribute__((noinline)) std::uint64_t deep(std::uint64_t k) noexcept {
    std::uint64_t pad[32];
    for (unsigned i = 0; i < 32; ++i) pad[i] = k + i;
    keep(pad);
    if (k == 0) {
        g_deepest = __builtin_frame_address(0);
        return pad[0];
    }
    std::uint64_t below = deep(k - 1);  // not a tail call: the array is read after it
    keep(pad);
    return below + pad[k % 32];         // k + k % 32
}
}  // namespace

__attribute__((noinline)) std::uint64_t fib(unsigned n) noexcept { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

std::uint64_t deepsum(std::uint64_t depth) noexcept { return deep(depth); }

__attribute__((flatten)) std::uint64_t scan_sum(std::span<const std::uint32_t> a) noexcept {
    return lab::scan::linear(a);
}

__attribute__((flatten)) void blackscholes(const lab::blackscholes::SoaSpans& s) noexcept {
    lab::blackscholes::price_soa(s);
}

const void* deepest_frame() noexcept { return g_deepest; }

}  // namespace lab::stack::PHYSMEM_STACK_NS
