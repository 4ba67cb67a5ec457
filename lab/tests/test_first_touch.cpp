// The --probe's first-touch measurement (common/first_touch.hpp).
#include <gtest/gtest.h>

#include <string>

#include "common/first_touch.hpp"

namespace {

TEST(FirstTouch, ProbeTimesBothTouchesOfAFreshMapping) {
    const auto j = lab::first_touch_probe(std::size_t{8} << 20);
    ASSERT_FALSE(j.contains("error")) << j.dump();
    EXPECT_EQ(j.at("bytes").get<std::size_t>(), std::size_t{8} << 20);
    const std::string backing = j.at("backing").get<std::string>();
    EXPECT_TRUE(backing == "thp" || backing == "4k") << backing;  // THP, or its fallback
    // Rates of real touches: positive and finite (a memory system writing a byte a page).
    for (const char* k : {"first_gb_s", "again_gb_s"}) {
        const double r = j.at(k).get<double>();
        EXPECT_GT(r, 0.0) << k;
        EXPECT_LT(r, 1e6) << k;
    }
}

TEST(FirstTouch, MemoryThatCannotBeMappedIsAnErrorNotARate) {
    const auto j = lab::first_touch_probe(std::size_t{1} << 56);  // 64 PiB: above any address space
    ASSERT_TRUE(j.contains("error")) << j.dump();
    EXPECT_FALSE(j.contains("first_gb_s"));
}

}  // namespace
