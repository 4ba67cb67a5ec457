// src/malloc/placement.cpp — where large spans go: page runs in arenas' large regions,
// and direct mappings for the biggest (kDirectMin and up). Placement only; the classes,
// stagger offsets and the cache of freed spans are large.cpp's, above this file.
//
// Large objects (> 60 KiB) take page runs from huge pages in the `large` state, first
// fit in address order, extending into adjacent empty or clean huge pages. Crossing
// boundaries lets a 1 MiB + 4 KiB object sit next to another (two per 2 MiB page
// instead of one); a huge page whose last large object goes returns to the empty list
// (hugepage.cpp). The search reads each arena's PageRuns summaries (arena.cpp keeps them).
// Objects of sparsely touched classes (large.cpp decides) go to sparse arenas instead:
// 4 KiB pages, given back as each object is freed, so a block touched at its ends holds
// two pages, not the 2 MiB pages it shares with its neighbours.
#include "malloc/heap.hpp"

namespace physmem::malloc {

namespace {

// The page-map entry of a large object: the page holding its first byte (with an
// alignment offset that need not be the span's first page); in a sparse arena, the
// granule holding it (internal.hpp, kSparseGranule).
std::atomic<Span*>& object_slot(const Span* s) noexcept {
    Arena* a = s->hp->arena;
    const std::uintptr_t at = s->start + s->offset - a->base;
    return a->page_span[a->sparse ? at / kSparseGranule : at / kPage];
}

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
    std::size_t taken_clean = 0;
    for (std::size_t p = p0; p < p0 + np;) {
        HugePage* h = &a->hp[p / kPagesPerHuge];
        unsigned first = static_cast<unsigned>(p % kPagesPerHuge);
        unsigned n = static_cast<unsigned>(std::min<std::size_t>(kPagesPerHuge - first, p0 + np - p));
        if (used && available(*h)) {
            bool was_clean = h->state == HugePage::clean;
            unlist(h);
            if (was_clean) prepare(h), ++taken_clean;
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
    if (taken_clean && !a->sparse) purge_empty_for(taken_clean);
    return fresh;
}

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
    if (g_opt.lock) heap_lock(reinterpret_cast<std::uintptr_t>(p), bytes);
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
    free_arena_desc(a);
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

// The 2 MiB pages that pages [p0, p0 + npages) of a reach and that hold nothing resident
// yet, advised to stay on 4 KiB pages.
void keep_untouched_small(Arena* a, std::size_t p0, std::size_t npages) noexcept {
    const std::size_t first = p0 / kPagesPerHuge;
    const std::size_t end = (p0 + npages + kPagesPerHuge - 1) / kPagesPerHuge;
    for (std::size_t k = first; k < end; ++k) {
        HugePage& h = a->hp[k];
        if (!h.no_thp && os::resident_pages(reinterpret_cast<void*>(h.base()), kHuge) == 0) (void)advise_small(&h, true);
    }
}

// Sparse placement only where the heap is on transparent huge pages (a small heap is on
// 4 KiB pages anyway; hugetlb pages are reserved already) and no option asks for every page
// populated or locked.
bool sparse_allowed() noexcept {
    return H.thp_on && !g_opt.prefault && !g_opt.lock && H.last_rung == Rung::thp;
}

constexpr std::size_t kBigEnds = std::size_t{32} << 20;  // see place_in

// Places npages pages in an arena of that kind (sparse or not) with room; false when none has.
bool place_in(Span* s, std::size_t npages, bool sparse) noexcept {
    for (unsigned i = 0; i < H.narenas; ++i) {
        Arena* a = H.arenas[i];
        if (a->sparse != sparse) continue;
        long p0 = find_large_pages(a, npages);
        while (p0 < 0 && init_huge_pages(a, npages / kPagesPerHuge + 1)) p0 = find_large_pages(a, npages);
        if (p0 < 0) continue;
        s->zeroed = mark_large_pages(a, static_cast<std::size_t>(p0), npages, true);
        s->hp = &a->hp[static_cast<std::size_t>(p0) / kPagesPerHuge];
        s->page0 = static_cast<std::uint32_t>(p0);
        s->start = a->base + static_cast<std::size_t>(p0) * kPage;
        // A heap of large objects alone turns huge too. The object that turned it, untouched
        // yet, would fault in huge; one of a class judged for density (under 2 MiB) stays on
        // 4 KiB pages until purged (it had no probe while the heap was small; with
        // PHYSMEM_MALLOC_SPARSE=0 nothing is judged).
        if (thp_when_big() && g_opt.sparse && !sparse && npages * kPage < kHuge)
            keep_untouched_small(a, static_cast<std::size_t>(p0), npages);
        // A buffer of 32 MiB and more: the 2 MiB pages of its first and last bytes, untouched
        // yet, stay on 4 KiB pages. Written at its ends only (a header, a sentinel, the next
        // realloc's last byte), it holds KiB there, not 4 MiB (then judged at its first
        // realloc, large.cpp); written densely, all its other pages are huge (14 of 16 at
        // least). Not judged where sparse placement is not (a small heap, prefault, lock).
        else if (!sparse && g_opt.sparse && sparse_allowed() && npages * kPage >= kBigEnds) {
            keep_untouched_small(a, static_cast<std::size_t>(p0), 1);
            keep_untouched_small(a, static_cast<std::size_t>(p0) + npages - 1, 1);
        }
        return true;
    }
    return false;
}


// Places npages pages in an arena of that kind, a new one if none has room (a sparse arena
// that could not be mapped is not tried again until the heap has unmapped something,
// H.sparse_refused_at: under a limit, not one failing mmap per allocation).
bool place_in_kind(Span* s, std::size_t npages, bool sparse) noexcept {
    if (place_in(s, npages, sparse)) return true;
    if (sparse && H.sparse_refused && H.bytes_mapped >= H.sparse_refused_at) return false;
    auto min_huge = static_cast<unsigned>((npages + kPagesPerHuge - 1) / kPagesPerHuge);
    bool ok = create_arena(min_huge, sparse) && place_in(s, npages, sparse);
    if (sparse) H.sparse_refused = !ok, H.sparse_refused_at = H.bytes_mapped;
    return ok;
}

// Places npages pages in some arena's large region, among the sparse arenas or the others;
// when no arena of that kind has room or can be mapped (an address-space limit), among
// those of the other kind (a new sparse arena only where sparse placement is allowed): the
// limit is for the program's data. may_sparse: the span may go to a sparse arena at all
// (at least kSparseMinPages pages, its object in its first page: internal.hpp).
bool place_large(Span* s, std::size_t npages, bool sparse, bool may_sparse) noexcept {
    sparse = sparse && may_sparse;
    if (place_in_kind(s, npages, sparse)) return true;
    if (sparse) return place_in_kind(s, npages, false);
    if (!may_sparse) return false;
    return sparse_allowed() ? place_in_kind(s, npages, true) : place_in(s, npages, true);
}

// Whether pages [p0, p0 + np) of a's large region are free (in empty or clean huge pages,
// or unused pages of large ones) and inside the arena.
bool large_pages_free(const Arena* a, std::size_t p0, std::size_t np) noexcept {
    if (p0 + np > std::size_t{a->ninit} * kPagesPerHuge) return false;
    for (std::size_t p = p0; p < p0 + np;) {
        const HugePage* h = &a->hp[p / kPagesPerHuge];
        unsigned first = static_cast<unsigned>(p % kPagesPerHuge);
        unsigned n = static_cast<unsigned>(std::min<std::size_t>(kPagesPerHuge - first, p0 + np - p));
        if (!available(*h) && (h->state != HugePage::large || any_bit(h->used, first, n))) return false;
        p += n;
    }
    return true;
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


}  // namespace

Span* heap_place_large(std::size_t npages, std::size_t align, bool sparse) noexcept {
    LockGuard g(H.lock);
    maybe_purge(false);
    Span* s = new_span();
    if (!s) return nullptr;
    const bool may_sparse = npages >= kSparseMinPages && align <= kPage;
    if (!place_large(s, npages, sparse && sparse_allowed(), may_sparse)) { free_span(s); return nullptr; }
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
    // Not with PHYSMEM_MALLOC_PREFAULT: the next object there would take the page faults
    // that option promises away (the page is discarded whole, and populated again when it
    // is next taken into use).
    // So does a sparse arena, always: what its objects touched goes back with them.
    const Arena* a = s->hp->arena;
    bool at_once = a->sparse || (!H.thp_on && (a->rung == Rung::thp || a->rung == Rung::page_4k));
    if (at_once && !g_opt.lock && !g_opt.prefault && heap_discard(s->start, std::size_t{s->npages} * kPage))
        clean_large_pages(s);
    unplace_large(s);
    H.bytes_in_use -= std::size_t{s->npages} * kPage;
    free_span(s);
    maybe_purge(false);
}

bool heap_grow_large(Span* s, std::size_t npages) noexcept {
    LockGuard g(H.lock);
    Arena* a = s->hp->arena;
    std::size_t end = std::size_t{s->page0} + s->npages, more = npages - s->npages;
    const std::size_t reach = (end + more + kPagesPerHuge - 1) / kPagesPerHuge;
    if (reach > a->ninit && reach <= a->nhuge) (void)init_huge_pages(a, reach - a->ninit);
    if (npages <= s->npages || npages > UINT32_MAX || !large_pages_free(a, end, more)) return false;
    (void)mark_large_pages(a, end, more, true);
    s->npages = static_cast<std::uint32_t>(npages);
    H.bytes_in_use += more * kPage;
    thp_when_big();
    return true;  // (keep_small spans: their caller advises the grown part, heap_keep_small)
}

Span* heap_map_direct(std::size_t size, std::size_t off, std::size_t align) noexcept {
    LockGuard g(H.lock);
    return direct_map(size, off, align);
}

bool heap_resize_direct(Span* s, std::size_t size) noexcept {
    LockGuard g(H.lock);
    return direct_resize(s, size);
}

namespace {

// The 4 KiB pages of h (a large objects' page) in use by spans other than s.
void used_by_others(const HugePage& h, const Span* s, std::uint64_t* out) noexcept {
    std::memcpy(out, h.used, sizeof h.used);
    const std::size_t at = std::size_t{h.index} * kPagesPerHuge;
    const std::size_t lo = std::max<std::size_t>(s->page0, at) - at;
    const std::size_t hi = std::min<std::size_t>(std::size_t{s->page0} + s->npages, at + kPagesPerHuge) - at;
    set_bits(out, static_cast<unsigned>(lo), static_cast<unsigned>(hi - lo), false);
}

}  // namespace

void heap_keep_small(Span* s) noexcept {
    if (s->kind == Span::direct) {  // all its own: the heap lock a 2 MiB page at a time
        if (os::advise_huge(reinterpret_cast<void*>(s->start), s->mapped, false) != 0) return;
        const std::uintptr_t end = s->start + s->mapped;
        for (std::uintptr_t h = (s->start + kHuge - 1) & ~(kHuge - 1); h + kHuge <= end; h += kHuge) {
            LockGuard g(H.lock);
            drop_zero_pages(h, nullptr);
        }
        return;
    }
    LockGuard g(H.lock);
    // Every 2 MiB page it reaches into, the ones it shares at its ends too: its last one is
    // where the next growth writes (a buffer grown by realloc writes its end first).
    Arena* a = s->hp->arena;
    const std::size_t first = std::size_t{s->page0} / kPagesPerHuge;
    const std::size_t end = (std::size_t{s->page0} + s->npages + kPagesPerHuge - 1) / kPagesPerHuge;
    // One faulted in as 2 MiB before the object was judged (its first and last bytes
    // written) keeps, of the object's pages and the free ones, only those written.
    for (std::size_t k = first; k < end; ++k) {
        HugePage& h = a->hp[k];
        if (h.no_thp) continue;
        if (!advise_small(&h, true) || h.state != HugePage::large) continue;
        std::uint64_t others[kPagesPerHuge / 64];
        used_by_others(h, s, others);
        drop_zero_pages(h.base(), others);
    }
}

void heap_publish_large(Span* s, bool on) noexcept {
    if (s->kind == Span::large) object_slot(s).store(on ? s : nullptr, std::memory_order_release);
}

}  // namespace physmem::malloc
