// src/malloc/internal.hpp — the drop-in allocator's shared structures.
//
// Layers, bottom up. A file calls only into the files listed before it ("-> ..." names
// them; any file may also take a SpinLock, heap.cpp, report through say/fatal,
// options.cpp, and call src/port). No heap file calls up: the one signal upwards is the
// "purge is due" flag, an atomic defined in heap.cpp, which hugepage.cpp and large.cpp
// raise and purge.cpp reads and clears. (Outside the heap, lazy initialisation is the
// one call up: thread_cache.cpp's slow paths call ensure_init, which runs api.cpp's
// init_slow.)
//   options.cpp    the PHYSMEM_MALLOC_* options (options.hpp), say, fatal
//   bits.hpp       bitmaps of the 512 4 KiB pages of a 2 MiB page (inline, no state)
//   heap.hpp       what the heap files below share: the Heap state, huge-page lists, the
//                  inline per-span helpers (descriptors, the check for a due purge), and
//                  the declarations each heap file offers the ones above it
//   heap.cpp       owns the heap state H and its lock, the "purge is due" flag; SpinLock
//   meta.cpp       metadata: span and arena descriptors, thread caches, in mappings of
//                  their own (never in the heap, never through another allocator)
//   arena.cpp      arenas (1 GiB of address space, 1 GiB aligned) on a backing rung: the
//                  ladder, the arena and page maps, PageRuns summaries, thp_when_big, the
//                  hugetlb reservation made at start and restored at exit    -> meta
//   hugepage.cpp   2 MiB pages taken into use and given back (clean and empty lists);
//                  empty pages purged whole once due                        -> arena
//   filler.cpp     the huge-page filler: small-object spans, fullest page first
//                                                                 -> hugepage, arena, meta
//   placement.cpp  large spans in arenas' large regions (PageRuns), direct mappings
//                                                                 -> hugepage, arena, meta
//   large.cpp      large objects: classes, stagger offsets, cache of freed spans
//                  (per-class locks)                                       -> placement
//   stats.cpp      pm_stats                                      -> large, hugepage
//   purge.cpp      the decay: rounds that expire the large cache and purge the empty
//                  huge pages due, the optional purger thread, pm_collect -> large, hugepage
//   size_class.cpp the small size classes and the size-to-class table (no calls)
//   misuse.cpp     the free tag's key, the transfer cache's batch check, the messages that
//                  stop the process on a bad free or a corrupt free list
//   transfer.hpp   a class's transfer cache: full batches parked as lists (inline, under
//                  the class lock of central.cpp)
//   central.hpp    what central.cpp offers thread_cache.cpp (batches in and out), and
//                  misuse.cpp's checks they share
//   central.cpp    per-class central free lists: partial spans, span bitmaps, the transfer
//                  cache                                   -> misuse, filler, size_class
//   thread_cache.cpp  per-thread caches: activation, refill and spill in batches, the
//                  overall budget, exit and fork; small malloc/free's slow paths
//                                            -> central, misuse, purge, meta, size_class
//   fast.hpp       the inline small-object fast paths (malloc pop, free push)
//                                          -> thread_cache, misuse, size_class; api.cpp
//                  (its large-size slow paths, where fast.hpp is inlined). The files above
//                  use only its definitions: Bin, ThreadCache, the free tag's inline
//                  helpers (link_word, tag_of, link_free, ...), which call nothing.
//   api.cpp        pm_* entry points, lazy init, fork and exit handling, large
//                  malloc/free's slow paths
//      -> thread_cache, central, size_class, misuse, purge, stats, large, arena, heap, options
//   override.cpp / new_delete.cpp   the exported malloc/free/new/delete shims -> api
//
// Below every layer, shared with the block pool (src/core, allocation-free): the one
// intrusive list and filler core (intrusive_list.hpp, bucketed_lists.hpp: the huge-page
// lists, the filler's buckets, the central partial-span lists), the one give-back delay
// (give_back.hpp: PHYSMEM_MALLOC_PURGE_DELAY_MS's default and the "empty long enough"
// test) and the one backing ladder (backing.hpp: first_rung, next_rung).
//
// Every span and arena descriptor lives in metadata mapped by this library (never in
// the heap it manages). Nothing here allocates through libstdc++.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "malloc/options.hpp"
#include "physmem.h"

