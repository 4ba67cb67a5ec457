// The record's backing is the one the data had while it was measured: a pool whose
// containers went at the end of the body, and whose pages went back to the system with
// them, still reports the pages it held during the timing (a 1 GiB paged run read
// "4k, 0 resident" when its frames had been on huge pages throughout).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "context.hpp"

namespace {

struct PlainContext {
    PlainContext() {
        settings.variant = "tree-thp";
        settings.kind = lab::Kind::tree;
        settings.backing = physmem::Backing::thp;
        settings.block_size = 64 << 10;
        settings.size_bytes = 1;
        settings.reps = 1;
        settings.warmup = 0;
    }
    lab::ProgramSpec spec{.name = "test", .experiment = "test", .unit = "element", .kinds = {lab::Kind::tree}};
    lab::Settings settings;
};

const lab::Json* entry(const lab::Json& rec, const std::string& name) {
    for (const lab::Json& b : rec["backing"])
        if (b["name"] == name) return &b;
    return nullptr;
}

TEST(ContextBacking, ThePoolAsMeasuredNotAsLeft) {
    PlainContext pc;
    lab::Context ctx(pc.spec, pc.settings);
    constexpr std::size_t kBytes = 8 << 20;
    physmem::BlockPool& pool = ctx.pool("blocks", kBytes);
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < kBytes / pool.block_size() / 2; ++i) {
        blocks.push_back(pool.allocate());
        std::memset(blocks.back(), 1, pool.block_size());  // touched: resident while measured
    }
    ctx.measure(1, [] { return std::uint64_t{1}; });
    const lab::Json during = *entry(ctx.finish(), "blocks");  // a finish() now: what the pool holds
    for (void* b : blocks) pool.deallocate(b);
    pool.release();  // every page back to the system, as a body's end can leave it
    lab::Json rec = ctx.finish();
    const lab::Json* after = entry(rec, "blocks");
    ASSERT_NE(after, nullptr) << rec["backing"].dump();
    EXPECT_GE((*after)["resident_bytes"].get<std::size_t>(), kBytes / 2) << after->dump();
    EXPECT_EQ((*after)["resident_bytes"], during["resident_bytes"]);
    EXPECT_EQ((*after)["obtained"], during["obtained"]);
    if (during["obtained"] != "thp") GTEST_SKIP() << "the kernel gave 4 KiB pages: " << during.dump();
    EXPECT_GT((*after)["huge_bytes"].get<std::size_t>(), 0u);
}

}  // namespace
