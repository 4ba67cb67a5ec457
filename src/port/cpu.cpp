// src/port/cpu.cpp — CPU feature detection (CPUID). See os.hpp.
#include "port/os.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace physmem::os {

CpuPku cpu_protection_keys() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return {};
    return {(c >> 3 & 1) != 0, (c >> 4 & 1) != 0};
#else
    return {};
#endif
}

}  // namespace physmem::os
