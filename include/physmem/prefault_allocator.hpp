// physmem/prefault_allocator.hpp — an STL allocator whose memory is backed before use.
//
// Memory from prefault_allocator is populated when it is allocated (MADV_POPULATE_WRITE
// on fresh mappings), so `v.reserve(n)` returns storage whose first touch takes no page
// fault, and drawn from huge pages where available (hugetlb 2 MiB if reserved, else THP).
// Use it for latency-sensitive containers:
//
//   std::vector<int, physmem::prefault_allocator<int>> v;
//   v.reserve(1 << 20);        // faults happen here, not in the push_backs below
//
// Where the memory comes from (all of it prefaulted):
//   - requests of 64 KiB or more get a mapping of their own, returned to the system on
//     deallocate (2 MiB and up: the best huge-page rung; below: 4 KiB pages);
//   - smaller requests (container nodes) come from a process-wide arena of 2 MiB
//     prefaulted chunks with a free list per size class; the arena keeps its chunks for
//     reuse until the process exits. prefault_reserve(bytes) grows it ahead of time.
// The allocator is stateless: all instances compare equal. Thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

namespace physmem {

namespace detail {
// pre: bytes > 0. Throws std::bad_alloc.
void* prefault_allocate(std::size_t bytes, std::size_t alignment);
// pre: p came from prefault_allocate(bytes, alignment).
void prefault_deallocate(void* p, std::size_t bytes, std::size_t alignment) noexcept;
}  // namespace detail

// Grows the small-object arena so that `bytes` more can be handed out without mapping
// (and so without populating) during later allocations. Throws std::bad_alloc.
void prefault_reserve(std::size_t bytes);

struct PrefaultArenaStats {
    std::size_t chunks = 0;             // 2 MiB chunks mapped by the arena
    std::size_t large_mappings = 0;     // live mappings of their own
    std::size_t bytes_prefaulted = 0;   // live prefaulted bytes (chunks + large)
};
PrefaultArenaStats prefault_stats();

template <class T>
class prefault_allocator {
  public:
    using value_type = T;
    using is_always_equal = std::true_type;

    prefault_allocator() noexcept = default;
    template <class U>
    prefault_allocator(const prefault_allocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(detail::prefault_allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { detail::prefault_deallocate(p, n * sizeof(T), alignof(T)); }

    template <class U>
    bool operator==(const prefault_allocator<U>&) const noexcept { return true; }
};

}  // namespace physmem
