// lab/tests/preload_test.cpp — naming and finding the allocators the lab compares.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/preload.hpp"

namespace {

using namespace lab::preload;

TEST(Preload, GlibcFirstPhysmemLast) {
    ASSERT_GE(allocators().size(), 5u);
    EXPECT_EQ(allocators().front(), "glibc");
    EXPECT_EQ(allocators().back(), "physmem");
}

TEST(Preload, GlibcNeedsNoLibraryAndUnknownNamesAreRefused) {
    std::string why;
    EXPECT_EQ(library("glibc", &why), "");
    EXPECT_TRUE(why.empty());
    EXPECT_THROW(library("hoard", &why), std::invalid_argument);
    EXPECT_THROW(ensure("hoard"), std::invalid_argument);
}

TEST(Preload, MissingLibraryIsReportedWithTheFix) {
    ::setenv("PHYSMEM_MALLOC_LIB", "/nonexistent/libphysmem.so", 1);
    std::string why;
    std::string lib = library("physmem", &why);
    ::unsetenv("PHYSMEM_MALLOC_LIB");
    EXPECT_EQ(lib, "");
    EXPECT_NE(why.find("PHYSMEM_MALLOC_LIB"), std::string::npos);
}

TEST(Preload, ActiveNamesTheObjectServingMalloc) {
    std::string who = active();
    ASSERT_FALSE(who.empty());
    // Not preloaded: glibc, or (sanitizer builds) the executable itself, which defines malloc.
    EXPECT_TRUE(who == "glibc" || who.find('/') != std::string::npos) << who;
}

}  // namespace
