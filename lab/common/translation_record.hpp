// lab/common/translation_record.hpp — the record's "translation" field, piece by piece
// (shape: lab/schema/record.schema.json, $defs/translation; PROTOCOL.md "Translation").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "physmem/tlbsim/simulator.hpp"
#include "tracer.hpp"
#include "translation.hpp"

namespace lab::translation {

// Which references the counts cover.
struct Window {
    std::uint64_t warmup_refs = 0;   // W: simulated, not counted
    std::uint64_t refs = 0;          // N: counted
    std::uint64_t refs_in_pass = 0;  // R: every reference of one pass
    bool capped = false;             // the pass went on past the window (counted only)
    unsigned passes_traced = 0;
    std::uint64_t untagged_refs = 0;  // of W + N, in no known buffer (tagged 4 KiB)
};

// {"preset", ["reason"], "chosen", ["source", "base"] (auto), and with a machine "description", "translate",
// "levels", "caches_modelled"}.
Json machine_json(const Machine& m);
Json window_json(const Window& w);
// [{"name", "bytes", "page_size"}] of the buffers references were tagged from.
Json buffers_json(const std::vector<TracedBuffer>& buffers);
// Adds "counts", "per_op" (counts / ops_in_window; ops_in_window <= 0: zeros;
// translation_memory_refs null unless `caches` were modelled) and "halves" (null without a
// midpoint snapshot) to j.
void add_counts(Json& j, const physmem::tlbsim::Stats& total, const std::optional<physmem::tlbsim::Stats>& half,
                double ops_in_window, bool caches);

}  // namespace lab::translation
