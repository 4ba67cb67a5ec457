// tests/test_background_give_back.cpp — the pool's background give-back thread: an idle
// pool's empty pages go back within about the delay with no call to the pool (pool stats,
// smaps and the process's RSS); one thread, started only once a page waits; off by
// option and environment; fork while pages wait; a pool destroyed while the thread is
// about to visit it (race loop). Timed tests poll up to 5 s for what takes about the delay
// (100 or 300 ms) and print how long it took: a deadline, not a fixed sleep.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "physmem/paged_array.hpp"
#include "physmem/pool.hpp"
#include "physmem/tree_array.hpp"
#include "support.hpp"

namespace {

using physmem::BlockPool;
using physmem::PoolOptions;
using namespace std::chrono_literals;

constexpr std::size_t kMiB = 1 << 20;
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;  // run with TSAN_OPTIONS=die_after_fork=0: the fork tests' children start a thread
#else
constexpr bool kThreadSanitizer = false;
#endif

PoolOptions options(std::size_t capacity, std::uint64_t delay_ms = 100) {
    PoolOptions o = physmem_test::pool_options(64 << 10, capacity);
    o.give_back_delay_ms = delay_ms;
    return o;
}

// Threads of this process, and those named like the give-back thread (/proc/self/task).
struct Threads {
    int total = 0, give_back = 0;
};
Threads threads() {
    Threads t;
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return t;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        ++t.total;
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string name;
        std::getline(comm, name);
        t.give_back += name == "physmem-bg-give";
    }
    ::closedir(d);
    return t;
}

std::size_t rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t smaps_resident(const BlockPool& pool) {
    std::size_t r = 0;
    for (const auto& rep : pool.verify_backing()) r += rep.resident_bytes;
    return r;
}

// Polls (every 5 ms, under the pool's lock: stats() gives nothing back) until the pool's
// resident bytes are within `bound`, or `limit` passes; the time it took, or -1 ms. The
// tests wait up to seconds for what takes about the delay: a fixed sleep made them fail
// when the machine was busy, a deadline does not, and a thread that never gives back
// still fails them.
std::chrono::milliseconds time_to_bound(const BlockPool& pool, double bound,
                                        std::chrono::steady_clock::time_point since,
                                        std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    for (;;) {
        auto now = std::chrono::steady_clock::now();
        if (static_cast<double>(pool.stats().resident_bytes) <= bound)
            return std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
        if (now - since > limit) return std::chrono::milliseconds(-1);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// live bytes + one page, the bound for a pool whose empty pages all went back.
double live_plus_page(const BlockPool& pool) {
    physmem::PoolStats st = pool.stats();
    return static_cast<double>(st.blocks_in_use * st.block_size + st.page_size);
}

// Runs body in a forked child (a fresh process: no give-back thread yet, whatever the
// other tests started) and expects it to exit 0; an alarm turns a deadlock into a failure.
template <class Body>
void in_child(Body body, unsigned timeout_s = 20) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(timeout_s);
        int code = 1;
        try {
            code = body();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "child: %s\n", e.what());
        }
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed check " << WEXITSTATUS(status);
}

// A block per 2 MiB page of the first `pages` pages, freed: pages*page bytes wait.
std::vector<void*> fill_pages(BlockPool& pool, std::size_t bytes) {
    std::vector<void*> blocks;
    for (std::size_t b = 0; b < bytes / pool.block_size(); ++b) {
        blocks.push_back(pool.allocate());
        static_cast<char*>(blocks.back())[0] = 1;
    }
    return blocks;
}

void free_all(BlockPool& pool, std::vector<void*>& blocks) {
    for (void* b : blocks) pool.deallocate(b);
    blocks.clear();
}

// --- the goal: an idle pool at live bytes + one page, with no call to it ------------------

