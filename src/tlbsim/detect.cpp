// src/tlbsim/detect.cpp — `auto`: CPUID's own TLB description, else the family/model table,
// else the nearest preset (see physmem/tlbsim/detect.hpp for the order and its reasons).
//
// Field layouts:
//   Intel leaf 0x18 — SDM Vol. 2A, CPUID, "Deterministic Address Translation Parameters":
//     sub-leaf 0 EAX = highest sub-leaf; per sub-leaf EDX[4:0] type (0 none, 1 data,
//     2 instruction, 3 unified, 4 load-only, 5 store-only), EDX[7:5] level, EDX[8] fully
//     associative, EBX[0..3] 4K/2M/4M/1G pages, EBX[31:16] ways, ECX sets.
//   Intel leaf 2 — SDM Vol. 2A, CPUID, Table "Encoding of CPUID Leaf 2 Descriptors": only
//     the data-TLB and shared-STLB descriptors below are decoded.
//   AMD 0x80000005/0x80000006/0x80000019 — AMD64 Architecture Programmer's Manual Vol. 3,
//     Appendix E (CPUID): L1 fields [31:24] associativity (FFh fully) and [23:16] entries;
//     L2 and 1 GiB fields [31:28] associativity code and [27:16] entries.
#include "physmem/tlbsim/detect.hpp"

#include "hex.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace physmem::tlbsim {

