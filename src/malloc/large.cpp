// src/malloc/large.cpp — large objects (> 60 KiB): size classes, stagger offsets and a
// cache of freed spans, each class behind its own lock; the heap lock is taken only to
// place new pages or give pages back (placement.cpp, below this file). Nothing below calls
// into this file: purge.cpp (above it) drives the cache's decay.
//
// Classes: 12.5% spacing (8 per doubling) from 64 KiB. With stagger, a request leaving
// less than 1 KiB of slack in its class (exact powers of two, say) gets one more page.
// key = class index * 2 + (that extra page): every span of a key has the same page count.
//
// Stagger (the contract in physmem.h): each key counts its live objects per 64-byte
// offset slot 0..63. An allocation of `size` may use the first N = min(64, slack / 64)
// slots (slack = class bytes - size >= 1 KiB, so N >= 16; 64 for direct mappings, which
// get an extra page) and takes the least used of them — of those, the farthest around the
// page from where live large objects of any class start, so consecutive buffers are up to
// 2 KiB apart, not 64 bytes (seed 002: a store 64 bytes past a load's page offset still
// 4K-aliases in an unrolled loop).
// So while at most N objects of a key are live, their offsets (the low 12 bits, spans
// being page aligned) are pairwise distinct, whatever was freed in between.
//
// Span cache: up to kCached freed spans per key (kCachedSparse when on 4 KiB pages, below;
// spans up to kCacheMaxBytes; all keys together at most an eighth of the live large bytes,
// at least 4 MiB) stay placed, so a free/malloc pair of one class costs the class lock only. A cached span still
// counts as in use; purge.cpp's rounds (large_cache_expire) release those freed more than
// purge_delay_ms ago, pm_collect(1) all of them. Caching one raises the "purge is due" flag.
//
// Density (PHYSMEM_MALLOC_SPARSE): each key learns whether its objects are touched densely.
// Its first object, and one in kReprobe after a verdict, is a probe placed on 4 KiB pages
// (a sparse arena, placement.cpp), where the kernel's resident pages (mincore) show what
// the program touched. The probe is read at the key's next allocation (untouched yet: read
// again at the next, up to kProbeReads times, then dropped for a new probe) or when it is
// freed or copied by realloc (before the copy, whose reads would make every page resident):
// under a quarter of its pages touched, the key is sparse and its objects go on 4 KiB pages
// (a block touched at its ends then holds two pages, not the 2 MiB pages it shares); else
// dense, on huge pages (also when mincore fails). Direct mappings and overaligned objects,
// and classes of 2 MiB and more (kJudgedIndex), are not judged.
// A span on 4 KiB pages reused from the cache gives back the page its last object ended on
// (one madvise) unless the new object starts or ends there: it holds about the pages its
// object touched, not one more for every reuse by an object of another size. Its key
// caches up to kCachedSparse such spans: they hold a few pages each, and a reuse (that
// madvise, one fault) costs less than giving the span back and placing a new one (a
// madvise of the whole span, two faults).
#include <climits>

#include "core/give_back.hpp"
#include "malloc/internal.hpp"
#include "port/os.hpp"

