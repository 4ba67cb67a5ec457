// auto's selection (physmem/tlbsim/detect.hpp) on synthetic CPUID answers: a hidden leaf
// 0x18, an exposed one, legacy leaf 2 descriptors, an unknown family/model, AMD's leaves
// (as a Zen 4 reports them, and as a preset has them), an unknown vendor, and this CPU.
// Every case yields a valid machine and a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <utility>

#include "physmem/tlbsim/detect.hpp"
#include "physmem/tlbsim/simulator.hpp"

namespace {

using namespace physmem::tlbsim;

// A CPU as a table of (leaf, sub-leaf) -> registers; leaves not in it read as zeros.
struct FakeCpu {
    std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves;

    FakeCpu(const char* vendor, std::uint32_t max_leaf, unsigned family, unsigned model) {
        CpuidRegs r0{max_leaf, 0, 0, 0};
        std::memcpy(&r0.ebx, vendor, 4);
        std::memcpy(&r0.edx, vendor + 4, 4);
        std::memcpy(&r0.ecx, vendor + 8, 4);
        leaves[{0, 0}] = r0;
        // family/model with their extended fields, as CPUID leaf 1 EAX encodes them
        std::uint32_t base_family = family >= 0xF ? 0xF : family, ext_family = family >= 0xF ? family - 0xF : 0;
        std::uint32_t eax = (ext_family << 20) | ((model >> 4) << 16) | (base_family << 8) | ((model & 0xF) << 4);
        leaves[{1, 0}] = {eax, 0, 0, 0};
    }
    FakeCpu& set(std::uint32_t leaf, std::uint32_t sub, CpuidRegs r) {
        leaves[{leaf, sub}] = r;
        return *this;
    }
    CpuidFn fn() const {
        return [this](std::uint32_t leaf, std::uint32_t sub) {
            auto it = leaves.find({leaf, sub});
            return it == leaves.end() ? CpuidRegs{} : it->second;
        };
    }
};

constexpr std::uint32_t kAvx512F = 1u << 16;  // leaf 7 EBX

bool mentions(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

void expect_usable(const AutoChoice& c) {
    EXPECT_NO_THROW(Simulator{c.machine}) << c.reason;
    EXPECT_FALSE(c.reason.empty());
    EXPECT_FALSE(c.machine.name.empty());
}

// One leaf 0x18 sub-leaf: type (1 data, 3 unified), level, sizes (EBX bits), ways, sets.
CpuidRegs leaf18(unsigned type, unsigned level, std::uint32_t size_bits, unsigned ways, unsigned sets,
                 bool full = false) {
    return {0, (ways << 16) | size_bits, sets, type | (level << 5) | (full ? 1u << 8 : 0u)};
}

TEST(TlbAuto, HiddenLeaf18UnknownModelTakesTheNearestIntelCore) {
    // As the recent Xeon: family 6 model 167, AVX-512, leaf 0x18 sub-leaf 0 type 0,
    // leaf 2 saying "see leaf 4" (FFh) and nothing else.
    FakeCpu cpu("GenuineIntel", 0x20, 6, 167);
    cpu.set(7, 0, {0, kAvx512F, 0, 0}).set(2, 0, {0x00FF0001, 0, 0, 0});
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "nearest");
    EXPECT_EQ(c.machine.name, "skylake-sp");
    EXPECT_TRUE(mentions(c.reason, "0x18")) << c.reason;
    EXPECT_TRUE(mentions(c.reason, "AVX-512")) << c.reason;
    EXPECT_TRUE(c.described.empty());
}

constexpr std::uint32_t kVbmi2 = 1u << 6;   // leaf 7 ECX
constexpr std::uint32_t kLa57 = 1u << 16;   // leaf 7 ECX
constexpr std::uint32_t kAmxTile = 1u << 24;  // leaf 7 EDX

// An unknown model (leaf 0x18 hidden) with a server generation's first feature gets that
// generation's preset.
TEST(TlbAuto, NearestIntelByTheFeaturesEachServerGenerationBrought) {
    struct Case {
        std::uint32_t ebx, ecx, edx;
        const char* want;
    } cases[] = {
        {kAvx512F, kVbmi2, kAmxTile, "sapphire-rapids"},
        {kAvx512F, kVbmi2, 0, "icelake-sp"},
        {kAvx512F, 0, 0, "skylake-sp"},
        {0, 0, 0, "skylake"},
    };
    for (const Case& k : cases) {
        FakeCpu cpu("GenuineIntel", 0x20, 6, 0xEE);
        cpu.set(7, 0, {0, k.ebx, k.ecx, k.edx});
        AutoChoice c = choose_machine(cpu.fn());
        expect_usable(c);
        EXPECT_EQ(c.source, "nearest");
        EXPECT_EQ(c.machine.name, k.want) << c.reason;
    }
}

// The new Intel family/model numbers reach their presets through auto (table, leaf 0x18
// hidden), as Linux's intel-family.h numbers them.
TEST(TlbAuto, NewIntelModelsMapToTheirPresets) {
    const std::pair<unsigned, const char*> models[] = {
        {0x6A, "icelake-sp"}, {0x6C, "icelake-sp"}, {0x8F, "sapphire-rapids"}, {0xCF, "sapphire-rapids"},
        {0xAD, "granite-rapids"}, {0xAE, "granite-rapids"},
    };
    for (auto [model, want] : models) {
        FakeCpu cpu("GenuineIntel", 0x20, 6, model);
        cpu.set(7, 0, {0, kAvx512F, kVbmi2, 0});
        AutoChoice c = choose_machine(cpu.fn());
        expect_usable(c);
        EXPECT_EQ(c.source, "table") << model;
        EXPECT_EQ(c.base, want) << model;
        EXPECT_EQ(c.machine.name, want) << model;
        EXPECT_EQ(c.machine.levels, 4u) << model;  // no LA57 bit
    }
}

// CPUID leaf 7 ECX[16] (LA57) adds a level: the same CPU walks 5 levels instead of 4.
TEST(TlbAuto, La57AddsAWalkLevel) {
    FakeCpu four("GenuineIntel", 0x20, 6, 0x8F), five("GenuineIntel", 0x20, 6, 0x8F);
    four.set(7, 0, {0, kAvx512F, kVbmi2, kAmxTile});
    five.set(7, 0, {0, kAvx512F, kVbmi2 | kLa57, kAmxTile});
    AutoChoice c4 = choose_machine(four.fn()), c5 = choose_machine(five.fn());
    expect_usable(c5);
    EXPECT_EQ(c4.machine.levels, 4u);
    EXPECT_EQ(c5.machine.levels, 5u);
    EXPECT_EQ(c5.machine.name, "sapphire-rapids+la57");
    EXPECT_EQ(c5.base, "sapphire-rapids");
    EXPECT_TRUE(mentions(c5.reason, "LA57")) << c5.reason;
    EXPECT_FALSE(mentions(c4.reason, "LA57")) << c4.reason;
    auto first_walk = [](const MachineConfig& m) {
        Simulator sim(m);
        sim.access(std::uint64_t{1} << 40, PageSize::k4K);
        return sim.stats().walk_refs;
    };
    EXPECT_EQ(first_walk(c4.machine), 4u);
    EXPECT_EQ(first_walk(c5.machine), 5u);
    // The hypervisor CPU (model 167, leaf 0x18 hidden) with AMX and LA57.
    FakeCpu vm("GenuineIntel", 0x20, 6, 167);
    vm.set(7, 0, {0, kAvx512F, kVbmi2 | kLa57, kAmxTile});
    AutoChoice c = choose_machine(vm.fn());
    EXPECT_EQ(c.source, "nearest");
    EXPECT_EQ(c.machine.name, "sapphire-rapids+la57");
    EXPECT_EQ(c.machine.levels, 5u);
}

TEST(TlbAuto, WithoutAvx512TheClientCore) {
    FakeCpu cpu("GenuineIntel", 0x16, 6, 0xEE);
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.machine.name, "skylake");
    EXPECT_EQ(c.source, "nearest");
}

