// lab/stack/thread.hpp — running code on a thread with a stack of a given size, and
// finding out, without crashing the caller, whether it fits.
//
// The threads are created with pthread_create, which a -fsplit-stack link wraps
// (libgcc's __wrap_pthread_create): the new thread's split-stack limit is set 16000
// bytes below its first frame, whatever its real size, and its segments are released
// when it exits.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace lab::stack {

// Runs f on a new thread whose stack is exactly stack_bytes (pthread_attr_setstacksize;
// glibc keeps its descriptor and static TLS inside it) and waits for it. Exceptions
// thrown by f are rethrown here. Throws std::runtime_error when the thread cannot be made.
void run_on_thread(std::size_t stack_bytes, const std::function<void()>& f);

// What a run in a child process gave.
struct ChildRun {
    bool completed = false;  // the child exited 0
    int signal = 0;          // the signal that killed it (SIGSEGV on a stack overflow), or 0
};

// Forks; the child runs f on a thread of stack_bytes (no core dump) and exits 0. The
// caller survives whatever f does. pre: called before the process starts threads of its own.
ChildRun run_in_child(std::size_t stack_bytes, const std::function<void()>& f);

// The largest d in [0, hi] for which fits(d) holds, by bisection. pre: fits(0); fits is
// monotone (true up to some depth, false beyond).
std::size_t largest_fitting(std::size_t hi, const std::function<bool(std::size_t)>& fits);

// "SIGSEGV", or the number for signals without a name here.
std::string signal_name(int sig);

}  // namespace lab::stack
