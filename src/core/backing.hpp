// src/core/backing.hpp — the backing ladder: the one enum (physmem::Backing, declared in
// the installed physmem/backing.hpp, implemented here) and what the front-ends ask of it.
//
// One ladder, one meaning of `best`, for the pool (Region, src/pool/region.cpp) and the
// malloc (arenas, src/malloc/arena.cpp): a request starts at first_rung(requested, ...)
// and walks down with next_rung (1g, 2m, thp, 4k) until a rung maps. Each front-end
// decides only how much to map on a rung and when a hugetlb rung has enough free pages.
//
// Allocation-free (no std::string, no exceptions): the drop-in allocator calls it before
// constructors run.
#pragma once

#include "physmem/backing.hpp"

namespace physmem::core {

// Whether `best` may take pages from the kernel's hugetlb pool (nr_hugepages), the one
// knob of the ladder's meaning. An explicit 1g or 2m request always tries them.
//   any_free       the pool: a program that builds a pool asked for physmem's memory, and
//                  takes any free hugetlb page from the top down (`best` = from the top)
//   only_reserved  the malloc: preloaded into programs that never asked for it, it must not
//                  take hugetlb pages an administrator reserved for other programs, so
//                  `best` starts at thp unless this process reserved pages itself
//                  (PHYSMEM_MALLOC_RESERVE; README, "Backing" of the drop-in allocator)
enum class BestHugetlb : bool { any_free, only_reserved };

// The first rung a request tries: `best` starts at the top (page_1g), except that with
// only_reserved and nothing reserved (reserved false) it starts at thp.
constexpr Backing first_rung(Backing requested, BestHugetlb policy = BestHugetlb::any_free,
                             bool reserved = false) noexcept {
    if (requested != Backing::best) return requested;
    return policy == BestHugetlb::any_free || reserved ? Backing::page_1g : Backing::thp;
}

// true for the rungs the kernel backs from its hugetlb pool (nr_hugepages).
constexpr bool is_hugetlb(Backing b) noexcept {
    return b == Backing::page_1g || b == Backing::page_2m;
}

// to_string as a NUL-terminated literal ("best", "1g", "2m", "thp", "4k").
const char* rung_name(Backing b) noexcept;

}  // namespace physmem::core