#pragma GCC visibility push(hidden)  // direct, not GOT, addressing of the globals below

namespace physmem::malloc {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHuge = std::size_t{2} << 20;
constexpr std::size_t kArena = std::size_t{1} << 30;
constexpr unsigned kPagesPerHuge = 512;
constexpr unsigned kHugePerArena = 512;
constexpr unsigned kAddressBits = 47;                    // user space on x86-64 (4-level)
constexpr std::size_t kArenaSlots = std::size_t{1} << (kAddressBits - 30);
constexpr std::size_t kSmallMax = 61440;                  // largest small size class
constexpr unsigned kMaxObjects = 1024;                    // per small span
constexpr std::size_t kDirectMin = std::size_t{256} << 20;  // spans this big map directly

// Test-and-test-and-set lock; yields after a short spin: spinning long burns a core the
// lock's holder may need to finish (with few cores, or more threads than cores, it may be
// waiting for exactly that core).
//
// Not recursive, and it knows its holder: a thread that asks for a lock it already holds
// (an allocation from a signal handler that interrupted an allocation, or a hook that
// allocates) would spin forever, so it stops the process with a message instead (glibc
// asserts in the same case). The holder is recorded after the lock is taken and cleared
// before it is released, so a thread sees its own mark only while it really holds it.
class SpinLock {
public:
    void lock() noexcept;
    void unlock() noexcept { holder_.store(nullptr, std::memory_order_release); }
    // After fork in the child: the lock was held by a thread that no longer exists.
    void reset() noexcept { holder_.store(nullptr, std::memory_order_relaxed); }
private:
    // The holding thread's mark (heap.cpp), nullptr when free: held and holder in one word,
    // so a signal handler that interrupts the owner anywhere sees it is the owner (a flag
    // and a holder stored apart left a window where it saw neither, and spun forever).
    std::atomic<const void*> holder_{nullptr};
};

struct LockGuard {
    explicit LockGuard(SpinLock& l) noexcept : l_(l) { l_.lock(); }
    ~LockGuard() { l_.unlock(); }
    SpinLock& l_;
};

struct Arena;

// One 2 MiB page of an arena.
struct HugePage {
    enum State : std::uint8_t { clean, empty, filler, large };
    std::uint64_t used[kPagesPerHuge / 64];  // 4 KiB pages in use (filler state)
    std::uint64_t dirty[kPagesPerHuge / 64]; // 4 KiB pages handed out since last discarded
                                             // (clear: reads as zero; calloc skips them)
    std::uint16_t nused;                     // popcount of used
    std::uint16_t lfr;                       // longest free run of pages
    State state;
    std::uint8_t list;                       // which list it is on (0: none)
    bool no_thp;                             // advised MADV_NOHUGEPAGE alone (advise_small,
                                             // hugepage.cpp: sparse pages, arena.cpp,
                                             // placement.cpp) until purged, or refilled
                                             // (filler.cpp)
    HugePage* prev;
    HugePage* next;
    std::uint64_t empty_since_ns;
    Arena* arena;
    std::uint32_t index;                     // within the arena
    std::uintptr_t base() const noexcept;  // inline, below Arena
};

// A run of 4 KiB pages: either the slab of one small size class, or one large object.
// The fields free() reads come first (one cache line: start .. live).
struct Span {
    enum Kind : std::uint8_t { unused, small, large, direct };
    std::uintptr_t start;
    std::uint64_t recip;        // small: ceil(2^40 / size)
    std::uint32_t size;         // small: object size
    std::uint32_t nobj;         // small: objects in the span
    std::uint16_t cls;          // small: size class
    Kind kind;
    std::atomic<std::uint8_t> live;  // large/direct: 1 while handed out (double-free check)
    std::uint32_t npages;
    // where the pages came from
    HugePage* hp;               // first huge page (its arena holds the span)
    std::uint16_t first;        // small span: first page within hp
    std::uint32_t page0;        // large span: first page within the arena
    // large objects
    std::uint32_t offset;       // object start - span start (stagger or alignment)
    std::size_t requested;      // bytes asked for
    std::size_t mapped;         // direct: bytes of the mapping
    std::uint64_t freed_ns;     // large, cached: when it was freed (monotonic)
    std::uint32_t end_page;     // large, cached: the page (from start) its last object ended in
    bool size_judged;           // large/direct of 2 MiB and more: its density judged (realloc)
    bool keep_small;            // ... and found sparse: its pages stay 4 KiB (large.cpp)
    std::uint16_t lkey;         // large/direct: large-class key + 1 (0: not staggered)
    bool zeroed;                // large/direct: every page reads as zero (never handed out
                                // since mapped or discarded): calloc writes nothing
    // small objects
    std::uint32_t nfree;        // objects free in the span (freebits' set bits)
    std::uint32_t fresh;        // objects [fresh, nobj) never handed out
    Span* prev;
    Span* next;
    bool in_partial;
    // 1: the object is on this span's central free list or never handed out; 0: it is
    // in a thread cache or with the program. Under the class's central lock only.
    std::uint64_t freebits[kMaxObjects / 64];
};

// Free runs of one 2 MiB page as the large-object placement (placement.cpp) sees it,
// kept by summarize (arena.cpp): an empty or clean page is free whole (512, 512, 512); a
// page holding large objects has the free pages at its start, at its end and the longest
// run; a filler page is blocked (0, 0, 0).
// Kept apart from HugePage, 8 bytes a page, so a scan over thousands of pages stays in L1.
struct PageRuns {
    std::uint16_t head, tail, longest, unused;
};

struct Arena {
    std::uintptr_t base;
    std::size_t size;           // bytes (a multiple of 2 MiB; direct: mapping size)
    Rung rung;
    bool direct;
    bool sparse;                // 4 KiB pages for sparsely touched large objects (placement.cpp)
    std::uint32_t nhuge;
    std::uint32_t ninit;        // hp[0, ninit) initialized (arena.cpp, init_huge_pages); the
                                // others zero: their PageRuns read as full, never placed in
    HugePage* hp;               // [nhuge]
    PageRuns* runs;             // [nhuge]
    std::atomic<Span*>* page_span;  // [kMapEntries]: span of each 4 KiB page (first page only for
                                    // large), then the page infos (see page_info); a sparse
                                    // arena: [size / kSparseGranule], see kSparseGranule
    Span* direct_span;
    Arena* next_free;
};

inline std::uintptr_t HugePage::base() const noexcept { return arena->base + std::uintptr_t{index} * kHuge; }

// The density rule shared by large.cpp (classes, big buffers) and arena.cpp (huge pages at
// the switch): memory is touched sparsely when under a quarter of its pages are resident.
constexpr bool sparsely_touched(std::size_t resident, std::size_t pages) noexcept { return resident * 4 < pages; }

// Per 1 GiB slot of the address space, the arena there (arena.cpp keeps both maps).
extern std::atomic<Arena*> g_arena_map[kArenaSlots];
// Per 1 GiB slot of the address space, the page map of the (non-direct) arena there:
// kMapEntries span pointers indexed by address bits 12..29 (arenas are 1 GiB aligned; a
// smaller hugetlb arena leaves the tail of its map null), followed by as many 32-bit page
// infos (page_info). Direct mappings: null here.
constexpr std::size_t kMapEntries = kArena / kPage;
extern std::atomic<std::atomic<Span*>*> g_page_map[kArenaSlots];
// A sparse arena (large objects touched sparsely, on 4 KiB pages) has no page map in
// g_page_map: its own map has an entry per 64 KiB granule, at the granule of each live
// object's first page. Its spans are at least a granule's pages long and their objects
// start in their first page (no alignment offset), so no two live objects start in one
// granule. A page map entry per 4 KiB page would be 2 MiB a GiB, all of it resident
// there: objects of ~300 KiB start in every 2 MiB of the arena's map (the alloc suite's
// large-live: 6 MiB beside 78 MiB of touched pages).
constexpr std::size_t kSparseGranule = std::size_t{64} << 10;
constexpr std::size_t kSparseMinPages = kSparseGranule / kPage;

// Page info of a page of a small-object span: (page index within the span << 8) | class;
// 0 for every other page. Lets free() find the class and the object's offset in a compact
// array (4 bytes a page) without touching the span descriptor (TCMalloc's size-class map).
inline std::atomic<std::uint32_t>* page_info(std::atomic<Span*>* map) noexcept {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(map + kMapEntries);
}
extern Options g_opt;

// The span holding a where its 1 GiB slot has no page map: a direct mapping holding a, or
// the large object of a sparse arena whose first page holds a; else nullptr. Out of the
// fast path (arena.cpp).
Span* unmapped_span_of(std::uintptr_t a) noexcept;

// The span holding address p, or nullptr when the allocator never mapped it.
// Lock-free: page maps and descriptors are never unmapped. Arena memory costs two
// dependent loads (slot's page map, page entry).
inline Span* span_of(const void* p) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (__builtin_expect((a >> 30) >= kArenaSlots, 0)) return nullptr;
    std::atomic<Span*>* map = g_page_map[a >> 30].load(std::memory_order_acquire);
    if (__builtin_expect(map != nullptr, 1))
        return map[(a >> 12) & (kArena / kPage - 1)].load(std::memory_order_acquire);
    return unmapped_span_of(a);
}

