// lab/alias/env_main.cpp — seed 002's environment-size sweep of the microkernel.
//
//   physmem_lab_alias_env --variant array-4k --size 8K [--param step=16] [--param iters=1048576]
//
// The parent runs one child per environment padding pad = 0, step, ..., --size bytes: the
// child is this executable started with the parent's environment plus
// PHYSMEM_ALIAS_PAD=<pad bytes of 'x'> (so its environment is exactly pad bytes larger
// than at pad 0, which moves its initial stack down by pad rounded to 16 B) and
// PHYSMEM_ALIAS_CHILD (the child's orders, fixed length). The child times only the loop:
// `warmup` untimed then `reps` timed runs of micro_run(iters) (lab/alias/micro.cpp, -O2),
// ns per iteration each (and cycles and 4K-alias events per iteration where the machine
// counts them, lab/alias/counted.hpp; a point keeps the lowest of each); it prints one
// JSON line with those numbers, the low 12 bits of
// &g, &inc (stack) and &i, &j, &k (statics), its environment size and whether the kernel
// randomised its layout. Time always; cycles too where the machine has a PMU.
// ASLR: the parent sets ADDR_NO_RANDOMIZE before spawning when it is not set (lab::run
// normally already has; not with --aslr on); children inherit it and report it back.
// The record: the top-level timing is the microkernel in the parent itself (its own
// environment); "env_sweep" holds the series, one point per padding. The variant is
// array-4k because the protocol asks for one; no buffer is mapped.
// Counters: by default the file's statics as linked (param counters=linked); counters=N
// places them at byte N of a 64-byte-aligned static block, so a build whose stack moves
// in 32-byte steps can still meet an exact pair (the seed's pair was &inc and &i).
// `rounds` (default 2): the whole sweep is run that many times; a padding's point holds
// the repetitions of all its children, whose addresses must agree.
// Verified: every run's counters reached exactly 3 * iters more than before it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "builds.hpp"
#include "context.hpp"
#include "counted.hpp"
#include "process.hpp"

extern char** environ;

namespace {

using lab::Json;
using namespace lab::alias;

constexpr const char* kChildVar = "PHYSMEM_ALIAS_CHILD";
constexpr const char* kPadVar = "PHYSMEM_ALIAS_PAD";

const lab::ProgramSpec kSpec{
    .name = "physmem_lab_alias_env",
    .experiment = "alias_env",
    .unit = "step",
    .kinds = {lab::Kind::array},
    .params = {{"step", "16", {}, "environment padding step in bytes (the sweep is 0..--size)"},
               {"iters", "1048576", {}, "microkernel iterations per timed run"},
               {"rounds", "2", {}, "times the whole padding sweep is run (1..20); each padding keeps every round's repetitions"},
               {"counters", "linked", {}, "where i, j, k live: 'linked' (the statics as the linker placed them) or a "
                                          "byte offset 0..64, multiple of 4, in a 64-byte-aligned static block"}},
};

Json low12_json(const MicroAddrs& a) {
    auto l = [](std::uintptr_t p) { return static_cast<unsigned>(p & 0xfff); };
    return Json{{"g", l(a.g)}, {"inc", l(a.inc)}, {"i", l(a.i)}, {"j", l(a.j)}, {"k", l(a.k)}};
}

// One run of the loop: ns per iteration; *ok false if the counters did not move by 3 * iters.
// With `hw`, cycles and alias events per iteration of the same run go to *delta.
double timed_run(int iters, MicroAddrs* where, bool* ok, const AliasCounters* hw = nullptr,
                 AliasCounters::Delta* delta = nullptr) {
    micro_reset();
    long sum = 0;
    auto t0 = std::chrono::steady_clock::now();
    if (hw) *delta = hw->count(iters, [&] { sum = micro_run(iters, where); });
    else sum = micro_run(iters, where);
    auto t1 = std::chrono::steady_clock::now();
    if (sum != 3L * iters) *ok = false;
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
}

// ----------------------------------------------------------------- child

// PHYSMEM_ALIAS_CHILD = "<iters>:<reps>:<warmup>:<counter offset, -1 linked>".
int child_main(const char* orders) {
    long iters = 0, reps = 0, warmup = 0, place = -1;
    if (std::sscanf(orders, "%ld:%ld:%ld:%ld", &iters, &reps, &warmup, &place) != 4 || iters < 1 || reps < 1) {
        std::cerr << "physmem_lab_alias_env: bad " << kChildVar << "=" << orders << "\n";
        return 2;
    }
    micro_place(static_cast<int>(place));
    bool ok = true;
    MicroAddrs where;
    AliasCounters hw;
    for (long w = 0; w < warmup; ++w) timed_run(static_cast<int>(iters), nullptr, &ok);
    Json ns = Json::array(), cycles = Json::array(), alias = Json::array();
    for (long r = 0; r < reps; ++r) {
        AliasCounters::Delta d;
        ns.push_back(timed_run(static_cast<int>(iters), &where, &ok, hw.any() ? &hw : nullptr, &d));
        cycles.push_back(AliasCounters::json(d.cycles));
        alias.push_back(AliasCounters::json(d.alias));
    }
    Json out{{"env_bytes", lab::process::env_bytes()},
             {"aslr", lab::process::aslr_active() ? "on" : "off"},
             {"ns_per_iter", ns},
             {"cycles_per_iter", cycles},
             {"alias_per_iter", alias},
             {"counters", hw.availability()},
             {"low12", low12_json(where)},
             {"stack_g", where.g},
             {"counts_ok", ok}};
    std::cout << out.dump() << "\n";
    return 0;
}

// ----------------------------------------------------------------- parent

// The parent's environment without this program's own variables.
std::vector<std::string> base_env() {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "PHYSMEM_ALIAS_", 14) != 0) env.emplace_back(*e);
    return env;
}

