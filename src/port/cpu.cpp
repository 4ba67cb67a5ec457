// src/port/cpu.cpp — CPU feature detection (CPUID) and cache sizes. See os.hpp.
#include "port/os.hpp"

#include <unistd.h>

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

std::size_t last_level_cache_bytes() noexcept {
    for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        long v = ::sysconf(name);
        if (v > 0) return static_cast<std::size_t>(v);
    }
    return 0;
}

}  // namespace physmem::os
