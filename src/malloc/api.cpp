// src/malloc/api.cpp — the pm_* entry points, lazy initialisation, fork and exit.
//
// The first call (possibly from the dynamic loader or another library's constructor,
// before ours has run) initialises everything without allocating: options from getenv,
// size classes, the thread-cache key. Fork: every lock is taken in the prepare handler
// and released in the parent; in the child (one thread) they are reset.
#include <pthread.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "malloc/fast.hpp"
#include "physmem.h"

namespace physmem::malloc {

constinit Options g_opt{};
constinit std::atomic<int> g_init_state{0};

namespace {

void fork_prepare() noexcept {
    heap_purger_lock_for_fork();  // first: a purger being started may be allocating
    cache_lock_all();
    large_lock_all();
    heap_lock_all();
}
void fork_parent() noexcept {
    heap_unlock_all();
    large_unlock_all();
    cache_unlock_all();
    heap_purger_unlock_after_fork();
}
void fork_child() noexcept {
    heap_reset_all();
    heap_purger_reset_after_fork();
    large_reset_all();
    cache_reset_all();
}

bool is_pow2(std::size_t x) noexcept { return x && !(x & (x - 1)); }

void* aligned_impl(std::size_t align, std::size_t size) noexcept {
    if (align <= 16) return pm_malloc(size);
    ensure_init();
    void* p = nullptr;
    if (size <= kSmallMax && align <= kPage) {
        std::size_t want = size > align ? size : align;
        unsigned cls = class_of(want);
        while (cls <= g_nclasses && g_classes[cls].size % align != 0) ++cls;
        if (cls <= g_nclasses) p = small_alloc(g_classes[cls].size, cls);
        else p = heap_large_alloc(size, align);
    } else {
        p = heap_large_alloc(size, align);
    }
    if (!p) errno = ENOMEM;
    return p;
}

// The span of a pointer the program holds; aborts unless p is a live object's start (a
// large object's start is checked here; a small one's by the caller's fast path or size).
Span* checked_span(const void* p, const char* what) noexcept {
    Span* s = span_of(p);
    if (!s || s->kind == Span::unused) foreign_pointer(p, what);
    if (s->kind != Span::small && (reinterpret_cast<std::uintptr_t>(p) != s->start + s->offset ||
                                   s->live.load(std::memory_order_relaxed) != 1))
        foreign_pointer(p, what);
    return s;
}

std::size_t usable(Span* s, const void* p) noexcept {
    return s->kind == Span::small ? s->size : large_usable(s, p);
}

}  // namespace

// fast.hpp's large-side slow paths.
void* large_alloc_errno(std::size_t size) noexcept {
    ensure_init();
    void* p = heap_large_alloc(size, 16);
    if (!p) errno = ENOMEM;
    return p;
}

void free_not_small(void* p) noexcept {
    if (!p) return;
    Span* s = span_of(p);
    if (!s || s->kind == Span::unused) foreign_pointer(p, "free");
    heap_large_free(s, p);  // small spans have page infos: never here
    heap_poke_purger();
}

void init_slow() noexcept {
    int expected = 0;
    if (!g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        while (g_init_state.load(std::memory_order_acquire) != 2) __builtin_ia32_pause();
        return;
    }
    read_options(g_opt);
    classes_init();
    heap_init();
    heap_reserve_at_start();
    cache_thread_init_key();
    g_init_state.store(2, std::memory_order_release);
    // May allocate: only now, with the allocator ready.
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

__attribute__((constructor)) static void on_load() { ensure_init(); }

__attribute__((destructor)) static void on_unload() {
    if (g_opt.stats) pm_print_stats();
    heap_restore_at_exit();
}

}  // namespace physmem::malloc

using namespace physmem::malloc;

extern "C" {

void* pm_malloc(size_t size) { return malloc_fast(size); }

void pm_free(void* p) { free_fast(p); }

void* pm_calloc(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return nullptr;
    }
    void* p = pm_malloc(total);
    if (!p) return p;
    // Pages never handed out since mapped or discarded read as zero: writing zeros would
    // only make them resident (a fresh large or direct object).
    if (total <= kSmallMax || !span_of(p)->zeroed) std::memset(p, 0, total);
    return p;
}

void* pm_realloc(void* p, size_t size) {
    if (!p) return pm_malloc(size);
    if (size == 0) {  // glibc's behaviour: free, return NULL
        pm_free(p);
        return nullptr;
    }
    Span* s = checked_span(p, "realloc");
    size_t have = usable(s, p);
    if (s->kind == Span::small && size <= kSmallMax && class_of(size) == s->cls) return p;
    if (s->kind != Span::small && size > kSmallMax)
        if (void* r = heap_large_resize(s, p, size)) return r;
    void* q = pm_malloc(size);
    if (!q) return nullptr;
    if (s->kind != Span::small) heap_large_before_copy(s);  // a density probe is judged unread
    std::memcpy(q, p, size < have ? size : have);
    if (s->kind == Span::small) pm_free(p);
    else {
        heap_large_free(s, p, false);
        heap_poke_purger();
    }
    return q;
}

int pm_posix_memalign(void** out, size_t alignment, size_t size) {
    if (!is_pow2(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
    int saved = errno;
    void* p = aligned_impl(alignment, size);
    errno = saved;
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void* pm_aligned_alloc(size_t alignment, size_t size) {
    if (!is_pow2(alignment)) {
        errno = EINVAL;
        return nullptr;
    }
    return aligned_impl(alignment, size);
}

size_t pm_usable_size(const void* p) {
    if (!p) return 0;
    // A small object's size is its class's, read from the page map's entry as free reads it,
    // without loading its span (programs that count their bytes, redis among them, ask
    // after every malloc and before every free: the span was one more cache miss each).
    if (std::uint32_t info = page_info_of(p)) {
        const SizeClass& c = g_classes[info & 0xff];
        if (is_object_start(c.odd_inverse, c.shift, c.nobj, span_offset(p, info))) return c.size;
    }
    return usable(checked_span(p, "malloc_usable_size"), p);
}

void pm_stats(pm_stats_t* out) {
    ensure_init();
    heap_stats(out);
    out->bytes_small_outstanding = cache_outstanding_bytes();
}

void pm_print_stats(void) {
    pm_stats_t s;
    pm_stats(&s);
    say("physmem: mapped %zu MiB, in use %zu MiB, on huge pages %zu MiB, resident~ %zu MiB; "
        "hugetlb 1g %zu, 2m %zu; thp pages %zu, 4k-rung pages %zu, empty %zu; purged %zu MiB "
        "(%zu pages); arenas %zu, direct %zu\n",
        s.bytes_mapped >> 20, s.bytes_in_use >> 20, s.bytes_huge >> 20, s.bytes_resident_est >> 20,
        s.hugetlb_1g_pages, s.hugetlb_2m_pages, s.thp_pages_in_use, s.small_pages_in_use,
        s.huge_pages_empty, s.bytes_purged >> 20, s.purges, s.arenas, s.direct_mappings);
}

void pm_collect(int force) {
    ensure_init();
    cache_flush_current();
    heap_collect(force != 0);
}

}  // extern "C"

// Internal to the library: shims in override.cpp / new_delete.cpp.
namespace physmem::malloc {
void* memalign_impl(size_t alignment, size_t size) noexcept {
    if (alignment <= 16) return pm_malloc(size);
    if (alignment > SIZE_MAX / 2 + 1) {  // no power of two of at least that: glibc's EINVAL
        errno = EINVAL;
        return nullptr;
    }
    if (!is_pow2(alignment)) alignment = std::size_t{1} << (64 - __builtin_clzll(alignment));
    return aligned_impl(alignment, size);
}
}  // namespace physmem::malloc
