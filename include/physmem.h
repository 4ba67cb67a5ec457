/* physmem.h — the whole ABI of the drop-in allocator libphysmem.so.
 *
 * Preloaded (LD_PRELOAD=libphysmem.so), linked or dlopen'ed (then through pm_* only), the
 * library replaces malloc, free, calloc, realloc, reallocarray, memalign, posix_memalign,
 * aligned_alloc, valloc, pvalloc, malloc_usable_size, every C++ operator new/delete, and
 * glibc's malloc_trim (gives back all it can now), mallinfo2/mallinfo (physmem's heap),
 * mallopt (accepts glibc's parameters; none changes physmem) and malloc_stats. It needs
 * libc only. The pm_* entry points below are the same allocator under its own names, for
 * side-by-side use.
 *
 * Errors: out of memory -> NULL with errno = ENOMEM (also when the kernel's overcommit
 * policy refuses a mapping of 256 MiB or more). A free of a pointer the allocator
 * never handed out, or a double free, aborts with "physmem: fatal: ..." naming the
 * pointer. Options come from PHYSMEM_MALLOC_* environment variables (see
 * src/malloc/options.hpp; PHYSMEM_MALLOC_HELP=1 lists them on stderr).
 *
 * Stagger (PHYSMEM_MALLOC_STAGGER=1, the default): a large allocation (> 60 KiB, alignment
 * <= 64) starts at a multiple of 64 bytes inside its first 4 KiB page, using the slack of
 * its size class (classes are 12.5% apart; a request leaving less than 1 KiB of slack gets
 * one more page; mappings of 256 MiB and more get one more page). With
 * slack = class bytes - size, a buffer may take N = min(64, slack / 64) offsets (N >= 16).
 * Guarantee: while at most N buffers of its class are live, a new buffer's low 12 bits
 * differ from those of every other live buffer of the class; in particular, up to N live
 * buffers of one size never share their low 12 bits, whatever was freed in between.
 * Among those offsets it takes the one farthest around the 4 KiB page from where live
 * large buffers (of any size) start, ties to the lowest: with no other large buffer live,
 * two allocated one after the other are min(2 KiB, N * 64 - 64) bytes apart.
 * Alignments 128..4096 are staggered in steps of the alignment. PHYSMEM_MALLOC_STAGGER=0:
 * large buffers start on a page boundary.
 */
#ifndef PHYSMEM_H
#define PHYSMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PM_API __attribute__((visibility("default")))

PM_API void* pm_malloc(size_t size);
PM_API void pm_free(void* p);
PM_API void* pm_calloc(size_t count, size_t size);
PM_API void* pm_realloc(void* p, size_t size);
/* 0, EINVAL (alignment not a power of two multiple of sizeof(void*)) or ENOMEM. */
PM_API int pm_posix_memalign(void** out, size_t alignment, size_t size);
/* NULL + EINVAL when alignment is not a power of two. */
PM_API void* pm_aligned_alloc(size_t alignment, size_t size);
/* Bytes usable at p (>= the size asked for); 0 for NULL. */
PM_API size_t pm_usable_size(const void* p);

/* Counters of the whole process. Bytes unless named otherwise. */
typedef struct pm_stats_t {
    uint32_t version;             /* PM_STATS_VERSION */
    uint32_t backing;             /* rung of the most recent arena: 1 = 1g, 2 = 2m, 3 = thp, 4 = 4k */
    size_t bytes_mapped;          /* arenas and direct mappings (virtual) */
    size_t bytes_in_use;          /* pages handed to spans (small-object spans and large objects) */
    size_t bytes_requested_large; /* bytes asked for by live large (> 60 KiB) allocations */
    size_t bytes_huge;            /* 2 MiB pages holding data that are huge (hugetlb, THP-advised),
                                     in bytes; share of the heap on huge pages = bytes_huge /
                                     (bytes_huge + small_pages_in_use * 2 MiB) */
    size_t bytes_resident_est;    /* bytes of huge pages in use or empty-but-not-purged, of direct
                                     mappings, and the resident 4 KiB pages of large objects of
                                     sparsely touched classes (PHYSMEM_MALLOC_SPARSE; mincore) */
    size_t hugetlb_1g_pages;      /* 1 GiB hugetlb pages mapped */
    size_t hugetlb_2m_pages;      /* 2 MiB hugetlb pages mapped */
    size_t thp_pages_in_use;      /* 2 MiB THP-advised pages holding data (THP arenas are
                                     advised huge once 16 MiB of them hold data) */
    size_t small_pages_in_use;    /* 2 MiB pages on 4 KiB pages holding data (the 4k rung,
                                     THP arenas before they are advised huge, and their pages
                                     kept small after, found sparsely touched; not the
                                     sparse arenas' pages: bytes_resident_est) */
    size_t huge_pages_empty;      /* 2 MiB pages empty, not yet purged */
    size_t bytes_purged;          /* bytes given back to the system so far (cumulative) */
    size_t purges;                /* 2 MiB pages purged so far */
    size_t arenas;                /* arenas mapped (1 GiB of address space each) */
    size_t direct_mappings;       /* live allocations mapped on their own */
    size_t bytes_reserved_hugetlb;/* pages this process added to nr_hugepages */
    size_t bytes_small_outstanding; /* small objects out of the central lists: in use or in thread caches */
    /* version 2 */
    size_t bytes_direct;          /* bytes of the direct mappings (objects of 256 MiB and more) */
    size_t discard_failures;      /* purges the kernel refused (MADV_DONTNEED fails with EINVAL on
                                     memory the program locked: mlock, mlockall); those pages keep
                                     their bytes, and calloc zeroes them */
    size_t lock_failures;         /* PHYSMEM_MALLOC_LOCK: mlock calls refused (RLIMIT_MEMLOCK);
                                     reported on stderr the first time */
} pm_stats_t;
#define PM_STATS_VERSION 2u

/* Fills *out (which must not be NULL). Also purges what is due. */
PM_API void pm_stats(pm_stats_t* out);
/* Prints pm_stats on stderr, one line. */
PM_API void pm_print_stats(void);
/* Gives back every empty huge page now (ignores the purge delay when force != 0),
 * and the calling thread's cache. malloc_trim(0) is pm_collect(1). */
PM_API void pm_collect(int force);

#ifdef __cplusplus
}
#endif

#endif /* PHYSMEM_H */
