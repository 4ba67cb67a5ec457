// lab/stack/stack_test.cpp — the split-stack suite's kernels and segment bookkeeping
// (physmem_lab_stack_tests: linked like physmem_lab_stack, -fsplit-stack with gold and
// the segments.hpp wrappers, so it cannot live in physmem_lab_tests).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/scan.hpp"
#include "measure.hpp"
#include "physmem/pool.hpp"
#include "stack/kernels.hpp"
#include "stack/segments.hpp"
#include "stack/thread.hpp"

extern "C" void __splitstack_block_signals(int* new_value, int* old_value);

namespace {

using namespace lab::stack;
namespace bs = lab::blackscholes;
constexpr std::size_t k32K = 32 << 10;

TEST(StackKernels, FibInBothBuildsMatchesTheIterativeNumbers) {
    for (unsigned n = 0; n <= 25; ++n) {
        EXPECT_EQ(normal::fib(n), fib_reference(n)) << n;
        EXPECT_EQ(split::fib(n), fib_reference(n)) << n;
    }
    EXPECT_EQ(fib_reference(30), 832040u);
    EXPECT_EQ(fib_calls(3), 5u);  // fib(3) -> fib(2) -> fib(1), fib(0); fib(1)
}

TEST(StackKernels, DeepsumInBothBuildsMatchesTheClosedForm) {
    EXPECT_EQ(deepsum_reference(0), 0u);
    EXPECT_EQ(deepsum_reference(33), (33 * 34) / 2 + (31 * 32) / 2 + 0 + 1);  // k%32 wraps at 32
    for (std::uint64_t d : {0, 1, 31, 32, 1000}) {
        EXPECT_EQ(normal::deepsum(d), deepsum_reference(d)) << d;
        EXPECT_EQ(split::deepsum(d), deepsum_reference(d)) << d;
    }
}

TEST(StackKernels, ScanInBothBuildsSumsTheValuesWritten) {
    std::vector<std::uint32_t> a(100'003);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = lab::scan::value_at(i);
    EXPECT_EQ(normal::scan_sum(a), lab::scan::expected_linear(a.size()));
    EXPECT_EQ(split::scan_sum(a), lab::scan::expected_linear(a.size()));
}

TEST(StackKernels, BlackscholesSplitBuildAgreesWithTheNormalBuild) {
    const std::size_t n = 1001;
    std::vector<float> col[5], p_normal(n), p_split(n);
    std::vector<std::int32_t> type(n);
    for (auto& c : col) c.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        bs::Option o = bs::make_option(7, i);
        col[0][i] = o.spot, col[1][i] = o.strike, col[2][i] = o.rate, col[3][i] = o.volatility, col[4][i] = o.time;
        type[i] = o.type;
    }
    auto spans = [&](std::vector<float>& out) {
        return bs::SoaSpans{col[0], col[1], col[2], col[3], col[4], type, out};
    };
    normal::blackscholes(spans(p_normal));
    run_on_thread(k32K, [&] { split::blackscholes(spans(p_split)); });
    for (std::size_t i = 0; i < n; ++i) {
        bs::Option o = bs::make_option(7, i);
        ASSERT_TRUE(bs::close(p_split[i], p_normal[i], o.strike)) << i;
        ASSERT_TRUE(bs::close(p_normal[i], bs::price(o.spot, o.strike, o.rate, o.volatility, o.time, o.type), o.strike));
    }
}

// The deep recursion on a 32 KiB thread: completes in the split build, over many segments.
TEST(SplitStack, DeepRecursionCompletesOnA32KiBThreadOverManySegments) {
    const std::uint64_t depth = 100'000;  // ~32 MB of 320-byte frames
    std::uint64_t got = 0;
    segments::ListWalk walk;
    segments::Counts during;
    segments::reset();
    run_on_thread(k32K, [&] {
        got = split::deepsum(depth);
        walk = segments::walk_list();
        during = segments::counts();
    });
    EXPECT_EQ(got, deepsum_reference(depth));
    EXPECT_GT(during.mapped, 1u);
    EXPECT_GE(during.mapped_bytes, depth * 256);  // every frame holds a 256-byte array
    EXPECT_EQ(walk.segments, during.mapped);     // the list libgcc keeps agrees with the mmaps seen
    EXPECT_EQ(walk.bytes, during.mapped_bytes);
    EXPECT_EQ(during.mapped_bytes % 4096, 0u);
    EXPECT_EQ(segments::counts().unmapped, during.mapped);  // all released when the thread exited
}

TEST(SplitStack, ShallowCallsAllocateNoSegment) {
    segments::reset();
    std::uint64_t got = 0;
    run_on_thread(k32K, [&] { got = split::fib(20) + split::deepsum(10); });
    EXPECT_EQ(got, fib_reference(20) + deepsum_reference(10));
    EXPECT_EQ(segments::counts().mapped, 0u);
}

TEST(SplitStack, NormalBuildOverflowsA32KiBThreadInAChildOnly) {
    ChildRun deep = run_in_child(k32K, [] { lab::sink(normal::deepsum(100'000)); });
    EXPECT_FALSE(deep.completed);
    EXPECT_EQ(deep.signal, SIGSEGV);
    ChildRun small = run_in_child(k32K, [] { lab::sink(normal::deepsum(10)); });
    EXPECT_TRUE(small.completed);
    ChildRun split_deep = run_in_child(k32K, [] { lab::sink(split::deepsum(100'000)); });
    EXPECT_TRUE(split_deep.completed);
}

TEST(SplitStack, LargestFittingBisects) {
    EXPECT_EQ(largest_fitting(1000, [](std::size_t d) { return d <= 377; }), 377u);
    EXPECT_EQ(largest_fitting(1000, [](std::size_t) { return true; }), 1000u);
    EXPECT_EQ(largest_fitting(1000, [](std::size_t d) { return d == 0; }), 0u);
}

TEST(SplitStack, SegmentsServedFromPoolBlocksComeBackAtThreadExit) {
    const std::size_t block = 64 << 10;
    physmem::BlockPool pool({.block_size = block, .capacity = 64 * block, .backing = physmem::Backing::page_4k});
    std::vector<void*> blocks;
    while (void* b = pool.try_allocate()) blocks.push_back(b);
    segments::reset();
    segments::serve_from(blocks, block);
    std::uint64_t got = 0;
    segments::Counts during;
    run_on_thread(k32K, [&] {
        got = split::deepsum(20'000);  // ~6.4 MB in segments of libgcc's size (<= 64 KiB): > 64 of them
        during = segments::counts();
    });
    EXPECT_EQ(got, deepsum_reference(20'000));
    EXPECT_EQ(during.served, blocks.size());  // one block per segment while any is left
    EXPECT_GT(during.mapped, 0u);             // then libgcc's own mmap
    EXPECT_EQ(segments::blocks_free(), blocks.size());  // every served block returned, none unmapped
    segments::serve_from({}, 0);
    for (void* b : blocks) pool.deallocate(b);
}

TEST(SplitStack, SegmentRequestsLargerThanABlockAreMappedAsUsual) {
    const std::size_t block = 4096;  // smaller than any segment libgcc asks for
    physmem::BlockPool pool({.block_size = block, .capacity = 8 * block, .backing = physmem::Backing::page_4k});
    std::vector<void*> blocks;
    while (void* b = pool.try_allocate()) blocks.push_back(b);
    segments::reset();
    segments::serve_from(blocks, block);
    run_on_thread(k32K, [] { lab::sink(split::deepsum(5'000)); });
    EXPECT_EQ(segments::counts().served, 0u);
    EXPECT_GT(segments::counts().mapped, 1u);
    segments::serve_from({}, 0);
    for (void* b : blocks) pool.deallocate(b);
}

TEST(SplitStack, MinimumSegmentVariableIsChecked) {
    ::unsetenv(segments::kSegmentEnv);
    EXPECT_EQ(segments::requested_minimum(), 0u);
    ::setenv(segments::kSegmentEnv, "65536", 1);
    EXPECT_EQ(segments::requested_minimum(), 65536u);
    for (const char* bad : {"1000", "65535", "64K", "0", "4294967296"}) {
        ::setenv(segments::kSegmentEnv, bad, 1);
        EXPECT_THROW(segments::requested_minimum(), std::invalid_argument) << bad;
    }
    ::unsetenv(segments::kSegmentEnv);
}

TEST(SplitStack, SignalBlockingCanBeSwitchedPerThread) {
    int before = -1, after = -1, other = -1;
    run_on_thread(k32K, [&] {
        __splitstack_block_signals(nullptr, &before);  // libgcc's default: blocked
        segments::set_block_signals(false);
        __splitstack_block_signals(nullptr, &after);
        lab::sink(split::deepsum(20'000));             // switches segments without blocking
    });
    run_on_thread(k32K, [&] { __splitstack_block_signals(nullptr, &other); });
    EXPECT_EQ(before, 1);
    EXPECT_EQ(after, 0);
    EXPECT_EQ(other, 1);  // per thread
}

}  // namespace