namespace physmem::malloc {

namespace {

constexpr unsigned kKeys = 512;                      // classes up to 2^46 bytes, x2
constexpr unsigned kSlots = 64;                      // 64-byte offsets in a 4 KiB page
constexpr unsigned kCached = 4;         // spans a key caches, on huge pages
constexpr unsigned kCachedSparse = 16;  // on 4 KiB pages (a sparse arena)
constexpr std::size_t kCacheMaxBytes = std::size_t{32} << 20;
constexpr unsigned kReprobe = 64;   // objects of a judged key between two probes
constexpr unsigned kProbeReads = 16;  // reads of an untouched probe before it is dropped
// Classes judged for density: those below 2 MiB (index 40), whose objects share huge pages
// with others; a bigger object wastes at most the partly touched huge pages at its ends,
// and would pay 4 KiB faults on megabytes as a probe.
constexpr unsigned kJudgedIndex = 40;

enum Density : std::uint8_t { unknown, dense, sparse };

struct alignas(64) LargeClass {
    SpinLock lock;
    std::uint16_t use[kSlots];        // live objects at each offset slot
    Span* cached[kCachedSparse];
    std::atomic<unsigned> ncached;    // written under the lock; read without it as a hint
    std::uintptr_t probe;             // first page of the live probe (0: none)
    std::uint32_t probe_pages;
    std::uint16_t since_verdict;      // objects placed since the last verdict
    std::uint8_t probe_reads;         // reads of the live probe that found it untouched
    Density verdict;
};
constinit LargeClass g_large[kKeys];
std::atomic<unsigned> g_slot_live[kSlots];   // live large objects starting at each slot, all classes
std::atomic<std::size_t> g_requested{0};  // bytes asked for by live large objects
std::atomic<std::size_t> g_cached{0};     // bytes of the spans in every key's cache
constexpr std::size_t kCacheFloor = std::size_t{4} << 20;

// Whether a freed span of `bytes` may be cached: the caches of all keys together hold at
// most an eighth of the live large bytes (at least 4 MiB). Bounded by what the program
// holds, not by how many classes it touched: a program cycling through many sizes would
// otherwise keep up to kCached spans of every class resident (malloc-large in the alloc
// suite: 6x its working set in RSS).
bool cache_has_room(std::size_t bytes) noexcept {
    std::size_t live = g_requested.load(std::memory_order_relaxed) / 8;
    return g_cached.load(std::memory_order_relaxed) + bytes <= (live > kCacheFloor ? live : kCacheFloor);
}

std::size_t span_bytes(const Span* s) noexcept { return std::size_t{s->npages} * kPage; }

// Class bytes of a large request and its index (0 for 64 KiB, 8 per doubling).
std::size_t class_bytes(std::size_t size, unsigned& index) noexcept {
    std::size_t x = size < (std::size_t{64} << 10) ? std::size_t{64} << 10 : size;
    unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(x));
    std::size_t step = (std::size_t{1} << e) / 8;
    std::size_t c = (x + step - 1) / step * step;
    index = (e - 16) * 8 + static_cast<unsigned>(c / step) - 8;
    return c;
}

// Slots where a live large object of any class starts, one bit each. g_slot_live is read
// without a lock: a hint.
std::uint64_t live_slots() noexcept {
    std::uint64_t mask = 0;
    for (unsigned j = 0; j < kSlots; ++j)
        if (g_slot_live[j].load(std::memory_order_relaxed)) mask |= std::uint64_t{1} << j;
    return mask;
}

// Distance, around the page, from slot k to the nearest slot set in `live` (0: k itself;
// kSlots: none).
unsigned distance_to_live(std::uint64_t live, unsigned k) noexcept {
    std::uint64_t r = live >> k | (k ? live << (kSlots - k) : 0);   // rotate k to bit 0
    if (r == 0) return kSlots;
    unsigned ahead = static_cast<unsigned>(__builtin_ctzll(r));
    unsigned behind = static_cast<unsigned>(__builtin_clzll(r)) + 1;
    return ahead < behind ? ahead : behind;
}

void count_slot(LargeClass& lc, unsigned slot, int delta) noexcept {
    lc.use[slot] = static_cast<std::uint16_t>(lc.use[slot] + delta);
    g_slot_live[slot].fetch_add(static_cast<unsigned>(delta), std::memory_order_relaxed);
}

// pre: lc.lock held. The offset for an object with `slack` spare bytes and alignment
// `align` (<= kPage), counted as used: among the allowed slots, the least used by this
// class (the guarantee of physmem.h); among those, the farthest around the page from
// where live large objects of every class start, so buffers allocated one after another
// land far apart (0, then 2 KiB, then 1 or 3 KiB, ...) rather than 64 bytes apart; ties
// to the lowest slot. Cost: 64 slot reads and a few bit operations per allowed slot, on
// a path that maps or reuses >= 64 KiB.
std::uint32_t take_offset(LargeClass& lc, std::size_t slack, std::size_t align, bool stagger) noexcept {
    std::size_t step = align > 64 ? align : 64;
    std::size_t limit = (slack < kPage ? slack : kPage) / step * step;
    unsigned stride = static_cast<unsigned>(step / 64);
    unsigned n = stagger && limit ? static_cast<unsigned>(limit / 64) : stride;  // slots allowed
    unsigned least = UINT_MAX;
    for (unsigned k = 0; k < n; k += stride) least = lc.use[k] < least ? lc.use[k] : least;
    unsigned best = 0;
    int best_far = -1;
    const std::uint64_t live = live_slots();
    for (unsigned k = 0; k < n && best_far < static_cast<int>(kSlots); k += stride) {
        if (lc.use[k] != least) continue;
        int far = static_cast<int>(distance_to_live(live, k));
        if (far > best_far) best = k, best_far = far;
    }
    count_slot(lc, best, +1);
    return best * 64;
}

void end_probe(LargeClass& lc) noexcept { lc.probe = 0, lc.probe_reads = 0, lc.since_verdict = 0; }

// pre: lc.lock held, lc.probe set. The key's verdict from its probe's resident pages (none
// while the probe is untouched: it is dropped after kProbeReads such reads, or at once when
// `last`, and the key's next object is a new probe); a verdict ends the probe. mincore
// refused: dense (huge pages, as without judging).
void judge_probe(LargeClass& lc, bool last) noexcept {
    std::size_t touched = os::resident_pages(reinterpret_cast<void*>(lc.probe), std::size_t{lc.probe_pages} * kPage);
    if (touched == SIZE_MAX) lc.verdict = dense;
    else if (touched > 0) lc.verdict = sparsely_touched(touched, lc.probe_pages) ? sparse : dense;
    else if (!last && ++lc.probe_reads < kProbeReads) return;
    end_probe(lc);
}

// pre: lc.lock held. Whether the key's next object goes on 4 KiB pages; probe: it is to be
// the key's probe if it gets a fresh placement on them (else the next one will be).
bool want_sparse(LargeClass& lc, bool& probe) noexcept {
    probe = false;
    if (!g_opt.sparse || static_cast<unsigned>(&lc - g_large) / 2 >= kJudgedIndex) return false;
    if (lc.probe) judge_probe(lc, false);
    else if (lc.verdict == unknown || lc.since_verdict >= kReprobe) probe = true;
    else ++lc.since_verdict;
    return probe || lc.verdict == sparse;
}

void release_offset(Span* s) noexcept {
    LargeClass& lc = g_large[s->lkey - 1];
    LockGuard g(lc.lock);
    count_slot(lc, s->offset / 64, -1);
    if (lc.probe == s->start) judge_probe(lc, true);  // its whole life seen, before its pages go
}

// A large request's key and the bytes of its spans (its class, and one page more when the
// class leaves under 1 KiB of slack and stagger is on).
struct Key {
    unsigned key;
    std::size_t need;
};
Key key_of(std::size_t size) noexcept {
    unsigned index;
    std::size_t c = class_bytes(size, index);
    bool extra = g_opt.stagger && c - size < 1024;
    return {index * 2 + (extra ? 1u : 0u), c + (extra ? kPage : 0)};
}

// realloc growing a large object (not direct) in place: when the pages after its span are
// free, the span takes the page count of the new size's key (every span of a key keeps one
// count) and the object keeps its address and offset, counted in the new key's slot only
// if no live object of that key starts there (the stagger guarantee, with stagger on) and
// the slot is one the new size's slack allows. Not out of a sparse arena into a key whose
// objects go on huge pages (or are not judged): the copy places it by its new key. It may
// grow past the direct threshold (kDirectMin) inside its arena: no copy, huge pages kept,
// and no mremap after it fills the arena (then one copy). True when done; a probe of the
// old key is then judged and ended (the pages added are not read).
bool grow_in_place(Span* s, std::size_t size) noexcept {
    if (s->kind != Span::large || !s->lkey || size > (std::size_t{1} << 46)) return false;
    Key k = key_of(size);
    unsigned slot = s->offset / 64;
    if (k.key + 1 == s->lkey || k.need < size || s->offset + 64 > k.need - size) return false;
    LargeClass& to = g_large[k.key];
    {
        LockGuard g(to.lock);
        bool sparse_ok = k.key / 2 < kJudgedIndex && to.verdict == sparse;
        if ((g_opt.stagger && to.use[slot]) || (s->hp->arena->sparse && !sparse_ok)) return false;
        count_slot(to, slot, +1);
    }
    if (!heap_grow_large(s, k.need / kPage)) {
        LockGuard g(to.lock);
        count_slot(to, slot, -1);
        return false;
    }
    LargeClass& from = g_large[s->lkey - 1];
    {
        LockGuard g(from.lock);
        count_slot(from, slot, -1);
        if (from.probe == s->start) judge_probe(from, true);
    }
    s->lkey = static_cast<std::uint16_t>(k.key + 1);
    return true;
}

void* finish(Span* s, std::size_t size, std::uint32_t off, unsigned lkey) noexcept {
    s->requested = size;
    if (lkey) s->offset = off;
    s->lkey = static_cast<std::uint16_t>(lkey);
    s->live.store(1, std::memory_order_relaxed);
    heap_publish_large(s, true);
    g_requested.fetch_add(size, std::memory_order_relaxed);
    return reinterpret_cast<void*>(s->start + s->offset);
}

// Alignment above a page: placed with its alignment offset, neither staggered nor cached.
void* alloc_overaligned(std::size_t size, std::size_t align) noexcept {
    std::size_t bytes = size ? size : 1;  // the object needs a page of its own even at size 0
    std::size_t need = ((bytes + kPage - 1) & ~(kPage - 1)) + align - kPage;
    Span* s = need >= kDirectMin ? heap_map_direct(size, 0, align) : heap_place_large(need / kPage, align);
    return s ? finish(s, size, 0, 0) : nullptr;
}

// A cached span of key for an object of `size`, or nullptr; the offset for the new object
// and where a fresh span would go (want_sparse) are taken meanwhile. A cached span is never
// a probe. The most recently cached one, unless another's last object ended on the page
// this one will end on: a program touching its blocks at their ends (the sparse classes')
// then touches no page the span does not hold already (objects of one class differ in size,
// so their ends fall on other pages, and each reuse would leave one more page resident).
// stale: when the span is on 4 KiB pages (a sparse arena) and its last object ended on a
// page other than the new one's first and last, that page (from the span's start), for
// the caller to discard outside the lock; else 0.
Span* take_cached(LargeClass& lc, std::size_t size, std::size_t slack, std::size_t align, std::uint32_t& off,
                  bool& sparse, bool& probe, std::uint32_t& stale) noexcept {
    stale = 0;
    LockGuard g(lc.lock);
    off = take_offset(lc, slack, align, g_opt.stagger);
    sparse = want_sparse(lc, probe);
    unsigned n = lc.ncached.load(std::memory_order_relaxed);
    if (n == 0) return nullptr;
    probe = false;
    const std::size_t end = (off + size - 1) / kPage;
    unsigned pick = n - 1;
    for (unsigned i = n; i-- > 0;)
        if (lc.cached[i]->end_page == end) {
            pick = i;
            break;
        }
    Span* s = lc.cached[pick];
    if (s->hp->arena->sparse && s->end_page != end && s->end_page != off / kPage) stale = s->end_page;
    lc.cached[pick] = lc.cached[n - 1];
    lc.ncached.store(n - 1, std::memory_order_relaxed);
    g_cached.fetch_sub(span_bytes(s), std::memory_order_relaxed);
    // It held an object: its bytes are not zero, and that object's density is not the next
    // one's (judged afresh at its first realloc; pages advised 4 KiB for the old one stay so
    // until purged).
    s->zeroed = s->size_judged = s->keep_small = false;
    return s;
}

void start_probe(LargeClass& lc, const Span* s) noexcept {
    LockGuard g(lc.lock);
    if (lc.probe) return;  // another thread's object became the probe meanwhile
    lc.probe = s->start, lc.probe_pages = s->npages;
}

// pre: s was freed (no longer in the page map, offset released). True when kept.
bool cache_span(Span* s) noexcept {
    if (s->kind != Span::large || span_bytes(s) > kCacheMaxBytes || !cache_has_room(span_bytes(s))) return false;
    LargeClass& lc = g_large[s->lkey - 1];
    s->freed_ns = os::monotonic_ns();
    s->end_page = static_cast<std::uint32_t>((s->offset + s->requested - 1) / kPage);
    LockGuard g(lc.lock);
    unsigned n = lc.ncached.load(std::memory_order_relaxed);
    if (n >= (s->hp->arena->sparse ? kCachedSparse : kCached)) return false;
    g_cached.fetch_add(span_bytes(s), std::memory_order_relaxed);
    lc.cached[n] = s;
    lc.ncached.store(n + 1, std::memory_order_relaxed);
    heap_note_purge_due();
    return true;
}

// Up to kCachedSparse spans of lc cached for the purge delay at now_ns (all when force), taken off
// the cache.
unsigned take_expired(LargeClass& lc, bool force, std::uint64_t now_ns, Span** out) noexcept {
    LockGuard g(lc.lock);
    unsigned n = lc.ncached.load(std::memory_order_relaxed), kept = 0, taken = 0;
    for (unsigned i = 0; i < n; ++i) {
        Span* s = lc.cached[i];
        if (force || core::empty_long_enough(s->freed_ns, now_ns, g_opt.purge_delay_ms)) {
            out[taken++] = s;
            g_cached.fetch_sub(span_bytes(s), std::memory_order_relaxed);
        } else {
            lc.cached[kept++] = s;
        }
    }
    lc.ncached.store(kept, std::memory_order_relaxed);
    return taken;
}

}  // namespace

