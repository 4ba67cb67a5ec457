// src/port/thread.cpp — starting a detached helper thread, fork handlers, and the coarse
// clock's tick (see os.hpp). Used by the pool's background give-back.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cstdint>

#include "port/os.hpp"

namespace physmem::os {

int start_thread(void* (*fn)(void*), void* arg, const char* name) noexcept {
    pthread_attr_t attr;
    if (int rc = ::pthread_attr_init(&attr)) return rc;
    ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);  // the new thread inherits the full mask
    pthread_t t;
    int rc = ::pthread_create(&t, &attr, fn, arg);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::pthread_attr_destroy(&attr);
    if (rc == 0) ::pthread_setname_np(t, name);
    return rc;
}

int at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept {
    return ::pthread_atfork(prepare, parent, child);
}

std::uint64_t monotonic_resolution_ns() noexcept {
    struct timespec ts;
    if (::clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0) return 10'000'000;
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace physmem::os
