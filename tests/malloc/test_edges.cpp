// tests/malloc/test_edges.cpp — the allocator's worst cases (issue 11), through the pm_*
// API linked statically (so also under ASan + UBSan): over-aligned empty blocks, absurd
// alignments, requests the kernel would never back, realloc of huge blocks, calloc of
// fresh pages, giving memory back with no thread of its own, and a pointer the program
// mapped next to a direct block. Each test failed before its fix.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "malloc/internal.hpp"
#include "physmem.h"
#include "port/os.hpp"

namespace {

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// mincore succeeds exactly on mapped pages.
bool mapped(const void* p) {
    unsigned char v;
    return ::mincore(reinterpret_cast<void*>(addr(p) & ~std::uintptr_t{4095}), 4096, &v) == 0;
}

std::size_t thread_count() {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory();
    return n;
}

std::size_t mem_total_bytes() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    std::size_t kb = 0;
    while (f >> key >> kb) {
        if (key == "MemTotal:") return kb * 1024;
        f.ignore(1 << 10, '\n');
    }
    return 0;
}

int overcommit_mode() {
    std::ifstream f("/proc/sys/vm/overcommit_memory");
    int m = -1;
    f >> m;
    return m;
}

// Issue 11, item 1: size 0 with alignment >= 256 MiB went to the direct map with 0 bytes:
// an address nothing was mapped at, or the base of the allocator's own arena.
TEST(Edges, OveralignedEmptyBlocksGetMemoryOfTheirOwn) {
    void* live = pm_malloc(66048);
    ASSERT_NE(live, nullptr);
    std::memset(live, 0x5a, 66048);
    for (std::size_t align : {std::size_t{256} << 20, std::size_t{512} << 20, std::size_t{1} << 30}) {
        void* p = nullptr;
        ASSERT_EQ(pm_posix_memalign(&p, align, 0), 0) << align;
        EXPECT_EQ(addr(p) % align, 0u) << align;
        EXPECT_TRUE(mapped(p)) << "nothing is mapped at the block of alignment " << align;
        EXPECT_TRUE(addr(p) + 1 <= addr(live) || addr(p) >= addr(live) + 66048) << align;
        void* q = pm_aligned_alloc(align, 0);
        ASSERT_NE(q, nullptr);
        EXPECT_NE(p, q);
        pm_free(q);
        pm_free(p);
        void* r = pm_malloc(66048);  // the allocation that overlapped a live block
        ASSERT_NE(r, nullptr);
        EXPECT_TRUE(addr(r) + 66048 <= addr(live) || addr(r) >= addr(live) + 66048) << align;
        std::memset(r, 0x11, 66048);
        pm_free(r);
    }
    for (std::size_t i = 0; i < 66048; ++i) ASSERT_EQ(static_cast<unsigned char*>(live)[i], 0x5a) << i;
    pm_free(live);
}

// Issue 11, item 9: an alignment above the largest power of two rounded to 2^64 (0).
TEST(Edges, AnAlignmentWithNoPowerOfTwoAboveItIsEinval) {
    errno = 0;
    EXPECT_EQ(physmem::malloc::memalign_impl(SIZE_MAX / 2 + 2, 1), nullptr);
    EXPECT_EQ(errno, EINVAL);
    void* p = physmem::malloc::memalign_impl(SIZE_MAX / 2 + 1, 1);  // a power of two: ENOMEM
    EXPECT_EQ(p, nullptr);
    void* q = physmem::malloc::memalign_impl(3000, 10);  // rounded up to 4096
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(addr(q) % 4096, 0u);
    pm_free(q);
}

