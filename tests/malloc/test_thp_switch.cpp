// tests/malloc/test_thp_switch.cpp — the moment a small heap turns huge (arena.cpp,
// thp_when_big), seen through the madvise calls the allocator makes. Its own executable:
// it defines madvise, which the allocator linked statically (physmem_malloc_core) then
// calls, and which a sanitizer's runtime would want to intercept too.
//
// Why the calls and not the pages: a 2 MiB page of blocks written at their ends that is
// advised huge even for a moment is one khugepaged may collapse in that moment (2 MiB
// resident for a few KiB: the alloc suite's large-live held 90 MiB in most runs and 104
// in some, 7 pages collapsed with ~10 of their 512 pages touched). The moment is too short
// to catch by looking at the pages; the calls show it every time.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "physmem.h"

namespace {

struct Call {
    std::uintptr_t lo, hi;
};
constexpr std::size_t kMaxCalls = 4096;
Call g_huge_calls[kMaxCalls];  // MADV_HUGEPAGE ranges while recording
std::atomic<std::size_t> g_ncalls{0};
std::atomic<bool> g_recording{false};

}  // namespace

// Every madvise of this process: MADV_HUGEPAGE ranges recorded while g_recording, then the
// call itself (errno as the kernel sets it).
extern "C" int madvise(void* p, std::size_t len, int advice) noexcept {
    if (advice == MADV_HUGEPAGE && g_recording.load(std::memory_order_relaxed)) {
        std::size_t i = g_ncalls.fetch_add(1, std::memory_order_relaxed);
        auto lo = reinterpret_cast<std::uintptr_t>(p);
        if (i < kMaxCalls) g_huge_calls[i] = {lo, lo + len};
    }
    return static_cast<int>(::syscall(SYS_madvise, p, len, advice));
}

namespace {

bool thp_child_exit(int status) { return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2); }

// Blocks placed while the heap is small (10 MiB of 288 KiB blocks written at their ends,
// below THP_AFTER_MB's 16), then densely written ones that make the heap big: not one
// MADV_HUGEPAGE call reaches the 2 MiB pages the early blocks fill alone (they stay on
// 4 KiB pages: LargeSparse.BlocksPlacedBeforeTheHeapTurnsHugeKeepFewPages), and some call
// was made (the heap did turn huge). Exit 2: the heap is not on THP, nothing to check.
TEST(ThpSwitch, SparsePagesAreNeverAdvisedHugeWhenTheHeapTurnsHuge) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t kSize = 288 << 10, kCount = 36;
        std::vector<unsigned char*> early;
        for (std::size_t i = 0; i < kCount; ++i) {
            auto* p = static_cast<unsigned char*>(pm_malloc(kSize));
            if (!p) std::_Exit(1);
            p[0] = p[kSize - 1] = static_cast<unsigned char>(i + 1);
            early.push_back(p);
        }
        g_recording = true;
        std::vector<void*> dense;
        for (std::size_t total = 0; total < (std::size_t{32} << 20); total += 100000)
            dense.push_back(std::memset(pm_malloc(100000), 1, 100000));
        g_recording = false;
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        constexpr std::uintptr_t kHuge = 2 << 20;
        const auto first = reinterpret_cast<std::uintptr_t>(early.front());
        const std::uintptr_t lo = (first + kHuge - 1) & ~(kHuge - 1);
        const std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(early.back()) + kSize) & ~(kHuge - 1);
        if (hi < lo + 2 * kHuge) std::_Exit(2);  // not laid out one after another
        const std::size_t n = g_ncalls.load();
        std::size_t reaching = 0;
        for (std::size_t i = 0; i < n && i < kMaxCalls; ++i) {
            const Call c = g_huge_calls[i];
            if (c.lo < hi && lo < c.hi) {
                ++reaching;
                std::fprintf(stderr, "MADV_HUGEPAGE [%#lx, %#lx) reaches the early blocks' pages [%#lx, %#lx)\n",
                             static_cast<unsigned long>(c.lo), static_cast<unsigned long>(c.hi),
                             static_cast<unsigned long>(lo), static_cast<unsigned long>(hi));
            }
        }
        std::fprintf(stderr, "%zu MADV_HUGEPAGE calls as the heap turned huge, %zu reaching the early blocks\n", n,
                     reaching);
        std::_Exit(n > 0 && n <= kMaxCalls && reaching == 0 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

}  // namespace
