// src/malloc/override.cpp — the C allocation API, exported from libphysmem.so.
// One-line forwarders into the pm_* implementation (api.cpp); malloc and free inline the
// fast paths of fast.hpp. Built only into the shared
// library: the static core used by the unit tests leaves the process's malloc alone.
#include <cerrno>
#include <cstddef>

#include "malloc/fast.hpp"
#include "physmem.h"

namespace physmem::malloc {
void* memalign_impl(size_t alignment, size_t size) noexcept;
}

#define PM_EXPORT extern "C" __attribute__((visibility("default")))

PM_EXPORT void* malloc(size_t n) noexcept { return physmem::malloc::malloc_fast(n); }
PM_EXPORT void free(void* p) noexcept { physmem::malloc::free_fast(p); }
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
