// src/malloc/options.hpp — every run-time option of the drop-in allocator, declared once.
//
// Parsed straight from getenv at the first allocation (no std::string: the heap does
// not exist yet). A value that does not parse is reported on stderr, naming the
// variable, and the default is used.
#pragma once

#include <cstddef>
#include <cstdint>

//  X(field,        environment variable,              kind,    default, help)
#define PM_MALLOC_OPTIONS(X)                                                                  \
    X(backing, "PHYSMEM_MALLOC_BACKING", backing, "best",                                     \
      "best (hugetlb pages only when reserved with PHYSMEM_MALLOC_RESERVE, else THP), "       \
      "1g, 2m (hugetlb while free pages exist, then THP), thp or 4k")                         \
    X(reserve, "PHYSMEM_MALLOC_RESERVE", count, "0",                                          \
      "root: add N hugetlb pages (1 GiB; 2 MiB with backing 2m) at start, restored at exit")  \
    X(prefault, "PHYSMEM_MALLOC_PREFAULT", flag, "0",                                         \
      "1: populate each 2 MiB page when it is taken into use (MADV_POPULATE_WRITE)")          \
    X(lock, "PHYSMEM_MALLOC_LOCK", flag, "0",                                                 \
      "1: mlock each 2 MiB page when taken into use (locked pages are never purged)")         \
    X(purge_delay_ms, "PHYSMEM_MALLOC_PURGE_DELAY_MS", count, "50",                           \
      "ms an empty 2 MiB page (or a cached large span) waits before it is purged "             \
      "(MADV_DONTNEED) by the allocator's next calls (or malloc_trim)")                       \
    X(background_purge, "PHYSMEM_MALLOC_BACKGROUND_PURGE", flag, "0",                         \
      "1: a background thread purges what is due even while the program makes no calls "      \
      "(started when something waits, exits when idle)")                                      \
    X(thp_after_mb, "PHYSMEM_MALLOC_THP_AFTER_MB", count, "16",                               \
      "THP backing: the heap stays on 4 KiB pages until this many MiB of 2 MiB pages hold "   \
      "data, then turns huge (0: huge from the start)")                                       \
    X(stagger, "PHYSMEM_MALLOC_STAGGER", flag, "1",                                           \
      "1: place large objects (> 60 KiB) at distinct 64-byte offsets in the size-class slack")\
    X(verbose, "PHYSMEM_MALLOC_VERBOSE", flag, "0", "1: print arenas and reservations")       \
    X(stats, "PHYSMEM_MALLOC_STATS", flag, "0", "1: print pm_stats on stderr at exit")        \
    X(help, "PHYSMEM_MALLOC_HELP", flag, "0", "1: list these options on stderr at start")

namespace physmem::malloc {

// The allocator's rungs, best first (values match pm_stats_t::backing).
enum class Rung : std::uint8_t { best = 0, page_1g = 1, page_2m = 2, thp = 3, page_4k = 4 };

struct Options {
#define PM_FIELD_backing Rung
#define PM_FIELD_count std::uint64_t
#define PM_FIELD_flag bool
#define PM_DECLARE(field, env, kind, def, help) PM_FIELD_##kind field{};
    PM_MALLOC_OPTIONS(PM_DECLARE)
#undef PM_DECLARE
};

// Defaults overridden by the environment; bad values reported on stderr.
// Safe before constructors run: no heap allocation.
void read_options(Options& out) noexcept;

// Stderr output without stdio buffers or heap allocation, printf-style (≤ 512 bytes).
void say(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

// "physmem: fatal: <message>" on stderr, then abort(). The one way corruption is reported.
[[noreturn]] void fatal(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace physmem::malloc
