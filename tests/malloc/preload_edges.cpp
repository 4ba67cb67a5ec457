// tests/malloc/preload_edges.cpp — a plain program (not linked to physmem) that checks,
// under LD_PRELOAD=libphysmem.so, the worst cases of issue 11 that only a whole process
// shows. One mode per run; prints "preload_edges MODE: ok" and exits 0 on success.
//
//   address-space MIB   under `ulimit -v`: at least MIB MiB can be allocated in 1 MiB
//                       blocks (arenas were reserved through a 2 GiB window before)
//   one-thread          after frees and the purge delay the process still has one thread,
//                       and unshare(CLONE_NEWUSER) (single-threaded only) works
//   background-tls      PHYSMEM_MALLOC_BACKGROUND_PURGE=1 with 128 KiB of static TLS:
//                       the purger thread starts and gives a freed heap back while idle
//   introspection       malloc_trim gives back (run with a long purge delay, so that
//                       nothing else does), mallinfo2 describes physmem's heap, mallopt
//                       accepts glibc's parameters
//   idle-threads MIB    200 threads each allocate and free 4 MiB of small objects, then
//                       wait: while they idle, the small objects their caches hold (the
//                       allocator's bytes_small_outstanding) stay under MIB MiB; RSS shown
//   dlopen LIB          not preloaded: LIB loads with dlopen (static TLS fits) and works
//   dlclose LIB         not preloaded: LIB closed while a thread that allocated from it
//                       lives; the thread's exit then does not crash
#include <dlfcn.h>
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "physmem.h"  // pm_stats_t only: the library is found with dlsym

