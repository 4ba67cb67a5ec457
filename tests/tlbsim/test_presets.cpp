// The presets: every one is a valid machine (4 and 5 levels, with caches), the names are the
// documented ones, the CPU mapping covers the generations, and a few numbers the sources
// state exactly are what the presets hold.
#include <gtest/gtest.h>

#include "physmem/tlbsim/simulator.hpp"
#include "physmem/tlbsim/what_if.hpp"

namespace {

using namespace physmem::tlbsim;

TEST(TlbPresets, EveryPresetIsAValidMachineWithSources) {
    std::vector<std::string> names = preset_names();
    ASSERT_EQ(names, (std::vector<std::string>{"skylake", "skylake-sp", "icelake-sp", "sapphire-rapids", "granite-rapids",
                                                "zen1", "zen2", "zen3", "zen4", "zen5", "neoverse-n1", "neoverse-n1-16k",
                                                "neoverse-n1-64k", "neoverse-v1", "neoverse-v1-16k", "neoverse-v1-64k",
                                                "neoverse-v2", "neoverse-v2-16k", "neoverse-v2-64k", "none"}));
    for (const std::string& n : names) {
        const MachineConfig& m = preset(n);
        EXPECT_EQ(m.name, n);
        EXPECT_NO_THROW(validate(m)) << n;
        if (m.granule_shift == 12) EXPECT_NO_THROW(Simulator{with_caches(with_five_levels(m))}) << n;
        else EXPECT_THROW(with_five_levels(m), std::invalid_argument) << n;  // LA57 is x86's, 4 KiB only
        EXPECT_NO_THROW(Simulator{with_caches(m)}) << n;
        EXPECT_FALSE(m.sources.empty() && m.translate) << n << " cites nothing";
    }
    EXPECT_FALSE(preset("none").translate);
}

TEST(TlbPresets, UnknownNameListsTheKnownOnes) {
    try {
        preset("zen9");
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("skylake-sp"), std::string::npos) << e.what();
    }
}

TEST(TlbPresets, CpuFamiliesMapToTheirGeneration) {
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x55), "skylake-sp");
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x5E), "skylake");
    EXPECT_EQ(preset_for_cpu("AuthenticAMD", 0x17, 0x01), "zen1");
    EXPECT_EQ(preset_for_cpu("AuthenticAMD", 0x17, 0x31), "zen2");
    EXPECT_EQ(preset_for_cpu("AuthenticAMD", 0x19, 0x01), "zen3");
    EXPECT_EQ(preset_for_cpu("AuthenticAMD", 0x19, 0x11), "zen4");
    EXPECT_EQ(preset_for_cpu("AuthenticAMD", 0x1A, 0x02), "zen5");
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x6A), "icelake-sp");       // Ice Lake-X
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x6C), "icelake-sp");       // Ice Lake-D
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x7E), "icelake-sp");       // Ice Lake-L: same TLBs
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x8F), "sapphire-rapids");  // Sapphire Rapids-X
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0xCF), "sapphire-rapids");  // Emerald Rapids-X
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x97), "sapphire-rapids");  // Alder Lake P-core
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0xAD), "granite-rapids");   // Granite Rapids-X
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0xAE), "granite-rapids");   // Granite Rapids-D
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0xAC), "granite-rapids");   // Meteor Lake P-core
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0xA7), std::nullopt);       // left to the features
    EXPECT_EQ(preset_for_cpu("GenuineIntel", 6, 0x01), std::nullopt);
    EXPECT_EQ(preset_for_cpu("SomeOtherVendor", 6, 0x55), std::nullopt);
}

TEST(TlbPresets, DocumentedNumbers) {
    const MachineConfig& s = preset("skylake");
    ASSERT_EQ(s.l2.arrays.size(), 2u);
    EXPECT_EQ(s.l2.arrays[0].entries, 1536u);  // not a power of two: the reason for any entry count
    EXPECT_EQ(s.l2.arrays[0].ways, 12u);
    EXPECT_EQ(s.l1.arrays[0].entries, 64u);
    const MachineConfig& z = preset("zen5");
    ASSERT_EQ(z.l1.arrays.size(), 1u);
    EXPECT_EQ(z.l1.arrays[0].entries, 96u);
    EXPECT_EQ(z.l1.arrays[0].sizes, 7u);
}

