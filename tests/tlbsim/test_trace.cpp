// Trace entries and files: packing, a round trip through a file, and the errors a reader
// must report (no magic, a truncated or invalid entry, a missing file).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "physmem/tlbsim/trace.hpp"

namespace {

using namespace physmem::tlbsim;

std::string temp_path(const char* name) {
    return (std::filesystem::temp_directory_path() / (std::string("physmem-trace-") + name + "-" +
                                                      std::to_string(::testing::UnitTest::GetInstance()->random_seed())))
        .string();
}

TEST(Trace, EntryKeepsLineSizeAndKind) {
    Entry e(0x7f12'3456'789aull, PageSize::k2M, Ref::sw_walk);
    EXPECT_EQ(e.addr(), 0x7f12'3456'7880ull);
    EXPECT_EQ(e.size(), PageSize::k2M);
    EXPECT_EQ(e.kind(), Ref::sw_walk);
    EXPECT_TRUE(e.valid());
    EXPECT_FALSE(Entry::from_word(3).valid());
    static_assert(sizeof(Entry) == 8);
}

TEST(Trace, FileRoundTripInChunks) {
    std::string path = temp_path("roundtrip");
    std::vector<Entry> want;
    for (std::uint64_t i = 0; i < 100000; ++i)
        want.emplace_back(i * 4160, PageSize(i % 3), i % 5 ? Ref::data : Ref::sw_walk);
    {
        TraceWriter w(path);
        for (Entry e : want) w.write(e);
        EXPECT_EQ(w.written(), want.size());
        w.close();
    }
    std::vector<Entry> got;
    read_trace(path, 777, [&](std::span<const Entry> s) { got.insert(got.end(), s.begin(), s.end()); });
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].word(), want[i].word()) << i;
    std::filesystem::remove(path);
}

TEST(Trace, ReaderNamesWhatIsWrong) {
    auto expect_error = [](const std::string& path, const std::string& words) {
        try {
            read_trace(path, 64, [](std::span<const Entry>) {});
            ADD_FAILURE() << "read " << path;
        } catch (const std::exception& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    expect_error("/nonexistent/trace", "/nonexistent/trace");
    std::string path = temp_path("bad");
    std::ofstream(path, std::ios::binary) << "NOTATRACE";
    expect_error(path, "magic");
    {
        TraceWriter w(path);
        w.write(Entry(4096, PageSize::k4K, Ref::data));
    }
    std::ofstream(path, std::ios::binary | std::ios::app) << "xyz";
    expect_error(path, "truncated entry at index 1");
    {
        std::ofstream f(path, std::ios::binary);
        f.write(kTraceMagic, 8);
        std::uint64_t w[2] = {4096, 4096 | 3};
        f.write(reinterpret_cast<const char*>(w), sizeof w);
    }
    expect_error(path, "invalid entry at index 1");
    std::filesystem::remove(path);
    EXPECT_THROW(TraceWriter("/nonexistent/dir/x"), std::system_error);
}

}  // namespace
