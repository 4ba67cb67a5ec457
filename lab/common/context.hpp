// lab/common/context.hpp — what an experiment program gets to build, measure and report.
//
// An experiment's main() declares its ProgramSpec and hands a body to lab::run:
//
//   int main(int argc, char** argv) {
//       return lab::run(spec, argc, argv, [](lab::Context& ctx) {
//           auto a = ctx.array<std::uint32_t>("data", n);        // strict backing, recorded
//           ...fill...
//           ctx.measure(n, [&] { return sum(a); });               // the timed region
//           ctx.verify(sum(a) == expected, "sum equals the closed form");
//       });
//   }
//
// run() parses the command line (settings.hpp), answers --probe and --list, maps the
// exceptions the body throws to PROTOCOL.md's exit codes (backing_unavailable -> 3,
// bad_alloc -> 4, invalid_argument -> 2), verifies every buffer's backing from smaps
// after the body, and prints the record. A body that never calls verify() is a bug:
// the record is printed unverified and the program exits 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure.hpp"
#include "port/counters.hpp"
#include "physmem/pool.hpp"
#include "physmem/region.hpp"
#include "settings.hpp"
#include "tracer.hpp"

namespace lab {

using Json = nlohmann::ordered_json;

class Context {
  public:
    Context(const ProgramSpec& spec, const Settings& settings);
    ~Context();

    const Settings& settings() const noexcept { return settings_; }
    const ProgramSpec& spec() const noexcept { return spec_; }

    // A contiguous, zeroed array of n T on the requested backing, strictly (4k refuses
    // THP with MADV_NOHUGEPAGE). Lives as long as the context. Throws
    // physmem::backing_unavailable when that page size cannot be had.
    template <class T>
    std::span<T> array(const std::string& name, std::size_t n, physmem::Backing backing) {
        return {static_cast<T*>(map_array(name, n * sizeof(T), backing)), n};
    }
    template <class T>
    std::span<T> array(const std::string& name, std::size_t n) {
        return array<T>(name, n, settings_.backing);
    }
    // A block pool of settings().block_size blocks on the requested backing, strictly,
    // holding at least `bytes` (rounded up to whole blocks). Lives as long as the
    // context: destroy what uses it before the body returns. prefault: its pages are
    // populated when mapped (PoolOptions::prefault), so no first touch is timed later.
    // tags: the pool keeps block tags (PoolOptions::tags: checked arrays, capabilities).
    physmem::BlockPool& pool(const std::string& name, std::size_t bytes, bool prefault = false, bool tags = false);

    // The main timed region: `pass` does ops_per_pass ops (the unit of the spec) and
    // returns a value to keep live. Sets the record's top-level timing fields.
    Timing measure(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass,
                   std::function<void()> reset = {});
    // An extra timed phase reported under "phases": {name: {...}}.
    Timing measure_phase(const std::string& name, std::uint64_t ops_per_pass,
                         const std::function<std::uint64_t()>& pass, std::function<void()> reset = {});
    // The same with its own repetition counts, for a phase too slow to repeat
    // settings().reps times (e.g. building a structure of hundreds of MiB node by node).
    // pre: reps >= 1.
    Timing measure_phase(const std::string& name, std::uint64_t ops_per_pass,
                         const std::function<std::uint64_t()>& pass, std::function<void()> reset, unsigned reps,
                         unsigned warmup);

    // Timings to be compared with each other, measured in turn a repetition at a time
    // (lab::measure_interleaved: a drift of the machine falls on all of them alike): each
    // job with an empty name sets the record's main timing (at most one), the others a
    // phase of their name. Settings' reps and warmup; no adaptive stop. The record's
    // "interleaved" gets the group (phase names, null for the main timing): the i-th
    // repetitions of its timings ran side by side, so ratios between them pair up.
    struct Named {
        std::string phase;  // "" for the main timing
        Job job;
    };
    std::vector<Timing> measure_interleaved(const std::vector<Named>& jobs);