// Each new preset holds the sizes its comment states (presets.cpp), page size by page size.
TEST(TlbPresets, NewPresetsHoldTheirStatedSizes) {
    struct Want {
        const char* name;
        unsigned l1_4k, l1_4k_ways, l1_2m, l1_1g, l2_4k, l2_4k_ways, l2_2m, l2_1g;
    };
    // The STLB as CPUID leaf 0x18 reports it on these cores: two 1024-entry 8-way arrays
    // (4K+2M, 4K+1G), modelled per size: 4K in both (2048 16-way), 2M and 1G in one each.
    const Want wants[] = {
        {"icelake-sp", 64, 4, 32, 8, 2048, 16, 1024, 1024},
        {"sapphire-rapids", 96, 6, 32, 8, 2048, 16, 1024, 1024},
        {"granite-rapids", 96, 6, 32, 8, 2048, 16, 1024, 1024},
    };
    auto holding = [](const TlbLevelConfig& l, PageSize s) -> const ArrayConfig* {
        for (const ArrayConfig& a : l.arrays)
            if (a.sizes & size_bit(s)) return &a;
        return nullptr;
    };
    for (const Want& w : wants) {
        const MachineConfig& m = preset(w.name);
        ASSERT_TRUE(holding(m.l1, PageSize::k4K) && holding(m.l1, PageSize::k2M) && holding(m.l1, PageSize::k1G)) << w.name;
        EXPECT_EQ(holding(m.l1, PageSize::k4K)->entries, w.l1_4k) << w.name;
        EXPECT_EQ(holding(m.l1, PageSize::k4K)->ways, w.l1_4k_ways) << w.name;
        EXPECT_EQ(holding(m.l1, PageSize::k2M)->entries, w.l1_2m) << w.name;
        EXPECT_EQ(holding(m.l1, PageSize::k1G)->entries, w.l1_1g) << w.name;
        ASSERT_TRUE(holding(m.l2, PageSize::k4K) && holding(m.l2, PageSize::k2M) && holding(m.l2, PageSize::k1G))
            << w.name;
        EXPECT_EQ(holding(m.l2, PageSize::k4K)->entries, w.l2_4k) << w.name;
        EXPECT_EQ(holding(m.l2, PageSize::k4K)->ways, w.l2_4k_ways) << w.name;
        EXPECT_EQ(holding(m.l2, PageSize::k2M)->entries, w.l2_2m) << w.name;
        EXPECT_EQ(holding(m.l2, PageSize::k2M)->ways, 8u) << w.name;
        EXPECT_EQ(holding(m.l2, PageSize::k1G)->entries, w.l2_1g) << w.name;
        EXPECT_EQ(m.levels, 4u) << w.name;  // LA57 comes from detection or --levels 5
        EXPECT_EQ(m.granule_shift, 12u) << w.name;
    }
    // Neoverse: one fully associative L1 (V1's 40 entries: 48 from V2 on) and one L2 array,
    // each for every size.
    const struct {
        const char* core;
        unsigned l1, l2, ways;
    } arm[] = {{"neoverse-n1", 48, 1280, 5}, {"neoverse-v1", 40, 2048, 8}, {"neoverse-v2", 48, 2048, 8}};
    for (const auto& c : arm) {
        for (const char* suffix : {"", "-16k", "-64k"}) {
            const std::string name = std::string(c.core) + suffix;
            const MachineConfig& m = preset(name);
            ASSERT_EQ(m.l1.arrays.size(), 1u) << name;
            EXPECT_EQ(m.l1.arrays[0].entries, c.l1) << name;
            EXPECT_EQ(m.l1.arrays[0].ways, 0u) << name;
            EXPECT_EQ(m.l1.arrays[0].sizes, 7u) << name;
            ASSERT_EQ(m.l2.arrays.size(), 1u) << name;
            EXPECT_EQ(m.l2.arrays[0].entries, c.l2) << name;
            EXPECT_EQ(m.l2.arrays[0].ways, c.ways) << name;
        }
    }
}