void* heap_large_alloc(std::size_t size, std::size_t align) noexcept {
    if (size > (std::size_t{1} << 46) || align > (std::size_t{1} << 40)) return nullptr;
    if (align > kPage) return alloc_overaligned(size, align);
    const Key k = key_of(size);
    const std::size_t need = k.need;
    const unsigned key = k.key;
    LargeClass& lc = g_large[key];
    std::uint32_t off;
    Span* s = nullptr;
    if (need >= kDirectMin) {  // its own mapping: one extra page of slack, 64 slots
        { LockGuard g(lc.lock); off = take_offset(lc, kPage, align, g_opt.stagger); }
        s = heap_map_direct(size, off, align);
    } else {
        bool sparse, probe;
        std::uint32_t stale;
        s = take_cached(lc, size, need - size, align, off, sparse, probe, stale);
        // The old object's last page, which the new one may never touch: given back, so a
        // program touching its blocks at their ends holds two pages per live block, not one
        // more for every reuse (alloc suite, large-live). A failure leaves it resident.
        if (stale) (void)os::discard(reinterpret_cast<void*>(s->start + std::size_t{stale} * kPage), kPage);
        if (!s) s = heap_place_large(need / kPage, align, sparse);
        if (s && probe && s->hp->arena->sparse) start_probe(lc, s);
    }
    if (s) return finish(s, size, off, key + 1);
    LockGuard g(lc.lock);
    count_slot(lc, off / 64, -1);
    return nullptr;
}

