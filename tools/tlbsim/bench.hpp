// tools/tlbsim/bench.hpp — the simulator's throughput on synthetic traces (a benchmark,
// not a test: timings vary with the machine; the numbers go in the lab's report).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "physmem/tlbsim/config.hpp"

namespace physmem::tlbsim::tool {

// Each pattern: `refs` references built in memory first (untimed), then simulated on a
// fresh simulator, timed; the best of `reps` runs. Returns {"patterns": [{"pattern", "refs",
// "seconds", "refs_per_second", "cpu_seconds", "refs_per_cpu_second"}], "min_refs_per_second",
// "min_refs_per_cpu_second"}: wall time, and the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
// which leaves out the time other processes held the CPU on a shared machine.
nlohmann::ordered_json bench(const MachineConfig& m, std::uint64_t refs, unsigned reps);

// The same for several machines over the same traces, their runs interleaved (round r of
// every machine, then round r + 1), so a slow spell on a shared machine costs each machine
// one run instead of all of one machine's runs. One result per machine, in order.
std::vector<nlohmann::ordered_json> bench(const std::vector<MachineConfig>& machines, std::uint64_t refs, unsigned reps);

}  // namespace physmem::tlbsim::tool
