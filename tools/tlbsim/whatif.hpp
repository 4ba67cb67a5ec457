// tools/tlbsim/whatif.hpp — `physmem-tlbsim whatif`: one trace replayed on hypothetical
// hardware for every power-of-two page size B from 4 KiB to 1 GiB, "paging with pages of B"
// beside "a tree over blocks of B" (physmem/tlbsim/what_if.hpp states both models).
#pragma once

#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "physmem/tlbsim/trace.hpp"

namespace physmem::tlbsim::tool {

// data: the trace's data references (its software-walk entries left out: the tree's walk
// is the model's); the first `warmup` are simulated, not counted. m: the preset (levels
// and caches applied). For each B (shifts min_shift..max_shift):
//   paging: with_page_size(m, B): walks, walk refs and (caches modelled) those reaching memory;
//   tree:   BlockTree(B) over the data's footprint [lowest, highest line] on
//           without_translation(m): walks (blocks entered), slot loads, loads reaching memory;
// each per counted data reference. Returns {"machine", "caches_modelled", "data_refs",
// "warmup_refs", "footprint_bytes", "sizes": [{"page_size", "bytes", "paging": {...},
// "tree": {...}}]}; memory figures are null without a cache model.
nlohmann::ordered_json what_if_sweep(const MachineConfig& m, std::span<const Entry> data, std::uint64_t warmup,
                                     unsigned min_shift = 12, unsigned max_shift = 30);

}  // namespace physmem::tlbsim::tool
