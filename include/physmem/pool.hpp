// physmem/pool.hpp — the block pool: fixed-size, block-aligned blocks from huge pages.
//
// A user-space stand-in for an OS that hands out physical blocks only. One pool holds
// one or more Regions (see region.hpp) and cuts them into blocks of `block_size` bytes,
// a power of two from 4 KiB to 1 GiB chosen at run time. allocate/deallocate are O(1)
// and thread-safe (one mutex; a block is a large unit, so the lock is not the cost).
//
//   physmem::BlockPool pool({.block_size = 32 << 10, .capacity = 1ull << 30});
//   void* b = pool.allocate();   // 32 KiB-aligned, 32 KiB long
//   pool.deallocate(b);
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "physmem/backing.hpp"
#include "physmem/region.hpp"

namespace physmem {

struct PoolOptions {
    std::size_t block_size = 64 << 10;      // bytes; power of two in [4 KiB, 1 GiB]
    std::size_t capacity = std::size_t{1} << 30;  // bytes in the first region
    Backing backing = Backing::best;        // preferred rung (see backing.hpp)
    bool strict_backing = false;            // true: that rung or backing_unavailable
    bool prefault = false;                  // populate page tables up front
    bool lock = false;                      // mlock the regions
    bool reserve_huge_pages = false;        // root: raise nr_hugepages, restored at the end
    bool grow = false;                      // on exhaustion, map a region twice the last
    std::size_t max_capacity = 0;           // with grow: total bytes cap (0 = no cap)
};

struct PoolStats {
    std::size_t block_size = 0;
    std::size_t blocks_total = 0;   // blocks in all regions
    std::size_t blocks_in_use = 0;
    std::size_t regions = 0;
    std::size_t bytes_mapped = 0;
    std::size_t bytes_prefaulted = 0;
    std::size_t huge_pages_reserved = 0;  // nr_hugepages raised by this pool
    Backing backing = Backing::page_4k;   // rung of the first region
    bool locked = false;
};

class BlockPool {
  public:
    // Maps the first region. Throws std::invalid_argument for a bad block size or a
    // capacity smaller than one block, std::bad_alloc when no memory can be mapped,
    // backing_unavailable when strict_backing cannot be met.
    explicit BlockPool(const PoolOptions& options);
    ~BlockPool();
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    // One block, aligned to block_size. Throws std::bad_alloc when exhausted (and
    // growth is off or fails); the pool stays consistent.
    void* allocate();
    // Same, but returns nullptr instead of throwing.
    void* try_allocate() noexcept;
    // pre: p came from allocate() of this pool and was not freed since. A pointer this
    // pool never gave out, or a double free, aborts with a message naming it.
    void deallocate(void* p) noexcept;

    // true when p lies in one of this pool's regions (any byte of any block).
    bool owns(const void* p) const noexcept;

    std::size_t block_size() const noexcept { return block_size_; }
    Backing backing() const noexcept;
    PoolStats stats() const;
    // Backing of each region, verified from /proc/self/smaps.
    std::vector<BackingReport> verify_backing() const;
    // Why higher rungs were skipped when the first region was mapped.
    std::vector<std::string> backing_notes() const;

    // Physical address of the byte at p, from /proc/self/pagemap: root only, and only
    // once the page is faulted in. nullopt otherwise.
    static std::optional<std::uint64_t> physical_address(const void* p) noexcept;

  private:
    struct Slab;  // a region plus its bookkeeping
    void add_region(std::size_t bytes);
    bool grow_locked() noexcept;
    void* pop_locked() noexcept;
    Slab* find_slab(const void* p) const noexcept;

    const PoolOptions options_;
    const std::size_t block_size_;
    unsigned block_shift_;
    mutable std::mutex mutex_;
    std::vector<Slab*> slabs_;          // owned; few (growth doubles)
    std::vector<void*> free_;           // blocks returned, reused LIFO
    std::size_t in_use_ = 0;
    std::size_t total_ = 0;
    std::size_t mapped_ = 0;
};

// The process-wide pool, created on first use from PHYSMEM_* environment variables
// (see options.hpp; defaults: 64 KiB blocks, 1 GiB first region, best backing, grows).
// Throws what BlockPool's constructor throws, or std::invalid_argument for a bad
// environment value.
BlockPool& default_pool();

}  // namespace physmem
