// tests/test_give_back_policy.cpp — the one give-back delay (core/give_back.hpp): its
// default is the pool's and the malloc's, and empty_long_enough / give_back_due_ns agree
// at the edges (exactly the delay, one ns short, a stamp after the clock reading, 0 ms).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string_view>

#include "core/give_back.hpp"
#include "malloc/options.hpp"
#include "physmem/options.hpp"
#include "physmem/pool.hpp"

namespace {

using physmem::core::empty_long_enough;
using physmem::core::give_back_due_ns;

TEST(GiveBackPolicy, OneDefaultForPoolAndMalloc) {
    EXPECT_EQ(physmem::core::kGiveBackDelayMs, 100u);
    EXPECT_EQ(physmem::PoolOptions{}.give_back_delay_ms, physmem::core::kGiveBackDelayMs);
    EXPECT_EQ(physmem::default_options().give_back_delay_ms, physmem::core::kGiveBackDelayMs);
    constexpr physmem::core::OptionRow malloc_rows[] = {PM_MALLOC_OPTIONS(PHYSMEM_OPTION_ROW)};
    bool found = false;
    for (const auto& row : malloc_rows) {
        if (std::string_view(row.field) != "purge_delay_ms") continue;
        found = true;
        EXPECT_STREQ(row.default_value, PHYSMEM_GIVE_BACK_DELAY_MS_DEFAULT);
    }
    EXPECT_TRUE(found);
}

TEST(GiveBackPolicy, EmptyLongEnoughAtTheEdges) {
    const std::uint64_t since = 5'000'000'000;
    EXPECT_FALSE(empty_long_enough(since, since, 100));
    EXPECT_FALSE(empty_long_enough(since, since + 100'000'000 - 1, 100));
    EXPECT_TRUE(empty_long_enough(since, since + 100'000'000, 100));
    EXPECT_TRUE(empty_long_enough(since, since, 0));             // 0: at the first look
    EXPECT_FALSE(empty_long_enough(since + 1, since, 0));        // stamped after the reading
    EXPECT_FALSE(empty_long_enough(since + 1, since, 100));
    EXPECT_FALSE(empty_long_enough(0, 50'000'000, 100));          // clock younger than the delay
    // The largest delay either accepts (one day, the shared limit) does not overflow.
    const std::uint64_t day = physmem::core::kMaxGiveBackDelayMs;
    EXPECT_EQ(day, 86'400'000u);
    EXPECT_FALSE(empty_long_enough(since, since + day * 1'000'000 - 1, day));
    EXPECT_TRUE(empty_long_enough(since, since + day * 1'000'000, day));
}

// The due time the background thread waits for is the first instant that is long enough.
TEST(GiveBackPolicy, DueTimeIsTheFirstLongEnoughInstant) {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 10000; ++i) {
        std::uint64_t since = rng() >> 8, delay = rng() % 86'400'001;
        std::uint64_t due = give_back_due_ns(since, delay);
        ASSERT_TRUE(empty_long_enough(since, due, delay));
        if (due > since) ASSERT_FALSE(empty_long_enough(since, due - 1, delay));
    }
}

}  // namespace
