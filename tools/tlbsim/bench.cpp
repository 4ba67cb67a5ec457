// tools/tlbsim/bench.cpp — throughput patterns: a line-by-line scan of 4 KiB pages (mostly
// the same-page fast path), GUPS-like random references over 1 GiB of 4 KiB pages (every
// reference misses L1 and most walk), and a tree array's random reads on 2 MiB pages (two
// software-walk loads in small inner blocks, then the element).
#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <random>
#include <vector>

#include "physmem/tlbsim/simulator.hpp"

namespace physmem::tlbsim::tool {

namespace {

using Json = nlohmann::ordered_json;
constexpr std::uint64_t kBase = std::uint64_t{1} << 42;

std::vector<Entry> sequential_4k(std::uint64_t refs) {
    std::vector<Entry> t(refs);
    for (std::uint64_t i = 0; i < refs; ++i) t[i] = Entry(kBase + i * 64, PageSize::k4K, Ref::data);
    return t;
}

std::vector<Entry> random_4k(std::uint64_t refs) {
    std::vector<Entry> t(refs);
    std::mt19937_64 rng(3);
    for (auto& e : t) e = Entry(kBase + (rng() & ((1ull << 30) - 1)), PageSize::k4K, Ref::data);
    return t;
}

// A depth-3 tree of 2 MiB blocks over 64 GiB: root and 8 inner blocks, then the leaf.
std::vector<Entry> tree_walk_2m(std::uint64_t refs) {
    std::vector<Entry> t;
    t.reserve(refs);
    std::mt19937_64 rng(4);
    const std::uint64_t inner = kBase, leaves = kBase + (1ull << 36);
    while (t.size() + 3 <= refs) {
        std::uint64_t i = rng() & ((1ull << 36) - 1), leaf = i >> 21;
        t.emplace_back(inner + (leaf >> 18) * 8, PageSize::k2M, Ref::sw_walk);
        t.emplace_back(inner + (2ull << 20) * (1 + (leaf >> 18)) + (leaf & ((1 << 18) - 1)) * 8, PageSize::k2M,
                       Ref::sw_walk);
        t.emplace_back(leaves + i, PageSize::k2M, Ref::data);
    }
    return t;
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The best wall and the best CPU time (this thread's) of a machine's runs of one pattern: on
// a shared machine the wall time also counts the time other processes held the CPU; the CPU
// time does not.
struct Best {
    double wall = std::numeric_limits<double>::infinity();
    double cpu = std::numeric_limits<double>::infinity();
};

void time_once(const MachineConfig& m, const std::vector<Entry>& trace, Best& best) {
    Simulator sim(m);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = thread_cpu_seconds();
    sim.run(trace);
    double c1 = thread_cpu_seconds();
    auto t1 = std::chrono::steady_clock::now();
    if (sim.stats().accesses != trace.size()) throw std::logic_error("bench: references lost");
    best.wall = std::min(best.wall, std::chrono::duration<double>(t1 - t0).count());
    best.cpu = std::min(best.cpu, c1 - c0);
}

}  // namespace

std::vector<Json> bench(const std::vector<MachineConfig>& machines, std::uint64_t refs, unsigned reps) {
    struct Pattern {
        const char* name;
        std::vector<Entry> (*make)(std::uint64_t);
    };
    std::vector<Json> out(machines.size());
    for (std::size_t i = 0; i < machines.size(); ++i)
        out[i] = {{"engine", Simulator(machines[i]).engine()}, {"patterns", Json::array()}};
    for (Pattern p : {Pattern{"sequential-4k", sequential_4k}, Pattern{"random-4k-1gib", random_4k},
                      Pattern{"tree-walk-2m", tree_walk_2m}}) {
        std::vector<Entry> trace = p.make(refs);
        std::vector<Best> best(machines.size());
        for (unsigned r = 0; r < std::max(reps, 1u); ++r)  // rounds: a slow spell costs each machine one run
            for (std::size_t i = 0; i < machines.size(); ++i) time_once(machines[i], trace, best[i]);
        for (std::size_t i = 0; i < machines.size(); ++i) {
            const double n = double(trace.size());
            out[i]["patterns"].push_back({{"pattern", p.name}, {"refs", trace.size()}, {"seconds", best[i].wall},
                                          {"refs_per_second", n / best[i].wall}, {"cpu_seconds", best[i].cpu},
                                          {"refs_per_cpu_second", n / best[i].cpu}});
        }
    }
    for (Json& o : out) {
        double lowest = std::numeric_limits<double>::infinity(), lowest_cpu = lowest;
        for (const Json& p : o["patterns"]) {
            lowest = std::min(lowest, p["refs_per_second"].get<double>());
            lowest_cpu = std::min(lowest_cpu, p["refs_per_cpu_second"].get<double>());
        }
        o["min_refs_per_second"] = lowest;
        o["min_refs_per_cpu_second"] = lowest_cpu;
    }
    return out;
}

Json bench(const MachineConfig& m, std::uint64_t refs, unsigned reps) { return bench(std::vector{m}, refs, reps)[0]; }

}  // namespace physmem::tlbsim::tool
