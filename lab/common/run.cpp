// lab/common/run.cpp — an experiment program's life: parse, probe/list or run, print.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include "context.hpp"
#include "first_touch.hpp"
#include "layout.hpp"
#include "physmem/hugepages.hpp"

namespace lab {

namespace {

// Exit codes, PROTOCOL.md.
constexpr int kUnverified = 1, kBadArgs = 2, kNoBacking = 3, kNoMemory = 4, kError = 5;

void print(const Json& j) { std::printf("%s\n", j.dump().c_str()); }

// --probe: which counters and huge pages this process can get, and what a first touch of
// memory costs (first_touch.hpp).
Json probe(const ProgramSpec& spec) {
    physmem::EventCounters c;
    Json counters = Json::object();
    for (std::size_t e = 0; e < physmem::kEventCount; ++e) {
        auto ev = static_cast<physmem::Event>(e);
        counters[std::string(physmem::to_string(ev))] =
            Json{{"available", c.available(ev)}, {"source", c.source(ev)}, {"reason", c.unavailable_reason(ev)}};
    }
    Json huge = Json::object();
    for (auto [name, size] : {std::pair{"2m", std::size_t{2} << 20}, std::pair{"1g", std::size_t{1} << 30}}) {
        auto h = physmem::huge_page_counts(size);
        huge[name] = Json{{"supported", h.supported}, {"total", h.total}, {"free", h.free},
                          {"reserved", h.reserved}, {"available", physmem::available_huge_pages(size)}};
    }
    return Json{{"schema", "physmem.lab.probe/1"}, {"program", spec.name}, {"counters", counters},
                {"hugepages", huge}, {"first_touch", first_touch_probe()}, {"flags", PHYSMEM_LAB_FLAGS}};
}

// --list: what the program accepts, axis by axis: the variants (each a kind on a backing),
// what each kind and backing means, and the params with their defaults and meaning.
Json list(const ProgramSpec& spec) {
    Json kinds = Json::array(), kind_axis = Json::array(), backing_axis = Json::array(), variants = Json::array();
    Json backings = Json::array(), params = Json::array();
    for (Kind k : spec.kinds) {
        const KindInfo& ki = info(k);
        kinds.push_back(ki.name);
        kind_axis.push_back(Json{{"name", ki.name}, {"meaning", ki.meaning}, {"extra_1g_pages", ki.extra_1g_pages}});
        for (physmem::Backing b : spec.backings(k)) {
            std::string bn(physmem::to_string(b));
            variants.push_back(Json{{"name", std::string(ki.name) + "-" + bn}, {"kind", ki.name}, {"backing", bn}});
            if (std::find(backings.begin(), backings.end(), bn) == backings.end()) backings.push_back(bn);
        }
    }
    for (const Json& b : backings)
        backing_axis.push_back(Json{{"name", b}, {"meaning", backing_meaning(*physmem::parse_backing(b.get<std::string>()))}});
    for (const ParamSpec& p : spec.params)
        params.push_back(Json{{"name", p.name}, {"default", p.default_value}, {"choices", p.choices}, {"help", p.help}});
    return Json{{"schema", "physmem.lab.list/1"}, {"program", spec.name},   {"experiment", spec.experiment},
                {"unit", spec.unit},              {"kinds", kinds},         {"backings", backings},
                {"variants", variants},           {"axes", Json{{"kind", kind_axis}, {"backing", backing_axis}}},
                {"default_block_size", spec.default_block_size}, {"params", params}};
}

int fail(const ProgramSpec& spec, int code, const std::string& what) {
    std::fprintf(stderr, "%s: %s\n", spec.name.c_str(), what.c_str());
    return code;
}

}  // namespace

int run(const ProgramSpec& spec, int argc, char** argv, const std::function<void(Context&)>& body) {
    Invocation inv = parse_args(spec, argc, argv);
    if (inv.mode == Invocation::Mode::probe) return print(probe(spec)), 0;
    if (inv.mode == Invocation::Mode::list) return print(list(spec)), 0;
    try {
        layout::apply(inv.settings);
        Context ctx(spec, inv.settings);
        body(ctx);
        Json record = ctx.finish();
        print(record);
        std::fflush(stdout);
        if (!ctx.verified()) return fail(spec, kUnverified, "VERIFICATION FAILED: " + record["verification"].get<std::string>());
        return 0;
    } catch (const physmem::backing_unavailable& e) {
        return fail(spec, kNoBacking, std::string("backing unavailable: ") + e.what());
    } catch (const std::bad_alloc&) {
        return fail(spec, kNoMemory, "out of memory");
    } catch (const std::invalid_argument& e) {
        return fail(spec, kBadArgs, e.what());
    } catch (const std::exception& e) {
        return fail(spec, kError, std::string("error: ") + e.what());
    }
}

}  // namespace lab
