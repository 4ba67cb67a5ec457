// src/malloc/cache.cpp — size classes, central free lists and per-thread caches.
//
// Small objects (<= 60 KiB) come in 79 classes: 16-byte steps to 128, then 8 per
// doubling (12.5% spacing). Each class carves objects from spans of whole 4 KiB pages
// (filler.cpp). A thread keeps a singly linked list per class; malloc pops, free pushes,
// with no lock and no atomic. Lists spill to / refill from the class's central list (one
// lock per class) in batches.
//
// Cross-thread frees (TCMalloc's model, not mimalloc's): a free from another thread lands
// in the freeing thread's cache, and reaches the span's central list when that cache
// spills. Spans have no owner thread, so nothing is ever "abandoned" at thread exit and no
// per-span atomic remote-free list is needed; the cost is that a producer/consumer pair
// moves objects through the central lock, once per batch (up to 256 objects) — in O(1)
// when the batch passes through the class's transfer cache (a full spill parked as a list
// for the next full refill).
//
// A thread's bin holds up to 64 KiB of its class (8..512 objects); refills start at 4
// objects and double (slow start), so a class used once costs little RSS.
//
// Misuse checks, cheapest first:
//   - free: the page map must know the pointer and it must start an object (always);
//   - free tag: a freed object's second word holds tag(p) = key ^ p ^ link (key: random
//     per process; link: the object's first word, its free-list successor); free aborts
//     when it is already there (double free, caught at once on any thread while the
//     object sits in a cache, a central list or a span's list); malloc clears it. A live
//     object whose bytes 8..15 happen to equal tag(p) would be reported falsely: chance
//     2^-64 per free for data not derived from freed memory.
//   - a pop from a thread cache or a span list checks the object's tag before following
//     its link (a free object overwritten after free, use after free, aborts with a
//     message instead of handing out, or crashing on, a wild pointer);
//   - the span bitmap (one bit per object, set while the object is on the central list or
//     never handed out) is updated only when objects move between a cache and the central
//     list, under the class lock: a duplicate that slipped past the tag (the tag was
//     overwritten) is caught there, when a list is drained;
//   - a batch entering the transfer cache skips the spans, so it is walked instead: every
//     object must carry its tag and appear once (check_batch).
// free's object-start and tag checks run on its fast path; a free that finds its bin
// full or its cache inactive runs them on the slow path (check_and_tag).
#include <pthread.h>

#include <cstring>

#include "core/intrusive_list.hpp"
#include "malloc/fast.hpp"
#include "port/os.hpp"

