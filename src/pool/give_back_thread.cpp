// src/pool/give_back_thread.cpp — the background give-back thread and its registry of
// pools with pending empty pages (contracts in give_back_thread.hpp).
#include "give_back_thread.hpp"

#include <algorithm>
#include <chrono>
#include <new>

#include "port/os.hpp"

namespace physmem {

// In static storage, never destroyed (see the header); making it allocates nothing.
BlockPool::Background& BlockPool::Background::instance() noexcept {
    alignas(Background) static unsigned char storage[sizeof(Background)];
    static Background* the = new (storage) Background;
    return *the;
}

// Without fork handlers a fork could copy a pool lock held by the thread: no thread then.
BlockPool::Background::Background() noexcept : tick_ns_(os::monotonic_resolution_ns()) {
    fork_safe_ = os::at_fork(prepare_fork, parent_after_fork, child_after_fork) == 0;
}

bool BlockPool::Background::schedule(BlockPool* pool, std::uint64_t due_ns) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!started_) {
        if (!fork_safe_ || start_failed_ || os::start_thread(thread_main, this, "physmem-bg-give") != 0) {
            start_failed_ = true;
            return false;
        }
        started_ = true;
    }
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.pool == pool; });
    if (it != entries_.end()) {
        it->due_ns = std::min(it->due_ns, due_ns);
    } else {
        try {
            entries_.push_back({pool, due_ns});
        } catch (const std::bad_alloc&) {
            return false;
        }
    }
    work_.notify_one();
    return true;
}

void BlockPool::Background::forget(BlockPool* pool) noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return visiting_ != pool; });
    std::erase_if(entries_, [&](const Entry& e) { return e.pool == pool; });
}

bool BlockPool::Background::running() const noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    return started_;
}

void* BlockPool::Background::thread_main(void* self) noexcept {
    static_cast<Background*>(self)->run();
    return nullptr;
}

// Sleeps until the earliest entry is due (by the coarse clock: the wait ends one tick
// after, so the pool finds the page due), then visits that pool without the registry lock.
void BlockPool::Background::run() noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    entered_ = true;  // a fork may copy the process now (prepare_fork waits for it)
    done_.notify_all();
    for (;;) {
        if (forking_ || entries_.empty()) {
            work_.wait(lock);
            continue;
        }
        auto first = std::min_element(entries_.begin(), entries_.end(),
                                      [](const Entry& a, const Entry& b) { return a.due_ns < b.due_ns; });
        if (first->due_ns > os::monotonic_ns()) {
            // steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux), the coarse clock's base.
            std::chrono::steady_clock::time_point at{std::chrono::nanoseconds(first->due_ns + tick_ns_)};
            work_.wait_until(lock, at);
            continue;
        }
        BlockPool* pool = first->pool;
        entries_.erase(first);
        visiting_ = pool;
        lock.unlock();
        pool->give_back_in_background();
        lock.lock();
        visiting_ = nullptr;
        done_.notify_all();
    }
}

// The forking thread keeps the registry lock across fork(), once the thread has started
// and is between visits: no pool lock, and no lock its start takes, is held by the thread
// in the copied process.
void BlockPool::Background::prepare_fork() noexcept {
    Background& b = instance();
    std::unique_lock<std::mutex> lock(b.mutex_);
    b.forking_ = true;
    b.done_.wait(lock, [&] { return b.visiting_ == nullptr && (!b.started_ || b.entered_); });
    lock.release();  // unlocked by parent_after_fork / reinitialised by child_after_fork
}

void BlockPool::Background::parent_after_fork() noexcept {
    Background& b = instance();
    b.forking_ = false;
    b.mutex_.unlock();
    b.work_.notify_one();
}

// The child has one thread, the forking one. The condition variables may record the
// parent's sleeping thread as a waiter: they are made anew, as is the lock.
void BlockPool::Background::child_after_fork() noexcept {
    Background& b = instance();
    new (&b.mutex_) std::mutex;
    new (&b.work_) std::condition_variable;
    new (&b.done_) std::condition_variable;
    b.forking_ = false;
    b.started_ = false;
    b.entered_ = false;
    b.start_failed_ = false;
    b.generation_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace physmem
