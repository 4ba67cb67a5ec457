// src/malloc/new_delete.cpp — every replaceable C++ operator new/delete, exported from
// libphysmem.so, without linking the C++ runtime (the library's only dependency is libc:
// a C program, or a small one, does not load libstdc++ for it).
//
// Throwing forms follow [new.delete.single]: on failure call the new-handler and retry;
// with none, throw std::bad_alloc. The runtime pieces for that — std::get_new_handler and
// std::__throw_bad_alloc — are libstdc++'s, and this library does not link it. They are
// found when first needed, on the failure path only:
//   1. weak references, bound when the library was loaded: set in a C++ program;
//   2. dlsym(RTLD_DEFAULT): a runtime loaded later into the global scope;
//   3. dlopen(RTLD_NOLOAD) of libstdc++.so.6: a runtime loaded later in a local scope, as
//      the dependency of a C++ library a C program (or python via ctypes, or an executable
//      with its own static runtime) opened with dlopen — that library's operator new
//      resolves to ours, and its catch (std::bad_alloc&) expects that runtime's exception.
// With no runtime anywhere (a C program calling _Znwm by hand) failure aborts with a
// message. The nothrow forms return nullptr once there is no handler; a handler that
// throws propagates its exception (mimalloc's C build behaves the same way).
#include <dlfcn.h>

#include <cstddef>
#include <new>

#include "malloc/fast.hpp"
#include "physmem.h"

#define PM_EXPORT __attribute__((visibility("default")))

using new_handler_fn = void (*)();
extern "C" new_handler_fn pm_std_get_new_handler() noexcept __asm__("_ZSt15get_new_handlerv")
    __attribute__((weak));
extern "C" [[noreturn]] void pm_std_throw_bad_alloc() __asm__("_ZSt17__throw_bad_allocv")
    __attribute__((weak));

namespace {

void* alloc(std::size_t n, std::size_t align) noexcept {
    return align <= 16 ? physmem::malloc::malloc_fast(n) : pm_aligned_alloc(align, n);
}

// The C++ runtime's `name` (a mangled symbol), wherever it is loaded (steps 2 and 3 above);
// nullptr when none is. Not on any fast path: called once an allocation has failed.
void* runtime_symbol(const char* name) noexcept {
    if (void* f = dlsym(RTLD_DEFAULT, name)) return f;
    // The handle is kept (not dlclose'd): the runtime stays while a throw may use it.
    void* rt = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return rt ? dlsym(rt, name) : nullptr;
}

new_handler_fn current_handler() noexcept {
    if (pm_std_get_new_handler) return pm_std_get_new_handler();
    auto get = reinterpret_cast<new_handler_fn (*)() noexcept>(runtime_symbol("_ZSt15get_new_handlerv"));
    return get ? get() : nullptr;
}

[[noreturn]] void throw_bad_alloc(std::size_t n) {
    if (pm_std_throw_bad_alloc) pm_std_throw_bad_alloc();
    using throw_fn = void (*)();
    if (auto t = reinterpret_cast<throw_fn>(runtime_symbol("_ZSt17__throw_bad_allocv"))) t();
    physmem::malloc::fatal("operator new(%zu): out of memory, and no C++ runtime to throw "
                           "std::bad_alloc", n);
}

[[gnu::noinline]] void* alloc_or_throw(std::size_t n, std::size_t align) {
    for (;;) {
        if (void* p = alloc(n, align)) return p;
        new_handler_fn h = current_handler();
        if (!h) throw_bad_alloc(n);
        h();
    }
}

inline void* alloc_throwing(std::size_t n, std::size_t align) {
    void* p = alloc(n, align);
    return __builtin_expect(p != nullptr, 1) ? p : alloc_or_throw(n, align);
}

void* alloc_nothrow(std::size_t n, std::size_t align) noexcept {
    for (;;) {
        if (void* p = alloc(n, align)) return p;
        new_handler_fn h = current_handler();
        if (!h) return nullptr;
        h();
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
