// src/malloc/options.hpp — every run-time option of the drop-in allocator, declared once.
//
// The allocator's front-end on the core's option machinery (src/core/options.hpp: the
// same declaration format and parsers as the pool's table). Parsed straight from getenv
// at the first allocation (no std::string: the heap does not exist yet). Error policy: a
// value that does not parse is reported on stderr, naming the variable, and the default
// is used; an empty value counts as unset.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/backing.hpp"
#include "core/fatal.hpp"
#include "core/give_back.hpp"
#include "core/options.hpp"

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
    X(purge_delay_ms, "PHYSMEM_MALLOC_PURGE_DELAY_MS", count,                                 \
      PHYSMEM_GIVE_BACK_DELAY_MS_DEFAULT,                                                     \
      "ms an empty 2 MiB page (or a cached large span) waits before it is purged "             \
      "(MADV_DONTNEED) by the allocator's next calls (or malloc_trim); the pool's delay "     \
      "(core/give_back.hpp)")                                                                 \
    X(background_purge, "PHYSMEM_MALLOC_BACKGROUND_PURGE", flag, "0",                         \
      "1: a background thread purges what is due even while the program makes no calls "      \
      "(started when something waits, exits when idle)")                                      \
    X(thp_after_mb, "PHYSMEM_MALLOC_THP_AFTER_MB", count, "16",                               \
      "THP backing: the heap stays on 4 KiB pages until this many MiB of 2 MiB pages hold "   \
      "data, then turns huge (0: huge from the start)")                                       \
    X(stagger, "PHYSMEM_MALLOC_STAGGER", flag, "1",                                           \
      "1: place large objects (> 60 KiB) at distinct 64-byte offsets in the size-class slack")\
    X(sparse, "PHYSMEM_MALLOC_SPARSE", flag, "1",                                             \
      "1: a large size class whose blocks are touched sparsely (a sampled block's resident "  \
      "pages, mincore) goes on 4 KiB pages, not huge ones; 0: large objects on huge pages")   \
    X(verbose, "PHYSMEM_MALLOC_VERBOSE", flag, "0", "1: print arenas and reservations")       \
    X(stats, "PHYSMEM_MALLOC_STATS", flag, "0", "1: print pm_stats on stderr at exit")        \
    X(help, "PHYSMEM_MALLOC_HELP", flag, "0", "1: list these options on stderr at start")

// The accepted range of each count option: a larger value is refused with a message
// naming the variable, and the default is kept (never a wrap-around: each bound keeps the
// arithmetic done with the value inside 64 bits, with room to spare).
//  X(field,          largest accepted, what the bound is)
#define PM_MALLOC_LIMITS(X)                                                               \
    X(reserve, 65536, "pages")                                                            \
    X(purge_delay_ms, 86400000, "ms (one day: the pool's limit, core/give_back.hpp)")      \
    X(thp_after_mb, 16777216, "MiB (16 TiB)")

namespace physmem::malloc {

// The allocator's rungs: the core's ladder (values match pm_stats_t::backing).
using Rung = physmem::Backing;

struct Options {
    PM_MALLOC_OPTIONS(PHYSMEM_OPTION_FIELD)
};

// Defaults overridden by the environment; bad values reported on stderr.
// Safe before constructors run: no heap allocation.
void read_options(Options& out) noexcept;

// The core's stderr writer and corruption report (src/core/fatal.hpp), under the names
// the allocator's files use.
using core::fatal;
using core::say;

}  // namespace physmem::malloc
