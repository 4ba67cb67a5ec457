// physmem/tlbsim/detect.hpp — `auto`: the machine to simulate for a CPU, always one, and why.
//
// In order, the first that applies:
//   1. cpuid   — the CPU describes its data TLBs itself: Intel CPUID leaf 0x18
//                (deterministic address translation parameters) or AMD leaves 0x80000005
//                (L1), 0x80000006 (L2) and 0x80000019 (1 GiB). The model is the base preset
//                (2 or 3 below) with its TLB arrays resized to what the CPU reports; page-walk
//                caches and data caches stay the preset's (CPUID does not describe walk
//                caches). Intel's legacy leaf 2 descriptors are used only for a CPU the table
//                does not know: they are fixed strings from before the current cores (Skylake
//                reports a 6-way STLB through them; Intel documents 12 ways).
//   2. table   — the family/model table (preset_for_cpu).
//   3. nearest — the nearest preset by vendor and features (AMD by family; Intel and unknown
//                vendors by the features each server generation brought: AMX Sapphire
//                Rapids, AVX512_VBMI2 Ice Lake, AVX-512 Skylake-SP, none the client core),
//                or, without CPUID, a generic preset.
// Off x86 there is no CPUID: an Arm CPU is named by /proc/cpuinfo (detect_arm.cpp: the
// core's Neoverse preset or the nearest, on the kernel's page granule); anything else gets
// a generic preset, said so.
// Then, whichever applied: 4. a CPU with LA57 (CPUID leaf 7 ECX[16]) gets 5-level paging
// (with_five_levels: one more walk level, name "+la57"), said in the reason; the
// assumption that the OS uses it is stated in detect.cpp.
// Nothing about a particular machine is a default here: every input comes from `cpuid`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "physmem/tlbsim/config.hpp"

namespace physmem::tlbsim {

struct CpuidRegs {
    std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};
// CPUID as a function of (leaf, sub-leaf). A leaf above the maximum the CPU reports must
// not be asked (choose_machine checks leaf 0 and 0x80000000 first). Tests pass tables.
using CpuidFn = std::function<CpuidRegs(std::uint32_t leaf, std::uint32_t subleaf)>;

// One data TLB array as the CPU describes it.
struct TlbDescription {
    unsigned level = 1;       // 1 or 2
    std::uint8_t sizes = 0;   // size_bit()s
    unsigned entries = 0;
    unsigned ways = 0;        // 0: fully associative; the least of a range (below)
    unsigned max_ways = 0;    // AMD's range codes ("8 to 15 ways"): the most; else ways
    std::string from;         // "leaf 0x18.3", "0x80000006 EBX", ...
};

struct AutoChoice {
    MachineConfig machine;     // what to simulate: always a valid configuration
    std::string base;          // the preset it is built on
    std::string source;        // "cpuid", "table" or "nearest"
    std::string reason;        // one line: which model and why
    std::string cpu;           // "AuthenticAMD family 25 model 17", or "no CPUID"
    std::vector<TlbDescription> described;  // what CPUID said (empty: nothing usable)
};

// The data TLBs the CPU describes (empty when it describes none: leaf 0x18 hidden, an
// AMD leaf missing, a vendor without these leaves). Leaf 2 only with legacy = true.
std::vector<TlbDescription> describe_tlbs(const CpuidFn& cpuid, bool legacy);

// The selection above for the CPU `cpuid` answers for.
AutoChoice choose_machine(const CpuidFn& cpuid);
// Off x86 (detect_arm.cpp): the Arm core /proc/cpuinfo names ("CPU implementer", "CPU part")
// with the kernel's page size as the granule: the core's preset, else the nearest (said
// in the reason). Empty when the text names no implementer (not an Arm CPU).
std::optional<AutoChoice> choose_machine_from_cpuinfo(std::string_view cpuinfo, std::size_t page_bytes);
// ... for this machine's CPU: CPUID on x86, /proc/cpuinfo on Arm, else a generic preset
// (said so).
AutoChoice choose_machine_for_this_cpu();

}  // namespace physmem::tlbsim
