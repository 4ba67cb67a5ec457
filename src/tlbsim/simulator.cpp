// src/tlbsim/simulator.cpp — the Simulator: building its state (simulator_impl.hpp), running
// references through it, and its counts.
#include "physmem/tlbsim/simulator.hpp"

#include "physmem/tlbsim/what_if.hpp"
#include "tlbsim/simulator_impl.hpp"

namespace physmem::tlbsim {

Geometry geometry(const MachineConfig& m) {
    Geometry g;
    g.bits = level_bits(m.granule_shift);
    g.base_shift = m.granule_shift;
    for (unsigned s = 0; s < kPageSizes; ++s) {
        const PageSize p = PageSize(s);
        if (m.what_if_shift == 0) {
            g.shift[s] = page_shift(m, p), g.leaf[s] = leaf_level(m, p), g.held_as[s] = held_as(m, p);
        } else {
            g.shift[s] = m.what_if_shift;
            g.leaf[s] = m.levels + 1 - walk_levels(m, m.what_if_shift);
            g.held_as[s] = PageSize::k4K;
        }
    }
    if (m.what_if_shift) g.base_shift = m.what_if_shift - g.bits * (g.leaf[0] - 1);
    return g;
}


Simulator::Simulator(const MachineConfig& m, Engine engine) {
    validate(m);
    impl_ = std::make_unique<Impl>(m);
    if (engine == Engine::fastest) impl_->choose_path();
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

const MachineConfig& Simulator::config() const noexcept { return impl_->cfg; }
const std::string& Simulator::engine() const noexcept { return impl_->engine; }
void Simulator::access(std::uint64_t addr, PageSize size, Ref kind) noexcept { impl_->access(addr, size, kind); }
void Simulator::run(std::span<const Entry> trace) noexcept {
    Impl& im = *impl_;
    if (im.cfg.translate && im.caches.empty()) {  // the common case: no data caches to run
        (im.*im.run_translated)(trace);
        return;
    }
    for (Entry e : trace) im.access(e.addr(), e.size(), e.kind());
}
const Stats& Simulator::stats() const noexcept {
    impl_->total();
    return impl_->st;
}
void Simulator::reset_stats() noexcept {
    impl_->st = Stats{};
    impl_->outcome = {};
}
void Simulator::flush() noexcept { impl_->flush(); }

Stats& Stats::operator+=(const Stats& o) noexcept {
    auto add = [](auto& a, const auto& b) {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    };
    accesses += o.accesses;
    sw_walk_loads += o.sw_walk_loads;
    add(accesses_by_size, o.accesses_by_size);
    add(l1_misses_by_size, o.l1_misses_by_size);
    l1_misses += o.l1_misses;
    l2_hits += o.l2_hits;
    walks += o.walks;
    add(walks_by_size, o.walks_by_size);
    walk_refs += o.walk_refs;
    add(walk_refs_by_level, o.walk_refs_by_level);
    add(pwc_hits_by_level, o.pwc_hits_by_level);
    add(walk_ref_cache_hits, o.walk_ref_cache_hits);
    walk_ref_memory += o.walk_ref_memory;
    add(data_cache_hits, o.data_cache_hits);
    data_memory += o.data_memory;
    add(sw_walk_cache_hits, o.sw_walk_cache_hits);
    sw_walk_memory += o.sw_walk_memory;
    return *this;
}

}  // namespace physmem::tlbsim
