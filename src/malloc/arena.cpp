// src/malloc/arena.cpp — arenas: 1 GiB of address space (1 GiB aligned), each on one
// backing rung, cut into 2 MiB huge pages (HugePage, with their PageRuns summaries). The
// ladder for a new arena (hugetlb 1 GiB, hugetlb 2 MiB, THP, 4 KiB), the arena and page
// maps that find an address's arena and span, the switch of THP arenas to huge pages once
// the heap is big (thp_when_big), and the hugetlb reservation made at start and restored
// at exit (PHYSMEM_MALLOC_RESERVE). A front-end on the memory core: each rung is mapped
// by core::map_on_rung (lean layout) and nr_hugepages is changed by core/hugepages.hpp;
// which rung a new arena takes, and how big it is, is decided here.
//
// Small heaps (thp_when_big): THP arenas stay on 4 KiB pages (MADV_NOHUGEPAGE) until
// PHYSMEM_MALLOC_THP_AFTER_MB of their 2 MiB pages hold data; until then a released large
// span's pages are discarded at once (placement.cpp; no khugepaged concern: nothing is
// advised huge yet). Then every THP arena is advised huge and the pages in use are
// collapsed (MADV_COLLAPSE), except pages under a quarter resident, which stay on 4 KiB
// pages (HugePage::no_thp) until purged, or, small objects', until a quarter of them is in use
// (filler.cpp).
#include "core/backing.hpp"
#include "core/hugepages.hpp"
#include "core/map.hpp"
#include "malloc/heap.hpp"

