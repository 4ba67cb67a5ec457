// src/malloc/heap.cpp — arenas, 2 MiB huge pages, the huge-page filler, large objects,
// purging and stats. Everything here runs under the one heap lock (H.lock); the thread
// caches in cache.cpp keep that lock off the small-object fast path.
//
// Filler (TCMalloc Temeraire's HugePageFiller idea, own code): huge pages holding spans
// sit in buckets by their longest free run of 4 KiB pages; a span of n pages goes to the
// page with the smallest longest-free-run >= n, i.e. the fullest page that fits, so nearly
// empty pages are not refilled and drain. Empty pages wait purge_delay_ms on an LRU list,
// then are purged whole (MADV_DONTNEED on the full 2 MiB): no partially populated 2 MiB
// range is ever left behind, so khugepaged has nothing to re-collapse. What is due is
// purged by the next span operation, pm_stats, pm_collect, and by the purger thread (see
// "the purger" below), so memory goes back even if the program never calls malloc again.
// hugetlb and locked pages are kept (not discarded).
//
// Small heaps (thp_when_big): THP arenas stay on 4 KiB pages (MADV_NOHUGEPAGE) until
// PHYSMEM_MALLOC_THP_AFTER_MB of their 2 MiB pages hold data; until then a released large
// span's pages are discarded at once (no khugepaged concern: nothing is advised huge yet).
// Then every THP arena is advised huge and the pages in use are collapsed (MADV_COLLAPSE).
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "malloc/internal.hpp"
#include "physmem.h"
#include "port/os.hpp"

