// tests/malloc/test_malloc.cpp — the allocator through its pm_* API, linked statically
// (physmem_malloc_core): the test process's own malloc stays glibc's (or the
// sanitizer's), so these tests also run under ASan + UBSan.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/hugepages.hpp"
#include "malloc/fast.hpp"
#include "physmem.h"
#include "port/os.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Rss and AnonHugePages summed over the mappings of /proc/self/smaps that overlap [lo, hi):
// a heap whose pages were advised one by one spans several.
struct RangeSmaps {
    std::size_t rss = 0, anon_huge = 0;
};
RangeSmaps smaps_over(std::uintptr_t lo, std::uintptr_t hi) {
    RangeSmaps r;
    std::FILE* f = std::fopen("/proc/self/smaps", "r");
    if (!f) return r;
    char line[512];
    bool in = false;
    while (std::fgets(line, sizeof line, f)) {
        unsigned long a = 0, b = 0, kb = 0;
        char c = 0;
        if (std::sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3 && std::strchr(line, '-') < std::strchr(line, ' '))
            in = a < hi && b > lo;
        else if (in && std::sscanf(line, "Rss: %lu kB", &kb) == 1) r.rss += kb << 10;
        else if (in && std::sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) r.anon_huge += kb << 10;
    }
    std::fclose(f);
    return r;
}

std::string ptr_text(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
}

// Sizes 0..large: every small class boundary neighbourhood, then large and direct.
std::vector<std::size_t> test_sizes() {
    std::vector<std::size_t> v;
    for (std::size_t s = 0; s <= 1100; ++s) v.push_back(s);
    for (std::size_t s = 1024; s <= (1u << 20); s = s * 9 / 8 + 1) {
        v.push_back(s - 1);
        v.push_back(s);
        v.push_back(s + 1);
    }
    for (std::size_t s : {std::size_t{61440}, std::size_t{61441}, std::size_t{65536}, std::size_t{2} << 20,
                          (std::size_t{2} << 20) + 1, std::size_t{5} << 20, std::size_t{300} << 20})
        v.push_back(s);
    return v;
}

void fill(void* p, std::size_t n, unsigned seed) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(seed + i * 7);
}

bool check(const void* p, std::size_t n, unsigned seed) {
    auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != static_cast<unsigned char>(seed + i * 7)) return false;
    return true;
}

TEST(MallocApi, EverySizeIsAlignedUsableAndWritable) {
    for (std::size_t n : test_sizes()) {
        void* p = pm_malloc(n);
        ASSERT_NE(p, nullptr) << n;
        EXPECT_EQ(addr(p) % 16, 0u) << n;
        EXPECT_GE(pm_usable_size(p), n) << n;
        std::size_t touch = n < (1u << 20) ? n : (1u << 20);
        fill(p, touch, 3);
        EXPECT_TRUE(check(p, touch, 3)) << n;
        pm_free(p);
    }
    pm_free(nullptr);
    EXPECT_EQ(pm_usable_size(nullptr), 0u);
}

TEST(MallocApi, AlignedFormsHonourEveryAlignment) {
    for (std::size_t align = 1; align <= (std::size_t{4} << 20); align *= 2) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{24}, std::size_t{100}, std::size_t{4095},
                              std::size_t{5000}, std::size_t{70000}, std::size_t{3} << 20}) {
            void* p = pm_aligned_alloc(align, n);
            ASSERT_NE(p, nullptr) << align << " " << n;
            EXPECT_EQ(addr(p) % align, 0u) << align << " " << n;
            EXPECT_GE(pm_usable_size(p), n);
            std::memset(p, 0x5a, n);
            void* q = nullptr;
            if (align >= sizeof(void*)) {
                ASSERT_EQ(pm_posix_memalign(&q, align, n), 0);
                EXPECT_EQ(addr(q) % align, 0u) << align << " " << n;
                std::memset(q, 0xa5, n);
            }
            pm_free(p);
            pm_free(q);
        }
    }
}