// Issue 11, item 3: MAP_NORESERVE mappings made requests succeed that the kernel's
// overcommit heuristic refuses (and glibc reports as ENOMEM).
TEST(Edges, RequestsTheKernelWouldNeverBackAreRefused) {
    int mode = overcommit_mode();
    if (mode == 1) GTEST_SKIP() << "vm.overcommit_memory = 1: the kernel backs any request";
    std::size_t big = mem_total_bytes() * 4;  // no swap here; 4x covers a machine with some
    ASSERT_GT(big, 0u);
    errno = 0;
    EXPECT_EQ(pm_malloc(big), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(pm_calloc(1, big), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    void* p = nullptr;
    EXPECT_EQ(pm_posix_memalign(&p, std::size_t{1} << 30, big), ENOMEM);
    EXPECT_EQ(pm_malloc(std::size_t{64} << 40), nullptr);
    void* ok = pm_malloc(std::size_t{300} << 20);  // a big request that can be backed still is
    EXPECT_NE(ok, nullptr);
    pm_free(ok);
}

// Issue 11, item 6: realloc of a direct block moved and copied it every step (256 copies
// growing 256 -> 512 MiB in 1 MiB steps). mremap grows it, or moves its page tables: the
// untouched middle is never read, so it never becomes resident.
TEST(Edges, ReallocOfAHugeBlockDoesNotCopy) {
    const std::size_t mib = std::size_t{1} << 20;
    auto* p = static_cast<unsigned char*>(pm_malloc(256 * mib));
    ASSERT_NE(p, nullptr);
    p[0] = 1, p[256 * mib - 1] = 2;
    std::size_t before = physmem::os::resident_bytes();
    for (std::size_t size = 257 * mib; size <= 512 * mib; size += mib) {
        p = static_cast<unsigned char*>(pm_realloc(p, size));
        ASSERT_NE(p, nullptr) << size;
        ASSERT_EQ(p[0], 1);
        p[size - 1] = 3;
    }
    EXPECT_EQ(p[256 * mib - 1], 2);
    std::size_t after = physmem::os::resident_bytes();  // less when its ends' huge pages were split
    std::size_t grown = after > before ? after - before : 0;
    EXPECT_LT(grown, 64 * mib) << "realloc copied: " << (grown >> 20) << " MiB became resident";
    EXPECT_GE(pm_usable_size(p), 512 * mib);
    p = static_cast<unsigned char*>(pm_realloc(p, 200 * mib));  // shrinks in place
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[0], 1);
    EXPECT_GE(pm_usable_size(p), 200 * mib);
    EXPECT_LT(pm_usable_size(p), 256 * mib);
    pm_free(p);
}

// Issue 26: realloc of a large block below the direct threshold copied it at each class
// step (16 -> 32 MiB in 1 MiB steps: six copies of up to 32 MiB). With the pages after it
// free it grows in place: same address, contents kept; freed, its span serves its new class.
// Blocked by a live neighbour, it moves, contents kept. In a fresh process (threadsafe
// death-test style): the placement is first fit, so the neighbour is the next block placed.
TEST(Edges, ReallocOfALargeBlockGrowsInPlaceWhenThePagesAfterItAreFree) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        const std::size_t mib = std::size_t{1} << 20;
        auto* p = static_cast<unsigned char*>(pm_malloc(16 * mib));
        p[0] = 1, p[16 * mib - 1] = 2;
        unsigned moves = 0;
        for (std::size_t size = 17 * mib; size <= 32 * mib; size += mib) {
            auto* q = static_cast<unsigned char*>(pm_realloc(p, size));
            if (!q || q[0] != 1 || q[size - mib - 1] != 2) std::_Exit(3);
            moves += q != p;
            p = q, p[size - 1] = 2;
        }
        pm_free(p);
        auto* r = static_cast<unsigned char*>(pm_malloc(32 * mib));  // the grown span's class
        if (!r || pm_usable_size(r) < 32 * mib) std::_Exit(4);
        std::memset(r, 5, 32 * mib);
        auto* a = static_cast<unsigned char*>(pm_malloc(3 * mib));
        auto* b = static_cast<unsigned char*>(pm_malloc(3 * mib));  // right after a
        std::memset(a, 7, 3 * mib);
        std::memset(b, 8, 3 * mib);
        auto* a2 = static_cast<unsigned char*>(pm_realloc(a, 6 * mib));
        if (!a2 || a2[0] != 7 || a2[3 * mib - 1] != 7 || b[0] != 8 || b[3 * mib - 1] != 8) std::_Exit(5);
        std::fprintf(stderr, "moves %u while growing 16 -> 32 MiB; blocked block moved: %d\n", moves, a2 != a);
        std::_Exit(moves == 0 ? 0 : 1);
    };
    EXPECT_EXIT(child(), testing::ExitedWithCode(0), "");
}

// An arena's huge-page descriptors are initialized 32 MiB at a time as the heap grows into
// it: a block grown in place past what was initialized (8 -> 80 MiB) still grows in place,
// contents kept.
TEST(Edges, ABlockGrowsInPlaceIntoTheArenaPartNotUsedYet) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    auto child = [] {
        const std::size_t mib = std::size_t{1} << 20;
        auto* p = static_cast<unsigned char*>(pm_malloc(8 * mib));
        if (!p) std::_Exit(3);
        p[0] = 1;
        unsigned moves = 0;
        for (std::size_t size = 16 * mib; size <= 80 * mib; size += 8 * mib) {
            auto* q = static_cast<unsigned char*>(pm_realloc(p, size));
            if (!q || q[0] != 1) std::_Exit(3);
            moves += q != p;
            p = q, p[size - 1] = 2;
        }
        std::fprintf(stderr, "moves %u while growing 8 -> 80 MiB\n", moves);
        std::_Exit(moves == 0 ? 0 : 1);
    };
    EXPECT_EXIT(child(), testing::ExitedWithCode(0), "");
}