namespace {

constexpr std::uint8_t k4K = size_bit(PageSize::k4K);
constexpr std::uint8_t k2M = size_bit(PageSize::k2M);
constexpr std::uint8_t k1G = size_bit(PageSize::k1G);

using detail::hex;

CpuIdentity identity(const CpuidFn& cpuid) {
    CpuidRegs r0 = cpuid(0, 0);
    char vendor[13];
    std::memcpy(vendor, &r0.ebx, 4);
    std::memcpy(vendor + 4, &r0.edx, 4);
    std::memcpy(vendor + 8, &r0.ecx, 4);
    vendor[12] = 0;
    CpuIdentity id{vendor, 0, 0};
    if (r0.eax < 1) return id;
    std::uint32_t a = cpuid(1, 0).eax;
    id.family = (a >> 8) & 0xF;
    id.model = (a >> 4) & 0xF;
    if (id.family == 0xF) id.family += (a >> 20) & 0xFF;
    if (id.family == 6 || id.family >= 0xF) id.model |= ((a >> 16) & 0xF) << 4;
    return id;
}

struct Features {
    bool avx512 = false;  // leaf 7 EBX[16] AVX512F
    bool vbmi2 = false;   // leaf 7 ECX[6] AVX512_VBMI2: Ice Lake (Sunny Cove) and later
    bool amx = false;     // leaf 7 EDX[24] AMX-TILE: Sapphire Rapids (Golden Cove server) and later
    bool la57 = false;    // leaf 7 ECX[16] LA57: 5-level paging supported
};

Features features(const CpuidFn& cpuid) {
    Features f;
    if (cpuid(0, 0).eax < 7) return f;
    const CpuidRegs r = cpuid(7, 0);
    f.avx512 = (r.ebx >> 16) & 1;
    f.vbmi2 = (r.ecx >> 6) & 1;
    f.amx = (r.edx >> 24) & 1;
    f.la57 = (r.ecx >> 16) & 1;
    return f;
}

// ---- Intel leaf 0x18 ----------------------------------------------------------------------
void leaf18(const CpuidFn& cpuid, std::vector<TlbDescription>& out) {
    if (cpuid(0, 0).eax < 0x18) return;
    const std::uint32_t last = cpuid(0x18, 0).eax;
    for (std::uint32_t s = 0; s <= last && s < 64; ++s) {
        CpuidRegs r = cpuid(0x18, s);
        unsigned type = r.edx & 0x1F;
        if (type != 1 && type != 3 && type != 4) continue;  // data, unified, load-only
        TlbDescription d;
        d.level = (r.edx >> 5) & 7;
        d.sizes = std::uint8_t(((r.ebx & 1) ? k4K : 0) | ((r.ebx & 2) ? k2M : 0) | ((r.ebx & 8) ? k1G : 0));
        unsigned ways = r.ebx >> 16;
        d.entries = ways * r.ecx;
        d.ways = (r.edx >> 8) & 1 ? 0 : ways;
        d.from = "leaf 0x18." + std::to_string(s);
        if (d.sizes && d.entries && (d.level == 1 || d.level == 2)) out.push_back(d);
    }
}

// ---- Intel leaf 2 (legacy descriptors) -------------------------------------------------------
struct Descriptor {
    std::uint8_t code;
    unsigned level;
    std::uint8_t sizes;
    unsigned entries, ways;
};
// SDM Vol. 2A, Table 3-12 (CPUID leaf 2 descriptors): data TLBs and shared second-level TLBs.
// 63h lists two arrays (2M/4M 32 entries 4-way; 1 GiB 4 entries 4-way); C3h too (4K/2M 1536
// entries 6-way; 1 GiB 16 entries 4-way).
constexpr Descriptor kLeaf2[] = {
    {0x03, 1, k4K, 64, 4},          // Data TLB: 4 KByte pages, 4-way, 64 entries
    {0x5A, 1, k2M, 32, 4},          // Data TLB0: 2/4 MByte pages, 4-way, 32 entries
    {0x63, 1, k2M, 32, 4},          // Data TLB: 2/4 MByte pages, 4-way, 32 entries ...
    {0x63, 1, k1G, 4, 4},           // ... and 1 GByte pages, 4-way, 4 entries
    {0xB3, 1, k4K, 128, 4},         // Data TLB: 4 KByte pages, 4-way, 128 entries
    {0xC1, 2, k4K | k2M, 1024, 8},  // Shared 2nd-level TLB: 4K/2M pages, 8-way, 1024 entries
    {0xC3, 2, k4K | k2M, 1536, 6},  // Shared 2nd-level TLB: 4K/2M pages, 6-way, 1536 entries ...
    {0xC3, 2, k1G, 16, 4},          // ... and 1 GByte pages, 4-way, 16 entries
    {0xCA, 2, k4K, 512, 4},         // Shared 2nd-level TLB: 4 KByte pages, 4-way, 512 entries
};

void leaf2(const CpuidFn& cpuid, std::vector<TlbDescription>& out) {
    if (cpuid(0, 0).eax < 2) return;
    CpuidRegs r = cpuid(2, 0);
    std::uint32_t regs[4] = {r.eax & ~0xFFu, r.ebx, r.ecx, r.edx};  // AL: the call count
    for (std::uint32_t v : regs) {
        if (v >> 31) continue;  // bit 31 set: this register holds no descriptors
        for (int byte = 0; byte < 4; ++byte) {
            std::uint8_t code = std::uint8_t(v >> (8 * byte));
            for (const Descriptor& d : kLeaf2)
                if (d.code == code)
                    out.push_back({d.level, d.sizes, d.entries, d.ways, d.ways, "leaf 2 descriptor " + hex(code)});
        }
    }
}

// ---- AMD ------------------------------------------------------------------------------------
// L2 and 1 GiB associativity codes (APM Vol. 3, CPUID Fn8000_0006): the ways, a range for
// most codes ("8 to 15 ways": {8, 15}); nullopt = unusable (0 disabled, 9 "see leaf
// 0x8000001D", reserved codes); {0, 0} = fully associative.
std::optional<std::pair<unsigned, unsigned>> amd_l2_ways(unsigned code) {
    switch (code) {
        case 1: return std::pair{1u, 1u};
        case 2: return std::pair{2u, 2u};
        case 3: return std::pair{3u, 3u};
        case 4: return std::pair{4u, 5u};
        case 5: return std::pair{6u, 7u};
        case 6: return std::pair{8u, 15u};
        case 8: return std::pair{16u, 31u};
        case 0xA: return std::pair{32u, 47u};
        case 0xB: return std::pair{48u, 63u};
        case 0xC: return std::pair{64u, 95u};
        case 0xD: return std::pair{96u, 127u};
        case 0xE: return std::pair{128u, 0xFFFEu};
        case 0xF: return std::pair{0u, 0u};
        default: return std::nullopt;
    }
}

void amd_l1(std::uint32_t reg, std::uint8_t sizes, const std::string& from, std::vector<TlbDescription>& out) {
    unsigned assoc = reg >> 24, entries = (reg >> 16) & 0xFF;
    if (!assoc || !entries) return;
    out.push_back({1, sizes, entries, assoc == 0xFF ? 0u : assoc, assoc == 0xFF ? 0u : assoc, from});
}

void amd_l2(unsigned level, std::uint32_t reg, std::uint8_t sizes, const std::string& from,
            std::vector<TlbDescription>& out) {
    unsigned entries = (reg >> 16) & 0xFFF;
    std::optional<std::pair<unsigned, unsigned>> ways = amd_l2_ways(reg >> 28);
    if (!ways || !entries) return;
    std::string range = ways->second > ways->first ? ": " + std::to_string(ways->first) + " to " +
                                                         std::to_string(ways->second) + " ways"
                                                   : "";
    out.push_back({level, sizes, entries, ways->first, ways->second, from + range});
}

void amd(const CpuidFn& cpuid, std::vector<TlbDescription>& out) {
    const std::uint32_t max = cpuid(0x80000000, 0).eax;
    if (max < 0x80000006) return;
    CpuidRegs l1 = cpuid(0x80000005, 0), l2 = cpuid(0x80000006, 0);
    amd_l1(l1.ebx, k4K, "0x80000005 EBX", out);
    amd_l1(l1.eax, k2M, "0x80000005 EAX", out);
    amd_l2(2, l2.ebx, k4K, "0x80000006 EBX", out);
    amd_l2(2, l2.eax, k2M, "0x80000006 EAX", out);
    if (max < 0x80000019) return;
    CpuidRegs g = cpuid(0x80000019, 0);
    amd_l2(1, g.eax, k1G, "0x80000019 EAX", out);
    amd_l2(2, g.ebx, k1G, "0x80000019 EBX", out);
}

// ---- selection ------------------------------------------------------------------------------
bool is_amd_like(const std::string& vendor) { return vendor == "AuthenticAMD" || vendor == "HygonGenuine"; }

// The nearest preset for a CPU the table does not know, and why.
std::pair<std::string, std::string> nearest(const CpuIdentity& id, const Features& f) {
    const std::string avx = f.avx512 ? "with AVX-512" : "without AVX-512";
    if (is_amd_like(id.vendor)) {
        std::string p = id.family >= 0x1A ? "zen5"
                        : id.family == 0x19 ? (f.avx512 ? "zen4" : "zen3")
                        : id.family == 0x17 ? (id.model >= 0x30 ? "zen2" : "zen1")
                                            : "zen1";
        return {p, "AMD-compatible family " + hex(id.family) + ": the nearest Zen generation"};
    }
    // Intel server generations by the first features they brought: AMX (Sapphire Rapids),
    // AVX512_VBMI2 with AVX-512 (Ice Lake), AVX-512 (Skylake-SP); else the client core.
    std::string p = f.amx                 ? "sapphire-rapids"
                    : f.avx512 && f.vbmi2 ? "icelake-sp"
                    : f.avx512            ? "skylake-sp"
                                          : "skylake";
    const std::string feats = f.amx ? "with AMX" : f.avx512 && f.vbmi2 ? "with AVX-512 VBMI2" : avx;
    if (id.vendor == "GenuineIntel")
        return {p, "Intel " + feats + ": the nearest Intel core with presets (" + p + ")"};
    return {p, "vendor '" + id.vendor + "' has no presets; " + feats + ": " + p + " as a generic x86-64 model"};
}

// The index of the base preset's array at `level` holding `size` (-1: none).
int holding(const TlbLevelConfig& l, std::uint8_t size) {
    for (std::size_t i = 0; i < l.arrays.size(); ++i)
        if (l.arrays[i].sizes & size) return int(i);
    return -1;
}

std::string geometry(unsigned entries, unsigned ways) {
    std::string g = std::to_string(entries);  // appended piecewise: GCC 12 warns (-Wrestrict) on a + chain
    if (ways) {
        g += ' ';
        g += std::to_string(ways);
        g += "-way";
    } else {
        g += " fully associative";
    }
    return g;
}

// Resizes m's TLB arrays to the description; returns what changed ("" when nothing did).
// An array holding several sizes takes the description of its smallest described size.
std::string overlay(MachineConfig& m, const std::vector<TlbDescription>& desc) {
    std::string changes;
    for (unsigned level = 1; level <= 2; ++level) {
        TlbLevelConfig& l = level == 1 ? m.l1 : m.l2;
        std::vector<int> done;  // arrays already resized
        for (PageSize s : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
            const TlbDescription* d = nullptr;
            for (const TlbDescription& x : desc)
                if (x.level == level && (x.sizes & size_bit(s))) {
                    d = &x;
                    break;
                }
            if (!d) continue;
            const int i = holding(l, size_bit(s));
            if (i >= 0 && std::find(done.begin(), done.end(), i) != done.end()) continue;
            unsigned ways = d->ways, entries = d->entries;
            if (i >= 0 && d->max_ways > ways) {  // a range ("8 to 15 ways"): the preset's, when within it
                unsigned have = l.arrays[std::size_t(i)].ways;
                if (have >= ways && have <= d->max_ways) ways = have;
            }
            if (ways && entries % ways) entries -= entries % ways;  // whole sets (as zen2's preset)
            if (ways > entries) ways = 0;
            std::string what = "L";  // piecewise, as geometry()
            what += std::to_string(level);
            what += ' ';
            what += to_string(s);
            if (i < 0) {
                done.push_back(int(l.arrays.size()));
                l.arrays.push_back({entries, ways, size_bit(s)});
                changes += (changes.empty() ? "" : "; ") + what + " " + geometry(entries, ways) + " added (" +
                           d->from + ")";
                continue;
            }
            done.push_back(i);
            ArrayConfig* a = &l.arrays[std::size_t(i)];
            if (a->entries == entries && (a->ways == ways || (!ways && a->ways == a->entries) ||
                                          (!a->ways && ways == entries)))
                continue;
            changes += (changes.empty() ? "" : "; ") + what + " " + geometry(a->entries, a->ways) + " -> " +
                       geometry(entries, ways) + " (" + d->from + ")";
            a->entries = entries;
            a->ways = ways;
        }
    }
    return changes;
}

bool describes_both_levels(const std::vector<TlbDescription>& d) {
    bool l1 = false, l2 = false;
    for (const TlbDescription& x : d) {
        l1 |= x.level == 1 && (x.sizes & k4K);
        l2 |= x.level == 2 && (x.sizes & k4K);
    }
    return l1 && l2;
}

std::string cpu_name(const CpuIdentity& id) {
    return id.vendor + " family " + std::to_string(id.family) + " model " + std::to_string(id.model) + " (" +
           hex(id.family) + "/" + hex(id.model) + ")";
}

}  // namespace

