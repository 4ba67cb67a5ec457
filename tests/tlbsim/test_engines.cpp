// The simulator's compiled paths (Engine::fastest) against its generic path: every preset,
// with 5-level paging and on what-if page sizes, counts exactly what the generic path counts
// on traces that reach every outcome (L1 and L2 hits, walks from every level, walk-cache
// entries evicted, every page size, software-walk loads), through run() and access() alike;
// and every preset does get a compiled path.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"

namespace {

using namespace physmem::tlbsim;

constexpr std::uint64_t kBase = std::uint64_t{1} << 42;

// Random references over 2^span_bits bytes, each tagged with a size drawn from `sizes` (bits
// of size_bit) and, one in `walk_every`, as a software walk's load; runs of `run` lines of
// the same page between the jumps, so the last-page shortcut is taken too.
std::vector<Entry> trace(unsigned seed, unsigned span_bits, std::uint8_t sizes, unsigned walk_every, unsigned run) {
    std::mt19937_64 rng(seed);
    std::vector<Entry> t;
    while (t.size() < 60000) {
        unsigned s;
        do s = unsigned(rng() % kPageSizes);
        while (!(sizes & size_bit(PageSize(s))));
        const std::uint64_t addr = kBase + (rng() & ((std::uint64_t{1} << span_bits) - 1));
        const Ref kind = rng() % walk_every == 0 ? Ref::sw_walk : Ref::data;
        for (unsigned i = 0; i < run; ++i) t.emplace_back(addr + 64 * i, PageSize(s), kind);
    }
    return t;
}

std::vector<std::vector<Entry>> traces() {
    const std::uint8_t k4k = size_bit(PageSize::k4K), all = 7;
    return {
        trace(1, 30, k4k, 1 << 30, 1),   // GUPS over 1 GiB: L1 and L2 misses, PDEs mostly cached
        trace(2, 38, k4k, 7, 1),         // 256 GiB: PDE and PDPE misses
        trace(3, 46, all, 5, 3),         // 64 TiB, every size: PML4E misses, every leaf level
        trace(4, 24, all, 3, 16),        // 16 MiB, every size: mostly L1 and L2 hits
    };
}

void expect_same(const Stats& a, const Stats& b, const std::string& what) {
    EXPECT_EQ(a.accesses, b.accesses) << what;
    EXPECT_EQ(a.sw_walk_loads, b.sw_walk_loads) << what;
    EXPECT_EQ(a.accesses_by_size, b.accesses_by_size) << what;
    EXPECT_EQ(a.l1_misses_by_size, b.l1_misses_by_size) << what;
    EXPECT_EQ(a.l1_misses, b.l1_misses) << what;
    EXPECT_EQ(a.l2_hits, b.l2_hits) << what;
    EXPECT_EQ(a.walks, b.walks) << what;
    EXPECT_EQ(a.walks_by_size, b.walks_by_size) << what;
    EXPECT_EQ(a.walk_refs, b.walk_refs) << what;
    EXPECT_EQ(a.walk_refs_by_level, b.walk_refs_by_level) << what;
    EXPECT_EQ(a.pwc_hits_by_level, b.pwc_hits_by_level) << what;
}

// Every preset's machine, with 5 levels where its granule allows, and on what-if pages.
std::vector<MachineConfig> machines() {
    std::vector<MachineConfig> out;
    for (const std::string& n : preset_names()) {
        const MachineConfig& m = preset(n);
        if (!m.translate) continue;
        out.push_back(m);
        if (m.granule_shift == 12) out.push_back(with_five_levels(m));
        for (std::uint64_t b : {std::uint64_t{64} << 10, std::uint64_t{2} << 20, std::uint64_t{1} << 30})
            out.push_back(with_page_size(m, b));
    }
    return out;
}

TEST(TlbSimEngines, EveryPresetHasACompiledPath) {
    for (const std::string& n : preset_names()) {
        const MachineConfig& m = preset(n);
        if (!m.translate) continue;
        EXPECT_NE(Simulator(m).engine(), "generic") << n;
        EXPECT_EQ(Simulator(m, Engine::generic).engine(), "generic") << n;
    }
}

TEST(TlbSimEngines, CompiledPathsCountAsTheGenericPath) {
    const auto ts = traces();
    for (const MachineConfig& m : machines()) {
        Simulator fast(m), generic(m, Engine::generic);
        const std::string what = m.name + " levels " + std::to_string(m.levels) + " what-if " +
                                 std::to_string(m.what_if_shift) + " (" + fast.engine() + ")";
        for (std::size_t i = 0; i < ts.size(); ++i) {
            fast.run(ts[i]);
            generic.run(ts[i]);
            expect_same(fast.stats(), generic.stats(), what + ", trace " + std::to_string(i));
        }
        if (testing::Test::HasFailure()) return;  // one machine's report, not hundreds
    }
}

TEST(TlbSimEngines, AccessOneByOneCountsAsRun) {
    const auto ts = traces();
    for (const char* n : {"skylake", "zen4", "neoverse-n1"}) {
        Simulator one(preset(n)), all(preset(n));
        for (const auto& t : ts) {
            for (Entry e : t) one.access(e);
            all.run(t);
        }
        expect_same(one.stats(), all.stats(), n);
    }
}

}  // namespace
