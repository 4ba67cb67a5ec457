// lab/stack/segments.hpp — watching and steering libgcc's split-stack segment allocator.
//
// What libgcc does (generic-morestack.c, gcc 12; read with the search tools): when a
// split-stack prologue finds too little stack, __morestack asks __generic_morestack for
// frame + 0xe00 bytes (0xe00: room left below the limit for __morestack itself and for
// non-split callees). If the thread's next segment exists and is big enough it is
// reused; otherwise allocate_segment maps a new one:
//   size = max(page, round_up(MINSIGSTKSZ + 56, page), round_up(request + 56, page))
// (56 = the segment header; MINSIGSTKSZ is sysconf(_SC_SIGSTKSZ) with glibc >= 2.34: four
// times the kernel's AT_MINSIGSTKSZ, the running CPU's signal frame, which grows with its
// xsave area, e.g. AVX-512 state; the record's stack.signal_stack says what this CPU gives
// and the segment it makes), with mmap issued through
// syscall(SYS_mmap, ...). Segments are kept when a function returns and unmapped
// (syscall(SYS_munmap, ...)) only when the thread exits. `page` is getpagesize(), read
// once at start-up (__morestack_load_mmap, a constructor). Signals are blocked and
// unblocked (two rt_sigprocmask calls) around every switch unless the thread calls
// __splitstack_block_signals. There is no other knob: no environment variable sets the
// segment size, and __morestack_allocate_stack_space serves alloca, not segments.
//
// libgcc.a is linked statically, so its calls to syscall and getpagesize can be wrapped
// at link time (-Wl,--wrap=syscall,--wrap=getpagesize; lab/cmake/stack.cmake) without
// touching any shared library. The wrappers here:
//   - count every segment mapped and unmapped (exact: one mmap per segment),
//   - return $PHYSMEM_LAB_STACK_SEGMENT (a power of two >= 4096) from getpagesize when
//     set, which makes it libgcc's minimum segment size,
//   - serve segment mappings from blocks handed to serve_from() (a physmem BlockPool),
//     taking them back when libgcc unmaps them.
// They run on the nearly exhausted stack of __morestack: no allocation, no locks, a
// few words of frame. Contract: one thread at a time maps segments from served blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lab::stack::segments {

inline constexpr const char* kSegmentEnv = "PHYSMEM_LAB_STACK_SEGMENT";

// What the wrappers saw since the last reset().
struct Counts {
    std::uint64_t mapped = 0;        // segments mapped by the kernel (mmap)
    std::uint64_t mapped_bytes = 0;
    std::uint64_t served = 0;        // segments handed out from served blocks
    std::uint64_t served_bytes = 0;
    std::uint64_t unmapped = 0;      // segments released (munmap or back to the blocks)
    std::uint64_t largest = 0;       // bytes of the largest segment
};
Counts counts() noexcept;
void reset() noexcept;

// The minimum segment size asked through $PHYSMEM_LAB_STACK_SEGMENT (0: libgcc's own).
// Throws std::invalid_argument when the variable is set but not a power of two in
// [4 KiB, 1 GiB].
std::size_t requested_minimum();

// From now on, segment requests of at most `block_bytes` bytes take one of `blocks`
// (last first) while any is left; larger ones and the rest are mapped as usual.
// Returned segments go back on the list. Empty span: stop serving.
// pre: the span outlives the serving; every block is block_bytes long.
void serve_from(std::span<void*> blocks, std::size_t block_bytes) noexcept;
// Blocks currently on the list (not lent to libgcc).
std::size_t blocks_free() noexcept;

// Whether libgcc blocks signals around segment switches on the calling thread.
void set_block_signals(bool on) noexcept;

// The calling thread's segment list as libgcc keeps it (the documented stack_segment
// header: prev, next, size), walked from __splitstack_getcontext's first entry: a cross-
// check of counts() that relies on that layout.
struct ListWalk {
    std::uint64_t segments = 0;
    std::uint64_t bytes = 0;  // header included
};
ListWalk walk_list() noexcept;

}  // namespace lab::stack::segments
