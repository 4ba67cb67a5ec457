// tools/tlbsim/validate.cpp — analytic cases on the presets' own arrays, pages of the
// preset's granule (a tag's bytes are page_shift(m, s): 16 KiB, 32 MiB ... on ARM granules):
//  - a sequential scan touches each page once: L1 misses = walks = pages (cold, pages far
//    above every TLB level), per page size the preset holds in its L1;
//  - the first reference on a cold machine reads one entry per level down to the page's
//    leaf: levels + 1 - leaf_level(m, s) (5-level and 3-level walks included);
//  - uniform random references over N 4 KiB pages, N far above the entries: the L1 4 KiB
//    array alone (the modelled replacement is LRU) misses at 1 - entries / N, within 2%;
//  - an array of 1 GiB pages no larger than the L1's 1 GiB entries never misses after warm-up;
//  - what-if page sizes no hardware has (kWhatIfShifts, physmem/tlbsim/what_if.hpp), each
//    on the preset's 4 KiB arrays: a sequential scan over N bytes on a cold TLB misses and
//    walks exactly N / B times; the first reference on a cold machine reads walk_levels(B)
//    entries; uniform random references over (L1 4 KiB entries) x B bytes, after one touch
//    of each page, never miss the L1.
#include "validate.hpp"

#include <cmath>
#include <random>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"

