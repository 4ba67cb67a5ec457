// lab/common/translation_record.cpp — the "translation" field's JSON.
#include "translation_record.hpp"

#include <cmath>

#include "physmem/tlbsim/json.hpp"

namespace lab::translation {

namespace {

using physmem::tlbsim::PageSize;
using physmem::tlbsim::Stats;

// Memory references spent on translation: the hardware walks' plus the software walks'.
std::uint64_t translation_refs(const Stats& s) noexcept { return s.walk_refs + s.sw_walk_loads; }

double ratio(double a, double b) noexcept { return b > 0 ? a / b : 0.0; }

// translation_memory_refs: of the translation refs, those no modelled cache level held
// (null without a data-cache model: then every reference counts as one to memory).
Json per_op_json(const Stats& s, double ops, bool caches) {
    Json memory = caches ? Json(ratio(double(s.walk_ref_memory + s.sw_walk_memory), ops)) : Json(nullptr);
    return Json{{"refs", ratio(double(s.accesses), ops)},
                {"sw_walk_loads", ratio(double(s.sw_walk_loads), ops)},
                {"l1_misses", ratio(double(s.l1_misses), ops)},
                {"walks", ratio(double(s.walks), ops)},
                {"walk_refs", ratio(double(s.walk_refs), ops)},
                {"translation_refs", ratio(double(translation_refs(s)), ops)},
                {"translation_memory_refs", memory}};
}

// The two halves of the window: per-reference rates in each and how far apart they are.
Json halves_json(const Stats& total, const Stats& first) {
    const double n1 = double(first.accesses), n2 = double(total.accesses - first.accesses);
    const double a = ratio(double(translation_refs(first)), n1);
    const double b = ratio(double(translation_refs(total) - translation_refs(first)), n2);
    const double wa = ratio(double(first.walks), n1), wb = ratio(double(total.walks - first.walks), n2);
    return Json{{"translation_refs_per_ref", {a, b}},
                {"walks_per_ref", {wa, wb}},
                {"rel_diff", ratio(std::fabs(a - b), (a + b) / 2)}};
}

}  // namespace

Json machine_json(const Machine& m) {
    Json j{{"preset", m.config ? Json(m.preset) : Json(nullptr)}};
    if (!m.config || !m.reason.empty()) j["reason"] = m.reason;
    j["chosen"] = m.chosen;
    if (!m.source.empty()) j["source"] = m.source;
    if (!m.base.empty()) j["base"] = m.base;
    if (!m.config) return j;
    j["description"] = m.config->description;
    j["translate"] = m.config->translate;
    j["levels"] = m.config->levels;
    j["caches_modelled"] = m.config->model_caches;
    return j;
}

Json window_json(const Window& w) {
    return Json{{"warmup_refs", w.warmup_refs}, {"refs", w.refs},
                {"refs_in_pass", w.refs_in_pass}, {"capped", w.capped},
                {"passes_traced", w.passes_traced}, {"untagged_refs", w.untagged_refs}};
}

Json buffers_json(const std::vector<TracedBuffer>& buffers) {
    Json out = Json::array();
    for (const TracedBuffer& b : buffers)
        out.push_back(Json{{"name", b.name}, {"bytes", b.end - b.begin},
                           {"page_size", std::string(physmem::tlbsim::to_string(b.size))}});
    return out;
}

void add_counts(Json& j, const Stats& total, const std::optional<Stats>& half, double ops_in_window, bool caches) {
    j["counts"] = physmem::tlbsim::stats_json(total);
    j["per_op"] = per_op_json(total, ops_in_window, caches);
    j["halves"] = half ? halves_json(total, *half) : Json(nullptr);
}

}  // namespace lab::translation