TEST(MallocApi, BadAlignmentIsRejected) {
    void* p = reinterpret_cast<void*>(0x1);
    EXPECT_EQ(pm_posix_memalign(&p, 0, 16), EINVAL);
    EXPECT_EQ(pm_posix_memalign(&p, 24, 16), EINVAL);
    EXPECT_EQ(pm_posix_memalign(&p, 4, 16), EINVAL);  // not a multiple of sizeof(void*)
    EXPECT_EQ(p, reinterpret_cast<void*>(0x1));        // untouched on failure
    errno = 0;
    EXPECT_EQ(pm_aligned_alloc(48, 96), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(MallocApi, ReallocKeepsContentsGrowingAndShrinking) {
    std::size_t sizes[] = {1, 17, 100, 1000, 5000, 40000, 70000, 300000, 3u << 20, 7000, 20, 1};
    void* p = pm_malloc(sizes[0]);
    fill(p, sizes[0], 9);
    std::size_t prev = sizes[0];
    for (std::size_t n : sizes) {
        p = pm_realloc(p, n);
        ASSERT_NE(p, nullptr);
        std::size_t keep = n < prev ? n : prev;
        EXPECT_TRUE(check(p, keep, 9)) << prev << " -> " << n;
        fill(p, n, 9);
        prev = n;
    }
    pm_free(p);
    EXPECT_NE(p = pm_realloc(nullptr, 10), nullptr);
    EXPECT_EQ(pm_realloc(p, 0), nullptr);  // frees, like glibc
}

// A buffer grown step by step (a vector, a Python list) leaves no trail of old buffers in
// use: realloc gives each old large buffer's pages back instead of caching them.
TEST(MallocApi, ReallocGrowthDoesNotKeepOldBuffers) {
    pm_stats_t before{}, after{};
    pm_collect(1);  // nothing cached left for the purger to release while we measure
    pm_stats(&before);
    std::size_t n = 64 << 10;
    void* p = pm_malloc(n);
    for (; n < (std::size_t{8} << 20); n += n / 8) ASSERT_NE(p = pm_realloc(p, n), nullptr);
    pm_stats(&after);
    EXPECT_LE(double(after.bytes_in_use) - double(before.bytes_in_use), 3.0 * double(pm_usable_size(p)))
        << "grown to " << n << " bytes";
    pm_free(p);
}

TEST(MallocApi, CallocZeroesReusedMemory) {
    for (std::size_t n : {std::size_t{8}, std::size_t{200}, std::size_t{4000}, std::size_t{50000},
                          std::size_t{100000}, std::size_t{3} << 20}) {
        for (int round = 0; round < 3; ++round) {
            void* dirty = pm_malloc(n);
            std::memset(dirty, 0xff, n);
            pm_free(dirty);
            auto* z = static_cast<unsigned char*>(pm_calloc(1, n));
            ASSERT_NE(z, nullptr);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(z[i], 0) << n << " at " << i;
            pm_free(z);
        }
    }
}

TEST(MallocApi, OverflowAndExhaustionGiveEnomem) {
    errno = 0;
    EXPECT_EQ(pm_calloc(SIZE_MAX / 2, 3), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(pm_calloc(std::size_t{1} << 33, std::size_t{1} << 33), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(pm_malloc(SIZE_MAX - 100), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(pm_malloc(std::size_t{1} << 50), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    void* p = pm_malloc(64);
    errno = 0;
    EXPECT_EQ(pm_realloc(p, SIZE_MAX - 100), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    pm_free(p);  // still valid after a failed realloc
    // A large block grown far past any size class: NULL, the block kept (growth in place
    // once indexed past the class table for these).
    auto* big = static_cast<unsigned char*>(pm_malloc(std::size_t{1} << 20));
    big[0] = 7;
    for (std::size_t huge : {std::size_t{1} << 47, std::size_t{1} << 52, SIZE_MAX / 2}) {
        errno = 0;
        EXPECT_EQ(pm_realloc(big, huge), nullptr) << huge;
        EXPECT_EQ(errno, ENOMEM);
    }
    EXPECT_EQ(big[0], 7);
    pm_free(big);
    void* q = nullptr;
    EXPECT_EQ(pm_posix_memalign(&q, 64, SIZE_MAX - 100), ENOMEM);
}

// malloc's one-table lookup gives every small size the smallest class that holds it.
TEST(SizeClasses, EverySizeGetsTheSmallestClassThatFits) {
    pm_free(pm_malloc(1));  // initialises the class table
    using namespace physmem::malloc;
    for (std::size_t n = 0; n <= kSmallMax; ++n) {
        unsigned c = class_of(n);
        ASSERT_TRUE(c >= 1 && c <= g_nclasses) << n;
        ASSERT_GE(g_classes[c].size, n) << n;
        if (c > 1) ASSERT_LT(g_classes[c - 1].size, n) << n;
    }
}

// free() tells object starts from interior pointers with a multiply and a rotate instead
// of a division: exact for every offset of every class.
TEST(SizeClasses, ObjectStartTestIsExact) {
    pm_free(pm_malloc(1));  // initialises the class table
    using physmem::malloc::g_classes;
    ASSERT_GT(physmem::malloc::g_nclasses, 70u);
    for (unsigned cls = 1; cls <= physmem::malloc::g_nclasses; ++cls) {
        const auto& c = g_classes[cls];
        for (std::uint64_t off = 0; off < std::uint64_t{c.pages} * 4096 + c.size; ++off) {
            bool want = off % c.size == 0 && off / c.size < c.nobj;
            ASSERT_EQ(physmem::malloc::is_object_start(c.odd_inverse, c.shift, c.nobj, off), want)
                << "size " << c.size << " offset " << off;
        }
    }
}

// --- stagger ---

bool stagger_on() {
    const char* v = std::getenv("PHYSMEM_MALLOC_STAGGER");
    return !v || std::strcmp(v, "0") != 0;
}

// 64 KiB .. 8 MiB: powers of two, values just below and above, and between.
std::vector<std::size_t> large_sizes() {
    std::vector<std::size_t> v;
    for (std::size_t s = 64 << 10; s <= (8u << 20); s *= 2) {
        v.push_back(s);
        v.push_back(s + s / 3);
        v.push_back(s + 123);
        v.push_back(s - 1000);
        v.push_back(s + s / 8 - 1100);  // leaves just over 1 KiB of slack: N close to 16
    }
    return v;
}

// Offsets a buffer of n bytes at p may take (physmem.h): min(64, slack / 64), where
// slack = the pages of its span - n, and usable size + offset = the pages of its span.
std::size_t offsets_available(const void* p, std::size_t n) {
    std::size_t slack = pm_usable_size(p) + (addr(p) & 4095) - n;
    return std::min<std::size_t>(64, slack / 64);
}

std::size_t distinct_low12(const std::vector<void*>& v) {
    std::set<std::uintptr_t> low;
    for (void* p : v) low.insert(addr(p) & 4095);
    return low.size();
}

// The contract of physmem.h: up to N live buffers of one size never share their low 12
// bits (N = offsets available, >= 16), also after frees and reallocations in between.
TEST(Stagger, SameSizeLargeBuffersNeverShareLow12Bits) {
    if (!stagger_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_STAGGER=0";
    for (std::size_t n : large_sizes()) {
        std::vector<void*> live;
        for (int i = 0; i < 32; ++i) {
            live.push_back(pm_malloc(n));
            ASSERT_NE(live.back(), nullptr);
            EXPECT_EQ(addr(live.back()) % 64, 0u);
            EXPECT_GE(pm_usable_size(live.back()), n);
        }
        std::size_t N = offsets_available(live[0], n);
        EXPECT_GE(N, 16u) << "size " << n;
        EXPECT_EQ(distinct_low12(live), std::min<std::size_t>(32, N)) << "size " << n << ", N " << N;
        // Keep N (at most 32), free every other one and allocate again: still distinct.
        while (live.size() > N) pm_free(live.back()), live.pop_back();
        for (std::size_t i = 0; i < live.size(); i += 2) pm_free(live[i]), live[i] = pm_malloc(n);
        EXPECT_EQ(distinct_low12(live), live.size()) << "size " << n << " after reallocations";
        for (void* p : live) pm_free(p);
    }
}

// Circular distance of two addresses' low 12 bits around a 4 KiB page.
std::size_t ring_gap(const void* a, const void* b) {
    std::size_t d = (addr(a) - addr(b)) & 4095;
    return std::min(d, 4096 - d);
}

// physmem.h: a pair allocated one after the other (the convolution's in and out) lands
// min(2 KiB, N * 64 - 64) apart around the page, far outside a loop's alias window.
TEST(Stagger, ConsecutiveBuffersLandFarApartInThePage) {
    if (!stagger_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_STAGGER=0";
    for (std::size_t n : large_sizes()) {
        void* a = pm_malloc(n);
        void* b = pm_malloc(n);
        std::size_t N = offsets_available(a, n);
        EXPECT_GE(ring_gap(a, b), std::min<std::size_t>(2048, N * 64 - 64)) << "size " << n << ", N " << N;
        void* c = pm_malloc(n);   // the third: a quarter page from the nearest of the two when N = 64
        if (N == 64) EXPECT_GE(std::min(ring_gap(c, a), ring_gap(c, b)), 1024u) << "size " << n;
        pm_free(c), pm_free(b), pm_free(a);
    }
}

// A freed large span is cached for its class; the next object of the class takes the cached
// span whose last object ended on the page it will end on, not simply the latest one: a
// program touching its blocks at their ends then touches no new page there. Sizes one byte
// past a page boundary end on the same page whatever the stagger offset (under 4 KiB).
TEST(LargeCache, TheSpanWhoseLastObjectEndedOnTheSamePageIsReused) {
    constexpr std::size_t kA = 72 * 4096 + 1, kB = 75 * 4096 + 1;  // one class (288 to 320 KiB)
    auto* a = static_cast<unsigned char*>(pm_malloc(kA));
    auto* b = static_cast<unsigned char*>(pm_malloc(kB));
    ASSERT_TRUE(a && b);
    a[kA - 1] = b[kB - 1] = 1;
    const auto span = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095}; };
    const std::uintptr_t span_a = span(a), span_b = span(b);
    ASSERT_NE(span_a, span_b);
    pm_free(a);
    pm_free(b);  // cached after a: the latest
    auto* c = static_cast<unsigned char*>(pm_malloc(kA));
    EXPECT_EQ(span(c), span_a) << "took the span of the " << (span(c) == span_b ? "latest" : "neither") << " object";
    auto* d = static_cast<unsigned char*>(pm_malloc(kB));
    EXPECT_EQ(span(d), span_b);
    pm_free(c);
    pm_free(d);
}

TEST(StaggerOff, LargeBuffersArePageAligned) {
    if (stagger_on()) GTEST_SKIP() << "run with PHYSMEM_MALLOC_STAGGER=0 (a CTest entry does)";
    for (std::size_t n : large_sizes()) {
        void* a = pm_malloc(n);
        void* b = pm_malloc(n);
        EXPECT_EQ(addr(a) & 4095, 0u) << n;
        EXPECT_EQ(addr(b) & 4095, 0u) << n;
        pm_free(a);
        pm_free(b);
    }
}

// --- huge pages and purging ---

TEST(HugePages, A64MiBHeapLivesOnHugePages) {
    std::vector<void*> blocks;
    std::size_t total = 0;
    for (unsigned i = 0; total < (std::size_t{96} << 20); ++i) {
        std::size_t n = i % 3 == 0 ? 100000 : (i % 3 == 1 ? 3000 : 200);
        void* p = pm_malloc(n);
        std::memset(p, 1, n);
        blocks.push_back(p);
        total += n;
    }
    pm_stats_t s;
    pm_stats(&s);
    EXPECT_EQ(s.version, PM_STATS_VERSION);
    EXPECT_GE(s.bytes_in_use, std::size_t{64} << 20);
    double share = double(s.bytes_huge) / double(s.bytes_huge + s.small_pages_in_use * (2u << 20));
    std::printf("pm_stats: in use %zu MiB, on huge pages %zu MiB (%.1f%%), backing rung %u\n",
                s.bytes_in_use >> 20, s.bytes_huge >> 20, 100 * share, s.backing);
    if (s.backing == 4) GTEST_SKIP() << "no huge pages on this machine (4k rung)";
    EXPECT_GE(share, 0.9);
    auto e = physmem::os::smaps_entry(blocks[blocks.size() / 2]);
    ASSERT_TRUE(e.found);
    // The heap's mappings (a page kept on 4 KiB pages splits its arena's): from the lowest
    // block to the highest.
    auto [lo, hi] = std::minmax_element(blocks.begin(), blocks.end());
    RangeSmaps r = e.hugetlb ? RangeSmaps{e.rss, e.hugetlb} : smaps_over(addr(*lo), addr(*hi) + 1);
    std::printf("smaps: heap rss %zu MiB, on huge pages %zu MiB (%.1f%%)\n", r.rss >> 20, r.anon_huge >> 20,
                100.0 * double(r.anon_huge) / double(r.rss));
    EXPECT_GE(double(r.anon_huge), 0.9 * double(r.rss));
    for (void* p : blocks) pm_free(p);
}

// Below 16 MiB a THP heap stays on 4 KiB pages (peak RSS of small programs), and says so;
// with PHYSMEM_MALLOC_THP_AFTER_MB=0 it is huge from the start.
// Run in a fresh process (threadsafe death-test style re-executes this test alone): the
// switch to huge pages is once per process and other tests grow big heaps.
TEST(HugePages, ASmallHeapStaysOnSmallPages) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        std::vector<void*> v;
        for (std::size_t total = 0; total < (std::size_t{4} << 20); total += 1000)
            v.push_back(std::memset(pm_malloc(1000), 1, 1000));
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3) std::_Exit(0);  // hugetlb or 4k rung: nothing lazy to check
        auto e = physmem::os::smaps_entry(v[v.size() / 2]);
        std::fprintf(stderr, "thp %zu small %zu huge %zu MiB; smaps rss %zu anon_huge %zu KiB\n",
                     s.thp_pages_in_use, s.small_pages_in_use, s.bytes_huge >> 20, e.rss >> 10,
                     e.anon_huge >> 10);
        const char* after = std::getenv("PHYSMEM_MALLOC_THP_AFTER_MB");
        bool ok = after && std::strcmp(after, "0") == 0  // huge from the start (CTest malloc_thp_from_start)
                      ? s.thp_pages_in_use > 0 && s.small_pages_in_use == 0 && e.found && e.anon_huge > 0
                      : s.thp_pages_in_use == 0 && s.small_pages_in_use > 0 && s.bytes_huge == 0 &&
                            e.found && e.anon_huge == 0;
        std::_Exit(ok ? 0 : 1);
    };
    EXPECT_EXIT(child(), testing::ExitedWithCode(0), "");
}

// --- sparsely touched large objects (PHYSMEM_MALLOC_SPARSE) ---

bool sparse_on() {
    const char* v = std::getenv("PHYSMEM_MALLOC_SPARSE");
    return !v || std::strcmp(v, "0") != 0;
}

// What a sparse_child does with the class's first block (its density probe) before the 400:
// nothing special; writes its ends and grows it by realloc (the copy reads every page);
// keeps it live and never touches it.
enum class First { plain, realloc_grown, untouched };

// In a fresh process (threadsafe death-test style): a heap made big (on huge pages), then
// 400 blocks of 288 KiB, each written at both ends (touch_all: every byte), read back.
// Exits 0 when `ok(the mapping of block `at`, pm_stats, bytes of the blocks)` holds, 2 when
// the heap is not on THP (nothing to check), else 1; the figures on stderr.
// Densely written blocks of 100000 bytes, `bytes` of them (24 MiB by default: over
// THP_AFTER_MB's 16, so the heap is made big, on huge pages). Kept live by the caller.
std::vector<void*> dense_blocks(std::size_t bytes = std::size_t{24} << 20) {
    std::vector<void*> v;
    for (std::size_t total = 0; total < bytes; total += 100000) v.push_back(std::memset(pm_malloc(100000), 1, 100000));
    return v;
}

// A block of n bytes from pm_malloc with v written at both ends (exit 1 when none).
unsigned char* ends_written(std::size_t n, unsigned char v = 1) {
    auto* p = static_cast<unsigned char*>(pm_malloc(n));
    if (!p) std::_Exit(1);
    p[0] = p[n - 1] = v;
    return p;
}

// The first byte of the 4 KiB page holding p.
std::uintptr_t page_of(const void* p) { return addr(p) & ~std::uintptr_t{4095}; }

template <class Ok>
void sparse_child(bool touch_all, Ok ok, First first = First::plain, std::size_t at = 200) {
    std::vector<void*> dense = dense_blocks();
    constexpr std::size_t kSize = 288 << 10, kCount = 400;
    if (first == First::realloc_grown) {
        auto* p = static_cast<unsigned char*>(pm_malloc(kSize));
        p[0] = p[kSize - 1] = 1;
        void* next = pm_malloc(200 << 10);  // another class's probe, placed right after p: p cannot grow in place
        void* q = pm_realloc(p, std::size_t{600} << 10);
        if (q == p || static_cast<unsigned char*>(q)[kSize - 1] != 1) std::_Exit(1);
        pm_free(q);
        pm_free(next);
    }
    if (first == First::untouched) dense.push_back(pm_malloc(kSize));
    std::vector<unsigned char*> v;
    for (std::size_t i = 0; i < kCount; ++i) {
        auto* p = static_cast<unsigned char*>(pm_malloc(kSize));
        if (touch_all) std::memset(p, static_cast<int>(i), kSize);
        p[0] = p[kSize - 1] = static_cast<unsigned char>(i);
        v.push_back(p);
    }
    for (std::size_t i = 0; i < kCount; ++i)
        if (v[i][0] != static_cast<unsigned char>(i) || v[i][kSize - 1] != static_cast<unsigned char>(i)) std::_Exit(1);
    pm_stats_t s;
    pm_stats(&s);
    if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
    auto e = physmem::os::smaps_entry(v[at]);
    std::fprintf(stderr, "blocks %zu MiB: their mapping rss %zu KiB (huge %zu KiB); pm_stats thp %zu, small %zu "
                 "pages, empty %zu, resident~ %zu KiB\n", kCount * kSize >> 20, e.rss >> 10, e.anon_huge >> 10,
                 s.thp_pages_in_use, s.small_pages_in_use, s.huge_pages_empty, s.bytes_resident_est >> 10);
    std::_Exit(e.found && ok(e, s, kCount * kSize) ? 0 : 1);
}

bool thp_child_exit(int status) { return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2); }

// Blocks on 4 KiB pages holding under a quarter of their bytes, none of it huge.
bool few_small_pages(const physmem::os::SmapsEntry& e, std::size_t bytes) {
    return e.anon_huge == 0 && e.rss < bytes / 4;
}

// Blocks written only at their ends go on 4 KiB pages: their mapping holds about two pages
// a block (under a quarter of their bytes), none of it huge; on huge pages it would hold
// every 2 MiB page they share. pm_stats counts them by what is resident: not as 2 MiB
// pages on 4 KiB pages, and the resident estimate beyond the huge pages under a quarter
// of their bytes.
TEST(LargeSparse, BlocksTouchedAtTheirEndsHoldFewPages) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_child(false,
                             [](const physmem::os::SmapsEntry& e, const pm_stats_t& s, std::size_t bytes) {
                                 std::size_t huge = (s.thp_pages_in_use + s.huge_pages_empty) * (2u << 20);
                                 return few_small_pages(e, bytes) && s.small_pages_in_use * (2u << 20) <= bytes / 10 &&
                                        s.bytes_resident_est >= huge && s.bytes_resident_est - huge < bytes / 4;
                             }),
                thp_child_exit, "");
}

// The class's first block grown by realloc is judged before the copy reads its pages: the
// blocks after it, touched at their ends, go on 4 KiB pages from the first (judged dense,
// the first 64 would go on huge pages until the class's next probe).
TEST(LargeSparse, AReallocatedProbeIsJudgedByWhatTheProgramTouched) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_child(false,
                             [](const physmem::os::SmapsEntry& e, const pm_stats_t&, std::size_t bytes) {
                                 return few_small_pages(e, bytes);
                             },
                             First::realloc_grown, 0),
                thp_child_exit, "");
}

