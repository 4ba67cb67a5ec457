// src/core/hugepages.hpp — reserving hugetlb pages and giving them back: the one C++
// writer of nr_hugepages. The block pool (per region), the drop-in allocator (at start
// and exit) and the physmem-hugepages program (for the Python harness) all go through it.
//
// Changing nr_hugepages is a system setting: callers do it only when asked, say what
// they did (the core returns numbers; each front-end words its own message), and
// restore it. Allocation-free. The counters (huge_page_counts) are declared in the
// installed physmem/hugepages.hpp and implemented here.
#pragma once

#include <cstddef>

#include "physmem/hugepages.hpp"

namespace physmem::core {

// One change of nr_hugepages for one page size.
struct HugeReservation {
    std::size_t page_size = 0;
    long before = -1;   // nr_hugepages before the change; -1: nothing written
    long after = -1;    // nr_hugepages read back after the change
    int error = 0;      // errno of the write, 0 on success
    long added() const noexcept { return before >= 0 && after > before ? after - before : 0; }
    bool changed() const noexcept { return before >= 0; }
};

// Adds `add` pages to nr_hugepages of `page_size` (add > 0), then reads back what the
// kernel gave (it may give fewer when memory is fragmented). Nothing is written
// (before = -1) when not root, the page size is not supported, or add <= 0.
HugeReservation add_huge_pages(std::size_t page_size, long add) noexcept;

// Raises nr_hugepages just enough that `count` pages are free for a new mapping
// (free - reserved >= count). Nothing written when that already holds or unsupported.
HugeReservation make_available(std::size_t page_size, long count) noexcept;

// How a reservation is undone.
enum class Restore {
    to_before,     // write back `before` (the pool, physmem-hugepages)
    remove_added,  // subtract added() from the current value (the allocator: others may
                   // have changed it meanwhile)
};

struct Restored {
    long target = -1;  // value written
    long was = -1;     // nr_hugepages just before writing
    long now = -1;     // read back after writing
    int error = 0;     // errno of the write
    bool ok() const noexcept { return error == 0 && now == target; }
};

// Undoes r (no-op, target -1, when r changed nothing).
Restored restore_huge_pages(const HugeReservation& r, Restore how) noexcept;

}  // namespace physmem::core
