// physmem/tlbsim/config.hpp — what a simulated machine's translation hardware looks like.
//
// A MachineConfig describes, for one CPU core: its L1 and L2 (second-level, "STLB") data
// TLBs as one or more set-associative arrays each holding some page sizes (4 KiB, 2 MiB,
// 1 GiB); its page-walk caches (split per level as Intel's paging-structure caches, or one
// unified array as AMD's page walk cache); the translation granule and the number of
// page-table levels (x86-64: 4 KiB, 4 levels, or 5 with LA57; ARMv8: 4, 16 or 64 KiB
// granules, see granule_shift); and optionally data caches a walk's page-table reads can hit
// in. presets.cpp holds the CPUs the lab meets, each with the documents its numbers come from.
//
// Replacement in every array is true LRU (stated, not claimed to be the hardware's: real
// parts use pseudo-LRU variants; analytic checks in the tests are for LRU).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace physmem::tlbsim {

// A page size the trace can tag an access with. Values are stable (trace files use them).
// On a machine with another translation granule (MachineConfig::granule_shift) a tag names
// the kind of page rather than its bytes: k4K the base page, k2M the level-2 block (the
// transparent huge page), k1G the largest block; page_shift(m, s) gives the bytes.
enum class PageSize : std::uint8_t { k4K = 0, k2M = 1, k1G = 2 };
inline constexpr unsigned kPageSizes = 3;
constexpr unsigned page_shift(PageSize s) noexcept { return 12 + 9 * static_cast<unsigned>(s); }
// The page-table level whose entry maps a page of this size: 1 (PTE), 2 (PDE), 3 (PDPTE).
constexpr unsigned leaf_level(PageSize s) noexcept { return 1 + static_cast<unsigned>(s); }
constexpr std::uint8_t size_bit(PageSize s) noexcept { return std::uint8_t(1u << static_cast<unsigned>(s)); }
// "4k", "2m", "1g".
std::string_view to_string(PageSize s) noexcept;
// From 4096 / 2097152 / 1073741824 bytes; nullopt for any other size.
std::optional<PageSize> page_size_of_bytes(std::uint64_t bytes) noexcept;

// One set-associative array. entries: any count >= 1; ways: 0 means fully associative
// (ways = entries); otherwise entries must be a multiple of ways (sets = entries / ways,
// any count, not only powers of two). sizes: bitmask of size_bit()s this array holds.
struct ArrayConfig {
    unsigned entries = 0;
    unsigned ways = 0;
    std::uint8_t sizes = 0;
};

// One TLB level: its arrays. A page size held by no array of the level always misses there
// (e.g. a level without 1 GiB entries). pre: no size in two arrays of one level.
struct TlbLevelConfig {
    std::vector<ArrayConfig> arrays;
};

// Page-walk caches: entries of the non-leaf levels (level L >= 2 entries point at a table of
// level L-1) kept so a walk can start below the root. split[L] for L = 2..5 is the array
// caching level-L entries (entries 0 = none), keyed by the virtual address bits above that
// entry's span; with `unified` set, one array holds entries of every level instead.
// AMD's parts keep PML4Es and PDPEs in a small page directory cache and PDEs in the L2
// TLB itself, sharing its capacity with translations: `unified_levels` says which levels the
// unified array holds (bit L for level L), and `pde_in_l2_tlb` sends level-2 entries to the
// L2 TLB array that holds 4 KiB pages instead.
struct PwcConfig {
    std::array<ArrayConfig, 6> split{};  // index = level; [0] and [1] unused
    std::optional<ArrayConfig> unified;
    std::uint8_t unified_levels = 0b111100;  // levels 2..5
    bool pde_in_l2_tlb = false;
};

// A data cache level for the walk's (and the data's) memory references: bytes, ways, 64-byte
// lines, LRU. Levels are looked up in order; a miss fills every level looked up.
struct CacheConfig {
    std::uint64_t bytes = 0;
    unsigned ways = 0;
};

