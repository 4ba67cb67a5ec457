// tools/tlbsim/bench.cpp — throughput patterns: a line-by-line scan of 4 KiB pages (mostly
// the same-page fast path), GUPS-like random references over 1 GiB of 4 KiB pages (every
// reference misses L1 and most walk), and a tree array's random reads on 2 MiB pages (two
// software-walk loads in small inner blocks, then the element).
#include "bench.hpp"

#include <algorithm>
#include <chrono>
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

double best_seconds(const MachineConfig& m, const std::vector<Entry>& trace, unsigned reps) {
    double best = std::numeric_limits<double>::infinity();
    for (unsigned r = 0; r < std::max(reps, 1u); ++r) {
        Simulator sim(m);
        auto t0 = std::chrono::steady_clock::now();
        sim.run(trace);
        auto t1 = std::chrono::steady_clock::now();
        if (sim.stats().accesses != trace.size()) throw std::logic_error("bench: references lost");
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    return best;
}

}  // namespace

Json bench(const MachineConfig& m, std::uint64_t refs, unsigned reps) {
    Json patterns = Json::array();
    double lowest = std::numeric_limits<double>::infinity();
    struct Pattern {
        const char* name;
        std::vector<Entry> (*make)(std::uint64_t);
    };
    for (Pattern p : {Pattern{"sequential-4k", sequential_4k}, Pattern{"random-4k-1gib", random_4k},
                      Pattern{"tree-walk-2m", tree_walk_2m}}) {
        std::vector<Entry> trace = p.make(refs);
        double s = best_seconds(m, trace, reps);
        double rate = double(trace.size()) / s;
        lowest = std::min(lowest, rate);
        patterns.push_back({{"pattern", p.name}, {"refs", trace.size()}, {"seconds", s}, {"refs_per_second", rate}});
    }
    return {{"patterns", patterns}, {"min_refs_per_second", lowest}};
}

}  // namespace physmem::tlbsim::tool
