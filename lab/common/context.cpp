// lab/common/context.cpp — buffers on verified backings, timed phases, the record.
#include "context.hpp"
#include "layout.hpp"
#include "translation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace lab {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

Json report_json(const std::string& name, physmem::Backing requested, const physmem::BackingReport& r) {
    // THP is only "obtained" when the kernel actually gave huge pages.
    bool thp_missing = r.backing == physmem::Backing::thp && r.huge_bytes == 0;
    return Json{{"name", name},
                {"requested", physmem::to_string(requested)},
                {"obtained", thp_missing ? "4k" : std::string(physmem::to_string(r.backing))},
                {"kernel_page_size", r.kernel_page_size},
                {"huge_bytes", r.huge_bytes},
                {"resident_bytes", r.resident_bytes},
                {"verified", r.verified && !thp_missing}};
}

// The page size a buffer's references are tagged with: hugetlb pages as mapped; THP as
// 2 MiB when the kernel gave any huge page (partial coverage is noted by the caller).
physmem::tlbsim::PageSize tag_of(const physmem::BackingReport& r) {
    using physmem::tlbsim::PageSize;
    switch (r.backing) {
        case physmem::Backing::page_1g: return PageSize::k1G;
        case physmem::Backing::page_2m: return PageSize::k2M;
        case physmem::Backing::thp: return r.huge_bytes > 0 ? PageSize::k2M : PageSize::k4K;
        default: return PageSize::k4K;
    }
}

}  // namespace

Context::Context(const ProgramSpec& spec, const Settings& settings)
    : spec_(spec), settings_(settings), created_s_(now_s()) {
    record_ = Json{{"schema", "physmem.lab.record/1"},
                   {"experiment", spec.experiment},
                   {"variant", settings.variant},
                   {"kind", to_string(settings.kind)},
                   {"backing_requested", physmem::to_string(settings.backing)},
                   {"size_bytes", settings.size_bytes},
                   {"elements", 0},
                   {"unit", spec.unit},
                   {"params", Json::object()},
                   {"tree", nullptr}};
    for (const auto& [k, v] : settings.params) record_["params"][k] = v;
    if (settings.uses_blocks()) record_["params"]["block_size"] = settings.block_size;
    record_["notes"] = Json::array();
}

Context::~Context() = default;

void* Context::map_array(const std::string& name, std::size_t bytes, physmem::Backing backing) {
    auto r = std::make_unique<physmem::Region>(physmem::RegionOptions{
        .bytes = std::max<std::size_t>(bytes, 1), .alignment = 4096, .backing = backing, .strict_backing = true});
    void* p = r->data();
    regions_.emplace_back(name, std::move(r));
    return p;
}

physmem::BlockPool& Context::pool(const std::string& name, std::size_t bytes, bool prefault, bool tags) {
    std::size_t bs = settings_.block_size;
    std::size_t blocks = std::max<std::size_t>((bytes + bs - 1) / bs, 1);
    auto p = std::make_unique<physmem::BlockPool>(physmem::PoolOptions{
        .block_size = bs, .capacity = blocks * bs, .backing = settings_.backing, .strict_backing = true,
        .prefault = prefault, .tags = tags});
    pools_.emplace_back(name, std::move(p));
    return *pools_.back().second;
}

Timing Context::timed(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass,
                      std::function<void()> reset, unsigned reps, unsigned warmup) {
    mark_setup_end();
    MeasureOptions o{reps, warmup, settings_.min_rep_ms, settings_.min_reps, settings_.target_spread, std::move(reset)};
    return lab::measure(pass, ops_per_pass, o, counters_);
}

Json Context::sweep_point(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass) {
    Json t = timing_json(timed(ops_per_pass, pass, {}, settings_.reps, settings_.warmup), settings_.warmup);
    return Json{{"median_ns", t["median_ns"]}, {"min_ns", t["min_ns"]}, {"max_ns", t["max_ns"]},
                {"rel_spread", t["rel_spread"]}};
}

Timing Context::measure(std::uint64_t ops_per_pass, const std::function<std::uint64_t()>& pass,
                        std::function<void()> reset) {
    Timing t = timed(ops_per_pass, pass, std::move(reset), settings_.reps, settings_.warmup);
    store("", t, settings_.warmup);
    return t;
}

void Context::reported_timing(const std::vector<double>& ns_per_op, std::uint64_t ops_per_pass, unsigned warmup,
                              const std::string& source) {
    Timing t;
    t.ns_per_op = ns_per_op;
    t.ops_per_pass = ops_per_pass;
    t.counters.resize(physmem::kEventCount);
    store("", t, warmup);
    note("timing: " + source);
}

Timing Context::measure_phase(const std::string& name, std::uint64_t ops_per_pass,
                              const std::function<std::uint64_t()>& pass, std::function<void()> reset) {
    return measure_phase(name, ops_per_pass, pass, std::move(reset), settings_.reps, settings_.warmup);
}

Timing Context::measure_phase(const std::string& name, std::uint64_t ops_per_pass,
                              const std::function<std::uint64_t()>& pass, std::function<void()> reset, unsigned reps,
                              unsigned warmup) {
    Timing t = timed(ops_per_pass, pass, std::move(reset), reps, warmup);
    store(name, t, warmup);
    return t;
}

std::vector<Timing> Context::measure_interleaved(const std::vector<Named>& jobs) {
    mark_setup_end();
    std::vector<Job> plain;
    for (const Named& n : jobs) plain.push_back(n.job);
    MeasureOptions o{settings_.reps, settings_.warmup, settings_.min_rep_ms, 0, 0, {}};
    std::vector<Timing> out = lab::measure_interleaved(plain, o, counters_);
    Json group = Json::array();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        store(jobs[i].phase, out[i], settings_.warmup);
        group.push_back(jobs[i].phase.empty() ? Json(nullptr) : Json(jobs[i].phase));
    }
    record_["interleaved"].push_back(group);
    return out;
}

