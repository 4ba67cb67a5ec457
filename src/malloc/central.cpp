// src/malloc/central.cpp — the per-class central free lists: the spans of each size class
// with free objects, and the class's transfer cache (transfer.hpp).
//
// One lock per class (Central::lock) guards its partial-span list, its transfer cache,
// and the counters and bitmap of each of its spans (a span's free set is its bitmap).
// Thread caches (thread_cache.cpp) refill from and spill to these lists in batches
// (central.hpp); a span whose objects are all free again goes back to the filler
// (filler.cpp), except the last partial span of a class, kept warm. New spans come from
// the filler.
//
// The span bitmap (one bit per object, set while the object is on the central list or
// never handed out) is updated only when objects move between a cache and the central
// list, under the class lock: a duplicate that slipped past the free tag (misuse.cpp) is
// caught there, when a list is drained.
//
// fork: central_lock_all takes every class lock (class order), before the thread caches'
// spare-list lock (cache_lock_all, thread_cache.cpp).
#include <cstring>

#include "core/intrusive_list.hpp"
#include "malloc/central.hpp"
#include "malloc/transfer.hpp"

namespace physmem::malloc {

namespace {

struct alignas(64) Central {
    SpinLock lock;
    core::IntrusiveList<Span> partial;  // spans with free objects, through Span::prev/next
    TransferCache xfer;
};
constinit Central central[kMaxClasses];

// Object index of p in small span s; aborts unless p starts an object.
std::uint32_t object_index(const Span* s, void* p) noexcept {
    std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - s->start;
    std::uintptr_t idx = (off * s->recip) >> 40;
    if (idx >= s->nobj || idx * s->size != off) bad_small_free(p, false);
    return static_cast<std::uint32_t>(idx);
}

// --- under central[cls].lock ---

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

// Object idx of small span s, handed out: checked (see take_objects), fresh moved past it,
// pushed on `head`.
void take_one(Span* s, unsigned cls, std::uint32_t idx, void*& head) noexcept {
    void* p = reinterpret_cast<void*>(s->start + std::uintptr_t{idx} * s->size);
    if (idx < s->fresh && !tagged_free(p)) free_list_corrupt(p, cls);
    if (idx >= s->fresh) s->fresh = idx + 1;
    link_free(p, head);
    head = p;
}

// pre: under the class lock. Moves up to `want` of s's free objects, lowest address
// first, from s's bitmap onto the front of list `head` (each in front of the one before:
// the list hands out the highest first, as it always did for a span's new objects);
// returns how many. The free set is the bitmap alone: taking objects reads no object's
// link, so the loads of a batch do not wait for one another (a linked free list walked in
// the order objects were freed is a chain of cache misses), and giving one back (to_span)
// writes nothing into it. An object below `fresh` was handed out before and freed, so it must
// still carry its free tag (misuse.cpp): checked before it is handed out again.
std::uint32_t take_objects(Span* s, unsigned cls, std::uint32_t want, void*& head) noexcept {
    std::uint32_t got = 0;
    for (unsigned w = 0; w < (s->nobj + 63) / 64 && got < want; ++w) {
        std::uint64_t& bits = s->freebits[w];
        while (bits && got < want) {
            std::uint32_t idx = w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            take_one(s, cls, idx, head);
            ++got;
        }
    }
    s->nfree -= got;
    return got;
}

// Pops the top of list b (of class cls); aborts when the list is shorter than its count.
// Moving a list's objects to their spans one pop at a time means a duplicate (a double
// free whose tag was wiped makes the list a cycle) is met again and caught by the bitmap.
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
    ++s->nfree;  // p keeps the free tag its cache gave it (take_objects checks it)
    if (!s->in_partial) add_partial(c, s);
    if (s->nfree == s->nobj && c.partial.size() > 1) {  // keep one span per class warm
        remove_partial(c, s);
        heap_release_small_span(s);
    }
}

// pre: under the class lock. Empties the transfer cache into the spans.
void drain_transfer(Central& c, unsigned cls) noexcept {
    for (; c.xfer.ntransfer > 0; --c.xfer.ntransfer) {
        Bin b{c.xfer.transfer[c.xfer.ntransfer - 1], c.xfer.tcount[c.xfer.ntransfer - 1], 0, 0, 0, 0, 0, 0};
        while (b.count > 0) to_span(c, detach(cls, b));
    }
}

std::atomic<std::size_t> g_outstanding{0};  // bytes of small objects out of central lists

}  // namespace

std::uint32_t central_pop(unsigned cls, std::uint32_t n, void*& head) noexcept {
    Central& c = central[cls];
    LockGuard g(c.lock);
    if (std::uint32_t got = c.xfer.take(n, head)) {
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
        got += take_objects(s, cls, n - got, head);
        if (s->nfree == 0) remove_partial(c, s);
    }
    g_outstanding.fetch_add(std::size_t{got} * g_classes[cls].size, std::memory_order_relaxed);
    return got;
}

void central_push(unsigned cls, Bin& b, std::uint32_t n, bool to_spans) noexcept {
    Central& c = central[cls];
    g_outstanding.fetch_sub(std::size_t{n} * g_classes[cls].size, std::memory_order_relaxed);
    if (!to_spans && n > 1 && n == batch_of(cls)) {
        void* head = b.head;
        void* tail = check_batch(cls, head, n);
        LockGuard g(c.lock);
        if (!c.xfer.full()) {
            b.head = next_of(tail);
            b.count -= n;
            link_free(tail, nullptr);
            c.xfer.put(head, n);
            return;
        }
        for (std::uint32_t i = 0; i < n; ++i) to_span(c, detach(cls, b));
        return;
    }
    LockGuard g(c.lock);
    for (std::uint32_t i = 0; i < n; ++i) to_span(c, detach(cls, b));
}

void central_push_one(unsigned cls, void* p) noexcept {
    link_free(p, nullptr);
    Bin one{p, 1, 0, 0, 0, 0, 0, 0};
    central_push(cls, one, 1, true);
}

void central_drain_transfers() noexcept {
    for (unsigned cls = 1; cls <= g_nclasses; ++cls) {
        LockGuard g(central[cls].lock);
        drain_transfer(central[cls], cls);
    }
}

std::size_t cache_outstanding_bytes() noexcept { return g_outstanding.load(std::memory_order_relaxed); }

void central_lock_all() noexcept {
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.lock();
}
void central_unlock_all() noexcept {
    for (unsigned c = g_nclasses; c >= 1; --c) central[c].lock.unlock();
}
void central_reset_all() noexcept {
    for (unsigned c = 1; c <= g_nclasses; ++c) central[c].lock.reset();
}

}  // namespace physmem::malloc
