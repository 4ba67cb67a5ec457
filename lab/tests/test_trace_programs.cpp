// The translation model end to end: a tiny run of a real experiment program with
// --simulate and --trace writes a trace holding the software walk's inner-block loads
// (depth - 1 per update for gups on a tree, none on the array) and a record with the
// "translation" field; a program without a traced pass refuses --simulate (exit 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/process.hpp"
#include "physmem/tlbsim/trace.hpp"

namespace {

using physmem::tlbsim::Entry;
using physmem::tlbsim::Ref;

std::string program(const std::string& experiment) {
    return std::string(PHYSMEM_LAB_BIN_DIR) + "/physmem_lab_" + experiment;
}

struct ProgramRun {
    nlohmann::json record;
    std::uint64_t data = 0, walk = 0;
};

// A tiny gups point with the simulator and a trace file; the record and the trace's counts.
ProgramRun run_gups(const std::string& variant) {
    const std::string trace = "/tmp/physmem-lab-trace-" + std::to_string(::getpid()) + "-" + variant + ".trace";
    std::vector<std::string> argv = {"physmem_lab_gups", "--variant", variant, "--size", "1M", "--block-size", "4K",
                                     "--param", "updates=65536", "--reps", "1", "--warmup", "0", "--min-rep-ms", "0",
                                     "--aslr", "on", "--simulate", "zen5", "--sim-refs", "400K", "--trace", trace};
    ProgramRun r;
    r.record = nlohmann::json::parse(lab::process::run_capture(program("gups"), argv, {}));
    physmem::tlbsim::read_trace(trace, 1 << 16, [&](std::span<const Entry> c) {
        for (Entry e : c) ++(e.kind() == Ref::sw_walk ? r.walk : r.data);
    });
    std::remove(trace.c_str());
    return r;
}

TEST(TraceOfLabProgram, GupsTreeTraceHoldsTheSoftwareWalk) {
    ProgramRun r = run_gups("tree-index-4k");
    ASSERT_TRUE(r.record["verified"]);
    const unsigned depth = r.record["tree"]["depth"];
    ASSERT_GE(depth, 2u);
    EXPECT_GT(r.walk, 0u);
    EXPECT_EQ(r.walk, r.data * (depth - 1));  // depth - 1 slot loads per update
    const auto& t = r.record["translation"];
    EXPECT_EQ(t["preset"], "zen5");
    EXPECT_EQ(t["trace"]["entries"], r.walk + r.data);
    const std::uint64_t w = t["window"]["warmup_refs"], n = t["window"]["refs"];
    EXPECT_EQ(w + n, r.walk + r.data);  // the trace holds what was simulated
    EXPECT_EQ(t["window"]["refs_in_pass"], 65536u * depth);
    EXPECT_EQ(t["window"]["untagged_refs"], 0u);
    EXPECT_DOUBLE_EQ(t["per_op"]["sw_walk_loads"].get<double>(), depth - 1.0);
    EXPECT_DOUBLE_EQ(t["per_op"]["refs"].get<double>(), double(depth));
    EXPECT_EQ(t["counts"]["accesses"], n);
}

TEST(TraceOfLabProgram, GupsArrayTraceHasNoSoftwareWalk) {
    ProgramRun r = run_gups("array-4k");
    ASSERT_TRUE(r.record["verified"]);
    EXPECT_EQ(r.walk, 0u);
    EXPECT_GT(r.data, 0u);
    EXPECT_EQ(r.record["translation"]["counts"]["sw_walk_loads"], 0u);
}

TEST(TraceOfLabProgram, SimulateOnAProgramWithoutTracedPassIsAUsageError) {
    std::vector<std::string> argv = {"physmem_lab_hashtable", "--variant", "array-4k", "--size", "1M",
                                     "--simulate", "auto"};
    auto r = lab::process::run_child(program("hashtable"), argv, {});
    EXPECT_EQ(r.exit_code, 2) << r.status;
    argv = {"physmem_lab_gups", "--variant", "array-4k", "--size", "1M", "--simulate", "no-such-cpu"};
    r = lab::process::run_child(program("gups"), argv, {});
    EXPECT_EQ(r.exit_code, 2) << r.status;  // an unknown preset
}

}  // namespace