namespace physmem::malloc {

std::atomic<Arena*> g_arena_map[kArenaSlots];
std::atomic<std::atomic<Span*>*> g_page_map[kArenaSlots];

Span* direct_span_of(std::uintptr_t a) noexcept {
    Arena* ar = g_arena_map[a >> 30].load(std::memory_order_acquire);
    // Only inside the mapping: the rest of its 1 GiB slots may hold the program's own mappings.
    return ar && ar->direct && a >= ar->base && a - ar->base < ar->size ? ar->direct_span : nullptr;
}

namespace {

constexpr unsigned kBuckets = kPagesPerHuge + 1;  // longest free run 0..512

struct HpList {
    HugePage* head = nullptr;
    HugePage* tail = nullptr;
    std::size_t count = 0;
};

struct Heap {
    SpinLock lock;
    HpList bucket[kBuckets];
    std::uint64_t nonempty[(kBuckets + 63) / 64];
    HpList empty;   // empty, resident; head = emptied longest ago
    HpList clean;   // never used or purged
    Arena* arenas[kArenaSlots / 64];
    unsigned narenas;
    Span* free_spans;
    Arena* free_arenas;
    char* meta_cur;
    std::size_t meta_left;
    // stats
    Rung last_rung;
    std::size_t bytes_mapped, bytes_in_use, direct_bytes, direct_count;
    std::size_t n1g, n2m, in_use_by_rung[5], purged_bytes, purges;
    bool thp_on;    // THP arenas advised huge (thp_when_big)
    long reserved;
    std::size_t reserved_page;
};
constinit Heap H{};

enum ListId : std::uint8_t { none = 0, on_empty = 1, on_clean = 2, on_bucket = 3 };

void push_back(HpList& l, HugePage* h) noexcept {
    h->next = nullptr;
    h->prev = l.tail;
    (l.tail ? l.tail->next : l.head) = h;
    l.tail = h;
    ++l.count;
}

void push_front(HpList& l, HugePage* h) noexcept {
    h->prev = nullptr;
    h->next = l.head;
    (l.head ? l.head->prev : l.tail) = h;
    l.head = h;
    ++l.count;
}

void remove(HpList& l, HugePage* h) noexcept {
    (h->prev ? h->prev->next : l.head) = h->next;
    (h->next ? h->next->prev : l.tail) = h->prev;
    h->prev = h->next = nullptr;
    --l.count;
}

// --- bitmaps of 512 pages ---

bool bit(const std::uint64_t* u, unsigned i) noexcept { return (u[i / 64] >> (i % 64)) & 1; }

// First index of a run of n clear bits, or -1.
int find_run(const std::uint64_t* u, unsigned n) noexcept {
    unsigned run = 0, start = 0;
    for (unsigned i = 0; i < kPagesPerHuge;) {
        std::uint64_t w = u[i / 64];
        if (i % 64 == 0 && w == 0) {
            if (run == 0) start = i;
            run += 64;
            i += 64;
        } else if (i % 64 == 0 && w == ~std::uint64_t{0}) {
            run = 0;
            i += 64;
            continue;
        } else {
            if (bit(u, i)) run = 0;
            else if (run++ == 0) start = i;
            ++i;
        }
        if (run >= n) return static_cast<int>(start);
    }
    return -1;
}

bool any_bit(const std::uint64_t* u, unsigned first, unsigned n) noexcept {
    for (unsigned i = first; i < first + n; ++i)
        if (bit(u, i)) return true;
    return false;
}

// Clear bits at the start (bit 0 up) and at the end (bit 511 down) of a 512-bit map.
unsigned leading_free(const std::uint64_t* u) noexcept {
    unsigned n = 0;
    for (unsigned w = 0; w < kPagesPerHuge / 64; ++w, n += 64)
        if (u[w]) return n + static_cast<unsigned>(__builtin_ctzll(u[w]));
    return n;
}

unsigned trailing_free(const std::uint64_t* u) noexcept {
    unsigned n = 0;
    for (unsigned w = kPagesPerHuge / 64; w-- > 0; n += 64)
        if (u[w]) return n + static_cast<unsigned>(__builtin_clzll(u[w]));
    return n;
}

// Longest run of clear bits, a word at a time (runs inside a word by shifting past them).
unsigned longest_free(const std::uint64_t* u) noexcept {
    unsigned best = 0, run = 0;
    for (unsigned w = 0; w < kPagesPerHuge / 64; ++w) {
        std::uint64_t x = u[w];
        if (x == 0) { run += 64; continue; }
        unsigned low = static_cast<unsigned>(__builtin_ctzll(x));
        best = std::max(best, run + low);
        x >>= low;  // bit 0 set
        for (;;) {
            unsigned ones = x == ~std::uint64_t{0} ? 64 : static_cast<unsigned>(__builtin_ctzll(~x));
            x = ones == 64 ? 0 : x >> ones;
            if (x == 0) break;  // only the word's high zeros remain: they start the next run
            unsigned zeros = static_cast<unsigned>(__builtin_ctzll(x));
            best = std::max(best, zeros);
            x >>= zeros;
        }
        run = static_cast<unsigned>(__builtin_clzll(u[w]));
    }
    return std::max(best, run);
}

void set_bits(std::uint64_t* u, unsigned first, unsigned n, bool on) noexcept {
    for (unsigned i = first; i < first + n; ++i) {
        std::uint64_t m = std::uint64_t{1} << (i % 64);
        u[i / 64] = on ? (u[i / 64] | m) : (u[i / 64] & ~m);
    }
}

// --- metadata (never freed to the system; descriptors are recycled) ---

void* meta_alloc(std::size_t bytes) noexcept {
    bytes = (bytes + 63) & ~std::size_t{63};
    if (bytes > H.meta_left) {
        void* chunk = os::map_reserve(kHuge, kPage);
        if (!chunk) return nullptr;
        H.meta_cur = static_cast<char*>(chunk);
        H.meta_left = kHuge;
        H.bytes_mapped += kHuge;
    }
    void* p = H.meta_cur;
    H.meta_cur += bytes;
    H.meta_left -= bytes;
    return p;
}

Span* new_span() noexcept {
    Span* s = H.free_spans;
    if (s) H.free_spans = s->next;
    else s = static_cast<Span*>(meta_alloc(sizeof(Span)));
    if (s) std::memset(static_cast<void*>(s), 0, sizeof(Span));
    return s;
}

void free_span(Span* s) noexcept {
    s->kind = Span::unused;
    s->next = H.free_spans;
    H.free_spans = s;
}

Arena* new_arena_desc() noexcept {
    Arena* a = H.free_arenas;
    if (a) H.free_arenas = a->next_free;
    else a = static_cast<Arena*>(meta_alloc(sizeof(Arena)));
    if (a) std::memset(static_cast<void*>(a), 0, sizeof(Arena));
    return a;
}

void register_arena(Arena* a, bool on) noexcept {
    std::uintptr_t last = (a->base + a->size - 1) >> 30;
    for (std::uintptr_t i = a->base >> 30; i <= last; ++i) {
        g_arena_map[i].store(on ? a : nullptr, std::memory_order_release);
        if (!a->direct) g_page_map[i].store(on ? a->page_span : nullptr, std::memory_order_release);
    }
}

bool available(const HugePage& h) noexcept {
    return h.state == HugePage::clean || h.state == HugePage::empty;
}

// Updates h's PageRuns after a change of its state or of its large objects.
void summarize(const HugePage* h) noexcept {
    PageRuns& r = h->arena->runs[h->index];
    if (available(*h)) {
        r = {kPagesPerHuge, kPagesPerHuge, kPagesPerHuge, 0};
    } else if (h->state != HugePage::large) {
        r = {0, 0, 0, 0};
    } else {
        r.head = static_cast<std::uint16_t>(leading_free(h->used));
        r.tail = static_cast<std::uint16_t>(trailing_free(h->used));
        r.longest = static_cast<std::uint16_t>(longest_free(h->used));
    }
}

// --- arenas ---

const char* rung_name(Rung r) noexcept {
    static const char* const names[] = {"best", "1g", "2m", "thp", "4k"};
    return names[static_cast<unsigned>(r)];
}

bool hugetlb_wanted() noexcept {
    return g_opt.backing == Rung::page_1g || g_opt.backing == Rung::page_2m ||
           (g_opt.backing == Rung::best && H.reserved > 0);
}

// Address space of a new THP/4 KiB arena holding at least min_huge 2 MiB pages: 1 GiB,
// or under an address-space limit (ulimit -v) an eighth of the limit (a power of two,
// 32 MiB .. 1 GiB), so that reservations the program never touches do not use the limit
// up. Arenas stay 1 GiB aligned (the page map is per 1 GiB slot); a smaller one leaves the
// rest of its slot to whoever maps there.
std::size_t arena_bytes(unsigned min_huge) noexcept {
    std::size_t bytes = kArena, limit = os::address_space_limit();
    if (limit) {
        std::size_t eighth = limit / 8;
        bytes = eighth >= kArena ? kArena : std::size_t{1} << (63 - __builtin_clzll(eighth | 1));
        bytes = std::max(bytes, std::size_t{32} << 20);
    }
    std::size_t need = std::size_t{min_huge} * kHuge;
    return std::min(kArena, std::max(bytes, need));
}

// Maps the memory of a new arena of at least min_huge 2 MiB pages; sets base/size/rung.
bool map_arena(Arena* a, unsigned min_huge) noexcept {
    if (hugetlb_wanted() && g_opt.backing != Rung::page_2m &&
        os::hugepages_read(kArena, "free_hugepages") >= 1) {
        if (void* p = os::map_hugetlb(kArena, kArena, kArena)) {
            a->base = reinterpret_cast<std::uintptr_t>(p), a->size = kArena, a->rung = Rung::page_1g;
            H.n1g += 1;
            return true;
        }
    }
    long free2m = hugetlb_wanted() ? os::hugepages_read(kHuge, "free_hugepages") : 0;
    unsigned want = min_huge > 64 ? min_huge : 64;
    unsigned n = free2m > static_cast<long>(want) ? want : static_cast<unsigned>(free2m > 0 ? free2m : 0);
    if (n >= min_huge && n > 0) {
        if (void* p = os::map_hugetlb(std::size_t{n} * kHuge, kHuge, kArena)) {
            a->base = reinterpret_cast<std::uintptr_t>(p), a->size = std::size_t{n} * kHuge;
            a->rung = Rung::page_2m;
            H.n2m += n;
            return true;
        }
    }
    std::size_t bytes = arena_bytes(min_huge);
    void* p = os::map_reserve(bytes, kArena);
    if (!p) return false;
    a->base = reinterpret_cast<std::uintptr_t>(p), a->size = bytes;
    bool thp = g_opt.backing != Rung::page_4k && os::advise_huge(p, bytes, true) == 0;
    if (!thp || !H.thp_on) os::advise_huge(p, bytes, false);  // small heap: see thp_when_big
    a->rung = thp ? Rung::thp : Rung::page_4k;
    return true;
}

Arena* create_arena(unsigned min_huge) noexcept {
    if (H.narenas == sizeof H.arenas / sizeof H.arenas[0]) return nullptr;
    Arena* a = new_arena_desc();
    if (!a || !map_arena(a, min_huge)) return nullptr;
    a->nhuge = static_cast<std::uint32_t>(a->size / kHuge);
    a->hp = static_cast<HugePage*>(os::map_reserve(
        (a->nhuge * sizeof(HugePage) + kPage - 1) & ~(kPage - 1), kPage));
    a->runs = static_cast<PageRuns*>(os::map_reserve(
        (a->nhuge * sizeof(PageRuns) + kPage - 1) & ~(kPage - 1), kPage));
    a->page_span = static_cast<std::atomic<Span*>*>(
        os::map_reserve(kMapEntries * (sizeof(Span*) + 4), kPage));  // 3 MiB, touched as used
    if (!a->hp || !a->runs || !a->page_span) return nullptr;  // leaks the mapping; only under ENOMEM
    for (unsigned i = 0; i < a->nhuge; ++i) {
        HugePage* h = &a->hp[i];
        h->arena = a, h->index = i, h->state = HugePage::clean, h->list = on_clean;
        push_back(H.clean, h);
        summarize(h);
    }
    H.arenas[H.narenas++] = a;
    H.bytes_mapped += a->size;
    H.last_rung = a->rung;
    register_arena(a, true);
    if (g_opt.verbose)
        say("physmem: arena %p: %zu MiB on %s pages\n", reinterpret_cast<void*>(a->base),
            a->size >> 20, rung_name(a->rung));
    return a;
}

// --- huge pages ---

void count_in_use(HugePage* h, int delta) noexcept {
    H.in_use_by_rung[static_cast<unsigned>(h->arena->rung)] += static_cast<std::size_t>(delta);
}

// A clean page about to hold data: populate and lock as the options ask.
void prepare(HugePage* h) noexcept {
    if (g_opt.prefault) os::populate_write(reinterpret_cast<void*>(h->base()), kHuge, kPage);
    if (g_opt.lock) os::lock(reinterpret_cast<void*>(h->base()), kHuge);
}

void unlist(HugePage* h) noexcept {
    if (h->list == on_empty) remove(H.empty, h);
    else if (h->list == on_clean) remove(H.clean, h);
    h->list = none;
}

// A THP arena stays on 4 KiB pages (MADV_NOHUGEPAGE) while the heap is small, so that a
// small program's peak RSS is what it touches rather than 2 MiB per page it touches. Once
// PHYSMEM_MALLOC_THP_AFTER_MB (16) of 2 MiB pages of THP arenas are in use, every THP arena
// is advised huge and the pages already in use are collapsed (MADV_COLLAPSE), so a big heap
// lives on huge pages.
void thp_when_big() noexcept {
    std::size_t after = g_opt.thp_after_mb * (std::size_t{1} << 20) / kHuge;
    if (H.thp_on || H.in_use_by_rung[static_cast<unsigned>(Rung::thp)] < after) return;
    H.thp_on = true;
    for (unsigned i = 0; i < H.narenas; ++i) {
        Arena* a = H.arenas[i];
        if (a->rung != Rung::thp || a->direct) continue;
        os::advise_huge(reinterpret_cast<void*>(a->base), a->size, true);
        for (unsigned k = 0; k < a->nhuge; ++k)
            if (a->hp[k].state == HugePage::filler || a->hp[k].state == HugePage::large)
                os::collapse_huge(reinterpret_cast<void*>(a->hp[k].base()), kHuge);
    }
}

// An empty or clean huge page taken into use (most recently emptied first: still resident).
HugePage* take_huge_page() noexcept {
    HugePage* h = H.empty.tail;
    if (!h) h = H.clean.head;
    if (!h && create_arena(1)) h = H.clean.head;
    if (!h) return nullptr;
    bool was_clean = h->state == HugePage::clean;
    unlist(h);
    if (was_clean) prepare(h);
    count_in_use(h, +1);
    thp_when_big();
    return h;
}

void give_back_huge_page(HugePage* h) noexcept {
    heap_note_purge_due();
    count_in_use(h, -1);
    h->state = HugePage::empty;
    summarize(h);
    h->empty_since_ns = os::monotonic_ns();
    h->list = on_empty;
    push_back(H.empty, h);
}

void purge(HugePage* h) noexcept {
    Rung r = h->arena->rung;
    // hugetlb pages stay mapped (a private hugetlb page given back might not come back);
    // locked pages cannot be discarded.
    if ((r == Rung::thp || r == Rung::page_4k) && !g_opt.lock) {
        os::discard(reinterpret_cast<void*>(h->base()), kHuge);
        std::memset(h->dirty, 0, sizeof h->dirty);
        H.purged_bytes += kHuge;
        H.purges += 1;
    }
    h->state = HugePage::clean;
    summarize(h);
    h->list = on_clean;
    push_front(H.clean, h);  // reused before never-touched pages: the heap stays compact
}

void maybe_purge(bool force) noexcept {
    if (!H.empty.head) return;
    std::uint64_t now = os::monotonic_ns(), delay = g_opt.purge_delay_ms * 1000000ull;
    while (HugePage* h = H.empty.head) {
        if (!force && now - h->empty_since_ns < delay) break;
        remove(H.empty, h);
        purge(h);
    }
}

// --- the filler ---

void bucket_insert(HugePage* h) noexcept {
    push_back(H.bucket[h->lfr], h);
    H.nonempty[h->lfr / 64] |= std::uint64_t{1} << (h->lfr % 64);
    h->list = on_bucket;
}

void bucket_remove(HugePage* h) noexcept {
    remove(H.bucket[h->lfr], h);
    if (!H.bucket[h->lfr].head) H.nonempty[h->lfr / 64] &= ~(std::uint64_t{1} << (h->lfr % 64));
    h->list = none;
}

// The fullest filler page with a free run of n pages, or nullptr.
HugePage* fullest_fitting(unsigned n) noexcept {
    for (unsigned w = n / 64; w < sizeof H.nonempty / 8; ++w) {
        std::uint64_t bits = H.nonempty[w];
        if (w == n / 64) bits &= ~std::uint64_t{0} << (n % 64);
        if (bits) return H.bucket[w * 64 + static_cast<unsigned>(__builtin_ctzll(bits))].head;
    }
    return nullptr;
}

void filler_mark(HugePage* h, unsigned first, unsigned n, bool used) noexcept {
    set_bits(h->used, first, n, used);
    h->nused = static_cast<std::uint16_t>(used ? h->nused + n : h->nused - n);
    h->lfr = static_cast<std::uint16_t>(longest_free(h->used));
}

// n (1..512) contiguous pages from the filler.
HugePage* filler_alloc(unsigned n, unsigned& first) noexcept {
    HugePage* h = fullest_fitting(n);
    if (h) {
        bucket_remove(h);
    } else {
        h = take_huge_page();
        if (!h) return nullptr;
        h->state = HugePage::filler;
        summarize(h);
        std::memset(h->used, 0, sizeof h->used);
        h->nused = 0;
    }
    first = static_cast<unsigned>(find_run(h->used, n));
    filler_mark(h, first, n, true);
    set_bits(h->dirty, first, n, true);
    bucket_insert(h);
    return h;
}

void filler_free(HugePage* h, unsigned first, unsigned n) noexcept {
    bucket_remove(h);
    filler_mark(h, first, n, false);
    if (h->nused == 0) give_back_huge_page(h);
    else bucket_insert(h);
}

std::atomic<Span*>& page_slot(HugePage* h, unsigned page) noexcept {
    return h->arena->page_span[std::size_t{h->index} * kPagesPerHuge + page];
}

// The page-map entry of a large object: the page holding its first byte (with an
// alignment offset that need not be the span's first page).
std::atomic<Span*>& object_slot(const Span* s) noexcept {
    Arena* a = s->hp->arena;
    return a->page_span[(s->start + s->offset - a->base) >> 12];
}

// --- the large-object region: page runs that may cross 2 MiB boundaries ---
//
// Large objects (> 60 KiB) take page runs from huge pages in the `large` state, first
// fit in address order, extending into adjacent empty or clean huge pages. Crossing
// boundaries lets a 1 MiB + 4 KiB object sit next to another (two per 2 MiB page
// instead of one); a huge page whose last large object goes returns to the empty list.

// First page index (within the arena) of np free pages, or -1. O(huge pages), reading only
// their PageRuns; the bitmap of one page is read when the run lies inside it.
long find_large_pages(const Arena* a, std::size_t np) noexcept {
    std::size_t run = 0, start = 0;  // free pages ending where page i begins
    for (unsigned i = 0; i < a->nhuge; ++i) {
        const PageRuns r = a->runs[i];
        std::size_t base = std::size_t{i} * kPagesPerHuge;
        if (r.head == kPagesPerHuge) {  // free whole
            if (run == 0) start = base;
            run += kPagesPerHuge;
            if (run >= np) return static_cast<long>(start);
            continue;
        }
        if (run + r.head >= np) return static_cast<long>(run ? start : base);
        if (r.longest >= np) return static_cast<long>(base) + find_run(a->hp[i].used, static_cast<unsigned>(np));
        run = r.tail;
        start = base + kPagesPerHuge - r.tail;
    }
    return -1;
}

// Marks pages [p0, p0 + np) of a's large region used or free. Marking used returns whether
// they were all fresh (not handed out since discarded) and makes them dirty.
bool mark_large_pages(Arena* a, std::size_t p0, std::size_t np, bool used) noexcept {
    bool fresh = true;
    for (std::size_t p = p0; p < p0 + np;) {
        HugePage* h = &a->hp[p / kPagesPerHuge];
        unsigned first = static_cast<unsigned>(p % kPagesPerHuge);
        unsigned n = static_cast<unsigned>(std::min<std::size_t>(kPagesPerHuge - first, p0 + np - p));
        if (used && available(*h)) {
            bool was_clean = h->state == HugePage::clean;
            unlist(h);
            if (was_clean) prepare(h);
            count_in_use(h, +1);
            h->state = HugePage::large;
            std::memset(h->used, 0, sizeof h->used);
            h->nused = 0;
        }
        set_bits(h->used, first, n, used);
        if (used) {
            fresh = fresh && !any_bit(h->dirty, first, n);
            set_bits(h->dirty, first, n, true);
        }
        h->nused = static_cast<std::uint16_t>(used ? h->nused + n : h->nused - n);
        if (!used && h->nused == 0) give_back_huge_page(h);
        else summarize(h);
        p += n;
    }
    return fresh;
}

// --- large objects (placement only; classes, stagger and the span cache: large.cpp) ---

// A direct mapping of size bytes with the object at off; nullptr on ENOMEM.
Span* direct_map(std::size_t size, std::size_t off, std::size_t align) noexcept {
    // At least one page even for size 0: a mapping of 0 bytes would hand out an address
    // nobody mapped (or another mapping's start).
    std::size_t bytes = ((size ? size : 1) + off + kPage - 1) & ~(kPage - 1);
    // Accounted (not MAP_NORESERVE): the kernel's overcommit policy refuses what it would
    // never back (malloc(64 GiB) on a smaller machine is NULL, as under glibc).
    void* p = os::map_committed(bytes, align > kArena ? align : kArena);
    if (!p) return nullptr;
    os::advise_huge(p, bytes, g_opt.backing != Rung::page_4k);
    if (g_opt.prefault) os::populate_write(p, bytes, kPage);
    if (g_opt.lock) os::lock(p, bytes);
    Span* s = new_span();
    Arena* a = new_arena_desc();
    if (!s || !a) { os::unmap(p, bytes); return nullptr; }
    s->kind = Span::direct, s->start = reinterpret_cast<std::uintptr_t>(p), s->zeroed = true;
    s->offset = static_cast<std::uint32_t>(off), s->requested = size, s->mapped = bytes;
    a->base = s->start, a->size = bytes, a->direct = true, a->direct_span = s;
    a->rung = g_opt.backing == Rung::page_4k ? Rung::page_4k : Rung::thp;
    register_arena(a, true);
    H.bytes_mapped += bytes, H.direct_bytes += bytes, H.direct_count += 1;
    return s;
}

void direct_free(Span* s) noexcept {
    Arena* a = g_arena_map[s->start >> 30].load(std::memory_order_relaxed);
    register_arena(a, false);
    os::unmap(reinterpret_cast<void*>(s->start), s->mapped);
    H.bytes_mapped -= s->mapped, H.direct_bytes -= s->mapped, H.direct_count -= 1;
    a->next_free = H.free_arenas;
    H.free_arenas = a;
    free_span(s);
}

// pre: s is a live direct span. Resizes its mapping to hold `size` bytes after its offset:
// the tail is unmapped when it shrinks; when it grows, the mapping grows in place if the
// pages after it are free, else it moves (mremap onto a fresh 1 GiB aligned reservation:
// page tables move, no byte is copied, the offset and so the low 12 bits stay). False on
// ENOMEM, s unchanged.
bool direct_resize(Span* s, std::size_t size) noexcept {
    std::size_t bytes = (size + s->offset + kPage - 1) & ~(kPage - 1);
    Arena* a = g_arena_map[s->start >> 30].load(std::memory_order_relaxed);
    auto* old = reinterpret_cast<void*>(s->start);
    if (bytes < s->mapped) {
        register_arena(a, false);
        os::unmap(reinterpret_cast<void*>(s->start + bytes), s->mapped - bytes);
    } else if (bytes > s->mapped) {
        if (os::remap(old, s->mapped, bytes, nullptr) == 0) {
            register_arena(a, false);
        } else {
            void* target = os::map_reserve(bytes, kArena);
            if (!target) return false;
            if (os::remap(old, s->mapped, bytes, target) != 0) { os::unmap(target, bytes); return false; }
            register_arena(a, false);
            s->start = reinterpret_cast<std::uintptr_t>(target);
        }
        std::size_t grown = bytes - s->mapped;
        void* tail = reinterpret_cast<void*>(s->start + s->mapped);
        if (g_opt.prefault) os::populate_write(tail, grown, kPage);
    }
    H.bytes_mapped = H.bytes_mapped - s->mapped + bytes;
    H.direct_bytes = H.direct_bytes - s->mapped + bytes;
    s->mapped = bytes, s->requested = size;
    a->base = s->start, a->size = bytes;
    register_arena(a, true);
    return true;
}

// Places npages pages in some arena's large region (a new arena when none has room).
bool place_large(Span* s, std::size_t npages) noexcept {
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (unsigned i = 0; i < H.narenas; ++i) {
            Arena* a = H.arenas[i];
            long p0 = find_large_pages(a, npages);
            if (p0 < 0) continue;
            s->zeroed = mark_large_pages(a, static_cast<std::size_t>(p0), npages, true);
            s->hp = &a->hp[static_cast<std::size_t>(p0) / kPagesPerHuge];
            s->page0 = static_cast<std::uint32_t>(p0);
            s->start = a->base + static_cast<std::size_t>(p0) * kPage;
            thp_when_big();  // a heap of large objects alone turns huge too
            return true;
        }
        if (attempt == 0 && !create_arena(static_cast<unsigned>((npages + kPagesPerHuge - 1) / kPagesPerHuge)))
            return false;
    }
    return false;
}

void unplace_large(Span* s) noexcept { (void)mark_large_pages(s->hp->arena, s->page0, s->npages, false); }

// The pages of a large span were discarded (read as zero again).
void clean_large_pages(const Span* s) noexcept {
    Arena* a = s->hp->arena;
    for (std::size_t p = s->page0; p < s->page0 + s->npages;) {
        HugePage* h = &a->hp[p / kPagesPerHuge];
        unsigned first = static_cast<unsigned>(p % kPagesPerHuge);
        unsigned n = static_cast<unsigned>(std::min<std::size_t>(kPagesPerHuge - first, s->page0 + s->npages - p));
        set_bits(h->dirty, first, n, false);
        p += n;
    }
}

// --- the purger ---
//
// By default no thread: what is due is purged by the allocator's own calls (every span
// operation, and free's slow paths at most once per purge_delay_ms / 2), as jemalloc and
// mimalloc do without a background thread. A program stays the single-threaded program
// it was (unshare(CLONE_NEWUSER), fork, seccomp filters see no extra thread); an idle
// program keeps what it freed until its next call or malloc_trim.
//
// PHYSMEM_MALLOC_BACKGROUND_PURGE=1 asks for a thread, which also purges while the
// program makes no calls. Why a thread and not a timer signal: a signal would interrupt the
// program's system calls (EINTR) and run our code inside arbitrary program code; a thread
// only competes for the heap lock. It is started lazily, the first time something waits
// for the purge delay (an empty huge page, a cached large span), from a point where no
// allocator lock is held (heap_poke_purger); it wakes every purge_delay_ms / 2 (1 ms ..
// 1 s), purges what is due, and exits as soon as nothing waits. It runs with all signals
// blocked, on a stack of the default size (which glibc makes room for the program's static
// TLS in), is never waited for by exit(), and holds no lock while sleeping. Fork: the
// child has no purger (heap_reset_all clears the flag) and starts its own the same lazy way.
//
// Fork and the purger's start and exit (issue 11 item 10). While a thread is being
// created or is ending, the C library and whatever wraps it run on its behalf, under their
// own locks; a fork at that moment hands those locks, held, to a child in which no thread
// will release them. glibc resets its own in the child; GCC 12's libasan registers no fork
// handler at all, so a fork while a purger started (AsanThread::Init: calloc/free in
// pthread_getattr_np, under a size-class lock of ASan's allocator) or ended (its allocator
// cache drained) hung the child at its first new thread, in
// SizeClassAllocator64::GetFromAllocator (Threads.ForkInAMultithreadedProgram). The
// program's own threads are the program's business; this one is ours, so its start and
// exit never overlap a fork: g_purger_lock, taken first by fork_prepare, is held by
// start_purger until the new thread runs purger_main, and by a purger leaving purger_main
// while it records itself in g_exited. fork_prepare (and the next start or exit) joins
// that thread; pthread_join returns once its exit is complete, so the purger is joinable,
// not detached. A purger never starts one (t_is_purger): a thread joined under the lock
// never needs the lock.

std::atomic<bool> g_purge_due{false};       // something was queued since the purger looked
std::atomic<bool> g_purger_running{false};  // a purger thread exists (or is being created)
SpinLock g_purger_lock;                     // a purger starts or exits; held across fork
std::atomic<bool> g_purger_entered{false};  // the purger being started runs purger_main
pthread_t g_exited;                         // under g_purger_lock: a purger that returned
bool g_exited_valid = false;                //   from purger_main and is not joined yet
thread_local bool t_is_purger = false;

// pre: g_purger_lock held. Waits until the purger that last returned has fully exited.
void join_exited_purger() noexcept {
    if (!g_exited_valid) return;
    pthread_join(g_exited, nullptr);
    g_exited_valid = false;
}

void sleep_ms(std::uint64_t ms) noexcept {
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// One round: purges what is due; true while something still waits.
bool purge_round() noexcept {
    g_purge_due.store(false);
    bool more = large_cache_expire(false) > 0;
    LockGuard g(H.lock);
    maybe_purge(false);
    return more || H.empty.head != nullptr;
}

// How often what is due is looked for: half the delay, 1 ms .. 1 s.
std::uint64_t purge_period_ms() noexcept {
    std::uint64_t period = g_opt.purge_delay_ms / 2;
    return period < 1 ? 1 : (period > 1000 ? 1000 : period);
}

void* purger_main(void*) {
    t_is_purger = true;
    g_purger_entered.store(true);  // start_purger may let a fork happen now
    for (;;) {
        sleep_ms(purge_period_ms());
        if (purge_round()) continue;
        g_purger_running.store(false);
        // Queued between the round and the store above? Then carry on (Dekker-style with
        // heap_poke_purger: flag stores and loads are sequentially consistent).
        bool idle = false;
        if (g_purge_due.load() && g_purger_running.compare_exchange_strong(idle, true)) continue;
        // Leaving: from here until the thread is gone a fork must wait (see above).
        LockGuard g(g_purger_lock);
        join_exited_purger();  // an earlier purger nobody joined yet
        g_exited = pthread_self();
        g_exited_valid = true;
        return nullptr;
    }
}

void start_purger() noexcept {
    LockGuard g(g_purger_lock);  // no fork until the new thread runs our code
    join_exited_purger();
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) { g_purger_running.store(false); return; }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);  // the new thread inherits the mask
    g_purger_entered.store(false);
    pthread_t t;
    int rc = pthread_create(&t, &attr, purger_main, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    if (rc != 0) { g_purger_running.store(false); return; }  // retried at the next poke
    while (!g_purger_entered.load()) os::yield();
}

}  // namespace

