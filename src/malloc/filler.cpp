// src/malloc/filler.cpp — the huge-page filler: small-object spans carved out of 2 MiB
// pages (TCMalloc Temeraire's HugePageFiller idea, own code). Huge pages holding spans
// sit in buckets by their longest free run of 4 KiB pages (the core's bucketed lists,
// core/bucketed_lists.hpp, shared with the pool's filler); a span of n pages goes to the
// page with the smallest longest-free-run >= n, i.e. the fullest page that fits, so nearly
// empty pages are not refilled and drain. A page whose last span goes is given back
// (hugepage.cpp) and purged whole once it has stayed empty for the purge delay.
#include "malloc/heap.hpp"

namespace physmem::malloc {

namespace {

// The filler's one rule: a page's bucket is its longest free run (h->lfr, 0..512).
void bucket_insert(HugePage* h) noexcept {
    H.bucket.push_back(h->lfr, h);
    h->list = on_bucket;
}

void bucket_remove(HugePage* h) noexcept {
    H.bucket.remove(h->lfr, h);
    h->list = none;
}

// The fullest filler page with a free run of n pages, or nullptr.
HugePage* fullest_fitting(unsigned n) noexcept { return H.bucket.first_front_at_or_above(n); }

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
    // Kept on 4 KiB pages when the heap turned huge (under a quarter touched, arena.cpp):
    // huge again once a quarter of it is in use.
    if (h->no_thp && H.thp_on && !sparsely_touched(h->nused, kPagesPerHuge) && advise_small(h, false))
        (void)os::collapse_huge(reinterpret_cast<void*>(h->base()), kHuge);
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

}  // namespace

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

}  // namespace physmem::malloc
