// src/tlbsim/json.cpp — JSON for configurations and counts.
#include "physmem/tlbsim/json.hpp"

namespace physmem::tlbsim {

namespace {

using Json = nlohmann::ordered_json;

Json sizes_json(std::uint8_t mask) {
    Json j = Json::array();
    for (unsigned s = 0; s < kPageSizes; ++s)
        if (mask & size_bit(PageSize(s))) j.push_back(to_string(PageSize(s)));
    return j;
}

Json array_json(const ArrayConfig& a) {
    return {{"entries", a.entries}, {"ways", a.ways ? a.ways : a.entries}, {"fully_associative", a.ways == 0 || a.ways == a.entries},
            {"sizes", sizes_json(a.sizes)}};
}

Json level_json(const TlbLevelConfig& l) {
    Json j = Json::array();
    for (const ArrayConfig& a : l.arrays) j.push_back(array_json(a));
    return j;
}

Json by_size(const std::array<std::uint64_t, kPageSizes>& a) { return {{"4k", a[0]}, {"2m", a[1]}, {"1g", a[2]}}; }

}  // namespace

Json machine_json(const MachineConfig& m) {
    Json pwc;
    if (m.pwc.unified) {
        pwc["unified"] = array_json(*m.pwc.unified);
        Json levels = Json::array();
        for (unsigned lv = 2; lv <= 5; ++lv)
            if ((m.pwc.unified_levels >> lv) & 1) levels.push_back(lv);
        pwc["unified_levels"] = levels;
    }
    if (m.pwc.pde_in_l2_tlb) pwc["pde_in_l2_tlb"] = true;
    for (unsigned lv = 2; lv <= 5; ++lv)
        if (m.pwc.split[lv].entries) pwc["level" + std::to_string(lv)] = array_json(m.pwc.split[lv]);
    Json caches = Json::array();
    for (const CacheConfig& c : m.caches) caches.push_back({{"bytes", c.bytes}, {"ways", c.ways}});
    return {{"name", m.name},          {"description", m.description}, {"translate", m.translate},
            {"levels", m.levels},      {"granule", std::uint64_t{1} << m.granule_shift}, {"l1", level_json(m.l1)},      {"l2", level_json(m.l2)},
            {"pwc", pwc.is_null() ? Json::object() : pwc},               {"caches", caches},
            {"caches_modelled", m.model_caches}, {"sources", m.sources},
            {"what_if_page_size", m.what_if_shift ? Json(std::uint64_t{1} << m.what_if_shift) : Json(nullptr)}};
}

Json stats_json(const Stats& s) {
    return {{"accesses", s.accesses},
            {"sw_walk_loads", s.sw_walk_loads},
            {"l1_misses", s.l1_misses},
            {"l2_hits", s.l2_hits},
            {"walks", s.walks},
            {"walk_refs", s.walk_refs},
            {"walk_refs_by_level", s.walk_refs_by_level},
            {"pwc_hits_by_level", s.pwc_hits_by_level},
            {"accesses_by_size", by_size(s.accesses_by_size)},
            {"l1_misses_by_size", by_size(s.l1_misses_by_size)},
            {"walks_by_size", by_size(s.walks_by_size)},
            {"walk_ref_cache_hits", s.walk_ref_cache_hits},
            {"walk_ref_memory", s.walk_ref_memory},
            {"data_cache_hits", s.data_cache_hits},
            {"data_memory", s.data_memory},
            {"sw_walk_cache_hits", s.sw_walk_cache_hits},
            {"sw_walk_memory", s.sw_walk_memory}};
}

Json per_ref_json(const Stats& s) {
    double n = s.accesses ? double(s.accesses) : 1.0;
    return {{"l1_misses", double(s.l1_misses) / n},
            {"walks", double(s.walks) / n},
            {"walk_refs", double(s.walk_refs) / n},
            {"sw_walk_loads", double(s.sw_walk_loads) / n},
            {"translation_refs", double(s.walk_refs + s.sw_walk_loads) / n}};
}

}  // namespace physmem::tlbsim