namespace physmem::malloc {

SizeClass g_classes[kMaxClasses];
unsigned g_nclasses;
std::uint8_t g_lut16[kSmallMax / 16 + 1];
std::uintptr_t g_tag_key;
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

// Transfer cache (TCMalloc's): a full batch spilled by one thread's cache waits here, as a
// list, for the next refill of the class, which takes it whole: a producer/consumer pair
// moves objects in O(1) per batch instead of visiting each object's span. The objects stay
// tagged free; their span bitmap bits stay 0 as for objects in a thread cache.
constexpr unsigned kTransfer = 8;

struct alignas(64) Central {
    SpinLock lock;
    core::IntrusiveList<Span> partial;  // spans with free objects, through Span::prev/next
    unsigned ntransfer;             // batches in transfer[0..ntransfer)
    void* transfer[kTransfer];      // list heads (linked through the first word)
    std::uint32_t tcount[kTransfer];
};
constinit Central central[kMaxClasses];

std::atomic<std::size_t> g_outstanding{0};  // bytes of small objects out of central lists

pthread_key_t g_key;
std::atomic<bool> g_key_ok{false};

void* next_of(void* p) noexcept { return reinterpret_cast<void*>(link_word(p)); }

// Object index of p in small span s; aborts unless p starts an object.
std::uint32_t object_index(const Span* s, void* p) noexcept {
    std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - s->start;
    std::uintptr_t idx = (off * s->recip) >> 40;
    if (idx >= s->nobj || idx * s->size != off) bad_small_free(p, false);
    return static_cast<std::uint32_t>(idx);
}

std::uint32_t batch_of(unsigned cls) noexcept {
    std::uint32_t b = g_classes[cls].cache_max / 2;
    return b ? b : 1;
}

// A thread's first refills of a class are small and double up to batch_of (TCMalloc's slow
// start): a refill touches every object it takes (link and free tag), so a full batch
// (up to 128 KiB) for each class a short program uses once would be its peak RSS.
constexpr std::uint32_t kFirstRefill = 4;

std::uint32_t next_refill(Bin& b, unsigned cls) noexcept {
    std::uint32_t n = b.refill < kFirstRefill ? kFirstRefill : b.refill;
    std::uint32_t full = batch_of(cls);
    if (n >= full) return full;
    b.refill = n * 2;
    return n;
}

// A thread's bin holds up to this many bytes of one class (8..512 objects).
constexpr std::uint32_t kBinBytes = 64u << 10;

void add_class(std::uint32_t size) noexcept {
    std::uint32_t pages = 4;
    auto bad = [&] {
        std::uint32_t bytes = pages * kPage;
        return bytes < 8 * size || (bytes % size) * 8 > bytes;
    };
    while (bad()) ++pages;
    std::uint32_t nobj = pages * static_cast<std::uint32_t>(kPage) / size;
    std::uint32_t cap = static_cast<std::uint32_t>(kBinBytes / size);
    SizeClass& c = g_classes[++g_nclasses];
    nobj = nobj < kMaxObjects ? nobj : kMaxObjects;
    c = {size, pages, nobj, cap > 512 ? 512 : (cap < 8 ? 8 : cap), ((std::uint64_t{1} << 40) + size - 1) / size,
         0, static_cast<std::uint32_t>(__builtin_ctz(size))};
    std::uint64_t odd = size >> c.shift, inv = odd;
    for (int i = 0; i < 6; ++i) inv *= 2 - odd * inv;  // Newton: doubles the correct low bits
    c.odd_inverse = inv;
}

// --- central lists (under central[cls].lock) ---

void add_partial(Central& c, Span* s) noexcept {
    c.partial.push_front(s);
    s->in_partial = true;
}

void remove_partial(Central& c, Span* s) noexcept {
    c.partial.remove(s);
    s->in_partial = false;
}

void init_small(Span* s, unsigned cls) noexcept {
    const SizeClass& c = g_classes[cls];
    s->cls = static_cast<std::uint16_t>(cls);
    s->size = c.size;
    s->nobj = c.nobj;
    s->nfree = c.nobj;
    s->fresh = 0;
    s->freelist = nullptr;
    s->recip = ((std::uint64_t{1} << 40) + c.size - 1) / c.size;
    std::memset(s->freebits, 0, sizeof s->freebits);
    for (unsigned i = 0; i < c.nobj; ++i) s->freebits[i / 64] |= std::uint64_t{1} << (i % 64);
}

// Flips p's bitmap bit to `to_central`; false when it already had that value.
bool flip_bit(Span* s, void* p, bool to_central) noexcept {
    std::uint32_t idx = object_index(s, p);
    std::uint64_t m = std::uint64_t{1} << (idx % 64);
    std::uint64_t& w = s->freebits[idx / 64];
    if (((w & m) != 0) == to_central) return false;
    w ^= m;
    return true;
}

// pre: under the class lock, s has a free object. The object leaves the central list.
void* pop_object(Span* s, unsigned cls) noexcept {
    void* p = s->freelist;
    if (p && !tagged_free(p)) free_list_corrupt(p, cls);  // before its link is followed
    if (p) s->freelist = next_of(p);
    else p = reinterpret_cast<void*>(s->start + std::uintptr_t{s->fresh++} * s->size);
    --s->nfree;
    if (!flip_bit(s, p, false)) free_list_corrupt(p, cls);
    return p;
}

// Up to n objects of class cls, chained through their first word; returns the count.
std::uint32_t central_pop(unsigned cls, std::uint32_t n, void*& head) noexcept {
    Central& c = central[cls];
    LockGuard g(c.lock);
    if (c.ntransfer > 0 && c.tcount[c.ntransfer - 1] <= n) {
        --c.ntransfer;
        head = c.transfer[c.ntransfer];
        std::uint32_t got = c.tcount[c.ntransfer];
        g_outstanding.fetch_add(std::size_t{got} * g_classes[cls].size, std::memory_order_relaxed);
        return got;
    }
    std::uint32_t got = 0;
    head = nullptr;
    while (got < n) {
        Span* s = c.partial.front();
        if (!s) {
            s = heap_small_span(g_classes[cls].pages, cls, init_small);
            if (!s) break;
            add_partial(c, s);
        }
        while (got < n && s->nfree > 0) {
            void* p = pop_object(s, cls);
            link_free(p, head);
            head = p;
            ++got;
        }
        if (s->nfree == 0) remove_partial(c, s);
    }
    g_outstanding.fetch_add(std::size_t{got} * g_classes[cls].size, std::memory_order_relaxed);
    return got;
}

// Moves n tagged objects from the top of list b (of class cls) to their spans, one pop at
// a time: a duplicate (a double free whose tag was wiped makes the list a cycle) is met
// again and caught by the bitmap; a list shorter than its count aborts too.
// Pops the top of list b (of class cls); aborts when the list is shorter than its count.
void* detach(unsigned cls, Bin& b) noexcept {
    void* p = b.head;
    if (!p) fatal("heap corruption: a size class %u cache list ended early (use after free?)", cls);
    b.head = next_of(p);
    --b.count;
    return p;
}

// pre: under the class lock. Puts object p (tagged free) back on its span's free list.
void to_span(Central& c, void* p) noexcept {
    Span* s = span_of(p);
    if (!flip_bit(s, p, true))
        fatal("free(): double free of %p (%u-byte object; found when a cache was drained)", p, s->size);
    link_free(p, s->freelist);
    s->freelist = p;
    ++s->nfree;
    if (!s->in_partial) add_partial(c, s);
    if (s->nfree == s->nobj && c.partial.size() > 1) {  // keep one span per class warm
        remove_partial(c, s);
        heap_release_small_span(s);
    }
}

// pre: under the class lock. Empties the transfer cache into the spans.
void drain_transfer(Central& c, unsigned cls) noexcept {
    for (; c.ntransfer > 0; --c.ntransfer) {
        Bin b{c.transfer[c.ntransfer - 1], c.tcount[c.ntransfer - 1], 0, 0, 0, 0, 0, 0};
        while (b.count > 0) to_span(c, detach(cls, b));
    }
}

// The first n objects of a list about to enter the transfer cache, checked as a span visit
// would: each must carry its free tag and appear once. Marks each one (tag ^ 2) on a first
// pass, so a duplicate (a double free whose tag was wiped, which makes the list loop) is
// met marked; a second pass restores the tags. Returns the n-th object.
void* check_batch(unsigned cls, void* head, std::uint32_t n) noexcept {
    void* p = head;
    void* tail = nullptr;
    for (std::uint32_t i = 0; i < n; ++i, p = next_of(p)) {
        if (!p) fatal("heap corruption: a size class %u cache list ended early (use after free?)", cls);
        if (tag_word(p) == (tag_of(p, link_word(p)) ^ 2))
            fatal("free(): double free of %p (%u-byte object; found when a cache was drained)", p,
                  g_classes[cls].size);
        if (!tagged_free(p)) free_list_corrupt(p, cls);
        tag_word(p) ^= 2;
        tail = p;
    }
    p = head;
    for (std::uint32_t i = 0; i < n; ++i, p = next_of(p)) tag_word(p) ^= 2;
    return tail;
}

// Moves n objects from the top of list b (of class cls) to the class. A spill of a full
// batch (to_spans false) goes to the transfer cache while it has room.
void central_push(unsigned cls, Bin& b, std::uint32_t n, bool to_spans) noexcept {
    Central& c = central[cls];
    g_outstanding.fetch_sub(std::size_t{n} * g_classes[cls].size, std::memory_order_relaxed);
    if (!to_spans && n > 1 && n == batch_of(cls)) {
        void* head = b.head;
        void* tail = check_batch(cls, head, n);
        LockGuard g(c.lock);
        if (c.ntransfer < kTransfer) {
            b.head = next_of(tail);
            b.count -= n;
            link_free(tail, nullptr);
            c.transfer[c.ntransfer] = head;
            c.tcount[c.ntransfer++] = n;
            return;
        }
        for (std::uint32_t i = 0; i < n; ++i) to_span(c, detach(cls, b));
        return;
    }
    LockGuard g(c.lock);
    for (std::uint32_t i = 0; i < n; ++i) to_span(c, detach(cls, b));
}

// One object straight to the central list (a thread without an active cache).
void central_push_one(unsigned cls, void* p) noexcept {
    link_free(p, nullptr);
    Bin one{p, 1, 0, 0, 0, 0, 0, 0};
    central_push(cls, one, 1, true);
}

// --- thread caches ---

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
            b.refill = kFirstRefill;
            b.max = c.cache_max;
        }
        t_cache = t;
        t_state = active;
        g_caches.fetch_add(1, std::memory_order_relaxed);
    }
    return t_state == active;
}

}  // namespace

