// tests/test_stream_copy.cpp — detail::stream_copy, the large copies' runs of
// physmem::copy, copy_n and move (src/algo/stream_copy.cpp): every byte as memmove would
// leave it, at every alignment and length around its block sizes, overlapping ranges
// included (they fall back to memmove), and the threshold from the machine's cache.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "physmem/algorithm.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_array.hpp"

namespace {

using physmem::detail::stream_copy;

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& c : v) c = static_cast<unsigned char>((x = x * 1664525u + 1013904223u) >> 24);
    return v;
}

TEST(StreamCopy, EqualsMemmoveAtEveryAlignmentAndLength) {
    const std::size_t big = (64 << 10) + 4096;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{16383}, std::size_t{16384},
                          std::size_t{16385}, std::size_t{16384 + 64 * 3 + 7}, std::size_t{65536}, big - 64})
        for (std::size_t d_off : {0, 1, 8, 15, 24, 48})
            for (std::size_t s_off : {0, 3, 24}) {
                auto src = pattern(big + 64, static_cast<unsigned>(n + d_off));
                std::vector<unsigned char> got(big + 64, 0xee), want(big + 64, 0xee);
                stream_copy(got.data() + d_off, src.data() + s_off, n);
                std::memmove(want.data() + d_off, src.data() + s_off, n);
                ASSERT_EQ(got, want) << "n " << n << " dst +" << d_off << " src +" << s_off;
            }
}

TEST(StreamCopy, OverlappingRangesCopyAsMemmove) {
    const std::size_t n = 64 << 10;
    for (std::ptrdiff_t shift : {-4096, -24, -1, 1, 24, 4096, 20000}) {
        auto got = pattern(n + 40000, 5), want = got;
        const std::size_t from = 20000, to = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(from) + shift);
        stream_copy(got.data() + to, got.data() + from, n);
        std::memmove(want.data() + to, want.data() + from, n);
        ASSERT_EQ(got, want) << "shift " << shift;
    }
}

TEST(StreamCopy, ThresholdIsThreeQuartersOfTheCacheTheLibraryReports) {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const std::size_t cache = l3 > 0 ? std::size_t(l3) : l2 > 0 ? std::size_t(l2) : 0;
    EXPECT_EQ(physmem::detail::stream_copy_threshold(), cache / 4 * 3);
    EXPECT_FALSE(physmem::detail::streams<const unsigned char*>(0));  // bytes: one-byte elements
    if (cache) EXPECT_TRUE(physmem::detail::streams<const unsigned char*>(cache));
}

// The runs of a copy that streams hold what the runs of one that does not hold: a tree ->
// tree copy with other leaf boundaries and tree <-> vector, driven through copy_run.
TEST(StreamCopy, StreamedRunsOfSegmentedCopiesMatch) {
    physmem::BlockPool pool({.block_size = 64 << 10, .capacity = 16 << 20, .backing = physmem::Backing::page_4k});
    const std::size_t n = 300000;
    physmem::TreeArray<std::uint64_t> a(n, pool), b(n, pool);
    std::vector<std::uint64_t> v(n);
    std::iota(v.begin(), v.end(), 7);
    for (bool stream : {false, true}) {
        auto in = v.data();
        auto out = a.begin();
        physmem::zip_runs(n, [stream](std::size_t m, auto& x, auto& y) {
            physmem::detail::copy_run(x, m, y, stream);
            return m;
        }, in, out);
        auto from = std::as_const(a).begin() + 3;
        auto to = b.begin();
        physmem::zip_runs(n - 3, [stream](std::size_t m, auto& x, auto& y) {
            physmem::detail::copy_run(x, m, y, stream);
            return m;
        }, from, to);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], i + 7) << stream;
        for (std::size_t i = 0; i + 3 < n; ++i) ASSERT_EQ(b[i], i + 10) << stream;
        b[0] = 0;
    }
}

}  // namespace
