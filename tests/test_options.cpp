// tests/test_options.cpp — the option table: parsing, defaults, the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "physmem/backing.hpp"
#include "core/parse.hpp"
#include "physmem/options.hpp"

namespace {

TEST(Options, ParseSizeAcceptsBinaryUnits) {
    EXPECT_EQ(physmem::parse_size("4096"), 4096u);
    EXPECT_EQ(physmem::parse_size("64K"), 64u << 10);
    EXPECT_EQ(physmem::parse_size("64KiB"), 64u << 10);
    EXPECT_EQ(physmem::parse_size("2m"), 2u << 20);
    EXPECT_EQ(physmem::parse_size("1G"), 1u << 30);
    EXPECT_EQ(physmem::parse_size("1T"), std::size_t{1} << 40);
    for (const char* bad : {"", "K", "-1", "12Q", "1.5G", "99999999999999999999T"})
        EXPECT_FALSE(physmem::parse_size(bad)) << bad;
}

TEST(Options, ParseFlagAndBacking) {
    EXPECT_EQ(physmem::parse_flag("yes"), true);
    EXPECT_EQ(physmem::parse_flag("0"), false);
    EXPECT_FALSE(physmem::parse_flag("maybe"));
    EXPECT_EQ(physmem::parse_backing("1G"), physmem::Backing::page_1g);
    EXPECT_EQ(physmem::parse_backing("thp"), physmem::Backing::thp);
    EXPECT_FALSE(physmem::parse_backing("3m"));
    for (auto b : {physmem::Backing::best, physmem::Backing::page_1g, physmem::Backing::page_2m,
                   physmem::Backing::thp, physmem::Backing::page_4k})
        EXPECT_EQ(physmem::parse_backing(physmem::to_string(b)), b);
}

TEST(Options, ParseFraction) {
    EXPECT_EQ(physmem::parse_fraction("0"), 0.0);
    EXPECT_EQ(physmem::parse_fraction("1"), 1.0);
    EXPECT_EQ(physmem::parse_fraction("0.25"), 0.25);
    EXPECT_EQ(physmem::parse_fraction(".5"), 0.5);
    EXPECT_EQ(physmem::parse_fraction("1.0"), 1.0);
    for (const char* bad : {"", ".", "1.5", "2", "-0.1", "0.2.5", "1e-1", "0,5", "25%", "0.1234567890"})
        EXPECT_FALSE(physmem::parse_fraction(bad)) << bad;
}

TEST(Options, TableDeclaresEachVariableOnceWithHelp) {
    std::set<std::string_view> envs;
    for (const auto& o : physmem::option_table()) {
        EXPECT_TRUE(o.env.starts_with("PHYSMEM_")) << o.env;
        EXPECT_FALSE(o.help.empty()) << o.env;
        EXPECT_TRUE(envs.insert(o.env).second) << "declared twice: " << o.env;
    }
    physmem::Options d = physmem::default_options();
    EXPECT_EQ(d.block_size, 64u << 10);
    EXPECT_EQ(d.backing, physmem::Backing::best);
    EXPECT_FALSE(d.prefault);
    EXPECT_EQ(d.give_back_delay_ms, physmem::PoolOptions{}.give_back_delay_ms);
    EXPECT_EQ(d.compact_threshold, physmem::PoolOptions{}.compact_threshold);
}

TEST(Options, GiveBackAndCompactionFromTheEnvironment) {
    ::setenv("PHYSMEM_GIVE_BACK_DELAY_MS", "0", 1);
    ::setenv("PHYSMEM_COMPACT_THRESHOLD", "0.5", 1);
    physmem::Options o = physmem::options_from_env();
    EXPECT_EQ(o.give_back_delay_ms, 0u);
    EXPECT_EQ(o.compact_threshold, 0.5);
    ::setenv("PHYSMEM_COMPACT_THRESHOLD", "1.5", 1);
    try {
        physmem::options_from_env();
        ADD_FAILURE() << "bad value accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("PHYSMEM_COMPACT_THRESHOLD"), std::string::npos) << e.what();
    }
    ::unsetenv("PHYSMEM_GIVE_BACK_DELAY_MS");
    ::unsetenv("PHYSMEM_COMPACT_THRESHOLD");
}

TEST(Options, EnvironmentOverridesDefaultsAndBadValuesAreNamed) {
    ::setenv("PHYSMEM_BLOCK_SIZE", "32K", 1);
    ::setenv("PHYSMEM_PREFAULT", "1", 1);
    physmem::Options o = physmem::options_from_env();
    EXPECT_EQ(o.block_size, 32u << 10);
    EXPECT_TRUE(o.prefault);
    ::setenv("PHYSMEM_BACKING", "huge", 1);
    try {
        physmem::options_from_env();
        ADD_FAILURE() << "bad value accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("PHYSMEM_BACKING"), std::string::npos) << e.what();
    }
    ::unsetenv("PHYSMEM_BLOCK_SIZE");
    ::unsetenv("PHYSMEM_PREFAULT");
    ::unsetenv("PHYSMEM_BACKING");
}

TEST(Options, FormatSize) {
    EXPECT_EQ(physmem::format_size(64 << 10), "64 KiB");
    EXPECT_EQ(physmem::format_size(std::size_t{1} << 30), "1 GiB");
    EXPECT_EQ(physmem::format_size(3000), "3000 B");
}

}  // namespace