// ARMv8's granules (Arm ARM D8): base page, levels for 48-bit addresses, block sizes.
TEST(TlbPresets, ArmGranulesHaveTheirPagesLevelsAndBlocks) {
    const MachineConfig& g4 = preset("neoverse-n1");
    const MachineConfig& g16 = preset("neoverse-n1-16k");
    const MachineConfig& g64 = preset("neoverse-n1-64k");
    EXPECT_EQ(g4.levels, 4u);
    EXPECT_EQ(g16.levels, 4u);
    EXPECT_EQ(g64.levels, 3u);
    EXPECT_EQ(page_shift(g4, PageSize::k4K), 12u);
    EXPECT_EQ(page_shift(g4, PageSize::k2M), 21u);
    EXPECT_EQ(page_shift(g4, PageSize::k1G), 30u);
    EXPECT_EQ(page_shift(g16, PageSize::k4K), 14u);  // 16 KiB pages
    EXPECT_EQ(page_shift(g16, PageSize::k2M), 25u);  // 32 MiB blocks
    EXPECT_EQ(page_shift(g16, PageSize::k1G), 25u);  // no 64 GiB blocks with 48-bit addresses
    EXPECT_EQ(page_shift(g64, PageSize::k4K), 16u);  // 64 KiB pages
    EXPECT_EQ(page_shift(g64, PageSize::k2M), 29u);  // 512 MiB blocks
    EXPECT_EQ(page_shift(g64, PageSize::k1G), 29u);
    EXPECT_EQ(held_as(g64, PageSize::k1G), PageSize::k2M);
    EXPECT_EQ(address_bits(g16), 48u);
    EXPECT_EQ(address_bits(g64), 48u);
    EXPECT_EQ(address_bits(with_five_levels(preset("skylake"))), 57u);
    MachineConfig bad = g64;
    bad.levels = 4;
    EXPECT_THROW(validate(bad), std::invalid_argument);
    bad = g4;
    bad.granule_shift = 13;
    EXPECT_THROW(validate(bad), std::invalid_argument);
    EXPECT_THROW(with_granule(g4, 15), std::invalid_argument);
    // What-if page sizes walk the granule's tables: at B = the granule or its block, as the
    // hardware walks (what_if.hpp).
    EXPECT_EQ(walk_levels(g64, 16), 3u);
    EXPECT_EQ(walk_levels(g64, 29), 2u);
    EXPECT_EQ(walk_levels(g16, 14), 4u);
    EXPECT_EQ(walk_levels(g16, 25), 3u);
    EXPECT_EQ(walk_levels(g4, 12), walk_levels(12, 4));
}

// The walk a cold reference makes: one read per level down to the leaf. The 64 KiB granule
// walks 3 levels where the 4 KiB one walks 4 (the 16 KiB one also 4), and reaches 64 KiB
// pages; a sequential scan of the same bytes walks 16 times less often.
TEST(TlbPresets, A64KGranuleWalksFewerLevelsThanTheFourKOne) {
    for (const char* core : {"neoverse-n1", "neoverse-v1", "neoverse-v2"}) {
        const std::string c = core;
        auto first_walk = [](const MachineConfig& m) {
            Simulator sim(m);
            sim.access(std::uint64_t{1} << 40, PageSize::k4K);
            return sim.stats().walk_refs;
        };
        EXPECT_EQ(first_walk(preset(c)), 4u) << c;
        EXPECT_EQ(first_walk(preset(c + "-16k")), 4u) << c;
        EXPECT_EQ(first_walk(preset(c + "-64k")), 3u) << c;
        auto scan_walks = [](const MachineConfig& m) {
            Simulator sim(m);
            for (std::uint64_t off = 0; off < (std::uint64_t{256} << 20); off += 4096)
                sim.access((std::uint64_t{1} << 40) + off, PageSize::k4K);
            return sim.stats().walks;
        };
        EXPECT_EQ(scan_walks(preset(c)), 65536u) << c;       // 256 MiB / 4 KiB
        EXPECT_EQ(scan_walks(preset(c + "-16k")), 16384u) << c;  // / 16 KiB
        EXPECT_EQ(scan_walks(preset(c + "-64k")), 4096u) << c;   // / 64 KiB
    }
}

}  // namespace