struct MachineConfig {
    std::string name;         // e.g. "skylake"
    std::string description;  // e.g. "Intel Skylake (client and -SP server cores)"
    std::vector<std::string> sources;  // documents the numbers come from
    TlbLevelConfig l1;
    TlbLevelConfig l2;
    PwcConfig pwc;
    // Page-table levels: with the 4 KiB granule 4 (48-bit virtual addresses), or 5 (x86 LA57:
    // 57 bits); with the 16 KiB and 64 KiB granules granule_levels() (4 and 3: 48 bits).
    unsigned levels = 4;
    // Translation granule, log2 bytes: 12 (4 KiB: x86-64, and ARMv8's 4K granule), 14 (16 KiB)
    // or 16 (64 KiB), ARMv8's three (Arm ARM D8.2, "Translation table walk"). A page table is
    // one granule of 8-byte entries, so each level resolves granule_shift - 3 bits; leaf
    // entries map the granule (level 1) or a block (level 2: 2 MiB, 32 MiB, 512 MiB; level 3
    // with the 4 KiB granule only: 1 GiB — 16 KiB and 64 KiB level-3 blocks need 52-bit
    // addresses, FEAT_LPA2 / FEAT_LPA, not modelled).
    unsigned granule_shift = 12;
    // false: the seeds' physically addressed machine — no TLB, no walks; only the data
    // references (and the software walk's loads) remain, and the data caches if any.
    bool translate = true;
    // The part's data caches (L1d, then L2), per core. Modelled only when model_caches is
    // set; otherwise every walk reference counts as a memory reference.
    std::vector<CacheConfig> caches;
    bool model_caches = false;
    // What-if page size (what_if.hpp, with_page_size): 0 = the hardware's page sizes, each
    // reference translated on the page size its trace entry carries. Otherwise log2 of a
    // hypothetical page size B, 12..30: every reference is translated as on a page of B,
    // whatever size it is tagged with, by the arrays that hold 4 KiB pages (the rest are
    // unused) and a radix walk whose depth follows from B and the address width.
    unsigned what_if_shift = 0;
};

// Index bits one page-table level resolves: 9, 11, 13 for the 4, 16, 64 KiB granules.
constexpr unsigned level_bits(unsigned granule_shift) noexcept { return granule_shift - 3; }
// Levels a walk over 48-bit virtual addresses needs: 4 (4 KiB), 4 (16 KiB), 3 (64 KiB).
constexpr unsigned granule_levels(unsigned granule_shift) noexcept {
    return (48 - granule_shift + level_bits(granule_shift) - 1) / level_bits(granule_shift);
}
// The virtual address width m's walk covers: 48 bits, plus one level's bits for a level
// above the granule's usual depth (LA57: 57 bits with 4 KiB).
unsigned address_bits(const MachineConfig& m) noexcept;
// How m translates a reference its trace tags with s (contract at PageSize): log2 of the
// page's bytes, the level of its leaf entry, and the size whose TLB entries hold it (k1G on
// a granule without level-3 blocks is held as its level-2 block, k2M).
unsigned page_shift(const MachineConfig& m, PageSize s) noexcept;
unsigned leaf_level(const MachineConfig& m, PageSize s) noexcept;
PageSize held_as(const MachineConfig& m, PageSize s) noexcept;

// Throws std::invalid_argument (naming what is wrong) for an inconsistent configuration.
void validate(const MachineConfig& m);

// The presets by name ("skylake", "skylake-sp", "zen1", ..., "none"); throws
// std::invalid_argument listing the names for an unknown one.
const MachineConfig& preset(std::string_view name);
std::vector<std::string> preset_names();

// The preset for a CPU as /proc/cpuinfo names it (vendor_id, cpu family, model), or nullopt
// when none matches.
std::optional<std::string> preset_for_cpu(std::string_view vendor, unsigned family, unsigned model);

// This machine's CPU as the CPUID instruction gives it (vendor string, family and model with
// their extended fields, as /proc/cpuinfo shows them); nullopt off x86.
struct CpuIdentity {
    std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
    unsigned family = 0;
    unsigned model = 0;
};
std::optional<CpuIdentity> this_cpu();
// preset_for_cpu() of this_cpu(); nullopt when either is.
std::optional<std::string> preset_for_this_cpu();

// A copy of `m` with 5-level paging (LA57): one more level above the root (unchanged when
// m has 5 levels already). Throws std::invalid_argument for a granule other than 4 KiB
// (ARMv8's 52-bit addresses keep 4 levels with 16 KiB and 3 with 64 KiB).
MachineConfig with_five_levels(MachineConfig m);
// A copy of `m` with the translation granule of 2^shift bytes (12, 14 or 16) and the levels
// that granule walks for 48-bit addresses; named "<name>-16k" / "<name>-64k" (unchanged name
// for 4 KiB). TLB arrays and walk caches keep their geometry (the Neoverse TLBs hold every
// granule's pages). Throws std::invalid_argument for another shift or a 5-level m.
MachineConfig with_granule(MachineConfig m, unsigned shift);
// A copy of `m` that models its data caches (model_caches = true).
MachineConfig with_caches(MachineConfig m);
// A copy of `m` without translation (translate = false).
MachineConfig without_translation(MachineConfig m);

}  // namespace physmem::tlbsim
