// src/malloc/heap.cpp — the heap state and its lock: the one Heap H (heap.hpp) that
// meta.cpp, arena.cpp, hugepage.cpp, filler.cpp, placement.cpp and stats.cpp work on under
// H.lock; the "purge is due" flag the layers below purge.cpp raise; the SpinLock.
// Everything on the heap runs under the one heap lock; the thread caches in cache.cpp keep
// that lock off the small-object fast path.
#include "malloc/heap.hpp"

namespace physmem::malloc {

constinit Heap H{};
std::atomic<bool> g_purge_due{false};

void SpinLock::lock() noexcept {
    for (;;) {
        if (!held_.exchange(true, std::memory_order_acquire)) return;
        for (unsigned spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
            if (spins < 100) __builtin_ia32_pause();
            else os::yield();
        }
    }
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
