// lab/common/translation.hpp — the translation model of one run: the simulated machine
// --simulate names, the traced passes, and the record's "translation" field
// (PROTOCOL.md, "Translation"; lab/schema/record.schema.json, $defs/translation).
//
// After the measurement, the program's kernel runs again on traced views (traced.hpp);
// its references, tagged with their buffers' page sizes, go through a
// physmem::tlbsim::Simulator: W warm-up references, then a window of N counted ones
// (SimSettings: N = --sim-refs, W = N/4). A pass longer than W + N is only counted past
// the window, and per-op figures scale the window's counts by the ops it covered:
//   ops_in_window = ops_per_pass * N / refs_in_pass.
// A pass shorter than W + N is repeated (at most kMaxPasses passes); when even those are
// fewer references than W + N, the first pass warms up and the rest are the window.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "physmem/tlbsim/config.hpp"
#include "physmem/tlbsim/detect.hpp"
#include "settings.hpp"
#include "tracer.hpp"

namespace lab::translation {

using Json = nlohmann::ordered_json;

inline constexpr unsigned kMaxPasses = 8;

// The machine asked for: its configuration (levels and caches applied), or none and why.
struct Machine {
    std::optional<physmem::tlbsim::MachineConfig> config;
    std::string preset;  // the preset's name; "" when none
    std::string chosen;  // "auto" (this CPU's), "asked" (named) or "off"
    std::string reason;  // why there is no configuration; with auto, why this one
    std::string source;  // auto: "cpuid", "table" or "nearest" (physmem/tlbsim/detect.hpp)
    std::string base;    // auto: the preset the machine is built on
};
Machine resolve(const SimSettings& s);

// auto's machine for a CPU (physmem::tlbsim::choose_machine): always a configuration.
Machine machine_for_choice(const physmem::tlbsim::AutoChoice& c);

// Which references of `passes` passes of refs_in_pass references each are simulated.
struct Plan {
    TraceWindow window;
    unsigned passes = 1;
    bool capped = false;  // references after the window were only counted
};
// pre: refs_in_pass > 0, cap > 0.
Plan plan(std::uint64_t refs_in_pass, std::uint64_t warmup, std::uint64_t cap);

// Runs the traced passes as `s` asks and returns the record field; nullopt when nothing
// was asked (--simulate off, no --trace). pass: one pass of the kernel on the tracer
// (ops_per_pass ops). Throws std::system_error when the trace file cannot be written.
std::optional<Json> run(const SimSettings& s, const std::vector<TracedBuffer>& buffers, std::uint64_t ops_per_pass,
                        const std::function<void(Tracer&)>& pass);

}  // namespace lab::translation