std::uintptr_t HugePage::base() const noexcept { return arena->base + std::uintptr_t{index} * kHuge; }

void SpinLock::lock() noexcept {
    for (;;) {
        if (!held_.exchange(true, std::memory_order_acquire)) return;
        for (unsigned spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
            if (spins < 100) __builtin_ia32_pause();
            else os::yield();
        }
    }
}

void heap_init() noexcept {
    H.last_rung = Rung::best;
    H.thp_on = g_opt.thp_after_mb == 0;
}

void heap_note_purge_due() noexcept { g_purge_due.store(true); }

void heap_poke_purger() noexcept {
    if (!g_purge_due.load(std::memory_order_relaxed) || t_is_purger) return;
    if (g_init_state.load(std::memory_order_acquire) != 2) return;
    if (!g_opt.background_purge) {  // decay driven by the program's own calls
        static std::atomic<std::uint64_t> next_ns{0};
        std::uint64_t now = os::monotonic_ns(), due = next_ns.load(std::memory_order_relaxed);
        if (now < due || !next_ns.compare_exchange_strong(due, now + purge_period_ms() * 1000000ull))
            return;
        if (purge_round()) g_purge_due.store(true);
        return;
    }
    if (g_purger_running.load()) return;
    bool idle = false;
    if (g_purger_running.compare_exchange_strong(idle, true)) start_purger();
}