    // The record's timing when the program's passes are timed by a tool it runs (e.g. fio,
    // whose own start-up would swamp a wall-clock timing): `ns_per_op` one value per
    // repetition, `source` saying who timed them (kept in the record's notes). Counters are
    // recorded as unavailable. pre: !ns_per_op.empty(), ops_per_pass > 0.
    void reported_timing(const std::vector<double>& ns_per_op, std::uint64_t ops_per_pass, unsigned warmup,
                         const std::string& source);

    // One point of a sweep the program reports itself (e.g. under a field of its own):
    // timed like measure() with this run's settings, nothing recorded. Returns the
    // timing summary {"median_ns", "min_ns", "max_ns", "rel_spread"} (ns per op).
    Json sweep_point(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass);

    // The translation model (PROTOCOL.md, "Translation"; translation.hpp): when the command
    // line asked (--simulate, --trace), runs `pass` — one pass of the measured kernel, of
    // ops_per_pass ops, over traced views of this context's buffers (traced.hpp) — until
    // the simulator's warm-up and window are filled (a few passes at most) and writes the
    // record's "translation" field. A no-op otherwise. Never timed: call it after
    // measure(). pre: the buffers the pass touches are this context's (others are tagged
    // 4 KiB and counted as untagged).
    void simulate(std::uint64_t ops_per_pass, const std::function<void(Tracer&)>& pass);

    // Record fields.
    void set_elements(std::uint64_t n) { record_["elements"] = n; }
    void set_tree(std::size_t block_size, unsigned depth, std::size_t leaf_elements);
    void set_param(const std::string& key, Json value) { record_["params"][key] = std::move(value); }
    void set_field(const std::string& key, Json value) { record_[key] = std::move(value); }  // an extra field
    void note(const std::string& text) { record_["notes"].push_back(text); }
    void checksum(std::uint64_t value);
    // ok: the result matched its reference; how: what was compared, in words.
    void verify(bool ok, const std::string& how);

    // Called by run(): backing reports, then the whole record.
    Json finish();
    bool verified() const noexcept { return verified_; }

  private:
    void* map_array(const std::string& name, std::size_t bytes, physmem::Backing backing);
    // Runs lab::measure with this run's min_rep_ms and counters; notes when set-up ended.
    Timing timed(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass, std::function<void()> reset,
                 unsigned reps, unsigned warmup);
    Json timing_json(const Timing& t, unsigned warmup) const;
    // The record's main timing (phase "") or phase `phase`: t's fields.
    void store(const std::string& phase, const Timing& t, unsigned warmup);
    // Set-up ends when the first timing starts (setup_s).
    void mark_setup_end();
    Json backing_json() const;
    // Takes backing_json() now into backing_seen_: per buffer, the report with the most
    // resident bytes so far. store() calls it after every timing, finish() once more, so
    // the record gives the backing while the data was measured: a pool's pages given back
    // when its containers went at the end of the body read as 4 KiB pages, none resident.
    void see_backing();
    // The arrays and pools' regions, each with the page size that backs it (smaps).
    std::vector<TracedBuffer> traced_buffers();

    const ProgramSpec& spec_;
    const Settings& settings_;
    Json record_;
    physmem::EventCounters counters_;
    std::vector<std::pair<std::string, std::unique_ptr<physmem::Region>>> regions_;
    std::vector<std::pair<std::string, std::unique_ptr<physmem::BlockPool>>> pools_;
    Json backing_seen_ = Json::array();
    double created_s_ = 0;
    double setup_s_ = -1;
    bool verify_called_ = false;
    bool verified_ = false;
};

// Parses argv, runs body on a fresh Context, prints the record; returns the exit code.
int run(const ProgramSpec& spec, int argc, char** argv, const std::function<void(Context&)>& body);

}  // namespace lab