// --- the heap (heap.cpp .. purge.cpp; their shared internals: heap.hpp) ---
// heap.cpp
void heap_init() noexcept;
void heap_lock_all() noexcept;     // fork: prepare
void heap_unlock_all() noexcept;   // fork: parent
void heap_reset_all() noexcept;    // fork: child
// "Purge is due": something now waits for the purge delay (an empty huge page, a cached
// large span). Raised below purge.cpp, with any lock held; read and cleared by purge.cpp.
extern std::atomic<bool> g_purge_due;
inline void heap_note_purge_due() noexcept { g_purge_due.store(true); }
// meta.cpp: zeroed metadata of `bytes` (never given back; the caller recycles it). Takes
// the heap lock.
void* heap_meta_alloc(std::size_t bytes) noexcept;
// arena.cpp: the hugetlb reservation (PHYSMEM_MALLOC_RESERVE).
void heap_reserve_at_start() noexcept;
void heap_restore_at_exit() noexcept;
// filler.cpp (take the heap lock). A span of npages pages for size class cls, set up by
// init before the page map (every page) points to it. nullptr on ENOMEM.
Span* heap_small_span(std::uint32_t npages, unsigned cls, void (*init)(Span*, unsigned)) noexcept;
void heap_release_small_span(Span* s) noexcept;
// placement.cpp. A span of npages pages in some arena's large region (kind large, offset
// set for align > kPage, not yet in the page map); nullptr on ENOMEM. Takes the heap lock.
// sparse: in a sparse arena (4 KiB pages) if the heap is on THP and no option populates
// or locks pages. Either kind falls back to room in the other when no arena of its own
// kind can be mapped (an address-space limit); s->hp->arena->sparse says where it went.
Span* heap_place_large(std::size_t npages, std::size_t align, bool sparse = false) noexcept;
// Gives back a large span's pages (or a direct span's mapping). Takes the heap lock.
void heap_release_large(Span* s) noexcept;
// pre: s a live large span (its owner's), npages > s->npages. Grows it in place to npages
// pages when the pages after it in its arena are free; false (s unchanged) when they are
// not. Takes the heap lock.
bool heap_grow_large(Span* s, std::size_t npages) noexcept;
// A direct mapping of size bytes with the object at offset off; nullptr on ENOMEM.
Span* heap_map_direct(std::size_t size, std::size_t off, std::size_t align) noexcept;
// pre: s a live direct span. Resizes its mapping for `size` bytes (in place, or moved by
// mremap without copying); false on ENOMEM with s unchanged. Takes the heap lock.
bool heap_resize_direct(Span* s, std::size_t size) noexcept;
// Enters (on) or removes a large span's object in the page map. No lock.
void heap_publish_large(Span* s, bool on) noexcept;
// pre: s a live large or direct span, its object inside realloc. Keeps its pages on 4 KiB
// pages from now on (MADV_NOHUGEPAGE): a direct mapping whole; of a large span, every 2 MiB
// page it reaches into, shared ones at its ends too (HugePage::no_thp until purged). Huge
// pages already faulted in keep, of its pages and free ones, only those holding a nonzero
// byte (drop_zero_pages). Takes the heap lock.
void heap_keep_small(Span* s) noexcept;