TEST(TlbAuto, Leaf18ResizesTheNearestPresetsArrays) {
    FakeCpu cpu("GenuineIntel", 0x20, 6, 167);
    cpu.set(7, 0, {0, kAvx512F, 0, 0})
        .set(0x18, 0, {4, 0, 0, 0})                          // sub-leaves 0..4; 0 is invalid
        .set(0x18, 1, leaf18(1, 1, 0b0001, 6, 16))          // L1 data 4K: 96 entries 6-way
        .set(0x18, 2, leaf18(1, 1, 0b0010, 4, 8))           // L1 data 2M: 32 entries 4-way
        .set(0x18, 3, leaf18(1, 1, 0b1000, 8, 1, true))     // L1 data 1G: 8 fully associative
        .set(0x18, 4, leaf18(3, 2, 0b0011, 16, 128));       // STLB 4K+2M: 2048 entries 16-way
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "cpuid");
    EXPECT_EQ(c.base, "skylake-sp");
    EXPECT_EQ(c.machine.name, "skylake-sp-cpuid");
    ASSERT_EQ(c.machine.l1.arrays.size(), 3u);
    EXPECT_EQ(c.machine.l1.arrays[0].entries, 96u);
    EXPECT_EQ(c.machine.l1.arrays[0].ways, 6u);
    EXPECT_EQ(c.machine.l1.arrays[2].entries, 8u);
    EXPECT_EQ(c.machine.l1.arrays[2].ways, 0u);
    EXPECT_EQ(c.machine.l2.arrays[0].entries, 2048u);
    EXPECT_EQ(c.machine.l2.arrays[0].ways, 16u);
    EXPECT_EQ(c.machine.l2.arrays[1].entries, 16u);  // 1 GiB STLB entries: not described, the preset's
    EXPECT_EQ(c.described.size(), 4u);
    EXPECT_TRUE(mentions(c.reason, "leaf 0x18.4")) << c.reason;
    EXPECT_TRUE(mentions(c.machine.sources.front(), "CPUID")) << c.machine.sources.front();
}

