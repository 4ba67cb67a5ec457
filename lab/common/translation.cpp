// lab/common/translation.cpp — the simulated machine, the window plan, the traced passes.
#include "translation.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "physmem/tlbsim/simulator.hpp"
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

// A simulator (and trace file) with a tracer over them, windowed once.
class Session {
  public:
    Session(const Machine& m, const SimSettings& s, const std::vector<TracedBuffer>& buffers, TraceWindow window)
        : sim_(m.config ? std::make_unique<physmem::tlbsim::Simulator>(*m.config) : nullptr),
          writer_(s.trace.empty() ? nullptr : std::make_unique<physmem::tlbsim::TraceWriter>(s.trace)),
          tracer_(buffers, window, sim_.get(), writer_.get()) {}
    void run(unsigned passes, const std::function<void(Tracer&)>& pass) {
        for (unsigned p = 0; p < passes; ++p) pass(tracer_);
    }
    // References simulated (warm-up and window, as far as filled).
    std::uint64_t simulated() const noexcept {
        return std::min(tracer_.seen(), tracer_.window().warmup + tracer_.window().refs);
    }
    // References in the window (counted), as far as filled.
    std::uint64_t counted() const noexcept { return simulated() - std::min(simulated(), tracer_.window().warmup); }
    const Tracer& tracer() const noexcept { return tracer_; }
    const physmem::tlbsim::Simulator* sim() const noexcept { return sim_.get(); }
    // Closes the trace file; its entries (0 without one).
    std::uint64_t close() {
        if (!writer_) return 0;
        writer_->close();
        return writer_->written();
    }

  private:
    std::unique_ptr<physmem::tlbsim::Simulator> sim_;
    std::unique_ptr<physmem::tlbsim::TraceWriter> writer_;
    Tracer tracer_;
};

}  // namespace

Machine machine_for_choice(const physmem::tlbsim::AutoChoice& c) {
    return {c.machine, c.machine.name, "auto", c.reason, c.source, c.base};
}

Machine resolve(const SimSettings& s) {
    Machine m;
    if (s.simulate == "off") {
        m = {{}, "", "off", "--simulate off", "", ""};
    } else if (s.simulate == "auto") {
        m = machine_for_choice(physmem::tlbsim::choose_machine_for_this_cpu());
    } else {
        m = {physmem::tlbsim::preset(s.simulate), s.simulate, "asked", "", "", ""};
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
    // Pass 1 with the asked window tells the references of a pass. Shorter than W + N:
    // more passes on the same window, or (when even kMaxPasses are too few) a fresh
    // simulator with a window of what there is.
    const TraceWindow asked{s.warmup(), s.refs};
    auto session = std::make_unique<Session>(m, s, buffers, asked);
    session->run(1, pass);
    const std::uint64_t per_pass = session->tracer().seen();
    std::uint64_t simulated = 0;
    Plan p{asked, 1, per_pass > asked.warmup + asked.refs};
    if (per_pass > 0 && per_pass < asked.warmup + asked.refs) {
        p = plan(per_pass, asked.warmup, asked.refs);
        if (p.window.warmup == asked.warmup && p.window.refs == asked.refs) {
            session->run(p.passes - 1, pass);
        } else {
            simulated += session->simulated();
            session->close();
            session = std::make_unique<Session>(m, s, buffers, p.window);
            session->run(p.passes, pass);
        }
    }
    simulated += session->simulated();
    const std::uint64_t written = session->close();
    const Window w{p.window.warmup, session->counted(), per_pass, p.capped, p.passes, session->tracer().untagged()};
    Json j = machine_json(m);
    j["window"] = window_json(w);
    j["buffers"] = buffers_json(buffers);
    if (session->sim()) {
        const double ops = per_pass ? double(ops_per_pass) * double(w.refs) / double(per_pass) : 0;
        add_counts(j, session->sim()->stats(), session->tracer().first_half(), ops, session->sim()->config().model_caches);
    }
    if (!s.trace.empty()) j["trace"] = Json{{"path", s.trace}, {"entries", written}};
    const double secs = now_s() - t0;
    j["sim_seconds"] = secs;
    j["refs_per_second"] = secs > 0 ? double(simulated) / secs : 0.0;
    return j;
}

}  // namespace lab::translation
