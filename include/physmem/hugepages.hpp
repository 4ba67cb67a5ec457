// physmem/hugepages.hpp — how many hugetlb pages this machine has, and how many a new
// mapping can still get. (Raising nr_hugepages is the pool's job when asked,
// PoolOptions::reserve_huge_pages, and the physmem-hugepages program's; not API.)
#pragma once

#include <cstddef>

namespace physmem {

// The kernel's hugetlb counters for one page size (from sysfs).
struct HugePageCounts {
    long total = 0;  // nr_hugepages
    long free = 0;   // free_hugepages
    long reserved = 0;  // resv_hugepages (promised to mappings, not yet faulted)
    bool supported = false;  // the page size exists on this machine
};

// Counters for `page_size` (2 MiB or 1 GiB).
HugePageCounts huge_page_counts(std::size_t page_size) noexcept;

// Pages of `page_size` that a new mapping can still get (free - reserved).
long available_huge_pages(std::size_t page_size) noexcept;

}  // namespace physmem