Span* heap_small_span(std::uint32_t npages, unsigned cls, void (*init)(Span*, unsigned)) noexcept {
    LockGuard g(H.lock);
    maybe_purge(false);
    unsigned first = 0;
    HugePage* h = filler_alloc(npages, first);
    if (!h) return nullptr;
    Span* s = new_span();
    if (!s) { filler_free(h, first, npages); return nullptr; }
    s->kind = Span::small, s->hp = h, s->first = static_cast<std::uint16_t>(first);
    s->start = h->base() + first * kPage, s->npages = npages;
    init(s, cls);
    std::atomic<std::uint32_t>* info = page_info(h->arena->page_span) + std::size_t{h->index} * kPagesPerHuge;
    for (unsigned i = 0; i < npages; ++i) {
        page_slot(h, first + i).store(s, std::memory_order_release);
        info[first + i].store(i << 8 | cls, std::memory_order_release);
    }
    H.bytes_in_use += npages * kPage;
    return s;
}

void heap_release_small_span(Span* s) noexcept {
    LockGuard g(H.lock);
    std::atomic<std::uint32_t>* info = page_info(s->hp->arena->page_span) + std::size_t{s->hp->index} * kPagesPerHuge;
    for (unsigned i = 0; i < s->npages; ++i) {
        page_slot(s->hp, s->first + i).store(nullptr, std::memory_order_release);
        info[s->first + i].store(0, std::memory_order_release);
    }
    filler_free(s->hp, s->first, s->npages);
    H.bytes_in_use -= s->npages * kPage;
    free_span(s);
    maybe_purge(false);
}