void heap_large_free(Span* s, void* p, bool keep_cached) noexcept {
    if (reinterpret_cast<std::uintptr_t>(p) != s->start + s->offset)
        fatal("free(): invalid pointer %p: inside the large allocation at %p, not its start", p,
              reinterpret_cast<void*>(s->start + s->offset));
    if (s->live.exchange(0, std::memory_order_acq_rel) != 1)
        fatal("free(): double free of %p (large allocation)", p);
    g_requested.fetch_sub(s->requested, std::memory_order_relaxed);
    heap_publish_large(s, false);
    if (s->lkey) release_offset(s);
    if (!s->lkey || !keep_cached || !cache_span(s)) heap_release_large(s);
}

namespace {

// Objects of 2 MiB and more (classes not judged at allocation, direct mappings) are judged at
// their first realloc, a buffer being grown: under a quarter of its pages resident, the
// program writes it sparsely (the alloc suite's realloc-grow writes each step's last byte:
// on huge pages every step faulted 2 MiB, 140 MiB for glibc's 4), so its pages stay 4 KiB
// from then on, the part it grows into too. The huge pages it already has stay. Only where
// huge pages come by themselves (THP; not with prefault or lock, which populate anyway).
void judge_big(Span* s, const void* p) noexcept {
    if (s->size_judged || g_opt.prefault || g_opt.lock || !g_opt.sparse) return;
    const std::size_t bytes = large_usable(s, p);
    if (bytes < kHuge || (s->kind == Span::large && (s->hp->arena->sparse || s->hp->arena->rung != Rung::thp)))
        return;
    if (s->kind == Span::direct && g_opt.backing == Rung::page_4k) return;
    s->size_judged = true;
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) & ~(kPage - 1);  // mincore wants a page
    const std::size_t pages = (reinterpret_cast<std::uintptr_t>(p) + bytes - first) / kPage;
    const std::size_t resident = os::resident_pages(reinterpret_cast<void*>(first), pages * kPage);
    s->keep_small = resident != SIZE_MAX && sparsely_touched(resident, pages);
    if (s->keep_small) heap_keep_small(s);
}

}  // namespace