// Issue 11, item 7: calloc wrote zeros over pages that were never handed out (they read
// as zero), making them resident; a reused block must still come back zeroed.
TEST(Edges, CallocOfFreshPagesWritesNothingAndReusedOnesAreZeroed) {
    const std::size_t mib = std::size_t{1} << 20;
    pm_collect(1);
    std::size_t before = physmem::os::resident_bytes();
    std::vector<void*> blocks;
    for (int i = 0; i < 16; ++i) blocks.push_back(pm_calloc(1, 4 * mib));  // arena blocks
    void* direct = pm_calloc(1, 300 * mib);
    ASSERT_NE(direct, nullptr);
    std::size_t grown = physmem::os::resident_bytes() - before;
    EXPECT_LT(grown, 16 * mib) << (grown >> 20) << " MiB resident after calloc of 364 MiB";
    for (void* b : blocks) {
        ASSERT_NE(b, nullptr);
        std::memset(b, 0xee, 4 * mib);
        pm_free(b);
    }
    pm_free(direct);
    for (int i = 0; i < 16; ++i) {
        auto* z = static_cast<unsigned char*>(pm_calloc(4, mib));
        ASSERT_NE(z, nullptr);
        for (std::size_t k = 0; k < 4 * mib; k += 511) ASSERT_EQ(z[k], 0) << i << " " << k;
        blocks[static_cast<std::size_t>(i)] = z;
    }
    for (void* b : blocks) pm_free(b);
}

// Issue 11, item 4: by default no thread appears behind the program's back; what is due
// is purged by the allocator's own calls after the delay.
TEST(Edges, MemoryGoesBackOnLaterCallsWithNoThreadOfItsOwn) {
    if (physmem::malloc::g_opt.background_purge) GTEST_SKIP() << "PHYSMEM_MALLOC_BACKGROUND_PURGE=1";
    pm_free(pm_malloc(100));
    const std::size_t threads = thread_count();
    std::vector<void*> blocks;
    for (int i = 0; i < 256; ++i) {
        void* p = pm_malloc(std::size_t{1} << 20);
        std::memset(p, 7, std::size_t{1} << 20);
        blocks.push_back(p);
    }
    pm_stats_t before, after;
    pm_stats(&before);
    for (void* p : blocks) pm_free(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * physmem::malloc::g_opt.purge_delay_ms + 20));
    EXPECT_EQ(thread_count(), threads) << "a thread was started";
    for (int i = 0; i < 3; ++i) pm_free(pm_malloc(200000));  // ordinary calls: the decay runs
    std::this_thread::sleep_for(std::chrono::milliseconds(physmem::malloc::g_opt.purge_delay_ms + 20));
    for (int i = 0; i < 3; ++i) pm_free(pm_malloc(200000));
    pm_stats(&after);
    EXPECT_GE(after.bytes_purged - before.bytes_purged, std::size_t{200} << 20);
    EXPECT_EQ(thread_count(), threads);
}

// Issue 11, item 9: a 300 MiB block claimed its whole 1 GiB slot, so a mapping the program
// made itself in the rest of the slot was taken for that block by realloc and
// malloc_usable_size. It is a foreign pointer.
TEST(EdgesDeath, AMappingBesideADirectBlockIsForeign) {
    void* big = pm_malloc(std::size_t{300} << 20);
    ASSERT_NE(big, nullptr);
    std::uintptr_t slot_end = (addr(big) | ((std::uintptr_t{1} << 30) - 1)) + 1;
    void* want = reinterpret_cast<void*>(slot_end - (std::size_t{64} << 20));
    void* own = ::mmap(want, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (own == MAP_FAILED || own != want) GTEST_SKIP() << "the end of the slot is taken";
    EXPECT_DEATH(pm_usable_size(own), "not allocated by physmem");
    EXPECT_DEATH(pm_realloc(own, 10), "not allocated by physmem");
    EXPECT_DEATH(pm_free(own), "not allocated by physmem");
    ::munmap(own, 4096);
    pm_free(big);
}

// Issue 11, item 9: a use after free that overwrote a freed object's link crashed inside
// malloc (the link was followed) instead of reporting it.
TEST(EdgesDeath, AFreeListLinkOverwrittenAfterFreeIsReported) {
    EXPECT_DEATH(
        {
            void* a = pm_malloc(48);
            void* b = pm_malloc(48);
            pm_free(a);
            pm_free(b);  // b's link now points at a
            *static_cast<std::uintptr_t*>(b) = 0x4141414141414141ull;  // use after free
            void* c = pm_malloc(48);  // pops b: its tag no longer matches its link
            void* d = pm_malloc(48);  // would follow the wild link
            std::printf("%p %p\n", c, d);
        },
        "overwritten after it was freed");
}

}  // namespace

// Issue 29, item 10: a thread asking for an allocator lock it holds (a signal handler that
// interrupted malloc) would spin forever; it stops with a message instead. Deterministic
// here; preload_adversarial's signal-reentry mode does it with real signals.
TEST(EdgesDeath, ALockTakenAgainByItsHolderIsReportedNotAHang) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    physmem::malloc::SpinLock lock;
    lock.lock();
    EXPECT_DEATH(lock.lock(), "re-entered the allocator on the same thread");
    lock.unlock();
    lock.lock();  // released and taken again: fine
    lock.unlock();
}

TEST(Edges, ALockHeldByAnotherThreadIsWaitedFor) {
    physmem::malloc::SpinLock lock;
    lock.lock();
    std::atomic<bool> got{false};
    std::thread t([&] { lock.lock(); got.store(true); lock.unlock(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(got.load());
    lock.unlock();
    t.join();
    EXPECT_TRUE(got.load());
}
