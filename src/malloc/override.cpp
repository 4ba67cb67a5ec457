// src/malloc/override.cpp — the C allocation API, exported from libphysmem.so.
// One-line forwarders into the pm_* implementation (api.cpp); malloc and free inline the
// fast paths of fast.hpp. Built only into the shared
// library: the static core used by the unit tests leaves the process's malloc alone.
#include <malloc.h>

#include <cerrno>
#include <climits>
#include <cstddef>

#include "malloc/fast.hpp"
#include "physmem.h"

#define PM_EXPORT extern "C" __attribute__((visibility("default")))

// The two fast paths start on a 64-byte boundary, so their speed does not depend on how
// much code the link places before them (churn_bench lifo/fifo moved by ~5% with that
// alone: same instructions, entry 64-byte aligned or not).
#define PM_FAST_ENTRY __attribute__((aligned(64)))
PM_EXPORT PM_FAST_ENTRY void* malloc(size_t n) noexcept { return physmem::malloc::malloc_fast(n); }
PM_EXPORT PM_FAST_ENTRY void free(void* p) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void* calloc(size_t c, size_t n) noexcept { return pm_calloc(c, n); }
PM_EXPORT void* realloc(void* p, size_t n) noexcept { return pm_realloc(p, n); }
PM_EXPORT void* reallocarray(void* p, size_t c, size_t n) noexcept {
    size_t total;
    if (__builtin_mul_overflow(c, n, &total)) { errno = ENOMEM; return nullptr; }
    return pm_realloc(p, total);
}
PM_EXPORT int posix_memalign(void** out, size_t a, size_t n) noexcept { return pm_posix_memalign(out, a, n); }
PM_EXPORT void* aligned_alloc(size_t a, size_t n) noexcept { return pm_aligned_alloc(a, n); }
PM_EXPORT void* memalign(size_t a, size_t n) noexcept { return physmem::malloc::memalign_impl(a, n); }
PM_EXPORT void* valloc(size_t n) noexcept { return pm_aligned_alloc(4096, n); }
PM_EXPORT void* pvalloc(size_t n) noexcept {
    size_t rounded = (n + 4095) & ~size_t{4095};
    if (rounded < n) { errno = ENOMEM; return nullptr; }
    return pm_aligned_alloc(4096, rounded ? rounded : 4096);
}
PM_EXPORT size_t malloc_usable_size(void* p) noexcept { return pm_usable_size(p); }
PM_EXPORT void cfree(void* p) noexcept { physmem::malloc::free_fast(p); }

// glibc's introspection and tuning calls, answered for physmem's heap (glibc's own would
// describe a heap physmem does not use).

// Gives back everything that can go now: this thread's cache, every cached large span and
// every empty huge page (what the purge delay would give back later). `pad` is ignored.
// 1 when memory was given back, else 0.
PM_EXPORT int malloc_trim(size_t) noexcept {
    pm_stats_t before, after;
    pm_stats(&before);
    pm_collect(1);
    pm_stats(&after);
    return after.bytes_purged > before.bytes_purged || after.bytes_mapped < before.bytes_mapped;
}

namespace {
size_t clamp_int(size_t v) { return v > INT_MAX ? INT_MAX : v; }
}

// arena: bytes of pages in use (arena pages and direct mappings); hblks and hblkhd: the
// direct mappings (objects of 256 MiB and more, each mapped on its own) and their bytes —
// glibc counts every mmapped chunk there, from 128 KiB up (its threshold moves), physmem
// only the blocks it maps on their own; uordblks: bytes of small objects out of the
// central lists (handed out or in thread caches) and of live large requests; fordblks:
// arena - uordblks; keepcost: bytes of empty huge pages not yet purged. Other fields are
// 0 (glibc's fastbin and arena counts describe a heap physmem does not have).
PM_EXPORT struct mallinfo2 mallinfo2() noexcept {
    pm_stats_t s;
    pm_stats(&s);
    struct mallinfo2 m{};
    m.hblks = s.direct_mappings;
    m.hblkhd = s.bytes_direct;
    m.arena = s.bytes_in_use;
    m.uordblks = s.bytes_small_outstanding + s.bytes_requested_large;
    m.fordblks = m.arena > m.uordblks ? m.arena - m.uordblks : 0;
    m.keepcost = s.huge_pages_empty * physmem::malloc::kHuge;
    return m;
}

PM_EXPORT struct mallinfo mallinfo() noexcept {
    struct mallinfo2 m = mallinfo2();
    struct mallinfo o{};
    o.arena = static_cast<int>(clamp_int(m.arena));
    o.hblks = static_cast<int>(clamp_int(m.hblks));
    o.hblkhd = static_cast<int>(clamp_int(m.hblkhd));
    o.uordblks = static_cast<int>(clamp_int(m.uordblks));
    o.fordblks = static_cast<int>(clamp_int(m.fordblks));
    o.keepcost = static_cast<int>(clamp_int(m.keepcost));
    return o;
}

// glibc's tuning parameters change nothing here (physmem has no brk heap to trim, no
// per-arena limits, no fastbins and its own mmap threshold; its settings are the
// PHYSMEM_MALLOC_* environment options), but the return value is glibc 2.36's, so code
// that checks it behaves as under glibc: 0 for M_MXFAST outside 0 .. 160 (80 *
// sizeof(size_t) / 4), which glibc refuses; 1 for everything else, unknown parameters
// included (glibc's switch has no default case). Checked against the C library's own
// mallopt by tests/malloc/preload_adversarial.cpp (mallopt).
PM_EXPORT int mallopt(int param, int value) noexcept {
    constexpr int kMaxFast = 80 * static_cast<int>(sizeof(size_t)) / 4;
    return param == M_MXFAST ? value >= 0 && value <= kMaxFast : 1;
}

PM_EXPORT void malloc_stats() noexcept { pm_print_stats(); }
