// physmem/backing.hpp — the page sizes a region of memory can be backed by.
//
// The ladder, best first: 1 GiB hugetlb pages, 2 MiB hugetlb pages, transparent
// huge pages (THP, via madvise), ordinary 4 KiB pages. `best` means "start at the top
// and take the first rung this machine can give". The same enum serves the block pool
// and the drop-in allocator (its values are pm_stats_t::backing in physmem.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace physmem {

enum class Backing : std::uint8_t {
    best = 0,     // request only: walk the ladder from the top
    page_1g = 1,  // hugetlb, 1 GiB pages (needs reserved pages: nr_hugepages)
    page_2m = 2,  // hugetlb, 2 MiB pages (needs reserved pages: nr_hugepages)
    thp = 3,      // transparent huge pages, 2 MiB, madvise(MADV_HUGEPAGE), 2 MiB aligned
    page_4k = 4,  // ordinary pages; THP explicitly refused (MADV_NOHUGEPAGE)
};

// Name used in options, output and JSON: "best", "1g", "2m", "thp", "4k".
std::string_view to_string(Backing b) noexcept;

// Inverse of to_string; also accepts "1G", "2M", "4K", "auto". nullopt if unknown.
std::optional<Backing> parse_backing(std::string_view s) noexcept;

// The page size of a rung in bytes (thp: 2 MiB); 0 for `best`.
std::size_t page_size_of(Backing b) noexcept;

// The rung below `b` on the ladder (page_4k stays page_4k).
Backing next_rung(Backing b) noexcept;

// What the kernel says backs a mapping (from /proc/self/smaps).
struct BackingReport {
    Backing backing = Backing::page_4k;  // rung obtained (thp counts only if huge_bytes > 0
                                         // once touched; see `verified`)
    std::size_t kernel_page_size = 0;    // smaps KernelPageSize, bytes
    std::size_t huge_bytes = 0;          // bytes on huge pages (AnonHugePages or hugetlb)
    std::size_t resident_bytes = 0;      // Rss (hugetlb: pages mapped)
    bool verified = false;               // smaps entry found and consistent with `backing`
};

}  // namespace physmem
