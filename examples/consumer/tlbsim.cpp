// examples/consumer/tlbsim.cpp — uses an installed physmem::tlbsim as the README shows it:
// a preset, references on 2 MiB pages and a software walk's load, and auto's machine for
// this CPU. Exits 0 when the counts are what the model must give.
#include <physmem/tlbsim/detect.hpp>
#include <physmem/tlbsim/simulator.hpp>

#include <cstdint>
#include <cstdio>

int main() {
    using namespace physmem::tlbsim;
    Simulator sim(preset("zen5"));
    const std::uint64_t base = std::uint64_t{1} << 40;
    for (std::uint64_t i = 0; i < 4; ++i) sim.access(base + i * 64, PageSize::k2M);  // one page
    sim.access(base + (std::uint64_t{1} << 30), PageSize::k2M, Ref::sw_walk);           // another
    bool counts_ok = sim.stats().accesses == 5 && sim.stats().walks == 2 && sim.stats().sw_walk_loads == 1;
    AutoChoice mine = choose_machine_for_this_cpu();
    Simulator here(mine.machine);
    here.access(base, PageSize::k4K);
    bool auto_ok = here.stats().walks == 1 && !mine.reason.empty();
    std::printf("physmem::tlbsim consumer: %s (auto: %s, %s)\n", counts_ok && auto_ok ? "ok" : "FAILED",
                mine.machine.name.c_str(), mine.source.c_str());
    return counts_ok && auto_ok ? 0 : 1;
}