// One padding's point from its children (one per round; same environment, so with ASLR
// off the same addresses): every repetition of every round, their best, median and worst,
// and the first child's addresses.
Json summarize(const std::vector<Json>& children, std::size_t pad) {
    std::vector<double> v;
    Json cycles = nullptr, alias = nullptr;   // the lowest count seen (null: not counted)
    bool ok = true;
    auto lowest = [](Json& best, const Json& x) {
        if (!x.is_null() && (best.is_null() || x.get<double>() < best.get<double>())) best = x;
    };
    for (const Json& c : children) {
        for (double x : c["ns_per_iter"]) v.push_back(x);
        for (const Json& x : c["cycles_per_iter"]) lowest(cycles, x);
        for (const Json& x : c["alias_per_iter"]) lowest(alias, x);
        const bool fixed = c["aslr"] == "off";   // with ASLR on, addresses move between runs
        ok = ok && c["counts_ok"].get<bool>() && (!fixed || c["low12"] == children[0]["low12"]);
    }
    Json all = v;
    std::sort(v.begin(), v.end());
    const Json& c = children[0];
    return Json{{"pad", pad}, {"env_bytes", c["env_bytes"]}, {"aslr", c["aslr"]}, {"ns_per_iter", all},
                {"min_ns", v.front()}, {"median_ns", v[v.size() / 2]}, {"max_ns", v.back()},
                {"cycles_per_iter", cycles}, {"alias_per_iter", alias},
                {"low12", c["low12"]}, {"counts_ok", ok}};
}

// -1 for 'linked', else the byte offset (exits 2 when invalid).
int counter_place(const std::string& v) {
    if (v == "linked") return -1;
    char* end = nullptr;
    long off = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || off < 0 || off > 64 || off % 4)
        lab::usage_error(kSpec, "--param counters: 'linked' or a multiple of 4 in 0..64, not '" + v + "'");
    return static_cast<int>(off);
}

// Rounds run the whole sweep one after the other, so a burst of interference from other
// processes hits one round of a padding, not all of them.
Json sweep(const lab::Settings& s, std::size_t step, int iters, int place, unsigned rounds, Json* counters,
           bool* ok) {
    std::vector<std::string> env = base_env();
    env.push_back(std::string(kChildVar) + "=" + std::to_string(iters) + ":" + std::to_string(s.reps) + ":" +
                  std::to_string(s.warmup) + ":" + std::to_string(place));
    env.emplace_back();
    std::vector<std::vector<Json>> got(s.size_bytes / step + 1);
    for (unsigned r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < got.size(); ++i) {
            env.back() = std::string(kPadVar) + "=" + std::string(i * step, 'x');
            std::string out = lab::process::run_capture(lab::process::kSelfExe, {"physmem_lab_alias_env"}, env);
            got[i].push_back(Json::parse(out));
        }
    Json points = Json::array();
    *counters = got[0][0]["counters"];
    for (std::size_t i = 0; i < got.size(); ++i) {
        points.push_back(summarize(got[i], i * step));
        *ok = *ok && points.back()["counts_ok"].get<bool>();
    }
    return points;
}

void body(lab::Context& ctx) {
    const lab::Settings& s = ctx.settings();
    const std::size_t step = s.param_size("step");
    const std::size_t iters = s.param_size("iters");
    if (step == 0) lab::usage_error(kSpec, "--param step: must be >= 1 byte");
    if (iters == 0 || iters > (1u << 30)) lab::usage_error(kSpec, "--param iters: 1 .. 2^30");
    if (s.size_bytes > (1u << 20)) lab::usage_error(kSpec, "--size: the padding sweep goes up to 1 MiB at most");
    if (s.aslr) {
        ctx.note("--aslr on: the children keep the kernel's randomisation; the sweep is not deterministic");
    } else if (lab::process::aslr_active()) {
        bool set = lab::process::set_no_randomize(true);
        ctx.note(set ? "ASLR was on: ADDR_NO_RANDOMIZE set for the children"
                     : "ASLR is on and ADDR_NO_RANDOMIZE could not be set: the sweep is not deterministic");
    }
    const int place = counter_place(s.param("counters"));
    const std::size_t rounds = s.param_size("rounds");
    if (rounds < 1 || rounds > 20) lab::usage_error(kSpec, "--param rounds: 1 .. 20");
    micro_place(place);
    ctx.set_elements(iters);
    const int n = static_cast<int>(iters);
    ctx.measure(iters, [&] { return static_cast<std::uint64_t>(micro_run(n, nullptr)); });
    bool ok = true;
    MicroAddrs where;
    timed_run(n, &where, &ok);
    Json counters;
    Json points = sweep(s, step, n, place, static_cast<unsigned>(rounds), &counters, &ok);
    ctx.set_field("env_sweep", Json{{"step", step}, {"iters", iters}, {"rounds", rounds}, {"max_pad", s.size_bytes}, {"counters", counters},
                                    {"parent_low12", low12_json(where)}, {"points", points}});
    ctx.checksum(static_cast<std::uint64_t>(micro_run(n, nullptr)));
    ctx.verify(ok, "every run (parent and each child) moved the three counters by exactly 3 * iters, and, with ASLR off, every round of a padding saw the same addresses");
}

}  // namespace

int main(int argc, char** argv) {
    if (const char* orders = std::getenv(kChildVar)) return child_main(orders);
    return lab::run(kSpec, argc, argv, body);
}