// The shape scaled down: 32 arrays of 4 MiB on one pool (63 leaves and a root:
// two whole huge pages each, so packing costs nothing and the test sees give-back alone),
// a random 70% destroyed, then 1 s without a call to the pool: resident (stats, smaps,
// RSS) <= 1.05x live + one page, and a release() afterwards finds nothing left to give.
TEST(BackgroundGiveBack, IdlePoolGivesBackWithoutACall) {
    std::size_t rss_before = rss_bytes();
    BlockPool pool(options(160 * kMiB));
    const std::size_t n = 63 * (64 << 10) / sizeof(std::uint64_t);
    std::vector<std::unique_ptr<physmem::TreeArray<std::uint64_t>>> arrays;
    for (int k = 0; k < 32; ++k) {
        arrays.push_back(std::make_unique<physmem::TreeArray<std::uint64_t>>(n, pool));
        for (std::size_t i = 0; i < n; i += 512) (*arrays.back())[i] = i + static_cast<std::size_t>(k);
    }
    ASSERT_EQ(pool.stats().blocks_in_use, 32u * 64u) << "the arrays' shape changed: 64 blocks each expected";
    std::vector<int> order(32);
    for (int k = 0; k < 32; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), std::mt19937(25));
    for (int k = 0; k < 22; ++k) arrays[order[k]].reset();  // 70%
    auto last_free = std::chrono::steady_clock::now();
    physmem::PoolStats st = pool.stats();
    std::size_t live = st.blocks_in_use * st.block_size;
    double bound = 1.05 * static_cast<double>(live) + static_cast<double>(st.page_size);
    auto reached = time_to_bound(pool, bound, last_free);
    st = pool.stats();
    std::printf("idle pool: live %zu MiB, resident %zu MiB (stats), %zu MiB (smaps), RSS +%zu MiB; "
                "bound reached %lld ms after the last free (delay 100 ms)\n",
                live / kMiB, st.resident_bytes / kMiB, smaps_resident(pool) / kMiB,
                (rss_bytes() - std::min(rss_bytes(), rss_before)) / kMiB, static_cast<long long>(reached.count()));
    EXPECT_GE(reached.count(), 0) << "not within 5 s";
    EXPECT_LE(static_cast<double>(st.resident_bytes), bound);
    EXPECT_LE(static_cast<double>(smaps_resident(pool)), bound);
    if (!physmem_test::kShadowFaults && !kThreadSanitizer)  // a sanitizer's shadow of the arrays is resident too
        EXPECT_LE(static_cast<double>(rss_bytes() - std::min(rss_bytes(), rss_before)), bound + 8.0 * kMiB)
            << "RSS over the baseline before the pool (8 MiB for the test's own heap)";
    for (auto& a : arrays)
        if (a) EXPECT_EQ((*a)[512], 512u + static_cast<std::size_t>(&a - arrays.data())) << "contents stay";
    EXPECT_EQ(pool.release(), 0u) << "the thread left nothing for a call to give back";
}

// A PagedArray whose budget is cut returns frames to the pool, so its empty pages follow
// without a call: 32 MiB in memory cut to 2 MiB, then 1 s idle. (Pages that still held a
// frame would stay: that is compaction's job; here the frames kept share pages.)
TEST(BackgroundGiveBack, PagedArrayBudgetCutFollows) {
    const std::size_t bs = 64 << 10;
    BlockPool pool(options(64 * kMiB));
    physmem::PagedArray<std::uint64_t> a(512 * (bs / 8), pool, {.budget = 32 * kMiB});
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = i;
    std::size_t before = pool.stats().resident_bytes;
    a.set_budget(2 * kMiB);
    physmem::PoolStats st = pool.stats();
    std::size_t live = st.blocks_in_use * bs;
    EXPECT_GE(time_to_bound(pool, 1.05 * static_cast<double>(live) + static_cast<double>(st.page_size),
                            std::chrono::steady_clock::now()).count(), 0);
    st = pool.stats();
    std::printf("paged array: resident %zu MiB before the cut, %zu MiB after (live %zu KiB)\n",
                before / kMiB, st.resident_bytes / kMiB, live >> 10);
    EXPECT_LE(static_cast<double>(st.resident_bytes), 1.05 * static_cast<double>(live) + static_cast<double>(st.page_size));
    EXPECT_EQ(pool.release(), 0u) << "the thread left nothing for a call to give back";
    EXPECT_EQ(a.get(12345), 12345u);
}

// --- one thread, started lazily --------------------------------------------------------

TEST(BackgroundGiveBack, NoThreadUntilAPageWaits) {
    in_child([] {
        if (threads().give_back != 0) return 2;
        int before = threads().total;
        BlockPool pool(options(16 * kMiB));
        std::vector<void*> blocks = fill_pages(pool, 8 * kMiB);
        if (threads().total != before) return 3;  // allocating starts nothing
        free_all(pool, blocks);
        if (threads().give_back != 1 || threads().total < before + 1) return 4;  // TSan adds its own
        BlockPool other(options(16 * kMiB));     // one thread for all pools
        blocks = fill_pages(other, 4 * kMiB);
        free_all(other, blocks);
        auto now = std::chrono::steady_clock::now();
        if (time_to_bound(pool, 0, now).count() < 0 || time_to_bound(other, 0, now).count() < 0) return 6;
        if (threads().give_back != 1) return 5;
        return 0;
    });
}

TEST(BackgroundGiveBack, DelayZeroNeedsNoThread) {
    in_child([] {
        BlockPool pool(options(16 * kMiB, 0));
        std::vector<void*> blocks = fill_pages(pool, 8 * kMiB);
        free_all(pool, blocks);
        if (pool.stats().resident_bytes != 0) return 2;  // at once, by the freeing call
        return threads().give_back == 0 ? 0 : 3;
    });
}

