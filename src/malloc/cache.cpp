// src/malloc/cache.cpp — size classes, central free lists and per-thread caches.
//
// Small objects (<= 60 KiB) come in 79 classes: 16-byte steps to 128, then 8 per
// doubling (12.5% spacing). Each class carves objects from spans of whole 4 KiB pages
// (heap.cpp). A thread keeps a singly linked list per class; malloc pops, free pushes,
// with no lock. Lists spill to / refill from the class's central list (one lock per class)
// in batches. A free from another thread simply lands in the freeing thread's cache
// (TCMalloc style), so no remote-free queue is needed.
//
// Every span has a bitmap with one bit per object, set while the object is not handed
// out: malloc clears it, free sets it, each with one atomic RMW, so a double free (even
// racing on two threads) or a corrupted free list is caught, never silently used.
#include <pthread.h>

#include <cstring>

#include "malloc/internal.hpp"

namespace physmem::malloc {

namespace {
constexpr unsigned kMaxClasses = 80;
}

SizeClass g_classes[kMaxClasses];
unsigned g_nclasses;

namespace {

std::uint8_t lut16[kPage / 4 / 16 + 1];           // sizes 0..1024 in 16-byte steps
std::uint8_t lut128[kSmallMax / 128 + 1];          // sizes 1024..61440 in 128-byte steps

struct alignas(64) Central {
    SpinLock lock;
    Span* partial;    // spans with free objects
    unsigned npartial;
};
constinit Central central[kMaxClasses];

struct Bin {
    void* head;
    std::uint32_t count;
};

// The thread cache: zero-initialised static TLS (initial-exec: no allocation on first
// access, fine for a preloaded or linked library).
struct ThreadCache {
    Bin bins[kMaxClasses];
    enum : std::uint8_t { fresh, activating, active, dead } state;
};
__thread ThreadCache t_cache __attribute__((tls_model("initial-exec")));

std::atomic<std::size_t> g_outstanding{0};  // bytes of small objects out of central lists

pthread_key_t g_key;
std::atomic<bool> g_key_ok{false};

void* next_of(void* p) noexcept { return *static_cast<void**>(p); }
void set_next(void* p, void* n) noexcept { *static_cast<void**>(p) = n; }

std::uint32_t batch_of(unsigned cls) noexcept {
    std::uint32_t b = g_classes[cls].cache_max / 2;
    return b ? b : 1;
}

void add_class(std::uint32_t size) noexcept {
    std::uint32_t pages = 4;
    auto bad = [&] {
        std::uint32_t bytes = pages * kPage;
        return bytes < 8 * size || (bytes % size) * 8 > bytes;
    };
    while (bad()) ++pages;
    std::uint32_t nobj = pages * static_cast<std::uint32_t>(kPage) / size;
    std::uint32_t cap = static_cast<std::uint32_t>((64u << 10) / size);
    SizeClass& c = g_classes[++g_nclasses];
    c = {size, pages, nobj < kMaxObjects ? nobj : kMaxObjects, cap > 256 ? 256 : (cap < 2 ? 2 : cap)};
}

// --- central lists (under central[cls].lock) ---

void add_partial(Central& c, Span* s) noexcept {
    s->prev = nullptr;
    s->next = c.partial;
    if (c.partial) c.partial->prev = s;
    c.partial = s;
    s->in_partial = true;
    ++c.npartial;
}

void remove_partial(Central& c, Span* s) noexcept {
    (s->prev ? s->prev->next : c.partial) = s->next;
    if (s->next) s->next->prev = s->prev;
    s->in_partial = false;
    --c.npartial;
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
    for (unsigned i = 0; i < c.nobj; ++i)
        s->freebits[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_relaxed);
}

void* pop_object(Span* s) noexcept {
    void* p = s->freelist;
    if (p) s->freelist = next_of(p);
    else p = reinterpret_cast<void*>(s->start + std::uintptr_t{s->fresh++} * s->size);
    --s->nfree;
    return p;
}

// Up to n objects of class cls, chained through their first word; returns the count.
std::uint32_t central_pop(unsigned cls, std::uint32_t n, void*& head) noexcept {
    Central& c = central[cls];
    LockGuard g(c.lock);
    std::uint32_t got = 0;
    head = nullptr;
    while (got < n) {
        Span* s = c.partial;
        if (!s) {
            s = heap_small_span(g_classes[cls].pages, cls, init_small);
            if (!s) break;
            add_partial(c, s);
        }
        while (got < n && s->nfree > 0) {
            void* p = pop_object(s);
            set_next(p, head);
            head = p;
            ++got;
        }
        if (s->nfree == 0) remove_partial(c, s);
    }
    g_outstanding.fetch_add(std::size_t{got} * g_classes[cls].size, std::memory_order_relaxed);
    return got;
}

// Returns a chain of count objects of class cls (already marked free in the bitmaps).
void central_push(unsigned cls, void* head, std::uint32_t count) noexcept {
    Central& c = central[cls];
    g_outstanding.fetch_sub(std::size_t{count} * g_classes[cls].size, std::memory_order_relaxed);
    LockGuard g(c.lock);
    for (std::uint32_t i = 0; i < count; ++i) {
        void* p = head;
        head = next_of(p);
        Span* s = span_of(p);
        set_next(p, s->freelist);
        s->freelist = p;
        ++s->nfree;
        if (!s->in_partial) add_partial(c, s);
        if (s->nfree == s->nobj && c.npartial > 1) {  // keep one span per class warm
            remove_partial(c, s);
            heap_release_small_span(s);
        }
    }
}

// --- thread caches ---

void flush_bin(unsigned cls, std::uint32_t n) noexcept {
    Bin& b = t_cache.bins[cls];
    if (n > b.count) n = b.count;
    if (n == 0) return;
    void* head = b.head;
    void* last = head;
    for (std::uint32_t i = 1; i < n; ++i) last = next_of(last);
    b.head = next_of(last);
    b.count -= n;
    set_next(last, nullptr);
    central_push(cls, head, n);
}

void flush_all() noexcept {
    for (unsigned cls = 1; cls <= g_nclasses; ++cls) flush_bin(cls, t_cache.bins[cls].count);
}

void thread_exit(void*) noexcept {
    flush_all();
    t_cache.state = ThreadCache::dead;  // later calls in this thread bypass the cache
}

// A fresh thread's first call: register the exit hook. pthread_setspecific may allocate
// (keys past the first 32), so the cache stays bypassed until it returns.
bool activate() noexcept {
    ThreadCache& t = t_cache;
    if (t.state == ThreadCache::fresh && g_key_ok.load(std::memory_order_acquire)) {
        t.state = ThreadCache::activating;
        bool ok = pthread_setspecific(g_key, &t) == 0;
        t.state = ok ? ThreadCache::active : ThreadCache::dead;
    }
    return t.state == ThreadCache::active;
}

[[noreturn]] void corrupt(void* p, unsigned cls) noexcept {
    fatal("heap corruption: %p (size class %u) was about to be handed out twice: a free list was "
          "overwritten (use after free?)", p, cls);
}

// Marks p (just taken from a free list of class cls) as handed out.
void mark_allocated(void* p, unsigned cls) noexcept {
    Span* s = span_of(p);
    if (!s || s->kind != Span::small || s->cls != cls) corrupt(p, cls);
    std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - s->start;
    std::uintptr_t idx = (off * s->recip) >> 40;
    std::uint64_t m = std::uint64_t{1} << (idx % 64);
    if (idx >= s->nobj || !(s->freebits[idx / 64].fetch_and(~m, std::memory_order_relaxed) & m))
        corrupt(p, cls);
}

void* small_alloc_slow(unsigned cls) noexcept {
    void* p = nullptr;
    if (!activate()) {
        central_pop(cls, 1, p);
        return p;
    }
    Bin& b = t_cache.bins[cls];
    std::uint32_t got = central_pop(cls, batch_of(cls), p);
    if (got == 0) return nullptr;
    b.head = next_of(p);
    b.count = got - 1;
    return p;
}

}  // namespace

void classes_init() noexcept {
    if (g_nclasses) return;
    for (std::uint32_t s = 16; s <= 128; s += 16) add_class(s);
    for (std::uint32_t p = 128; p < (32u << 10) * 2; p *= 2)
        for (std::uint32_t k = 1; k <= 8 && p + k * (p / 8) <= kSmallMax; ++k) add_class(p + k * (p / 8));
    unsigned c = 1;
    for (unsigned i = 0; i < sizeof lut16; ++i) {
        while (g_classes[c].size < i * 16) ++c;
        lut16[i] = static_cast<std::uint8_t>(c);
    }
    for (unsigned i = 0; i < sizeof lut128; ++i) {
        while (g_classes[c].size < i * 128) ++c;
        lut128[i] = static_cast<std::uint8_t>(c);
    }
}

unsigned class_of(std::size_t size) noexcept {
    return size <= 1024 ? lut16[(size + 15) >> 4] : lut128[(size + 127) >> 7];
}

// Fast path: a TLS load, a list pop, then the bitmap check (page-map lookup + one atomic).
void* small_alloc(unsigned cls) noexcept {
    Bin& b = t_cache.bins[cls];
    void* p = b.head;
    if (__builtin_expect(p != nullptr, 1)) {
        b.head = next_of(p);
        --b.count;
    } else {
        p = small_alloc_slow(cls);
        if (!p) return nullptr;
    }
    mark_allocated(p, cls);
    return p;
}

void small_free(Span* s, void* p) noexcept {
    std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - s->start;
    std::uintptr_t idx = (off * s->recip) >> 40;
    if (idx >= s->nobj || idx * s->size != off)
        fatal("free(): invalid pointer %p: inside the %u-byte object at %p, not its start", p, s->size,
              reinterpret_cast<void*>(s->start + (idx < s->nobj ? idx : s->nobj - 1) * s->size));
    std::uint64_t m = std::uint64_t{1} << (idx % 64);
    if (s->freebits[idx / 64].fetch_or(m, std::memory_order_relaxed) & m)
        fatal("free(): double free of %p (%u-byte object)", p, s->size);
    unsigned cls = s->cls;
    ThreadCache& t = t_cache;
    if (__builtin_expect(t.state != ThreadCache::active, 0) && !activate()) {
        set_next(p, nullptr);
        central_push(cls, p, 1);
        return;
    }
    Bin& b = t.bins[cls];
    set_next(p, b.head);
    b.head = p;
    if (__builtin_expect(++b.count > g_classes[cls].cache_max, 0)) flush_bin(cls, batch_of(cls));
}

std::size_t cache_outstanding_bytes() noexcept { return g_outstanding.load(std::memory_order_relaxed); }

void cache_thread_init_key() noexcept {
    if (pthread_key_create(&g_key, thread_exit) == 0) g_key_ok.store(true, std::memory_order_release);
}

void cache_flush_current() noexcept {
    if (t_cache.state == ThreadCache::active) flush_all();
}

void cache_lock_all() noexcept {
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.lock();
}
void cache_unlock_all() noexcept {
    for (unsigned c = g_nclasses; c >= 1; --c) central[c].lock.unlock();
}
void cache_reset_all() noexcept {
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.reset();
}

}  // namespace physmem::malloc