std::vector<TlbDescription> describe_tlbs(const CpuidFn& cpuid, bool legacy) {
    std::vector<TlbDescription> out;
    const CpuIdentity id = identity(cpuid);
    if (id.vendor == "GenuineIntel") {
        leaf18(cpuid, out);
        if (out.empty() && legacy) leaf2(cpuid, out);
    } else if (is_amd_like(id.vendor)) {
        amd(cpuid, out);
    }
    return out;
}

namespace {

// The TLBs and walk caches: steps 1 to 3 of detect.hpp.
AutoChoice choose_tlbs(const CpuidFn& cpuid) {
    AutoChoice c;
    const CpuIdentity id = identity(cpuid);
    c.cpu = cpu_name(id);
    std::optional<std::string> table = preset_for_cpu(id.vendor, id.family, id.model);
    std::string why_base;
    if (table) {
        c.base = *table;
        c.source = "table";
        why_base = "family/model table: " + *table;
    } else {
        auto [p, why] = nearest(id, features(cpuid));
        c.base = p;
        c.source = "nearest";
        why_base = "not in the family/model table; " + why;
    }
    c.machine = preset(c.base);
    std::vector<TlbDescription> d = describe_tlbs(cpuid, /*legacy=*/!table);
    if (!describes_both_levels(d)) {
        std::string hidden = id.vendor == "GenuineIntel" ? "CPUID leaf 0x18 absent or hidden"
                             : is_amd_like(id.vendor)   ? "CPUID 0x80000005/0x80000006 give no L1 and L2 data TLB"
                                                        : "no TLB description this program reads for this vendor";
        c.reason = hidden + "; " + why_base;
        return c;
    }
    c.described = d;
    MachineConfig m = c.machine;
    std::string changes = overlay(m, d);
    try {
        validate(m);
    } catch (const std::invalid_argument& e) {
        c.reason = "CPUID's TLB description is inconsistent (" + std::string(e.what()) + "); " + why_base;
        return c;
    }
    c.source = "cpuid";
    if (changes.empty()) {
        c.reason = "CPUID describes the data TLBs as preset " + c.base + " has them (" + why_base + ")";
        return c;
    }
    m.name = c.base + "-cpuid";
    m.description = m.description + "; TLBs resized to this CPU's CPUID: " + changes;
    m.sources.insert(m.sources.begin(), "CPUID read on this CPU (" + c.cpu + "): " + changes +
                                            "; page-walk and data caches from preset " + c.base);
    c.machine = std::move(m);
    c.reason = "CPUID describes the data TLBs: " + changes + "; walk and data caches from " + c.base + " (" +
               why_base + ")";
    return c;
}

}  // namespace

