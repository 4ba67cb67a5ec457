// src/malloc/heap.cpp — the heap state and its lock: the one Heap H (heap.hpp) that
// meta.cpp, arena.cpp, hugepage.cpp, filler.cpp, placement.cpp and stats.cpp work on under
// H.lock; the "purge is due" flag the layers below purge.cpp raise; the SpinLock.
// Everything on the heap runs under the one heap lock; the thread caches in thread_cache.cpp keep
// that lock off the small-object fast path.
#include "malloc/heap.hpp"

namespace physmem::malloc {

constinit Heap H{};
std::atomic<bool> g_purge_due{false};

namespace {
// A thread's mark for SpinLock's holder: the address of its own copy of this byte.
__thread char t_mark __attribute__((tls_model("initial-exec")));

[[noreturn, gnu::cold, gnu::noinline]] void lock_reentered() noexcept {
    fatal("an allocator call re-entered the allocator on the same thread (from a signal "
          "handler that interrupted malloc/free, or a hook that allocates); that would "
          "deadlock");
}
}  // namespace

void SpinLock::lock() noexcept {
    for (;;) {
        const void* holder = nullptr;
        if (holder_.compare_exchange_strong(holder, &t_mark, std::memory_order_acquire, std::memory_order_relaxed))
            return;
        if (holder == &t_mark) lock_reentered();
        for (unsigned spins = 0; holder_.load(std::memory_order_relaxed); ++spins) {
            if (spins < 100) __builtin_ia32_pause();
            else os::yield();
        }
    }
}

bool heap_discard(std::uintptr_t start, std::size_t bytes) noexcept {
    if (os::discard(reinterpret_cast<void*>(start), bytes) == 0) return true;
    H.discard_failures += 1;
    return false;
}

void heap_lock(std::uintptr_t start, std::size_t bytes) noexcept {
    int err = os::lock(reinterpret_cast<void*>(start), bytes);
    if (err == 0) return;
    std::size_t limit = os::memlock_limit();  // SIZE_MAX: unlimited (printed as such)
    if (H.lock_failures++ == 0)
        say("physmem: PHYSMEM_MALLOC_LOCK=1: mlock of %zu KiB failed (errno %d; RLIMIT_MEMLOCK "
            "is %zu KiB, and locking more needs CAP_IPC_LOCK or a higher `ulimit -l`); memory "
            "the limit does not cover stays unlocked (pm_stats: lock_failures)\n",
            bytes >> 10, err, limit == SIZE_MAX ? limit : limit >> 10);
}

void heap_init() noexcept {
    H.last_rung = Rung::best;
    H.thp_on = g_opt.thp_after_mb == 0;
}

void heap_lock_all() noexcept { H.lock.lock(); }
void heap_unlock_all() noexcept { H.lock.unlock(); }
void heap_reset_all() noexcept {
    H.lock.reset();
    H.reserved = 0;  // the parent restores nr_hugepages, not the child
}

}  // namespace physmem::malloc