void classes_init() noexcept {
    if (g_nclasses) return;
    for (std::uint32_t s = 16; s <= 128; s += 16) add_class(s);
    for (std::uint32_t p = 128; p < (32u << 10) * 2; p *= 2)
        for (std::uint32_t k = 1; k <= 8 && p + k * (p / 8) <= kSmallMax; ++k) add_class(p + k * (p / 8));
    unsigned c = 1;
    for (unsigned i = 0; i < sizeof g_lut16; ++i) {
        while (g_classes[c].size < i * 16) ++c;
        g_lut16[i] = static_cast<std::uint8_t>(c);
    }
}

void free_list_corrupt(void* p, unsigned cls) noexcept {
    fatal("heap corruption: %p (size class %u) is on a free list but was overwritten after it "
          "was freed (use after free?)", p, cls);
}

void bad_small_free(void* p, bool is_double) noexcept {
    const Span* s = span_of(p);
    if (is_double) fatal("free(): double free of %p (%u-byte object)", p, s->size);
    std::uintptr_t idx = ((reinterpret_cast<std::uintptr_t>(p) - s->start) * s->recip) >> 40;
    fatal("free(): invalid pointer %p: inside the %u-byte object at %p, not its start", p, s->size,
          reinterpret_cast<void*>(s->start + (idx < s->nobj ? idx : s->nobj - 1) * s->size));
}