// LA57 (step 4 of detect.hpp): user space cannot read CR4.LA57, so CPUID's bit is the signal.
// ASSUMED in use when present: Linux turns 5-level paging on at boot on a CPU with LA57
// (unless booted with no5lvl, or built without CONFIG_X86_5LEVEL where that option exists),
// and a hypervisor exposes the bit to a guest only when the guest may use it.
AutoChoice choose_machine(const CpuidFn& cpuid) {
    AutoChoice c = choose_tlbs(cpuid);
    if (!features(cpuid).la57 || c.machine.levels == 5) return c;
    c.machine = with_five_levels(std::move(c.machine));
    c.reason += "; CPUID leaf 7 ECX[16] LA57: 5-level paging (57-bit virtual addresses), one more walk level";
    return c;
}

AutoChoice choose_machine_for_this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0, &eax, &ebx, &ecx, &edx))
        return choose_machine([](std::uint32_t leaf, std::uint32_t sub) {
            CpuidRegs r;
            __cpuid_count(leaf, sub, r.eax, r.ebx, r.ecx, r.edx);
            return r;
        });
#endif
    std::ifstream f("/proc/cpuinfo");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    long page = sysconf(_SC_PAGESIZE);
    if (std::optional<AutoChoice> arm = choose_machine_from_cpuinfo(text, page > 0 ? std::size_t(page) : 4096))
        return *arm;
    AutoChoice c;
    c.base = "skylake";
    c.source = "nearest";
    c.cpu = "no CPUID";
    c.machine = preset(c.base);
    c.reason = "no CPUID (not an x86 processor) and /proc/cpuinfo names no Arm core: skylake as a generic 4-level model";
    return c;
}

}  // namespace physmem::tlbsim
