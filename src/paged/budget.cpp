// src/paged/budget.cpp — the residency budget changed at run time: shrinking evicts and returns
// the frames above the new budget to the pool.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "paged/io_queue.hpp"

namespace physmem::detail {

void Pager::set_budget(std::size_t bytes) {
    std::size_t want = std::clamp<std::size_t>(bytes / leaf_bytes_, 1, std::max<std::size_t>(leaves_, 1));
    if (want > UINT32_MAX) throw std::invalid_argument("physmem::PagedArray: budget of more than 2^32 leaves");
    std::lock_guard lock(mutex_);
    std::size_t before = max_frames_;
    max_frames_ = want;  // take no new frames beyond it
    try {
        if (want < frames_.size()) shrink_frames(want);
        reserve_scratch();
    } catch (...) {
        max_frames_ = before;
        throw;
    }
}

// Evicts until at most `keep` frames hold leaves, moves the leaves of frames at index
// `keep` and above into free frames below it (move_leaf_down), and gives the frame blocks
// no frame below `keep` uses back to the pool.
void Pager::shrink_frames(std::size_t keep) {
    while (io_->in_flight()) pump(1);  // write-behind and read-ahead finish first
    if (per_block_ > 1)  // a leaf that moves is copied: none above `keep` may be pinned
        for (std::size_t f = keep; f < frames_.size(); ++f)
            if (frames_[f].pins)
                throw std::runtime_error("physmem::PagedArray: cannot shrink the budget to " + std::to_string(keep) +
                                         " leaves: a leaf beyond it is pinned");
    free_frames_.reserve(frames_.size());  // the allocations first: a throw changes nothing
    std::vector<std::uint32_t> low;        // free frames below `keep`
    low.reserve(keep);
    // Victims in rounds no larger than the slow path's reserved scratch (choose_victims
    // and write_back must not allocate between marking frames and finishing them).
    const std::size_t round = std::min<std::size_t>(taken_.capacity(), 4096);
    for (std::size_t held = frames_.size() - free_frames_.size(); held > keep;) {
        taken_.resize(std::min(held - keep, round));
        std::size_t got = choose_victims(taken_.size(), taken_.data());
        if (!got)
            throw std::runtime_error("physmem::PagedArray: cannot shrink the budget to " + std::to_string(keep) +
                                     " leaves: the leaves in memory are pinned");
        free_frames_.insert(free_frames_.end(), taken_.begin(), taken_.begin() + static_cast<std::ptrdiff_t>(got));
        held -= got;
    }
    for (std::uint32_t f : free_frames_)
        if (f < keep) low.push_back(f);
    for (std::size_t f = keep; f < frames_.size(); ++f) {
        if (frames_[f].leaf == kNone) continue;
        std::uint32_t g = low.back();
        low.pop_back();
        move_leaf_down(f, g);
    }
    const std::size_t blocks = (keep + per_block_ - 1) / per_block_;
    for (std::size_t b = blocks; b < frame_blocks_.size(); ++b) pool_->deallocate(frame_blocks_[b]);
    frame_blocks_.resize(blocks);
    frames_.resize(keep);
    free_frames_.swap(low);
    if (hand_ >= keep) hand_ = 0;
    bump_epoch();
}

// Frame f's leaf into free frame g < f. A frame per block: the two blocks change places
// (the data stays where it is, the pinned leaf's pointers too). Else the leaf's bytes
// are copied into g's slice and its entry follows.
void Pager::move_leaf_down(std::size_t f, std::uint32_t g) {
    if (per_block_ == 1) {
        std::swap(frames_[g], frames_[f]);
        std::swap(frame_blocks_[g], frame_blocks_[f]);
        if (opt_.movable) pool_->set_owner(frame_blocks_[g], this, std::uintptr_t{g} << 1 | 1);
        frame_[frames_[g].leaf] = g;
        return;
    }
    std::memcpy(frames_[g].data, frames_[f].data, leaf_bytes_);
    frames_[g].leaf = std::exchange(frames_[f].leaf, kNone);
    const std::size_t k = frames_[g].leaf;
    frame_[k] = g;
    if (lookup(k)) sync_tags(k);  // linked (a leaf read ahead stays unlinked until touched)
}

}  // namespace physmem::detail
