// lab/common/translation.cpp — the simulated machine, the window plan, the traced passes.
#include "translation.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "physmem/tlbsim/simulator.hpp"
#include "port/os.hpp"
#include "translation_record.hpp"

namespace lab::translation {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The asked preset with --sim-levels and --sim-caches applied.
physmem::tlbsim::MachineConfig configure(const physmem::tlbsim::MachineConfig& base, const SimSettings& s) {
    physmem::tlbsim::MachineConfig m = base;
    if (s.levels == 5) m = physmem::tlbsim::with_five_levels(std::move(m));
    if (s.caches) m = physmem::tlbsim::with_caches(std::move(m));
    return m;
}

// One attempt: `passes` passes through a fresh simulator (and trace file) with `window`.
struct Attempt {
    std::uint64_t seen = 0;  // references recorded, all passes
    std::uint64_t untagged = 0;
    std::optional<physmem::tlbsim::Stats> half, total;
};

Attempt attempt(const Machine& m, const SimSettings& s, const std::vector<TracedBuffer>& buffers, TraceWindow window,
                unsigned passes, const std::function<void(Tracer&)>& pass, std::uint64_t* written) {
    std::unique_ptr<physmem::tlbsim::Simulator> sim;
    if (m.config) sim = std::make_unique<physmem::tlbsim::Simulator>(*m.config);
    std::unique_ptr<physmem::tlbsim::TraceWriter> writer;
    if (!s.trace.empty()) writer = std::make_unique<physmem::tlbsim::TraceWriter>(s.trace);
    Tracer tr(buffers, window, sim.get(), writer.get());
    for (unsigned p = 0; p < passes; ++p) pass(tr);
    if (writer) writer->close(), *written = writer->written();
    Attempt a{tr.seen(), tr.untagged(), tr.first_half(), {}};
    if (sim) a.total = sim->stats();
    return a;
}

}  // namespace

Machine machine_for_cpu(std::string_view vendor, unsigned family, unsigned model) {
    auto name = physmem::tlbsim::preset_for_cpu(vendor, family, model);
    if (!name)
        return {{}, "", "auto",
                "no preset matches " + std::string(vendor) + " " + std::to_string(family) + " " + std::to_string(model)};
    return {physmem::tlbsim::preset(*name), *name, "auto", ""};
}

Machine resolve(const SimSettings& s) {
    Machine m;
    if (s.simulate == "off") {
        m = {{}, "", "off", "--simulate off"};
    } else if (s.simulate == "auto") {
        physmem::os::CpuIdentity cpu = physmem::os::cpu_identity();
        m = cpu.found ? machine_for_cpu(cpu.vendor, cpu.family, cpu.model)
                      : Machine{{}, "", "auto", "/proc/cpuinfo gives no vendor_id, cpu family and model"};
    } else {
        m = {physmem::tlbsim::preset(s.simulate), s.simulate, "asked", ""};
    }
    if (m.config) m.config = configure(*m.config, s);
    return m;
}

Plan plan(std::uint64_t refs_in_pass, std::uint64_t warmup, std::uint64_t cap) {
    const std::uint64_t want = warmup + cap, r = refs_in_pass;
    const unsigned passes = static_cast<unsigned>(std::clamp<std::uint64_t>((want + r - 1) / r, 1, kMaxPasses));
    const std::uint64_t total = r * passes;
    if (total >= want) return {{warmup, cap}, passes, total > want};
    const std::uint64_t w = std::min(warmup, r);  // one pass (at most W) warms up
    return {{w, total - w}, passes, false};
}

std::optional<Json> run(const SimSettings& s, const std::vector<TracedBuffer>& buffers, std::uint64_t ops_per_pass,
                        const std::function<void(Tracer&)>& pass) {
    if (!s.active()) return std::nullopt;
    const double t0 = now_s();
    const Machine m = resolve(s);
    if (!m.config && s.trace.empty()) return machine_json(m);
    std::uint64_t written = 0;
    Plan p{{s.warmup(), s.refs}, 1, false};
    Attempt a = attempt(m, s, buffers, p.window, 1, pass, &written);
    const std::uint64_t per_pass = a.seen;
    std::uint64_t simulated = std::min(a.seen, p.window.warmup + p.window.refs);
    if (per_pass > 0 && per_pass < p.window.warmup + p.window.refs) {  // too short: repeat, re-window
        p = plan(per_pass, s.warmup(), s.refs);
        a = attempt(m, s, buffers, p.window, p.passes, pass, &written);
        simulated += std::min(a.seen, p.window.warmup + p.window.refs);
    } else {
        p.capped = per_pass > p.window.warmup + p.window.refs;
    }
    Window w{p.window.warmup, std::min(a.seen, p.window.warmup + p.window.refs) - std::min(a.seen, p.window.warmup),
             per_pass, p.capped, p.passes, a.untagged};
    Json j = machine_json(m);
    j["window"] = window_json(w);
    j["buffers"] = buffers_json(buffers);
    if (a.total) {
        const double ops = per_pass ? double(ops_per_pass) * double(w.refs) / double(per_pass) : 0;
        add_counts(j, *a.total, a.half, ops);
    }
    if (!s.trace.empty()) j["trace"] = Json{{"path", s.trace}, {"entries", written}};
    const double secs = now_s() - t0;
    j["sim_seconds"] = secs;
    j["refs_per_second"] = secs > 0 ? double(simulated) / secs : 0.0;
    return j;
}

}  // namespace lab::translation