// A first block the program never touches does not keep its class unjudged: it is given up
// after a few reads and the next block is the probe.
TEST(LargeSparse, AnUntouchedProbeDoesNotStopTheJudging) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_child(false,
                             [](const physmem::os::SmapsEntry& e, const pm_stats_t&, std::size_t bytes) {
                                 return few_small_pages(e, bytes);
                             },
                             First::untouched),
                thp_child_exit, "");
}

// Blocks written in full stay on huge pages (one probe block of the class on 4 KiB pages).
TEST(LargeSparse, DenselyWrittenBlocksStayOnHugePages) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_child(true,
                             [](const physmem::os::SmapsEntry& e, const pm_stats_t& s, std::size_t bytes) {
                                 return e.anon_huge >= e.rss * 9 / 10 && s.small_pages_in_use * (2u << 20) <= bytes / 10;
                             }),
                thp_child_exit, "");
}

// Blocks placed while the heap was small (on 4 KiB pages, not judged: no sparse arena yet)
// and written only at their ends stay on 4 KiB pages when the heap turns huge: the 2 MiB
// pages they fill are neither collapsed (they held 2 MiB each for a few touched KiB: the
// alloc suite's large-live, 18 MiB) nor left to khugepaged, and keep their bytes. Then the
// heap is made big by densely written blocks, which go on huge pages.
TEST(LargeSparse, BlocksPlacedBeforeTheHeapTurnsHugeKeepFewPages) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t kSize = 288 << 10, kCount = 36;  // 10 MiB: below THP_AFTER_MB's 16
        std::vector<unsigned char*> early;
        for (std::size_t i = 0; i < kCount; ++i) {
            auto* p = static_cast<unsigned char*>(pm_malloc(kSize));
            p[0] = p[kSize - 1] = static_cast<unsigned char>(i + 1);
            early.push_back(p);
        }
        std::vector<void*> dense = dense_blocks(std::size_t{32} << 20);
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);  // not on THP: nothing to check
        for (std::size_t i = 0; i < kCount; ++i)
            if (early[i][0] != static_cast<unsigned char>(i + 1) || early[i][kSize - 1] != static_cast<unsigned char>(i + 1))
                std::_Exit(1);
        // The 2 MiB pages the early blocks fill alone: from the first boundary after the first
        // block's start to the last boundary before the last block's end.
        constexpr std::uintptr_t kHuge = 2 << 20;
        std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(early.front()) + kHuge - 1) & ~(kHuge - 1);
        std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(early.back()) + kSize) & ~(kHuge - 1);
        if (hi < lo + 2 * kHuge) std::_Exit(2);  // not laid out one after another: nothing to check
        std::size_t resident = physmem::os::resident_pages(reinterpret_cast<void*>(lo), hi - lo);
        auto e = physmem::os::smaps_entry(reinterpret_cast<void*>(lo));
        auto d = physmem::os::smaps_entry(dense[dense.size() / 2]);
        std::fprintf(stderr, "early blocks' %zu huge pages: %zu of %zu 4 KiB pages resident, their mapping's huge "
                     "%zu KiB; dense blocks' mapping: huge %zu of %zu KiB\n", (hi - lo) / kHuge, resident,
                     (hi - lo) / 4096, e.anon_huge >> 10, d.anon_huge >> 10, d.rss >> 10);
        pm_stats(&s);  // those pages are counted as on 4 KiB pages, not huge
        std::fprintf(stderr, "pm_stats: %zu pages on 4 KiB pages, %zu huge\n", s.small_pages_in_use, s.thp_pages_in_use);
        bool ok = resident * 4 < (hi - lo) / 4096 && d.found && d.anon_huge > 0 && s.small_pages_in_use >= (hi - lo) / kHuge;
        std::_Exit(ok ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// A big buffer grown by realloc and written only at its ends (the alloc suite's realloc-grow)
// is judged sparse at its first realloc: what it grows into stays on 4 KiB pages, where each
// step's last byte faulted a 2 MiB page (134 MiB resident for 128 MiB grown to 256). A
// densely written buffer grown the same way stays on huge pages (but the 2 MiB pages of its
// first and last bytes: its mapping between them all huge, 56 MiB and more).
TEST(LargeSparse, ABufferGrownByReallocAndWrittenAtItsEndsStaysSmall) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t M = std::size_t{1} << 20, kStart = 64 * M;
        std::vector<void*> heap = dense_blocks();  // the heap made big first (on huge pages)
        auto* b = static_cast<unsigned char*>(pm_malloc(kStart));
        b[0] = 7, b[kStart - 1] = 1;
        for (std::size_t n = kStart + M; n <= 2 * kStart; n += M) {
            b = static_cast<unsigned char*>(pm_realloc(b, n));
            if (!b || b[0] != 7 || b[n - M - 1] != 1) std::_Exit(1);
            b[n - 1] = 1;
        }
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        std::size_t resident = physmem::os::resident_pages(reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(b) & ~std::uintptr_t{4095}), 2 * kStart);
        auto* d = static_cast<unsigned char*>(std::memset(pm_malloc(kStart), 3, kStart));
        for (std::size_t n = kStart + M; n <= kStart + 8 * M; n += M) {
            d = static_cast<unsigned char*>(pm_realloc(d, n));
            std::memset(d + n - M, 3, M);
        }
        auto e = physmem::os::smaps_entry(d + kStart / 2);
        std::fprintf(stderr, "sparse buffer: %zu of %zu pages resident; dense one's mapping huge %zu of %zu KiB\n",
                     resident, 2 * kStart / 4096, e.anon_huge >> 10, e.rss >> 10);
        std::_Exit(resident < 2 * kStart / 4096 / 8 && e.found && e.anon_huge >= 56 * M &&
                           e.anon_huge * 10 >= e.rss * 9 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// A buffer judged sparse while the heap is small keeps its 2 MiB pages on 4 KiB pages when the
// heap turns huge (advising the arena huge as a whole had cleared their own advice).
TEST(LargeSparse, ABufferJudgedSparseOnASmallHeapStaysSmallWhenItTurnsHuge) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t M = std::size_t{1} << 20, kSize = 3 * M;
        auto* b = static_cast<unsigned char*>(pm_malloc(kSize));
        if (!b) std::_Exit(1);
        b[0] = b[kSize - 1] = 1;
        b = static_cast<unsigned char*>(pm_realloc(b, kSize + M));  // judged: sparse
        if (!b) std::_Exit(1);
        std::vector<void*> heap = dense_blocks();  // then the heap is made big (on huge pages)
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        auto e = physmem::os::smaps_entry(b + M);
        std::fprintf(stderr, "after the switch, the sparse buffer's mapping THP-eligible %d\n", int(e.thp_eligible));
        std::_Exit(e.found && !e.thp_eligible && b[0] == 1 && b[kSize - 1] == 1 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// A span on 4 KiB pages taken from the cache by a smaller object of its class gives back
// the page its last object ended on: a program touching its blocks at their ends would
// otherwise leave one more resident page with every reuse (alloc suite, large-live).
TEST(LargeSparse, AReusedSpanGivesBackThePageItsLastObjectEndedOn) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        std::vector<void*> dense = dense_blocks();
        constexpr std::size_t kA = 75 * 4096 + 1, kB = 72 * 4096 + 1;  // one class (288 to 320 KiB)
        unsigned char* probe = ends_written(kA);  // the class's probe: judged sparse at the next allocation
        unsigned char* a = ends_written(kA);      // on 4 KiB pages
        const std::uintptr_t a_span = page_of(a);
        void* a_end = reinterpret_cast<void*>(page_of(a + kA - 1));
        pm_free(a);  // cached
        unsigned char* b = ends_written(kB);
        pm_stats_t s;
        pm_stats(&s);
        const bool reused = page_of(b) == a_span;
        if (s.backing != 3 || !reused) std::_Exit(2);  // not on THP, or not a's span: nothing to check
        const std::size_t left = physmem::os::resident_pages(a_end, 4096);
        std::fprintf(stderr, "the page a's last byte was on: %zu resident\n", left);
        std::_Exit(left == 0 && b[0] == 1 && b[kB - 1] == 1 && probe[kA - 1] == 1 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// Blocks on 4 KiB pages (sparse arenas) cost little metadata beside the pages they touch:
// no page map entry per 4 KiB page of the arena (8 bytes a page, which their starts spread
// over all of it: 12% of what 480 KiB blocks written at their ends touch), one per 64 KiB.
// Every block is found again by free() and pm_usable_size.
TEST(LargeSparse, BlocksOnSparseArenasCostLittleMetadata) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        std::vector<void*> dense = dense_blocks();
        constexpr std::size_t kSize = 480 << 10, kCount = 1500, kTouched = kCount * 2 * 4096;
        std::vector<unsigned char*> v;
        v.reserve(kCount);
        const std::size_t before = physmem::os::resident_bytes();
        for (std::size_t i = 0; i < kCount; ++i) v.push_back(ends_written(kSize, static_cast<unsigned char>(i)));
        const std::size_t after = physmem::os::resident_bytes();
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !before || !after) std::_Exit(2);  // not on THP: no sparse arenas
        const std::size_t extra = after - before > kTouched ? after - before - kTouched : 0;
        std::fprintf(stderr, "%zu blocks written at their ends: %zu KiB resident, %zu KiB beyond the pages touched\n",
                     kCount, (after - before) >> 10, extra >> 10);
        bool ok = extra < kTouched / 12;
        for (std::size_t i = 0; i < kCount; ++i) {
            ok &= pm_usable_size(v[i]) >= kSize && v[i][kSize - 1] == static_cast<unsigned char>(i);
            pm_free(v[i]);
        }
        std::_Exit(ok ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// free() of a pointer inside the first page of a block on 4 KiB pages, not its start, is
// diagnosed as for any large block: the sparse arena's map finds the block from that page.
TEST(LargeSparse, AnInteriorPointerIntoASparseBlockAborts) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        std::vector<void*> dense = dense_blocks();
        constexpr std::size_t kSize = 288 << 10;
        unsigned char* p = nullptr;
        for (int i = 0; i < 3; ++i) p = ends_written(kSize);  // the probe, then blocks of a class judged sparse
        auto e = physmem::os::smaps_entry(p);
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !e.found || e.thp_eligible) {
            std::fprintf(stderr, "nothing to check: the block is not on 4 KiB pages\n");
            std::_Exit(2);
        }
        pm_free(p + 64);
        std::_Exit(0);
    };
    auto aborted_or_unchecked = [](int st) {
        return (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) || (WIFEXITED(st) && WEXITSTATUS(st) == 2);
    };
    EXPECT_EXIT(child(), aborted_or_unchecked, "inside the large allocation|nothing to check");
}