Span* heap_place_large(std::size_t npages, std::size_t align) noexcept {
    LockGuard g(H.lock);
    maybe_purge(false);
    Span* s = new_span();
    if (!s) return nullptr;
    if (!place_large(s, npages)) { free_span(s); return nullptr; }
    s->kind = Span::large, s->npages = static_cast<std::uint32_t>(npages);
    if (align > kPage) s->offset = static_cast<std::uint32_t>(((s->start + align - 1) & ~(align - 1)) - s->start);
    H.bytes_in_use += npages * kPage;
    return s;
}

void heap_release_large(Span* s) noexcept {
    LockGuard g(H.lock);
    if (s->kind == Span::direct) { direct_free(s); return; }
    // A small heap (still on 4 KiB pages, see thp_when_big) gives a large span's pages back
    // at once: its peak RSS then follows the live data (a buffer grown by realloc leaves no
    // resident trail). A big heap on huge pages purges whole 2 MiB pages instead.
    Rung r = s->hp->arena->rung;
    if (!H.thp_on && !g_opt.lock && (r == Rung::thp || r == Rung::page_4k)) {
        os::discard(reinterpret_cast<void*>(s->start), std::size_t{s->npages} * kPage);
        clean_large_pages(s);
    }
    unplace_large(s);
    H.bytes_in_use -= std::size_t{s->npages} * kPage;
    free_span(s);
    maybe_purge(false);
}