namespace {


constexpr std::size_t kMiB = std::size_t{1} << 20;

// 128 KiB of static TLS: glibc takes it out of every thread's stack, so a thread created
// with a small fixed stack cannot start (the purger's 64 KiB stack could not).
thread_local char t_big[128 << 10];

bool preloaded() { return dlsym(RTLD_DEFAULT, "pm_stats") != nullptr; }

std::size_t threads() {
    std::size_t n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

std::size_t rss() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (std::fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
        std::fclose(f);
    }
    return res * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::vector<void*> touch_heap(std::size_t mib) {
    std::vector<void*> v;
    for (std::size_t i = 0; i < mib; ++i) {
        void* p = std::malloc(kMiB);
        if (!p) break;
        std::memset(p, 1, kMiB);
        v.push_back(p);
    }
    return v;
}

void address_space(std::size_t want_mib) {
    std::vector<void*> got;
    for (;;) {
        void* p = std::malloc(kMiB);
        if (!p) break;
        static_cast<char*>(p)[0] = 1;
        got.push_back(p);
        if (got.size() >= 16 * want_mib) break;  // enough; the limit is not what is tested
    }
    std::printf("address-space: %zu MiB allocated in 1 MiB blocks (wanted >= %zu)\n", got.size(), want_mib);
    CHECK(got.size() >= want_mib);
    for (void* p : got) std::free(p);
    void* big = std::malloc(64 * kMiB);  // and after freeing, large requests still work
    CHECK(big != nullptr);
    std::free(big);
}

void one_thread() {
    std::free(std::malloc(100000));
    std::vector<void*> heap = touch_heap(64);
    for (void* p : heap) std::free(p);
    sleep_ms(200);
    std::free(std::malloc(100000));
    sleep_ms(50);
    std::printf("one-thread: %zu thread(s) after the frees\n", threads());
    CHECK(threads() == 1);
    int rc = unshare(CLONE_NEWUSER);
    if (rc != 0) std::printf("one-thread: unshare(CLONE_NEWUSER): %s\n", std::strerror(errno));
    CHECK(rc == 0 || errno != EINVAL);  // EINVAL: "the caller is multithreaded"
}

void background_tls() {
    t_big[0] = 1;
    std::vector<void*> heap = touch_heap(256);
    std::size_t full = rss();
    for (void* p : heap) std::free(p);
    std::size_t after = full;
    for (int i = 0; i < 60 && after + 200 * kMiB > full; ++i) {
        sleep_ms(50);  // idle: no allocator call
        after = rss();
    }
    std::printf("background-tls: rss %zu MiB with the heap, %zu MiB idle after free\n", full >> 20, after >> 20);
    CHECK(after + 200 * kMiB <= full);
}

void introspection() {
    std::vector<void*> heap = touch_heap(128);
    struct mallinfo2 m = mallinfo2();
    std::printf("introspection: mallinfo2 arena %zu MiB, uordblks %zu MiB\n", m.arena >> 20, m.uordblks >> 20);
    CHECK(m.uordblks >= 128 * kMiB && m.arena >= m.uordblks);
    for (void* p : heap) std::free(p);
    std::size_t full = rss();
    CHECK(malloc_trim(0) == 1);
    std::size_t after = rss();
    std::printf("introspection: rss %zu MiB before malloc_trim, %zu MiB after\n", full >> 20, after >> 20);
    CHECK(after + 100 * kMiB <= full);
    CHECK(mallinfo2().uordblks < 8 * kMiB);
    CHECK(mallopt(M_ARENA_MAX, 1) == 1 && mallopt(M_TRIM_THRESHOLD, 0) == 1);
}

// pm_stats's bytes_small_outstanding: small objects handed out or held by thread caches.
std::size_t outstanding_small() {
    pm_stats_t s{};  // physmem.h for the struct; the function through dlsym (a plain program)
    using stats_fn = void (*)(pm_stats_t*);
    auto fn = reinterpret_cast<stats_fn>(dlsym(RTLD_DEFAULT, "pm_stats"));
    if (!fn) return 0;
    fn(&s);
    return s.bytes_small_outstanding;
}

void idle_threads(std::size_t max_mib) {
    constexpr int kThreads = 200;
    std::atomic<int> done{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
        ts.emplace_back([&, t] {
            std::vector<void*> v;
            std::size_t bytes = 0;
            for (unsigned i = 0; bytes < 4 * kMiB; ++i) {
                std::size_t n = 16 + (i * 2654435761u + static_cast<unsigned>(t)) % 4096;
                void* p = std::malloc(n);
                std::memset(p, 1, n);
                v.push_back(p), bytes += n;
            }
            for (void* p : v) std::free(p);
            done.fetch_add(1);
            while (!go.load()) sleep_ms(5);  // idle
        });
    while (done.load() < kThreads) sleep_ms(5);
    sleep_ms(100);
    std::size_t idle = rss();
    std::size_t cached = outstanding_small();
    go.store(true);
    for (auto& t : ts) t.join();
    std::printf("idle-threads: %d threads idle after freeing everything: rss %zu MiB, small objects "
                "in caches %zu MiB (limit %zu)\n", kThreads, idle >> 20, cached >> 20, max_mib);
    CHECK(cached <= max_mib * kMiB);
}

void dlopen_lib(const char* lib) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) std::printf("dlopen: %s\n", dlerror());
    CHECK(h != nullptr);
    if (!h) return;
    using alloc_fn = void* (*)(std::size_t);
    using free_fn = void (*)(void*);
    auto pm_malloc = reinterpret_cast<alloc_fn>(dlsym(h, "pm_malloc"));
    auto pm_free = reinterpret_cast<free_fn>(dlsym(h, "pm_free"));
    CHECK(pm_malloc && pm_free);
    if (!pm_malloc || !pm_free) return;
    std::vector<void*> v;
    for (std::size_t n : {16ul, 1000ul, 70000ul, 300ul << 20}) {
        void* p = pm_malloc(n);
        CHECK(p != nullptr);
        if (p) std::memset(p, 3, n < kMiB ? n : kMiB);
        v.push_back(p);
    }
    std::thread t([&] { pm_free(pm_malloc(100)); });  // a thread's cache in a dlopen'ed library
    t.join();
    for (void* p : v) pm_free(p);
}

// Not preloaded: LIB is opened, a thread allocates from it (its cache and the cache key's
// destructor now exist), LIB is closed while the thread lives, then the thread exits and
// runs that destructor (issue 29, item 3: it pointed into unmapped code).
void dlclose_lib(const char* lib) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != nullptr);
    if (!h) return;
    auto pm_malloc = reinterpret_cast<void* (*)(std::size_t)>(dlsym(h, "pm_malloc"));
    CHECK(pm_malloc != nullptr);
    if (!pm_malloc) return;
    std::atomic<int> step{0};
    std::thread t([&] {
        void* p = pm_malloc(100);
        CHECK(p != nullptr);
        step.store(1);
        while (step.load() != 2) sleep_ms(1);
    });
    while (step.load() != 1) sleep_ms(1);
    CHECK(dlclose(h) == 0);
    step.store(2);
    t.join();
    std::thread([] {}).join();  // thread exits after the close
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "dlopen" && mode != "dlclose" && mode != "address-space" && !preloaded()) {
        std::fprintf(stderr, "preload_edges: run me with LD_PRELOAD=libphysmem.so\n");
        return 2;
    }
    if (mode == "address-space" && argc > 2) address_space(std::strtoull(argv[2], nullptr, 10));
    else if (mode == "one-thread") one_thread();
    else if (mode == "background-tls") background_tls();
    else if (mode == "introspection") introspection();
    else if (mode == "idle-threads" && argc > 2) idle_threads(std::strtoull(argv[2], nullptr, 10));
    else if (mode == "dlopen" && argc > 2) dlopen_lib(argv[2]);
    else if (mode == "dlclose" && argc > 2) dlclose_lib(argv[2]);
    else {
        std::fprintf(stderr, "usage: preload_edges address-space MIB | one-thread | background-tls | "
                             "introspection | idle-threads MIB | dlopen LIB | dlclose LIB\n");
        return 2;
    }
    if (failures) return 1;
    std::printf("preload_edges %s: ok\n", mode.c_str());
    return 0;
}
