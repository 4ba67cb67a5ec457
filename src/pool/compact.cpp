// src/pool/compact.cpp — moving live blocks: relocate one, compact the pool, and the
// automatic policy (maintain). The owner protocol is in physmem/block_owner.hpp; the
// concurrency contract in physmem/pool.hpp.
#include <algorithm>
#include <bit>
#include <cinttypes>
#include <mutex>

#include "core/fatal.hpp"
#include "page_filler.hpp"
#include "physmem/pool.hpp"
#include "slab.hpp"

namespace physmem {

// Moves live block i of s into page `to` (which has room) through its owner; returns
// the new address. Aborts, naming the block, when the owner cannot follow.
void* BlockPool::move_locked(Slab& s, std::size_t i, Page* to) noexcept {
    void* from = s.block(i, block_shift_);
    BlockOwner* owner = s.owner[i];
    std::uintptr_t cookie = s.cookie[i];
    void* dest = take_locked(to, owner, cookie);
    if (s.tags) {  // the domain follows the block; the old place's generation goes up
        Slab& d = *to->slab;
        d.set_tag_domain(d.index_of(dest, block_shift_), BlockTag::unpack(s.tags[i].load()).domain);
    }
    if (!owner->relocate(cookie, from, dest))
        core::fatal("BlockPool: owner %p failed to relocate block %p (cookie %#" PRIxPTR ") to %p; "
                      "its reference would dangle",
                      static_cast<void*>(owner), from, cookie, dest);
    put_locked(s, i, dest);
    ++moved_;
    return dest;
}

void* BlockPool::relocate(void* p) {
    std::lock_guard<std::mutex> guard(mutex_);
    Slab* s;
    std::size_t i = index_checked(s, p, "relocate");
    if (!s->owner[i]) return nullptr;
    Page& here = s->page_of(i);
    filler_->unlink(&here);  // anywhere but its own page
    Page* to = filler_->best();
    filler_->place(&here);
    if (!to) return nullptr;
    void* moved = move_locked(*s, i, to);
    schedule_locked();  // p's page may have emptied
    return moved;
}

// Moves the live blocks of src into dst[d..limit) (densest first) until src is empty or
// those pages are full. Returns the first destination that may still have room.
std::size_t BlockPool::drain_locked(Page& src, std::vector<Page*>& dst, std::size_t d, std::size_t limit,
                                    CompactResult& r) noexcept {
    Slab& s = *src.slab;
    for (std::size_t i = src.first, end = src.first + src.count; i < end && src.live > 0; ++i) {
        if (!s.test(i)) continue;
        while (d < limit && dst[d]->live == dst[d]->count) ++d;
        if (d == limit) return d;
        move_locked(s, i, dst[d]);
        ++r.blocks_moved;
    }
    if (src.live == 0) ++r.pages_emptied;
    return d;
}

CompactResult BlockPool::compact() { return compact_impl(true); }

CompactResult BlockPool::compact_impl(bool release_populated) {
    std::lock_guard<std::mutex> guard(mutex_);
    CompactResult r;
    std::vector<Page*> partial;  // the only allocation: before anything moves
    for (Slab* s : slabs_)
        for (Page& pg : s->pages)
            if (pg.resident && pg.live > 0 && pg.live < pg.count) partial.push_back(&pg);
    std::stable_sort(partial.begin(), partial.end(), [](const Page* a, const Page* b) { return a->live > b->live; });
    std::size_t d = 0, n = partial.size();
    while (d + 1 < n) {  // the sparsest page left drains into the densest ones
        Page* src = partial[--n];
        if (src->pinned == 0) d = drain_locked(*src, partial, d, n, r);
    }
    r.bytes_moved = r.blocks_moved << block_shift_;
    r.bytes_given_back = release_locked(release_populated);
    return r;
}

std::size_t BlockPool::maintain() {
    std::size_t given = 0, resident = 0, free_bytes = 0, page = 0;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        std::size_t before = given_back_;
        release_due_locked();
        given = given_back_ - before;
        for (const Slab* s : slabs_)
            for (const Page& pg : s->pages)
                if (pg.resident && pg.live > 0) {
                    resident += s->page_bytes(block_shift_);
                    free_bytes += std::size_t{pg.free_blocks()} << block_shift_;
                }
        page = slabs_.front()->page_bytes(block_shift_);
    }
    double t = options_.compact_threshold;
    if (t > 0 && free_bytes >= page && static_cast<double>(free_bytes) > t * static_cast<double>(resident))
        given += compact_impl(false).bytes_given_back;  // the automatic policy keeps a prefault
    return given;
}

}  // namespace physmem
