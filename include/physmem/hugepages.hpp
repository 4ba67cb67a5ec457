// physmem/hugepages.hpp — reserving hugetlb pages for a run, and giving them back.
//
// Changing nr_hugepages is a system setting: physmem does it only when asked, prints
// what it did on stderr, and restores the previous value when the reservation ends.
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

// RAII: makes at least `count` pages of `page_size` available by raising nr_hugepages
// (root only). The kernel may give fewer when memory is fragmented: `obtained()` says
// how many extra pages were added. The destructor restores the old nr_hugepages.
class HugePageReservation {
  public:
    HugePageReservation(std::size_t page_size, long count) noexcept;
    ~HugePageReservation();
    HugePageReservation(const HugePageReservation&) = delete;
    HugePageReservation& operator=(const HugePageReservation&) = delete;

    long obtained() const noexcept { return added_; }
    // true when `count` pages are now available to a new mapping.
    bool satisfied() const noexcept { return satisfied_; }

  private:
    std::size_t page_size_;
    long old_total_ = -1;
    long added_ = 0;
    bool satisfied_ = false;
};

}  // namespace physmem
