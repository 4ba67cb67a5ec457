// src/malloc/purge.cpp — the decay: giving back to the system what has been unused for
// the purge delay (PHYSMEM_MALLOC_PURGE_DELAY_MS). Two things wait for it: empty huge
// pages (hugepage.cpp) and freed large spans kept in the large cache (large.cpp). This
// file sits above both and drives both: a purge round expires the large cache (whose
// spans go back through placement.cpp, their emptied huge pages onto the empty list) and
// then purges the empty huge pages that are due. The layers below only raise the "purge
// is due" flag (heap_note_purge_due, heap.cpp); they never call up into this file.
//
// By default no thread: what is due is purged by the allocator's own calls (every span
// operation purges the empty pages due on the way, and free's slow paths run a round at
// most once per purge_delay_ms / 2), as jemalloc and mimalloc do without a background
// thread. A program stays the single-threaded program it was (unshare(CLONE_NEWUSER),
// fork, seccomp filters see no extra thread); an idle program keeps what it freed until its
// next call or malloc_trim.
//
// The purger. PHYSMEM_MALLOC_BACKGROUND_PURGE=1 asks for a thread, which also purges while
// the program makes no calls. Why a thread and not a timer signal: a signal would interrupt
// the program's system calls (EINTR) and run our code inside arbitrary program code; a
// thread only competes for the heap lock. It is started lazily, the first time something
// waits for the purge delay (an empty huge page, a cached large span), from a point where no
// allocator lock is held (heap_poke_purger); it wakes every purge_delay_ms / 2 (1 ms ..
// 1 s), purges what is due, and exits as soon as nothing waits. It runs with all signals
// blocked, on a stack of the default size (which glibc makes room for the program's static
// TLS in), is never waited for by exit(), and holds no lock while sleeping. Fork: the
// child has no purger (heap_purger_reset_after_fork clears the flag) and starts its own
// the same lazy way.
//
// Fork and the purger's start and exit (issue 11 item 10). While a thread is being
// created or is ending, the C library and whatever wraps it run on its behalf, under their
// own locks; a fork at that moment hands those locks, held, to a child in which no thread
// will release them. glibc resets its own in the child; GCC 12's libasan registers no fork
// handler at all, so a fork while a purger started (AsanThread::Init: calloc/free in
// pthread_getattr_np, under a size-class lock of ASan's allocator) or ended (its allocator
// cache drained) hung the child at its first new thread, in
// SizeClassAllocator64::GetFromAllocator (Threads.ForkInAMultithreadedProgram). The
// program's own threads are the program's business; this one is ours, so its start and
// exit never overlap a fork: g_purger_lock, taken first by fork_prepare, is held by
// start_purger until the new thread runs purger_main, and by a purger leaving purger_main
// while it records itself in g_exited. fork_prepare (and the next start or exit) joins
// that thread; pthread_join returns once its exit is complete, so the purger is joinable,
// not detached. A purger never starts one (t_is_purger): a thread joined under the lock
// never needs the lock.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cerrno>

#include "malloc/heap.hpp"

namespace physmem::malloc {

namespace {

std::atomic<bool> g_purger_running{false};  // a purger thread exists (or is being created)
SpinLock g_purger_lock;                     // a purger starts or exits; held across fork
std::atomic<bool> g_purger_entered{false};  // the purger being started runs purger_main
pthread_t g_exited;                         // under g_purger_lock: a purger that returned
bool g_exited_valid = false;                //   from purger_main and is not joined yet
thread_local bool t_is_purger = false;

// pre: g_purger_lock held. Waits until the purger that last returned has fully exited.
void join_exited_purger() noexcept {
    if (!g_exited_valid) return;
    pthread_join(g_exited, nullptr);
    g_exited_valid = false;
}

void sleep_ms(std::uint64_t ms) noexcept {
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

// One round: purges what is due; true while something still waits.
bool purge_round() noexcept {
    g_purge_due.store(false);
    bool more = large_cache_expire(false) > 0;
    LockGuard g(H.lock);
    maybe_purge(false);
    return more || !H.empty.empty();
}

// How often what is due is looked for: half the delay, 1 ms .. 1 s.
std::uint64_t purge_period_ms() noexcept {
    std::uint64_t period = g_opt.purge_delay_ms / 2;
    return period < 1 ? 1 : (period > 1000 ? 1000 : period);
}

void* purger_main(void*) {
    t_is_purger = true;
    g_purger_entered.store(true);  // start_purger may let a fork happen now
    for (;;) {
        sleep_ms(purge_period_ms());
        if (purge_round()) continue;
        g_purger_running.store(false);
        // Queued between the round and the store above? Then carry on (Dekker-style with
        // heap_poke_purger: flag stores and loads are sequentially consistent).
        bool idle = false;
        if (g_purge_due.load() && g_purger_running.compare_exchange_strong(idle, true)) continue;
        // Leaving: from here until the thread is gone a fork must wait (see above).
        LockGuard g(g_purger_lock);
        join_exited_purger();  // an earlier purger nobody joined yet
        g_exited = pthread_self();
        g_exited_valid = true;
        return nullptr;
    }
}

void start_purger() noexcept {
    LockGuard g(g_purger_lock);  // no fork until the new thread runs our code
    join_exited_purger();
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) { g_purger_running.store(false); return; }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);  // the new thread inherits the mask
    g_purger_entered.store(false);
    pthread_t t;
    int rc = pthread_create(&t, &attr, purger_main, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    if (rc != 0) { g_purger_running.store(false); return; }  // retried at the next poke
    while (!g_purger_entered.load()) os::yield();
}

}  // namespace

void heap_poke_purger() noexcept {
    if (!g_purge_due.load(std::memory_order_relaxed) || t_is_purger) return;
    if (g_init_state.load(std::memory_order_acquire) != 2) return;
    if (!g_opt.background_purge) {  // decay driven by the program's own calls
        static std::atomic<std::uint64_t> next_ns{0};
        std::uint64_t now = os::monotonic_ns(), due = next_ns.load(std::memory_order_relaxed);
        if (now < due || !next_ns.compare_exchange_strong(due, now + purge_period_ms() * 1000000ull))
            return;
        if (purge_round()) g_purge_due.store(true);
        return;
    }
    if (g_purger_running.load()) return;
    bool idle = false;
    if (g_purger_running.compare_exchange_strong(idle, true)) start_purger();
}

void heap_collect(bool force) noexcept {
    large_cache_expire(force);
    LockGuard g(H.lock);
    maybe_purge(force);
}

void heap_purger_lock_for_fork() noexcept {
    g_purger_lock.lock();
    join_exited_purger();
}
void heap_purger_unlock_after_fork() noexcept { g_purger_lock.unlock(); }
void heap_purger_reset_after_fork() noexcept {
    g_purger_lock.reset();
    g_exited_valid = false;
    g_purger_running.store(false);  // the parent's purger does not exist here
    g_purge_due.store(true);
}

}  // namespace physmem::malloc
