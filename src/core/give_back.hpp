// src/core/give_back.hpp — the give-back delay: one default and one meaning for the pool
// (PoolOptions::give_back_delay_ms, PHYSMEM_GIVE_BACK_DELAY_MS) and the drop-in malloc
// (PHYSMEM_MALLOC_PURGE_DELAY_MS), and the one test of "empty long enough".
//
// Meaning. A give-back unit (a pool page: the backing's huge page, 2 MiB at least; a
// malloc 2 MiB page; a large span in the malloc's cache) that has been empty for at least
// the delay may be given back to the system (MADV_DONTNEED); before that it stays
// resident, so a unit emptied and filled again within the delay costs no page faults and
// no zeroing. It goes back at the first look after the delay: the pool's background thread
// (on by default) or the pool's next call; the malloc's own later calls, or its purger
// thread when asked for (the malloc starts no thread by default). 0: at the first look.
//
// Default: 100 ms on both sides. Both give back the same unit (2 MiB or more), so the
// trade-off is the same: long enough that a program freeing and refilling in bursts
// (a request, a phase of a loop) keeps its pages instead of faulting them in again, short
// enough that an idle program is back at its live size well within a second (the goal of
// issue 25). 100 ms is the pool's value (its give-back tests and the lab's giveback suite
// were measured with it); the malloc used 50 ms until the two were made one: its empty
// pages now wait 50 ms longer, and its free-driven purge rounds (one per delay / 2) come
// half as often.
//
// Allocation-free, inline: the malloc includes it.
#pragma once

#include <cstdint>

// The default as written in the environment, for the option tables (the malloc's table
// uses it; the pool's public table and PoolOptions are checked against it at compile
// time in src/pool/options.cpp, as public headers cannot include src/core).
#define PHYSMEM_GIVE_BACK_DELAY_MS_DEFAULT "100"

namespace physmem::core {

namespace detail {
constexpr std::uint64_t digits(const char* s) noexcept {
    std::uint64_t v = 0;
    for (; *s; ++s) v = v * 10 + static_cast<std::uint64_t>(*s - '0');
    return v;
}
}  // namespace detail

// The default as a number (from the one declaration above).
inline constexpr std::uint64_t kGiveBackDelayMs = detail::digits(PHYSMEM_GIVE_BACK_DELAY_MS_DEFAULT);
// The longest delay either accepts: one day (a longer wait is not a delay; the product in
// nanoseconds would also wrap past about 584 years). The malloc's limits table repeats the
// literal (a macro table); a static_assert there ties it to this one.
inline constexpr std::uint64_t kMaxGiveBackDelayMs = 24ull * 60 * 60 * 1000;

// pre: delay_ms at most 2^64 / 10^6 ms (both option tables bound it far below).
constexpr std::uint64_t delay_ns(std::uint64_t delay_ms) noexcept { return delay_ms * 1000000u; }

// When a unit empty since empty_since_ns (os::monotonic_ns's clock) becomes due.
constexpr std::uint64_t give_back_due_ns(std::uint64_t empty_since_ns, std::uint64_t delay_ms) noexcept {
    return empty_since_ns + delay_ns(delay_ms);
}

// Has a unit empty since empty_since_ns been empty for delay_ms at now_ns? A unit emptied
// after now_ns (another thread stamped it after the caller read the clock) is not.
constexpr bool empty_long_enough(std::uint64_t empty_since_ns, std::uint64_t now_ns,
                                 std::uint64_t delay_ms) noexcept {
    return empty_since_ns <= now_ns && now_ns - empty_since_ns >= delay_ns(delay_ms);
}

}  // namespace physmem::core
