// tests/malloc/preload_adversarial.cpp — a plain program (not linked to physmem) run under
// LD_PRELOAD=libphysmem.so: the defects an adversarial round found (issue 29), one mode per
// run, each a regression test that failed before its fix. Prints "preload_adversarial
// MODE: ok" and exits 0 on success; the CMake file sets each mode's options and limits.
//
//   calloc-mlock       calloc of memory freed while the program held it mlock'ed: zero
//                      (the discard fails with EINVAL; the pages must stay dirty)
//   calloc-mlockall    the same under mlockall(MCL_CURRENT | MCL_FUTURE), through purges
//   prefault-reuse     PHYSMEM_MALLOC_PREFAULT=1: a block placed on the pages of a freed
//                      one takes (almost) no page faults, as a fresh one does
//   lock-limit         PHYSMEM_MALLOC_LOCK=1 without CAP_IPC_LOCK and a small ulimit -l:
//                      counted in pm_stats (and reported on stderr, checked by CMake)
//   long-delay         PHYSMEM_MALLOC_PURGE_DELAY_MS longer than the machine's uptime: a
//                      freed block stays cached (the cut-off time wrapped around before)
//   mallopt            mallopt and mallinfo2 answer as the C library's own would
//   signal-reentry     large allocations in a signal handler that interrupts large
//                      allocations: either no collision, or physmem's message — no hang
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "check.hpp"
#include "physmem.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// pm_stats through dlsym: the program is plain (physmem.h for the struct only).
pm_stats_t stats() {
    pm_stats_t s{};
    auto fn = reinterpret_cast<void (*)(pm_stats_t*)>(dlsym(RTLD_DEFAULT, "pm_stats"));
    CHECK(fn != nullptr);
    if (fn) fn(&s);
    CHECK(s.version == PM_STATS_VERSION);
    return s;
}

// First non-zero byte of [p, p + n), or n.
std::size_t first_nonzero(const void* p, std::size_t n) {
    auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i)
        if (b[i]) return i;
    return n;
}

// calloc(n) after n bytes of `fill` were freed; true when it reads as zero.
bool calloc_after_free(std::size_t n, int fill, bool lock_it, bool trim) {
    void* p = std::malloc(n);
    CHECK(p != nullptr);
    if (!p) return false;
    std::memset(p, fill, n);
    if (lock_it && mlock(p, n) != 0) std::perror("mlock");
    std::free(p);
    if (trim) malloc_trim(0);
    void* q = std::calloc(1, n);
    CHECK(q != nullptr);
    if (!q) return false;
    std::size_t at = first_nonzero(q, n);
    if (at != n)
        std::printf("calloc(%zu) NOT ZERO at %zu: 0x%02x\n", n, at, static_cast<unsigned char*>(q)[at]);
    if (lock_it) munlock(q, n);
    std::free(q);
    return at == n;
}

void calloc_mlock(bool all) {
    if (all && mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        std::perror("mlockall");
        ++failures;
        return;
    }
    for (std::size_t mib : {1ul, 6ul, 8ul, 24ul})
        for (bool trim : {false, true})
            CHECK(calloc_after_free(mib * kMiB, 0x5a + static_cast<int>(mib), !all, trim));
    pm_stats_t s = stats();
    std::printf("calloc-mlock: %zu discards refused\n", s.discard_failures);
    CHECK(s.discard_failures > 0);  // the kernel refused, and it was seen
    if (all) munlockall();
}

