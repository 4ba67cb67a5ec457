// Kernel tests for the alias tables (seed 002): dgemv placement and result check, and
// the low-12 probe's bookkeeping with allocators whose placement is known.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "kernels/dgemv.hpp"
#include "kernels/low12.hpp"

namespace {

using namespace lab;

// A reference y = A x (column-major) to drive the placement and check helpers without a BLAS.
void plain_dgemv(int, int, int m, int n, double alpha, const double* a, int lda, const double* x, int, double beta,
                 double* y, int) {
    for (int i = 0; i < m; ++i) y[i] *= beta;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) y[i] += alpha * a[j * lda + i] * x[j];
}

TEST(Dgemv, PlacementPutsYAtTheOffsetPastAPageAndIdentityGivesX) {
    const std::size_t n = 64;
    for (std::size_t off : {0u, 16u, 2048u, 4080u}) {
        std::vector<std::byte> raw(dgemv::arena_bytes(n) + dgemv::kPage);
        auto* arena = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(raw.data()) + 4095) & ~std::uintptr_t{4095});
        dgemv::Operands o = dgemv::place(arena, n, off);
        EXPECT_EQ(low12::bits(o.x), 0u);
        EXPECT_EQ(low12::bits(o.y), off);
        EXPECT_LE(reinterpret_cast<std::byte*>(o.y + n), arena + dgemv::arena_bytes(n));
        dgemv::init(o, n);
        for (std::size_t i = 0; i < n; ++i) o.y[i] = -1;
        EXPECT_EQ(dgemv::mismatches(o, n), n);
        dgemv::run(&plain_dgemv, o, n);
        EXPECT_EQ(dgemv::mismatches(o, n), 0u);
    }
}

// Allocators with known placement: every buffer at a page boundary, or staggered by 64 B.
std::vector<void*> g_blocks;
unsigned g_next = 0;
void* aligned_alloc_page(std::size_t size) { return std::aligned_alloc(4096, (size + 4095) / 4096 * 4096); }
void* staggered(std::size_t size) {
    auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, (size + 4095) / 4096 * 4096 + 4096));
    g_blocks.push_back(p);
    return p + 64 * (g_next++ % 64);
}
void release_staggered(void* p) {
    for (void* b : g_blocks)
        if (static_cast<std::byte*>(p) >= b && static_cast<std::byte*>(p) < static_cast<std::byte*>(b) + 4096) std::free(b);
}

TEST(Low12, PageAlignedBuffersShareTheirLow12StaggeredOnesDoNot) {
    low12::Result page = low12::probe(1 << 16, 8, {&aligned_alloc_page, &std::free});
    EXPECT_TRUE(page.ok);
    EXPECT_TRUE(page.pair_shares);
    EXPECT_EQ(page.distinct, 1u);
    EXPECT_EQ(page.low12, std::vector<unsigned>(8, 0));
    low12::Result st = low12::probe(1 << 16, 8, {&staggered, &release_staggered});
    EXPECT_TRUE(st.ok);
    EXPECT_FALSE(st.pair_shares);
    EXPECT_EQ(st.distinct, 8u);
}

TEST(Low12, OverlappingBuffersAreCaught) {
    std::vector<std::byte> buf(256);
    EXPECT_TRUE(low12::disjoint({buf.data(), buf.data() + 64}, 64));
    EXPECT_FALSE(low12::disjoint({buf.data() + 64, buf.data()}, 65));
}

TEST(Low12, SizesArePowersOfTwoFrom64) {
    EXPECT_EQ(low12::sizes(512), (std::vector<std::size_t>{64, 128, 256, 512}));
    EXPECT_TRUE(low12::sizes(32).empty());
}

}  // namespace
