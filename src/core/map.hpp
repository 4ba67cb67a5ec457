// src/core/map.hpp — mapping a range on one rung of the backing ladder, and verifying
// from /proc/self/smaps what the kernel gave. The ladder's order and the meaning of `best`
// are core/backing.hpp's (first_rung, next_rung), shared by both front-ends; how much to
// map on a rung, when to give up and when to reserve pages is each front-end's: the Region
// walks down from the requested rung; the drop-in allocator walks it per arena.
//
// Allocation-free, no exceptions: failures come back as codes with the numbers a
// front-end needs to word a note.
#pragma once

#include <cstddef>
#include <cstdint>

#include "physmem/backing.hpp"
#include "port/os.hpp"

namespace physmem::core {

// How a thp or 4k mapping is laid out (hugetlb rungs are always one plain mapping).
enum class Layout : std::uint8_t {
    guarded,  // a PROT_NONE guard page on each side, so the mapping has its own smaps
              // entry (Regions: verify reads it); THP advised only where THP exists
    lean,     // no guards, MAP_NORESERVE, no alignment window when avoidable (the
              // allocator's arenas, under an address-space limit); THP advised as asked
              // whatever the mode, and a thp mapping whose advice the kernel refuses comes
              // back as page_4k (advised not huge)
};

struct Mapping {
    std::byte* base = nullptr;  // nullptr: nothing mapped
    std::size_t bytes = 0;      // a multiple of the rung's page size
    Backing rung = Backing::page_4k;
    Layout layout = Layout::guarded;
};

struct MapRequest {
    std::size_t bytes = 0;        // rounded up to the rung's page size
    std::size_t alignment = 0;    // power of two; the page size is implied
    Backing rung = Backing::page_4k;  // not `best`
    Layout layout = Layout::guarded;
};

enum class MapFailure : std::uint8_t {
    none,
    unsupported,  // hugetlb page size absent on this machine
    no_pages,     // hugetlb mmap failed (usually too few free pages); see error
    thp_off,      // thp asked, transparent huge pages absent or "never" (guarded only)
    mmap_failed,  // see error
};

struct MapResult {
    Mapping mapping;
    MapFailure failure = MapFailure::none;
    int error = 0;                // errno of the failed mmap
    long needed = 0;              // hugetlb: pages the request takes
    long available = 0;           // hugetlb, no_pages: free - reserved after the failure
    os::ThpMode thp = os::ThpMode::absent;  // thp_off: the mode found
};

// Maps r on its rung. pre: r.rung != best, r.bytes > 0.
MapResult map_on_rung(const MapRequest& r) noexcept;

// Unmaps what map_on_rung mapped (guards included). No-op for an empty mapping.
void unmap(const Mapping& m) noexcept;

// What /proc/self/smaps says backs the mapping at base, checked against the rung it was
// mapped on. For thp, huge_bytes counts only memory already touched.
BackingReport verify(const void* base, Backing rung) noexcept;

}  // namespace physmem::core
