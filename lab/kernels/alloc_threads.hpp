// lab/kernels/alloc_threads.hpp — the multi-threaded workloads (in the spirit of
// mimalloc-bench): larson (server-like: objects freed by a thread other than the one
// that allocated them), xmalloc (producer/consumer), cache-scratch and cache-thrash
// (passive and active false sharing), glibc-thread (glibc's bench-malloc-thread) and
// idle-threads (what threads that freed everything and went idle leave behind).
// Contracts: alloc_common.hpp. Every stream of random numbers belongs to one (thread,
// round), so checksums do not depend on scheduling.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "alloc_common.hpp"

namespace lab::alloc {

struct Obj {
    void* p = nullptr;
    std::uint32_t n = 0;
    std::uint64_t tag = 0;
};

// Frees o after checking its pattern; false when the pattern was lost.
inline bool release(Obj& o) noexcept {
    bool ok = holds(o.p, o.n, o.tag);
    std::free(o.p);
    o.p = nullptr;
    return ok;
}
inline Obj make(std::uint64_t& state, std::size_t lo, std::size_t hi) {
    Obj o;
    o.n = static_cast<std::uint32_t>(pick(state, lo, hi));
    o.tag = rnd::next(state);
    o.p = get(o.n);
    stamp(o.p, o.n, o.tag);
    return o;
}

// Sums per-thread results into one Outcome.
struct Tally {
    std::atomic<std::uint64_t> ops{0}, sum{0};
    std::atomic<bool> ok{true};
    void add(std::uint64_t o, std::uint64_t s, bool good) {
        ops += o, sum += s;
        if (!good) ok = false;
    }
    Outcome out() const { return {ops.load(), sum.load(), ok.load()}; }
};

// larson: each thread owns a set of slots (objects of 16..128 B; size / threads bytes of
// them); in round r thread t replaces random objects of set (t + r) mod T, so from round
// 1 on it frees objects another thread allocated. 4 rounds of 2 replacements per slot.
inline Outcome larson(const Params& p) {
    const unsigned T = p.threads;
    const std::size_t slots = std::max<std::size_t>(16, p.size / T / 72);
    constexpr unsigned kRounds = 4;
    std::vector<std::vector<Obj>> sets(T, std::vector<Obj>(slots));
    std::barrier sync(T);
    Tally tally;
    on_threads(T, [&](unsigned t) {
        std::uint64_t st = rnd::mix(p.seed ^ (std::uint64_t{t} << 32)), sum = 0, ops = 0;
        bool ok = true;
        for (auto& o : sets[t]) o = make(st, 16, 128), sum += o.n, ++ops;
        sync.arrive_and_wait();
        if (t == 0) p.peak();
        sync.arrive_and_wait();
        for (unsigned r = 1; r <= kRounds; ++r) {
            auto& set = sets[(t + r) % T];
            std::uint64_t rs = rnd::mix(p.seed + 977 * r + t);
            for (std::size_t m = 0; m < 2 * slots; ++m) {
                Obj& o = set[rnd::below(rnd::next(rs), slots)];
                ok &= release(o);
                o = make(rs, 16, 128), sum += o.n, ++ops;
            }
            sync.arrive_and_wait();
        }
        for (auto& o : sets[t]) ok &= release(o);
        tally.add(ops, sum, ok);
    });
    return tally.out();
}

// A bounded queue of batches between one producer and one consumer.
class Channel {
  public:
    explicit Channel(std::size_t capacity) : cap_(capacity) {}
    // Returns true when the queue was full on arrival (the producer's peak).
    bool push(std::vector<Obj>&& b) {
        std::unique_lock lk(m_);
        bool full = q_.size() >= cap_;
        cv_.wait(lk, [&] { return q_.size() < cap_; });
        q_.push_back(std::move(b));
        cv_.notify_all();
        return full;
    }
    std::vector<Obj> pop() {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return !q_.empty(); });
        auto b = std::move(q_.front());
        q_.pop_front();
        cv_.notify_all();
        return b;
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::vector<Obj>> q_;
    std::size_t cap_;
};

// xmalloc: threads in pairs, even t produces batches of 64 objects (16..256 B) that odd
// t + 1 checks and frees; a lone last thread consumes its own. At most size bytes
// (about) in flight; each producer makes 4x that, at least 256 batches.
inline Outcome xmalloc(const Params& p) {
    constexpr std::size_t kBatch = 64, kAvg = 136;
    const unsigned T = p.threads, pairs = (T + 1) / 2;
    const std::size_t cap = std::max<std::size_t>(2, p.size / pairs / (kBatch * kAvg));
    const std::size_t batches = std::max<std::size_t>(256, 4 * cap);
    std::vector<std::unique_ptr<Channel>> ch;
    for (unsigned i = 0; i < pairs; ++i) ch.push_back(std::make_unique<Channel>(cap));
    std::atomic<bool> peaked{false};
    Tally tally;
    auto consume = [&](Channel& c, std::size_t n) {
        std::uint64_t sum = 0, ops = 0;
        bool ok = true;
        for (std::size_t b = 0; b < n; ++b)
            for (auto& o : c.pop()) sum += o.n, ++ops, ok &= release(o);
        tally.add(0, sum, ok);
        (void)ops;
    };
    on_threads(T, [&](unsigned t) {
        Channel& c = *ch[t / 2];
        if (t % 2 == 1) return consume(c, batches);
        std::uint64_t st = rnd::mix(p.seed ^ (std::uint64_t{t} << 32)), ops = 0;
        const bool alone = t + 1 == T;
        for (std::size_t b = 0; b < batches; ++b) {
            std::vector<Obj> batch;
            batch.reserve(kBatch);
            for (std::size_t i = 0; i < kBatch; ++i) batch.push_back(make(st, 16, 256)), ++ops;
            if (alone && b + 1 == cap && !peaked.exchange(true)) p.peak();
            if (alone && b + 1 >= cap) consume(c, 1);  // its own consumer: keep cap - 1 queued
            if (c.push(std::move(batch)) && t == 0 && !peaked.exchange(true)) p.peak();
        }
        if (alone) consume(c, std::min(batches, cap - 1));
        tally.add(ops, 0, true);
    });
    if (!peaked) p.peak();
    return tally.out();
}

