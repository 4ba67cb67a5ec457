// auto off x86 (detect_arm.cpp): /proc/cpuinfo texts as arm64 kernels print them, with
// each page granule; a known core, a core without a preset, another implementer, and a
// text that names no Arm CPU. Every choice is a valid machine with a reason.
#include <gtest/gtest.h>

#include <string>

#include "physmem/tlbsim/detect.hpp"
#include "physmem/tlbsim/simulator.hpp"

namespace {

using namespace physmem::tlbsim;

// Two processors' blocks, as arm64's /proc/cpuinfo prints them.
std::string cpuinfo(const char* implementer, const char* part) {
    std::string one = std::string("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull\n") +
                      "CPU implementer\t: " + implementer + "\nCPU architecture: 8\nCPU variant\t: 0x1\n" +
                      "CPU part\t: " + part + "\nCPU revision\t: 1\n\n";
    return one + one;
}

bool mentions(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

AutoChoice choose(const std::string& text, std::size_t page) {
    std::optional<AutoChoice> c = choose_machine_from_cpuinfo(text, page);
    EXPECT_TRUE(c.has_value());
    if (!c) return {};
    EXPECT_NO_THROW(Simulator{c->machine}) << c->reason;
    EXPECT_FALSE(c->reason.empty());
    return *c;
}

TEST(TlbAutoArm, KnownNeoverseCoresTakeTheirPresets) {
    struct Case {
        const char* part;
        const char* preset;
    } cases[] = {{"0xd0c", "neoverse-n1"}, {"0xd40", "neoverse-v1"}, {"0xd4f", "neoverse-v2"}};
    for (const Case& k : cases) {
        AutoChoice c = choose(cpuinfo("0x41", k.part), 4096);
        EXPECT_EQ(c.machine.name, k.preset) << c.reason;
        EXPECT_EQ(c.source, "table") << c.reason;
        EXPECT_EQ(c.machine.granule_shift, 12u);
        EXPECT_TRUE(mentions(c.cpu, "0x41")) << c.cpu;
    }
}

TEST(TlbAutoArm, TheKernelsPageSizeIsTheGranule) {
    AutoChoice k16 = choose(cpuinfo("0x41", "0xd4f"), 16384), k64 = choose(cpuinfo("0x41", "0xd0c"), 65536);
    EXPECT_EQ(k16.machine.name, "neoverse-v2-16k");
    EXPECT_EQ(k16.machine.granule_shift, 14u);
    EXPECT_EQ(k64.machine.name, "neoverse-n1-64k");
    EXPECT_EQ(k64.machine.levels, 3u);  // 64 KiB granule, 48-bit VA: three levels
    EXPECT_TRUE(mentions(k64.reason, "64 KiB pages")) << k64.reason;
    // A page size the model has no granule for: 4 KiB assumed, and said.
    AutoChoice odd = choose(cpuinfo("0x41", "0xd0c"), 8192);
    EXPECT_EQ(odd.machine.granule_shift, 12u);
    EXPECT_TRUE(mentions(odd.reason, "assumed")) << odd.reason;
}

TEST(TlbAutoArm, CoresWithoutAPresetTakeTheNearestAndSaySo) {
    AutoChoice n2 = choose(cpuinfo("0x41", "0xd49"), 4096);
    EXPECT_EQ(n2.machine.name, "neoverse-n1");
    EXPECT_EQ(n2.source, "nearest");
    EXPECT_TRUE(mentions(n2.reason, "Neoverse N2") && mentions(n2.reason, "no preset")) << n2.reason;
    AutoChoice unknown = choose(cpuinfo("0x41", "0xfff"), 4096);
    EXPECT_EQ(unknown.source, "nearest");
    EXPECT_TRUE(mentions(unknown.reason, "generic")) << unknown.reason;
    // Another implementer (Ampere's own cores: 0xC0): generic, named in the reason.
    AutoChoice ampere = choose(cpuinfo("0xc0", "0xac3"), 4096);
    EXPECT_EQ(ampere.source, "nearest");
    EXPECT_TRUE(mentions(ampere.reason, "0xC0")) << ampere.reason;
}

TEST(TlbAutoArm, TextsThatNameNoArmCpuChooseNothing) {
    EXPECT_FALSE(choose_machine_from_cpuinfo("", 4096));
    EXPECT_FALSE(choose_machine_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n", 4096));
    EXPECT_FALSE(choose_machine_from_cpuinfo("CPU implementer\t: banana\n", 4096));
    // A key that only starts like the field is not the field.
    EXPECT_FALSE(choose_machine_from_cpuinfo("CPU implementers\t: 0x41\n", 4096));
}

}  // namespace