Span* heap_map_direct(std::size_t size, std::size_t off, std::size_t align) noexcept {
    LockGuard g(H.lock);
    return direct_map(size, off, align);
}

void* heap_meta_alloc(std::size_t bytes) noexcept {
    LockGuard g(H.lock);
    return meta_alloc(bytes);
}

bool heap_resize_direct(Span* s, std::size_t size) noexcept {
    LockGuard g(H.lock);
    return direct_resize(s, size);
}

void heap_publish_large(Span* s, bool on) noexcept {
    if (s->kind == Span::large) object_slot(s).store(on ? s : nullptr, std::memory_order_release);
}

void heap_collect(bool force) noexcept {
    LockGuard g(H.lock);
    maybe_purge(force);
}

void heap_stats(pm_stats_t* out) noexcept {
    LockGuard g(H.lock);
    maybe_purge(false);
    std::memset(out, 0, sizeof *out);
    out->version = PM_STATS_VERSION;
    out->backing = static_cast<std::uint32_t>(H.last_rung);
    out->bytes_mapped = H.bytes_mapped;
    out->bytes_requested_large = large_requested_bytes();
    out->bytes_in_use = H.bytes_in_use + H.direct_bytes;
    // THP arenas are on 4 KiB pages until thp_when_big turns them huge.
    std::size_t thp = H.thp_on ? H.in_use_by_rung[3] : 0;
    std::size_t small = H.in_use_by_rung[4] + (H.thp_on ? 0 : H.in_use_by_rung[3]);
    std::size_t huge_in_use = H.in_use_by_rung[1] + H.in_use_by_rung[2] + thp;
    std::size_t direct_huge = g_opt.backing == Rung::page_4k ? 0 : H.direct_bytes & ~(kHuge - 1);
    out->bytes_huge = huge_in_use * kHuge + direct_huge;
    out->bytes_resident_est = (huge_in_use + small + H.empty.count) * kHuge + H.direct_bytes;
    out->hugetlb_1g_pages = H.n1g;
    out->hugetlb_2m_pages = H.n2m;
    out->thp_pages_in_use = thp;
    out->small_pages_in_use = small;
    out->huge_pages_empty = H.empty.count;
    out->bytes_purged = H.purged_bytes;
    out->purges = H.purges;
    out->arenas = H.narenas;
    out->direct_mappings = H.direct_count;
    out->bytes_reserved_hugetlb = H.reserved > 0 ? static_cast<std::size_t>(H.reserved) * H.reserved_page : 0;
}

