// src/core/backing.hpp — the backing ladder: the one enum (physmem::Backing, declared in
// the installed physmem/backing.hpp, implemented here) and what the front-ends ask of it.
//
// Allocation-free (no std::string, no exceptions): the drop-in allocator calls it before
// constructors run.
#pragma once

#include "physmem/backing.hpp"

namespace physmem::core {

// The first rung a request tries: `best` starts at the top (page_1g).
constexpr Backing first_rung(Backing requested) noexcept {
    return requested == Backing::best ? Backing::page_1g : requested;
}

// true for the rungs the kernel backs from its hugetlb pool (nr_hugepages).
constexpr bool is_hugetlb(Backing b) noexcept {
    return b == Backing::page_1g || b == Backing::page_2m;
}

// to_string as a NUL-terminated literal ("best", "1g", "2m", "thp", "4k").
const char* rung_name(Backing b) noexcept;

}  // namespace physmem::core