namespace physmem::tlbsim::tool {

namespace {

using Json = nlohmann::ordered_json;
constexpr std::uint64_t kBase = std::uint64_t{1} << 42;

Json make_case(const std::string& name, const std::string& preset, const std::string& quantity, double expected,
               double got, double tolerance) {
    bool ok = tolerance == 0 ? got == expected : std::fabs(got - expected) <= tolerance * std::fabs(expected);
    return {{"name", name}, {"preset", preset},     {"quantity", quantity},
            {"expected", expected}, {"got", got}, {"tolerance", tolerance}, {"ok", ok}};
}

// The L1 array holding size s, or nullptr.
const ArrayConfig* l1_array(const MachineConfig& m, PageSize s) {
    for (const ArrayConfig& a : m.l1.arrays)
        if (a.sizes & size_bit(s)) return &a;
    return nullptr;
}

unsigned total_entries(const MachineConfig& m, PageSize s) {
    unsigned n = 0;
    for (const TlbLevelConfig* l : {&m.l1, &m.l2})
        for (const ArrayConfig& a : l->arrays)
            if (a.sizes & size_bit(s)) n += a.entries;
    return n;
}

void sequential(const MachineConfig& m, PageSize s, Json& out) {
    if (!l1_array(m, s)) return;
    const std::uint64_t pages = std::max<std::uint64_t>(4 * total_entries(m, s), 4096);
    const std::uint64_t page = std::uint64_t{1} << page_shift(m, s), step = std::max<std::uint64_t>(page / 64, 64);
    Simulator sim(m);
    for (std::uint64_t p = 0; p < pages; ++p)
        for (std::uint64_t off = 0; off < page; off += step) sim.access(kBase + p * page + off, s);
    std::string name = "sequential scan of " + std::to_string(pages) + " " + std::string(to_string(s)) + " pages (" +
                       size_name(page) + ")";
    out.push_back(make_case(name, m.name, "l1_misses", double(pages), double(sim.stats().l1_misses), 0));
    out.push_back(make_case(name, m.name, "walks", double(pages), double(sim.stats().walks), 0));
}

void random_4k(const MachineConfig& m, Json& out) {
    const ArrayConfig* a = l1_array(m, PageSize::k4K);
    if (!a) return;
    MachineConfig one;
    one.name = m.name;
    one.l1.arrays = {*a};
    const std::uint64_t pages = 16 * std::uint64_t{a->entries};
    Simulator sim(one);
    std::mt19937_64 rng(1);
    auto touch = [&] { sim.access(kBase + (rng() % pages) * 4096, PageSize::k4K); };
    for (int i = 0; i < 100000; ++i) touch();
    sim.reset_stats();
    for (int i = 0; i < 2000000; ++i) touch();
    double rate = double(sim.stats().l1_misses) / double(sim.stats().accesses);
    out.push_back(make_case("random over " + std::to_string(pages) + " 4k pages, L1 4k array (" +
                                std::to_string(a->entries) + " entries) alone",
                            m.name, "l1_miss_rate", 1.0 - double(a->entries) / double(pages), rate, 0.02));
}

void first_walk(const MachineConfig& m, PageSize s, Json& out) {
    Simulator sim(m);
    sim.access(kBase, s);
    out.push_back(make_case("first walk, " + std::string(to_string(s)) + " page (" + size_name(std::uint64_t{1} << page_shift(m, s)) +
                                "), " + std::to_string(m.levels) + "-level table",
                            m.name, "walk_refs", double(m.levels + 1 - leaf_level(m, s)), double(sim.stats().walk_refs), 0));
}

void one_gig(const MachineConfig& m, Json& out) {
    const ArrayConfig* a = l1_array(m, PageSize::k1G);
    if (!a) return;
    const unsigned shift = page_shift(m, PageSize::k1G);
    const std::uint64_t pages = a->entries, bytes = pages << shift;
    Simulator sim(m);
    for (std::uint64_t p = 0; p < pages; ++p) sim.access(kBase + (p << shift), PageSize::k1G);
    sim.reset_stats();
    std::mt19937_64 rng(2);
    for (int i = 0; i < 1000000; ++i) sim.access(kBase + rng() % bytes, PageSize::k1G);
    out.push_back(make_case("random over " + std::to_string(pages) + " 1g pages (" + size_name(std::uint64_t{1} << shift) +
                                ") after warm-up",
                            m.name, "l1_misses",
                            0, double(sim.stats().l1_misses), 0));
}

// 8 KiB, 64 KiB, 256 KiB, 32 MiB, 512 MiB.
constexpr unsigned kWhatIfShifts[] = {13, 16, 18, 25, 29};

void what_if_sequential(const MachineConfig& base, unsigned shift, Json& out) {
    const std::uint64_t page = std::uint64_t{1} << shift, pages = 2 * std::uint64_t(total_entries(base, PageSize::k4K));
    Simulator sim(with_page_size(base, page));
    for (std::uint64_t p = 0; p < pages; ++p)
        for (std::uint64_t off = 0; off < page; off += page / 8) sim.access(kBase + p * page + off, PageSize::k4K);
    const std::string name = "what-if " + size_name(page) + " pages: sequential scan over " +
                             std::to_string(pages) + " x " + size_name(page) + " bytes, cold";
    out.push_back(make_case(name, base.name, "l1_misses", double(pages), double(sim.stats().l1_misses), 0));
    out.push_back(make_case(name, base.name, "walks", double(pages), double(sim.stats().walks), 0));
}

void what_if_first_walk(const MachineConfig& base, unsigned shift, Json& out) {
    Simulator sim(with_page_size(base, std::uint64_t{1} << shift));
    sim.access(kBase, PageSize::k2M);  // the tag does not matter on a what-if machine
    out.push_back(make_case("what-if " + size_name(std::uint64_t{1} << shift) + " pages: first walk, " +
                                std::to_string(base.levels) + "-level address space",
                            base.name, "walk_refs", double(walk_levels(base, shift)),
                            double(sim.stats().walk_refs), 0));
}

void what_if_random(const MachineConfig& base, unsigned shift, Json& out) {
    const ArrayConfig* a = l1_array(base, PageSize::k4K);
    if (!a) return;
    const std::uint64_t page = std::uint64_t{1} << shift, pages = a->entries;
    Simulator sim(with_page_size(base, page));
    for (std::uint64_t p = 0; p < pages; ++p) sim.access(kBase + p * page, PageSize::k4K);
    sim.reset_stats();
    std::mt19937_64 rng(3);
    for (int i = 0; i < 100000; ++i) sim.access(kBase + rng() % (pages * page), PageSize::k4K);
    out.push_back(make_case("what-if " + size_name(page) + " pages: random over " + std::to_string(pages) + " x " +
                                size_name(page) + " bytes (the L1 4k array's entries) after warm-up",
                            base.name, "l1_misses", 0, double(sim.stats().l1_misses), 0));
}

}  // namespace

Json validate_presets() {
    Json cases = Json::array();
    for (const std::string& name : preset_names()) {
        const MachineConfig& m = preset(name);
        if (!m.translate) continue;
        for (unsigned s = 0; s < kPageSizes; ++s) sequential(m, PageSize(s), cases);
        for (unsigned s = 0; s < kPageSizes; ++s) first_walk(m, PageSize(s), cases);
        if (m.granule_shift == 12)
            for (unsigned s = 0; s < kPageSizes; ++s) first_walk(with_five_levels(m), PageSize(s), cases);
        random_4k(m, cases);
        one_gig(m, cases);
        for (unsigned shift : kWhatIfShifts) {
            what_if_sequential(m, shift, cases);
            what_if_first_walk(m, shift, cases);
            what_if_random(m, shift, cases);
        }
    }
    bool ok = !cases.empty();
    for (const Json& c : cases) ok = ok && c["ok"].get<bool>();
    return {{"cases", cases}, {"ok", ok}};
}

}  // namespace physmem::tlbsim::tool