// A span cached after holding a buffer judged sparse is judged afresh for the next object it
// holds: a densely written buffer there, grown in place by realloc on a big heap, grows on
// huge pages (kept with the span, the old judgement advised its growth MADV_NOHUGEPAGE).
TEST(LargeSparse, TheNextObjectInACachedSpanIsJudgedAfresh) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t M = std::size_t{1} << 20, kSize = 5 * M / 2;  // its span cacheable
        // While the heap is small (4 KiB pages: what a buffer touched shows), a buffer written
        // at its ends is judged sparse at its first realloc, then freed (its span cached).
        auto* b = static_cast<unsigned char*>(pm_malloc(kSize));
        b[0] = b[kSize - 1] = 1;
        b = static_cast<unsigned char*>(pm_realloc(b, kSize + M / 4));
        void* room = pm_malloc(16 * M);  // the room after it, kept while the heap is made big
        if (!b || !room) std::_Exit(1);
        pm_free(b);
        std::vector<void*> heap = dense_blocks();
        pm_free(room);
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        auto* d = static_cast<unsigned char*>(std::memset(pm_malloc(kSize + M / 4), 3, kSize + M / 4));
        auto* g = static_cast<unsigned char*>(pm_realloc(d, kSize + 8 * M));
        if (d != b || g != d) std::_Exit(2);  // not b's span (the class of its size), or moved: nothing to check
        std::memset(g + kSize, 3, 8 * M);
        auto e = physmem::os::smaps_entry(g + kSize + 4 * M);
        std::fprintf(stderr, "dense buffer in a reused span, grown in place: its growth THP-eligible %d, "
                     "its mapping's huge %zu KiB\n", int(e.thp_eligible), e.anon_huge >> 10);
        std::_Exit(e.found && e.thp_eligible && g[0] == 3 && g[kSize + 8 * M - 1] == 3 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// The block whose placing turns the heap huge (not yet touched, of a class not judged: no
// probe while the heap was small) is not faulted in as 2 MiB when the program touches its
// ends: every block, that one too, holds about the pages it touched.
TEST(LargeSparse, TheBlockThatTurnsTheHeapHugeHoldsWhatItTouched) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t kSize = 288 << 10, kCount = 100;  // 28 MiB: over THP_AFTER_MB's 16
        std::vector<unsigned char*> v;
        for (std::size_t i = 0; i < kCount; ++i) {
            auto* p = static_cast<unsigned char*>(pm_malloc(kSize));
            p[0] = p[kSize - 1] = 1;
            v.push_back(p);
        }
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3) std::_Exit(2);  // not THP (its 8 pages kept small: none counted huge)
        // Over the 2 MiB pages they reach (the rest of such a page holds nothing).
        constexpr std::uintptr_t kHuge = 2 << 20;
        std::set<std::uintptr_t> pages;
        for (auto* p : v)
            for (std::uintptr_t h = addr(p) & ~(kHuge - 1); h < addr(p) + kSize; h += kHuge) pages.insert(h);
        std::size_t resident = 0;
        for (std::uintptr_t h : pages) resident += physmem::os::resident_pages(reinterpret_cast<void*>(h), kHuge);
        std::fprintf(stderr, "%zu blocks touched at their ends: %zu pages resident in the %zu 2 MiB pages they reach\n",
                     kCount, resident, pages.size());
        std::_Exit(resident <= 3 * kCount ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// A big buffer on a big heap takes huge pages at the first touch of its ends; judged sparse
// at its first realloc, it keeps of them only the 4 KiB pages it wrote (their bytes intact),
// not 2 MiB each: a large object (under 256 MiB) and a mapping of its own alike.
void sparse_big_buffer_child(std::size_t size) {
    constexpr std::size_t M = std::size_t{1} << 20;
    std::vector<void*> heap = dense_blocks();  // the heap made big first (on huge pages)
    auto* b = static_cast<unsigned char*>(pm_malloc(size));
    if (!b) std::_Exit(1);
    const std::size_t marks[] = {0, 3 * 4096 + 5, 1 * M + 7, size - 2 * M + 9, size - 1};
    for (std::size_t i = 0; i < std::size(marks); ++i) b[marks[i]] = static_cast<unsigned char>(i + 1);
    // The 4 KiB pages of [b, b + size).
    auto pages_of = [size](const unsigned char* p) {
        const auto lo = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095};
        const auto hi = (reinterpret_cast<std::uintptr_t>(p) + size + 4095) & ~std::uintptr_t{4095};
        return physmem::os::resident_pages(reinterpret_cast<void*>(lo), hi - lo);
    };
    const std::size_t before = pages_of(b);
    b = static_cast<unsigned char*>(pm_realloc(b, size + M));  // judged: sparse
    if (!b) std::_Exit(1);
    for (std::size_t i = 0; i < std::size(marks); ++i)
        if (b[marks[i]] != static_cast<unsigned char>(i + 1)) std::_Exit(1);
    const std::size_t after = pages_of(b);
    std::fprintf(stderr, "buffer of %zu MiB written at 5 places: %zu pages resident before its realloc, %zu after\n",
                 size >> 20, before, after);
    if (before == SIZE_MAX || after == SIZE_MAX) std::_Exit(1);
    if (before < 1024) std::_Exit(2);  // its ends not on huge pages: nothing to check
    std::_Exit(after <= 16 ? 0 : 1);
}

