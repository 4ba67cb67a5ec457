// src/malloc/heap.hpp — what the heap's files share below the heap_* interface of
// internal.hpp: the heap state H and its lock (owned by heap.cpp), the huge-page lists,
// and the functions one heap file offers the files above it (the layers: internal.hpp).
// Included by heap.cpp, meta.cpp, arena.cpp, hugepage.cpp, filler.cpp, placement.cpp,
// stats.cpp and purge.cpp only. Everything here runs under H.lock unless said otherwise.
//
// What a span operation runs on every call (descriptors, bitmaps, list links, the check
// for empty pages due for purging) is inline here, as it was inside the one heap.cpp
// these files were split from: splitting added no call between translation units to
// the per-span paths.
#pragma once

#include <cstring>

#include "core/bucketed_lists.hpp"
#include "core/intrusive_list.hpp"
#include "malloc/bits.hpp"
#include "malloc/internal.hpp"
#include "port/os.hpp"

#pragma GCC visibility push(hidden)

namespace physmem::malloc {

constexpr unsigned kBuckets = kPagesPerHuge + 1;  // longest free run 0..512

// A list of huge pages, through HugePage::prev/next (the core's one intrusive list).
using HpList = core::IntrusiveList<HugePage>;

// The heap state, one instance (H, defined in heap.cpp). Which file writes what:
struct Heap {
    SpinLock lock;                                 // heap.cpp (fork: lock, unlock, reset)
    core::BucketedLists<HugePage, kBuckets> bucket;  // filler.cpp (by longest free run)
    HpList empty;   // empty, resident; head = emptied longest ago (hugepage.cpp)
    HpList clean;   // never used or purged (arena.cpp adds new pages, hugepage.cpp)
    Arena* arenas[kArenaSlots / 64];               // arena.cpp
    unsigned narenas;                              // arena.cpp
    Span* free_spans;                              // meta (new_span, free_span)
    Arena* free_arenas;                            // meta (new_arena_desc, free_arena_desc)
    char* meta_cur;                                // meta.cpp
    std::size_t meta_left;                         // meta.cpp
    // stats (read by stats.cpp; written where the event happens)
    Rung last_rung;
    std::size_t bytes_mapped, bytes_in_use, direct_bytes, direct_count;
    std::size_t n1g, n2m, in_use_by_rung[5], purged_bytes, purges;
    std::size_t sparse_in_use;     // 2 MiB pages of sparse arenas holding data (not in in_use_by_rung)
    std::size_t no_thp_pages;      // THP-arena pages kept on 4 KiB pages (advise_small, hugepage.cpp)
    std::size_t discard_failures;  // heap_discard calls the kernel refused (heap.cpp)
    std::size_t lock_failures;     // mlock calls the kernel refused (heap_lock, heap.cpp)
    bool thp_on;    // THP arenas advised huge (thp_when_big, arena.cpp)
    bool sparse_refused;            // a sparse arena could not be mapped (placement.cpp) ...
    std::size_t sparse_refused_at;  // ... when bytes_mapped was this
    long reserved;  // hugetlb reservation (arena.cpp)
    std::size_t reserved_page;
};
extern Heap H;

// --- huge-page lists (HugePage::list says which one a page is on) ---

enum ListId : std::uint8_t { none = 0, on_empty = 1, on_clean = 2, on_bucket = 3 };

inline bool available(const HugePage& h) noexcept {
    return h.state == HugePage::clean || h.state == HugePage::empty;
}

// --- meta.cpp: metadata (never freed to the system; descriptors are recycled) ---

// `bytes` (rounded up to 64) of never used metadata (reads as zero); nullptr on ENOMEM.
void* meta_alloc(std::size_t bytes) noexcept;
Arena* new_arena_desc() noexcept;  // zeroed

inline void free_arena_desc(Arena* a) noexcept {
    a->next_free = H.free_arenas;
    H.free_arenas = a;
}

// A zeroed span descriptor (a recycled one when there is one), nullptr on ENOMEM.
inline Span* new_span() noexcept {
    Span* s = H.free_spans;
    if (s) H.free_spans = s->next;
    else s = static_cast<Span*>(meta_alloc(sizeof(Span)));
    if (s) std::memset(static_cast<void*>(s), 0, sizeof(Span));
    return s;
}

inline void free_span(Span* s) noexcept {
    s->kind = Span::unused;
    s->next = H.free_spans;
    H.free_spans = s;
}

// --- arena.cpp: arenas on a backing rung ---

// A new arena of at least min_huge 2 MiB pages, clean (its descriptors initialized for those,
// init_huge_pages; the rest as the heap reaches them); nullptr when none can
// be mapped (or every arena slot is taken). sparse: on 4 KiB pages (MADV_NOHUGEPAGE), for
// the large objects of sparsely touched classes only: its pages are on no list (the
// filler never takes them) and are discarded as their objects go (placement.cpp).
Arena* create_arena(unsigned min_huge, bool sparse = false) noexcept;
// Enters (on) or removes a in the arena map (and, not direct, its page map in the page map).
void register_arena(Arena* a, bool on) noexcept;
// Updates h's PageRuns after a change of its state or of its large objects.
void summarize(const HugePage* h) noexcept;
// Initializes at least `count` more of a's huge-page descriptors (a chunk at a time; the
// clean ones onto the clean list): false when all are. A new arena initializes what it
// needs only, so a small heap does not touch 88 KiB of descriptors per arena.
bool init_huge_pages(Arena* a, std::size_t count) noexcept;  // (capped at a->nhuge)
// Turns THP arenas huge once the heap is big (see arena.cpp); true when this call did.
bool thp_when_big() noexcept;

// --- hugepage.cpp: 2 MiB pages taken into use, given back, purged ---

inline void count_in_use(HugePage* h, int delta) noexcept {
    std::size_t& n = h->arena->sparse ? H.sparse_in_use : H.in_use_by_rung[static_cast<unsigned>(h->arena->rung)];
    n += static_cast<std::size_t>(delta);
}

// --- heap.cpp: the heap's own calls to discard and lock (they count failures) ---

// MADV_DONTNEED on [start, start + bytes): true when the range now reads as zero. False
// when the kernel refused (EINVAL on pages the program locked with mlock or mlockall):
// the caller must keep the pages dirty. Counted in H.discard_failures.
bool heap_discard(std::uintptr_t start, std::size_t bytes) noexcept;
// mlock for PHYSMEM_MALLOC_LOCK. A refusal (RLIMIT_MEMLOCK, no CAP_IPC_LOCK) is counted in
// H.lock_failures and reported on stderr once, with the limit: never silent.
void heap_lock(std::uintptr_t start, std::size_t bytes) noexcept;

// A clean page about to hold data: populate and lock as the options ask.
inline void prepare(HugePage* h) noexcept {
    if (g_opt.prefault) os::populate_write(reinterpret_cast<void*>(h->base()), kHuge, kPage);
    if (g_opt.lock) heap_lock(h->base(), kHuge);
}

// Takes h off the empty or the clean list.
void unlist(HugePage* h) noexcept;
// An empty or clean huge page taken into use (counted, prepared); nullptr on ENOMEM.
HugePage* take_huge_page() noexcept;
// Keeps h on 4 KiB pages (MADV_NOHUGEPAGE; HugePage::no_thp, counted in H.no_thp_pages)
// when `small`, else gives it back its arena's advice (huge once the heap is; on a small
// heap the flag is only cleared); true when h is now as asked (the kernel can refuse).
// pre: H.lock held.
bool advise_small(HugePage* h, bool small) noexcept;
// The 2 MiB page at base (aligned), about to stay on 4 KiB pages (advised MADV_NOHUGEPAGE),
// if faulted in whole: its 4 KiB pages that hold only zero bytes, other than those flagged
// in `others` (512 bits; nullptr: none), are given back (MADV_DONTNEED splits the huge
// page; the others keep their bytes), so it keeps what was written, not 2 MiB. pre: H.lock
// held (no page placed meanwhile); no thread writes to the pages not in `others` (one
// object's, inside realloc, or nobody's).
void drop_zero_pages(std::uintptr_t base, const std::uint64_t* others) noexcept;
// h holds nothing any more: onto the empty list, to be purged after the delay (a sparse
// arena's page: clean at once, on no list; its objects' pages went back as they were freed).
void give_back_huge_page(HugePage* h) noexcept;
// Purges the empty pages emptied purge_delay_ms ago or longer (all with force).
void purge_empty_pages(bool force) noexcept;
// The heap took n clean (not resident) pages while empty ones wait for their delay, not
// reused (a large object needs contiguous pages): up to n of those emptied longest ago, an
// eighth of the delay ago or longer, are purged now, so that growing into new pages does not
// add to the resident set what pages the program has stopped using hold (a program that
// frees and allocates again at once, large buffers of varying sizes, keeps its empty pages
// for the next buffer that fits).
void purge_empty_for(std::size_t n) noexcept;
inline void maybe_purge(bool force) noexcept {
    if (!H.empty.empty()) purge_empty_pages(force);
}

}  // namespace physmem::malloc

#pragma GCC visibility pop