void* heap_large_resize(Span* s, void* p, std::size_t size) noexcept {
    judge_big(s, p);
    std::size_t have = large_usable(s, p);
    if (size <= have && size >= have / 2) {  // fits, and not much is wasted: keep it
        g_requested.fetch_add(size - s->requested, std::memory_order_relaxed);  // mod 2^64
        s->requested = size;
        return p;
    }
    if (size > have && grow_in_place(s, size)) {
        g_requested.fetch_add(size - s->requested, std::memory_order_relaxed);
        s->requested = size;
        if (s->keep_small) heap_keep_small(s);
        return p;
    }
    // A direct mapping resized by mremap (kept while the size stays at least half the
    // direct threshold; it keeps its offset slot and class key for release_offset).
    if (s->kind != Span::direct || size < kDirectMin / 2) return nullptr;
    std::size_t before = s->requested;
    if (!heap_resize_direct(s, size)) return nullptr;
    g_requested.fetch_add(size - before, std::memory_order_relaxed);
    return reinterpret_cast<void*>(s->start + s->offset);
}

void heap_large_before_copy(const Span* s) noexcept {
    if (s->kind != Span::large || !s->lkey) return;
    LargeClass& lc = g_large[s->lkey - 1];
    LockGuard g(lc.lock);
    if (lc.probe == s->start) judge_probe(lc, true);
}