TEST(LargeSparse, ABigBufferJudgedSparseKeepsOnlyThePagesItWrote) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_big_buffer_child(std::size_t{30} << 20), thp_child_exit, "");  // under 32 MiB: see below
}

// A buffer of 32 MiB and more on a big heap: the 2 MiB pages of its first and last bytes
// stay on 4 KiB pages until touched (a program writing it at its ends holds a few KiB there,
// not 4 MiB), before anything judges it.
TEST(LargeSparse, ABufferOf32MiBWrittenAtItsEndsHoldsFewPages) {
    if (!sparse_on()) GTEST_SKIP() << "PHYSMEM_MALLOC_SPARSE=0";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t M = std::size_t{1} << 20, kSize = 32 * M;
        std::vector<void*> heap = dense_blocks();  // the heap made big first (on huge pages)
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        auto* b = static_cast<unsigned char*>(pm_malloc(kSize));
        if (!b) std::_Exit(1);
        // What its ends add (a 2 MiB page it shares with the blocks before it is resident
        // already).
        const auto lo = addr(b) & ~std::uintptr_t{4095}, hi = (addr(b) + kSize + 4095) & ~std::uintptr_t{4095};
        const std::size_t before = physmem::os::resident_pages(reinterpret_cast<void*>(lo), hi - lo);
        b[0] = b[kSize - 1] = 1;
        const std::size_t after = physmem::os::resident_pages(reinterpret_cast<void*>(lo), hi - lo);
        std::fprintf(stderr, "32 MiB written at its ends: %zu -> %zu pages resident\n", before, after);
        std::_Exit(after <= before + 4 ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

TEST(LargeSparse, AMappingJudgedSparseKeepsOnlyThePagesItWrote) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_big_buffer_child(std::size_t{300} << 20), thp_child_exit, "");
}

