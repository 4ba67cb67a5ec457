// src/tlbsim/cpu.cpp — which CPU this is, from the CPUID instruction (the numbers
// /proc/cpuinfo shows as vendor_id, cpu family and model), and its preset.
#include "physmem/tlbsim/config.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstring>

namespace physmem::tlbsim {

std::optional<CpuIdentity> this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return std::nullopt;
    char vendor[13];
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return std::nullopt;
    unsigned family = (a >> 8) & 0xF, model = (a >> 4) & 0xF;
    if (family == 0xF) family += (a >> 20) & 0xFF;            // extended family
    if (family == 6 || family >= 0xF) model |= ((a >> 16) & 0xF) << 4;  // extended model
    return CpuIdentity{vendor, family, model};
#else
    return std::nullopt;
#endif
}

std::optional<std::string> preset_for_this_cpu() {
    std::optional<CpuIdentity> cpu = this_cpu();
    if (!cpu) return std::nullopt;
    return preset_for_cpu(cpu->vendor, cpu->family, cpu->model);
}

}  // namespace physmem::tlbsim
