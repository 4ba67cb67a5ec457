// tools/tlbsim/whatif.cpp — the page-size sweep (whatif.hpp).
#include "whatif.hpp"

#include <algorithm>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"

namespace physmem::tlbsim::tool {

namespace {

using Json = nlohmann::ordered_json;

double per(std::uint64_t n, std::uint64_t refs) { return refs ? double(n) / double(refs) : 0.0; }

// The data's footprint: [lowest line, highest line + 64).
std::pair<std::uint64_t, std::uint64_t> footprint(std::span<const Entry> data) {
    if (data.empty()) return {0, 0};
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (Entry e : data) lo = std::min(lo, e.addr()), hi = std::max(hi, e.addr());
    return {lo, hi - lo + 64};
}

Json paging(const MachineConfig& m, std::uint64_t bytes, std::span<const Entry> data, std::uint64_t warmup) {
    Simulator sim(with_page_size(m, bytes));
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (i == warmup) sim.reset_stats();
        sim.access(data[i]);
    }
    if (data.size() <= warmup) sim.reset_stats();
    const Stats& s = sim.stats();
    const unsigned shift = sim.config().what_if_shift;
    return {{"walk_levels", walk_levels(shift, m.levels)},
            {"walks", per(s.walks, s.accesses)},
            {"walk_refs", per(s.walk_refs, s.accesses)},
            {"memory_refs", m.model_caches ? Json(per(s.walk_ref_memory, s.accesses)) : Json(nullptr)}};
}

Json tree(const MachineConfig& m, std::uint64_t bytes, std::span<const Entry> data, std::uint64_t warmup) {
    const auto [lo, span] = footprint(data);
    const unsigned shift = unsigned(__builtin_ctzll(bytes));
    BlockTree t(lo, span, shift);
    Simulator sim(without_translation(m));
    std::uint64_t walks0 = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (i == warmup) sim.reset_stats(), walks0 = t.walks();
        t.access(sim, data[i].addr(), data[i].size());
    }
    if (data.size() <= warmup) sim.reset_stats(), walks0 = t.walks();
    const Stats& s = sim.stats();
    const std::uint64_t refs = s.accesses - s.sw_walk_loads;  // data references counted
    return {{"inner_levels", t.inner_levels()},
            {"walks", per(t.walks() - walks0, refs)},
            {"walk_refs", per(s.sw_walk_loads, refs)},
            {"memory_refs", m.model_caches ? Json(per(s.sw_walk_memory, refs)) : Json(nullptr)}};
}

}  // namespace

Json what_if_sweep(const MachineConfig& m, std::span<const Entry> data, std::uint64_t warmup, unsigned min_shift,
                   unsigned max_shift) {
    Json sizes = Json::array();
    for (unsigned b = min_shift; b <= max_shift; ++b) {
        const std::uint64_t bytes = std::uint64_t{1} << b;
        sizes.push_back({{"page_size", size_name(bytes)},
                         {"bytes", bytes},
                         {"paging", paging(m, bytes, data, warmup)},
                         {"tree", tree(m, bytes, data, warmup)}});
    }
    return {{"machine", m.name},
            {"caches_modelled", m.model_caches},
            {"levels", m.levels},
            {"data_refs", data.size() - std::min<std::size_t>(warmup, data.size())},
            {"warmup_refs", std::min<std::size_t>(warmup, data.size())},
            {"footprint_bytes", footprint(data).second},
            {"sizes", sizes}};
}

}  // namespace physmem::tlbsim::tool
