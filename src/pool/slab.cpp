// src/pool/slab.cpp — a region's block and page bookkeeping (see slab.hpp).
#include "slab.hpp"

#include <algorithm>
#include <bit>

namespace physmem {

std::size_t give_back_unit(Backing backing, std::size_t block_size) noexcept {
    std::size_t page = page_size_of(backing);
    if (backing != Backing::page_1g && backing != Backing::page_2m) page = std::max<std::size_t>(page, 2 << 20);
    return std::max(page, block_size);
}

BlockPool::Slab::Slab(const RegionOptions& o, std::size_t block_size)
    : region(o), blocks(o.bytes / block_size), in_use((blocks + 63) / 64), owner(blocks), cookie(blocks),
      stack(blocks) {
    std::size_t per_page = give_back_unit(region.backing(), block_size) / block_size;
    page_shift = static_cast<unsigned>(std::countr_zero(per_page));
    pages.resize((blocks + per_page - 1) / per_page);
    const bool populated = region.prefaulted_bytes() > 0 || region.locked();  // resident from the start
    for (std::size_t k = 0; k < pages.size(); ++k) {
        pages[k].slab = this;
        pages[k].resident = populated;
        pages[k].first = static_cast<std::uint32_t>(k * per_page);
        pages[k].count = static_cast<std::uint32_t>(std::min(per_page, blocks - k * per_page));
    }
}

}  // namespace physmem
