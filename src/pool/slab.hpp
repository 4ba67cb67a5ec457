// src/pool/slab.hpp — a region cut into blocks, and the pages (give-back units) over it.
//
// Per block: a bit (live or not), its owner and cookie (null owner: pinned, or free).
// Per page: live and pinned counts, how far it was ever handed out (`bumped`), and a
// stack of the blocks freed below that mark, so taking and returning a block is O(1).
// A page given back starts again from bumped = 0 (its memory reads as zero).
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "physmem/pool.hpp"
#include "physmem/region.hpp"

namespace physmem {

struct BlockPool::Page {
    Slab* slab = nullptr;
    std::uint32_t first = 0;   // index in the slab of the page's first block
    std::uint32_t count = 0;   // blocks in the page (the last page of a region may be short)
    std::uint32_t live = 0;
    std::uint32_t pinned = 0;  // live blocks without an owner: the page cannot be emptied
    std::uint32_t bumped = 0;  // blocks [first, first + bumped) handed out since mapped
    std::uint32_t nfree = 0;   // entries on the free stack (Slab::stack from `first`)
    bool resident = false;     // prefaulted at mapping or touched since, and not given back since
    int list = -1;             // Filler list it is on, -1 when full
    std::uint64_t empty_since = 0;  // monotonic ns, when live fell to 0
    Page* prev = nullptr;
    Page* next = nullptr;

    std::uint32_t free_blocks() const noexcept { return count - live; }
};

struct BlockPool::Slab {
    Region region;            // may be larger than asked: rounded up to its page size
    std::size_t blocks;       // asked bytes / block_size: capacity is honoured exactly
    unsigned page_shift;      // log2(blocks per page)
    std::size_t live = 0;
    std::vector<std::uint64_t> in_use;  // one bit per block
    std::vector<BlockOwner*> owner;
    std::vector<std::uintptr_t> cookie;
    std::vector<std::uint32_t> stack;   // per page: its freed blocks, from page.first
    std::vector<Page> pages;
    // PoolOptions::tags: one BlockTag word per block (null when off). Written under the
    // pool's lock, read by checked handles without it.
    std::unique_ptr<std::atomic<std::uint64_t>[]> tags;

    Slab(const RegionOptions& o, std::size_t block_size);

    std::byte* block(std::size_t i, unsigned block_shift) const noexcept {
        return region.data() + (i << block_shift);
    }
    std::size_t index_of(const void* p, unsigned shift) const noexcept {
        return static_cast<std::size_t>(static_cast<const std::byte*>(p) - region.data()) >> shift;
    }
    Page& page_of(std::size_t i) noexcept { return pages[i >> page_shift]; }
    std::size_t page_bytes(unsigned block_shift) const noexcept {
        return std::size_t{1} << (page_shift + block_shift);
    }
    bool test(std::size_t i) const noexcept { return in_use[i / 64] >> (i % 64) & 1; }
    void flip(std::size_t i) noexcept { in_use[i / 64] ^= std::uint64_t{1} << (i % 64); }
    // Freed or moved away: the generation goes up, the domain back to 0 (tags on).
    void retire_tag(std::size_t i) noexcept {
        if (tags) tags[i].store((tags[i].load(std::memory_order_relaxed) | BlockTag::kDomainMask) + 1,
                                std::memory_order_release);
    }
    void set_tag_domain(std::size_t i, std::uint32_t d) noexcept {
        std::uint64_t w = tags[i].load(std::memory_order_relaxed);
        tags[i].store((w & ~BlockTag::kDomainMask) | (d & BlockTag::kDomainMask), std::memory_order_release);
    }
};

// The give-back unit for a region of `backing` cut into `block_size` blocks: the backing
// page (2 MiB at least: a 4 KiB-backed pool is still counted in 2 MiB pages), or the
// block when blocks are larger.
std::size_t give_back_unit(Backing backing, std::size_t block_size) noexcept;

}  // namespace physmem
