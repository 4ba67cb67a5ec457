// src/core/hugepages.cpp — hugetlb counters, and the one writer of nr_hugepages.
#include "core/hugepages.hpp"

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

}  // namespace physmem

namespace physmem::core {

HugeReservation add_huge_pages(std::size_t page_size, long add) noexcept {
    HugeReservation r;
    r.page_size = page_size;
    long total = os::hugepages_read(page_size, "nr_hugepages");
    if (total < 0 || add <= 0 || !os::is_root()) return r;
    r.before = total;
    r.error = os::hugepages_set_total(page_size, total + add);
    r.after = os::hugepages_read(page_size, "nr_hugepages");
    return r;
}

HugeReservation make_available(std::size_t page_size, long count) noexcept {
    HugePageCounts c = huge_page_counts(page_size);
    if (!c.supported) return HugeReservation{page_size};
    return add_huge_pages(page_size, count - (c.free - c.reserved));
}

Restored restore_huge_pages(const HugeReservation& r, Restore how) noexcept {
    Restored out;
    if (!r.changed()) return out;
    out.was = os::hugepages_read(r.page_size, "nr_hugepages");
    out.target = how == Restore::to_before ? r.before : out.was - r.added();
    if (out.target < 0) out.target = 0;
    out.error = os::hugepages_set_total(r.page_size, out.target);
    out.now = os::hugepages_read(r.page_size, "nr_hugepages");
    return out;
}

}  // namespace physmem::core
