// src/paged/frames.cpp — frames and eviction: free frames, new ones up to the budget, then CLOCK's
// victims (leaves a scan passed first), dirty victims written together.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <string>

#include "paged/io_queue.hpp"

namespace physmem::detail {

// Up to `want` frames: free ones, new ones from the pool (up to the budget), then
// victims. At least one, or throws (PagingError when a dirty victim cannot be written,
// std::runtime_error when every frame is pinned).
std::size_t Pager::take_frames(std::size_t want, std::uint32_t* out) {
    std::size_t got = 0;
    while (got < want && !free_frames_.empty()) {
        out[got++] = free_frames_.back();
        free_frames_.pop_back();
    }
    while (got < want && frames_.size() < max_frames_ && add_frame(true))
        out[got++] = static_cast<std::uint32_t>(frames_.size() - 1);
    while (got < want) {
        std::size_t more;
        try {
            more = choose_victims(want - got, out + got);
        } catch (...) {
            free_frames_.insert(free_frames_.end(), out, out + got);  // nothing taken is lost
            throw;
        }
        got += more;
        if (got) break;
        if (io_->in_flight()) {  // every frame is loading or being written: wait for one
            pump(1);
            continue;
        }
        throw_all_pinned();
    }
    return got;
}

// No frame to take: every one is pinned (segment callbacks, a batch being read).
void Pager::throw_all_pinned() const {
    std::size_t pins = 0;
    for (const Frame& f : frames_) pins += f.pins;
    throw std::runtime_error("physmem::PagedArray: every one of its " + std::to_string(frames_.size()) +
                             " frames is pinned (" + std::to_string(pins) + " pins; the budget is " +
                             std::to_string(max_frames_) + " leaves, " + std::to_string(max_frames_ * leaf_bytes_) +
                             " bytes): the budget is too small for the leaves in use");
}

// Whether CLOCK may take the frame now: a leaf, not pinned, no I/O in flight.
bool Pager::evictable(const Frame& fr) const noexcept {
    return fr.leaf != kNone && !fr.pins && !(state_[fr.leaf] & (kLoading | kWriting));
}

// CLOCK: evictable frames whose reference bit is clear (a set bit is cleared and the
// frame passed over once); leaves a scan has passed first. Dirty victims are written
// together before any frame is reused.
std::size_t Pager::choose_victims(std::size_t want, std::uint32_t* out) {
    chosen_.clear();
    dirty_.clear();
    auto choose = [this](std::uint32_t f) {
        ++frames_[f].pins;  // chosen: not again in this sweep
        chosen_.push_back(f);
        if (state_[frames_[f].leaf] & kDirty) dirty_.push_back(f);
    };
    while (!behind_.empty() && chosen_.size() < want) {  // last passed first
        std::size_t k = behind_.back();
        behind_.pop_back();
        if ((state_[k] & (kInFrame | kRef)) == kInFrame && evictable(frames_[frame_[k]])) choose(frame_[k]);
    }
    for (std::size_t step = 0, n = frames_.size(); step < 2 * n && chosen_.size() < want; ++step) {
        auto f = static_cast<std::uint32_t>(hand_);
        hand_ = hand_ + 1 == n ? 0 : hand_ + 1;
        if (!evictable(frames_[f])) continue;
        std::size_t k = frames_[f].leaf;
        if (state_[k] & kRef) {
            state_[k] &= static_cast<Bits>(~kRef);
            if (lookup(k)) sync_tags(k);  // the next access sets it again (slow path once)
        } else {
            choose(f);
        }
    }
    int error = 0;
    try {
        write_back(dirty_);
    } catch (const PagingError& e) {
        error = e.code();
    }
    std::size_t got = 0, failed_leaf = 0;
    for (std::uint32_t f : chosen_) {
        Frame& fr = frames_[f];
        --fr.pins;
        Bits& s = state_[fr.leaf];
        if (s & kDirty) {  // its write failed: it stays
            failed_leaf = fr.leaf;
            continue;
        }
        unlink(fr.leaf);
        s &= static_cast<Bits>(~(kInFrame | kRef | kAhead | kHinted));
        fr.leaf = kNone;
        ++stats_.evictions;
        out[got++] = f;
    }
    if (got) bump_epoch();  // before any of the frames is reused (lock-free readers)
    if (error) {
        free_frames_.insert(free_frames_.end(), out, out + got);
        fail("write", failed_leaf, error);
    }
    return got;
}

}  // namespace physmem::detail