std::size_t large_usable(const Span* s, const void*) noexcept {
    std::size_t bytes = s->kind == Span::direct ? s->mapped : std::size_t{s->npages} * kPage;
    return bytes - s->offset;
}

std::size_t large_cache_expire(bool force) noexcept {
    // Nothing cached (a hint read without locks): the 512 classes are not visited, which
    // would make 128 KiB of them resident in a program that never caches a span.
    if (g_cached.load(std::memory_order_relaxed) == 0) return 0;
    // Due: cached for the delay (core::empty_long_enough: a span freed after `now` by
    // another thread, before its class lock is taken here, is not).
    std::uint64_t now = os::monotonic_ns();
    std::size_t left = 0;
    for (LargeClass& lc : g_large) {
        if (lc.ncached.load(std::memory_order_relaxed) == 0) continue;
        Span* out[kCachedSparse];
        unsigned n = take_expired(lc, force, now, out);
        for (unsigned i = 0; i < n; ++i) heap_release_large(out[i]);
        left += lc.ncached.load(std::memory_order_relaxed);
    }
    return left;
}

std::size_t large_requested_bytes() noexcept { return g_requested.load(std::memory_order_relaxed); }

void large_lock_all() noexcept {
    for (LargeClass& lc : g_large) lc.lock.lock();
}
void large_unlock_all() noexcept {
    for (LargeClass& lc : g_large) lc.lock.unlock();
}
void large_reset_all() noexcept {
    for (LargeClass& lc : g_large) lc.lock.reset();
}

}  // namespace physmem::malloc