void heap_purger_lock_for_fork() noexcept {
    g_purger_lock.lock();
    join_exited_purger();
}
void heap_purger_unlock_after_fork() noexcept { g_purger_lock.unlock(); }
void heap_lock_all() noexcept { H.lock.lock(); }
void heap_unlock_all() noexcept { H.lock.unlock(); }
void heap_reset_all() noexcept {
    H.lock.reset();
    g_purger_lock.reset();
    g_exited_valid = false;
    g_purger_running.store(false);  // the parent's purger does not exist here
    g_purge_due.store(true);
    H.reserved = 0;  // the parent restores nr_hugepages, not the child
}

void heap_reserve_at_start() noexcept {
    if (g_opt.reserve == 0) return;
    std::size_t ps = g_opt.backing == Rung::page_2m ? kHuge : kArena;
    if (!os::is_root()) {
        say("physmem: PHYSMEM_MALLOC_RESERVE=%llu needs root; no pages reserved\n",
            static_cast<unsigned long long>(g_opt.reserve));
        return;
    }
    long before = os::hugepages_read(ps, "nr_hugepages");
    if (before < 0) { say("physmem: %zu KiB hugetlb pages are not supported here\n", ps >> 10); return; }
    int rc = os::hugepages_set_total(ps, before + static_cast<long>(g_opt.reserve));
    long after = os::hugepages_read(ps, "nr_hugepages");
    H.reserved = after > before ? after - before : 0;
    H.reserved_page = ps;
    say("physmem: reserved %ld of %llu %s hugetlb pages (nr_hugepages %ld -> %ld, errno %d); "
        "restored at exit\n", H.reserved, static_cast<unsigned long long>(g_opt.reserve),
        ps == kArena ? "1 GiB" : "2 MiB", before, after, rc);
}

void heap_restore_at_exit() noexcept {
    if (H.reserved <= 0) return;
    long now = os::hugepages_read(H.reserved_page, "nr_hugepages");
    long target = now - H.reserved;
    os::hugepages_set_total(H.reserved_page, target < 0 ? 0 : target);
    say("physmem: nr_hugepages (%s) restored to %ld (was %ld; pages still mapped are freed as "
        "the process exits)\n", H.reserved_page == kArena ? "1 GiB" : "2 MiB", target < 0 ? 0 : target, now);
    H.reserved = 0;
}

}  // namespace physmem::malloc