// Writes `reps` rounds of bytes into an 8-byte object through volatile stores (each one
// reaches the cache line) and checks the last round. True when it holds.
inline bool hammer(void* obj, unsigned reps, unsigned salt) noexcept {
    volatile unsigned char* b = static_cast<unsigned char*>(obj);
    for (unsigned r = 0; r < reps; ++r)
        for (unsigned i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(r + i + salt);
    for (unsigned i = 0; i < 8; ++i)
        if (b[i] != static_cast<unsigned char>(reps - 1 + i + salt)) return false;
    return true;
}

// cache-thrash (active false sharing): every thread allocates, hammers and frees 8-byte
// objects, size / 64 times: an allocator that hands neighbouring bytes of one cache line
// to different threads makes them fight over it. cache-scratch (passive): thread 0
// first allocates one 8-byte object per thread, side by side, and each thread frees its
// own before the loop — an allocator that reuses that freed object in place keeps
// the threads on one line. 64 rounds of 8 byte stores per object.
inline Outcome cache_share(const Params& p, bool passive) {
    const unsigned T = p.threads;
    const std::size_t iters = std::max<std::size_t>(16, p.size / 64);
    std::vector<void*> first(T);
    if (passive)
        for (auto& f : first) f = get(8);
    p.peak();
    Tally tally;
    on_threads(T, [&](unsigned t) {
        if (passive) std::free(first[t]);
        bool ok = true;
        for (std::size_t i = 0; i < iters; ++i) {
            void* o = get(8);
            ok &= hammer(o, 64, t + static_cast<unsigned>(i));
            std::free(o);
        }
        tally.add(iters, iters * 8, ok);
    });
    return tally.out();
}

// glibc-thread (glibc's bench-malloc-thread): every thread keeps a working set of
// size / threads bytes in slots of 16 B..8 KiB (log-uniform: mostly small), and replaces
// random slots 4 times per slot; no object crosses threads.
inline Outcome glibc_thread(const Params& p) {
    const unsigned T = p.threads;
    const std::size_t slots = std::max<std::size_t>(16, p.size / T / 1200);
    std::barrier sync(T);
    Tally tally;
    on_threads(T, [&](unsigned t) {
        std::uint64_t st = rnd::mix(p.seed ^ (std::uint64_t{t} << 32)), sum = 0, ops = 0;
        auto draw = [&] {
            std::size_t hi = std::size_t{16} << rnd::below(rnd::next(st), 10);
            return make(st, hi / 2 + 1, hi);
        };
        std::vector<Obj> set(slots);
        bool ok = true;
        for (auto& o : set) o = draw(), sum += o.n, ++ops;
        sync.arrive_and_wait();
        if (t == 0) p.peak();
        for (std::size_t m = 0; m < 4 * slots; ++m) {
            Obj& o = set[rnd::below(rnd::next(st), slots)];
            ok &= release(o);
            o = draw(), sum += o.n, ++ops;
        }
        for (auto& o : set) ok &= release(o);
        tally.add(ops, sum, ok);
    });
    return tally.out();
}

// idle-threads: kIdleThreads threads each write size / kIdleThreads bytes of objects of
// 16..1024 B and free them all, then idle; one more thread (the caller) goes on
// allocating and freeing a few small objects through a pause of 250 ms (longer than the
// allocators' purge delays: physmem's is 100 ms) and samples the heap after it (peak()):
// what the idle threads' caches and the freed memory still hold. The pause is wall time
// in every pass, so the workload's time is no allocation speed (the suite's time
// geometric means leave it out).
inline constexpr unsigned kIdleThreads = 16;
inline Outcome idle_threads(const Params& p) {
    const std::size_t per = std::max<std::size_t>(16, p.size / kIdleThreads / 520);  // objects: 520 B on average
    std::barrier freed(kIdleThreads + 1), sampled(kIdleThreads + 1);
    Tally tally;
    on_threads(kIdleThreads + 1, [&](unsigned t) {
        std::uint64_t st = rnd::mix(p.seed ^ (std::uint64_t{t} << 32)), sum = 0, ops = 0;
        bool ok = true;
        if (t == 0) {  // the thread that stays busy
            freed.arrive_and_wait();
            for (int round = 0; round < 25; ++round) {
                for (int k = 0; k < 64; ++k) {
                    Obj o = make(st, 16, 1024);
                    sum += o.n, ++ops;
                    ok &= release(o);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            p.peak();
        } else {
            std::vector<Obj> v(per);
            for (auto& o : v) o = make(st, 16, 1024), sum += o.n, ++ops;
            for (auto& o : v) ok &= release(o);
            freed.arrive_and_wait();
        }
        tally.add(ops, sum, ok);
        sampled.arrive_and_wait();  // the idle threads stay until the sample is taken
    });
    return tally.out();
}

}  // namespace lab::alloc
