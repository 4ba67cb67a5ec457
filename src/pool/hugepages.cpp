// src/pool/hugepages.cpp — hugetlb counters and the RAII reservation.
#include "physmem/hugepages.hpp"

#include <cstdio>

#include "physmem/options.hpp"
#include "port/os.hpp"

namespace physmem {

HugePageCounts huge_page_counts(std::size_t page_size) noexcept {
    HugePageCounts c;
    c.total = os::hugepages_read(page_size, "nr_hugepages");
    c.supported = c.total >= 0;
    if (!c.supported) return HugePageCounts{};
    c.free = os::hugepages_read(page_size, "free_hugepages");
    c.reserved = os::hugepages_read(page_size, "resv_hugepages");
    return c;
}

long available_huge_pages(std::size_t page_size) noexcept {
    HugePageCounts c = huge_page_counts(page_size);
    return c.supported ? c.free - c.reserved : 0;
}

HugePageReservation::HugePageReservation(std::size_t page_size, long count) noexcept
    : page_size_(page_size) {
    HugePageCounts c = huge_page_counts(page_size);
    long missing = count - (c.free - c.reserved);
    satisfied_ = c.supported && missing <= 0;
    if (!c.supported || missing <= 0 || !os::is_root()) return;
    old_total_ = c.total;
    os::hugepages_set_total(page_size, c.total + missing);
    added_ = huge_page_counts(page_size).total - old_total_;
    satisfied_ = available_huge_pages(page_size) >= count;
    std::fprintf(stderr,
                 "physmem: reserved huge pages: nr_hugepages (%s) %ld -> %ld (asked +%ld, "
                 "got +%ld); restored when the pool is destroyed\n",
                 format_size(page_size).c_str(), old_total_, old_total_ + added_, missing,
                 added_);
}

HugePageReservation::~HugePageReservation() {
    if (old_total_ < 0) return;
    int rc = os::hugepages_set_total(page_size_, old_total_);
    long now = huge_page_counts(page_size_).total;
    std::fprintf(stderr, "physmem: restored nr_hugepages (%s) to %ld%s\n",
                 format_size(page_size_).c_str(), now, rc == 0 && now == old_total_ ? "" : " (FAILED to restore fully)");
}

}  // namespace physmem
