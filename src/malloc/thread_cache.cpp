// src/malloc/thread_cache.cpp — the per-thread caches of small objects and the slow paths
// of fast.hpp's small malloc and free.
//
// A thread keeps a singly linked list per class (its bins); malloc pops, free pushes, with
// no lock and no atomic (fast.hpp). Lists spill to / refill from the class's central list
// (central.cpp, one lock per class) in batches.
//
// Cross-thread frees (TCMalloc's model, not mimalloc's): a free from another thread lands
// in the freeing thread's cache, and reaches the span's central list when that cache
// spills. Spans have no owner thread, so nothing is ever "abandoned" at thread exit and no
// per-span atomic remote-free list is needed; the cost is that a producer/consumer pair
// moves objects through the central lock, once per batch (up to 256 objects) — in O(1)
// when the batch passes through the class's transfer cache (transfer.hpp: a full spill
// parked as a list for the next full refill).
//
// A thread's bin holds up to 64 KiB of its class (8..512 objects, size_class.cpp);
// refills start at 4 objects and double (slow start), so a class used once costs little
// RSS. All caches together stay within an overall budget (cache_share).
//
// A thread's cache is activated on its first slow path and flushed and recycled by the
// thread-cache key's destructor at thread exit; until activated (and after exit, or when
// activation failed) the thread's objects go to and come from the central lists one at a
// time. fork: cache_lock_all takes the central locks (central.cpp), then the spare-cache
// lock; the child keeps the forking thread's cache.
#include <pthread.h>

#include <cstring>

#include "malloc/central.hpp"