// Small objects' 2 MiB pages touched on under a quarter of their 4 KiB pages when the heap
// turns huge stay on 4 KiB pages (a program's few small objects held 2 MiB from then on),
// their objects keeping their bytes; such a page is huge again once a quarter of it holds
// objects.
TEST(LargeSparse, SmallObjectPagesTouchedSparselyStaySmallUntilTheyFill) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t kHuge = std::size_t{2} << 20;
        std::vector<unsigned char*> few;
        for (int i = 0; i < 40; ++i) few.push_back(static_cast<unsigned char*>(std::memset(pm_malloc(200), i + 1, 200)));
        std::vector<void*> heap = dense_blocks();
        pm_stats_t s;
        pm_stats(&s);
        if (s.backing != 3 || !s.thp_pages_in_use) std::_Exit(2);
        for (int i = 0; i < 40; ++i)
            if (few[i][0] != i + 1 || few[i][199] != i + 1) std::_Exit(1);
        const auto page = addr(few[0]) & ~(kHuge - 1);
        const std::size_t sparse = physmem::os::resident_pages(reinterpret_cast<void*>(page), kHuge);
        // Then 1 MiB more of them: the page (their class fills it first) turns huge.
        std::vector<unsigned char*> more;
        for (int i = 0; i < 5000; ++i) more.push_back(static_cast<unsigned char*>(std::memset(pm_malloc(200), 9, 200)));
        std::size_t in_page = 0;
        for (auto* p : more) in_page += (addr(p) & ~(kHuge - 1)) == page;
        // Advised huge again (the collapse that follows may be refused by a busy kernel:
        // khugepaged then does it later).
        auto e = physmem::os::smaps_entry(few[0]);
        std::fprintf(stderr, "the small objects' 2 MiB page: %zu of 512 pages resident; after %zu more objects "
                     "there THP-eligible %d\n", sparse, in_page, int(e.thp_eligible));
        for (int i = 0; i < 40; ++i)
            if (few[i][0] != i + 1 || few[i][199] != i + 1) std::_Exit(1);
        if (in_page < 2000) std::_Exit(2);  // filled elsewhere: nothing more to check
        std::_Exit(sparse < 128 && e.found && e.thp_eligible ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

// PHYSMEM_MALLOC_SPARSE=0 (CTest malloc_sparse_off): blocks touched at their ends go on
// huge pages too.
TEST(LargeSparseOff, BlocksTouchedAtTheirEndsStayOnHugePages) {
    if (sparse_on()) GTEST_SKIP() << "run with PHYSMEM_MALLOC_SPARSE=0 (a CTest entry does)";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(sparse_child(false,
                             [](const physmem::os::SmapsEntry& e, const pm_stats_t& s, std::size_t) {
                                 return e.anon_huge > 0 && s.small_pages_in_use == 0;
                             }),
                thp_child_exit, "");
}

// --- the 1 GiB rung ---

// The child of HugePages.OneGigPageHeapInAChild: this binary re-executed with
// PHYSMEM_TEST_ONE_GIG_CHILD=1 and PHYSMEM_MALLOC_BACKING=1g. Builds a 64 MiB heap and
// reports (exit status 0) whether /proc/self/smaps shows it on a 1 GiB page.
int one_gig_child() {
    std::vector<void*> v;
    for (std::size_t total = 0; total < (std::size_t{64} << 20); total += 4000) {
        v.push_back(pm_malloc(4000));
        if (!v.back()) return 2;
        std::memset(v.back(), 1, 4000);
    }
    pm_stats_t s;
    pm_stats(&s);
    auto e = physmem::os::smaps_entry(v[v.size() / 2]);
    std::printf("child: 1 GiB pages mapped %zu; smaps: kernel page %zu KiB, hugetlb %zu MiB\n",
                s.hugetlb_1g_pages, e.kernel_page_size >> 10, e.hugetlb >> 20);
    bool ok = s.hugetlb_1g_pages >= 1 && e.found && e.kernel_page_size == (std::size_t{1} << 30) &&
              e.hugetlb >= (std::size_t{1} << 30);
    return ok ? 0 : 1;
}

// Runs before gtest's main in the re-executed child.
[[maybe_unused]] const int g_one_gig_child = [] {
    if (!std::getenv("PHYSMEM_TEST_ONE_GIG_CHILD")) return 0;
    int rc = one_gig_child();
    std::fflush(stdout);
    std::_Exit(rc);
    return 0;
}();

int run_one_gig_child() {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("PHYSMEM_TEST_ONE_GIG_CHILD", "1", 1);
        setenv("PHYSMEM_MALLOC_BACKING", "1g", 1);
        char self[] = "/proc/self/exe";
        char* argv[] = {self, nullptr};
        execv(self, argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// As root, with a 1 GiB page free or reservable: nr_hugepages (1 GiB) raised by one when
// none is free, restored afterwards (both printed), and a child with
// PHYSMEM_MALLOC_BACKING=1g must get its heap on that page.
TEST(HugePages, OneGigPageHeapInAChild) {
    constexpr std::size_t kGiB = std::size_t{1} << 30;
    const char* allow = std::getenv("PHYSMEM_TEST_RESERVE_HUGE_PAGES");
    if (allow && std::strcmp(allow, "0") == 0) GTEST_SKIP() << "PHYSMEM_TEST_RESERVE_HUGE_PAGES=0";
    if (!physmem::os::is_root()) GTEST_SKIP() << "needs root to reserve a 1 GiB page";
    long nr = physmem::os::hugepages_read(kGiB, "nr_hugepages");
    if (nr < 0) GTEST_SKIP() << "this kernel has no 1 GiB hugetlb pages";
    physmem::core::HugeReservation raised;  // through the core, the one nr_hugepages writer
    if (physmem::os::hugepages_read(kGiB, "free_hugepages") < 1) {
        raised = physmem::core::add_huge_pages(kGiB, 1);
        std::printf("test: nr_hugepages (1 GiB) %ld -> %ld\n", nr, raised.after);
        std::fflush(stdout);  // before the child writes
    }
    auto restore = [&] {
        if (!raised.changed()) return;
        auto back = physmem::core::restore_huge_pages(raised, physmem::core::Restore::to_before);
        std::printf("test: nr_hugepages (1 GiB) restored to %ld\n", back.now);
    };
    if (physmem::os::hugepages_read(kGiB, "free_hugepages") < 1) {
        restore();
        GTEST_SKIP() << "no 1 GiB page could be reserved (memory too small or fragmented)";
    }
    int rc = run_one_gig_child();
    restore();
    EXPECT_EQ(rc, 0) << "the child's heap was not on a 1 GiB page (see its line above)";
}

// A large object that does not fit in the empty 2 MiB pages takes new ones: those emptied
// an eighth of the purge delay ago or longer are purged then (the resident set does not grow
// by what the program stopped using); those just emptied wait for a buffer that fits.
TEST(Purge, GrowingIntoNewPagesPurgesPagesEmptyForAWhile) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        constexpr std::size_t M = std::size_t{1} << 20;
        std::vector<void*> heap = dense_blocks();  // the heap made big (a freed large object's pages wait then)
        auto empty_after = [&](bool wait) {
            void* a = std::memset(pm_malloc(8 * M), 2, 8 * M);
            void* b = std::memset(pm_malloc(8 * M), 3, 8 * M);
            pm_free(a);  // its pages wait, empty
            const auto freed = std::chrono::steady_clock::now();
            pm_stats_t s;
            pm_stats(&s);
            const std::size_t empty = s.huge_pages_empty;
            if (wait) std::this_thread::sleep_for(std::chrono::milliseconds(40));  // the delay (100 ms) / 8 and more
            void* c = pm_malloc(12 * M);  // does not fit where a was
            const auto waited = std::chrono::steady_clock::now() - freed;
            std::memset(c, 4, 12 * M);
            pm_stats(&s);
            std::fprintf(stderr, "%s: empty pages %zu, then %zu\n", wait ? "after 40 ms" : "at once", empty, s.huge_pages_empty);
            pm_free(b), pm_free(c);
            pm_collect(1);
            if (!wait && waited >= std::chrono::milliseconds(12)) std::_Exit(2);  // descheduled: not "at once"
            return std::pair{empty, s.huge_pages_empty};
        };
        auto [young, young_after] = empty_after(false);
        if (young < 3) std::_Exit(2);  // freed at once (a small heap, no THP): nothing waits
        auto [old, old_after] = empty_after(true);
        std::_Exit(young >= 3 && young_after >= young && old >= 3 && old_after + 3 <= old ? 0 : 1);
    };
    EXPECT_EXIT(child(), thp_child_exit, "");
}

std::size_t thread_count() {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory();
    return n;
}

// With PHYSMEM_MALLOC_BACKGROUND_PURGE=1 (CTest malloc_background_purge), the purger thread
// gives the memory back after the delay: nothing of physmem is called between the frees
// and the RSS reading. Then, with nothing left to purge, it exits. (Without the option no
// thread is started: test_edges.cpp, MemoryGoesBackOnLaterCallsWithNoThreadOfItsOwn.)
TEST(Purge, RssFallsAfterABigFreeWithoutFurtherCalls) {
    if (!physmem::malloc::g_opt.background_purge) GTEST_SKIP() << "needs PHYSMEM_MALLOC_BACKGROUND_PURGE=1";
    pm_collect(1);
    // A purger from earlier tests ends (it sleeps at most half the delay, then exits idle).
    std::this_thread::sleep_for(std::chrono::milliseconds(physmem::malloc::g_opt.purge_delay_ms + 50));
    const std::size_t threads = thread_count();
    const std::size_t n = std::size_t{256} << 20, block = std::size_t{1} << 20;
    std::vector<void*> blocks;
    for (std::size_t done = 0; done < n; done += block) {
        void* p = pm_malloc(block);
        std::memset(p, 7, block);
        blocks.push_back(p);
    }
    std::size_t full = physmem::os::resident_bytes();
    pm_stats_t before;
    pm_stats(&before);
    for (void* p : blocks) pm_free(p);
    std::size_t after = full;
    for (int waited = 0; waited < 40 && after + (std::size_t{200} << 20) >= full; ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // up to 2 s; the delay is 100 ms
        after = physmem::os::resident_bytes();
    }
    pm_stats_t s;
    pm_stats(&s);
    std::printf("rss: %zu MiB with the heap, %zu MiB after free + delay; purged %zu MiB\n", full >> 20,
                after >> 20, (s.bytes_purged - before.bytes_purged) >> 20);
    EXPECT_GE(s.bytes_purged - before.bytes_purged, std::size_t{200} << 20);
    EXPECT_LT(after + (std::size_t{200} << 20), full);
    std::size_t now = thread_count();
    for (int waited = 0; waited < 40 && now != threads; ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        now = thread_count();
    }
    EXPECT_EQ(now, threads) << "the purger thread should exit once nothing waits";
}

// --- threads ---

// A deterministic multi-threaded stress test with content verification and cross-thread
// frees. It is not a benchmark: it checks that every byte survives. Shrunk under sanitizers.
struct Slot {
    std::atomic<void*> p{nullptr};
};

std::size_t stress_size(std::uint64_t r) {
    switch (r % 16) {
        case 0: return 61440 + (r >> 8) % 300000;  // large
        case 1: case 2: return (r >> 8) % 16384;
        default: return (r >> 8) % 512;
    }
}

// Header of each stress block: its size and seed, then the pattern.
void stamp(void* p, std::size_t n, std::uint32_t seed) {
    if (n < 16) { std::memset(p, static_cast<int>(seed & 0xff), n); return; }
    std::memcpy(p, &n, 8);
    std::memcpy(static_cast<char*>(p) + 8, &seed, 4);
    fill(static_cast<char*>(p) + 16, n - 16, seed);
}

bool verify(void* p) {
    std::size_t n;
    std::uint32_t seed;
    std::memcpy(&n, p, 8);
    std::memcpy(&seed, static_cast<char*>(p) + 8, 4);
    return n >= 16 && n <= pm_usable_size(p) && check(static_cast<char*>(p) + 16, n - 16, seed);
}

TEST(Threads, StressWithCrossThreadFreesKeepsContents) {
    const unsigned threads = 4, slots = 2048;
    const unsigned iters = kSanitized ? 20000 : 200000;
    std::vector<Slot> shared(slots);
    std::atomic<unsigned> bad{0};
    auto work = [&](unsigned t) {
        std::uint64_t r = 0x9E3779B97F4A7C15ull * (t + 1);
        for (unsigned i = 0; i < iters; ++i) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            std::size_t n = stress_size(r);
            if (n < 16) n = 16;
            void* p = pm_malloc(n);
            if (!p) { bad++; continue; }
            stamp(p, n, static_cast<std::uint32_t>(r));
            void* old = shared[(r >> 40) % slots].p.exchange(p);  // whoever takes it frees it
            if (old) {
                if (!verify(old)) bad++;
                pm_free(old);
            }
        }
    };
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) ts.emplace_back(work, t);
    for (auto& t : ts) t.join();
    for (auto& s : shared)
        if (void* p = s.p.load()) {
            if (!verify(p)) bad++;
            pm_free(p);
        }
    EXPECT_EQ(bad.load(), 0u);
}

