// src/malloc/new_delete.cpp — every replaceable C++ operator new/delete, exported from
// libphysmem.so. Throwing forms follow [new.delete.single]: on failure call the
// new-handler and retry, throw std::bad_alloc when there is none. The nothrow forms
// return nullptr instead (a handler that throws bad_alloc ends the loop too).
#include <new>

#include "malloc/fast.hpp"
#include "physmem.h"

#define PM_EXPORT __attribute__((visibility("default")))

namespace {

void* alloc(std::size_t n, std::size_t align) noexcept {
    return align <= 16 ? physmem::malloc::malloc_fast(n) : pm_aligned_alloc(align, n);
}

[[gnu::noinline]] void* alloc_or_throw(std::size_t n, std::size_t align) {
    for (;;) {
        if (void* p = alloc(n, align)) return p;
        std::new_handler h = std::get_new_handler();
        if (!h) throw std::bad_alloc();
        h();
    }
}

inline void* alloc_throwing(std::size_t n, std::size_t align) {
    void* p = alloc(n, align);
    return __builtin_expect(p != nullptr, 1) ? p : alloc_or_throw(n, align);
}

void* alloc_nothrow(std::size_t n, std::size_t align) noexcept {
    try {
        return alloc_throwing(n, align);
    } catch (...) {
        return nullptr;
    }
}

constexpr std::size_t kPlain = 0;
std::size_t al(std::align_val_t a) noexcept { return static_cast<std::size_t>(a); }

}  // namespace

PM_EXPORT void* operator new(std::size_t n) { return alloc_throwing(n, kPlain); }
PM_EXPORT void* operator new[](std::size_t n) { return alloc_throwing(n, kPlain); }
PM_EXPORT void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return alloc_nothrow(n, kPlain); }
PM_EXPORT void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return alloc_nothrow(n, kPlain); }
PM_EXPORT void* operator new(std::size_t n, std::align_val_t a) { return alloc_throwing(n, al(a)); }
PM_EXPORT void* operator new[](std::size_t n, std::align_val_t a) { return alloc_throwing(n, al(a)); }
PM_EXPORT void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return alloc_nothrow(n, al(a)); }
PM_EXPORT void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return alloc_nothrow(n, al(a)); }

PM_EXPORT void operator delete(void* p) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete(void* p, std::size_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p, std::size_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete(void* p, std::align_val_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete(void* p, std::size_t, std::align_val_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { physmem::malloc::free_fast(p); }
PM_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { physmem::malloc::free_fast(p); }