// A day's delay: nothing goes back within a second, and destroying the pool does not wait
// for the thread's long sleep.
TEST(BackgroundGiveBack, LargeDelayWaitsAndDestructionDoesNotBlock) {
    auto pool = std::make_unique<BlockPool>(options(16 * kMiB, 86'400'000));
    std::vector<void*> blocks = fill_pages(*pool, 8 * kMiB);
    free_all(*pool, blocks);
    std::this_thread::sleep_for(300ms);
    EXPECT_GE(pool->stats().resident_bytes, 8 * kMiB);
    auto t0 = std::chrono::steady_clock::now();
    pool.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 200ms);
}

// --- off by option and environment -----------------------------------------------------

TEST(BackgroundGiveBack, OffByOptionKeepsTheOldBehaviour) {
    in_child([] {
        PoolOptions o = options(16 * kMiB);
        o.background_give_back = false;
        BlockPool pool(o);
        std::vector<void*> blocks = fill_pages(pool, 8 * kMiB);
        free_all(pool, blocks);
        std::this_thread::sleep_for(400ms);
        if (threads().give_back != 0) return 2;
        if (pool.stats().resident_bytes < 8 * kMiB) return 3;
        pool.deallocate(pool.allocate());  // the next call gives back what is due
        if (pool.stats().resident_bytes > pool.stats().page_size) return 4;
        return 0;
    });
}

TEST(BackgroundGiveBack, OffByEnvironmentForEveryPool) {
    in_child([] {
        ::setenv("PHYSMEM_BACKGROUND_GIVE_BACK", "0", 1);
        BlockPool pool(options(16 * kMiB));
        std::vector<void*> blocks = fill_pages(pool, 8 * kMiB);
        free_all(pool, blocks);
        std::this_thread::sleep_for(400ms);
        if (threads().give_back != 0) return 2;
        if (pool.stats().resident_bytes < 8 * kMiB) return 3;
        ::setenv("PHYSMEM_BACKGROUND_GIVE_BACK", "maybe", 1);
        try {
            BlockPool bad(options(16 * kMiB));
            return 4;
        } catch (const std::invalid_argument& e) {
            if (std::string(e.what()).find("PHYSMEM_BACKGROUND_GIVE_BACK") == std::string::npos) return 5;
        }
        return 0;
    });
}

// --- fork -------------------------------------------------------------------------------

// Pages wait in the parent (its thread asleep until they are due) when it forks: the child
// has no thread, works, starts its own at its first free, and gives back on its own; the
// parent's pages go back too.
TEST(BackgroundGiveBack, ForkWhilePagesWait) {
    BlockPool pool(options(32 * kMiB, 300));
    std::vector<void*> keep = fill_pages(pool, 4 * kMiB);
    std::vector<void*> blocks = fill_pages(pool, 16 * kMiB);
    free_all(pool, blocks);
    in_child([&] {
        if (threads().give_back != 0) return 2;
        std::vector<void*> more = fill_pages(pool, 4 * kMiB);  // reuses the waiting pages
        free_all(pool, more);
        if (threads().give_back != 1) return 3;
        auto took = time_to_bound(pool, live_plus_page(pool), std::chrono::steady_clock::now());
        std::printf("child: its pages went back %lld ms after its last free (delay 300 ms)\n",
                    static_cast<long long>(took.count()));
        if (took.count() < 0) return 4;
        free_all(pool, keep);
        return 0;
    });
    EXPECT_GE(time_to_bound(pool, live_plus_page(pool), std::chrono::steady_clock::now()).count(), 0)
        << "the parent's pages did not go back within 5 s";
    free_all(pool, keep);
}

// Forks while the thread is busy giving pages back (delay 1 ms, 32 pages freed just
// before, a random spin): a child must never find a pool lock held by a thread it does not
// have. It allocates and frees on the pool, under an alarm.
TEST(BackgroundGiveBack, ForkWhileTheThreadWorksDoesNotDeadlockTheChild) {
    BlockPool pool(options(64 * kMiB, 1));
    std::mt19937 rng(7);
    for (int k = 0; k < 30; ++k) {
        std::vector<void*> blocks = fill_pages(pool, 64 * kMiB);
        free_all(pool, blocks);
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 3000);
        while (std::chrono::steady_clock::now() < until) {
        }
        in_child([&] {
            std::vector<void*> more = fill_pages(pool, 8 * kMiB);
            free_all(pool, more);
            return 0;
        }, 10);
    }
}

// --- destruction racing the thread -------------------------------------------------------

// Pools freed with a 1 ms delay and destroyed at once or a little later, from two threads:
// the thread is about to visit, visiting, or done (ASan: no use after free).
TEST(BackgroundGiveBack, DestroyWhileTheThreadIsAboutToVisit) {
    auto loop = [](unsigned seed) {
        std::mt19937 rng(seed);
        for (int k = 0; k < 150; ++k) {
            BlockPool pool(options(4 * kMiB, 1));
            std::vector<void*> blocks = fill_pages(pool, 4 * kMiB);
            free_all(pool, blocks);
            auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 3000);
            while (std::chrono::steady_clock::now() < until) {
            }
        }
    };
    std::thread a(loop, 1), b(loop, 2);
    a.join();
    b.join();
}

}  // namespace
