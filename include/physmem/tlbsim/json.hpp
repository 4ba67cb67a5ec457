// physmem/tlbsim/json.hpp — a machine configuration and simulator counts as JSON (library
// physmem_tlbsim_json: physmem-tlbsim and the lab's records print the same fields).
// In-tree only: built where nlohmann_json is (tools/, lab/), not installed with
// physmem::tlbsim, whose installed package needs nothing but the C++ library.
#pragma once

#include <nlohmann/json.hpp>

#include "physmem/tlbsim/simulator.hpp"

namespace physmem::tlbsim {

nlohmann::ordered_json machine_json(const MachineConfig& m);
// Every Stats field by name; per-size arrays as {"4k", "2m", "1g"}.
nlohmann::ordered_json stats_json(const Stats& s);
// Rates per reference: l1_misses, walks, walk_refs, sw_walk_loads, translation_refs
// (walk_refs + sw_walk_loads). Zeros for an empty trace.
nlohmann::ordered_json per_ref_json(const Stats& s);

}  // namespace physmem::tlbsim