TEST(TlbAuto, Leaf2OnlyForCpusTheTableDoesNotKnow) {
    // Skylake-SP's legacy descriptors (63h, 03h, C3h): the table's preset wins for model 0x55 ...
    FakeCpu known("GenuineIntel", 0x16, 6, 0x55);
    known.set(2, 0, {0x76036301, 0x00F0B5FF, 0, 0x00C30000});
    AutoChoice c = choose_machine(known.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "table");
    EXPECT_EQ(c.machine.name, "skylake-sp");
    EXPECT_EQ(c.machine.l2.arrays[0].ways, 12u);
    // ... and describes an unknown model's TLBs.
    FakeCpu unknown("GenuineIntel", 0x16, 6, 0x3F);
    unknown.set(2, 0, {0x76036301, 0x00F0B5FF, 0, 0x00C30000});
    c = choose_machine(unknown.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "cpuid");
    EXPECT_EQ(c.machine.l2.arrays[0].entries, 1536u);
    EXPECT_EQ(c.machine.l2.arrays[0].ways, 6u);
    EXPECT_TRUE(mentions(c.reason, "leaf 2 descriptor 0xC3")) << c.reason;
}

// AMD's leaves as this lab's Zen 4 (family 19h model 11h) reported them under KVM:
// L1 DTLB 72 entries fully associative (4K and 2M), L2 DTLB 3072 entries, 8-way for 4K
// and 6-way for 2M, 0x80000019 all zeros.
FakeCpu zen4_like() {
    FakeCpu cpu("AuthenticAMD", 0x10, 0x19, 0x11);
    cpu.set(0x80000000, 0, {0x80000021, 0, 0, 0})
        .set(0x80000005, 0, {0xFF48FF40, 0xFF48FF40, 0, 0})
        .set(0x80000006, 0, {0x5C002200, 0x6C004200, 0, 0});
    return cpu;
}

TEST(TlbAuto, AmdLeavesResizeTheTablesPreset) {
    FakeCpu cpu = zen4_like();
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "cpuid");
    EXPECT_EQ(c.base, "zen4");
    EXPECT_EQ(c.machine.l1.arrays[0].entries, 72u);
    EXPECT_EQ(c.machine.l1.arrays[0].ways, 0u);
    EXPECT_EQ(c.machine.l2.arrays[0].entries, 3072u);
    EXPECT_EQ(c.machine.l2.arrays[0].ways, 8u);  // the 4K figure: the array is shared with 2M
    EXPECT_EQ(c.machine.name, "zen4-cpuid");
    EXPECT_TRUE(c.machine.pwc.pde_in_l2_tlb);  // walk caches stay the preset's
}

TEST(TlbAuto, AmdLeavesThatMatchThePresetKeepItsName) {
    // A Milan's leaves (the L2 registers as a guest's `cpuid -r` printed them): 64 fully
    // associative; L2 2048 entries, code 6 = "8 to 15 ways", which holds the preset's 12.
    FakeCpu cpu("AuthenticAMD", 0x10, 0x19, 0x01);
    cpu.set(0x80000000, 0, {0x80000021, 0, 0, 0})
        .set(0x80000005, 0, {0xFF40FF40, 0xFF40FF40, 0, 0})
        .set(0x80000006, 0, {0x48002200u, 0x68004200u, 0, 0});
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "cpuid");
    EXPECT_EQ(c.machine.name, "zen3");
    EXPECT_TRUE(mentions(c.reason, "as preset zen3 has them")) << c.reason;
}

TEST(TlbAuto, UnknownAmdFamilyWithoutLeavesTakesTheNewestZen) {
    FakeCpu cpu("AuthenticAMD", 0x10, 0x1B, 0x05);
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "nearest");
    EXPECT_EQ(c.machine.name, "zen5");
    EXPECT_TRUE(mentions(c.reason, "0x80000005")) << c.reason;
}

TEST(TlbAuto, UnknownVendorIsAGenericModelAndSaysSo) {
    FakeCpu cpu("CentaurHauls", 0x10, 6, 0x0F);
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "nearest");
    EXPECT_EQ(c.machine.name, "skylake");
    EXPECT_TRUE(mentions(c.reason, "CentaurHauls")) << c.reason;
}

TEST(TlbAuto, AnUnusableDescriptionFallsBack) {
    FakeCpu cpu = zen4_like();
    cpu.set(0x80000006, 0, {0, 0x0C000000u, 0, 0});  // L2 4K: 1 entry per code 0 -> unusable
    AutoChoice c = choose_machine(cpu.fn());
    expect_usable(c);
    EXPECT_EQ(c.source, "table");
    EXPECT_EQ(c.machine.name, "zen4");
}

TEST(TlbAuto, ThisCpuAlwaysHasAMachine) {
    AutoChoice c = choose_machine_for_this_cpu();
    expect_usable(c);
    EXPECT_TRUE(c.source == "cpuid" || c.source == "table" || c.source == "nearest") << c.source;
}

}  // namespace