void foreign_pointer(const void* p, const char* what) noexcept {
    fatal("%s(): invalid pointer %p: not allocated by physmem (or already given back)", what, p);
}

void free_not_small(void* p) noexcept {
    if (!p) return;
    Span* s = span_of(p);
    if (!s || s->kind == Span::unused) foreign_pointer(p, "free");
    heap_large_free(s, p);  // small spans have page infos: never here
    heap_poke_purger();
}

namespace {

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

void* large_alloc_errno(std::size_t size) noexcept {
    ensure_init();
    void* p = heap_large_alloc(size, 16);
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

std::size_t cache_outstanding_bytes() noexcept { return g_outstanding.load(std::memory_order_relaxed); }

void cache_thread_init_key() noexcept {
    // Not secret, only unpredictable enough that program data does not collide with it.
    std::uintptr_t k = os::monotonic_ns() ^ (reinterpret_cast<std::uintptr_t>(&k) << 16);
    k ^= k >> 31, k *= 0x9E3779B97F4A7C15ull, k ^= k >> 29;
    g_tag_key = k | 1;
    if (pthread_key_create(&g_key, thread_exit) == 0) g_key_ok.store(true, std::memory_order_release);
}

void cache_flush_current() noexcept {
    if (t_state == active) flush_all();
    for (unsigned cls = 1; cls <= g_nclasses; ++cls) {
        LockGuard g(central[cls].lock);
        drain_transfer(central[cls], cls);
    }
    heap_poke_purger();
}

void cache_lock_all() noexcept {
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.lock();
    g_spare_lock.lock();
}
void cache_unlock_all() noexcept {
    g_spare_lock.unlock();
    for (unsigned c = g_nclasses; c >= 1; --c) central[c].lock.unlock();
}
void cache_reset_all() noexcept {
    g_caches.store(t_state == active ? 1 : 0, std::memory_order_relaxed);  // the child's one thread
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.reset();
    g_spare_lock.reset();
}

}  // namespace physmem::malloc
