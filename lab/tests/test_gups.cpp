// GUPS kernels: HPCC's generator and starts(), the look-ahead pass on arrays and trees
// against a plain sequential replay, and the verification catching lost, misplaced and
// corrupted updates.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/gups.hpp"
#include "physmem/fixed_depth.hpp"

namespace {

using namespace lab::gups;
using Tree = physmem::TreeArray<std::uint64_t>;

physmem::BlockPool small_pool(std::size_t block = 4096) {
    return physmem::BlockPool({.block_size = block, .capacity = 32 << 20, .backing = physmem::Backing::page_4k});
}

TEST(GupsGenerator, StartsEqualsSteppingFromOne) {
    std::uint64_t ran = 1;
    for (std::uint64_t n = 0; n < 5000; ++n) {
        ASSERT_EQ(starts(n), ran) << n;
        ran = step(ran);
    }
    for (std::uint64_t n = 5000; n < 200000; ++n) ran = step(ran);
    EXPECT_EQ(starts(200000), ran);
    EXPECT_EQ(starts(kPeriod), 1u);  // reduced modulo the period
    EXPECT_EQ(starts(kPeriod + 7), starts(7));
}

TEST(GupsGenerator, StepIsHpccsLfsr) {
    EXPECT_EQ(step(1), 2u);
    EXPECT_EQ(step(std::uint64_t{1} << 63), kPoly);
    EXPECT_EQ(step((std::uint64_t{1} << 63) | 1), kPoly ^ 2);
}

TEST(GupsPlan, UpdatesRoundUpToWholeStreams) {
    EXPECT_EQ(round_updates(1), kStreams);
    EXPECT_EQ(round_updates(kStreams), kStreams);
    EXPECT_EQ(round_updates(kStreams + 1), 2 * kStreams);
    Plan p = make_plan(4 * kStreams);
    EXPECT_EQ(p.start[0], 1u);
    EXPECT_EQ(p.start[1], starts(4));
}

// One pass of the kernel on `t` equals a sequential replay on a plain vector.
template <class Table>
void expect_pass_matches_replay(Table& t, std::size_t n, std::uint64_t updates, bool prefetch) {
    std::vector<std::uint64_t> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = i;
    replay(want, updates, n - 1);
    Plan p = make_plan(updates);
    if (prefetch) update_pass<true>(t, p, n - 1);
    else update_pass<false>(t, p, n - 1);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(t[i], want[i]) << i;
}

TEST(GupsKernel, ArrayAndTreeEqualPlainReplay) {
    for (std::size_t n : {std::size_t{1} << 7, std::size_t{1} << 16, std::size_t{1} << 19}) {
        for (bool prefetch : {true, false}) {
            const std::uint64_t updates = round_updates(4 * n);
            std::vector<std::uint64_t> v(n);
            std::span<std::uint64_t> a(v);
            reset(a);
            expect_pass_matches_replay(a, n, updates, prefetch);
            auto pool = small_pool();
            Tree t(n, pool);
            reset(t);
            expect_pass_matches_replay(t, n, updates, prefetch);
            reset(t);
            physmem::with_fixed_depth(t, [&](auto view) { expect_pass_matches_replay(view, n, updates, prefetch); });
        }
    }
}

TEST(GupsVerify, CorrectPassOnTreeHasNoErrors) {
    const std::size_t n = std::size_t{1} << 19;  // depth 3 on 4 KiB blocks
    auto pool = small_pool();
    Tree t(n, pool);
    ASSERT_EQ(t.depth(), 3u);
    Plan p = make_plan(round_updates(4 * n));
    Check c = verify(t, p.updates, [&] { update_pass(t, p, n - 1); });
    EXPECT_TRUE(c.signature_ok);
    EXPECT_EQ(c.errors, 0u);
    EXPECT_TRUE(c.ok(n));
    EXPECT_EQ(count_errors(t), 0u);  // pass + replay leave T[i] = i
}

TEST(GupsVerify, OneCorruptedEntryFailsTheSignature) {
    const std::size_t n = 1 << 12;
    std::vector<std::uint64_t> v(n);
    std::span<std::uint64_t> a(v);
    Plan p = make_plan(round_updates(4 * n));
    Check c = verify(a, p.updates, [&] {
        update_pass(a, p, n - 1);
        a[77] ^= 1;
    });
    EXPECT_EQ(c.errors, 1u);      // within HPCC's 1% ...
    EXPECT_FALSE(c.signature_ok);  // ... but the signature sees it
    EXPECT_FALSE(c.ok(n));
}

TEST(GupsVerify, ManyLostUpdatesFailTheErrorCount) {
    const std::size_t n = 1 << 12;
    std::vector<std::uint64_t> v(n);
    std::span<std::uint64_t> a(v);
    Plan half = make_plan(round_updates(2 * n));  // a pass that loses half its updates
    Check c = verify(a, round_updates(4 * n), [&] { update_pass(a, half, n - 1); });
    EXPECT_GT(c.errors * 100, n);
    EXPECT_FALSE(c.ok(n));
}

TEST(GupsVerify, UpdatesAtTheWrongIndexFailTheSignature) {
    const std::size_t n = 1 << 12;
    std::vector<std::uint64_t> v(n);
    std::span<std::uint64_t> a(v);
    Plan p = make_plan(round_updates(4 * n));
    // Folds the top half of the table onto the bottom: every update lands somewhere.
    Check c = verify(a, p.updates, [&] { update_pass(a, p, n / 2 - 1); });
    EXPECT_FALSE(c.signature_ok);
    EXPECT_FALSE(c.ok(n));
}

}  // namespace
