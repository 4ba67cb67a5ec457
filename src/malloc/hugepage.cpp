// src/malloc/hugepage.cpp — 2 MiB pages taken into use and given back. A huge page that
// holds nothing is on the clean list (never used, or purged) or on the empty list (emptied,
// still resident, in the order emptied). The filler (filler.cpp) and the large placement
// (placement.cpp) take pages off these lists and give them back here. The pages of sparse
// arenas (4 KiB pages for sparsely touched large objects, arena.cpp) are on no list: only the
// large placement uses them, and they are clean once empty.
//
// Empty pages wait purge_delay_ms on the empty list (LRU), then are purged whole
// (MADV_DONTNEED on the full 2 MiB): no partially populated 2 MiB range is left behind
// for khugepaged to re-collapse. (The one exception is advised MADV_NOHUGEPAGE first: a
// sparse big object's huge pages lose their zero 4 KiB pages, drop_zero_pages.) What is due is purged on the way by
// every span operation and pm_stats (maybe_purge, heap.hpp), and by the decay that
// purge.cpp drives (pm_collect, free's slow paths, the optional purger thread), so memory
// goes back even if the program never calls malloc again. hugetlb and locked pages are
// kept (not discarded). Giving a page back raises the "purge is due" flag (heap.cpp) for
// purge.cpp; nothing here calls up into it.
#include "core/give_back.hpp"
#include "malloc/heap.hpp"

namespace physmem::malloc {

namespace {

void purge(HugePage* h) noexcept {
    Rung r = h->arena->rung;
    // hugetlb pages stay mapped (a private hugetlb page given back might not come back);
    // locked pages cannot be discarded.
    // A discard can fail (EINVAL: the program mlock'ed the range, or mlockall'ed): then
    // the old bytes are still there, so the pages stay dirty (calloc zeroes them).
    if ((r == Rung::thp || r == Rung::page_4k) && !g_opt.lock && heap_discard(h->base(), kHuge)) {
        std::memset(h->dirty, 0, sizeof h->dirty);
        H.purged_bytes += kHuge;
        H.purges += 1;
        // Kept on 4 KiB pages while it held sparse objects (arena.cpp, turn_huge): empty
        // now, so huge again for whatever comes next.
        (void)advise_small(h, false);
    }
    h->state = HugePage::clean;
    summarize(h);
    h->list = on_clean;
    H.clean.push_front(h);  // reused before never-touched pages: the heap stays compact
}

// Only zero bytes in the 4 KiB page at q.
bool reads_zero(std::uintptr_t q) noexcept {
    const auto* w = reinterpret_cast<const std::uint64_t*>(q);
    for (std::size_t i = 0; i < kPage / 8; i += 8) {
        std::uint64_t any = 0;
        for (std::size_t j = 0; j < 8; ++j) any |= w[i + j];
        if (any) return false;
    }
    return true;
}

}  // namespace

bool advise_small(HugePage* h, bool small) noexcept {
    if (h->no_thp == small) return true;
    // Huge again on a small heap: what its THP arena is, 4 KiB pages (thp_when_big).
    const bool advise = small || H.thp_on;
    if (advise && os::advise_huge(reinterpret_cast<void*>(h->base()), kHuge, !small) != 0) return false;
    h->no_thp = small;
    H.no_thp_pages += small ? 1 : std::size_t(-1);
    return true;
}

void drop_zero_pages(std::uintptr_t base, const std::uint64_t* others) noexcept {
    // Faulted in whole (a page faulted 4 KiB at a time holds what was touched already).
    if (os::resident_pages(reinterpret_cast<void*>(base), kHuge) != kPagesPerHuge) return;
    std::uintptr_t run = 0;  // start of the current run of zero pages, 0 when none
    for (std::uintptr_t q = base; q < base + kHuge; q += kPage) {
        const bool theirs = others && bit(others, static_cast<unsigned>((q - base) / kPage));
        if (!theirs && reads_zero(q)) {
            if (!run) run = q;
        } else if (run) {
            (void)heap_discard(run, q - run);
            run = 0;
        }
    }
    if (run) (void)heap_discard(run, base + kHuge - run);
}

void unlist(HugePage* h) noexcept {
    if (h->list == on_empty) H.empty.remove(h);
    else if (h->list == on_clean) H.clean.remove(h);
    h->list = none;
}

// Most recently emptied first: still resident.
HugePage* take_huge_page() noexcept {
    HugePage* h = H.empty.back();
    if (!h) h = H.clean.front();
    for (unsigned i = 0; !h && i < H.narenas; ++i)  // an arena's descriptors not used yet
        if (!H.arenas[i]->sparse && init_huge_pages(H.arenas[i], 1)) h = H.clean.front();
    if (!h && create_arena(1)) h = H.clean.front();
    if (!h) return nullptr;
    bool was_clean = h->state == HugePage::clean;
    unlist(h);
    if (was_clean) prepare(h);
    count_in_use(h, +1);
    thp_when_big();
    return h;
}

void give_back_huge_page(HugePage* h) noexcept {
    count_in_use(h, -1);
    if (h->arena->sparse) {  // its pages went back with their objects: clean, on no list
        h->state = HugePage::clean;
        summarize(h);
        return;
    }
    heap_note_purge_due();
    h->state = HugePage::empty;
    summarize(h);
    h->empty_since_ns = os::monotonic_ns();
    h->list = on_empty;
    H.empty.push_back(h);
}

void purge_empty_for(std::size_t n) noexcept {
    const std::uint64_t now = os::monotonic_ns();
    for (; n > 0; --n) {
        HugePage* h = H.empty.front();
        if (!h || !core::empty_long_enough(h->empty_since_ns, now, g_opt.purge_delay_ms / 8)) return;
        H.empty.remove(h);
        purge(h);
    }
}

void purge_empty_pages(bool force) noexcept {
    std::uint64_t now = os::monotonic_ns();
    while (HugePage* h = H.empty.front()) {
        if (!force && !core::empty_long_enough(h->empty_since_ns, now, g_opt.purge_delay_ms)) break;
        H.empty.remove(h);
        purge(h);
    }
}

}  // namespace physmem::malloc
