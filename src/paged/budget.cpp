// src/paged/budget.cpp — the residency budget changed at run time: shrinking evicts and returns
// the frames above the new budget to the pool.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
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
// `keep` and above into free frames below it (the bookkeeping only: the data stays where
// it is, the block changes index), and gives the frames from `keep` on back to the pool.
void Pager::shrink_frames(std::size_t keep) {
    while (io_->in_flight()) pump(1);  // write-behind and read-ahead finish first
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
        std::swap(frames_[g], frames_[f]);
        frame_[frames_[g].leaf] = g;
        if (opt_.movable) pool_->set_owner(frames_[g].data, this, std::uintptr_t{g} << 1 | 1);
    }
    for (std::size_t f = keep; f < frames_.size(); ++f) pool_->deallocate(frames_[f].data);
    frames_.resize(keep);
    free_frames_.swap(low);
    if (hand_ >= keep) hand_ = 0;
    ++epoch_;
}

}  // namespace physmem::detail