// --- large.cpp (per-class locks; the heap lock only to place or release pages) ---
// A large object of `size` bytes aligned to `align` (power of two); nullptr on ENOMEM.
void* heap_large_alloc(std::size_t size, std::size_t align) noexcept;
// pre: s = span_of(p), s->kind is large or direct. Aborts on an invalid or double free.
// The caller then pokes the purger (heap_poke_purger; purge.cpp is above this file).
// keep_cached false: the span's pages go straight back to the heap (realloc's old buffer:
// a growing buffer would otherwise leave one cached span per class it passed through).
void heap_large_free(Span* s, void* p, bool keep_cached = true) noexcept;
// pre: s = span_of(p), a live large or direct object. realloc without copying: the object
// itself when it can hold `size` as it is (or resized in place), the moved object for a
// direct mapping that mremap moved; nullptr when the caller must allocate and copy.
void* heap_large_resize(Span* s, void* p, std::size_t size) noexcept;
// pre: s = span_of(p), a live object about to be read whole (realloc's copy). Judges it now
// if it is its class's density probe: the copy's reads would count every page as touched.
void heap_large_before_copy(const Span* s) noexcept;
std::size_t large_usable(const Span* s, const void* p) noexcept;
// Releases cached spans freed more than the purge delay ago (all with force); returns
// how many stay cached.
std::size_t large_cache_expire(bool force) noexcept;
std::size_t large_requested_bytes() noexcept;
void large_lock_all() noexcept;
void large_unlock_all() noexcept;
void large_reset_all() noexcept;

