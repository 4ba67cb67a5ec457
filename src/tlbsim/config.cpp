// src/tlbsim/config.cpp — page sizes by name, configuration checks and variants of a preset.
#include "physmem/tlbsim/config.hpp"

#include <stdexcept>

namespace physmem::tlbsim {

std::string_view to_string(PageSize s) noexcept {
    switch (s) {
        case PageSize::k4K: return "4k";
        case PageSize::k2M: return "2m";
        case PageSize::k1G: return "1g";
    }
    return "?";
}

std::optional<PageSize> page_size_of_bytes(std::uint64_t bytes) noexcept {
    for (unsigned i = 0; i < kPageSizes; ++i)
        if (bytes == std::uint64_t{1} << page_shift(PageSize(i))) return PageSize(i);
    return std::nullopt;
}

unsigned address_bits(const MachineConfig& m) noexcept {
    const unsigned usual = granule_levels(m.granule_shift);
    return 48 + (m.levels > usual ? level_bits(m.granule_shift) * (m.levels - usual) : 0);
}

// The largest leaf level: 3 (1 GiB blocks) with the 4 KiB granule, else 2 (see granule_shift).
namespace {
unsigned largest_leaf(const MachineConfig& m) noexcept { return m.granule_shift == 12 ? 3 : 2; }
}  // namespace

unsigned leaf_level(const MachineConfig& m, PageSize s) noexcept {
    const unsigned wanted = leaf_level(s);
    return wanted < largest_leaf(m) ? wanted : largest_leaf(m);
}

unsigned page_shift(const MachineConfig& m, PageSize s) noexcept {
    return m.granule_shift + level_bits(m.granule_shift) * (leaf_level(m, s) - 1);
}

PageSize held_as(const MachineConfig& m, PageSize s) noexcept { return PageSize(leaf_level(m, s) - 1); }

namespace {

void check_array(const ArrayConfig& a, const std::string& where) {
    if (a.entries == 0) throw std::invalid_argument(where + ": 0 entries");
    if (a.ways != 0 && a.entries % a.ways != 0)
        throw std::invalid_argument(where + ": " + std::to_string(a.entries) + " entries are not a multiple of " +
                                    std::to_string(a.ways) + " ways");
    if (a.ways > 0xFFFF || (a.ways == 0 && a.entries > 0xFFFF)) throw std::invalid_argument(where + ": too many ways");
}

void check_level(const TlbLevelConfig& l, const std::string& name) {
    std::uint8_t seen = 0;
    for (std::size_t i = 0; i < l.arrays.size(); ++i) {
        const ArrayConfig& a = l.arrays[i];
        std::string where = name + " array " + std::to_string(i);
        check_array(a, where);
        if (a.sizes == 0 || (a.sizes & ~7u)) throw std::invalid_argument(where + ": no valid page sizes");
        if (a.sizes & seen) throw std::invalid_argument(where + ": a page size held by two arrays of one level");
        seen |= a.sizes;
    }
}

}  // namespace

void validate(const MachineConfig& m) {
    if (m.granule_shift != 12 && m.granule_shift != 14 && m.granule_shift != 16)
        throw std::invalid_argument("granule_shift " + std::to_string(m.granule_shift) +
                                    ": 12, 14 or 16 (4, 16 or 64 KiB)");
    if (m.granule_shift == 12 ? (m.levels != 4 && m.levels != 5) : m.levels != granule_levels(m.granule_shift))
        throw std::invalid_argument("levels must be 4 or 5 with the 4 KiB granule, " +
                                    std::to_string(granule_levels(m.granule_shift)) + " with the " +
                                    std::to_string(1u << (m.granule_shift - 10)) + " KiB one");
    check_level(m.l1, "L1 TLB");
    check_level(m.l2, "L2 TLB");
    for (unsigned lv = 2; lv <= 5; ++lv)
        if (m.pwc.split[lv].entries) check_array(m.pwc.split[lv], "PWC level " + std::to_string(lv));
    if (m.pwc.unified) check_array(*m.pwc.unified, "unified PWC");
    bool l2_holds_4k = false;
    for (const ArrayConfig& a : m.l2.arrays) l2_holds_4k = l2_holds_4k || (a.sizes & size_bit(PageSize::k4K));
    if (m.pwc.pde_in_l2_tlb && !l2_holds_4k)
        throw std::invalid_argument("pde_in_l2_tlb: no L2 TLB array holds 4 KiB pages");
    for (std::size_t i = 0; i < m.caches.size(); ++i) {
        const CacheConfig& c = m.caches[i];
        if (c.bytes % 64 != 0 || c.bytes == 0) throw std::invalid_argument("cache " + std::to_string(i) + ": size");
        check_array({unsigned(c.bytes / 64), c.ways, 1}, "cache " + std::to_string(i));
    }
    if (m.caches.size() > 4) throw std::invalid_argument("at most 4 cache levels");
    if (m.what_if_shift != 0 && (m.what_if_shift < 12 || m.what_if_shift > 30))
        throw std::invalid_argument("what_if_shift " + std::to_string(m.what_if_shift) +
                                    ": a page size of 2^12 (4 KiB) to 2^30 (1 GiB) bytes, or 0");
}

// Split page-walk caches get a level-5 array shaped like the level-4 one (an assumption:
// no part documents its PML5E cache); a unified cache simply holds level-5 entries too.
MachineConfig with_five_levels(MachineConfig m) {
    if (m.granule_shift != 12)
        throw std::invalid_argument("5-level paging (LA57) needs the 4 KiB granule; " + m.name + " has " +
                                    std::to_string(1u << (m.granule_shift - 10)) + " KiB");
    if (m.levels == 5) return m;
    m.levels = 5;
    if (m.pwc.split[4].entries && !m.pwc.split[5].entries) m.pwc.split[5] = m.pwc.split[4];
    m.name += "+la57";
    return m;
}

MachineConfig with_granule(MachineConfig m, unsigned shift) {
    if (shift != 12 && shift != 14 && shift != 16)
        throw std::invalid_argument("granule 2^" + std::to_string(shift) + ": 4, 16 or 64 KiB (shift 12, 14, 16)");
    if (m.levels == 5) throw std::invalid_argument("with_granule: " + m.name + " has 5 levels (LA57, 4 KiB only)");
    m.granule_shift = shift;
    m.levels = granule_levels(shift);
    if (shift == 12) return m;
    const std::string kib = std::to_string(1u << (shift - 10));
    m.name += "-" + kib + "k";
    m.description += "; " + kib + " KiB granule: " + std::to_string(m.levels) + " levels, " +
                     std::to_string(1u << (page_shift(m, PageSize::k2M) - 20)) + " MiB blocks";
    return m;
}

MachineConfig with_caches(MachineConfig m) {
    m.model_caches = true;
    return m;
}

MachineConfig without_translation(MachineConfig m) {
    m.translate = false;
    return m;
}

}  // namespace physmem::tlbsim