// A thread's first object of a big class takes one or two objects from the central list,
// not four: each one taken is a page made resident by its link alone (python's start-up).
TEST(Threads, AFirstRefillOfBigObjectsTakesFewOfThem) {
    for (std::size_t n : {std::size_t{5000}, std::size_t{16384}, std::size_t{40000}}) {
        std::size_t taken = 0, cls = 0;
        std::thread([&] {  // a new thread: a new cache, its first refill of n's class
            pm_stats_t s0, s1;
            pm_stats(&s0);
            void* p = pm_malloc(n);
            pm_stats(&s1);
            taken = s1.bytes_small_outstanding - s0.bytes_small_outstanding;
            cls = pm_usable_size(p);
            pm_free(p);
        }).join();
        EXPECT_GE(taken, cls) << n;
        EXPECT_LE(taken, std::max<std::size_t>(cls, std::size_t{8} << 10)) << n << "-byte class " << cls;
    }
}

TEST(Threads, ThreadExitReturnsItsCache) {
    const std::size_t n = 3000;  // a class nothing else here uses between the two reads
    pm_stats_t s0, s1, s2;
    pm_stats(&s0);
    std::atomic<int> phase{0};
    std::thread t([&] {
        std::vector<void*> v;
        for (int i = 0; i < 20; ++i) v.push_back(pm_malloc(n));
        for (void* p : v) pm_free(p);  // they stay in this thread's cache
        phase = 1;
        while (phase != 2) std::this_thread::yield();
    });
    while (phase != 1) std::this_thread::yield();
    pm_stats(&s1);
    phase = 2;
    t.join();
    pm_stats(&s2);
    EXPECT_GT(s1.bytes_small_outstanding, s0.bytes_small_outstanding);
    EXPECT_EQ(s2.bytes_small_outstanding, s0.bytes_small_outstanding);
}

// The exit status of a forked child; one still running after 30 s is killed and reported
// (-1), so a child that deadlocks fails the test instead of hanging the test command.
int wait_child(pid_t pid) {
    int status = 0;
    for (int ms = 0; ms < 30000; ms += 2) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0) return -2;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

// Starts n threads running body(stop) and returns once every one of them runs it. A fork
// must not overlap a thread's start under GCC 12's ASan: libasan has no fork handler, and a
// thread starting (AsanThread::Init: calloc/free in pthread_getattr_np) may hold a
// size-class lock of ASan's allocator, which the child then inherits held: its first new
// thread waited forever in SizeClassAllocator64::GetFromAllocator (issue 11 item 10; the
// same with no physmem code at all). The program's own threads are the program's business;
// the allocator's own thread is ours (purge.cpp, "the purger").
template <class Body>
std::vector<std::thread> start_running(int n, std::atomic<bool>& stop, Body body) {
    std::atomic<int> running{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < n; ++t)
        ts.emplace_back([&stop, &running, body] {
            running++;
            body(stop);
        });
    while (running < n) std::this_thread::yield();
    return ts;
}

// In the child: malloc/free, then a thread that allocates (and may start the child's
// purger). 0 when all went well.
int child_work() {
    int ok = 1;
    for (int i = 0; i < 1000; ++i) {
        void* p = pm_malloc(static_cast<std::size_t>(i) * 37 % 100000);
        if (!p) ok = 0;
        pm_free(p);
    }
    std::thread th([] { pm_free(pm_malloc(5000)); pm_free(pm_malloc(200000)); });  // threads work in the child too
    th.join();
    return ok ? 0 : 1;
}

TEST(Threads, ForkInAMultithreadedProgram) {
    std::atomic<bool> stop{false};
    auto ts = start_running(2, stop, [](std::atomic<bool>& stop) {
        while (!stop) {
            void* a = pm_malloc(100);
            void* b = pm_malloc(200000);
            pm_free(a);
            pm_free(b);
        }
    });
    for (int round = 0; round < (kSanitized ? 5 : 20); ++round) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) _exit(child_work());
        EXPECT_EQ(wait_child(pid), 0) << "round " << round << " (-1: the child hung)";
    }
    stop = true;
    for (auto& t : ts) t.join();
}

