// tests/test_options.cpp — the option table: parsing, defaults, the environment.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
    EXPECT_EQ(d.background_give_back, physmem::PoolOptions{}.background_give_back);
    EXPECT_TRUE(d.background_give_back);
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

// Sets PHYSMEM_* variables for one scope, and unsets them after.
class ScopedEnv {
  public:
    ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) : vars_(vars) {
        for (auto [k, v] : vars_) ::setenv(k, v, 1);
    }
    ~ScopedEnv() {
        for (auto [k, v] : vars_) ::unsetenv(k);
    }

  private:
    std::vector<std::pair<const char*, const char*>> vars_;
};

// What options_from_env() throws, or "" when it accepts the environment.
std::string env_error() {
    try {
        physmem::options_from_env();
        return "";
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
}

// Values that parse but are out of their field's range name the variable, its value and
// the field (the pool's own check, validate.hpp), before any pool is made.
TEST(Options, OutOfRangeValuesNameTheVariableAndTheField) {
    const std::pair<const char*, const char*> cases[] = {
        {"PHYSMEM_CAPACITY", "18446744073709551615"}, {"PHYSMEM_MAX_CAPACITY", "1K"},
        {"PHYSMEM_BLOCK_SIZE", "3000"},               {"PHYSMEM_BLOCK_SIZE", "2K"},
        {"PHYSMEM_BLOCK_SIZE", "1T"},                 {"PHYSMEM_GIVE_BACK_DELAY_MS", "86400001"},
        {"PHYSMEM_GIVE_BACK_DELAY_MS", "99999999999999999999"},
    };
    for (auto [var, value] : cases) {
        ScopedEnv env{{var, value}};
        std::string what = env_error();
        std::string field;
        for (const auto& row : physmem::option_table())
            if (row.env == var) field = "PoolOptions::" + std::string(row.field) + " = ";
        ASSERT_FALSE(field.empty()) << var;
        EXPECT_NE(what.find(std::string(var) + "=\"" + value + "\""), std::string::npos) << what;
        EXPECT_NE(what.find(field), std::string::npos) << what;
    }
}

TEST(Options, OutOfRangeMessagesSayWhatIsAccepted) {
    {
        ScopedEnv env{{"PHYSMEM_MAX_CAPACITY", "1K"}};
        EXPECT_EQ(env_error(), "PHYSMEM_MAX_CAPACITY=\"1K\": PoolOptions::max_capacity = 1024: smaller than "
                               "capacity (1 GiB); 0 means no cap");
    }
    {
        ScopedEnv env{{"PHYSMEM_BLOCK_SIZE", "3000"}};
        EXPECT_EQ(env_error(), "PHYSMEM_BLOCK_SIZE=\"3000\": PoolOptions::block_size = 3000: not a power of "
                               "two from 4 KiB to 1 GiB");
    }
    {  // a range that depends on another field names both variables
        ScopedEnv env{{"PHYSMEM_BLOCK_SIZE", "1G"}, {"PHYSMEM_CAPACITY", "64K"}};
        EXPECT_EQ(env_error(), "PHYSMEM_CAPACITY=\"64K\", PHYSMEM_BLOCK_SIZE=\"1G\": PoolOptions::capacity = "
                               "65536: smaller than one block (block_size = 1 GiB)");
    }
    {  // ... and the field's own variable when it is unset
        ScopedEnv env{{"PHYSMEM_CAPACITY", "2G"}, {"PHYSMEM_MAX_CAPACITY", "1G"}};
        EXPECT_NE(env_error().find("PHYSMEM_MAX_CAPACITY=\"1G\", PHYSMEM_CAPACITY=\"2G\""), std::string::npos)
            << env_error();
    }
}

TEST(Options, ValuesAtTheEndsOfTheirRangesAreAccepted) {
    ScopedEnv env{{"PHYSMEM_BLOCK_SIZE", "1G"},          {"PHYSMEM_CAPACITY", "1G"},
                  {"PHYSMEM_MAX_CAPACITY", "1G"},        {"PHYSMEM_GIVE_BACK_DELAY_MS", "86400000"},
                  {"PHYSMEM_COMPACT_THRESHOLD", "1"}};
    EXPECT_EQ(env_error(), "");
}

// default_pool() makes its pool once per process: a child process with a bad environment.
TEST(OptionsDeathTest, DefaultPoolNamesTheVariableOfABadValue) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ScopedEnv env{{"PHYSMEM_MAX_CAPACITY", "1K"}};
    EXPECT_EXIT(
        {
            try {
                physmem::default_pool();
            } catch (const std::invalid_argument& e) {
                std::fprintf(stderr, "%s\n", e.what());
                std::exit(3);
            }
            std::exit(0);
        },
        ::testing::ExitedWithCode(3), "PHYSMEM_MAX_CAPACITY=\"1K\": PoolOptions::max_capacity = 1024");
}

TEST(Options, FormatSize) {
    EXPECT_EQ(physmem::format_size(64 << 10), "64 KiB");
    EXPECT_EQ(physmem::format_size(std::size_t{1} << 30), "1 GiB");
    EXPECT_EQ(physmem::format_size(3000), "3000 B");
}

}  // namespace
