// physmem-tlbsim — the TLB simulator's program: list and show presets, detect this CPU's,
// simulate a trace file, check the analytic cases, measure throughput. JSON on stdout.
//
//   physmem-tlbsim presets | detect | validate
//   physmem-tlbsim show PRESET [--levels 5] [--caches on]
//   physmem-tlbsim run [--preset P|auto] [--levels 4|5] [--caches on|off] [--warmup N] TRACE
//   physmem-tlbsim bench [--preset P|auto|all] [--levels 4|5] [--caches on|off] [--refs N] [--reps N]
//   physmem-tlbsim whatif [--preset P|auto] [--levels 4|5] [--caches on|off] [--warmup N] TRACE
// show, run and bench also take --page-size B: the machine with hypothetical pages of B
// (physmem/tlbsim/what_if.hpp); whatif sweeps B over 4 KiB..1 GiB itself.
//
// Exit codes: 0 done, 1 a validation case failed, 2 usage error, 3 a trace could not be read.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "physmem/tlbsim/detect.hpp"
#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"
#include "physmem/tlbsim/json.hpp"
#include "validate.hpp"
#include "whatif.hpp"

namespace {

using Json = nlohmann::ordered_json;
using namespace physmem::tlbsim;
using namespace physmem::tlbsim::tool;

struct Usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The options, declared once: name -> (default, help).
const std::map<std::string, std::pair<std::string, std::string>> kOptions = {
    {"--preset", {"auto", "a preset name, or auto: this CPU's model (CPUID's TLB description, else the "
                          "family/model table, else the nearest preset; always one, see detect)"}},
    {"--levels", {"4", "page-table levels: 4 (the preset's; 3 on a 64 KiB granule), or 5 (LA57, 4 KiB granule only)"}},
    {"--caches", {"off", "model the preset's data caches (L1d, L2) for walk references: on|off"}},
    {"--warmup", {"0", "run: references (whatif: data references) simulated before counting starts"}},
    {"--page-size", {"hw", "hw (the traced page sizes), or a hypothetical page size B, a power of two from 4K to "
                           "1G (e.g. 64K, 32M): every reference translated on pages of B by the preset's 4 KiB "
                           "TLB arrays and a radix walk of ceil((48 or 57 - log2 B) / 9) levels (/ 11 and / 13 on the "
                           "16 and 64 KiB granules; what_if.hpp)"}},
    {"--refs", {"8000000", "bench: references per pattern"}},
    {"--reps", {"3", "bench: runs per pattern (the best is reported)"}},
};

const char kUsage[] =
    "usage: physmem-tlbsim presets | detect | validate\n"
    "       physmem-tlbsim show PRESET [--levels 5] [--caches on]\n"
    "       physmem-tlbsim run [--preset P|auto] [--levels 4|5] [--caches on|off] [--warmup N] TRACE\n"
    "       physmem-tlbsim bench [--preset P|auto|all] [--levels 4|5] [--caches on|off] [--refs N] [--reps N]\n"
    "       physmem-tlbsim whatif [--preset P|auto] [--levels 4|5] [--caches on|off] [--warmup N] TRACE\n"
    "       (show, run, bench: also --page-size hw|B, B a power of two from 4K to 1G)\n";

struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::map<std::string, std::string> opt;
    const std::string& get(const std::string& name) const {
        auto it = opt.find(name);
        return it != opt.end() ? it->second : kOptions.at(name).first;
    }
    std::uint64_t number(const std::string& name) const {
        const std::string& v = get(name);
        std::size_t used = 0;
        unsigned long long n = 0;
        try {
            n = std::stoull(v, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != v.size() || v.empty()) throw Usage(name + ": not a number: '" + v + "'");
        return n;
    }
};

Args parse(int argc, char** argv) {
    if (argc < 2) throw Usage("no command");
    Args a{argv[1], {}, {}};
    for (int i = 2; i < argc; ++i) {
        std::string s = argv[i];
        if (s.rfind("--", 0) != 0) {
            a.positional.push_back(s);
            continue;
        }
        if (!kOptions.count(s)) throw Usage("unknown option " + s);
        if (i + 1 >= argc) throw Usage(s + " needs a value");
        a.opt[s] = argv[++i];
    }
    return a;
}

std::string cpu_text() {
    std::optional<CpuIdentity> c = this_cpu();
    if (!c) return "unknown CPU (no CPUID)";
    return c->vendor + " family " + std::to_string(c->family) + " model " + std::to_string(c->model);
}

Json auto_json(const AutoChoice& c) {
    Json described = Json::array();
    for (const TlbDescription& d : c.described) {
        Json sizes = Json::array();
        for (PageSize s : {PageSize::k4K, PageSize::k2M, PageSize::k1G})
            if (d.sizes & size_bit(s)) sizes.push_back(to_string(s));
        Json one = {{"level", d.level}, {"sizes", sizes}, {"entries", d.entries}, {"ways", d.ways}};
        if (d.max_ways > d.ways) one["max_ways"] = d.max_ways;  // a range code ("8 to 15 ways")
        one["from"] = d.from;
        described.push_back(std::move(one));
    }
    return {{"preset", c.machine.name}, {"base", c.base}, {"source", c.source}, {"reason", c.reason},
            {"cpuid_tlbs", described}};
}

// The machine the options describe: the preset (auto: this CPU's), levels, caches.
MachineConfig machine(const Args& a, const std::string& name) {
    MachineConfig m;
    if (name == "auto") {
        m = choose_machine_for_this_cpu().machine;
    } else {
        try {
            m = preset(name);
        } catch (const std::invalid_argument& e) {
            throw Usage(e.what());
        }
    }
    const std::string& levels = a.get("--levels");
    if (levels == "5") {
        try {
            m = with_five_levels(m);
        } catch (const std::invalid_argument& e) {
            throw Usage("--levels 5: " + std::string(e.what()));
        }
    } else if (levels != "4") {
        throw Usage("--levels: 4 or 5, not '" + levels + "'");
    }
    const std::string& caches = a.get("--caches");
    if (caches == "on") m = with_caches(m);
    else if (caches != "off") throw Usage("--caches: on or off, not '" + caches + "'");
    const std::string& page = a.get("--page-size");
    if (page == "hw") return m;
    try {
        return with_page_size(m, parse_size(page));
    } catch (const std::invalid_argument& e) {
        throw Usage("--page-size: " + std::string(e.what()) + " (hw, or a power of two from 4K to 1G)");
    }
}

Json header() { return {{"tool", "physmem-tlbsim"}, {"version", 1}}; }

int cmd_presets() {
    Json out = header(), list = Json::array();
    for (const std::string& n : preset_names()) {
        const MachineConfig& m = preset(n);
        list.push_back({{"name", n}, {"description", m.description}, {"sources", m.sources}});
    }
    out["presets"] = list;
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_detect() {
    Json out = header();
    std::optional<CpuIdentity> c = this_cpu();
    out["vendor"] = c ? Json(c->vendor) : Json(nullptr);
    out["family"] = c ? Json(c->family) : Json(nullptr);
    out["model"] = c ? Json(c->model) : Json(nullptr);
    std::optional<std::string> t = preset_for_this_cpu();
    out["table_preset"] = t ? Json(*t) : Json(nullptr);
    out.update(auto_json(choose_machine_for_this_cpu()));
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_show(const Args& a) {
    if (a.positional.size() != 1) throw Usage("show takes one preset name");
    Json out = header();
    out["machine"] = machine_json(machine(a, a.positional[0]));
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_run(const Args& a) {
    if (a.positional.size() != 1) throw Usage("run takes one trace file");
    Simulator sim(machine(a, a.get("--preset")));
    std::uint64_t warmup = a.number("--warmup"), seen = 0;
    auto t0 = std::chrono::steady_clock::now();
    read_trace(a.positional[0], 1 << 16, [&](std::span<const Entry> chunk) {
        for (Entry e : chunk) {
            if (seen++ == warmup) sim.reset_stats();
            sim.access(e);
        }
    });
    if (seen <= warmup) sim.reset_stats();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Json out = header();
    out["trace"] = a.positional[0];
    out["machine"] = machine_json(sim.config());
    out["warmup_refs"] = std::min(warmup, seen);
    out["stats"] = stats_json(sim.stats());
    out["per_ref"] = per_ref_json(sim.stats());
    out["seconds"] = secs;
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_validate() {
    Json out = header();
    Json v = validate_presets();
    out.update(v);
    std::cout << out.dump(2) << "\n";
    return v["ok"].get<bool>() ? 0 : 1;
}

// bench --preset all: this CPU's model and every preset (with the other options; a preset
// they do not apply to is listed under "skipped"), over the same traces. The top-level
// fields describe the slowest machine (by wall time): its name, patterns and rates, so a
// reader of one machine's result reads this one the same way; "every_preset" has each
// machine's slowest rate, and min_refs_per_cpu_second is the lowest of all machines.
int cmd_bench_all(const Args& a, std::uint64_t refs, unsigned reps) {
    std::vector<MachineConfig> machines;
    std::vector<std::string> asked;
    Json skipped = Json::array();
    std::vector<std::string> names = preset_names();
    names.insert(names.begin(), "auto");
    for (const std::string& n : names) {
        try {
            machines.push_back(machine(a, n));
            asked.push_back(n);
        } catch (const Usage& e) {
            skipped.push_back({{"preset", n}, {"why", e.what()}});
        }
    }
    std::vector<Json> results = bench(machines, refs, reps);
    std::size_t slowest = 0;
    double lowest_cpu = std::numeric_limits<double>::infinity();
    Json every = Json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Json& r = results[i];
        if (r["min_refs_per_second"].get<double>() < results[slowest]["min_refs_per_second"].get<double>()) slowest = i;
        lowest_cpu = std::min(lowest_cpu, r["min_refs_per_cpu_second"].get<double>());
        every.push_back({{"preset", machines[i].name}, {"asked", asked[i]}, {"engine", r["engine"]},
                         {"min_refs_per_second", r["min_refs_per_second"]},
                         {"min_refs_per_cpu_second", r["min_refs_per_cpu_second"]}});
    }
    Json out = header();
    out["preset"] = machines[slowest].name;
    out["asked"] = "all";
    out["caches_modelled"] = machines[slowest].model_caches;
    out["cpu"] = cpu_text();
    out["auto"] = auto_json(choose_machine_for_this_cpu());
    out.update(results[slowest]);
    out["min_refs_per_cpu_second"] = lowest_cpu;
    out["every_preset"] = every;
    out["skipped"] = skipped;
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_bench(const Args& a) {
    std::uint64_t refs = a.number("--refs"), reps = a.number("--reps");
    if (refs < 3) throw Usage("--refs: at least 3");
    if (a.get("--preset") == "all") return cmd_bench_all(a, refs, unsigned(reps));
    MachineConfig m = machine(a, a.get("--preset"));
    Json out = header();
    out["preset"] = m.name;
    out["caches_modelled"] = m.model_caches;
    out["cpu"] = cpu_text();
    if (a.get("--preset") == "auto") out["auto"] = auto_json(choose_machine_for_this_cpu());
    out.update(bench(m, refs, unsigned(reps)));
    std::cout << out.dump(2) << "\n";
    return 0;
}

int cmd_whatif(const Args& a) {
    if (a.positional.size() != 1) throw Usage("whatif takes one trace file");
    if (a.opt.count("--page-size")) throw Usage("--page-size: whatif sweeps every page size itself");
    MachineConfig m = machine(a, a.get("--preset"));
    std::vector<Entry> data;
    read_trace(a.positional[0], 1 << 16, [&](std::span<const Entry> chunk) {
        for (Entry e : chunk)
            if (e.kind() == Ref::data) data.push_back(e);
    });
    auto t0 = std::chrono::steady_clock::now();
    Json out = header();
    out["trace"] = a.positional[0];
    out.update(what_if_sweep(m, data, a.number("--warmup")));
    out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << out.dump(2) << "\n";
    return 0;
}

int dispatch(const Args& a) {
    const std::string& c = a.command;
    if (c == "presets") return cmd_presets();
    if (c == "detect") return cmd_detect();
    if (c == "show") return cmd_show(a);
    if (c == "run") return cmd_run(a);
    if (c == "validate") return cmd_validate();
    if (c == "bench") return cmd_bench(a);
    if (c == "whatif") return cmd_whatif(a);
    if (c == "--help" || c == "-h" || c == "help") {
        std::cout << kUsage;
        for (const auto& [name, v] : kOptions) std::cout << "  " << name << " (default " << v.first << "): " << v.second << "\n";
        return 0;
    }
    throw Usage("unknown command '" + c + "'");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return dispatch(parse(argc, argv));
    } catch (const Usage& e) {
        std::fprintf(stderr, "physmem-tlbsim: %s\n%s", e.what(), kUsage);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "physmem-tlbsim: %s\n", e.what());
        return 3;
    }
}