long minor_faults() {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

long touch_faults(char* p, std::size_t n) {
    long before = minor_faults();
    for (std::size_t i = 0; i < n; i += 4096) p[i] = 1;
    return minor_faults() - before;
}

void prefault_reuse() {
    auto* a = static_cast<char*>(std::malloc(8 * kMiB));
    long fresh = touch_faults(a, 8 * kMiB);
    std::free(a);
    malloc_trim(0);  // the freed block's pages go back to the heap, as after the delay
    auto* b = static_cast<char*>(std::malloc(7 * kMiB));
    long reused = touch_faults(b, 7 * kMiB);
    std::printf("prefault-reuse: %ld faults touching a fresh 8 MiB block, %ld touching a 7 MiB "
                "block on its pages\n", fresh, reused);
    CHECK(fresh < 64 && reused < 64);  // 2048 and 1792 pages: every page would fault
    std::free(b);
}

void lock_limit() {
    for (int i = 0; i < 4; ++i) {
        auto* p = static_cast<char*>(std::malloc(64 * kMiB));
        CHECK(p != nullptr);
        if (p) std::memset(p, 1, 64 * kMiB);
        std::free(p);
    }
    pm_stats_t s = stats();
    std::printf("lock-limit: %zu mlock calls refused\n", s.lock_failures);
    CHECK(s.lock_failures > 0);
}

void long_delay() {
    void* p = std::malloc(2 * kMiB);  // a span the large cache keeps (within its 4 MiB floor)
    std::memset(p, 1, 2 * kMiB);
    pm_stats_t held = stats();
    std::free(p);  // cached, for the purge delay
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int i = 0; i < 1000; ++i) std::free(std::malloc(100000));  // calls that drive the decay
    pm_stats_t after = stats();
    std::printf("long-delay: pages in use %zu KiB with the block, %zu KiB 200 ms after its free\n",
                held.bytes_in_use >> 10, after.bytes_in_use >> 10);
    CHECK(after.bytes_in_use >= held.bytes_in_use);  // still cached: not released at once
}

using mallopt_fn = int (*)(int, int);

void mallopt_like_libc() {
    void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    auto libc_mallopt = libc ? reinterpret_cast<mallopt_fn>(dlsym(libc, "mallopt")) : nullptr;
    CHECK(libc_mallopt != nullptr && libc_mallopt != &mallopt);
    if (!libc_mallopt) return;
    const int params[] = {M_MXFAST, M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX,
                          M_CHECK_ACTION, M_PERTURB, M_ARENA_TEST, M_ARENA_MAX, 0, 2, 12345, -100};
    const int values[] = {-5, 0, 1, 64, 160, 161, 4096, 32 << 20, (32 << 20) + 1, 1 << 30};
    for (int param : params)
        for (int value : values) {
            int ours = mallopt(param, value), theirs = libc_mallopt(param, value);
            if (ours != theirs) std::printf("mallopt(%d, %d): %d, the C library %d\n", param, value, ours, theirs);
            CHECK(ours == theirs);
        }
    void* big = std::malloc(300 * kMiB);
    struct mallinfo2 m = mallinfo2();
    std::printf("mallopt: with a live 300 MiB block, mallinfo2 hblks %zu, hblkhd %zu MiB\n", m.hblks, m.hblkhd >> 20);
    CHECK(m.hblks >= 1 && m.hblkhd >= 300 * kMiB);
    std::free(big);
}

volatile sig_atomic_t g_in_handler = 0;
std::atomic<long> g_handled{0};

void on_alarm(int) {
    void* p = std::malloc(200000);
    if (p) static_cast<char*>(p)[0] = 1;
    std::free(p);
    g_handled.fetch_add(1, std::memory_order_relaxed);
}

void signal_reentry() {
    struct sigaction sa{};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, nullptr);
    itimerval t{{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &t, nullptr);
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    long rounds = 0;
    while (std::chrono::steady_clock::now() < end) {
        void* p = std::malloc(200000);
        std::free(p);
        ++rounds;
    }
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    std::printf("signal-reentry: %ld rounds, %ld signals handled, no collision\n", rounds, g_handled.load());
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (!dlsym(RTLD_DEFAULT, "pm_malloc")) {
        std::fprintf(stderr, "preload_adversarial: run me with LD_PRELOAD=libphysmem.so\n");
        return 2;
    }
    if (mode == "calloc-mlock") calloc_mlock(false);
    else if (mode == "calloc-mlockall") calloc_mlock(true);
    else if (mode == "prefault-reuse") prefault_reuse();
    else if (mode == "lock-limit") lock_limit();
    else if (mode == "long-delay") long_delay();
    else if (mode == "mallopt") mallopt_like_libc();
    else if (mode == "signal-reentry") signal_reentry();
    else {
        std::fprintf(stderr, "usage: preload_adversarial calloc-mlock | calloc-mlockall | "
                             "prefault-reuse | lock-limit | long-delay | mallopt | signal-reentry\n");
        return 2;
    }
    if (failures) return 1;
    std::printf("preload_adversarial %s: ok\n", mode.c_str());
    return 0;
}