// --- stats.cpp ---
void heap_stats(pm_stats_t* out) noexcept;

// --- purge.cpp (above the large cache and the heap's pages; drives their decay) ---
// pm_collect: releases the cached large spans freed more than the purge delay ago, then
// purges the empty huge pages due (with force: all of both).
void heap_collect(bool force) noexcept;
// When something is due: purges it (a round at most every purge_delay_ms / 2), or with
// PHYSMEM_MALLOC_BACKGROUND_PURGE starts the purger thread if none runs. pre: no allocator
// lock held (thread creation allocates). Called on free's slow paths.
void heap_poke_purger() noexcept;
// fork: prepare, first (start_purger may allocate under it) / parent, last. Holds off a
// purger's start and exit while the process forks (purge.cpp, "the purger").
void heap_purger_lock_for_fork() noexcept;
void heap_purger_unlock_after_fork() noexcept;
void heap_purger_reset_after_fork() noexcept;  // fork: child (the child has no purger)

// --- size_class.cpp ---
struct SizeClass {
    std::uint32_t size;
    std::uint32_t pages;    // of each span
    std::uint32_t nobj;
    std::uint32_t cache_max;  // thread-cache capacity (objects)
    std::uint64_t recip;      // ceil(2^40 / size): offset * recip >> 40 = object index
    // Object-start test without division (is_object_start, fast.hpp): size = odd << shift.
    std::uint64_t odd_inverse; // (size >> shift)^-1 mod 2^64
    std::uint32_t shift;       // trailing zero bits of size
};
extern SizeClass g_classes[];
extern unsigned g_nclasses;   // classes are 1..g_nclasses
void classes_init() noexcept;
// class_of, small_alloc, small_free: fast.hpp
// --- central.cpp ---
std::size_t cache_outstanding_bytes() noexcept;  // bytes of small objects out of central lists
// --- thread_cache.cpp ---
void cache_thread_init_key() noexcept;  // also draws the free-tag key (misuse.cpp)
void cache_flush_current() noexcept;  // and empties the transfer caches (pm_collect)
void cache_lock_all() noexcept;  // fork: the central locks, then the spare-cache lock
void cache_unlock_all() noexcept;
void cache_reset_all() noexcept;

// --- api.cpp ---
// memalign: a non-power-of-two alignment rounds up (glibc's behaviour); one with no power
// of two above it is NULL + EINVAL.
void* memalign_impl(std::size_t alignment, std::size_t size) noexcept;
extern std::atomic<int> g_init_state;  // 0 none, 1 running, 2 done
void init_slow() noexcept;
inline void ensure_init() noexcept {
    if (__builtin_expect(g_init_state.load(std::memory_order_acquire) != 2, 0)) init_slow();
}

}  // namespace physmem::malloc

#pragma GCC visibility pop
