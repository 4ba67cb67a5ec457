// src/paged/write_back.cpp — write-back: dirty leaves written in batches (eviction, flush) and
// write-behind ahead of the CLOCK hand.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include "paged/io_queue.hpp"
#include "paged/transfer_tag.hpp"

namespace physmem::detail {

// Starts writing one dirty leaf. Its dirty bit clears now: an access during the write
// sets it again (touch), so the leaf is written again before it can be dropped.
void Pager::start_write(std::uint32_t f) {
    std::size_t k = frames_[f].leaf;
    state_[k] = static_cast<Bits>((state_[k] & ~kDirty) | kWriting);
    if (lookup(k)) sync_tags(k);  // clean again: the next write takes the slow path
    bump_epoch();  // iterators that cached this leaf mark it dirty again when they next write
    io_->queue(true, frames_[f].data, leaf_bytes_, k * leaf_bytes_, k << 1 | kWriteTag);
}

// Writes the leaves in these frames (batched) and waits for them (and for writes already
// in flight: a flush means everything). A leaf whose write failed stays dirty; the
// first failure is thrown once all have finished.
void Pager::write_back(std::span<const std::uint32_t> frames) {
    if (frames.empty()) return;
    write_error_ = 0;
    for (std::uint32_t f : frames) start_write(f);
    for (std::uint32_t f : frames)
        while (state_[frames_[f].leaf] & kWriting) pump(1);
    if (write_error_) fail("write", write_failed_, write_error_);
}

// Write-behind: starts writing up to `n` dirty frames that CLOCK reaches next, without
// waiting, so that later evictions find clean
// victims instead of writing while a reader waits. Failures are kept for the eviction.
void Pager::clean_ahead(std::size_t n) {
    std::size_t started = 0;
    for (std::size_t step = 0, i = hand_, m = frames_.size(); step < m && started < n; ++step) {
        const Frame& fr = frames_[i];
        if (evictable(fr) && (state_[fr.leaf] & kDirty)) {
            start_write(static_cast<std::uint32_t>(i));
            ++started;
        }
        i = i + 1 == m ? 0 : i + 1;
    }
}

void Pager::flush() {
    std::lock_guard lock(mutex_);
    while (io_->in_flight()) pump(1);  // write-behind in flight finishes first
    dirty_.clear();
    for (std::uint32_t f = 0; f < frames_.size(); ++f)
        if (frames_[f].leaf != kNone && (state_[frames_[f].leaf] & kDirty)) dirty_.push_back(f);
    bump_epoch();
    write_back(dirty_);
}

}  // namespace physmem::detail
