// src/malloc/misuse.cpp — the small-object misuse checks: the free tag's key, the batch
// check of the transfer cache, and the messages that stop the process.
//
// Misuse checks, cheapest first:
//   - free: the page map must know the pointer and it must start an object (always);
//   - free tag: a freed object's second word holds tag(p) = key ^ p ^ link (key: random
//     per process; link: the object's first word, its free-list successor); free aborts
//     when it is already there (double free, caught at once on any thread while the
//     object sits in a cache, a central list or a span (its bitmap); malloc clears it. A live
//     object whose bytes 8..15 happen to equal tag(p) would be reported falsely: chance
//     2^-64 per free for data not derived from freed memory.
//   - a pop from a thread cache checks the object's tag before following its link, and an
//     object taken from a span that was handed out before is checked for it too (a free
//     object overwritten after free, use after free, aborts with a message instead of
//     being handed out, or the cache crashing on a wild pointer);
//   - the span bitmap (one bit per object, set while the object is on the central list or
//     never handed out) is updated only when objects move between a cache and the central
//     list, under the class lock: a duplicate that slipped past the tag (the tag was
//     overwritten) is caught there, when a list is drained (central.cpp);
//   - a batch entering the transfer cache skips the spans, so it is walked instead: every
//     object must carry its tag and appear once (check_batch).
// free's object-start and tag checks run on its fast path (fast.hpp); a free that finds
// its bin full or its cache inactive runs them on the slow path (check_and_tag,
// thread_cache.cpp).
//
// The reporters are cold and never return (fatal: options.cpp); they allocate nothing and
// take no lock, so they may run under any allocator lock.
#include "malloc/central.hpp"
#include "port/os.hpp"

namespace physmem::malloc {

std::uintptr_t g_tag_key;

void draw_tag_key() noexcept {
    // Not secret, only unpredictable enough that program data does not collide with it.
    std::uintptr_t k = os::monotonic_ns() ^ (reinterpret_cast<std::uintptr_t>(&k) << 16);
    k ^= k >> 31, k *= 0x9E3779B97F4A7C15ull, k ^= k >> 29;
    g_tag_key = k | 1;
}

// Marks each object (tag ^ 2) on a first pass, so a duplicate (a double free whose tag
// was wiped, which makes the list loop) is met marked; a second pass restores the tags.
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

}  // namespace physmem::malloc
