// src/pool/give_back_thread.hpp — the process's one background give-back thread, for
// every BlockPool (TCMalloc's background release, jemalloc's background_thread).
//
// A pool whose empty pages wait for their delay schedules itself here with the time its
// oldest empty page is due; the thread sleeps on a condition variable until the earliest
// due time (no wake-ups while nothing is pending) and then visits that pool
// (BlockPool::give_back_in_background), which gives back what is due and schedules itself
// again for the next empty page, if any. Started on the first schedule(): a program that
// never frees has no thread.
//
// Locking. Two locks, always taken in the order pool mutex, then this registry's mutex:
// a pool schedules under its own lock; the thread takes a pool's lock only while it holds
// no registry lock (it marks the pool `visiting_` first).
// Destruction. ~BlockPool calls forget(), which waits while the thread visits that pool
// and then drops its entry under the registry lock: afterwards the thread cannot reach it.
// Fork. The prepare handler takes the registry lock and waits until the thread visits no
// pool, so no pool lock is held by the thread when the process is copied, and until a
// thread just created has entered run(): while a thread starts, the C library and whatever
// wraps it work on its behalf under their own locks (GCC 12's libasan: AsanThread::Init
// allocates under a size-class lock of its allocator, and registers no fork handler), and a
// fork then hands those locks, held, to a child that hangs at its first allocation of that
// size (seen as BackgroundGiveBack.ForkWhilePagesWait failing under ASan: the child's
// thread stuck in SizeClassAllocator64::GetFromAllocator; the malloc's purger had the same
// defect, src/malloc/purge.cpp). The child reinitialises the locks, knows it has no thread,
// bumps generation() (so its pools schedule again) and starts its own thread on its first
// schedule().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "physmem/pool.hpp"

namespace physmem {

class BlockPool::Background {
  public:
    // The registry; created on first use (in static storage, no allocation), never
    // destroyed (the thread may outlive static destructors). Registers the fork handlers.
    static Background& instance() noexcept;

    // pool's oldest empty page is due at due_ns (os::monotonic_ns's clock). Starts the
    // thread when none runs. false when the thread cannot run (could not be started, or
    // no memory for the entry): the pool gives back at its next call, as without it.
    // pre: the caller holds pool's mutex.
    bool schedule(BlockPool* pool, std::uint64_t due_ns) noexcept;
    // Returns once the thread is not visiting pool and will never visit it again (its entry
    // is gone). pre: the caller does not hold pool's mutex, and nothing calls pool any more.
    void forget(BlockPool* pool) noexcept;
    // Bumped in each fork child: a pool scheduled under an older generation schedules
    // again (the child's thread does not exist yet).
    std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_relaxed); }
    // true while the thread runs (tests; it is started on the first schedule()).
    bool running() const noexcept;

  private:
    struct Entry {
        BlockPool* pool;
        std::uint64_t due_ns;
    };
    Background() noexcept;
    static void* thread_main(void*) noexcept;
    void run() noexcept;
    static void prepare_fork() noexcept;
    static void parent_after_fork() noexcept;
    static void child_after_fork() noexcept;

    mutable std::mutex mutex_;
    std::condition_variable work_;  // an entry was added, or a fork finished
    std::condition_variable done_;  // visiting_ went back to nullptr
    std::vector<Entry> entries_;    // one per pool with pending empty pages
    BlockPool* visiting_ = nullptr; // the pool the thread is in, outside mutex_
    bool started_ = false;
    bool entered_ = false;          // the started thread runs run() (its start is over)
    bool start_failed_ = false;     // the thread could not start: not again in this process
    bool fork_safe_ = false;        // the fork handlers are registered (else no thread)
    bool forking_ = false;          // between prepare and parent: visit nothing
    std::atomic<std::uint64_t> generation_{0};
    std::uint64_t tick_ns_;         // resolution of os::monotonic_ns
};

// The PHYSMEM_BACKGROUND_GIVE_BACK row of the option table read from the environment
// (default on): every pool's constructor asks. Throws std::invalid_argument naming the
// variable for a value that is not a flag. Defined in options.cpp.
bool background_give_back_from_env();

}  // namespace physmem
