// src/paged/transfers.cpp — transfers in flight: a batch of reads started, finished transfers
// collected and applied, waiting for one leaf or for all.
// See include/physmem/pager.hpp for the contract.
#include "physmem/pager.hpp"

#include <algorithm>

#include "paged/io_queue.hpp"
#include "paged/transfer_tag.hpp"

namespace physmem::detail {

// Starts reading the leaves that are on file and not in memory; `ahead` marks them as
// read ahead (else hinted). Stops early when no frame is free to take. Then cleans as
// many frames ahead of the CLOCK hand as it read. A hint also marks its leaves already in
// memory referenced: the hint says they are needed next, so the frames this batch (or the
// next) takes are not theirs — else a present leaf whose bit the hand had cleared went
// out before its access and came back by a synchronous read (0.8% of the leaves of
// hinted random reads at 2x the budget, one batch ahead; 3% four batches ahead).
void Pager::start_reads(std::span<const std::size_t> leaves, bool ahead) {
    todo_.clear();
    held_.clear();
    for (std::size_t k : leaves)
        if ((state_[k] & (kInFrame | kOnFile)) == kOnFile && std::find(todo_.begin(), todo_.end(), k) == todo_.end())
            todo_.push_back(k);
    if (!ahead) refer(leaves);
    if (todo_.empty()) return;
    for (std::size_t k : leaves)
        if ((state_[k] & (kInFrame | kLoading)) == kInFrame) {  // already here: keep it for the batch
            ++frames_[frame_[k]].pins;
            held_.push_back(k);
        }
    taken_.resize(todo_.size());
    std::size_t got = 0;
    try {
        got = take_frames(todo_.size(), taken_.data());
    } catch (const std::exception&) {
        // a hint: the fault that needs the leaf will report the error
    }
    for (std::size_t k : held_) --frames_[frame_[k]].pins;
    for (std::size_t i = 0; i < got; ++i) {
        std::size_t k = todo_[i];
        frame_[k] = taken_[i];
        frames_[taken_[i]].leaf = k;
        state_[k] |= kInFrame | kLoading | kRef | kAhead | (ahead ? 0 : kHinted);
        io_->queue(false, frames_[taken_[i]].data, leaf_bytes_, k * leaf_bytes_, k << 1);
    }
    (ahead ? stats_.readahead_issued : stats_.hinted) += got;
    clean_ahead(got);
    pump(0);  // submits
}

// The reference bit of each leaf in a frame, set as an access sets it (the hand's clearing,
// choose_victims, undone): in the table's tags too when the leaf is linked.
void Pager::refer(std::span<const std::size_t> leaves) noexcept {
    for (std::size_t k : leaves)
        if ((state_[k] & (kInFrame | kRef)) == kInFrame) {
            state_[k] |= kRef;
            if (lookup(k)) sync_tags(k);
        }
}

// Collects finished transfers (at least `min`, fewer when fewer are in flight) and
// applies them (complete).
void Pager::pump(std::size_t min) {
    done_.clear();
    io_->collect(min, done_);
    for (const os::IoDone& d : done_) complete(d.tag, d.result);
}

// A transfer finished. A read that failed frees its frame and the leaf stays out (the
// fault that needs it reads it again and reports); a write that failed leaves the leaf
// dirty and records the error for write_back.
void Pager::complete(std::uint64_t tag, long result) noexcept {
    std::size_t k = tag >> 1;
    bool ok = result == static_cast<long>(leaf_bytes_);
    if (tag & kWriteTag) {
        state_[k] &= static_cast<Bits>(~kWriting);
        if (ok) {
            state_[k] |= kOnFile;
            ++stats_.writebacks;
            stats_.bytes_written += leaf_bytes_;
        } else {
            state_[k] |= kDirty;
            if (lookup(k)) sync_tags(k);
            if (!write_error_) {
                write_error_ = result < 0 ? static_cast<int>(-result) : EIO;
                write_failed_ = k;
            }
        }
        return;
    }
    state_[k] &= static_cast<Bits>(~kLoading);
    if (ok) {
        ++stats_.loads;
        stats_.bytes_read += leaf_bytes_;
        return;
    }
    std::uint32_t f = frame_[k];
    frames_[f].leaf = kNone;
    free_frames_.push_back(f);
    state_[k] &= static_cast<Bits>(~(kInFrame | kAhead | kHinted));
}

void Pager::wait_for(std::size_t k) {
    while (state_[k] & kLoading) pump(1);
}

void Pager::drain() noexcept {
    while (io_ && io_->in_flight()) {
        done_.clear();
        io_->collect(io_->in_flight(), done_);
        for (const os::IoDone& d : done_) complete(d.tag, d.result);
    }
}

}  // namespace physmem::detail
