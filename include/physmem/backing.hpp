// physmem/backing.hpp — the page sizes a region of memory can be backed by.
//
// The ladder, best first: 1 GiB hugetlb pages, 2 MiB hugetlb pages, transparent
// huge pages (THP, via madvise), ordinary 4 KiB pages. `best` means "start at the top
// and take the first rung this machine can give".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace physmem {

enum class Backing {
    best,     // request only: walk the ladder from the top
    page_1g,  // hugetlb, 1 GiB pages (needs reserved pages: nr_hugepages)
    page_2m,  // hugetlb, 2 MiB pages (needs reserved pages: nr_hugepages)
    thp,      // transparent huge pages, 2 MiB, madvise(MADV_HUGEPAGE), 2 MiB aligned
    page_4k,  // ordinary pages; THP explicitly refused (MADV_NOHUGEPAGE)
};

// Name used in options, output and JSON: "best", "1g", "2m", "thp", "4k".
std::string_view to_string(Backing b) noexcept;

// Inverse of to_string; also accepts "1G", "2M", "4K", "auto". nullopt if unknown.
std::optional<Backing> parse_backing(std::string_view s) noexcept;

// The page size of a rung in bytes (thp: 2 MiB); 0 for `best`.
std::size_t page_size_of(Backing b) noexcept;

// The rung below `b` on the ladder (page_4k stays page_4k).
Backing next_rung(Backing b) noexcept;

}  // namespace physmem