namespace physmem::malloc {

std::atomic<Arena*> g_arena_map[kArenaSlots];
std::atomic<std::atomic<Span*>*> g_page_map[kArenaSlots];

Span* unmapped_span_of(std::uintptr_t a) noexcept {
    Arena* ar = g_arena_map[a >> 30].load(std::memory_order_acquire);
    // Only inside the mapping: the rest of its 1 GiB slots may hold the program's own mappings.
    if (!ar || a < ar->base || a - ar->base >= ar->size) return nullptr;
    if (ar->direct) return ar->direct_span;
    if (!ar->sparse) return nullptr;
    Span* s = ar->page_span[(a - ar->base) / kSparseGranule].load(std::memory_order_acquire);
    return s && (s->start + s->offset) / kPage == a / kPage ? s : nullptr;  // as a page map would
}

namespace {

// The reservation made at start (PHYSMEM_MALLOC_RESERVE); H.reserved is its page count
// (0 in a forked child, which leaves the restore to its parent).
constinit core::HugeReservation g_reservation;

// Address space of a new THP/4 KiB arena holding at least min_huge 2 MiB pages: 1 GiB,
// or under an address-space limit (ulimit -v) an eighth of the limit (a power of two,
// 32 MiB .. 1 GiB), so that reservations the program never touches do not use the limit
// up. Arenas stay 1 GiB aligned (the page map is per 1 GiB slot); a smaller one leaves the
// rest of its slot to whoever maps there. (A sparse arena is no smaller: room there is room
// small objects cannot use, but many small arenas run out of aligned slots near the limit,
// where the core's search for one maps an extra 1 GiB.)
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

// One rung through the core; sets base/size/rung on success.
bool map_rung(Arena* a, Rung rung, std::size_t bytes) noexcept {
    core::MapResult r = core::map_on_rung({.bytes = bytes, .alignment = kArena, .rung = rung,
                                           .layout = core::Layout::lean});
    if (!r.mapping.base) return false;
    a->base = reinterpret_cast<std::uintptr_t>(r.mapping.base), a->size = r.mapping.bytes;
    a->rung = r.mapping.rung;  // thp: page_4k when the kernel refused the advice
    return true;
}

// A new arena of at least min_huge 2 MiB pages on one rung: a 1 GiB hugetlb page when one
// is free; up to 64 (at least min_huge) free 2 MiB hugetlb pages; else the arena's address
// space (arena_bytes) on thp or 4k. Sets base/size/rung; false when the rung cannot give it.
// Hugetlb pages this arena may take on `rung` (a large number: any free one). `best` takes
// only its own reservation's page size, and no more of those pages than it reserved, so
// pages an administrator reserved for other programs stay theirs; 1g and 2m, asked for
// explicitly, take free pages.
long hugetlb_allowed(Rung rung) noexcept {
    if (g_opt.backing != Rung::best) return 1L << 40;
    if (H.reserved <= 0) return 0;
    if (rung == Rung::page_1g) return H.reserved_page == kArena ? H.reserved - static_cast<long>(H.n1g) : 0;
    return H.reserved_page == kHuge ? H.reserved - static_cast<long>(H.n2m) : 0;
}

bool map_arena_on(Arena* a, Rung rung, unsigned min_huge) noexcept {
    if (rung == Rung::page_1g) {
        if (hugetlb_allowed(rung) < 1 || os::hugepages_read(kArena, "free_hugepages") < 1 ||
            !map_rung(a, rung, kArena))
            return false;
        H.n1g += 1;
        return true;
    }
    if (rung == Rung::page_2m) {
        long free2m = std::min(os::hugepages_read(kHuge, "free_hugepages"), hugetlb_allowed(rung));
        unsigned want = min_huge > 64 ? min_huge : 64;
        unsigned n = free2m > static_cast<long>(want) ? want : static_cast<unsigned>(free2m > 0 ? free2m : 0);
        if (n < min_huge || n == 0 || !map_rung(a, rung, std::size_t{n} * kHuge)) return false;
        H.n2m += n;
        return true;
    }
    if (!map_rung(a, rung, arena_bytes(min_huge))) return false;
    if (a->rung == Rung::thp && !H.thp_on)  // small heap: see thp_when_big
        os::advise_huge(reinterpret_cast<void*>(a->base), a->size, false);
    return true;
}

// Maps the memory of a new arena down the core's ladder (core/backing.hpp): `best` takes
// hugetlb pages only when this process reserved some at start (BestHugetlb::only_reserved),
// and then only as many of that size as it reserved (hugetlb_allowed: never the pages an
// administrator reserved for other programs); 1g and 2m take free hugetlb pages, then THP,
// then 4k; thp, then 4k.
bool map_arena(Arena* a, unsigned min_huge) noexcept {
    Rung rung = core::first_rung(g_opt.backing, core::BestHugetlb::only_reserved, H.reserved > 0);
    for (;; rung = next_rung(rung)) {
        if (map_arena_on(a, rung, min_huge)) return true;
        if (rung == Rung::page_4k) return false;
    }
}

// Bytes of an arena's three metadata arrays (whole pages).
std::size_t hp_bytes(const Arena* a) noexcept { return (a->nhuge * sizeof(HugePage) + kPage - 1) & ~(kPage - 1); }
std::size_t runs_bytes(const Arena* a) noexcept { return (a->nhuge * sizeof(PageRuns) + kPage - 1) & ~(kPage - 1); }
// 3 MiB, touched as used; a sparse arena's map (kSparseGranule) 128 KiB a GiB.
std::size_t page_span_bytes(const Arena* a) noexcept {
    if (!a->sparse) return kMapEntries * (sizeof(Span*) + 4);
    return (a->size / kSparseGranule * sizeof(Span*) + kPage - 1) & ~(kPage - 1);
}

// Maps a's metadata (hp, runs, page_span); false when one could not be mapped.
bool map_meta(Arena* a) noexcept {
    a->hp = static_cast<HugePage*>(os::map_reserve(hp_bytes(a), kPage));
    a->runs = static_cast<PageRuns*>(os::map_reserve(runs_bytes(a), kPage));
    a->page_span = static_cast<std::atomic<Span*>*>(os::map_reserve(page_span_bytes(a), kPage));
    return a->hp && a->runs && a->page_span;
}

// Undoes a new arena that could not be completed: its memory, its metadata, its hugetlb
// count and its descriptor.
void unmap_arena(Arena* a) noexcept {
    if (a->hp) os::unmap(a->hp, hp_bytes(a));
    if (a->runs) os::unmap(a->runs, runs_bytes(a));
    if (a->page_span) os::unmap(a->page_span, page_span_bytes(a));
    if (a->rung == Rung::page_1g) H.n1g -= 1;
    if (a->rung == Rung::page_2m) H.n2m -= a->size / kHuge;
    core::unmap({.base = reinterpret_cast<std::byte*>(a->base), .bytes = a->size, .rung = a->rung,
                 .layout = core::Layout::lean});
    free_arena_desc(a);
}

}  // namespace

void register_arena(Arena* a, bool on) noexcept {
    std::uintptr_t last = (a->base + a->size - 1) >> 30;
    for (std::uintptr_t i = a->base >> 30; i <= last; ++i) {
        g_arena_map[i].store(on ? a : nullptr, std::memory_order_release);
        if (!a->direct && !a->sparse) g_page_map[i].store(on ? a->page_span : nullptr, std::memory_order_release);
    }
}

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

bool init_huge_pages(Arena* a, std::size_t count) noexcept {
    constexpr std::size_t kChunk = 16;  // 32 MiB of the arena, 2.8 KiB of descriptors
    if (a->ninit >= a->nhuge) return false;
    const std::size_t end = std::min<std::size_t>(a->nhuge, a->ninit + std::max(kChunk, count));
    for (std::size_t i = a->ninit; i < end; ++i) {
        HugePage* h = &a->hp[i];
        h->arena = a, h->index = static_cast<std::uint32_t>(i), h->state = HugePage::clean;
        h->list = a->sparse ? none : on_clean;
        if (!a->sparse) H.clean.push_back(h);
        summarize(h);
    }
    a->ninit = static_cast<std::uint32_t>(end);
    return true;
}

Arena* create_arena(unsigned min_huge, bool sparse) noexcept {
    if (H.narenas == sizeof H.arenas / sizeof H.arenas[0]) return nullptr;
    Arena* a = new_arena_desc();
    if (!a) return nullptr;
    if (!(sparse ? map_rung(a, Rung::page_4k, arena_bytes(min_huge)) : map_arena(a, min_huge))) {
        free_arena_desc(a);
        return nullptr;
    }
    a->sparse = sparse;
    a->nhuge = static_cast<std::uint32_t>(a->size / kHuge);
    if (!map_meta(a)) {  // ENOMEM (an address-space limit): nothing kept
        unmap_arena(a);
        return nullptr;
    }
    (void)init_huge_pages(a, min_huge);
    H.arenas[H.narenas++] = a;
    H.bytes_mapped += a->size;
    if (!sparse) H.last_rung = a->rung;  // pm_stats' backing: the heap's rung
    register_arena(a, true);
    if (g_opt.verbose)
        say("physmem: arena %p: %zu MiB on %s pages%s\n", reinterpret_cast<void*>(a->base),
            a->size >> 20, core::rung_name(a->rung), sparse ? " (sparsely touched large objects)" : "");
    return a;
}

// A THP arena stays on 4 KiB pages (MADV_NOHUGEPAGE) while the heap is small, so that a
// small program's peak RSS is what it touches rather than 2 MiB per page it touches. Once
// PHYSMEM_MALLOC_THP_AFTER_MB (16) of 2 MiB pages of THP arenas are in use, every THP arena
// is advised huge and the pages already in use are collapsed (MADV_COLLAPSE), so a big heap
// lives on huge pages.
namespace {

// A huge page in use when the heap turns huge, small objects' (filler) or large ones', by
// what the program touched, the rule large.cpp judges classes by: at least a quarter of the
// page resident, advised huge and collapsed (MADV_COLLAPSE); nothing yet (a buffer just
// placed, the very one that made the heap big perhaps), advised huge, left to fault in huge;
// some, but under a quarter, kept on 4 KiB pages, away from khugepaged too (HugePage::no_thp,
// MADV_NOHUGEPAGE until it is purged whole: hugepage.cpp advises it huge again). Large
// objects placed before the switch were not judged (no sparse arena on a small heap): a page
// of them touched at their ends, made huge, would hold 2 MiB for a few KiB (large-live: 9
// such pages, 18 MiB for about 100 touched pages); a program's few small objects, 2 MiB (the
// filler makes such a page huge again once a quarter of it is in use). mincore refused:
// collapsed. A page not in use (clean, or never touched) is advised huge; one kept small
// already stays as it is.
// pre: the page is still advised MADV_NOHUGEPAGE (the small heap's advice, not cleared first:
// a sparse page advised huge even for a moment is one khugepaged may collapse, 2 MiB for the
// few KiB it holds).
void turn_huge(HugePage& hp) noexcept {
    if (hp.no_thp) return;
    void* base = reinterpret_cast<void*>(hp.base());
    const bool in_use = hp.state == HugePage::filler || hp.state == HugePage::large;
    const std::size_t resident = in_use ? os::resident_pages(base, kHuge) : 0;
    if (resident != 0 && resident != SIZE_MAX && sparsely_touched(resident, kHuge / kPage)) {
        (void)advise_small(&hp, true);
        return;
    }
    (void)os::advise_huge(base, kHuge, true);
    if (resident != 0) os::collapse_huge(base, kHuge);
}

}  // namespace

// Each THP arena's pages past those initialized are advised huge as one range, the others
// one by one (turn_huge), never the arena as a whole first: a sparse page would be advised
// huge between the two calls.
bool thp_when_big() noexcept {
    std::size_t after = g_opt.thp_after_mb * (std::size_t{1} << 20) / kHuge;
    if (H.thp_on || H.in_use_by_rung[static_cast<unsigned>(Rung::thp)] < after) return false;
    H.thp_on = true;
    for (unsigned i = 0; i < H.narenas; ++i) {
        Arena* a = H.arenas[i];
        if (a->rung != Rung::thp || a->direct || a->sparse) continue;
        const std::size_t done = std::size_t{a->ninit} * kHuge;
        if (done < a->size) os::advise_huge(reinterpret_cast<void*>(a->base + done), a->size - done, true);
        for (unsigned k = 0; k < a->ninit; ++k) turn_huge(a->hp[k]);
    }
    return true;
}

void heap_reserve_at_start() noexcept {
    if (g_opt.reserve == 0) return;
    std::size_t ps = g_opt.backing == Rung::page_2m ? kHuge : kArena;
    if (!os::is_root()) {
        say("physmem: PHYSMEM_MALLOC_RESERVE=%llu needs root; no pages reserved\n",
            static_cast<unsigned long long>(g_opt.reserve));
        return;
    }
    core::HugeReservation r = core::add_huge_pages(ps, static_cast<long>(g_opt.reserve));
    if (!r.changed()) { say("physmem: %zu KiB hugetlb pages are not supported here\n", ps >> 10); return; }
    g_reservation = r;
    H.reserved = r.added();
    H.reserved_page = ps;
    say("physmem: reserved %ld of %llu %s hugetlb pages (nr_hugepages %ld -> %ld, errno %d); "
        "restored at exit\n", H.reserved, static_cast<unsigned long long>(g_opt.reserve),
        ps == kArena ? "1 GiB" : "2 MiB", r.before, r.after, r.error);
}

void heap_restore_at_exit() noexcept {
    if (H.reserved <= 0) return;
    core::Restored back = core::restore_huge_pages(g_reservation, core::Restore::remove_added);
    say("physmem: nr_hugepages (%s) restored to %ld (was %ld; pages still mapped are freed as "
        "the process exits)\n", H.reserved_page == kArena ? "1 GiB" : "2 MiB", back.target, back.was);
    H.reserved = 0;
}

}  // namespace physmem::malloc
