// physmem/region.hpp — one contiguous mapping on the best page size the machine gives.
//
// A Region is the unit the block pool (and the prefaulting allocator) get memory in.
// It walks the backing ladder (1 GiB -> 2 MiB -> THP -> 4 KiB) from the requested rung,
// optionally reserves the hugetlb pages it needs (root only; given back on destruction),
// prefaults and mlocks, and reports the backing it actually obtained, verified from
// /proc/self/smaps rather than assumed. A front-end on the memory core (src/core): the
// mapping, its verification and the huge-page reservation are the core's; the ladder walk,
// the notes and the exceptions are the Region's.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "physmem/backing.hpp"

namespace physmem {

namespace core { struct HugeReservation; }

// Thrown when a rung was demanded with `strict_backing` and the machine cannot give it.
class backing_unavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct RegionOptions {
    std::size_t bytes = 0;            // rounded up to the page size of the rung obtained
    std::size_t alignment = 4096;     // power of two; the start is aligned to it
    Backing backing = Backing::best;  // first rung tried
    bool strict_backing = false;      // true: that rung or backing_unavailable
    bool prefault = false;            // populate page tables now (MADV_POPULATE_WRITE)
    bool lock = false;                // mlock; failure is an error (see RLIMIT_MEMLOCK)
    bool reserve_huge_pages = false;  // root only: raise nr_hugepages for a hugetlb rung
};

class Region {
  public:
    // Maps memory as described; throws std::bad_alloc when no rung can give `bytes`,
    // backing_unavailable when `strict_backing` and the rung is unavailable,
    // std::invalid_argument for a zero size, a bad alignment or a backing that is not one
    // of the enumerators, std::system_error when `lock` is asked and mlock fails.
    explicit Region(const RegionOptions& options);
    ~Region();
    Region(Region&& other) noexcept;
    Region& operator=(Region&& other) noexcept;
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

    std::byte* data() const noexcept { return base_; }
    std::size_t size() const noexcept { return bytes_; }
    Backing backing() const noexcept { return backing_; }
    std::size_t page_size() const noexcept { return page_size_of(backing_); }
    std::size_t prefaulted_bytes() const noexcept { return prefaulted_; }
    bool locked() const noexcept { return locked_; }
    bool contains(const void* p) const noexcept {
        auto* b = static_cast<const std::byte*>(p);
        return b >= base_ && b < base_ + bytes_;
    }
    // Huge pages this region reserved (nr_hugepages raised by it), 0 if none.
    std::size_t reserved_huge_pages() const noexcept;
    // Why higher rungs were skipped, one line each (empty when the first rung worked).
    const std::vector<std::string>& notes() const noexcept { return notes_; }

    // Reads /proc/self/smaps now. For THP, huge_bytes counts only touched memory.
    BackingReport verify() const;

    // Writes back now, instead of at destruction, the nr_hugepages this region raised
    // (said on stderr). The region stays mapped and usable; its pages go back to the
    // system when it is unmapped (the kernel keeps them as surplus pages until then).
    void restore_huge_pages() noexcept;
    // Gives the mapping up without unmapping it: the memory stays mapped (and locked) as
    // it is until the process exits, and the Region is left empty (size 0). Restores the
    // huge-page reservation now. For an owner whose users may outlive it (BlockPool with
    // leak_check off).
    void leak() noexcept;

  private:
    void map_with_ladder(const RegionOptions& o);
    bool try_rung(Backing rung, const RegionOptions& o);
    void reserve_for(Backing rung, std::size_t bytes);
    void end_reservation() noexcept;
    void release() noexcept;

    std::byte* base_ = nullptr;      // the mapping (src/core/map.hpp), guards around it
    std::size_t bytes_ = 0;          // usable bytes from base_
    Backing backing_ = Backing::page_4k;
    std::size_t prefaulted_ = 0;
    bool locked_ = false;
    std::unique_ptr<core::HugeReservation> reservation_;  // nr_hugepages raised for it
    std::vector<std::string> notes_;
};

}  // namespace physmem