// Issue 11 item 10: each fork just as the purger thread starts (a large span freed into
// the cache, with no purger running, starts one). Under GCC 12's ASan a fork during a
// purger's start (or exit) left the child with a lock of ASan's allocator held (see
// purge.cpp, "the purger"), and the child hung in its first thread. malloc_fork_purger
// runs this with PHYSMEM_MALLOC_PURGE_DELAY_MS=2 (a purger wakes every 1 ms, not every half of the default delay).
TEST(Threads, ForkAsThePurgerStarts) {
    using physmem::malloc::g_opt;
    const auto period = std::chrono::milliseconds(std::max<std::uint64_t>(1, g_opt.purge_delay_ms / 2));
    const int rounds = period.count() <= 5 ? 300 : 10;
    std::atomic<int> go{0}, done{0};
    std::atomic<bool> stop{false};
    auto ts = start_running(1, stop, [&](std::atomic<bool>&) {
        for (int r = 1; r <= rounds; ++r) {  // one purger start per round
            pm_collect(1);  // nothing waits: the purger exits when it next wakes
            std::this_thread::sleep_for(3 * period + std::chrono::milliseconds(1));
            go = r;
            pm_free(pm_malloc(200000));  // a cached span waits: a purger starts
            while (done != r) std::this_thread::yield();
        }
    });
    int hung = 0, failed = 0;
    for (int r = 1; r <= rounds; ++r) {
        while (go != r) std::this_thread::yield();
        // Fork 0 .. 200 us after the free began: across the purger's creation and first steps.
        const int delay_us = r * 7 % 200;
        auto at = std::chrono::steady_clock::now() + std::chrono::microseconds(delay_us);
        while (std::chrono::steady_clock::now() < at) {}
        pid_t pid = fork();
        if (pid == 0) _exit(child_work());
        int rc = pid < 0 ? -2 : wait_child(pid);
        if (rc == -1) hung++, std::fprintf(stderr, "round %d: the child forked %d us after the free hung\n", r, delay_us);
        failed += rc != 0;
        done = r;
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(hung, 0) << "children hung of " << rounds;
    EXPECT_EQ(failed, 0) << "children failed of " << rounds;
}

// --- misuse is detected ---

TEST(MallocDeath, DoubleFreeOfASmallObjectAborts) {
    void* p = pm_malloc(40);
    pm_free(p);
    EXPECT_DEATH(pm_free(p), "double free of " + ptr_text(p));
}

// The free tag catches it on another thread too (the first free's thread has exited and
// its cache went back to the central list).
TEST(MallocDeath, CrossThreadDoubleFreeOfASmallObjectAborts) {
    void* p = pm_malloc(48);
    std::thread([p] { pm_free(p); }).join();
    EXPECT_DEATH(pm_free(p), "double free of " + ptr_text(p));
}

// A use after free that wipes the free tag: an immediate second free is still caught (p is
// on top of the cache); a later one lets p into the cache twice, and the span bitmap
// catches the duplicate when the cache is drained.
TEST(MallocDeath, DoubleFreeWithAWipedTagIsCaught) {
    void* p = pm_malloc(64);
    void* q = pm_malloc(64);
    auto wipe = [](void* x) { static_cast<std::uintptr_t*>(x)[1] = 0; };
    EXPECT_DEATH((pm_free(p), wipe(p), pm_free(p)), "double free of " + ptr_text(p));
    EXPECT_DEATH((pm_free(p), pm_free(q), wipe(p), pm_free(p), pm_collect(0)),
                 "double free of " + ptr_text(p) + " .*found when a cache was drained");
    pm_free(p);
    pm_free(q);
}

// The same duplicate in a full batch spilled to the transfer cache (no span visit): the
// batch is checked on its way in.
TEST(MallocDeath, DoubleFreeWithAWipedTagThroughTheTransferCacheIsCaught) {
    auto child = [] {
        std::vector<void*> many(8192);
        for (auto& x : many) x = pm_malloc(64);
        void* p = many[0];
        void* q = many[1];
        const auto& bin = physmem::malloc::t_cache->bins[physmem::malloc::class_of(64)];
        for (std::size_t i = 2; bin.count + 2 < bin.max; ++i) pm_free(many.at(i));
        // The last free finds the bin full: a batch from the top, p twice, goes to the class.
        pm_free(p), pm_free(q), static_cast<std::uintptr_t*>(p)[1] = 0, pm_free(p);
        std::thread([] {
            for (int i = 0; i < 8192; ++i) pm_malloc(64);
        }).join();
        std::fprintf(stderr, "no abort\n");
        std::_Exit(0);
    };
    EXPECT_DEATH(child(), "double free of 0x[0-9a-f]+ .*found when a cache was drained");
}

// A span's free set is its bitmap (central.cpp): objects freed in any order come back
// from their span in address order (a batch's highest first), and taking them follows no
// object's link (a free list walked in the order of the frees is a chain of cache misses:
// redis's SET spent 9% of its time there). Half of 4000 objects freed in a shuffled order,
// the caches drained to the spans; the next 1000 allocations may step up only where they
// move to another batch or span, not at every other object as a list in free order does.
TEST(Central, FreedObjectsAreHandedOutAgainInAddressOrder) {
    std::thread([] {
        std::vector<void*> all(4000);
        for (auto& x : all) x = pm_malloc(96);
        std::vector<void*> freed;
        for (std::size_t i = 0; i < all.size(); i += 2) freed.push_back(all[i]);
        std::uint64_t r = 88172645463325252ull;
        for (std::size_t i = freed.size() - 1; i > 0; --i) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            std::swap(freed[i], freed[r % (i + 1)]);
        }
        for (void* x : freed) pm_free(x);
        pm_collect(0);
        std::vector<void*> again(1000);
        for (auto& x : again) x = pm_malloc(96);
        std::size_t back = 0;
        for (std::size_t i = 1; i < again.size(); ++i) back += again[i] > again[i - 1];
        EXPECT_LT(back, 100u) << "steps up to a higher address in 1000 allocations";
        for (void* x : again) pm_free(x);
        for (std::size_t i = 1; i < all.size(); i += 2) pm_free(all[i]);
    }).join();
}

// An object overwritten while it waits free in its span (not in a cache) is reported when
// the span hands it out again, as one on a cache list is when popped.
TEST(MallocDeath, AnObjectOverwrittenWhileFreeInItsSpanIsReported) {
    auto child = [] {
        std::vector<void*> all(3000);
        for (auto& x : all) x = pm_malloc(112);
        for (std::size_t i = 0; i < all.size(); i += 2) pm_free(all[i]);
        pm_collect(0);  // the freed objects are back in their spans
        static_cast<std::uintptr_t*>(all[1000])[1] = 0x4141;  // use after free: the tag word
        for (int i = 0; i < 3000; ++i) pm_malloc(112);
        std::fprintf(stderr, "no abort\n");
        std::_Exit(0);
    };
    EXPECT_DEATH(child(), "overwritten after it was freed");
}

TEST(MallocDeath, DoubleFreeOfALargeObjectAborts) {
    void* p = pm_malloc(1 << 20);
    pm_free(p);
    EXPECT_DEATH(pm_free(p), ptr_text(p));
}

TEST(MallocDeath, ForeignPointerAborts) {
    int on_stack = 0;
    EXPECT_DEATH(pm_free(&on_stack), "invalid pointer " + ptr_text(&on_stack) + ": not allocated by physmem");
    void* libc = std::malloc(32);
    EXPECT_DEATH(pm_free(libc), "not allocated by physmem");
    std::free(libc);
}

TEST(MallocDeath, InteriorPointerAborts) {
    auto* p = static_cast<char*>(pm_malloc(100));
    EXPECT_DEATH(pm_free(p + 16), "invalid pointer " + ptr_text(p + 16));
    auto* q = static_cast<char*>(pm_malloc(1 << 20));
    EXPECT_DEATH(pm_free(q + 64), "invalid pointer " + ptr_text(q + 64));
    pm_free(p);
    pm_free(q);
}

// The same checks on free's slow path: a fresh thread (cache not active yet) and a full bin.
TEST(MallocDeath, MisuseOnTheSlowPathAborts) {
    auto* p = static_cast<char*>(pm_malloc(100));
    EXPECT_DEATH(std::thread([p] { pm_free(p + 16); }).join(), "invalid pointer " + ptr_text(p + 16));
    EXPECT_DEATH(std::thread([p] { pm_free(p), pm_free(p); }).join(), "double free of " + ptr_text(p));
    std::vector<void*> many(4096);
    for (auto& x : many) x = pm_malloc(100);
    const auto& bin = physmem::malloc::t_cache->bins[physmem::malloc::class_of(100)];
    auto fill_then = [&](void* bad) {
        for (std::size_t i = 0; bin.count < bin.max; ++i) pm_free(many.at(i));
        pm_free(bad);
    };
    EXPECT_DEATH(fill_then(p + 16), "invalid pointer " + ptr_text(p + 16));
    EXPECT_DEATH((pm_free(p), fill_then(p)), "double free of " + ptr_text(p));
    pm_free(p);
    for (auto& x : many) pm_free(x);
}

}  // namespace
