// The presets: every one is a valid machine (4 and 5 levels, with caches), the names are the
// documented ones, the CPU mapping covers the generations, and a few numbers the sources
// state exactly are what the presets hold.
#include <gtest/gtest.h>

#include "physmem/tlbsim/simulator.hpp"

namespace {

using namespace physmem::tlbsim;

TEST(TlbPresets, EveryPresetIsAValidMachineWithSources) {
    std::vector<std::string> names = preset_names();
    ASSERT_EQ(names, (std::vector<std::string>{"skylake", "skylake-sp", "zen1", "zen2", "zen3", "zen4", "zen5", "none"}));
    for (const std::string& n : names) {
        const MachineConfig& m = preset(n);
        EXPECT_EQ(m.name, n);
        EXPECT_NO_THROW(validate(m)) << n;
        EXPECT_NO_THROW(Simulator{with_caches(with_five_levels(m))}) << n;
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

}  // namespace