void Context::mark_setup_end() {
    if (setup_s_ < 0) setup_s_ = now_s() - created_s_;
}

void Context::store(const std::string& phase, const Timing& t, unsigned warmup) {
    Json fields = timing_json(t, warmup);  // named: items() of a temporary would dangle
    if (!phase.empty()) record_["phases"][phase] = std::move(fields);
    else
        for (auto& [k, v] : fields.items()) record_[k] = v;
    see_backing();
}

void Context::see_backing() {
    for (Json& now : backing_json()) {
        auto same = std::find_if(backing_seen_.begin(), backing_seen_.end(),
                                 [&](const Json& b) { return b["name"] == now["name"]; });
        if (same == backing_seen_.end()) backing_seen_.push_back(std::move(now));
        else if (now["resident_bytes"].get<std::size_t>() > (*same)["resident_bytes"].get<std::size_t>()) *same = std::move(now);
    }
}

Json Context::timing_json(const Timing& t, unsigned warmup) const {
    Spread s = spread_of(t.ns_per_op);
    Json counters = Json::object(), unavailable = Json::object();
    for (std::size_t e = 0; e < physmem::kEventCount; ++e) {
        auto ev = static_cast<physmem::Event>(e);
        std::string key(physmem::to_string(ev));
        if (counters_.available(ev) && t.counters[e].size() == t.ns_per_op.size())
            counters[key] = Json{{"source", counters_.source(ev)}, {"per_rep", t.counters[e]}};
        else {
            counters[key] = nullptr;
            unavailable[key] = counters_.unavailable_reason(ev).empty() ? "read failed" : counters_.unavailable_reason(ev);
        }
    }
    counters["unavailable"] = unavailable;
    return Json{{"reps", t.ns_per_op.size()},
                {"warmup", warmup},
                {"passes_per_rep", t.passes_per_rep},
                {"ops_per_pass", t.ops_per_pass},
                {"ns_per_op", t.ns_per_op},
                {"median_ns", s.median},
                {"min_ns", s.min},
                {"max_ns", s.max},
                {"rel_spread", s.rel},
                {"counters", counters}};
}

void Context::set_tree(std::size_t block_size, unsigned depth, std::size_t leaf_elements) {
    record_["tree"] = Json{{"block_size", block_size}, {"depth", depth}, {"leaf_elements", leaf_elements}};
}

void Context::checksum(std::uint64_t value) { record_["checksum"] = hex(value); }

void Context::verify(bool ok, const std::string& how) {
    verified_ = (verify_called_ ? verified_ : true) && ok;
    verify_called_ = true;
    std::string prev = record_.contains("verification") ? record_["verification"].get<std::string>() + "; " : "";
    record_["verification"] = prev + how + (ok ? "" : " [FAILED]");
}

Json Context::backing_json() const {
    Json out = Json::array();
    for (const auto& [name, r] : regions_) out.push_back(report_json(name, r->backing(), r->verify()));
    for (const auto& [name, p] : pools_) {
        auto reports = p->verify_backing();
        for (std::size_t i = 0; i < reports.size(); ++i)
            out.push_back(report_json(reports.size() == 1 ? name : name + "#" + std::to_string(i), settings_.backing,
                                      reports[i]));
    }
    return out;
}

std::vector<TracedBuffer> Context::traced_buffers() {
    std::vector<TracedBuffer> out;
    auto add = [&](const std::string& name, const std::byte* p, std::size_t bytes, const physmem::BackingReport& r) {
        auto lo = reinterpret_cast<std::uintptr_t>(p);
        out.push_back({name, lo, lo + bytes, tag_of(r)});
        if (r.backing == physmem::Backing::thp && r.huge_bytes > 0 && r.huge_bytes < r.resident_bytes)
            note("translation: " + name + " (thp) tagged 2 MiB, but only " + std::to_string(r.huge_bytes) + " of its " +
                 std::to_string(r.resident_bytes) + " resident bytes are on huge pages");
    };
    for (const auto& [name, r] : regions_) add(name, r->data(), r->size(), r->verify());
    for (const auto& [name, p] : pools_) {
        auto ranges = p->regions();
        auto reports = p->verify_backing();
        for (std::size_t i = 0; i < ranges.size() && i < reports.size(); ++i)
            add(ranges.size() == 1 ? name : name + "#" + std::to_string(i), ranges[i].data(), ranges[i].size(),
                reports[i]);
    }
    return out;
}

void Context::simulate(std::uint64_t ops_per_pass, const std::function<void(Tracer&)>& pass) {
    if (!settings_.sim.active()) return;
    if (auto j = translation::run(settings_.sim, traced_buffers(), ops_per_pass, pass)) record_["translation"] = *j;
}

Json Context::finish() {
    if (!verify_called_) {
        verified_ = false;
        record_["verification"] = "the program never checked its result";
    }
    record_["verified"] = verified_;
    if (!record_.contains("checksum")) record_["checksum"] = nullptr;
    see_backing();
    record_["backing"] = backing_seen_;
    record_["setup_s"] = std::max(setup_s_, 0.0);
    Json layout_fields = layout::record(settings_);
    for (auto& [key, value] : layout_fields.items()) record_[key] = value;
    record_["program"] = Json{{"name", spec_.name}, {"compiler", "g++ " __VERSION__}, {"flags", PHYSMEM_LAB_FLAGS}};
    return record_;
}

}  // namespace lab