namespace physmem::malloc {

namespace {
// Bins all empty with max 0: a thread's cache until its first slow path. Never written.
constinit ThreadCache g_inactive{};
}  // namespace
__thread ThreadCache* t_cache __attribute__((tls_model("initial-exec"))) = &g_inactive;

namespace {

enum ThreadState : std::uint8_t { fresh, activating, active, dead };
__thread ThreadState t_state __attribute__((tls_model("initial-exec"))) = fresh;

// Caches of exited threads, for the next new thread (linked through bins[0].head: class
// 0 is never used).
SpinLock g_spare_lock;
ThreadCache* g_spare = nullptr;

ThreadCache* new_cache() noexcept {
    ThreadCache* c;
    {
        LockGuard g(g_spare_lock);
        c = g_spare;
        if (c) g_spare = static_cast<ThreadCache*>(c->bins[0].head);
    }
    if (!c) c = static_cast<ThreadCache*>(heap_meta_alloc(sizeof(ThreadCache)));
    if (c) std::memset(static_cast<void*>(c), 0, sizeof *c);
    return c;
}

void recycle_cache(ThreadCache* c) noexcept {
    LockGuard g(g_spare_lock);
    c->bins[0].head = g_spare;
    g_spare = c;
}

pthread_key_t g_key;
std::atomic<bool> g_key_ok{false};

// A thread's first refills of a class are small and double up to batch_of (TCMalloc's slow
// start): a refill touches every object it takes (link and free tag), so a full batch
// (up to 128 KiB) for each class a short program uses once would be its peak RSS. The first
// takes up to 4 objects and 8 KiB (at least one object): each object of 4 KiB and more
// taken is a page made resident by its link alone (python's start-up: 4 pages for 1 used).
constexpr std::uint32_t kFirstRefill = 4;
constexpr std::size_t kFirstRefillBytes = std::size_t{8} << 10;

std::uint32_t first_refill(unsigned cls) noexcept {
    std::size_t n = kFirstRefillBytes / g_classes[cls].size;
    return n < 1 ? 1 : n > kFirstRefill ? kFirstRefill : static_cast<std::uint32_t>(n);
}

std::uint32_t next_refill(Bin& b, unsigned cls) noexcept {
    std::uint32_t first = first_refill(cls);
    std::uint32_t n = b.refill < first ? first : b.refill;
    std::uint32_t full = batch_of(cls);
    if (n >= full) return full;
    b.refill = n * 2;
    return n;
}

void flush_bin(unsigned cls, std::uint32_t n, bool to_spans) noexcept {
    Bin& b = t_cache->bins[cls];
    central_push(cls, b, n < b.count ? n : b.count, to_spans);
}

void flush_all() noexcept {
    for (unsigned cls = 1; cls <= g_nclasses; ++cls) flush_bin(cls, t_cache->bins[cls].count, true);
}

// Thread caches together hold at most kAllCachesBytes (TCMalloc's overall thread-cache
// budget): each thread's share is that over the threads with a cache, at least
// kMinCacheBytes. Checked when a bin spills (once per batch of frees), so a thread that
// freed everything and went idle keeps at most its share, not up to 64 KiB per class it
// ever used (200 idle threads held 851 MiB).
constexpr std::size_t kAllCachesBytes = std::size_t{32} << 20;
constexpr std::size_t kMinCacheBytes = std::size_t{128} << 10;
std::atomic<unsigned> g_caches{0};  // threads with an active cache

std::size_t cache_share() noexcept {
    std::size_t n = g_caches.load(std::memory_order_relaxed);
    std::size_t share = kAllCachesBytes / (n ? n : 1);
    return share > kMinCacheBytes ? share : kMinCacheBytes;
}

// pre: the thread's cache is active. Over its share: every bin gives back what it holds
// (halving instead left 99 MiB in 200 idle threads' caches, emptying 54 MiB).
void trim_to_share() noexcept {
    std::size_t held = 0;
    for (unsigned cls = 1; cls <= g_nclasses; ++cls) held += std::size_t{t_cache->bins[cls].count} * g_classes[cls].size;
    if (held <= cache_share()) return;
    for (unsigned cls = 1; cls <= g_nclasses; ++cls)
        if (std::uint32_t n = t_cache->bins[cls].count) flush_bin(cls, n, false);
}

void thread_exit(void*) noexcept {
    flush_all();
    g_caches.fetch_sub(1, std::memory_order_relaxed);
    ThreadCache* c = t_cache;
    t_cache = &g_inactive;  // frees take the slow path ...
    t_state = dead;         // ... which bypasses the cache from now on
    recycle_cache(c);
    heap_poke_purger();
}

// A fresh thread's first slow path: its own cache, and the exit hook that returns it.
// pthread_setspecific may allocate (keys past the first 32), so the cache stays bypassed
// (t_cache still the inactive one) until it returns.
bool activate() noexcept {
    if (t_state == fresh && g_key_ok.load(std::memory_order_acquire)) {
        t_state = activating;
        ThreadCache* t = new_cache();
        if (!t || pthread_setspecific(g_key, t) != 0) {
            if (t) recycle_cache(t);
            t_state = dead;
            return false;
        }
        for (unsigned cls = 1; cls <= g_nclasses; ++cls) {
            const SizeClass& c = g_classes[cls];
            Bin& b = t->bins[cls];
            b.odd_inverse = c.odd_inverse;
            b.nobj = static_cast<std::uint16_t>(c.nobj), b.shift = static_cast<std::uint8_t>(c.shift);
            b.refill = first_refill(cls);
            b.max = c.cache_max;
        }
        t_cache = t;
        t_state = active;
        g_caches.fetch_add(1, std::memory_order_relaxed);
    }
    return t_state == active;
}

void* small_alloc_refill(std::size_t size) noexcept {
    ensure_init();
    unsigned cls = class_of(size);
    void* p = nullptr;
    if (!activate()) {
        central_pop(cls, 1, p);
        if (p) tag_word(p) = 0;
        return p;
    }
    Bin& b = t_cache->bins[cls];
    if (b.head) return small_alloc(size, cls);  // first call: the bin was class 0's
    std::uint32_t got = central_pop(cls, next_refill(b, cls), p);
    if (got == 0) return nullptr;
    b.head = next_of(p);
    b.count = got - 1;
    tag_word(p) = 0;
    return p;
}

// small_free's checks, for the slow path: p must start an object of class cls and not be
// tagged free already. Then tags it free.
void check_and_tag(unsigned cls, void* p) noexcept {
    const SizeClass& c = g_classes[cls];
    if (!is_object_start(c.odd_inverse, c.shift, c.nobj, span_offset(p, page_info_of(p))))
        bad_small_free(p, false);
    if (tagged_free(p) || t_cache->bins[cls].head == p) bad_small_free(p, true);
    link_free(p, nullptr);
}

}  // namespace

// The bin of size's class was empty (or this is the first call of the process/thread).
void* small_alloc_slow(std::size_t size) noexcept {
    void* p = small_alloc_refill(size);
    if (!p) errno = ENOMEM;
    return p;
}

// The thread's cache is not active (yet, or any more), or p's bin is full.
void small_free_slow(unsigned cls, void* p) noexcept {
    check_and_tag(cls, p);
    if (t_state != active && !activate()) {
        central_push_one(cls, p);
        heap_poke_purger();
        return;
    }
    Bin& b = t_cache->bins[cls];
    link_free(p, b.head);
    b.head = p;
    if (++b.count > b.max) {
        flush_bin(cls, batch_of(cls), false);
        trim_to_share();
    }
    heap_poke_purger();
}

void cache_thread_init_key() noexcept {
    draw_tag_key();
    if (pthread_key_create(&g_key, thread_exit) == 0) g_key_ok.store(true, std::memory_order_release);
}

void cache_flush_current() noexcept {
    if (t_state == active) flush_all();
    central_drain_transfers();
    heap_poke_purger();
}

void cache_lock_all() noexcept {
    central_lock_all();
    g_spare_lock.lock();
}
void cache_unlock_all() noexcept {
    g_spare_lock.unlock();
    central_unlock_all();
}
void cache_reset_all() noexcept {
    g_caches.store(t_state == active ? 1 : 0, std::memory_order_relaxed);  // the child's one thread
    central_reset_all();
    g_spare_lock.reset();
}

}  // namespace physmem::malloc
