// tools/tlbsim/validate.hpp — the analytic cases physmem-tlbsim checks every preset against.
#pragma once

#include <nlohmann/json.hpp>

namespace physmem::tlbsim::tool {

// Runs every case on every preset (but "none"); returns {"cases": [...], "ok": bool}, each
// case {"name", "preset", "quantity", "expected", "got", "tolerance" (relative; 0 exact), "ok"}.
nlohmann::ordered_json validate_presets();

}  // namespace physmem::tlbsim::tool
