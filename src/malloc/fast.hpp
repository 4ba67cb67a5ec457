// src/malloc/fast.hpp — the small-object fast paths, inline so that the exported shims
// (override.cpp, new_delete.cpp) and the pm_* entry points compile to the same few
// instructions with no call in between. Everything slow lives in thread_cache.cpp (small
// sizes), misuse.cpp (the reporters) and api.cpp (large sizes, unknown pointers).
//
// malloc of a small size: class lookup (one table load), TLS bin pop, the free-tag check
// on the line just read, tag cleared: about a dozen instructions, no atomics, no
// page-map lookup. The first call of a process or thread finds its bin empty (the class
// table is still zero before init: class 0, never filled) and takes the slow path, which
// initialises.
//
// free of a small object: page-info lookup (two dependent loads: the slot's map, the 4-byte
// page info), the object-start check against constants kept in the thread's own bin (one
// multiply, a rotate, one compare: no class-table line touched), free-tag check and store,
// TLS bin push. The span descriptor is not touched.
//
// Slow paths are tail calls that set errno themselves: the fast paths need no stack frame.
#pragma once

#include <cerrno>

#include "malloc/internal.hpp"

#pragma GCC visibility push(hidden)  // direct, not GOT, addressing of the globals below

namespace physmem::malloc {

constexpr unsigned kMaxClasses = 80;

// One size class of a thread cache. The object-start check constants are copies of the
// class's (SizeClass), set with max when the cache activates, so that free reads one line.
struct Bin {
    void* head;
    std::uint32_t count;
    std::uint32_t max;          // spill above this many (the class's cache_max once active)
    std::uint64_t odd_inverse;  // SizeClass::odd_inverse
    std::uint16_t nobj;         // objects per span (<= kMaxObjects)
    std::uint8_t shift;         // SizeClass::shift
    std::uint8_t unused;
    std::uint32_t refill;       // objects the next refill takes: doubles up to max / 2
};
static_assert(sizeof(Bin) == 32 && kMaxObjects <= 0xffff);

// A thread cache (2.5 KiB), in the allocator's own metadata, recycled at thread exit.
struct ThreadCache {
    Bin bins[kMaxClasses];
};
// The thread's cache. Static TLS holds only this pointer (and t_state in thread_cache.cpp): an
// initial-exec TLS block of a few bytes fits the surplus glibc keeps for libraries loaded
// with dlopen (a 2.5 KiB one did not: "cannot allocate memory in static TLS block").
// Until the thread's first slow path it points at a shared cache that is never written,
// whose bins are empty with max 0, so both fast paths fall through to the slow paths.
extern __thread ThreadCache* t_cache __attribute__((tls_model("initial-exec")));

// Class of each size 0..kSmallMax in 16-byte steps (every class size is a multiple of 16):
// one load and no branch, whatever the size mix (3.75 KiB, the used part stays cached).
extern std::uint8_t g_lut16[kSmallMax / 16 + 1];
extern std::uintptr_t g_tag_key;                    // see "free tag" in misuse.cpp

// pre: size <= kSmallMax. 0 before initialisation.
inline unsigned class_of(std::size_t size) noexcept {
    return g_lut16[(size + 15) >> 4];
}

// A free object is linked through its first word; its second word (classes are >= 16
// bytes) holds tag_of(p, link): the key, its address and its link mixed, so that a use
// after free that overwrites either word is seen before the link is followed. 0 (or
// program data) while the object is handed out.
inline std::uintptr_t& link_word(void* p) noexcept { return static_cast<std::uintptr_t*>(p)[0]; }
inline std::uintptr_t& tag_word(void* p) noexcept { return static_cast<std::uintptr_t*>(p)[1]; }
inline std::uintptr_t tag_of(void* p, std::uintptr_t link) noexcept {
    return g_tag_key ^ reinterpret_cast<std::uintptr_t>(p) ^ link;
}
// p carries the free tag of its current link: it is free (or the program's data collides
// with the tag, chance 2^-64).
inline bool tagged_free(void* p) noexcept { return tag_word(p) == tag_of(p, link_word(p)); }
// Links free object p to next and tags it.
inline void link_free(void* p, void* next) noexcept {
    link_word(p) = reinterpret_cast<std::uintptr_t>(next);
    tag_word(p) = tag_of(p, reinterpret_cast<std::uintptr_t>(next));
}

// Out of line: the reporters in misuse.cpp, the slow paths in thread_cache.cpp (small)
// and api.cpp (large).
[[noreturn, gnu::cold]] void free_list_corrupt(void* p, unsigned cls) noexcept;
[[noreturn, gnu::cold]] void bad_small_free(void* p, bool is_double) noexcept;
// Initialises; NULL with errno ENOMEM on failure.
[[gnu::noinline]] void* small_alloc_slow(std::size_t size) noexcept;
// The bin is full or the cache inactive. Checks p (like small_free) then frees it.
[[gnu::noinline]] void small_free_slow(unsigned cls, void* p) noexcept;
// malloc of a large size: initialises; NULL with errno ENOMEM on failure.
[[gnu::noinline]] void* large_alloc_errno(std::size_t size) noexcept;
// free() of NULL, a large or direct object, or a pointer physmem does not know (aborts).
[[gnu::noinline]] void free_not_small(void* p) noexcept;

// pre: cls = class_of(size).
inline void* small_alloc(std::size_t size, unsigned cls) noexcept {
    Bin& b = t_cache->bins[cls];
    void* p = b.head;
    if (__builtin_expect(p == nullptr, 0)) return small_alloc_slow(size);
    std::uintptr_t next = link_word(p);
    if (__builtin_expect(tag_word(p) != tag_of(p, next), 0)) free_list_corrupt(p, cls);
    b.head = reinterpret_cast<void*>(next);
    --b.count;
    tag_word(p) = 0;
    return p;
}

// True when byte offset off (from the span start) starts one of the nobj objects of a class
// of size odd << shift (odd_inverse = odd^-1 mod 2^64, shift 4..15). For off = k * size,
// rotr(off * odd_inverse, shift) is k exactly; for any other off it exceeds
// (2^(64-shift) - 1) / odd, far above nobj (Hacker's Delight 10-17). One compare covers
// "a multiple of size" and "below the span's end".
inline bool is_object_start(std::uint64_t odd_inverse, std::uint32_t shift, std::uint32_t nobj,
                            std::uint64_t off) noexcept {
    std::uint64_t m = off * odd_inverse;
    return ((m >> shift) | (m << (64 - shift))) < nobj;
}

// Byte offset of p from the start of its span. pre: info = p's page info.
inline std::uint64_t span_offset(const void* p, std::uint32_t info) noexcept {
    return std::uint64_t{info >> 8} * kPage + (reinterpret_cast<std::uintptr_t>(p) & (kPage - 1));
}

// pre: info = p's page info, nonzero. Aborts on an interior pointer or a double free.
inline void small_free(void* p, std::uint32_t info) noexcept {
    unsigned cls = info & 0xff;
    Bin& b = t_cache->bins[cls];
    if (__builtin_expect(b.count >= b.max, 0)) return small_free_slow(cls, p);  // max 0: inactive
    if (__builtin_expect(!is_object_start(b.odd_inverse, b.shift, b.nobj, span_offset(p, info)), 0))
        bad_small_free(p, false);
    if (__builtin_expect(tagged_free(p) || b.head == p, 0)) bad_small_free(p, true);
    link_free(p, b.head);
    b.head = p;
    ++b.count;
}

// The page info of p: nonzero when p lies in a small-object span.
inline std::uint32_t page_info_of(const void* p) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    if (__builtin_expect((a >> 30) >= kArenaSlots, 0)) return 0;
    std::atomic<Span*>* map = g_page_map[a >> 30].load(std::memory_order_acquire);
    if (__builtin_expect(map == nullptr, 0)) return 0;
    return page_info(map)[(a >> 12) & (kMapEntries - 1)].load(std::memory_order_relaxed);
}

[[noreturn, gnu::cold]] void foreign_pointer(const void* p, const char* what) noexcept;  // misuse.cpp

// malloc(size): NULL with errno ENOMEM on failure.
inline void* malloc_fast(std::size_t size) noexcept {
    if (__builtin_expect(size <= kSmallMax, 1)) return small_alloc(size, class_of(size));
    return large_alloc_errno(size);
}

// free(p) (NULL: nothing). Aborts on a pointer physmem did not hand out.
inline void free_fast(void* p) noexcept {
    std::uint32_t info = page_info_of(p);  // NULL: slot 0, never an arena's (below 1 GiB)
    if (__builtin_expect(info != 0, 1)) small_free(p, info);
    else free_not_small(p);
}

}  // namespace physmem::malloc

#pragma GCC visibility pop
