// tests/malloc/churn_bench.cpp — a small malloc/free churn microbenchmark, run under
// LD_PRELOAD to compare allocators side by side (churn_compare.sh). Not a test: it checks
// nothing but that it ran; `--smoke` runs it tiny so it never rots (a CTest entry does).
//
//   churn_bench <mode> [--smoke]     prints "<mode> <ns per malloc+free pair>"
//
// Modes (every size is small, 16..512 bytes unless said otherwise):
//   lifo       one thread: allocate a batch of 64, free it in reverse order
//   fifo       one thread: allocate a batch of 64, free it in allocation order
//   mixed      one thread: 1000 live slots, each step replaces a random slot (16..4096 B)
//   larson     2 threads, 1000 live slots each; every 10000 steps the threads swap their
//              slot arrays, so most frees are of objects another thread allocated
//   prodcons   producer allocates, consumer frees (every free is cross-thread), through a
//              lock-free single-producer ring of 4096 entries
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        return s;
    }
};

std::size_t small_size(Rng& r) { return 16 + (r.next() >> 40) % 497; }

void touch(void* p) { *static_cast<volatile char*>(p) = 1; }

double lifo(std::uint64_t pairs, bool reverse) {
    Rng r{42};
    void* batch[64];
    auto t0 = Clock::now();
    for (std::uint64_t done = 0; done < pairs; done += 64) {
        for (auto& p : batch) touch(p = std::malloc(small_size(r)));
        if (reverse)
            for (int i = 63; i >= 0; --i) std::free(batch[i]);
        else
            for (void* p : batch) std::free(p);
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(pairs);
}

void replace_steps(std::vector<void*>& slots, Rng& r, std::uint64_t steps, std::size_t max) {
    for (std::uint64_t i = 0; i < steps; ++i) {
        std::uint64_t x = r.next();
        void*& s = slots[(x >> 8) % slots.size()];
        std::free(s);
        s = std::malloc(16 + (x >> 32) % (max - 15));
        touch(s);
    }
}

double mixed(std::uint64_t pairs) {
    Rng r{7};
    std::vector<void*> slots(1000, nullptr);
    auto t0 = Clock::now();
    replace_steps(slots, r, pairs, 4096);
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(pairs);
    for (void* p : slots) std::free(p);
    return ns;
}

// Two threads; at each round boundary they exchange slot arrays through `pool`.
double larson(std::uint64_t pairs) {
    const std::uint64_t round = 10000, rounds = pairs / 2 / round + 1;
    std::vector<void*> a(1000, nullptr), b(1000, nullptr);
    std::vector<void*>* pool[2] = {&a, &b};
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, nullptr, 2);
    auto work = [&](unsigned t) {
        Rng r{t + 1u};
        for (std::uint64_t k = 0; k < rounds; ++k) {
            replace_steps(*pool[(t + k) % 2], r, round, 512);
            pthread_barrier_wait(&bar);  // then each takes the other's array
        }
    };
    auto t0 = Clock::now();
    std::thread th(work, 1u);
    work(0);
    th.join();
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(rounds * round * 2);
    for (void* p : a) std::free(p);
    for (void* p : b) std::free(p);
    pthread_barrier_destroy(&bar);
    return ns;
}

double prodcons(std::uint64_t pairs) {
    constexpr std::size_t kRing = 4096;
    std::vector<std::atomic<void*>> ring(kRing);
    for (auto& e : ring) e.store(nullptr);
    auto t0 = Clock::now();
    std::thread consumer([&] {
        std::size_t i = 0;
        for (std::uint64_t got = 0; got < pairs; ++i) {
            std::atomic<void*>& e = ring[i % kRing];
            void* p;
            while (!(p = e.exchange(nullptr, std::memory_order_acquire))) std::this_thread::yield();
            std::free(p);
            ++got;
        }
    });
    Rng r{3};
    for (std::uint64_t i = 0; i < pairs; ++i) {
        void* p = std::malloc(small_size(r));
        touch(p);
        std::atomic<void*>& e = ring[i % kRing];
        while (e.load(std::memory_order_relaxed)) std::this_thread::yield();
        e.store(p, std::memory_order_release);
    }
    consumer.join();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / double(pairs);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s lifo|fifo|mixed|larson|prodcons [--smoke]\n", argv[0]);
        return 2;
    }
    bool smoke = argc > 2 && std::strcmp(argv[2], "--smoke") == 0;
    std::uint64_t pairs = smoke ? 100000 : 20000000;
    std::string_view m = argv[1];
    double ns = m == "lifo" ? lifo(pairs, true)
              : m == "fifo" ? lifo(pairs, false)
              : m == "mixed" ? mixed(pairs)
              : m == "larson" ? larson(pairs)
              : m == "prodcons" ? prodcons(pairs / 4)
              : -1;
    if (ns < 0) {
        std::fprintf(stderr, "churn_bench: unknown mode %s\n", argv[1]);
        return 2;
    }
    std::printf("%s %.2f\n", argv[1], ns);
    return 0;
}
